"""ml_dtypes (https://github.com/jax-ml/ml_dtypes): numpy casts to its float8 and e8m0 types.

Claims convention ml_dtypes (docs/conventions.md §2.8: ml_dtypes 0.6.0 ConvertImpl without
saturation; E8M0 nearest, 0 and negatives NaN; decode OCP). Ops: `cast` (fp32 -> e4m3fn, e5m2,
e4m3fnuz, e5m2fnuz, and e8m0 where the installed ml_dtypes has float8_e8m0fnu) and
`upcast_e8m0`. Its float4_e2m1fn / float6_* types have no cast op here yet: the C ABI has the
E2M1 / E2M3 / E3M2 dtypes (include/mxgate/plugin.h), the Python adapter model does not declare
them yet.
docs/python.md §11.3.
"""

import numpy as np

from . import require
from ._library import LibraryAdapter, float8_types


class MlDtypesAdapter(LibraryAdapter):
    name = "ml_dtypes"
    description = "numpy astype to ml_dtypes' float8 / e8m0 types"

    def load(self):
        self.md = require("ml_dtypes", "the ml_dtypes adapter")
        self.types = float8_types(self.md)
        version = getattr(self.md, "__version__", "?")
        return self.cast_ops("ml_dtypes", f"ml_dtypes {version}: np.float32 array .astype(type)",
                             f"ml_dtypes {version}: float8_e8m0fnu -> float32")

    def cast(self, x, out_dtype):
        with np.errstate(all="ignore"):
            return x.astype(self.types[out_dtype]).view(np.uint8)

    def upcast_e8m0(self, e8m0):
        return e8m0.view(self.types["e8m0"]).astype(np.float32)
