"""FP4 / FP6 / NVFP4 in the Python adapter model (python/mxgate/adapter.py; docs/python.md §9,
§11.1, §11.2): packed E2M1 in the ABI's nibble order, the NVFP4 families' global scales, the
numpy FP4 adapter passing its properties in process (mxgate.check) and through the worker
(`mxgate property --impl py:...`), its planted faults caught with a located element on both
routes, and bad declarations refused with an AdapterError naming the problem. Not covered: the
adapters of libraries absent here (test_adapters_optional.py)."""

import numpy as np
import pytest

import mxgate
from mxgate import adapter
from mxgate.adapters import numpy_faulty
from mxgate.adapters.numpy import E2M1, E2M3, E3M2, NumpyFp4Adapter
from test_worker import run

SPEC = "py:mxgate.adapters.numpy:NumpyFp4Adapter"
PROPS = ("dequantize_fp4.bit_exact", "gemm_fp4.exact", "gemm_fp4.ordered_bound")


# Guards against a swapped nibble order in the package's own helpers: plugin.h puts element 2i in
# the low nibble (bytes written by hand here, not by pack_e2m1).
def test_pack_and_unpack_follow_the_abi_nibble_order():
    packed = np.array([[0x21, 0x0F], [0x9A, 0xF3]], dtype=np.uint8)
    assert adapter.unpack_e2m1(packed, 3).tolist() == [[1, 2, 15], [10, 9, 3]]
    assert adapter.pack_e2m1([[1, 2, 15], [10, 9, 3]]).tolist() == [[0x21, 0x0F], [0x9A, 0x03]]


# Guards against the format tables drifting from OCP MX v1.0 §5.3.3 (largest normals, smallest
# subnormals, the sign bit of each width).
def test_fp4_fp6_tables():
    assert E2M1[:8].tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6] and E2M1[15] == -6
    assert E2M3[31] == 7.5 and E2M3[1] == 0.125 and E2M3[32 + 31] == -7.5
    assert E3M2[31] == 28 and E3M2[1] == 0.0625 and E3M2[32 + 1] == -0.0625


# Guards against an op receiving packed E2M1 in another shape than the ABI's bytes, or a global
# scale as anything but a (1,) array: one call by hand, an odd K with the 0xF padding nibble.
def test_invoke_gives_packed_bytes_and_the_global():
    seen = {}

    def deq(codes, scales, a_global):
        seen.update(codes=codes.copy(), scales=scales.copy(), g=a_global.copy())
        return np.zeros((2, 3), np.float32)

    o = adapter.Op("dequantize_nvfp4", deq, "deq")
    t = [adapter.Tensor("a", "e2m1", 2, 3, 0, "row_major", 4),
         adapter.Tensor("a_scale", "e4m3fn", 2, 1, 0, "row_major", 2),
         adapter.Tensor("a_global", "f32", 1, 1, 1, "row_major", 4),
         adapter.Tensor("out", "f32", 2, 3, 0, "row_major", 24)]
    out = np.full(24, 0xFF, np.uint8)
    bufs = [bytes([0x21, 0xF3, 0x54, 0xF6]), bytes([0x38, 0x40]),
            np.float32(0.5).tobytes(), out]
    assert o.invoke(2, 1, 3, t, bufs) == ("done", "")
    assert seen["codes"].tolist() == [[0x21, 0xF3], [0x54, 0xF6]]
    assert seen["g"].dtype == np.float32 and seen["g"].tolist() == [0.5]
    assert out.view(np.float32).tolist() == [0.0] * 6


# Guards against an NVFP4 quantizer's two outputs being swapped or its global amax not reaching
# it: one call by hand, packed codes and E4M3 scales written where the call's tensors are.
def test_invoke_quantize_nvfp4_roles():
    def quant(x, a_global):
        assert x.shape == (1, 3) and a_global.tolist() == [6.0]
        return np.array([[0x21, 0x03]], np.uint8), np.array([[0x38]], np.uint8)

    o = adapter.Op("quantize_nvfp4", quant, "q")
    t = [adapter.Tensor("a", "f32", 1, 3, 0, "row_major", 12),
         adapter.Tensor("a_global", "f32", 1, 1, 1, "row_major", 4),
         adapter.Tensor("out", "e2m1", 1, 3, 0, "row_major", 2),
         adapter.Tensor("out_scale", "e4m3fn", 1, 1, 0, "row_major", 1)]
    codes, scales = np.full(2, 0xFF, np.uint8), np.full(1, 0xFF, np.uint8)
    bufs = [np.array([0.5, 1, 6], np.float32).tobytes(), np.float32(6).tobytes(), codes, scales]
    assert o.invoke(1, 1, 3, t, bufs) == ("done", "")
    assert codes.tolist() == [0x21, 0x03] and scales.tolist() == [0x38]


