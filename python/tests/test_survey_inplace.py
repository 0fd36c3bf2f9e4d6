"""A host op writing its output in place (keyword `out`, mxgate/adapter.py; docs/python.md §13):
the survey's codes come from mxgate's own buffer, poisoned before every call, so an op that
writes its codes there is bit-exact with its claim, one that leaves an element unwritten is a
mismatch at that input (the poison byte), property runs take the same op, and `out` is refused
where there is no single host output to give. Not covered: the torch adapter's use of it (no
torch here: the H200 run of scripts/h200/survey.sh surveys it), device ops (they return their
output)."""

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
