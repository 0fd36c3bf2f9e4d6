"""mxgate.check (docs/python.md §9): the C++ properties run in-process against Python callables.
Covers: a correct numpy implementation passing exact mode and bound mode, plain callables with a
family's default contract, replay of one case, the result's str / repr, exceptions and wrong
outputs of an op as error verdicts, and bad input (ValueError naming the problem). Not covered
here: the planted faults (test_adapters_numpy.py), the worker process (test_worker.py)."""

import numpy as np
import pytest

import mxgate
from mxgate.adapters.numpy import NumpyAdapter, decode, e8m0_values, expand

import worker_adapters


def numpy_gemm_mx(a, a_scales, b, b_scales):
    deq = lambda q, s: decode(q, "e4m3fn") * expand(e8m0_values(s), q.shape[0], q.shape[1], 1, 32)
    return deq(a, a_scales) @ deq(b, b_scales).T


# A correct implementation must pass exact mode: exact-mode operands make every fp32 order exact.
def test_numpy_adapter_passes_exact_mode():
    r = mxgate.check("gemm.exact", NumpyAdapter(), cases=60, seed=3)
    assert r.passed, r
    assert r.cases == 60 and r.unsupported == 0
    assert set(r.ops) == {"gemm_mx", "gemm_block_deepseek", "gemm_block_2d", "gemm_block_tensor",
                          "gemm_block_rowwise", "gemm_bf16"}


# ... and bound mode with the accumulator it declares (fp32_rn over any order of K).
def test_numpy_adapter_passes_bound_mode_fp32_rn():
    r = mxgate.check("gemm.ordered_bound", NumpyAdapter(), cases=60, seed=5, accumulator="fp32_rn")
    assert r.passed, r
    assert r.cases == 60


# Every property of the adapter's families passes on it (metamorphic, dequantize, upcast).
def test_numpy_adapter_passes_every_property_that_applies():
    rs = mxgate.check("all", NumpyAdapter(), cases=30, seed=2)
    assert rs.passed, rs
    names = {r.property for r in rs.results}
    assert {"gemm.exact", "gemm.ordered_bound", "dequantize.bit_exact", "upcast_e8m0.bit_exact",
            "metamorphic.tp_column_split", "metamorphic.tp_row_split",
            "metamorphic.padding_poison", "quantize_2d.bit_exact",
            "metamorphic.quantize_2d_transpose"} <= names
    # The FP4 properties reach numpy's dequantize and gemm_mx by family, but those ops take no
    # E2M1, and gemm_mx takes no absent B scale (gemm.default_scale); the 1x32 quantize
    # properties reach quantize_mx_2d by family, whose scale block is 32 x 32: no case, the
    # reason said.
    # dequantize.large_offsets (2^31 elements) is device only: on the host, not applicable. Every
    # other property ran cases.
    declined = [r for r in rs.results if r.cases == 0]
    unbuildable = ("quantize_fp4.", "dequantize_fp4.", "gemm_fp4.", "gemm.default_scale",
                   "quantize.bit_exact", "metamorphic.block_scale_shift")
    for r in declined:
        reasons = " ".join(r.unsupported_reasons)
        if r.property == "dequantize.large_offsets":
            assert "not applicable on the host backend" in reasons, r
        else:
            assert r.property.startswith(unbuildable), str(declined)
            assert "cannot build its inputs" in reasons, r
    assert len(declined) < len(rs.results), str(rs)


# A plain function with op=FAMILY gets the family's default contract and passes.
def test_plain_callable_with_family():
    r = mxgate.check("gemm.exact", numpy_gemm_mx, op="gemm_mx", cases=40)
    assert r.passed, r
    assert r.ops == ("gemm_mx",)


# op= narrows an adapter to one op; an Op declares a plain function's contract.
def test_op_selection_and_declared_op():
    r = mxgate.check("gemm.exact", NumpyAdapter(), op="gemm_bf16", cases=20)
    assert r.passed and r.ops == ("gemm_bf16",), r
    small = mxgate.Op("gemm_mx", numpy_gemm_mx, k=mxgate.Dim(align=32, max=64))
    r = mxgate.check("gemm.exact", numpy_gemm_mx, op=small, cases=20)
    assert r.passed, r


# A failure replays from its case text alone, with the same verdict and element.
def test_case_replay_reproduces_the_shrunk_case():
    from mxgate.adapters.numpy_faulty import DropTrailingK

    r = mxgate.check("gemm.exact", DropTrailingK(), cases=50)
    assert not r.passed and r.counterexample
    again = mxgate.check("gemm.exact", DropTrailingK(), case=r.counterexample)
    assert not again.passed and again.cases == 1
    assert again.location == r.location
    assert "case=" in r.reproduce and r.counterexample in r.reproduce
    assert r.cli == ("mxgate property gemm.exact --impl "
                     "py:mxgate.adapters.numpy_faulty:DropTrailingK --seed 1 --cases 50")
    ok = mxgate.check("gemm.exact", NumpyAdapter(), case=r.counterexample)
    assert ok.passed, ok


# pytest prints a non-string assertion message through saferepr (240 characters): the repr of a
# failure must name property, implementation, verdict, element and case within that.
def test_repr_fits_pytest_and_str_tells_the_story():
    from mxgate.adapters.numpy_faulty import ActScalesColMajor

    r = mxgate.check("gemm.exact", ActScalesColMajor(), cases=50)
    text = repr(r)
    assert len(text) <= 240, text
    assert text.startswith("CheckResult(gemm.exact[numpy_faulty_act_scales_col_major] FAIL at ")
    assert r.counterexample[:40] in text
    story = str(r)
    for part in ("FAIL after", "shrunk case: ", "failure: ", "element (", "reproduce: ", "cli: "):
        assert part in story, story
    with pytest.raises(AssertionError) as e:
        assert r.passed, r
    assert "FAIL at" in str(e.value)


