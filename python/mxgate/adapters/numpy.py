"""A real implementation in numpy: float32 GEMM of operands numpy dequantizes itself, written
from the format specifications (OCP MX v1.0 for e4m3fn / e5m2 / e8m0, docs/formats.md), sharing
no code with mxgate's reference.

Claims: upcast_e8m0 and dequantize follow ocp_mx (2^(e-127), 0xFF NaN; one fp32 multiply per
element, bf16 output rounded once from that product). The GEMMs declare accumulator fp32_rn and
no summation order: NumpyAdapter's sum over K is numpy's einsum (its own fp32 sum-of-products
loops, several partial sums at once: BLAS-free, and several times faster than the reference BLAS
a distribution's numpy may link), the FP4 adapter's numpy's matmul (its BLAS); each sums all of
K in an order of its own, with or without FMA, so the true claim is the fp32 bound that holds for every order (one partial over K,
at most three roundings per product: a*sa, b*sb, the product; impl/accumulator.h). It is NOT
inside fp32_rn with partials of 128 (the block-128 model of check-gemm's default) for K > 128.
NumpyFp4Adapter: the same for FP4 (packed E2M1 with E8M0 1x32 scales: MXFP4, MXFP8 x MXFP4;
with E4M3 1x16 scales and global scales: NVFP4), from OCP MX v1.0 §5.3.3 and the NVFP4 rules of
include/mxgate/plugin.h. NumpyMxint8Adapter: MXINT8 (OCP MX v1.0 §5.3, §6.3) quantize and
dequantize, claiming ocp_mx (docs/formats.md §1.5). docs/python.md §11.1.
NumpyAdapter.quantize_mx_2d: TransformerEngine's 2D MXFP8 weight quantization (one E8M0 scale per
32 x 32 tile, convention transformer_engine), from TE's kernel source; docs/layouts.md §9.
"""

import numpy as np

from ..adapter import Adapter, Dim, op, unpack_e2m1


