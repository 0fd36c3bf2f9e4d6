"""The flight recorder's replay (mxgate.replay, `mxgate replay DIR`; docs/record.md §4): a
recorded numpy model with a planted fault (record_model.py) replayed against the reference
with its declared accumulator, the faulty calls and only they failing, with the located
element; the out= kernel that never wrote its buffer; JSON and JUnit; each bad dump (truncated
file, unknown dtype, missing tensor, bytes not matching the sha256, missing completion marker,
a crashed call) an exit 2 naming the file. Not covered: shrink (test_record_shrink.py), torch.
"""

import hashlib
import json
import os
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import mxgate
import record_model
from mxgate.replay import replay


def folders(d):
    return sorted(f for f in os.listdir(d) if os.path.isdir(os.path.join(d, f)))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The model's two forward passes recorded: 6 calls, layers (256, 512), (256, 384) with
    the fault (ceil(384/128) = 3, 3 % 4 != 0, two block rows of N), (128, 256)."""
    d = tmp_path_factory.mktemp("rec")
    model = record_model.Model()
    x = np.random.default_rng(7).standard_normal((4, 512)).astype(np.float32)
    with mxgate.record(d, hooks=["record_model.block_gemm"], known=False):
        model.forward(x)
        model.forward(x)
    return d


def copy(recorded, tmp_path):
    d = tmp_path / "rec"
    shutil.copytree(recorded, d)
    return d


def remark(folder):
    """The completion marker rewritten for an edited manifest (one bad-dump case at a time)."""
    raw = open(folder / "manifest.json", "rb").read()
    (folder / "complete").write_text(hashlib.sha256(raw).hexdigest() + "\n")


# Guards against replay missing the planted fault or flagging right calls: exactly the two
# K = 384, N = 256 calls fail, first at (0, 128), the first column of B's second block row
# (the only one the padded stride misreads).
def test_replay_finds_exactly_the_faulty_calls(recorded):
    r = replay(recorded)
    assert [x["verdict"] for x in r.results] == ["pass", "fail", "pass"] * 2
    for x in r.failed:
        assert (x["k"], x["n"], x["mode"], x["accumulator"]) == (384, 256, "bound", "fp32_rn")
        assert (x["first"]["row"], x["first"]["col"]) == (0, 128)
        assert x["site"].split(" in ")[1] == "linear"
    assert r.exit_code == 1 and r.problems == []
    by_shape = {(s["n"], s["k"]): (s["calls"], s["pass"], s["fail"]) for s in r.summary}
    assert by_shape == {(256, 512): (2, 2, 0), (256, 384): (2, 0, 2), (128, 256): (2, 2, 0)}


# Guards against an out= buffer the kernel never wrote being judged from the return value
# (vllm-project/vllm#7777): the N = 256 call fails at (0, 0) from out.after, N = 128 passes.
def test_replay_judges_the_out_buffer(tmp_path):
    hooks = {"record_model.lazy_gemm": dict(family="gemm_block", accumulator="fp32_rn")}
    rng = np.random.default_rng(3)
    with mxgate.record(tmp_path, hooks=hooks, known=False):
        for n in (256, 128):
            a, sa = record_model.quantize(rng.standard_normal((2, 256)).astype(np.float32), 1, 128)
            b, sb = record_model.quantize(rng.standard_normal((n, 256)).astype(np.float32), 128,
                                          128)
            record_model.lazy_gemm(a, sa, b, sb, out=np.zeros((2, n), np.float32))
    r = replay(tmp_path)
    assert [x["verdict"] for x in r.results] == ["fail", "pass"]
    assert (r.results[0]["first"]["row"], r.results[0]["first"]["col"]) == (0, 0)
    assert r.results[0]["first"]["actual"] == 0.0


# Guards against the CLI verb not reaching the Python replay or losing its exit code, and the
# JSON / JUnit reports disagreeing with the verdicts.
def test_cli_replay_json_junit(recorded, cli, tmp_path):
    code, out, err = cli("replay", recorded, "--json", tmp_path / "r.json", "--junit",
                         tmp_path / "r.xml")
    assert code == 1, out + err
    assert "block_gemm M=4 N=256 K=384: FAIL" in out and "first (0,128)" in out
    j = json.load(open(tmp_path / "r.json"))
    assert j["schema"] == "mxgate-replay/1" and j["exit_code"] == 1
    assert [x["verdict"] for x in j["results"]].count("fail") == 2
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("6", "2")


def bad(cli, d):
    code, out, err = cli("replay", d)
    assert code == 2, out + err
    return out + err


# Guards against a truncated tensor file being read (short arrays) instead of refused.
def test_bad_dump_truncated(recorded, cli, tmp_path):
    d = copy(recorded, tmp_path)
    f = d / folders(d)[1] / "b.bin"
    f.write_bytes(f.read_bytes()[:-10])
    assert f"{f}: truncated or wrong size" in bad(cli, d)


# Guards against a dtype the reader does not know being guessed.
def test_bad_dump_unknown_dtype(recorded, cli, tmp_path):
    d = copy(recorded, tmp_path)
    folder = d / folders(d)[0]
    m = json.load(open(folder / "manifest.json"))
    m["tensors"]["a"]["dtype"] = "e9m9"
    json.dump(m, open(folder / "manifest.json", "w"))
    remark(folder)
    assert f"{folder / 'a.bin'}: unknown dtype 'e9m9'" in bad(cli, d)


# Guards against a missing tensor file, and a role naming a tensor the manifest lacks.
def test_bad_dump_missing_tensor(recorded, cli, tmp_path):
    d = copy(recorded, tmp_path)
    folder = d / folders(d)[0]
    os.remove(folder / "a_scales.bin")
    assert f"{folder / 'a_scales.bin'}: missing tensor file" in bad(cli, d)
    folder = d / folders(d)[2]
    m = json.load(open(folder / "manifest.json"))
    del m["tensors"]["b"]
    json.dump(m, open(folder / "manifest.json", "w"))
    remark(folder)
    assert "role b names tensor 'b', which the manifest does not describe" in bad(cli, d)


# Guards against bytes edited after recording (same size) passing as the recorded call.
def test_bad_dump_sha256(recorded, cli, tmp_path):
    d = copy(recorded, tmp_path)
    f = d / folders(d)[3] / "a.bin"
    raw = bytearray(f.read_bytes())
    raw[5] ^= 0x01
    f.write_bytes(bytes(raw))
    assert f"{f}: its bytes do not match the manifest's sha256" in bad(cli, d)


# Guards against a call without its completion marker passing unnoticed: it is named, exit 2,
# and its inputs are still judged (the output exists): the faulty call still fails.
def test_bad_dump_missing_marker(recorded, cli, tmp_path):
    d = copy(recorded, tmp_path)
    folder = d / folders(d)[1]
    os.remove(folder / "complete")
    text = bad(cli, d)
    assert f"{folder / 'complete'}: missing: the call did not complete" in text
    assert f"{folders(d)[1]}: block_gemm M=4 N=256 K=384: FAIL" in text


# Guards against a crashed call (it raised: inputs, no output) being skipped silently.
def test_crashed_call(tmp_path, cli):
    @mxgate.op("gemm_block", accumulator="fp32_rn")
    def kernel(a, a_scales, b, b_scales):
        raise RuntimeError("illegal memory access")

    holder = type("H", (), {"kernel": staticmethod(kernel)})
    import sys

    sys.modules["_rec_crash"] = holder
    try:
        with mxgate.record(tmp_path, hooks=["_rec_crash:kernel"], known=False):
            a, sa = record_model.quantize(np.ones((1, 128), np.float32), 1, 128)
            with pytest.raises(RuntimeError):
                holder.kernel(a, sa, a, sa[:1, :1])
    finally:
        del sys.modules["_rec_crash"]
    text = bad(cli, tmp_path)
    assert "CRASHED" in text and "RuntimeError: illegal memory access" in text


def rowwise(a, a_scales, b, b_scales):
    """A right rowwise-scaled GEMM: one fp32 scale per row of A (M, 1) and of B (N, 1)."""
    from mxgate.adapters.numpy import E4M3FN

    return ((E4M3FN[a] * a_scales) @ (E4M3FN[b] * b_scales).T).astype(np.float32)


def rowwise_dropping_b(a, a_scales, b, b_scales):
    """The same with B's row scales ignored (a planted fault)."""
    return rowwise(a, a_scales, b, np.ones_like(b_scales))