# An exception inside the op is an error verdict naming the op and the exception, never a crash.
def test_exception_in_op_is_an_error_verdict():
    r = mxgate.check("upcast_e8m0.bit_exact", worker_adapters.Raising(), cases=5)
    assert not r.passed and r.kind == "error", r
    assert "upcast_e8m0 raised ZeroDivisionError: planted" in r.failure


# A cast op gets a read-only view of mxgate's input buffer (no copy per survey chunk): an op that
# writes its input must fail loudly (an error verdict), never change the inputs that the
# comparison and the next checks read.
def test_cast_op_writing_its_input_is_an_error():
    def cast(x, out_dtype):
        x[0] = 0.0
        return np.zeros(x.shape, np.uint8)

    op = mxgate.Op("cast", cast, "cast", out_dtypes=("e4m3fn",), convention="ocp_mx")
    r = mxgate.check("cast.bit_exact", op, cases=3)
    assert not r.passed and r.kind == "error", r
    assert "read-only" in r.failure, r.failure


# A wrong output dtype is an error naming both dtypes: mxgate never converts an op's output.
def test_wrong_output_dtype_is_an_error():
    r = mxgate.check("upcast_e8m0.bit_exact", worker_adapters.WrongDtype(), cases=5)
    assert r.kind == "error" and "float64" in r.failure and "f32" in r.failure, r


# Declining a case inside the declared contract is a contract mismatch, a failure.
def test_declining_inside_contract_is_contract_mismatch():
    r = mxgate.check("upcast_e8m0.bit_exact", worker_adapters.Declining(), cases=5)
    assert not r.passed and r.kind == "contract_mismatch", r


# Guards against an op the property cannot take vanishing from a run that checked the
# implementation's others: numpy's gemm_bf16 (no scales) is listed, with the clause it lacks, by
# metamorphic.padding_poison, which checks numpy's scaled GEMMs; in the result and in its story.
def test_op_not_checked_is_listed_with_its_reason():
    r = mxgate.check("metamorphic.padding_poison", NumpyAdapter(), cases=3)
    assert r.passed and r.cases == 3 and "gemm_bf16" not in r.ops, r
    (why,) = [w for w in r.ops_not_checked if "/gemm_bf16:" in w]
    assert why.endswith("it needs scales (gemm_bf16 has none)"), why
    assert "  not checked: " + why in str(r)
    both = mxgate.check(["gemm.exact", "metamorphic.padding_poison"], NumpyAdapter(), cases=2)
    assert why in both.ops_not_checked, both.ops_not_checked


# A property with no op of its families runs nothing and says why (unsupported, not failed).
def test_property_that_does_not_apply_is_unsupported():
    r = mxgate.check("cast.bit_exact", NumpyAdapter(), cases=5)
    assert r.passed and r.cases == 0 and r.unsupported == 1, r
    assert "no op of its families" in r.unsupported_reasons[0]
    assert r.verdict == "unsupported"


# An unavailable adapter raises mxgate.Unavailable before anything runs.
def test_unavailable_adapter_raises():
    with pytest.raises(mxgate.Unavailable, match="not_installed_anywhere"):
        mxgate.check("upcast_e8m0.bit_exact", worker_adapters.Missing())


BAD = [
    ("unknown property", dict(property="gemm.nope", impl=NumpyAdapter()),
     "unknown property 'gemm.nope'"),
    ("callable without op", dict(property="gemm.exact", impl=numpy_gemm_mx),
     "a plain callable needs op=FAMILY"),
    ("unknown family", dict(property="gemm.exact", impl=numpy_gemm_mx, op="gemm_fp4"),
     "a plain callable needs op=FAMILY"),
    ("unknown op of adapter", dict(property="gemm.exact", impl=NumpyAdapter(), op="nope"),
     "adapter numpy has no op 'nope'"),
    ("unknown convention", dict(property="upcast_e8m0.bit_exact", impl=mxgate.Op(
        "upcast_e8m0", e8m0_values, convention="ocp_mxx")), "'ocp_mxx' is no convention"),
    ("zero cases", dict(property="gemm.exact", impl=NumpyAdapter(), cases=0), "--cases"),
    ("malformed case", dict(property="gemm.exact", impl=NumpyAdapter(), case="m=1 k"),
     "case: case token 'k' is not key=value"),
    ("not an implementation", dict(property="gemm.exact", impl=42), "not int"),
]


# Bad input raises ValueError naming the problem.
@pytest.mark.parametrize("kwargs,text", [(k, t) for _, k, t in BAD], ids=[n for n, _, _ in BAD])
def test_bad_input_raises_value_error(kwargs, text):
    with pytest.raises(ValueError) as e:
        mxgate.check(**kwargs)
    assert text in str(e.value)


# Contract declarations are checked in Python before anything runs.
@pytest.mark.parametrize("fields,text", [
    (dict(a_dtypes=("e4m3",)), "unknown dtype 'e4m3'"),
    (dict(a_scale_layouts="swizzled"), "unknown layout 'swizzled'"),
    (dict(scale_dtype="f16"), "scale_dtype must be"),
    (dict(k_align=32), "unknown contract field(s) k_align"),
])
def test_bad_contract_fields(fields, text):
    with pytest.raises(mxgate.AdapterError) as e:
        mxgate.Op("gemm_mx", numpy_gemm_mx, **fields)
    assert text in str(e.value)


# properties() lists every property with its families, as `mxgate property --list` does.
def test_properties_list(cli):
    names = [p for p, _, _ in mxgate.properties()]
    listed = [line.split()[0] for line in cli.ok("property", "--list").splitlines()]
    assert names == listed
