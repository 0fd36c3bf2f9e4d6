"""ml_dtypes (https://github.com/jax-ml/ml_dtypes): numpy casts to its float8, e8m0 and FP4 / FP6
types.

Claims convention ml_dtypes (docs/conventions.md §2.8: ml_dtypes 0.6.0 ConvertImpl without
saturation; E8M0 nearest, 0 and negatives NaN; decode OCP; float4_e2m1fn / float6_e2m3fn /
float6_e3m2fn: nearest even, overflow and Inf to max, NaN to the -0 code, sign flipped for a
negative NaN: docs/fp4.md §3.1; float8_e3m4 / float8_e4m3 / float8_e4m3b11fnuz:
docs/formats.md §1.4). Ops: `cast` (fp32 -> e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, and e8m0, e2m1, e2m3, e3m2, e3m4,
e4m3ieee, e4m3b11fnuz where the installed ml_dtypes has the type; e2m1 codes returned packed two per
byte, the ABI's order) and `upcast_e8m0`. docs/python.md §11.3.
"""

import numpy as np

from ..adapter import PACKED, Adapter, Op, Unavailable, pack_e2m1
from . import require

_TYPES = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
          "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu", "e2m1": "float4_e2m1fn",
          "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn", "e3m4": "float8_e3m4",
          "e4m3ieee": "float8_e4m3", "e4m3b11fnuz": "float8_e4m3b11fnuz"}


class MlDtypesAdapter(Adapter):
    name = "ml_dtypes"
    description = "numpy astype to ml_dtypes' float8 / e8m0 / float4 / float6 types"

    def __init__(self, module=None):
        """module: the ml_dtypes module (default: imported; a stand-in in the tests)."""
        self._error = None
        try:
            self.md = module if module is not None else require("ml_dtypes",
                                                                 "the ml_dtypes adapter")
        except Unavailable as e:
            self._error = e
            super().__init__(ops=[])
            return
        self.types = {k: getattr(self.md, v) for k, v in _TYPES.items() if hasattr(self.md, v)}
        version = getattr(self.md, "__version__", "?")
        ops = [Op("cast", self.cast, "cast", out_dtypes=tuple(self.types), convention="ml_dtypes",
                  notes=f"ml_dtypes {version}: np.float32 array .astype(type); float4_e2m1fn "
                        f"codes packed two per byte")]
        if "e8m0" in self.types:
            ops.append(Op("upcast_e8m0", self.upcast_e8m0, "upcast_e8m0", convention="ml_dtypes",
                          notes=f"ml_dtypes {version}: float8_e8m0fnu -> float32"))
        super().__init__(ops=ops)

    def check_available(self):
        if self._error is not None:
            raise self._error

    def codes(self, x, dtype):
        """x.astype(the ml_dtypes type of dtype) as one uint8 code per element (float4 / float6
        types hold one code per byte, in its low bits)."""
        return x.astype(self.types[dtype]).view(np.uint8)

    def cast(self, x, out_dtype):
        with np.errstate(all="ignore"):
            c = self.codes(x, out_dtype)
        return pack_e2m1(c) if out_dtype in PACKED else c

    def upcast_e8m0(self, e8m0):
        return e8m0.view(self.types["e8m0"]).astype(np.float32)