def _fp8_table(exp_bits, man_bits, bias, fn):
    """Values of all 256 codes of an FP8 format from its bit fields (fn: e4m3fn's one NaN
    pattern per sign and no Inf; otherwise IEEE-like: exponent all ones is Inf / NaN)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    normal = (1.0 + m / (1 << man_bits)) * np.exp2(e.astype(float) - bias)
    sub = (m / (1 << man_bits)) * np.exp2(1.0 - bias)
    v = sign * np.where(e == 0, sub, normal)
    top = (1 << exp_bits) - 1
    if fn:
        v = np.where((e == top) & (m == (1 << man_bits) - 1), np.nan, v)
    else:
        v = np.where(e == top, np.where(m == 0, sign * np.inf, np.nan), v)
    return v.astype(np.float32)


def _fp4_fp6_table(exp_bits, man_bits, bias):
    """Values of every code of an OCP MX FP4 / FP6 format (v1.0 §5.3.3: no Inf, no NaN; the
    sign bit above exponent and mantissa), indexed by code."""
    width = 1 + exp_bits + man_bits
    codes = np.arange(1 << width)
    sign = np.where(codes >> (width - 1), -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = codes & ((1 << man_bits) - 1)
    normal = (1.0 + m / (1 << man_bits)) * np.exp2(e.astype(float) - bias)
    sub = (m / (1 << man_bits)) * np.exp2(1.0 - bias)
    return (sign * np.where(e == 0, sub, normal)).astype(np.float32)


def _mxint8_table():
    """OCP MX v1.0 §5.3 INT8 (MXINT8's element): the byte read as two's complement, times 2^-6
    (no Inf, no NaN; 0x80 is -2)."""
    return (np.arange(256, dtype=np.uint8).view(np.int8).astype(np.float64) / 64.0).astype(
        np.float32)


E4M3FN = _fp8_table(4, 3, 7, True)
E5M2 = _fp8_table(5, 2, 15, False)
E2M1 = _fp4_fp6_table(2, 1, 1)  # 0 0.5 1 1.5 2 3 4 6
E2M3 = _fp4_fp6_table(2, 3, 1)  # max 7.5
E3M2 = _fp4_fp6_table(3, 2, 3)  # max 28
MXINT8 = _mxint8_table()  # -2 ... 127/64 in steps of 1/64
_TABLES = {"e4m3fn": E4M3FN, "e5m2": E5M2, "e2m1": E2M1, "e2m3": E2M3, "e3m2": E3M2,
           "mxint8": MXINT8}


def e8m0_values(b):
    """OCP E8M0: 2^(b - 127), 0xFF is NaN (exact in fp32, 2^-127 a subnormal)."""
    b = np.asarray(b)
    with np.errstate(over="ignore"):  # 0xFF: 2^128 overflows, then becomes NaN
        v = np.exp2(b.astype(np.float64) - 127.0).astype(np.float32)
    return np.where(b == 0xFF, np.float32(np.nan), v).astype(np.float32)


# Every E8M0 code's value (e8m0_values of 0..255), for the ops' per-call lookups.
E8M0 = e8m0_values(np.arange(256))


def bf16_values(bits):
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def to_bf16_bits(x):
    """fp32 -> bf16 bits, round to nearest even, NaN kept quiet."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u.astype(np.uint64) + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def expand(scales, rows, cols, block_rows, block_cols):
    """A scale grid spread over the rows x cols elements it scales (block 0: the whole dim)."""
    s = np.asarray(scales, dtype=np.float32)
    if block_rows == 0:
        s = np.repeat(s, rows, axis=0)
    else:
        s = np.repeat(s, block_rows, axis=0)
    if block_cols == 0:
        s = np.repeat(s, cols, axis=1)
    else:
        s = np.repeat(s, block_cols, axis=1)
    return s[:rows, :cols]


def decode(codes, dtype, cols=None):
    """Values of codes of `dtype`; packed e2m1 bytes (rows, ceil(cols / 2)) are unpacked first
    (cols: the logical column count, default every nibble)."""
    codes = np.asarray(codes)
    table = _TABLES[dtype]
    if dtype == "e2m1":
        codes = unpack_e2m1(codes, 2 * codes.shape[-1] if cols is None else cols)
    elif len(table) != 256 or codes.dtype != np.uint8:
        codes = codes & (len(table) - 1)  # FP6: the low 6 bits of the byte
    return table.take(codes)


def matmul_nt(x, y):
    """x @ y.T in float32 (x: M x K, y: N x K), summed over K by numpy's einsum in fp32."""
    return np.einsum("ik,jk->ij", x, y)


def finish(c, out_dtype):
    c = np.asarray(c, dtype=np.float32)
    return to_bf16_bits(c) if out_dtype == "bf16" else c


# ---- 2D MXFP8 quantization (one E8M0 scale per 32 x 32 tile; docs/layouts.md §9) ----------------
# TransformerEngine's rule, from its source (quantize_mxfp8.cuh with kIs2DBlockScaling): the tile's
# amax by fmaxf (NaN skipped), the scale byte the ceil of fl32(amax * fl32(1/448)) on its exponent
# field, saturating at 254, each element fl32(x * 2^(127 - byte)) cast to E4M3 with satfinite RNE.

_E4M3_POSITIVE = E4M3FN[:0x7F].astype(np.float64)  # codes 0x00..0x7E, increasing
_E4M3_RCP_MAX = np.float32(1) / np.float32(448)  # fl32(1 / 448), TE's max_norm_rcp


def encode_e4m3fn_satfinite(v):
    """fp32 -> E4M3FN codes: round to nearest, ties to the even code, magnitudes past 448 to
    0x7E (cvt.rn.satfinite), NaN to 0x7F, the sign bit kept (-0.0 -> 0x80)."""
    v = np.asarray(v, dtype=np.float32)
    a = np.abs(v).astype(np.float64)
    idx = np.searchsorted(_E4M3_POSITIVE, np.where(np.isnan(a), 0.0, a))
    hi = np.minimum(idx, 0x7E)
    lo = np.maximum(idx - 1, 0)
    d_lo = a - _E4M3_POSITIVE[lo]
    d_hi = _E4M3_POSITIVE[hi] - a
    nearest = np.where((d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0)), hi, lo)
    code = np.where(idx == 0, 0, np.where(idx > 0x7E, 0x7E, nearest)).astype(np.uint8)
    code = np.where(np.signbit(v), code | 0x80, code).astype(np.uint8)
    return np.where(np.isnan(v), np.uint8(0x7F), code).astype(np.uint8)


