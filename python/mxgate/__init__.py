"""mxgate: the bit-exact reference for MXFP8 / e8m0 quantization and block-scaled FP8 GEMM, and
for MXFP4 / MXFP6 / NVFP4 (docs/fp4.md), as numpy functions (docs/python.md).

    import mxgate
    codes = mxgate.encode([448.0, 464.0], "e4m3fn", "torch_2_11")
    v = mxgate.check_gemm(a, a_scales, b, b_scales, c, scheme="mx")
    assert v.ok, v

The functions run the same library code as the `mxgate` CLI verbs (libmxgate.so through
ctypes: any CPython 3, numpy 1.24 or 2.x), with the same options and error texts.
"""

from ._native import library_path
from .adapter import Adapter, AdapterError, Contract, Dim, Op, Unavailable, Unsupported, contract, op
from .check import CheckResult, Location, Results, check, properties
from .accumulator import Accumulator
from .reference import (
    accumulators,
    check_gemm,
    conventions,
    decode,
    dequantize,
    encode,
    formats,
    gemm,
    quantize,
    quantize_block,
    quantize_mx,
    quantize_mxfp4,
    quantize_nvfp4,
)
from .verdict import NAN_ULP, Element, Verdict

__version__ = "0.1.0"

__all__ = [
    "NAN_ULP",
    "Accumulator",
    "Adapter",
    "AdapterError",
    "CheckResult",
    "Contract",
    "Dim",
    "Location",
    "Op",
    "Results",
    "Unavailable",
    "Unsupported",
    "check",
    "contract",
    "op",
    "properties",
    "Element",
    "Verdict",
    "accumulators",
    "check_gemm",
    "conventions",
    "decode",
    "dequantize",
    "encode",
    "formats",
    "gemm",
    "library_path",
    "quantize",
    "quantize_block",
    "quantize_mx",
    "quantize_mxfp4",
    "quantize_nvfp4",
]
