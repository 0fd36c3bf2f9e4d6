"""The flight recorder's capture (mxgate.record, MXGATE_RECORD; docs/record.md §1-§3): what a
record holds (inputs written before the call, the out= buffer before and after, the strided
window of a padded view, sha256s, dtype names, op declarations), hooks wrapped and restored,
limits, sampling and the summary of what was skipped, the known numpy adapter ops and the
torch._scaled_mm binding (on fake tensors: no torch here). Not covered: replay and shrink
(test_record_replay.py, test_record_shrink.py), real torch tensors (scripts/h200/record_torch.py).
"""

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxgate
import record_model
from mxgate import _record_tensors
from mxgate._record_bind import ScaledMmBinding

HERE = os.path.dirname(os.path.abspath(__file__))


def folders(d):
    return sorted(f for f in os.listdir(d) if os.path.isdir(os.path.join(d, f)))


def manifest(d, f):
    with open(os.path.join(d, f, "manifest.json")) as h:
        return json.load(h)


def operands(seed=1, m=4, n=256, k=384):
    rng = np.random.default_rng(seed)
    a, sa = record_model.quantize(rng.standard_normal((m, k)).astype(np.float32), 1, 128)
    b, sb = record_model.quantize(rng.standard_normal((n, k)).astype(np.float32), 128, 128)
    return a, sa, b, sb


# Guards against inputs written only after the call (a crash would lose them): the hooked
# function itself finds the manifest and its input files already on disk.
def test_inputs_are_on_disk_before_the_call_returns(tmp_path):
    seen = {}

    @mxgate.op("gemm_block", accumulator="fp32_rn")
    def kernel(a, a_scales, b, b_scales):
        (folder,) = folders(tmp_path)
        seen["files"] = sorted(os.listdir(tmp_path / folder))
        raise RuntimeError("the kernel crashed")

    holder = type("M", (), {"kernel": staticmethod(kernel)})
    sys.modules["_rec_holder"] = holder
    try:
        with mxgate.record(tmp_path, hooks=["_rec_holder:kernel"], known=False):
            with pytest.raises(RuntimeError):
                holder.kernel(*operands())
    finally:
        del sys.modules["_rec_holder"]
    assert seen["files"] == ["a.bin", "a_scales.bin", "b.bin", "b_scales.bin", "manifest.json"]
    (folder,) = folders(tmp_path)
    m = manifest(tmp_path, folder)
    assert m["completed"] is False and m["error"] == "RuntimeError: the kernel crashed"
    assert not os.path.exists(tmp_path / folder / "complete")


# Guards against a contiguous copy (vllm-project/vllm#55534): a view with a padded leading
# dimension is recorded with its stride and the padding bytes between its rows.
def test_padded_leading_dimension_survives(tmp_path):
    a, sa, b, sb = operands(m=3, k=128)
    storage = np.full((3, 160), 0xEE, np.uint8)  # ld 160 > K 128: 32 poison bytes per row
    storage[:, :128] = a
    view = storage[:, :128]
    hooks = {"record_model.correct_gemm": dict(family="gemm_block", accumulator="fp32_rn")}
    with mxgate.record(tmp_path, hooks=hooks, known=False):
        record_model.correct_gemm(view, sa, b, sb)
    (folder,) = folders(tmp_path)
    d = manifest(tmp_path, folder)["tensors"]["a"]
    # Window: rows 0..2 at stride 160, the last row's 128 bytes: 2 * 160 + 128 = 448.
    assert (d["shape"], d["strides"], d["window_bytes"], d["dtype"]) == ([3, 128], [160, 1],
                                                                        448, "e4m3fn")
    raw = open(tmp_path / folder / "a.bin", "rb").read()
    assert raw[128:160] == b"\xee" * 32  # the padding as it lay in memory
    assert d["sha256"] == hashlib.sha256(raw).hexdigest()
    back = _record_tensors.load(str(tmp_path / folder), d)
    assert np.array_equal(back, a)


# Guards against dropping the out= buffer (vllm-project/vllm#7777): it is recorded before and
# after, so a kernel that never wrote it shows as two equal files and is judged as written.
def test_out_buffer_before_and_after(tmp_path):
    hooks = {"record_model.lazy_gemm": dict(family="gemm_block", accumulator="fp32_rn")}
    with mxgate.record(tmp_path, hooks=hooks, known=False):
        for n in (256, 128):
            a, sa, b, sb = operands(n=n)
            record_model.lazy_gemm(a, sa, b, sb, out=np.zeros((4, n), np.float32))
    wide, narrow = [manifest(tmp_path, f) for f in folders(tmp_path)]
    assert wide["out_arg"] == "out" and wide["roles"]["out"] == {"tensor": "out.after"}
    t = wide["tensors"]
    assert t["out.before"]["sha256"] == t["out.after"]["sha256"]  # N = 256: never written
    t = narrow["tensors"]
    assert t["out.before"]["sha256"] != t["out.after"]["sha256"]


