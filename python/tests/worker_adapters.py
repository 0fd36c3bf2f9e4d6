"""Adapters that misbehave on purpose, for the tests of the worker process and of mxgate.check:
one crashes the interpreter, one hangs, one raises, one returns the wrong dtype, one is
unavailable. Each has one upcast_e8m0 op (the cheapest family to generate)."""

import os
import signal
import time

import numpy as np

import mxgate


class Crashing(mxgate.Adapter):
    name = "crashing"
    description = "dies of SIGSEGV in every call"

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        os.kill(os.getpid(), signal.SIGSEGV)


class Hanging(mxgate.Adapter):
    name = "hanging"
    description = "never answers a call"

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        time.sleep(3600)


class Raising(mxgate.Adapter):
    name = "raising"
    description = "raises in every call"

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        raise ZeroDivisionError("planted")


class WrongDtype(mxgate.Adapter):
    name = "wrong_dtype"
    description = "returns float64 for an fp32 result"

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        return np.exp2(e8m0.astype(np.float64) - 127)


class Declining(mxgate.Adapter):
    name = "declining"
    description = "declines every case inside its own contract"

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        raise mxgate.Unsupported("not today")


class Missing(mxgate.Adapter):
    name = "missing"
    description = "wraps a module that is not installed"

    def check_available(self):
        raise mxgate.Unavailable("needs the module not_installed_anywhere")

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        return e8m0


not_an_adapter = 42


def _gemm(accumulator):
    """A per-tensor FP8 GEMM op (never called by the tests that load it) declaring `accumulator`."""
    from mxgate.adapter import Op

    def run(a, sa, b, sb, call):
        raise AssertionError("not called")

    return Op("gemm_block", run, "gemm_spec", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",),
              out_dtypes=("f32",), a_block=(0, 0), b_block=(0, 0), accumulator=accumulator)


class SpecAccumulator(mxgate.Adapter):
    name = "spec_accumulator"
    description = "declares a model spec with parameters (fp32 with directed rounding)"

    def __init__(self):
        super().__init__(ops=[_gemm("fp32_rn:unit_roundoff_bits=23")])


class BadSpecAccumulator(mxgate.Adapter):
    name = "bad_spec_accumulator"
    description = "declares a malformed model spec"

    def __init__(self):
        super().__init__(ops=[_gemm("fp32_rn:bits=2^3")])
