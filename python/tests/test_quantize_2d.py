"""2D MXFP8 quantization (one E8M0 scale per 32 x 32 tile, TransformerEngine's weight recipe;
docs/layouts.md §9) through the Python adapters: NumpyAdapter.quantize_mx_2d passes
quantize_2d.bit_exact and metamorphic.quantize_2d_transpose; each planted fault of numpy_faulty
(amax over 32x1, the grid transposed) fails quantize_2d.bit_exact with a located element and a
small shrunk case; the numpy encoders the op is built from hold at hand-derived codes; the
gemm_block family takes a 32x32 weight block (NumpyAdapter.gemm_block_2d passes the GEMM
properties, a transposed 32x32 grid fails gemm.exact).
Not covered: the C++ reference itself (tests/test_mx_quant_2d.cpp), the 1x32 quantizers."""

import numpy as np
import pytest

import mxgate
from mxgate.adapters import numpy_faulty
from mxgate.adapters.numpy import (NumpyAdapter, decode, e8m0_ceil_satfinite,
                                   encode_e4m3fn_satfinite, expand, finish, matmul_nt)

PROPS = ("quantize_2d.bit_exact", "metamorphic.quantize_2d_transpose")


def fields(case):
    return dict(kv.split("=", 1) for kv in case.split())


# Guards against the numpy 2D op failing its own properties (which would make the planted-fault
# detections below meaningless): it passes both over several seeds, fp32 and bf16 input.
@pytest.mark.parametrize("prop", PROPS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numpy_quantize_2d_passes(prop, seed):
    r = mxgate.check(prop, NumpyAdapter(), op="quantize_mx_2d", cases=40, seed=seed)
    assert r.passed and r.cases == 40, r


# (adapter, the bound on the shrunk case's rows and cols, why that bound).
FAULTS = [
    # A column's amax differs from the tile's in any tile of two columns with different
    # maxima: one row and 2 columns would do; the generator's smallest K is 32 + residue.
    (numpy_faulty.Quant2dColumnAmax, dict(rows=33, cols=160)),
    # A transposed grid equals the right one unless both grid dimensions exceed 1: 33 rows
    # (two tile rows) and 33 cols (two tile cols) at least.
    (numpy_faulty.Quant2dGridTransposed, dict(rows=64, cols=160)),
]


# Each planted fault is caught by quantize_2d.bit_exact within 20 cases, shrunk to a small case
# with a located element; the correct op passes the shrunk case.
@pytest.mark.parametrize("adapter,bound", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_planted_2d_fault_caught_and_located(adapter, bound):
    r = mxgate.check("quantize_2d.bit_exact", adapter(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", r
    assert r.cases <= 20, r
    assert r.location is not None, r
    got = fields(r.counterexample)
    for key, most in bound.items():
        assert int(got[key]) <= most, f"{key}={got[key]} > {most}: {r}"
    assert adapter.description.startswith("planted fault:")
    clean = mxgate.check("quantize_2d.bit_exact", NumpyAdapter(), op="quantize_mx_2d",
                         case=r.counterexample)
    assert clean.passed, clean


# Detection does not hang on one seed: over 5 seeds each fault is found, and the transpose
# property (which checks W against the reference first) catches them too.
@pytest.mark.parametrize("adapter,bound", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_planted_2d_fault_caught_over_seeds(adapter, bound):
    for seed in range(2, 7):
        for prop in PROPS:
            r = mxgate.check(prop, adapter(), cases=100, seed=seed)
            assert not r.passed, (prop, r)


# Guards against the op's E4M3 encoder drifting from satfinite RNE (hand-derived codes: 1.0 is
# exponent 7 -> 0x38; 1.0625 is the tie between 1.0 and 1.125, even code 0x38; 1.1875 the tie
# between 1.125 (0x39) and 1.25 (0x3A), even 0x3A; 460 rounds to 448 and 1e9 saturates, both
# 0x7E; 2^-10 is the tie between 0 and 2^-9 (0x01), even 0x00; -0.0 keeps its sign; NaN 0x7F).
def test_e4m3_encoder_hand_codes():
    v = np.array([1.0, 1.0625, 1.1875, 460.0, 1e9, 2.0 ** -10, -0.0, np.nan, -448.0],
                 dtype=np.float32)
    want = [0x38, 0x38, 0x3A, 0x7E, 0x7E, 0x00, 0x80, 0x7F, 0xFE]
    assert encode_e4m3fn_satfinite(v).tolist() == want


# Guards against the op's E8M0 encoder drifting from TE's float_to_e8m0 (hand-derived: 1.0 is
# exponent field 127; 1.5 ceils to 128; 2^-127 (subnormal 0x400000) stays byte 0, just above it
# goes to 1; Inf and 2^127 * 1.5 saturate at 254; 0 is 0).
def test_e8m0_encoder_hand_bytes():
    sub = np.array([0x400000, 0x400001], dtype=np.uint32).view(np.float32)
    q = np.array([1.0, 1.5, sub[0], sub[1], np.inf, 1.5 * 2.0 ** 127, 0.0], dtype=np.float32)
    assert e8m0_ceil_satfinite(q).tolist() == [127, 128, 0, 1, 254, 254, 0]


# Guards against the block GEMM family not consuming a 32x32 weight grid as declared (its
# contract is data: a_block (1, 32), b_block (32, 32)): numpy's gemm_block_2d passes the GEMM
# properties on exact-mode and general data.
@pytest.mark.parametrize("prop", ("gemm.exact", "gemm.ordered_bound",
                                  "metamorphic.tp_column_split"))
def test_gemm_block_takes_a_32x32_weight_grid(prop):
    r = mxgate.check(prop, NumpyAdapter(), op="gemm_block_2d", cases=30, seed=4)
    assert r.passed and r.cases == 30, r


class _Gemm2dGridTransposed(mxgate.Adapter):
    name = "gemm_2d_grid_transposed"
    description = "planted fault: B's 32x32 scale grid read transposed"

    @mxgate.op("gemm_block", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
               a_block=(1, 32), b_block=(32, 32), accumulator="fp32_rn")
    def gemm(self, a, a_scales, b, b_scales):
        nb, kb = b_scales.shape
        wrong = np.ascontiguousarray(b_scales).reshape(kb, nb).T  # the fault
        with np.errstate(over="ignore", invalid="ignore"):
            ad = decode(a, "e4m3fn") * expand(a_scales, a.shape[0], a.shape[1], 1, 32)
            bd = decode(b, "e4m3fn") * expand(wrong, b.shape[0], b.shape[1], 32, 32)
            return finish(matmul_nt(ad, bd), "f32")


# Guards against gemm.exact's fingerprint scales not telling a 32x32 grid from its transpose: the
# planted reader fails, located, on a case with two weight tiles along N and K.
def test_gemm_block_32x32_transposed_grid_caught():
    r = mxgate.check("gemm.exact", _Gemm2dGridTransposed(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail" and r.location is not None, r
    got = fields(r.counterexample)
    assert int(got["n"]) <= 160 and int(got["k"]) <= 160, r