# Guards against packed E2M1 outputs being laid out as one code per byte: a cast to e2m1 of 3
# values returns 2 bytes; one code per byte is refused naming the packed shape.
def test_packed_output_shape():
    t = adapter.Tensor("out", "e2m1", 1, 3, 0, "row_major", 2)
    target = np.full(2, 0xFF, np.uint8)
    adapter.emit(t, np.array([0x21, 0x03], np.uint8), target, "c")
    assert target.tolist() == [0x21, 0x03]
    with pytest.raises(mxgate.AdapterError, match="packed e2m1: 1 x 2 bytes"):
        adapter.emit(t, np.array([1, 2, 3], np.uint8), target, "c")


# Guards against a bad FP4 / NVFP4 declaration reaching the loader (or running) instead of
# failing at once with the problem named.
@pytest.mark.parametrize("family,fields,message", [
    ("gemm_nvfp4", dict(global_dtypes=()), "gemm_nvfp4 reads global scales: declare global"),
    ("dequantize_nvfp4", dict(scale_dtype="e8m0"), "scale_dtype must be e4m3fn, not 'e8m0'"),
    ("gemm_mx", dict(global_dtypes=("f32",)), "takes no global scale"),
    ("dequantize", dict(scale_dtype="e4m3fn"), "e4m3fn is for the NVFP4 families"),
    ("gemm_nvfp4", dict(global_dtypes=("e8m0",)), "unknown global_dtypes dtype 'e8m0'"),
    ("cast", dict(out_dtypes=("e2m2",)), "unknown dtype 'e2m2'"),
], ids=["no_global", "mx_scales", "global_on_mx", "e4m3_scales_on_mx", "bad_global", "bad_dtype"])
def test_bad_fp4_declarations(family, fields, message):
    with pytest.raises(mxgate.AdapterError, match=message):
        adapter.Op(family, lambda *a: None, "x", **fields)


# Guards against a packed E2M1 tensor in a layout the ABI does not pack (column-major) being read
# as if row-major: the op's call is an error naming the layout.
def test_packed_e2m1_in_col_major_is_an_error():
    o = adapter.Op("dequantize", lambda c, s: c, "deq", a_dtypes=("e2m1",))
    t = [adapter.Tensor("a", "e2m1", 2, 2, 0, "col_major", 2),
         adapter.Tensor("a_scale", "e8m0", 2, 1, 0, "row_major", 2),
         adapter.Tensor("out", "f32", 2, 2, 0, "row_major", 16)]
    status, text = o.invoke(2, 1, 2, t, [b"\0\0", b"\x7f\x7f", np.zeros(16, np.uint8)])
    assert status == "error" and "row-major only" in text


# The correct numpy FP4 adapter passes every FP4 property in process, over two seeds.
@pytest.mark.parametrize("seed", [1, 7])
def test_numpy_fp4_passes_in_process(seed):
    for prop in PROPS:
        r = mxgate.check(prop, NumpyFp4Adapter(), cases=40, seed=seed)
        assert r.passed and r.cases == 40, r
    assert set(r.ops) == {"gemm_mxfp4", "gemm_nvfp4"}


# The same adapter passes the same properties through the worker process.
def test_numpy_fp4_passes_through_the_worker(cli):
    code, out, err = run(cli, "property", *PROPS, "--impl", SPEC, "--cases", "30")
    assert code == 0, out + err
    assert out.count("pass after 30 cases") == 3, out


FAULTS = [
    # Swapped nibbles differ in the first element of a row of two unequal codes.
    (numpy_faulty.Fp4NibbleSwapped, "dequantize_fp4.bit_exact", "dequantize_mxfp4"),
    # A's global twice instead of A's times B's: any element with ga != gb.
    (numpy_faulty.Nvfp4GlobalTwice, "gemm_fp4.exact", "gemm_nvfp4"),
]


