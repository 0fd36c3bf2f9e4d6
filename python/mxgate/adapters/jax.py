"""JAX (https://github.com/jax-ml/jax): fp32 -> fp8 / e8m0 casts on the GPU, compiled by XLA
(jax.jit of x.astype(jnp.float8_*) with the input on a GPU device).

Claims no convention: JAX's float8 types are ml_dtypes' (docs/conventions.md §2.8), but XLA's GPU
backend lowers the conversion itself and no JAX or XLA document states its rounding, overflow
and NaN rules; the survey's cast table says which convention it equals. docs/python.md §11.6.
"""

import numpy as np

from ..adapter import Op, Unavailable
from . import require
from ._library import LibraryAdapter, float8_types


class JaxAdapter(LibraryAdapter):
    name = "jax_gpu"
    description = "jax.jit(x.astype(float8_*)) on the GPU through XLA"

    def load(self):
        self.jax = require("jax", "the jax adapter")
        self.jnp = require("jax.numpy", "the jax adapter")
        try:
            self.gpu = self.jax.devices("gpu")[0]
        except RuntimeError as e:
            raise Unavailable(f"jax has no GPU device here: {e}") from None
        self.types = float8_types(self.jnp)
        self.casts = {k: self.jax.jit(lambda v, d=d: v.astype(d)) for k, d in self.types.items()}
        return [Op("cast", self.cast, "cast", out_dtypes=tuple(self.types),
                   notes=f"jax {self.jax.__version__} on {self.gpu.platform}")]

    def cast(self, x, out_dtype):
        y = self.casts[out_dtype](self.jax.device_put(x, self.gpu))
        return np.asarray(y).view(np.uint8)
