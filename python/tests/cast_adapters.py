"""Cast adapters for the survey tests (test_device_ops.py, test_survey_setup.py,
test_survey_inplace.py): the e4m3fn cast under ocp_mx, as a host op and as a device op (memory
"cuda": DLPack views, host arrays where the library has no CUDA), the same with one planted wrong
code at input 1.0 (0x3f800000), a host op whose first call sleeps (a compile's stand-in), and
host ops writing their codes in place (keyword `out`), one of them leaving the element of input
1.0 unwritten. The codes come from mxgate.encode: these adapters are correct (or wrong at one
input) by construction, so the tests check the survey's plumbing, not the encoder."""

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


SLOW_FIRST_SECONDS = 1.5


class SlowFirstCast(mxgate.Adapter):
    """HostCast whose first call in a process sleeps SLOW_FIRST_SECONDS, as a kernel's compile or
    a jit would: the survey's setup must take it, its timed sweep not. `calls` counts them."""

    name = "slow_first_cast"
    calls = 0

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx")
    def cast(self, x, out_dtype):
        import time

        type(self).calls += 1
        if type(self).calls == 1:
            time.sleep(SLOW_FIRST_SECONDS)
        return _codes(x, out_dtype, False)


class InPlaceCast(mxgate.Adapter):
    """HostCast writing its codes into mxgate's output buffer (keyword `out`) and returning None."""

    name = "in_place_cast"

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx")
    def cast(self, x, out_dtype, out):
        out[...] = _codes(x, out_dtype, False)


class InPlaceCastUnwritten(mxgate.Adapter):
    """InPlaceCast leaving the output element of input 1.0 unwritten (it keeps mxgate's poison)."""

    name = "in_place_cast_unwritten"

    @mxgate.op("cast", out_dtypes=("e4m3fn",), convention="ocp_mx")
    def cast(self, x, out_dtype, out):
        keep = x.view(np.uint32) != ONE
        out[keep] = _codes(x, out_dtype, False)[keep]