# Guards against a hook left in place after the block, or one never installed.
def test_hooks_wrapped_and_restored(tmp_path):
    original = record_model.block_gemm
    with mxgate.record(tmp_path, hooks=["record_model.block_gemm"], known=False):
        assert record_model.block_gemm is not original
        assert record_model.block_gemm.__wrapped__ is original
    assert record_model.block_gemm is original


# Guards against limits that do not hold, or skips that are not counted: 6 calls, max_calls 2
# keeps the first two and counts four skipped for max_calls.
def test_max_calls_and_summary(tmp_path):
    model = record_model.Model()
    with mxgate.record(tmp_path, hooks=["record_model.block_gemm"], known=False, max_calls=2):
        model.forward(np.ones((2, 512), np.float32))
        model.forward(np.ones((2, 512), np.float32))
    assert len(folders(tmp_path)) == 2
    s = json.load(open(tmp_path / "summary.json"))
    assert s["ops"]["block_gemm"]["seen"] == 6 and s["ops"]["block_gemm"]["recorded"] == 2
    assert s["ops"]["block_gemm"]["skipped"] == {"max_calls": 4}


# Guards against sampling that is random or wrong: sample 0.5 keeps calls 2, 4, 6 of 6 (every
# second, deterministic), and a per-op byte cap below one call skips everything.
def test_sampling_and_bytes(tmp_path):
    model = record_model.Model()
    with mxgate.record(tmp_path / "s", hooks=["record_model.block_gemm"], known=False,
                       sample=0.5):
        for _ in range(2):
            model.forward(np.ones((2, 512), np.float32))
    assert [manifest(tmp_path / "s", f)["k"] for f in folders(tmp_path / "s")] == [384, 512, 256]
    with mxgate.record(tmp_path / "b", hooks=["record_model.block_gemm"], known=False,
                       max_bytes_per_op=1000):
        model.forward(np.ones((2, 512), np.float32))
    s = json.load(open(tmp_path / "b" / "summary.json"))
    assert folders(tmp_path / "b") == [] and s["ops"]["block_gemm"]["skipped"] == {
        "max_bytes_per_op": 3}


# Guards against include / exclude not applied: an excluded hook is not installed and says so.
def test_exclude(tmp_path):
    with mxgate.record(tmp_path, hooks=["record_model.block_gemm"], known=False,
                       exclude="*block_gemm"):
        record_model.Model().forward(np.ones((2, 512), np.float32))
    s = json.load(open(tmp_path / "summary.json"))
    assert folders(tmp_path) == []
    assert s["hooks_not_installed"] == {"record_model.block_gemm": "excluded by include / exclude"}


# Guards against the shipped numpy adapters' ops needing user code: with no hooks given, a
# call of ScaleTransposed's op is recorded under its own declaration and class.
def test_known_numpy_adapter_ops(tmp_path):
    from mxgate.adapters.numpy_faulty import ScaleTransposed

    with mxgate.record(tmp_path, include="*ScaleTransposed*"):
        ScaleTransposed().gemm_block_deepseek(*operands(n=128, k=128))
    (folder,) = folders(tmp_path)
    m = manifest(tmp_path, folder)
    assert m["hook"] == "mxgate.adapters.numpy_faulty:ScaleTransposed.gemm_block_deepseek"
    assert m["self_class"] == "mxgate.adapters.numpy_faulty:ScaleTransposed"
    assert (m["op"]["contract"]["accumulator"], m["op"]["contract"]["b_block"]) == (
        "fp32_rn", [128, 128])


