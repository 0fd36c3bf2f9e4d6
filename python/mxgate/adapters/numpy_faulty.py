"""The numpy adapter with one planted fault each, the bugs of docs/bug_classes.md done in
numpy; each adapter's description starts "planted fault:" (`mxgate zoo --impl` must detect it).
python/tests/test_adapters_numpy.py asserts the property that catches each, and that the shrunk
case is small. docs/python.md §11.2.
"""

import numpy as np

from ..adapter import Adapter, op
from .numpy import (E8M0, NumpyAdapter, NumpyFp4Adapter, NumpyMxint8Adapter, decode,
                    e8m0_ceil_satfinite, expand, finish, input_values, quantize_te_2d,
                    scale_and_cast, tile_view, _E4M3_RCP_MAX)

_GEMM_BLOCK = dict(a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
                   a_block=(1, 128), b_block=(128, 128), accumulator="fp32_rn")


class ScaleTransposed(Adapter):
    name = "numpy_faulty_scale_transposed"
    description = "planted fault: B's 128x128 scale grid read transposed (ceil(K/128) x ceil(N/128))"

    @op("gemm_block", **_GEMM_BLOCK)
    def gemm_block_deepseek(self, a, a_scales, b, b_scales):
        nb, kb = b_scales.shape
        wrong = np.ascontiguousarray(b_scales).reshape(kb, nb).T  # the fault
        bd = decode(b, "e4m3fn") * expand(wrong, b.shape[0], b.shape[1], 128, 128)
        ad = decode(a, "e4m3fn") * expand(a_scales, a.shape[0], a.shape[1], 1, 128)
        return finish(ad @ bd.T, "f32")


class DropTrailingK(NumpyAdapter):
    name = "numpy_faulty_drop_trailing_k"
    description = "planted fault: a partial last 128-block of K dropped (K walked in whole blocks)"

    def __init__(self):
        super().__init__()
        self._ops = [o for o in self._ops if o.name == "gemm_mx"]

    def mx_operand(self, codes, scales, dtype):
        full = super().mx_operand(codes, scales, dtype)
        k = codes.shape[1]
        keep = k - k % 128
        full[:, keep:] = 0  # the fault
        return full


class _E8m0NanDecoded(NumpyAdapter):
    """NumpyAdapter reduced to its MX ops (gemm_mx, dequantize), the E8M0 byte 0xFF decoded as
    `nan_as` instead of NaN (OCP MX: 0xFF is NaN); every other byte as the spec says."""

    nan_as = np.float32(0)

    def __init__(self):
        super().__init__()
        self._ops = [o for o in self._ops if o.name in ("gemm_mx", "dequantize")]

    def mx_operand(self, codes, scales, dtype):
        rows, k = codes.shape
        kb = scales.shape[1]
        table = E8M0.copy()
        table[0xFF] = self.nan_as  # the fault
        s = np.empty((rows, kb, 32), np.float32)
        s[...] = table.take(scales)[:, :, None]
        return decode(codes, dtype) * s.reshape(rows, 32 * kb)[:, :k]


class E8m0NanAsInf(_E8m0NanDecoded):
    name = "numpy_faulty_e8m0_nan_as_inf"
    description = ("planted fault: e8m0 scale byte 0xFF decoded as +Inf, not NaN "
                   "(llvm/llvm-project#214919)")
    nan_as = np.float32(np.inf)


class E8m0NanAsMax(_E8m0NanDecoded):
    name = "numpy_faulty_e8m0_nan_as_max"
    description = ("planted fault: e8m0 scale byte 0xFF decoded as 2^127 (the largest finite), "
                   "not NaN")
    nan_as = np.float32(2.0**127)


class ShiftE8m0(Adapter):
    name = "numpy_faulty_shift_e8m0"
    description = "planted fault: e8m0 upcast by byte << 23 (0x00 -> 0, 0xFF -> Inf)"

    @op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        return (e8m0.astype(np.uint32) << 23).view(np.float32)  # the fault


class ActScalesColMajor(Adapter):
    name = "numpy_faulty_act_scales_col_major"
    description = "planted fault: row-major 1x128 activation scales read as column-major"

    @op("gemm_block", a_scale_layouts=("row_major",), **_GEMM_BLOCK)
    def gemm_block_deepseek(self, a, a_scales, b, b_scales):
        m, kb = a_scales.shape
        wrong = np.ascontiguousarray(a_scales).reshape(kb, m).T  # the fault
        ad = decode(a, "e4m3fn") * expand(wrong, a.shape[0], a.shape[1], 1, 128)
        bd = decode(b, "e4m3fn") * expand(b_scales, b.shape[0], b.shape[1], 128, 128)
        return finish(ad @ bd.T, "f32")


