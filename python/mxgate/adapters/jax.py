"""JAX (https://github.com/jax-ml/jax): fp32 -> fp8 / e8m0 casts on the GPU, compiled by XLA
(jax.jit of x.astype(jnp.float8_*) with the input on a GPU device).

Claims no convention: JAX's float8 types are ml_dtypes' (docs/conventions.md §2.8), but XLA's GPU
backend lowers the conversion itself and no JAX or XLA document states its rounding, overflow
and NaN rules; the survey's cast table says which convention it equals. JaxScaledMatmulAdapter:
jax.nn.scaled_matmul's MXFP8 and NVFP4 GEMMs. docs/python.md §11.6.
"""

import numpy as np

from ..adapter import Dim, Op, Unavailable, unpack_e2m1
from . import require
from ._library import LibraryAdapter, float8_types


class _JaxGpu(LibraryAdapter):
    """jax with a GPU device; build_ops() declares the ops (or raises Unavailable)."""

    what = "the jax adapter"

    def load(self):
        self.jax = require("jax", self.what)
        self.jnp = require("jax.numpy", self.what)
        try:
            self.gpu = self.jax.devices("gpu")[0]
        except RuntimeError as e:
            raise Unavailable(f"jax has no GPU device here: {e}") from None
        return self.build_ops()


class JaxAdapter(_JaxGpu):
    name = "jax_gpu"
    description = "jax.jit(x.astype(float8_*)) on the GPU through XLA"

    def build_ops(self):
        self.types = float8_types(self.jnp)
        bits = self.jax.lax.bitcast_convert_type
        self.casts = {k: self.jax.jit(lambda v, d=d: bits(v.astype(d), self.jnp.uint8))
                      for k, d in self.types.items()}
        return [Op("cast", self.cast, "cast", out_dtypes=tuple(self.types), memory="cuda",
                   notes=f"jax {self.jax.__version__} on {self.gpu.platform}")]

    def cast(self, x, out_dtype):
        """A device op: x a DLPack view of mxgate's device buffer (docs/python.md §9); the
        codes come back as a uint8 array on the GPU."""
        v = self.jax.dlpack.from_dlpack(x)
        if v.devices() != {self.gpu}:  # host views: a libmxgate.so without CUDA
            v = self.jax.device_put(v, self.gpu)
        y = self.casts[out_dtype](v)
        y.block_until_ready()
        return y


class JaxScaledMatmulAdapter(_JaxGpu):
    """jax.nn.scaled_matmul (B = 1) on the GPU, in the two forms its documentation names for
    cuDNN on Blackwell: MXFP8 (float8_e4m3fn / e5m2 with float8_e8m0fnu scales of 1 x 32) and
    NVFP4 (float4_e2m1fn with float8_e4m3fn scales of 1 x 16); elsewhere XLA decomposes it
    (a * repeat(scales), an fp32 einsum). K must be a whole number of blocks (the block size is
    K // scales.shape[-1]). NVFP4's global scales are not an argument: the op applies
    fl32(fl32(ga * gb) * C) to the fp32 result, the ABI's epilogue. Accumulator declared: fp32_rn
    (any order), unmeasured."""

    name = "jax_scaled_matmul"
    description = "jax.nn.scaled_matmul on the GPU: MXFP8 (e8m0 1x32) and NVFP4 (E4M3 1x16)"
    what = "the jax scaled_matmul adapter"

    def build_ops(self):
        if not hasattr(self.jax.nn, "scaled_matmul"):
            raise Unavailable(f"jax {self.jax.__version__} has no jax.nn.scaled_matmul")
        jnp = self.jnp
        self.mm = self.jax.jit(lambda a, b, sa, sb: self.jax.nn.scaled_matmul(
            a, b, sa, sb, preferred_element_type=jnp.float32))
        v = f"jax {self.jax.__version__} on {self.gpu.platform}"
        ops = [Op("gemm_mx", self.mxfp8, "scaled_matmul_mxfp8", a_dtypes=("e4m3fn", "e5m2"),
                  b_dtypes=("e4m3fn", "e5m2"), k=Dim(align=32), accumulator="fp32_rn",
                  notes=f"{v}: jax.nn.scaled_matmul, float8_e8m0fnu scales of 1x32")]
        if hasattr(jnp, "float4_e2m1fn"):
            ops.append(Op("gemm_nvfp4", self.nvfp4, "scaled_matmul_nvfp4", k=Dim(align=16),
                          accumulator="fp32_rn",
                          notes=f"{v}: jax.nn.scaled_matmul, float8_e4m3fn scales of 1x16; "
                                f"fl32(ga * gb) applied to the fp32 result"))
        return ops

    def _run(self, a, sa, b, sb):
        put = lambda v: self.jax.device_put(np.ascontiguousarray(v)[None], self.gpu)
        return np.asarray(self.mm(put(a), put(b), put(sa), put(sb)))[0]

    def mxfp8(self, a, a_scales, b, b_scales, call):
        jnp = self.jnp
        t = {"e4m3fn": jnp.float8_e4m3fn, "e5m2": jnp.float8_e5m2}
        e8m0 = np.dtype(jnp.float8_e8m0fnu)
        return self._run(a.view(t[call.tensor("a").dtype]), a_scales.view(e8m0),
                         b.view(t[call.tensor("b").dtype]), b_scales.view(e8m0))

    def nvfp4(self, a, a_scales, b, b_scales, a_global, b_global, call):
        from .numpy import nvfp4_alpha

        jnp = self.jnp
        fp4, e4m3 = np.dtype(jnp.float4_e2m1fn), np.dtype(jnp.float8_e4m3fn)
        acc = self._run(unpack_e2m1(a, call.k).view(fp4), a_scales.view(e4m3),
                        unpack_e2m1(b, call.k).view(fp4), b_scales.view(e4m3))
        with np.errstate(over="ignore", invalid="ignore"):
            return (nvfp4_alpha(a_global, b_global, call) * acc).astype(np.float32)
