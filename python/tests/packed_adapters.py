"""Adapters for test_packed_scales.py (in process and through the worker, py:packed_adapters:NAME):
numpy's gemm_mx recording the leading dimension of every scale grid it is handed."""

import mxgate
from mxgate.adapters.numpy import NumpyAdapter

_NUMPY = NumpyAdapter()

SEEN = []  # (a_scale ld, a_scale cols) per call, in process


class _Recording(mxgate.Adapter):
    PACKED = False

    def __init__(self):
        def run(a, a_scales, b, b_scales, call):
            t = call.tensor("a_scale")
            SEEN.append((t.ld or t.cols, t.cols))
            return _NUMPY.gemm_mx(a, a_scales, b, b_scales, call)

        super().__init__(ops=[mxgate.Op(
            "gemm_mx", run, "gemm_mx", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",),
            out_dtypes=("f32",), a_scale_layouts=("row_major",), b_scale_layouts=("row_major",),
            convention="ocp_mx", accumulator="fp32_rn", packed_scales=self.PACKED)])


class Views(_Recording):
    name = "packed_views"
    description = "numpy gemm_mx taking scale views"


class Packed(_Recording):
    name = "packed_only"
    description = "numpy gemm_mx declaring packed scale grids only"
    PACKED = True