# Guards against per-row and per-tensor scales (torch._scaled_mm's rowwise and tensor forms)
# being unjudgeable: check-gemm's block scheme takes --a-block 1x0 --b-block 1x0, the right
# kernel passes and the one dropping B's scales fails at (0, 0) (every B scale is 2 or 3, not 1).
def test_replay_rowwise_scales(tmp_path):
    import sys

    decl = dict(family="gemm_block", a_block=(1, 0), b_block=(1, 0), accumulator="fp32_rn")
    sys.modules["_rec_rowwise"] = sys.modules[__name__]
    try:
        with mxgate.record(tmp_path, known=False,
                           hooks={"_rec_rowwise.rowwise": decl,
                                  "_rec_rowwise.rowwise_dropping_b": decl}):
            rng = np.random.default_rng(5)
            a, _ = record_model.quantize(rng.standard_normal((3, 64)).astype(np.float32), 1, 128)
            b, _ = record_model.quantize(rng.standard_normal((5, 64)).astype(np.float32), 1, 128)
            sa = np.float32([[0.5], [1], [2]])
            sb = np.float32([[2], [3], [2], [3], [2]])
            mod = sys.modules["_rec_rowwise"]
            mod.rowwise(a, sa, b, sb)
            mod.rowwise_dropping_b(a, sa, b, sb)
    finally:
        del sys.modules["_rec_rowwise"]
    r = replay(tmp_path)
    assert [x["verdict"] for x in r.results] == ["pass", "fail"]
    assert (r.results[1]["first"]["row"], r.results[1]["first"]["col"]) == (0, 0)


