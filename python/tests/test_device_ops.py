"""Device-resident adapter ops and the cast survey in one process or one worker request
(mxgate._device, mxgate.survey, the worker's "survey" request; docs/python.md §9, §13), on a
machine without a GPU: the DLPack views mxgate makes (read back by numpy), the reading of what
an op returns, the memory declaration, and the survey of host and device cast ops over the
sampled inputs, in process and through `mxgate survey`'s worker, with a planted wrong code
found at its input. Not covered here: device buffers, the device sweep and its speed (a
cuda-preset build on a GPU: scripts/h200/survey.sh, docs/python.md §14)."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import mxgate
from mxgate import _device

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import cast_adapters  # noqa: E402

SAMPLE = 393216


# A wrong DLPack struct layout (field order, shape or strides) would make numpy read other
# elements than the view names: a strided column-major view must read back as its transpose.
def test_device_array_view_reads_back_through_numpy():
    storage = np.arange(12, dtype=np.float32)  # 3 columns of 4 (ld 4): col-major 4 x 3
    view = _device.DeviceArray(storage.ctypes.data, (4, 3), np.float32, strides=(1, 4),
                               device=_device.KDL_CPU)
    got = np.from_dlpack(view)
    np.testing.assert_array_equal(got, storage.reshape(3, 4).T)
    assert view.__dlpack_device__() == (_device.KDL_CPU, 0)


# What an op returns is read through its capsule: the pointer, shape, element size and whether it
# is contiguous must be the array's own, or mxgate would copy the wrong bytes.
def test_returned_array_is_read_through_dlpack():
    a = np.arange(8, dtype=np.uint8)
    r = _device.Returned(a, "op")
    try:
        assert (r.pointer, r.shape, r.itemsize, r.contiguous) == (a.ctypes.data, (8,), 1, True)
        np.testing.assert_array_equal(r.host_copy(np.uint8), a)
    finally:
        r.release()
    s = _device.Returned(np.arange(16, dtype=np.uint8).reshape(4, 4)[:, ::2], "op")
    assert not s.contiguous
    s.release()


# A misspelt memory would silently run a device op as a host op: it is refused, naming the op.
def test_unknown_memory_is_refused():
    with pytest.raises(mxgate.AdapterError, match="memory must be one of host, cuda"):
        mxgate.Op("cast", lambda x, out_dtype: x, "c", memory="gpu", out_dtypes=("e4m3fn",))


# The survey of a correct host cast over the sample: bit-exact with its claim on every input.
def test_survey_host_op_matches_its_claim():
    (s,) = mxgate.survey_cast(cast_adapters.HostCast(), inputs="sample")
    assert (s.op, s.target, s.claimed, s.inputs, s.error) == ("cast", "e4m3fn", "ocp_mx",
                                                                SAMPLE, "")
    assert "ocp_mx" in s.matches


# A device op (host views where the library has no CUDA) goes through the same survey: the
# planted wrong code at 1.0 is the one mismatch against its claim, found at that input, and the
# progress callback hears every input.
def test_survey_device_op_finds_the_planted_code():
    heard = []
    (good,) = mxgate.survey_cast(cast_adapters.DeviceCast(), inputs="sample")
    assert "ocp_mx" in good.matches and good.inputs == SAMPLE
    (bad,) = mxgate.survey_cast(cast_adapters.DeviceCastPlanted(), inputs="sample",
                                progress=lambda done, total: heard.append((done, total)))
    claim = [r for r in bad.results if "ocp_mx" in r.claims][0]
    assert claim.mismatches == 1 and claim.first.startswith("0x3f800000"), claim
    assert heard and heard[-1] == (SAMPLE, SAMPLE)


# mxgate.check stages a device op's host buffers (or hands host views): the property verdicts
# are a host op's, the planted fault failing cast.bit_exact with its input located.
def test_check_runs_a_device_op():
    assert mxgate.check("cast.bit_exact", cast_adapters.DeviceCast(), cases=20).passed
    bad = mxgate.check("cast.bit_exact", cast_adapters.DeviceCastPlanted(), cases=200)
    assert not bad.passed


# `mxgate survey` asks the worker for each cast op's survey in one request: the worker's
# answer carries the same counts as the in-process survey (the planted code found once).
def test_cli_survey_through_the_worker(cli, tmp_path):
    import subprocess

    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent), env.get("PYTHONPATH", "")])
    r = subprocess.run([str(cli.path), "survey", "--impl",
                        "py:cast_adapters:DeviceCastPlanted,py:cast_adapters:HostCast",
                        "--cast-inputs", "sample", "--cases", "5", "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    by = {i["name"]: i for i in json.loads(r.stdout)["implementations"]}
    (bad,) = by["device_cast_planted"]["casts"]
    claim = [c for c in bad["claims"] if "ocp_mx" in c["conventions"]][0]
    assert (bad["inputs"], bad["error"], claim["mismatches"]) == (SAMPLE, "", 1), bad
    assert claim["first"].startswith("0x3f800000")
    (good,) = by["host_cast"]["casts"]
    assert "ocp_mx" in ",".join(good["matches"]), good


# A device op's result is never reinterpreted into another value: float16 returned for a bf16
# output (both 16 bits) is an error verdict naming the dtype, not fp16 bits read as bf16.
def test_device_result_of_another_float_type_is_refused():
    op = mxgate.Op("cast", lambda x, out_dtype: np.zeros(np.from_dlpack(x).size, np.float16),
                   "c", memory="cuda", out_dtypes=("bf16",), convention="ocp_mx")
    t_in = mxgate.adapter.Tensor("a", "f32", 1, 4, 4, "row_major", 16)
    t_out = mxgate.adapter.Tensor("out", "bf16", 1, 4, 4, "row_major", 8)
    out = np.full(8, 0xFF, np.uint8)
    status, text = op.invoke(1, 1, 4, [t_in, t_out], [np.zeros(16, np.uint8), out])
    if _device.device_available():
        assert status == "error" and "DLPack dtype" in text, text
    else:
        assert status == "error" and "float16" in text, text
