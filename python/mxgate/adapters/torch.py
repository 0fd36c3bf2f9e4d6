"""torch (https://pytorch.org): dtype casts on CPU and CUDA, and torch._scaled_mm on CUDA.

Casts claim torch_2_11 (docs/conventions.md §2.7: the c10 Float8 casts, non-saturating; E8M0
nearest with ties up; decode OCP), measured on CPU and CUDA with torch 2.11 (§3.2).

torch._scaled_mm (aten/src/ATen/native/cuda/ScaledBlas.cpp, pytorch/pytorch): mat1 (M, K)
row-major fp8, mat2 (K, N) column-major (our B (N, K) row-major, transposed), K and N multiples
of 16; scales multiply (they are the dequantization scales). Modes, by the shapes and strides of
the scales (is_tensorwise_scaling, is_rowwise_scaling, is_blockwise_1x128_scaling,
is_blockwise_128x128_scaling there):
  tensor   one fp32 scale each
  rowwise  scale_a (M, 1), scale_b (1, N), fp32, contiguous; bf16 output (the CUTLASS path
           before cuBLAS 12.9 accepts no other, so only bf16 is declared)
  block    scale_a (M, ceil(K/128)) outer-dim-major (strides (1, M)); scale_b (L4, ceil(N/128))
           with strides (1, L4), L4 = ceil(K/128) rounded up to 4 (cuBLASLt's layout), else the
           first of the (ceil(K/128), ceil(N/128)) views with row stride L4 or unpadded that this
           torch accepts;
           M and N multiples of 4 as cuBLASLt's block scaling needs (docs/nvidia.md §3)
use_fast_accum=False. Accumulator declared: sm90_fp8_mma, the Hopper FP8 tensor-core model of
docs/accumulators.md measured on the H200 through cuBLASLt, which _scaled_mm calls.
docs/python.md §11.4.
"""

import numpy as np

from ..adapter import Dim, Op, Unavailable
from . import require
from ._library import FLOAT8_TYPES, LibraryAdapter, float8_types


class _TorchBase(LibraryAdapter):
    device = "cpu"

    def load(self):
        self.torch = require("torch", f"the torch adapter ({self.device})")
        if self.device == "cuda" and not self.torch.cuda.is_available():
            raise Unavailable("torch has no CUDA device here (torch.cuda.is_available())")
        return self.build_ops()

    def to_device(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def bits(self, t):
        return t.contiguous().view(self.torch.uint8).cpu().numpy()


class TorchCpuAdapter(_TorchBase):
    name = "torch_cpu"
    description = "torch dtype casts on the CPU"
    device = "cpu"

    def build_ops(self):
        t = self.torch
        self.types = float8_types(t)
        return self.cast_ops("torch_2_11",
                             f"torch {t.__version__}: x.to(torch.float8_*) on {self.device}",
                             f"torch {t.__version__}: float8_e8m0fnu.to(float32)")

    def cast(self, x, out_dtype):
        return self.bits(self.to_device(x).to(self.types[out_dtype]))

    def upcast_e8m0(self, e8m0):
        t = self.to_device(e8m0).view(self.types["e8m0"])
        return t.to(self.torch.float32).cpu().numpy()


class TorchCudaAdapter(TorchCpuAdapter):
    name = "torch_cuda"
    description = "torch dtype casts on the CUDA device"
    device = "cuda"


class ScaledMmAdapter(_TorchBase):
    name = "torch_scaled_mm"
    description = "torch._scaled_mm on CUDA: per-tensor, rowwise and 1x128 x 128x128 block scales"
    device = "cuda"

    def build_ops(self):
        t = self.torch
        v = t.__version__
        common = dict(a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn", "e5m2"), k=Dim(align=16),
                      n=Dim(align=16), accumulator="sm90_fp8_mma")
        return [
            Op("gemm_block", self.tensor, "scaled_mm_tensor", out_dtypes=("f32", "bf16"),
               a_block=(0, 0), b_block=(0, 0), notes=f"torch {v}: per-tensor scales", **common),
            Op("gemm_block", self.rowwise, "scaled_mm_rowwise", out_dtypes=("bf16",),
               a_block=(1, 0), b_block=(1, 0), notes=f"torch {v}: (M,1) x (1,N) scales",
               **common),
            Op("gemm_block", self.block, "scaled_mm_block", out_dtypes=("f32", "bf16"),
               a_block=(1, 128), b_block=(128, 128), m=Dim(align=4),
               **{**common, "n": Dim(align=16)},
               notes=f"torch {v}: 1x128 activations (outer-dim-major) x 128x128 weights"),
        ]

    def _operands(self, a, b, call):
        t = self.torch
        fa = getattr(t, FLOAT8_TYPES[call.tensor("a").dtype])
        fb = getattr(t, FLOAT8_TYPES[call.tensor("b").dtype])
        return self.to_device(a).view(fa), self.to_device(b).view(fb).t()

    def _mm(self, a, b, sa, sb, call):
        t = self.torch
        out = t.bfloat16 if call.tensor("out").dtype == "bf16" else t.float32
        c = t._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out, use_fast_accum=False)
        if out == t.bfloat16:
            return c.contiguous().view(t.int16).cpu().numpy().view(np.uint16)
        return c.cpu().numpy()

    def tensor(self, a, a_scales, b, b_scales, call):
        fa, fb = self._operands(a, b, call)
        sa = self.to_device(a_scales.reshape(()))
        sb = self.to_device(b_scales.reshape(()))
        return self._mm(fa, fb, sa, sb, call)

    def rowwise(self, a, a_scales, b, b_scales, call):
        fa, fb = self._operands(a, b, call)
        sa = self.to_device(a_scales.reshape(-1, 1))
        sb = self.to_device(b_scales.reshape(1, -1))
        return self._mm(fa, fb, sa, sb, call)

    def block(self, a, a_scales, b, b_scales, call):
        fa, fb = self._operands(a, b, call)
        sa = self.to_device(np.ascontiguousarray(a_scales.T)).t()  # (M, kb), strides (1, M)
        nb, kb = b_scales.shape
        padded = np.zeros((nb, -(-kb // 4) * 4), dtype=np.float32)
        padded[:, :kb] = b_scales
        first = None
        # cuBLASLt's 128x128 layout (pytorch/pytorch#166752): shape (L4, nb), strides (1, L4), L4 =
        # kb rounded up to 4; then the same storage cut to (kb, nb); then unpadded (kb, nb), strides
        # (1, kb), which torch 2.11 also accepts and cuBLASLt reads with the L4 stride: wrong
        # numbers whenever kb % 4 != 0 (docs/python.md §14).
        candidates = (self.to_device(padded).t(), self.to_device(padded)[:, :kb].t(),
                      self.to_device(np.ascontiguousarray(b_scales)).t())
        for sb in candidates:
            try:
                return self._mm(fa, fb, sa, sb, call)
            except RuntimeError as e:  # this torch wants the other row stride
                if "Invalid scaling configuration" not in str(e):
                    raise
                first = first or e
        raise first
