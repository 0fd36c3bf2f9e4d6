"""mxgate: the bit-exact reference for MXFP8 / e8m0 quantization and block-scaled FP8 GEMM, and
for MXFP4 / MXFP6 / NVFP4 (docs/fp4.md), as numpy functions (docs/python.md).

    import mxgate
    codes = mxgate.encode([448.0, 464.0], "e4m3fn", "torch_2_11")
    v = mxgate.check_gemm(a, a_scales, b, b_scales, c, scheme="mx")
    assert v.passed, v
    r = mxgate.check("gemm.exact", "py:mxgate.adapters.numpy:NumpyAdapter")
    assert r.passed, r

The functions run the same library code as the `mxgate` CLI verbs (libmxgate.so through
ctypes: any CPython 3, numpy 1.24 or 2.x), with the same options and error texts. Every result
spells success `passed`; every exception raised on purpose is an `mxgate.Error`. The pytest
plugin is `mxgate.pytest_plugin`, the hypothesis strategies `mxgate.strategies`.
"""

import os as _os

from ._native import library_path
from .accumulator import Accumulator
from .adapter import Adapter, Contract, Dim, Op, Tactic, contract, op
from .catalog import Shape, shapes
from .check import check, properties
from .errors import (AdapterError, Error, InputError, LibraryError, OutOfMemory, Unavailable,
                     Unsupported)
from ._record import Recorder, record
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
from .replay import ReplayReport, replay
from .result import CheckResult, Location
from .shrink import Shrunk, shrink
from .spec import load
from .survey import CastSurvey, survey_cast
from .verdict import NAN_ULP, Element, Verdict

__version__ = "0.1.0"

__all__ = [
    "NAN_ULP",
    "Accumulator",
    "Adapter",
    "AdapterError",
    "CastSurvey",
    "CheckResult",
    "Contract",
    "Dim",
    "Element",
    "Error",
    "InputError",
    "LibraryError",
    "Location",
    "Op",
    "OutOfMemory",
    "Shape",
    "Tactic",
    "Unavailable",
    "Unsupported",
    "Verdict",
    "accumulators",
    "check",
    "check_gemm",
    "contract",
    "conventions",
    "decode",
    "dequantize",
    "encode",
    "formats",
    "gemm",
    "library_path",
    "load",
    "op",
    "properties",
    "quantize",
    "quantize_block",
    "quantize_mx",
    "quantize_mxfp4",
    "quantize_nvfp4",
    "record",
    "Recorder",
    "replay",
    "ReplayReport",
    "shrink",
    "Shrunk",
    "shapes",
    "survey_cast",
]

if _os.environ.get("MXGATE_RECORD"):  # the flight recorder for a process (docs/record.md §1)
    from ._record import start_from_environment as _start_recording

    _recorder = _start_recording()
