"""A real implementation checked through the package: numpy's float32 matmul of operands that
numpy dequantizes itself (e4m3fn and e8m0 decoded from their bit fields here, independently of
mxgate). The seed of the later numpy adapter.
- On exact-mode operands (small integers times power-of-two block scales, so every fp32 partial
  sum is exact in any order) numpy's C equals gemm() bit for bit and passes check_gemm exact mode,
  for the mx, block and bf16 schemes.
- On general data it passes bound mode: accumulator fp32_rn where numpy is inside that model
  (K <= 128: one partial, any order; docs/python.md §5), the one-partial manual model
  (acc_bits=24, block_k=0) for longer K.
- The same numpy with a planted fault (the trailing K block dropped) fails, located.
Not covered: other numpy dtypes (float64 matmul is a different implementation), the property
runner (later)."""

import numpy as np
import pytest

import mxgate

SEEDS = [1, 2, 3, 4, 5]


def numpy_e4m3fn(codes):
    """e4m3fn bits -> float32 by the OCP field formula: 1 sign, 4 exponent (bias 7), 3 mantissa;
    exponent 0 subnormal; S.1111.111 NaN (no Inf)."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e, m = (c >> 3) & 0xF, c & 0x7
    value = np.where(e == 0, m / 8.0 * 2.0**-6, (1 + m / 8.0) * 2.0 ** (e - 7))
    value = np.where((e == 0xF) & (m == 0x7), np.nan, value)
    return (sign * value).astype(np.float32)


def numpy_e8m0(scales):
    """e8m0 bytes -> float32: 2^(byte - 127), 0xFF NaN (OCP MX)."""
    s = scales.astype(np.int64)
    return np.where(s == 0xFF, np.nan, np.ldexp(1.0, s - 127)).astype(np.float32)


def numpy_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


INTEGER_CODES = np.array(
    [c for c in range(256) if np.isfinite(v := numpy_e4m3fn(np.array([c]))[0])
     and v == np.round(v) and abs(v) <= 8]
)


def expand(scales, rows, cols, block_rows, block_cols):
    """A logical scale grid broadcast to every element of a rows x cols operand."""
    return np.repeat(np.repeat(scales, block_rows, 0), block_cols, 1)[:rows, :cols]


def numpy_gemm(a, b):
    """The implementation under test: fp32 matmul, whatever order the BLAS picks."""
    return np.matmul(a.astype(np.float32), b.astype(np.float32).T)


def exact_mode_operands(scheme, m, n, k, seed):
    """Integers in [-8, 8] times power-of-two scales 2^e, e in [-2, 1]: every term is a multiple
    of 2^-4 and |sum| <= 64 * 4 * K << 2^24 * 2^-4, so any fp32 summation order is exact."""
    rng = np.random.default_rng(seed)
    if scheme == "bf16":
        ints = rng.integers(-8, 9, size=(m + n, k)).astype(np.float32)
        bits = (ints.view(np.uint32) >> 16).astype(np.uint16)
        a, b = bits[:m], bits[m:]
        return (a, None, b, None), numpy_bf16(a), numpy_bf16(b)
    a = rng.choice(INTEGER_CODES, size=(m, k)).astype(np.uint8)
    b = rng.choice(INTEGER_CODES, size=(n, k)).astype(np.uint8)
    if scheme == "mx":
        kb = -(-k // 32)
        sa = (127 + rng.integers(-2, 2, size=(m, kb))).astype(np.uint8)
        sb = (127 + rng.integers(-2, 2, size=(n, kb))).astype(np.uint8)
        da = numpy_e4m3fn(a) * expand(numpy_e8m0(sa), m, k, 1, 32)
        db = numpy_e4m3fn(b) * expand(numpy_e8m0(sb), n, k, 1, 32)
        return (a, sa, b, sb), da, db
    kb = -(-k // 128)
    sa = np.ldexp(1.0, rng.integers(-2, 2, size=(m, kb))).astype(np.float32)
    sb = np.ldexp(1.0, rng.integers(-2, 2, size=(-(-n // 128), kb))).astype(np.float32)
    da = numpy_e4m3fn(a) * expand(sa, m, k, 1, 128)
    db = numpy_e4m3fn(b) * expand(sb, n, k, 128, 128)
    return (a, sa, b, sb), da, db


def shape(seed):
    """M, N, K <= 256 from the seed, K often not a multiple of 32 (a short last block)."""
    rng = np.random.default_rng(100 + seed)
    return int(rng.integers(1, 40)), int(rng.integers(1, 200)), int(rng.integers(1, 257))


# Guards against the exact oracle disagreeing with a correct fp32 implementation on data where
# every order is exact (a wrong scale block index, a K tail dropped, e8m0 decoded as something
# other than 2^(b-127)), and against the exact-mode verdict failing a correct C.
@pytest.mark.parametrize("scheme", ["mx", "block", "bf16"])
@pytest.mark.parametrize("seed", SEEDS)
def test_numpy_matmul_equals_gemm_on_exact_mode_operands(scheme, seed):
    m, n, k = shape(seed)
    (a, sa, b, sb), da, db = exact_mode_operands(scheme, m, n, k, seed)
    c = numpy_gemm(da, db)
    oracle = mxgate.gemm(a, sa, b, sb, scheme=scheme)
    assert oracle.dtype == np.float32 and oracle.shape == (m, n)
    assert oracle.tobytes() == c.tobytes(), (scheme, m, n, k, seed)
    v = mxgate.check_gemm(a, sa, b, sb, c, scheme=scheme)
    assert v.passed and v.mismatches == 0 and v.first is None, v


# Guards against mxgate.dequantize disagreeing with the format definitions numpy applies above
# (the package's dequantize is what a Python adapter would call).
@pytest.mark.parametrize("seed", SEEDS)
def test_dequantize_equals_numpy_decoding(seed):
    m, n, k = shape(seed)
    (a, sa, _, _), da, _ = exact_mode_operands("mx", m, n, k, seed)
    assert mxgate.dequantize(a, sa, "e4m3fn", "ocp_mx").tobytes() == da.tobytes()
    (a, sa, _, _), da, _ = exact_mode_operands("block", m, n, k, seed)
    got = mxgate.dequantize(a, sa, "e4m3fn", "vllm_group_quant", scheme="act1x128")
    assert got.tobytes() == da.tobytes()


def general_operands(scheme, m, n, k, seed):
    """Normal data quantized by the reference (the producer of the operands, not under test),
    dequantized by numpy."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, k)) * 3).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    if scheme == "mx":
        a, sa = mxgate.quantize_mx(x, "e4m3fn", "ocp_mx")
        b, sb = mxgate.quantize_mx(w, "e4m3fn", "ocp_mx")
        da = numpy_e4m3fn(a) * expand(numpy_e8m0(sa), m, k, 1, 32)
        db = numpy_e4m3fn(b) * expand(numpy_e8m0(sb), n, k, 1, 32)
    else:
        a, sa = mxgate.quantize_block(x, "e4m3fn", "vllm_group_quant")
        b, sb = mxgate.quantize_block(w, "e4m3fn", "vllm_group_quant", scheme="w128x128")
        # One fp32 rounding per dequantized element: inside fp32_rn's two partial roundings.
        da = numpy_e4m3fn(a) * expand(sa, m, k, 1, 128)
        db = numpy_e4m3fn(b) * expand(sb, n, k, 128, 128)
    return (a, sa, b, sb), da, db


