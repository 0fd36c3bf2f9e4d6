"""The flight recorder's shrink (mxgate.shrink, `mxgate shrink RECORD`, `mxgate repro CASE`;
docs/record.md §5) and the whole loop as CI runs it: a numpy model with a planted fault
(record_model.py) recorded, replayed (exactly the faulty calls fail), each failing call shrunk
to the smallest shape that still fails by re-running the recorded callable, the .case replayed
by `mxgate repro`; and the cut without the callable. Not covered: torch (scripts/h200/
record_torch.py runs that on the GPU).
"""

import os

import numpy as np
import pytest

import mxgate
import record_model
from mxgate.replay import replay
from mxgate.shrink import shrink


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("rec")
    x = np.random.default_rng(11).standard_normal((16, 512)).astype(np.float32)
    with mxgate.record(d, hooks=["record_model.block_gemm"], known=False):
        record_model.Model().forward(x)
    return d


# Guards against a shrink that loses the failure or stops early: the fault needs two block rows
# of N and ceil(K/128) % 4 != 0, so M = 16, N = 256, K = 384 shrinks to M = 1, N = 256, K = 128
# (one K block, 1 % 4 != 0; two 128-row blocks), failing first at (0, 128) (B's second block).
def test_model_loop_replay_then_shrink(recorded, cli, tmp_path):
    r = replay(recorded)
    failing = [x["record"] for x in r.results if x["verdict"] == "fail"]
    assert [(x["n"], x["k"]) for x in r.results if x["verdict"] == "fail"] == [(256, 384)]
    s = shrink(failing[0], tmp_path / "case")
    assert s.rerun and s.before == (16, 256, 384) and s.after == (1, 256, 128)
    assert (s.first["row"], s.first["col"]) == (0, 128)
    assert sorted(os.listdir(tmp_path / "case")) == ["a.npy", "a_scales.npy", "b.npy",
                                                      "b_scales.npy", "c.npy", "shrunk.case"]
    code, out, err = cli("repro", s.case)
    assert code == 0 and "ok (fails as recorded)" in out, out + err
    assert "block M=1 N=256 K=128" in out


# Guards against `mxgate repro` accepting a recorded case whose files no longer fail (a fixed
# kernel's output put in place of c.npy): not reproduced is exit 1.
def test_repro_of_a_fixed_output_is_not_reproduced(recorded, cli, tmp_path):
    failing = [x["record"] for x in replay(recorded).results if x["verdict"] == "fail"][0]
    s = shrink(failing, tmp_path / "case")
    a = np.load(tmp_path / "case" / "a.npy")
    sa = np.load(tmp_path / "case" / "a_scales.npy")
    b = np.load(tmp_path / "case" / "b.npy")
    sb = np.load(tmp_path / "case" / "b_scales.npy")
    np.save(tmp_path / "case" / "c.npy", record_model.correct_gemm(a, sa, b, sb))
    code, out, err = cli("repro", s.case)
    assert code == 1 and "NOT REPRODUCED" in out, out + err


# Guards against shrink needing the callable: without it (the hook's module gone), M and N are
# cut to the failing element, K kept, and the case still fails at (0, 0).
def test_shrink_without_the_callable(recorded, cli, tmp_path):
    import json
    import shutil

    failing = [x["record"] for x in replay(recorded).results if x["verdict"] == "fail"][0]
    d = tmp_path / "rec"
    shutil.copytree(failing, d)
    m = json.load(open(d / "manifest.json"))
    m["hook"] = "no_such_module_here.block_gemm"
    json.dump(m, open(d / "manifest.json", "w"))
    import hashlib

    (d / "complete").write_text(hashlib.sha256(open(d / "manifest.json", "rb").read())
                                .hexdigest() + "\n")
    s = shrink(d, tmp_path / "case")
    assert not s.rerun and s.after == (1, 1, 384)
    code, out, err = cli("repro", s.case)
    assert code == 0, out + err


# Guards against shrinking a call that passes: exit 1 from the CLI, nothing written.
def test_shrink_a_passing_call(recorded, cli):
    passing = [x["record"] for x in replay(recorded).results if x["verdict"] == "pass"][0]
    code, out, err = cli("shrink", passing)
    assert code == 1 and "does not fail" in out, out + err
    assert not os.path.exists(os.path.join(passing, "shrunk"))


# Guards against a shrink that leaves the op's declared contract (record_triton.py's Triton
# wrapper, declared K % 64 == 0, shrank to K = 32, where its kernel reads past K): the same
# faulty call declared with M a multiple of 4 (torch's blockwise form) and K a multiple of 384
# shrinks to M = 4, K = 384, not to M = 1, K = 128 as undeclared (the first test).
def test_shrink_stays_inside_the_declared_contract(tmp_path):
    x = np.random.default_rng(11).standard_normal((16, 512)).astype(np.float32)
    decl = dict(family="gemm_block", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",),
                out_dtypes=("f32",), a_block=(1, 128), b_block=(128, 128),
                accumulator="fp32_rn", m=mxgate.Dim(align=4), k=mxgate.Dim(align=384))
    with mxgate.record(tmp_path / "rec", hooks={"record_model.block_gemm": decl}, known=False):
        record_model.Model().forward(x)
    failing = [r for r in replay(tmp_path / "rec").results if r["verdict"] == "fail"]
    assert [(r["n"], r["k"]) for r in failing] == [(256, 384)]
    s = shrink(failing[0]["record"], tmp_path / "case")
    assert s.rerun and s.after == (4, 256, 384), s.after