# Each planted FP4 fault fails in process with a located element and a small shrunk case, and
# the worker finds the same shrunk case.
@pytest.mark.parametrize("cls,prop,op", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_fp4_planted_fault_caught_on_both_routes(cli, cls, prop, op):
    assert cls.description.startswith("planted fault:")
    r = mxgate.check(prop, cls(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", r
    assert r.location is not None and r.location.expected_bits != r.location.actual_bits, r
    assert f"op={op}" in r.counterexample and r.cases <= 20, r
    spec = f"py:mxgate.adapters.numpy_faulty:{cls.__name__}"
    code, out, err = run(cli, "property", prop, "--impl", spec, "--cases", "100")
    assert code == 1, out + err
    assert f"shrunk case: {r.counterexample}\n" in out, out
    clean = mxgate.check(prop, NumpyFp4Adapter(), case=r.counterexample)
    assert clean.passed, clean


# The ml_dtypes adapter on a stand-in module (fake_ml_dtypes.py: ml_dtypes' FP4 / FP6 rounding
# restated by tools/measure/ml_dtypes_model.py) finds only the types the module has, claims
# ml_dtypes, and its FP4 / FP6 casts (E2M1 packed) pass cast.bit_exact in process and through the
# worker.
def test_ml_dtypes_fp4_fp6_casts_on_a_stand_in(cli):
    from fake_ml_dtypes import FakeMlDtypes

    a = FakeMlDtypes()
    cast = a.find("cast")
    assert [o.name for o in a.ops] == ["cast"]  # no float8_e8m0fnu: no upcast op
    assert cast.contract.out_dtypes == ("e2m1", "e2m3", "e3m2")
    assert cast.contract.convention == "ml_dtypes"
    r = mxgate.check("cast.bit_exact", a, cases=60, seed=3)
    assert r.passed and r.cases == 60, r
    code, out, err = run(cli, "property", "cast.bit_exact", "--impl",
                         "py:fake_ml_dtypes:FakeMlDtypes", "--cases", "30")
    assert code == 0 and "pass after 30 cases" in out, out + err


# Guards against cast.bit_exact comparing packed E2M1 in a way blind to the nibble order: codes
# packed high nibble first fail with a located element.
def test_ml_dtypes_packed_high_first_is_caught():
    from fake_ml_dtypes import FakeMlDtypesHighFirst

    r = mxgate.check("cast.bit_exact", FakeMlDtypesHighFirst(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", r
    assert "format=e2m1" in r.counterexample and r.location is not None, r


# Guards against the cast survey being blind to FP4 / FP6 targets (it refused them as "no cast
# target format") or comparing packed E2M1 bytes as codes: the stand-in's sampled survey (393,216
# inputs: every sign and exponent with six low halves, properties/cast_survey.cpp) equals the
# ml_dtypes claim in each format, and OCP MX, which leaves NaN to FP4 / FP6 undefined, has no row.
def test_ml_dtypes_fp4_fp6_survey_rows_on_a_stand_in():
    from fake_ml_dtypes import FakeMlDtypes

    for target in ("e2m1", "e2m3", "e3m2"):
        (s,) = mxgate.survey_cast(FakeMlDtypes(), target=target, inputs="sample")
        assert s.error == "" and s.inputs == 393216, s
        assert "ml_dtypes" in s.matches, s
        assert not any("ocp_mx" in r.claims for r in s.results), s


# Guards against the survey's unpacking hiding a nibble-order fault: high-first packing differs
# from every claim, and the first mismatch is the first sampled input whose code differs from its
# pair partner's (codes from the stand-in's model, inputs in the survey's sample order).
def test_fp4_survey_catches_high_first_packing():
    from fake_ml_dtypes import FakeMlDtypesHighFirst, model

    (s,) = mxgate.survey_cast(FakeMlDtypesHighFirst(), target="e2m1", inputs="sample")
    assert s.matches == () and s.inputs == 393216, s
    low = (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)
    inputs = [h << 16 | lo for h in range(65536) for lo in low]
    first = next(i for i in range(0, len(inputs), 2)
                 if model.model(inputs[i], "e2m1") != model.model(inputs[i + 1], "e2m1"))
    (ml,) = [r for r in s.results if "ml_dtypes" in r.claims]
    assert ml.first.startswith(f"0x{inputs[first]:08x} "), ml.first
    assert f"actual 0x{model.model(inputs[first + 1], 'e2m1'):02x}" in ml.first, ml.first