def e8m0_ceil_satfinite(q):
    """TE's float_to_e8m0 of non-negative fp32 q: ceil on the exponent field (a subnormal above
    2^-127 becomes 2^-126), Inf and everything past 2^127 saturating at 254."""
    bits = np.ascontiguousarray(q, dtype=np.float32).view(np.uint32)
    exp = ((bits >> 23) & 0xFF).astype(np.int64)
    man = (bits & 0x7FFFFF).astype(np.int64)
    e = np.where(exp == 0, (man > 0x400000).astype(np.int64), exp + (man != 0))
    return np.where(exp == 0xFF, 254, np.minimum(e, 254)).astype(np.uint8)


def tile_view(a, rows, cols, fill):
    """a (rows, cols) padded with `fill` to whole 32 x 32 tiles, viewed (tile rows, 32, tile
    cols, 32)."""
    sr, sc = -(-rows // 32), -(-cols // 32)
    p = np.full((sr * 32, sc * 32), fill, dtype=a.dtype)
    p[:rows, :cols] = a
    return p.reshape(sr, 32, sc, 32)


def quantize_te_2d(x, amax_of_tiles):
    """Codes and the tile grid of x (float32 rows x cols); amax_of_tiles maps the |x| tiles
    (tile rows, 32, tile cols, 32), NaN read as 0, to one amax per (tile row, tile col)."""
    rows, cols = x.shape
    mag = np.where(np.isnan(x), np.float32(0), np.abs(x)).astype(np.float32)
    scales = e8m0_ceil_satfinite(amax_of_tiles(tile_view(mag, rows, cols, np.float32(0))) *
                                 _E4M3_RCP_MAX)
    return scale_and_cast(x, scales, np.repeat(np.repeat(scales, 32, 0), 32, 1)[:rows, :cols])


def scale_and_cast(x, scales, per_element):
    """x times each element's 2^(127 - byte) (exact power, fp32 product), cast to E4M3."""
    rcp = np.ldexp(np.float32(1), (127 - per_element.astype(np.int32))).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scaled = (x * rcp).astype(np.float32)
    return encode_e4m3fn_satfinite(scaled), scales


def input_values(x, call):
    """The float32 values of a quantizer's input (fp32, or bf16 bits)."""
    if call.tensor("a").dtype == "bf16":
        return bf16_values(x)
    return np.asarray(x, dtype=np.float32)


class NumpyAdapter(Adapter):
    name = "numpy"
    description = "numpy float32 GEMM (einsum) of operands dequantized from the format specifications"

    def mx_operand(self, codes, scales, dtype):
        """codes x their E8M0 scales (1x32 blocks), one fp32 multiply each (a new array). Callers
        hold np.errstate(over="ignore", invalid="ignore"): fp32 overflow is Inf, as specified."""
        rows, k = codes.shape
        kb = scales.shape[1]
        s = np.empty((rows, kb, 32), np.float32)
        s[...] = E8M0.take(scales)[:, :, None]  # each block's scale over its 32 columns
        return decode(codes, dtype) * s.reshape(rows, 32 * kb)[:, :k]

    def block_operand(self, codes, scales, dtype, block):
        return decode(codes, dtype) * expand(scales, codes.shape[0], codes.shape[1], *block)

    @op("quantize_mx", a_dtypes=("f32", "bf16"), out_dtypes=("e4m3fn",), a_block=(32, 32),
        convention="transformer_engine",
        notes="2D MXFP8 (TE enable_2d_quantization): one e8m0 scale per 32 x 32 tile, grid "
              "ceil(M/32) x ceil(K/32) row-major; TE's RCEIL and satfinite E4M3")
    def quantize_mx_2d(self, x, call):
        return quantize_te_2d(input_values(x, call), lambda t: t.max(axis=(1, 3)))

    @op("gemm_mx", a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"),
        out_dtypes=("f32", "bf16"), a_scale_layouts=("row_major", "col_major"),
        b_scale_layouts=("row_major", "col_major"), convention="ocp_mx", accumulator="fp32_rn",
        notes="dequantize (OCP e8m0), numpy float32 einsum: fp32, any order over K")
    def gemm_mx(self, a, a_scales, b, b_scales, call):
        da, db = call.tensor("a").dtype, call.tensor("b").dtype
        with np.errstate(over="ignore", invalid="ignore"):
            c = matmul_nt(self.mx_operand(a, a_scales, da), self.mx_operand(b, b_scales, db))
        return finish(c, call.tensor("out").dtype)

    def _gemm_block(self, a, a_scales, b, b_scales, call, a_block, b_block):
        da, db = call.tensor("a").dtype, call.tensor("b").dtype
        c = matmul_nt(self.block_operand(a, a_scales, da, a_block),
                      self.block_operand(b, b_scales, db, b_block))
        return finish(c, call.tensor("out").dtype)

    @op("gemm_block", a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"),
        out_dtypes=("f32", "bf16"), a_scale_layouts=("row_major", "col_major", "tma_col_major"),
        b_scale_layouts=("row_major",), a_block=(1, 128), b_block=(128, 128),
        b_scale_ld_align=4, accumulator="fp32_rn",
        notes="1x128 x 128x128 fp32 scales (DeepSeek); Bs rows padded to 4")
    def gemm_block_deepseek(self, a, a_scales, b, b_scales, call):
        return self._gemm_block(a, a_scales, b, b_scales, call, (1, 128), (128, 128))

    @op("gemm_block", a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"),
        out_dtypes=("f32", "bf16"), a_block=(1, 32), b_block=(32, 32), accumulator="fp32_rn",
        notes="1x32 activations x a weight of 32x32 tiles (2D MXFP8, docs/layouts.md §9), the "
              "E8M0 scales given as their fp32 values")
    def gemm_block_2d(self, a, a_scales, b, b_scales, call):
        return self._gemm_block(a, a_scales, b, b_scales, call, (1, 32), (32, 32))

    @op("gemm_block", a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"),
        out_dtypes=("f32", "bf16"), a_block=(0, 0), b_block=(0, 0), accumulator="fp32_rn",
        notes="one fp32 scale per tensor")
    def gemm_block_tensor(self, a, a_scales, b, b_scales, call):
        return self._gemm_block(a, a_scales, b, b_scales, call, (0, 0), (0, 0))

    @op("gemm_block", a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"),
        out_dtypes=("f32", "bf16"), a_scale_layouts=("row_major", "col_major"), a_block=(1, 0),
        b_block=(1, 0), accumulator="fp32_rn", notes="one fp32 scale per row of A and of B")
    def gemm_block_rowwise(self, a, a_scales, b, b_scales, call):
        return self._gemm_block(a, a_scales, b, b_scales, call, (1, 0), (1, 0))

    @op("gemm_bf16", out_dtypes=("f32", "bf16"), accumulator="fp32_rn",
        notes="bf16 -> fp32 exactly, numpy float32 einsum")
    def gemm_bf16(self, a, b, out_dtype):
        return finish(matmul_nt(bf16_values(a), bf16_values(b)), out_dtype)

    @op("upcast_e8m0", convention="ocp_mx", notes="2^(e - 127), 0xFF -> NaN")
    def upcast_e8m0(self, e8m0):
        return e8m0_values(e8m0)

    @op("dequantize", a_dtypes=("e4m3fn", "e5m2"), out_dtypes=("f32", "bf16"),
        convention="ocp_mx", notes="one fp32 multiply per element; bf16 rounded once from it")
    def dequantize(self, codes, scales, call):
        with np.errstate(over="ignore", invalid="ignore"):
            y = self.mx_operand(codes, scales, call.tensor("a").dtype)
        return finish(y, call.tensor("out").dtype)


# The GEMM shapes of the speed figures (docs/python.md §12): M, N, K <= 256, and <= 64.
class NumpySmall(NumpyAdapter):
    name = "numpy_small"
    description = "NumpyAdapter's gemm_mx limited to M, N, K <= 256 (speed figures)"
    limit = 256

    def __init__(self):
        super().__init__()
        d = Dim(max=self.limit)
        self._ops = [o.with_contract(m=d, n=d, k=d) for o in self._ops if o.name == "gemm_mx"]


class NumpyTiny(NumpySmall):
    name = "numpy_tiny"
    description = "NumpyAdapter's gemm_mx limited to M, N, K <= 64 (speed figures)"
    limit = 64


def global_value(g, dtype):
    """An NVFP4 global scale argument ((1,) float32, or bf16 bits) as a float32 scalar."""
    g = np.asarray(g).reshape(-1)
    return np.float32(bf16_values(g)[0] if dtype == "bf16" else g.astype(np.float32)[0])


def nvfp4_alpha(a_global, b_global, call):
    """The NVFP4 GEMM epilogue's fl32(a_global * b_global) (Inf past FLT_MAX, as specified)."""
    with np.errstate(over="ignore"):
        return np.float32(global_value(a_global, call.tensor("a_global").dtype) *
                          global_value(b_global, call.tensor("b_global").dtype))


class NumpyFp4Adapter(Adapter):
    """MXFP4 / NVFP4 dequantization and GEMMs: numpy float32 from the format definitions."""

    name = "numpy_fp4"
    description = "numpy MXFP4 / NVFP4 dequantize and GEMM from the format definitions"

    def mx_operand(self, codes, scales, dtype, cols):
        with np.errstate(over="ignore", invalid="ignore"):  # fp32 overflow is Inf, as specified
            return decode(codes, dtype, cols) * expand(e8m0_values(scales), codes.shape[0],
                                                       cols, 1, 32)

    def nv_operand(self, codes, scales, cols):
        """code * E4M3 scale: exact in fp32 (at most 2 + 4 significant bits, |v| <= 2688)."""
        return decode(codes, "e2m1", cols) * expand(E4M3FN[np.asarray(scales)], codes.shape[0],
                                                    cols, 1, 16)

    @op("dequantize", a_dtypes=("e2m1",), out_dtypes=("f32", "bf16"), convention="ocp_mx",
        notes="packed E2M1 x e8m0 (1x32): one fp32 multiply per element; bf16 rounded once")
    def dequantize_mxfp4(self, codes, scales, call):
        y = self.mx_operand(codes, scales, "e2m1", call.k)
        return finish(y, call.tensor("out").dtype)

    @op("dequantize_nvfp4", out_dtypes=("f32", "bf16"), global_dtypes=("f32", "bf16"),
        convention="te_nvfp4_ref",
        notes="fl32(fl32(code * E4M3 scale) * global); bf16 rounded once from that")
    def dequantize_nvfp4(self, codes, scales, a_global, call):
        g = global_value(a_global, call.tensor("a_global").dtype)
        # A NaN scale code gives NaN, a product past FLT_MAX Inf: as specified.
        with np.errstate(over="ignore", invalid="ignore"):
            y = self.nv_operand(codes, scales, call.k) * g
        return finish(y, call.tensor("out").dtype)

    @op("gemm_mx", a_dtypes=("e2m1", "e4m3fn"), b_dtypes=("e2m1",), out_dtypes=("f32", "bf16"),
        convention="ocp_mx", accumulator="fp32_rn",
        notes="MXFP4 x MXFP4 and MXFP8 x MXFP4: dequantize (OCP e8m0), numpy float32 matmul")
    def gemm_mxfp4(self, a, a_scales, b, b_scales, call):
        da = call.tensor("a").dtype
        c = self.mx_operand(a, a_scales, da, call.k) @ \
            self.mx_operand(b, b_scales, "e2m1", call.k).T
        return finish(c, call.tensor("out").dtype)

    def alpha(self, a_global, b_global, call):
        return nvfp4_alpha(a_global, b_global, call)

    @op("gemm_nvfp4", out_dtypes=("f32", "bf16"), global_dtypes=("f32", "bf16"),
        accumulator="fp32_rn",
        notes="numpy float32 matmul of code * E4M3 scale; C = fl32(fl32(ga * gb) * acc)")
    def gemm_nvfp4(self, a, a_scales, b, b_scales, a_global, b_global, call):
        alpha = self.alpha(a_global, b_global, call)
        with np.errstate(over="ignore", invalid="ignore"):
            acc = self.nv_operand(a, a_scales, call.k) @ self.nv_operand(b, b_scales, call.k).T
            c = alpha * acc
        return finish(c, call.tensor("out").dtype)


def mx_shared_exponent(amax):
    """OCP MX v1.0 §6.3 with emax_elem 0 (INT8): floor(log2 amax) of each float32 amax, read off
    its bits (the exponent field; a subnormal's leading bit), clamped to [-127, 127]; amax 0 gives
    -127 (byte 0). NaN / Inf amax are the caller's."""
    bits = np.ascontiguousarray(amax, dtype=np.float32).view(np.uint32) & 0x7FFFFFFF
    field = (bits >> 23).astype(np.int64)
    mant = (bits & 0x7FFFFF).astype(np.int64)
    lead = np.frexp(mant.astype(np.float64))[1] - 1  # the leading bit's place (frexp is exact)
    e = np.where(field != 0, field - 127, lead - 149)
    return np.clip(np.where(bits == 0, -127, e), -127, 127)


class NumpyMxint8Adapter(Adapter):
    """MXINT8 (OCP MX v1.0 §5.3 INT8 elements with an implicit 2^-6, one E8M0 scale per 32):
    quantize by the spec's rule and dequantize, written from the spec; claims ocp_mx."""

    name = "numpy_mxint8"
    description = "numpy MXINT8 quantize (OCP §6.3 FLOOR, nearest even, +-127) and dequantize"

    def scale_bytes(self, x):
        """Each 1x32 block's E8M0 byte (x: rows x cols float32, the last block short)."""
        rows, cols = x.shape
        kb = -(-cols // 32)
        padded = np.zeros((rows, kb * 32), np.float32)
        padded[:, :cols] = x
        blocks = padded.reshape(rows, kb, 32)
        bad = ~np.isfinite(blocks).all(axis=2)  # NaN or Inf in a block: scale NaN (0xFF)
        amax = np.abs(np.where(np.isfinite(blocks), blocks, 0)).max(axis=2)
        return np.where(bad, 0xFF, mx_shared_exponent(amax) + 127).astype(np.uint8)

    def elements(self, x, scales):
        """x * 2^(127 - byte) in fp32, then |v| * 64 rounded half to even and clamped to 127, the
        sign put back in two's complement; a 0xFF block's elements are 0 (named by ocp_mx)."""
        rows, cols = x.shape
        s = np.repeat(scales, 32, axis=1)[:, :cols].astype(np.int64)
        rcp = np.ldexp(np.float32(1.0), (127 - np.minimum(s, 254)).astype(np.int32))
        with np.errstate(over="ignore", invalid="ignore"):
            v = (x * rcp.astype(np.float32)).astype(np.float32)
            n = np.minimum(np.rint(np.abs(v.astype(np.float64)) * 64.0), 127.0)
        n = np.where(np.isfinite(n), n, 0).astype(np.int64)
        code = np.where(np.signbit(v), -n, n)
        code = np.where(s == 0xFF, 0, code)
        return (code & 0xFF).astype(np.uint8)

    @op("quantize_mx", out_dtypes=("mxint8",), convention="ocp_mx",
        notes="OCP §6.3: shared exponent floor(log2 amax) - 0 on the bits, elements RNE, +-127")
    def quantize_mxint8(self, x):
        x = np.asarray(x, dtype=np.float32)
        scales = self.scale_bytes(x)
        return self.elements(x, scales), scales

    def values(self, codes):
        return MXINT8.take(np.asarray(codes, dtype=np.uint8))

    @op("dequantize", a_dtypes=("mxint8",), out_dtypes=("f32", "bf16"), convention="ocp_mx",
        notes="code / 64 times its e8m0 scale: one fp32 multiply per element; bf16 once from it")
    def dequantize_mxint8(self, codes, scales, call):
        codes = np.asarray(codes)
        with np.errstate(over="ignore", invalid="ignore"):
            y = self.values(codes) * expand(E8M0.take(scales), codes.shape[0], codes.shape[1], 1,
                                            32)
        return finish(y, call.tensor("out").dtype)