# Guards against bound mode failing a correct fp32 implementation on general data (a bound
# that is too tight, or computed for the wrong scale blocks).
@pytest.mark.parametrize("scheme", ["mx", "block"])
@pytest.mark.parametrize("seed", SEEDS)
def test_numpy_matmul_passes_bound_mode(scheme, seed):
    m, n, _ = shape(seed)
    for k, model in ((1 + seed * 25, {"accumulator": "fp32_rn"}),
                     (100 + seed * 80, {"acc_bits": 24, "block_k": 0})):
        ops, da, db = general_operands(scheme, m, n, k, seed)
        c = numpy_gemm(da, db)
        v = mxgate.check_gemm(*ops, c, scheme=scheme, mode="bound", **model)
        assert v.passed, (k, model, str(v))


# Guards against bound mode passing a wrong implementation: numpy with the trailing K block
# dropped (the shape of Z9, docs/bug_classes.md §2) must fail, and the verdict must locate a real element.
@pytest.mark.parametrize("scheme", ["mx", "block"])
def test_numpy_matmul_without_trailing_block_fails(scheme):
    m, n, k = 4, 6, 200
    ops, da, db = general_operands(scheme, m, n, k, 9)
    kept = (k - 1) // (32 if scheme == "mx" else 128) * (32 if scheme == "mx" else 128)
    c = numpy_gemm(da[:, :kept], db[:, :kept])
    v = mxgate.check_gemm(*ops, c, scheme=scheme, mode="bound", accumulator="fp32_rn")
    assert not v.passed and v.mismatches > 0, v
    assert v.worst is not None and 0 <= v.worst.row < m and 0 <= v.worst.col < n
    assert v.worst.actual == float(c[v.worst.row, v.worst.col])
    assert v.worst.excess > 0 and v.worst.bound is not None
    exact = mxgate.check_gemm(*ops, c, scheme=scheme)
    assert not exact.passed and exact.mismatches == v.mismatches == m * n, (exact, v)
