"""The numpy adapter with one planted fault each, the bugs of docs/bug_classes.md done in
numpy; each adapter's description starts "planted fault:" (`mxgate zoo --impl` must detect it).
python/tests/test_adapters_numpy.py asserts the property that catches each, and that the shrunk
case is small. docs/python.md §11.2.
"""

import numpy as np

from ..adapter import Adapter, op
from .numpy import NumpyAdapter, decode, expand, finish

_GEMM_BLOCK = dict(a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
                   a_block=(1, 128), b_block=(128, 128), accumulator="fp32_rn")


def _transposed(scales):
    """A (rows, cols) scale grid read as if it were stored (cols, rows): the fault of two."""
    rows, cols = scales.shape
    return np.ascontiguousarray(scales).reshape(cols, rows).T


def _gemm_block(a, a_scales, b, b_scales):
    """The e4m3fn 1x128 x 128x128 GEMM of _GEMM_BLOCK, fp32 out."""
    ad = decode(a, "e4m3fn") * expand(a_scales, a.shape[0], a.shape[1], 1, 128)
    bd = decode(b, "e4m3fn") * expand(b_scales, b.shape[0], b.shape[1], 128, 128)
    return finish(ad @ bd.T, "f32")


class ScaleTransposed(Adapter):
    name = "numpy_faulty_scale_transposed"
    description = "planted fault: B's 128x128 scale grid read transposed (ceil(K/128) x ceil(N/128))"

    @op("gemm_block", **_GEMM_BLOCK)
    def gemm_block_deepseek(self, a, a_scales, b, b_scales):
        return _gemm_block(a, a_scales, b, _transposed(b_scales))  # the fault


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
        return _gemm_block(a, _transposed(a_scales), b, b_scales)  # the fault
