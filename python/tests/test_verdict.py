"""check_gemm's Verdict on hand-derived cases: the located first and worst elements (coordinates,
expected / actual bits, ULP distance), NaN against a number, bf16 C, bound mode's exact value,
bound and excess, the readable str() and repr(), and the heatmap files drawn on request.
The problem is bf16 A = [[1, 2]], B = [[3, 4], [5, 6]]: C = A * B^T = [[11, 17]] exactly.
Not covered: the verdict policies themselves (reference/verdict.h's tests)."""

import numpy as np
import pytest

import mxgate

A = np.array([[0x3F80, 0x4000]], np.uint16)  # 1, 2 as bf16 bits
B = np.array([[0x4040, 0x4080], [0x40A0, 0x40C0]], np.uint16)  # 3, 4 / 5, 6


def check(c, **kw):
    return mxgate.check_gemm(A, None, B, None, c, scheme="bf16", **kw)


# Guards against a verdict that passes a correct C or reports elements for it.
def test_correct_c_passes():
    v = check(np.array([[11.0, 17.0]], np.float32))
    assert v.passed and v.mismatches == 0 and v.first is None and v.worst is None
    assert v.mode == "exact" and v.output == "fp32" and v.shape == (1, 2)
    assert str(v).endswith("PASS") and "all 2 elements match" in str(v)


# Guards against first / worst being swapped, coordinates transposed, or bits / ULP wrong:
# 11 = 0x41300000, its next float 0x41300001 is 1 ulp off; 17 = 0x41880000 against
# 20 = 0x41a00000 is 0x41a00000 - 0x41880000 = 0x180000 = 1572864 ulp.
def test_first_and_worst_are_located():
    c = np.array([[np.nextafter(np.float32(11), np.float32(12)), 20.0]], np.float32)
    v = check(c)
    assert not v.passed and v.mismatches == 2
    assert v.first.coords == (0, 0) and v.first.ulp == 1
    assert (v.first.expected_bits, v.first.actual_bits) == (0x41300000, 0x41300001)
    assert v.worst.coords == (0, 1) and v.worst.ulp == 0x180000
    assert (v.worst.expected_bits, v.worst.actual_bits) == (0x41880000, 0x41A00000)
    assert (v.worst.expected, v.worst.actual) == (17.0, 20.0)
    assert v.worst.bound is None and v.worst.exact is None
    assert "(0,1) expected 0x41880000 (17) actual 0x41a00000 (20) 1572864 ulp" in str(v)
    assert str(v).endswith("FAIL")
    assert repr(v) == "Verdict(passed=False, mode='exact', mismatches=2, first=(0, 0), worst=(0, 1))"


# Guards against NaN against a number ranking below a finite mismatch (it is always the worst)
# or printing as a huge ULP count.
def test_nan_against_a_number_is_the_worst():
    v = check(np.array([[12.0, np.nan]], np.float32))
    assert v.mismatches == 2 and v.first.coords == (0, 0)
    assert v.worst.coords == (0, 1) and v.worst.ulp == mxgate.NAN_ULP
    assert "NaN-vs-number" in str(v.worst)
    # 17 expected, NaN got: both sides named.
    assert str(v.worst).endswith("NaN-vs-number (expected finite 17, got NaN)"), str(v.worst)


# Guards against an Inf where NaN is expected (an E8M0 0xFF scale decoded as +Inf,
# llvm/llvm-project#214919) reading only as "NaN-vs-number": the element names both sides, at
# its coordinates; 2^127 (0x7f000000, 1.70141183e+38 to 9 digits) reads as finite.
def test_nan_expected_inf_got_is_named():
    from mxgate.verdict import Element
    inf = Element(row=1, col=0, expected_bits=0x7FC00000, actual_bits=0x7F800000,
                  ulp=mxgate.NAN_ULP, expected=float("nan"), actual=float("inf"))
    assert str(inf) == ("(1,0) expected 0x7fc00000 (nan) actual 0x7f800000 (inf) "
                        "NaN-vs-number (expected NaN, got +Inf)")
    big = Element(row=0, col=2, expected_bits=0x7FC00000, actual_bits=0x7F000000,
                  ulp=mxgate.NAN_ULP, expected=float("nan"), actual=2.0**127)
    assert str(big).endswith("NaN-vs-number (expected NaN, got finite 1.70141183e+38)"), str(big)


# Guards against a bf16 C (uint16 bits) being compared as fp32 or its bits widened:
# 17 in bf16 is 0x4188, the next bf16 0x4189 is 1 ulp.
def test_bf16_c_is_located_in_bf16_bits():
    v = check(np.array([[0x4130, 0x4189]], np.uint16))
    assert v.output == "bf16" and v.mismatches == 1
    assert v.first.coords == (0, 1) and v.first.ulp == 1
    assert (v.first.expected_bits, v.first.actual_bits) == (0x4188, 0x4189)
    assert "bf16 output" in str(v) and "0x4189" in str(v.first)


# Guards against bound mode losing the exact value, the bound or the excess, or locating the
# wrong element: 17.5 against exact 17 is 0.5 away, far outside fp32_rn's bound for two terms
# (about 4 * 2^-24 * 17); expected bits are those of 17, actual of 17.5 = 0x418c0000.
def test_bound_mode_reports_exact_bound_and_excess():
    v = check(np.array([[11.0, 17.5]], np.float32), mode="bound", accumulator="fp32_rn")
    assert v.mode == "bound" and not v.passed and v.mismatches == 1
    w = v.worst
    assert v.first == w and w.coords == (0, 1)
    assert w.exact == 17.0 and w.actual == 17.5
    assert 0 < w.bound < 1e-4 and w.excess == pytest.approx(0.5 - w.bound)
    assert (w.expected_bits, w.actual_bits, w.ulp) == (0x41880000, 0x418C0000, 0x40000)
    assert "accumulator fp32_rn" in str(v) and "outside" in str(v)


# Guards against the heatmap not being written on request (also when C passes), written in the
# wrong format for its extension, or named wrongly in the verdict.
@pytest.mark.parametrize("ext, magic", [("svg", b"<"), ("png", b"\x89PNG\r\n\x1a\n")])
@pytest.mark.parametrize("c", [[[11.0, 17.0]], [[11.0, 18.0]]])
def test_heatmap_on_request(tmp_path, ext, magic, c):
    path = tmp_path / f"map.{ext}"
    v = check(np.array(c, np.float32), heatmap=path)
    assert v.heatmap == str(path) and str(path) in str(v)
    data = path.read_bytes()
    assert data.startswith(magic)
    if ext == "svg":
        assert (b'class="m"' in data) == (not v.passed)
