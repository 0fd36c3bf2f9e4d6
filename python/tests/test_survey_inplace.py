"""A host op writing its output in place (keyword `out`, mxgate/adapter.py; docs/python.md §13):
the survey's codes come from mxgate's own buffer, poisoned before every call, so an op that
writes its codes there is bit-exact with its claim, one that leaves an element unwritten is a
mismatch at that input (the poison byte), property runs take the same op, and `out` is refused
where there is no single host output to give; an in-place op is surveyed in calls of 16 MiB of
output, an op returning its output in the library's default of 2^22 inputs, and the library calls
the op with the count it is given. Not covered: the torch adapter's use of it (no
torch here: the H200 run of scripts/h200/survey.sh surveys it), device ops (they return their
output)."""

import ctypes

import pytest

import mxgate

import cast_adapters


# Guards against an in-place op's codes being lost (the output read from a buffer other than
# the one the op was given) or its None taken for an output to emit.
def test_in_place_cast_matches_its_claim():
    (s,) = mxgate.survey_cast(cast_adapters.InPlaceCast(), inputs="sample")
    assert s.error == "" and s.inputs == 393216 and "ocp_mx" in s.matches, s
    r = mxgate.check("cast.bit_exact", cast_adapters.InPlaceCast(), cases=50)
    assert r.passed, r


# Guards against an element an in-place op never writes passing as written: it keeps the poison
# (0xFF), a mismatch at its input, 1.0, in every table that defines 1.0 as 0x38.
def test_unwritten_element_is_the_poison():
    (s,) = mxgate.survey_cast(cast_adapters.InPlaceCastUnwritten(), inputs="sample")
    assert s.error == "" and "ocp_mx" not in s.matches, s
    (r,) = [r for r in s.results if "ocp_mx" in r.claims]
    assert r.mismatches == 1, r
    assert r.first.startswith("0x3f800000") and "expected 0x38, actual 0xff" in r.first, r


# Guards against `out` declared where mxgate has no single host buffer to hand over (a device
# op, a family of two outputs): refused when the op is declared, never a call that fails later.
@pytest.mark.parametrize("family, memory", [("cast", "cuda"), ("quantize_mx", "host")])
def test_out_is_refused_without_one_host_output(family, memory):
    def fn(x, out):
        return None

    with pytest.raises(mxgate.AdapterError, match="keyword `out`"):
        mxgate.Op(family, fn, "f", memory=memory)


# Guards against the call size mixing up the two kinds of op: an op returning its output must keep
# the library's default (0: 2^22, its per-call arrays below glibc's mmap threshold), an in-place
# op gets 16 MiB of output per call (2^24 one-byte codes, 2^23 two-byte ones, 2^24 packed E2M1).
def test_call_inputs_follow_the_op():
    from mxgate.survey import call_inputs

    def returning(x, out_dtype):
        return None

    def in_place(x, out_dtype, out):
        return None

    ret = mxgate.Op("cast", returning, "r", out_dtypes=("e4m3fn", "bf16"))
    inp = mxgate.Op("cast", in_place, "i", out_dtypes=("e4m3fn", "bf16", "e2m1"))
    assert (call_inputs(ret, "e4m3fn"), call_inputs(ret, "bf16")) == (0, 0)
    assert (call_inputs(inp, "e4m3fn"), call_inputs(inp, "bf16"), call_inputs(inp, "e2m1")) == \
        (1 << 24, 1 << 23, 1 << 24)


# Guards against the library ignoring the call size it is given (the in-place op would then get
# the default and the torch CPU figure of docs/python.md §14.8 would not be what ships): calls of
# 100000 inputs over the sample's 393,216 are the warm-up and four calls, the last of 93216.
def test_library_calls_the_op_with_the_given_count():
    from mxgate import _native
    from mxgate.adapter import Adapter
    from mxgate.check import _InMemory

    counts = []

    def cast(x, out_dtype, out):
        counts.append(x.size)
        out[...] = 0

    op = mxgate.Op("cast", cast, "counted", out_dtypes=("e4m3fn",))
    memory = _InMemory(Adapter([op], name="python"), (op,), device=False)
    _native.survey_cast(ctypes.addressof(memory.c_impl), 0, "e4m3fn", "sample", None, 100000)
    assert counts == [100000, 100000, 100000, 100000, 93216], counts