class _OneFp4Op(NumpyFp4Adapter):
    """NumpyFp4Adapter reduced to its op named `only` (the one the fault is planted in)."""

    only = ""

    def __init__(self):
        super().__init__()
        self._ops = [o for o in self._ops if o.name == self.only]


class Fp4NibbleSwapped(_OneFp4Op):
    name = "numpy_faulty_fp4_nibble_swapped"
    description = "planted fault: packed E2M1 element 2i read from the high nibble, 2i+1 the low"
    only = "dequantize_mxfp4"

    def mx_operand(self, codes, scales, dtype, cols):
        swapped = ((codes >> 4) | (codes << 4)).astype(np.uint8)  # the fault
        return super().mx_operand(swapped, scales, dtype, cols)


class Nvfp4GlobalTwice(_OneFp4Op):
    name = "numpy_faulty_nvfp4_global_twice"
    description = "planted fault: an NVFP4 GEMM multiplying by A's global scale twice (not B's)"
    only = "gemm_nvfp4"

    def alpha(self, a_global, b_global, call):
        return super().alpha(a_global, a_global, call)  # the fault


class _OneMxint8Op(NumpyMxint8Adapter):
    """NumpyMxint8Adapter reduced to its op named `only` (the one the fault is planted in)."""

    only = ""

    def __init__(self):
        super().__init__()
        self._ops = [o for o in self._ops if o.name == self.only]


class Mxint8UnsignedDecode(_OneMxint8Op):
    name = "numpy_faulty_mxint8_unsigned"
    description = "planted fault: MXINT8 codes decoded as unsigned (0x80 read as +2, not -2)"
    only = "dequantize_mxint8"

    def values(self, codes):
        return (np.asarray(codes, dtype=np.uint8).astype(np.float32) / 64).astype(np.float32)


class Mxint8ScaleOffByOne(_OneMxint8Op):
    name = "numpy_faulty_mxint8_scale_plus_one"
    description = "planted fault: MXINT8 shared exponent one too large (emax_elem taken as -1)"
    only = "quantize_mxint8"

    def scale_bytes(self, x):
        b = super().scale_bytes(x).astype(np.int64)
        return np.where(b < 254, b + 1, b).astype(np.uint8)  # the fault


_QUANTIZE_2D = dict(a_dtypes=("f32", "bf16"), out_dtypes=("e4m3fn",), a_block=(32, 32),
                    convention="transformer_engine")


class Quant2dColumnAmax(Adapter):
    name = "numpy_faulty_quant_2d_column_amax"
    description = ("planted fault: 2D MXFP8 amax over 32x1 (one column of the tile), not 32x32; "
                   "the grid keeps each tile's first column's scale")

    @op("quantize_mx", **_QUANTIZE_2D)
    def quantize_mx_2d(self, x, call):
        x = input_values(x, call)
        rows, cols = x.shape
        mag = np.where(np.isnan(x), np.float32(0), np.abs(x)).astype(np.float32)
        t = tile_view(mag, rows, cols, np.float32(0))
        sr, _, sc, _ = t.shape
        column = e8m0_ceil_satfinite(t.max(axis=1).reshape(sr, sc * 32) * _E4M3_RCP_MAX)  # fault
        per_element = np.repeat(column, 32, 0)[:rows, :cols]
        codes, _ = scale_and_cast(x, column, per_element)
        return codes, np.ascontiguousarray(column[:, ::32])


class Quant2dGridTransposed(Adapter):
    name = "numpy_faulty_quant_2d_grid_transposed"
    description = ("planted fault: 2D MXFP8 scale grid written transposed (ceil(K/32) x "
                   "ceil(M/32) bytes in the ceil(M/32) x ceil(K/32) buffer)")

    @op("quantize_mx", **_QUANTIZE_2D)
    def quantize_mx_2d(self, x, call):
        codes, scales = quantize_te_2d(input_values(x, call), lambda t: t.max(axis=(1, 3)))
        return codes, np.ascontiguousarray(scales.T).reshape(scales.shape)  # the fault
