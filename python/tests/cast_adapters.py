"""Cast adapters for the survey tests (test_device_ops.py): the e4m3fn cast under ocp_mx, as a
host op and as a device op (memory "cuda": DLPack views, host arrays where the library has no
CUDA), and the same with one planted wrong code at input 1.0 (0x3f800000). The codes come from
mxgate.encode: these adapters are correct (or wrong at one input) by construction, so the tests
check the survey's plumbing, not the encoder."""

import numpy as np

import mxgate

ONE = 0x3F800000


def _codes(x, out_dtype, planted):
    v = np.from_dlpack(x) if not isinstance(x, np.ndarray) else x
    y = mxgate.encode(v, out_dtype, "ocp_mx")
    if planted:
        y[v.view(np.uint32) == ONE] ^= 1
    return y


class HostCast(mxgate.Adapter):
    name = "host_cast"

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx")
    def cast(self, x, out_dtype):
        return _codes(x, out_dtype, False)


class DeviceCast(mxgate.Adapter):
    name = "device_cast"

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx", memory="cuda")
    def cast(self, x, out_dtype):
        return _codes(x, out_dtype, False)


class DeviceCastPlanted(mxgate.Adapter):
    name = "device_cast_planted"

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx", memory="cuda")
    def cast(self, x, out_dtype):
        return _codes(x, out_dtype, True)
