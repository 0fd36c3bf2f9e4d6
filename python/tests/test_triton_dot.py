"""The Triton FP8 tl.dot adapter (python/mxgate/adapters/triton_dot.py; docs/python.md §11.7) and
its GPU script scripts/run-triton-dot-probe, as far as a host without triton can test them: the
adapter and every per-tile adapter are Unavailable naming triton, each tile declares the model its
instruction has on sm_90 (wgmma never promoted, mma.sync fp32) and the registry knows it, the
survey offers the adapter, and the script refuses bad usage (exit 2) and a host without triton,
torch or CUDA (exit 3, saying what is missing). The GPU half is the script's run on the H200."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mxgate
from mxgate.adapters import SHIPPED
from mxgate.adapters import triton_dot

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "run-triton-dot-probe"
ADAPTERS = [triton_dot.TritonDotAdapter, triton_dot.TritonDotScaleFirstBlock,
            *triton_dot.PER_TILE.values()]


def gpu_ready():
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


# Without triton every adapter of the module says it needs triton, instead of failing in a run.
@pytest.mark.parametrize("cls", ADAPTERS, ids=[c.__name__ for c in ADAPTERS])
def test_unavailable_names_triton(cls):
    if importlib.util.find_spec("triton") is not None:
        pytest.skip("triton installed: the guard is not exercised")
    a = cls()
    assert a.ops == ()
    with pytest.raises(mxgate.Unavailable, match="triton"):
        a.check_available()
    with pytest.raises(mxgate.Unavailable, match="triton"):
        mxgate.check("gemm.exact", a)


# A wgmma tile (M a multiple of 64) on Triton's default never promotes (sm90_fp8_mma_nopromo), a
# promoted one promotes every 128 k (sm90_fp8_mma), an mma.sync tile claims fp32: a tile that
# declared another model would get bounds its instruction does not meet.
def test_each_tile_declares_its_instruction_model():
    seen = set()
    for t in triton_dot.TILES:
        assert t.op not in seen and t.op.startswith("dot_fp8_"), t
        seen.add(t.op)
        if t.bm % 64 != 0:
            want = "fp32_rn:unit_roundoff_bits=23"  # mma.sync: 24 bits truncated (measured)
        elif t.imprecise is None:
            want = "sm90_fp8_mma_nopromo"
        else:
            assert t.imprecise == 128 and t.bk == 128, t  # chunks of 128 k at multiples of 128
            want = "sm90_fp8_mma"
        assert t.accumulator == want, t
    assert {"dot_fp8_16x16", "dot_fp8_64x64", "dot_fp8_128x128"} <= seen


# Every declared model is one the library knows (an unknown one makes every bound check of
# the op a contract error); a spec's base name is the registry's.
def test_declared_models_are_registered():
    known = {m.name for m in mxgate.accumulators()}
    for t in triton_dot.TILES:
        assert t.accumulator.split(":")[0] in known, t


# Every tile can be gated alone, through an adapter of that one tile, and the survey offers
# the adapter of all tiles.
def test_per_tile_adapters_and_shipped():
    assert set(triton_dot.PER_TILE) == {t.op for t in triton_dot.TILES}
    names = set()
    for op, cls in triton_dot.PER_TILE.items():
        assert cls.tiles == (op,)
        names.add(cls.name)
    assert len(names) == len(triton_dot.PER_TILE)
    assert triton_dot.TritonDotScaleFirstBlock.description.startswith("planted fault:")
    assert "py:mxgate.adapters.triton_dot:TritonDotAdapter" in SHIPPED


def run_script(*args, env=None):
    return subprocess.run(["sh", str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=120)


# Bad usage is exit 2 with the usage line, not a run that writes half a result.
def test_script_usage(tmp_path):
    r = run_script()
    assert r.returncode == 2 and "usage: scripts/run-triton-dot-probe" in r.stderr, r
    r = run_script(str(tmp_path / "no_build"), str(tmp_path / "out"))
    assert r.returncode == 2 and "no mxgate at" in r.stderr, r


# On a host without triton (or torch, or CUDA) the script stops with exit 3 and says what is
# missing, instead of probing nothing and reporting success.
def test_script_without_triton_says_so(cli, tmp_path):
    if gpu_ready():
        pytest.skip("triton, torch and CUDA present: the script would run")
    build = Path(cli.path).resolve().parents[2]
    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    r = run_script(str(build), str(tmp_path / "out"), env=env)
    assert r.returncode == 3, r
    assert "cannot run the Triton FP8 tl.dot adapter" in r.stderr, r
    missing = [m for m in ("triton", "torch") if importlib.util.find_spec(m) is None]
    reason = f"needs {missing[0]}: " if missing else "no CUDA device"
    assert reason in r.stderr, r
    assert not (tmp_path / "out" / "summary.md").exists()


def fake_env(tmp_path):
    env = dict(os.environ, MXGATE_PYTHON=sys.executable, MXGATE_TRITON_DOT_MODULE="fake_triton_dot",
               MXGATE_CASES="10", MXGATE_SEEDS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python" / "tests"),
                                         env.get("PYTHONPATH", "")])
    return env


# Every step of the script runs through to summary.md on a numpy stand-in (fake_triton_dot.py),
# so the H200 run does not stop at the script's own plumbing: the probe finds the stand-in's
# fp32 accumulator, the spot values are the exact 2^16 + 4, the gate passes and the planted
# misplaced scale is caught; a second run adds to the same OUT_DIR.
def test_script_steps_on_a_stand_in(cli, tmp_path):
    build = Path(cli.path).resolve().parents[2]
    out = tmp_path / "out"
    env = fake_env(tmp_path)
    r = run_script(str(build), str(out), "probe", "spot", env=env)
    assert r.returncode == 0, r
    text = (out / "summary.md").read_text()
    assert "| dot_fp8_64x64 | fp32_rn | fp32_rn (" in text, text  # declared, then probed
    assert "65540, 65540, 65540, 65540 | not run |" in text, text
    assert "planted misplaced scale (TritonDotScaleFirstBlock): not run" in text, text
    r = run_script(str(build), str(out), "gate", "planted", "dot_fp8_64x64", env=env)
    assert r.returncode == 0, r
    text = (out / "summary.md").read_text()
    assert re.search(r"\| \d+ pass \|$", text.splitlines()[2]), text  # every check passed
    planted = [line for line in text.splitlines() if line.startswith("planted")][0]
    assert "detected True" in planted and "gemm.ordered_bound" in planted, text  # the bound too
    assert text.rstrip().endswith("no problems"), text
    status = (out / "status.log").read_text()
    assert status.count(" rc=0 ") == 5, status


# A word that is neither a step nor a tile is bad usage, named in the message.
def test_script_unknown_step(cli, tmp_path):
    build = Path(cli.path).resolve().parents[2]
    r = run_script(str(build), str(tmp_path / "out"), "bogus", env=fake_env(tmp_path))
    assert r.returncode == 2 and "'bogus' is no step" in r.stderr, r