# Guards against MXGATE_RECORD not starting the recorder at import, or not writing the summary
# at exit: a child process with the variables set records its two calls.
def test_environment_variable(tmp_path):
    env = dict(os.environ, MXGATE_RECORD=str(tmp_path),
               MXGATE_RECORD_HOOKS="record_model.block_gemm",
               MXGATE_RECORD_MAX_CALLS="2", MXGATE_RECORD_INCLUDE="record_model.*",
               PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
    code = ("import numpy as np, mxgate, record_model\n"
            "record_model.Model().forward(np.ones((2, 512), np.float32))\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.load(open(tmp_path / "summary.json"))
    assert len(folders(tmp_path)) == 2 and s["ops"]["block_gemm"]["skipped"] == {"max_calls": 1}


class _FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class FakeTensor:
    """Enough of a torch tensor for the _scaled_mm binding: dtype, shape, stride()."""

    __module__ = "torch.fake"

    def __init__(self, shape, strides, dtype):
        self.shape, self._strides, self.dtype = tuple(shape), tuple(strides), _FakeDtype(dtype)

    def stride(self):
        return self._strides

    def storage_offset(self):
        return 0


# Guards against torch._scaled_mm's forms bound wrong: the block form (scale_a (M, kb), scale_b
# (kb, nb) column-major) maps B to mat2 transposed and B's scales to scale_b transposed and cut
# to kb columns, declares sm90_fp8_mma, and names the unpadded row stride.
def test_scaled_mm_block_binding():
    m, n, k = 64, 256, 2304  # kb 18, nb 2
    b = ScaledMmBinding().bind(
        (FakeTensor((m, k), (k, 1), "float8_e4m3fn"), FakeTensor((k, n), (1, k), "float8_e4m3fn"),
         FakeTensor((m, 18), (1, m), "float32"), FakeTensor((18, 2), (1, 18), "float32")),
        dict(out_dtype=_FakeDtype("bfloat16")))
    assert (b.op, b.m, b.n, b.k, b.out_dtype, b.unsupported) == ("scaled_mm_block", 64, 256,
                                                                 2304, "bf16", None)
    assert b.roles["b"] == {"tensor": "mat2", "transpose": True}
    assert b.roles["b_scale"] == {"tensor": "scale_b", "transpose": True, "cols": 18}
    assert b.contract.accumulator == "sm90_fp8_mma" and b.kwargs["scale_b_form"] == "unpadded"
    assert (b.contract.m.align, b.contract.n.align, b.contract.k.align) == (4, 16, 16)
    padded = ScaledMmBinding().bind(
        (FakeTensor((m, k), (k, 1), "float8_e4m3fn"), FakeTensor((k, n), (1, k), "float8_e4m3fn"),
         FakeTensor((m, 18), (1, m), "float32"), FakeTensor((20, 2), (1, 20), "float32")),
        dict(out_dtype=_FakeDtype("float32")))
    assert padded.kwargs["scale_b_form"] == "padded" and padded.out_dtype == "f32"


# Guards against a form replay cannot judge passing silently: bias and fast accumulation are
# recorded with the reason named.
def test_scaled_mm_unjudged_forms_named():
    args = (FakeTensor((16, 32), (32, 1), "float8_e4m3fn"),
            FakeTensor((32, 16), (1, 32), "float8_e4m3fn"), FakeTensor((), (), "float32"),
            FakeTensor((), (), "float32"))
    fast = ScaledMmBinding().bind(args, dict(out_dtype=_FakeDtype("float32"),
                                             use_fast_accum=True))
    assert fast.op == "scaled_mm_tensor" and "use_fast_accum" in fast.unsupported
    bias = ScaledMmBinding().bind(args, dict(out_dtype=_FakeDtype("float32"), bias=args[2]))
    assert "bias" in bias.unsupported


class _CapturingTorch:
    """A stand-in for torch (none on this host) whose current CUDA stream is capturing a graph,
    or which is tracing under torch.compile."""

    def __init__(self, capturing, compiling):
        self.cuda = type("cuda", (), {"is_available": staticmethod(lambda: True),
                                      "is_current_stream_capturing":
                                          staticmethod(lambda: capturing)})
        self.compiler = type("compiler", (), {"is_compiling": staticmethod(lambda: compiling)})


# Guards against a recorder that copies tensors out while a CUDA graph is being captured (an
# illegal synchronisation that would break the user's capture) or while torch.compile traces
# fake tensors: those calls run unrecorded and are counted by reason; an eager call is recorded.
@pytest.mark.parametrize("capturing,compiling,why", [(True, False, "cuda_graph_capture"),
                                                     (False, True, "torch_compile_tracing")])
def test_no_copy_while_capturing_or_tracing(tmp_path, monkeypatch, capturing, compiling, why):
    model = record_model.Model()
    x = np.ones((2, 512), np.float32)
    with mxgate.record(tmp_path, hooks=["record_model.block_gemm"], known=False):
        expected = model.forward(x)
        monkeypatch.setitem(sys.modules, "torch", _CapturingTorch(capturing, compiling))
        got = model.forward(x)  # the hooked calls still run
        monkeypatch.delitem(sys.modules, "torch")
    assert np.array_equal(np.asarray(got), np.asarray(expected))
    s = json.load(open(tmp_path / "summary.json"))
    assert s["ops"]["block_gemm"]["seen"] == 6 and s["ops"]["block_gemm"]["recorded"] == 3
    assert s["ops"]["block_gemm"]["skipped"] == {why: 3}
    assert len(folders(tmp_path)) == 3
    assert why in s["not_captured"]