# Guards against a malformed --a-block being read as some block: exit 2 naming the option.
def test_cli_block_option_checked(cli, tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((2, 128), np.uint8))
    np.save(tmp_path / "s.npy", np.ones((2, 1), np.float32))
    np.save(tmp_path / "c.npy", np.zeros((2, 2), np.float32))
    base = ["check-gemm", "--scheme", "block", "--a", tmp_path / "a.npy", "--a-scales",
            tmp_path / "s.npy", "--b", tmp_path / "a.npy", "--b-scales", tmp_path / "s.npy",
            "--c", tmp_path / "c.npy"]
    code, out, err = cli(*base, "--a-block", "1y0", "--b-block", "1x0")
    assert code == 2 and "--a-block: '1y0' is not ROWSxCOLS" in err, out + err
    code, out, err = cli(*base, "--a-block", "1x0", "--b-block", "1x0")
    assert code == 0, out + err  # all-zero codes: C = 0, right
    code, out, err = cli(*base[:2], "mx", *base[3:], "--a-block", "1x0")
    assert code == 2 and "--a-block" in err and "block only" in err, out + err


# Guards against a non-deterministic kernel passing replay: re-run on its recorded inputs
# (--rerun) it gives other bits than recorded, a failure; the deterministic kernel's re-run
# gives the same bits.
def test_rerun_shows_a_nondeterministic_kernel(tmp_path, cli, monkeypatch):
    decl = dict(family="gemm_block", accumulator="fp32_rn")
    record_model.CALLS["flaky"] = 0
    with mxgate.record(tmp_path, known=False, hooks={"record_model.flaky_gemm": decl,
                                                     "record_model.correct_gemm": decl}):
        a, sa = record_model.quantize(np.ones((2, 128), np.float32), 1, 128)
        b, sb = record_model.quantize(np.ones((2, 128), np.float32), 128, 128)
        record_model.flaky_gemm(a, sa, b, sb)
        record_model.correct_gemm(a, sa, b, sb)
    assert [x["verdict"] for x in replay(tmp_path).results] == ["pass", "pass"]
    r = replay(tmp_path, rerun=True)
    assert [x["verdict"] for x in r.results] == ["fail", "pass"]
    assert r.results[0]["rerun"] == dict(ran=True, same_bits=False, differing=1)
    assert r.results[1]["rerun"] == dict(ran=True, same_bits=True, differing=0)
    monkeypatch.setenv("RECORD_MODEL_FLAKY", "1")  # the CLI's process: off from its first call
    here = os.path.dirname(os.path.abspath(__file__))  # the CLI's Python imports record_model
    monkeypatch.setenv("PYTHONPATH", here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code, out, err = cli("replay", tmp_path, "--rerun")
    assert code == 1 and "not deterministic" in out, out + err


# Guards against the shipped adapters' non-GEMM ops being recorded but never judged: with no
# hooks given, NumpyAdapter's upcast_e8m0 passes and ShiftE8m0's (byte << 23) fails, first at
# code 0x00 (element 0: 2^-127 expected, 0 given); 0xFF (NaN expected, Inf given) the other.
def test_replay_upcast_e8m0_of_known_ops(tmp_path):
    from mxgate.adapters.numpy import NumpyAdapter
    from mxgate.adapters.numpy_faulty import ShiftE8m0

    codes = np.arange(256, dtype=np.uint8)
    with mxgate.record(tmp_path, include="*upcast_e8m0"):
        NumpyAdapter().upcast_e8m0(codes)
        ShiftE8m0().upcast_e8m0(codes)
    r = mxgate.replay(tmp_path)
    assert [(x["op"], x["verdict"]) for x in r.results] == [("upcast_e8m0", "pass"),
                                                            ("upcast_e8m0", "fail")]
    bad = r.results[1]
    assert (bad["mismatches"], bad["first"]["col"], bad["first"]["actual"]) == (2, 0, 0.0)
    assert bad["first"]["expected_bits"] == 0x00400000  # 2^-127: the fp32 subnormal 2^-1 * 2^-126
