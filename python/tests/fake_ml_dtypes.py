"""A stand-in for the ml_dtypes module, so that mxgate.adapters.ml_dtypes runs on a host without
it (test_adapters_fp4.py; the real one runs on the GPU host, docs/python.md §11.3): a module with
only the float4_e2m1fn / float6_e2m3fn / float6_e3m2fn names, and the adapter with its one
conversion (MlDtypesAdapter.codes) replaced by tools/measure/ml_dtypes_model.py, the restatement
of ml_dtypes 0.6.0's FP4 / FP6 conversion on integers (docs/fp4.md §3.1), not mxgate's encoder.
Everything else (which types it finds, the ops and claims, packing E2M1) is the adapter's."""

import importlib.util
import types
from pathlib import Path

import numpy as np

from mxgate.adapters.ml_dtypes import MlDtypesAdapter

_spec = importlib.util.spec_from_file_location(
    "ml_dtypes_model", Path(__file__).resolve().parents[2] / "tools/measure/ml_dtypes_model.py")
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)

module = types.ModuleType("ml_dtypes")
module.__version__ = "0.6.0 (stand-in)"
for _name in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"):
    setattr(module, _name, type(_name, (), {}))


class FakeMlDtypes(MlDtypesAdapter):
    name = "fake_ml_dtypes"

    def __init__(self):
        super().__init__(module)

    def codes(self, x, dtype):
        bits = np.ascontiguousarray(x, dtype=np.float32).reshape(-1).view(np.uint32)
        return np.array([model.model(int(b), dtype) for b in bits], dtype=np.uint8)


class FakeMlDtypesHighFirst(FakeMlDtypes):
    name = "fake_ml_dtypes_high_first"
    description = "planted fault: float4_e2m1fn codes packed with element 2i in the high nibble"

    def cast(self, x, out_dtype):
        c = super().cast(x, out_dtype)
        return ((c >> 4) | (c << 4)).astype(np.uint8) if out_dtype == "e2m1" else c
