"""torch (https://pytorch.org): dtype casts on CPU and CUDA, and torch._scaled_mm on CUDA.

Casts claim torch_2_11 (docs/conventions.md §2.7: the c10 Float8 casts, non-saturating; E8M0
nearest with ties up; decode OCP), measured on CPU and CUDA with torch 2.11 (§3.2). From torch
2.13 on (pytorch/pytorch#178817) the CPU cast to e4m3fn claims torch_2_13 (§2.24: finite overflow
saturates); on CUDA that cast is left unclaimed there, as its copy kernel has its own path whose
Inf was not read (cast_claims). Whether 2.12 carries the fix was not established: it claims
torch_2_11.

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
ScaledMmMxAdapter: the MX / NVFP4 block-scaled forms, declared where this GPU runs them.
docs/python.md §11.4.
"""

import warnings

import numpy as np

from ..adapter import Adapter, Dim, Op, Unavailable
from . import require

_TYPES = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
          "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu"}


def _version(v):
    """(major, minor) of a torch version string: "2.13.0.dev20260501+cu130" -> (2, 13)."""
    parts = v.split("+")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


def cast_claims(version, device, dtypes):
    """[(op name, convention, out dtypes)] for the casts of this torch on this device: e4m3fn
    claims torch_2_13 on the CPU from 2.13 on (docs/conventions.md §2.24), is unclaimed on CUDA
    from 2.13 on, and every other cast claims torch_2_11 (§2.7)."""
    dtypes = tuple(dtypes)
    if _version(version) < (2, 13) or "e4m3fn" not in dtypes:
        return [("cast", "torch_2_11", dtypes)]
    rest = tuple(d for d in dtypes if d != "e4m3fn")
    claims = [("cast", "torch_2_11", rest)] if rest else []
    if device == "cpu":
        claims.append(("cast_e4m3fn", "torch_2_13", ("e4m3fn",)))
    return claims


class _TorchBase(Adapter):
    device = "cpu"

    def __init__(self):
        self._error = None
        try:
            self.torch = require("torch", f"the torch adapter ({self.device})")
            if self.device == "cuda" and not self.torch.cuda.is_available():
                raise Unavailable("torch has no CUDA device here (torch.cuda.is_available())")
            ops = self.build_ops()  # may itself find the adapter unavailable here
        except Unavailable as e:
            self._error = e
            ops = []
        super().__init__(ops=ops)

    def check_available(self):
        if self._error is not None:
            raise self._error

    def to_device(self, a):
        with warnings.catch_warnings():  # a cast's input is a read-only view of mxgate's buffer
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def bits(self, t):
        return t.contiguous().view(self.torch.uint8).cpu().numpy()


class TorchCpuAdapter(_TorchBase):
    name = "torch_cpu"
    description = "torch dtype casts on the CPU"
    device = "cpu"

    def build_ops(self):
        t = self.torch
        self.types = {k: getattr(t, v) for k, v in _TYPES.items() if hasattr(t, v)}
        ops = [Op("cast", self.cast, name, out_dtypes=dtypes, convention=conv,
                  notes=f"torch {t.__version__}: x.to(torch.float8_*) on {self.device}")
               for name, conv, dtypes in cast_claims(t.__version__, self.device, self.types)]
        if "e8m0" in self.types:
            ops.append(Op("upcast_e8m0", self.upcast_e8m0, "upcast_e8m0", convention="torch_2_11",
                          notes=f"torch {t.__version__}: float8_e8m0fnu.to(float32)"))
        return ops

    def cast(self, x, out_dtype, out=None):
        if out is not None and self.device == "cpu":
            # Straight into mxgate's output buffer (a uint8 view): copy_ converts as .to() does
            # (aten's _to_copy is an empty tensor and copy_), without the result's allocation and
            # the copy of it per call.
            self.torch.from_numpy(out).view(self.types[out_dtype]).copy_(self.to_device(x))
            return None
        return self.bits(self.to_device(x).to(self.types[out_dtype]))

    def upcast_e8m0(self, e8m0):
        t = self.to_device(e8m0).view(self.types["e8m0"])
        return t.to(self.torch.float32).cpu().numpy()


class TorchCudaAdapter(TorchCpuAdapter):
    """The casts as a device op (memory "cuda", mxgate.adapter): inputs and outputs stay on the
    device, DLPack views of mxgate's buffers (docs/python.md §9)."""

    name = "torch_cuda"
    description = "torch dtype casts on the CUDA device"
    device = "cuda"

    def build_ops(self):
        return [Op(o.family, self.cast_device, o.name, o.contract, memory="cuda")
                if o.family == "cast" else o for o in super().build_ops()]

    def cast_device(self, x, out_dtype):
        t = self.torch.from_dlpack(x)
        if t.device.type != "cuda":  # host views: a libmxgate.so without CUDA
            t = t.to("cuda")
        return t.to(self.types[out_dtype]).view(self.torch.uint8)


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
        fa = getattr(t, _TYPES[call.tensor("a").dtype])
        fb = getattr(t, _TYPES[call.tensor("b").dtype])
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


class ScaledMmMxAdapter(_TorchBase):
    """torch._scaled_mm with MX and NVFP4 block scales (cuBLASLt's block-scaled GEMMs, sm_100 and
    later): A (M, K) row-major, B (N, K) row-major passed transposed (column-major), scales in the
    128 x 4 swizzled layout (nv_swizzle_128x4: torchao to_blocked, the layout cuBLAS reads):
      scaled_mm_mxfp8  float8_e4m3fn operands, float8_e8m0fnu scales of 1 x 32
      scaled_mm_mxfp4  float4_e2m1fn_x2 operands (packed E2M1), float8_e8m0fnu scales of 1 x 32
      scaled_mm_nvfp4  float4_e2m1fn_x2 operands, float8_e4m3fn scales of 1 x 16; the global
                       scales applied to the fp32 result as fl32(fl32(ga * gb) * C)
    fp32 output. Each op is declared only where a first call of this torch on this GPU succeeds
    (M = N = 128, K = 128); where none does the adapter is Unavailable with torch's own message
    for each (on sm_90 torch refuses MX and NVFP4 scaling). Accumulator declared: fp32_rn
    (unmeasured)."""

    name = "torch_scaled_mm_mx"
    description = "torch._scaled_mm with MXFP8, MXFP4 and NVFP4 block scales (sm_100+)"
    device = "cuda"

    def build_ops(self):
        ops, refused = [], []
        for needs, o in self.candidates(self.torch.__version__):
            why = self.probe(o) if hasattr(self.torch, needs) else f"no torch.{needs}"
            if why is None:
                ops.append(o)
            else:
                refused.append(f"{o.name}: {why}")
        if not ops:
            t = self.torch
            cap = ".".join(map(str, t.cuda.get_device_capability()))
            raise Unavailable(f"torch {t.__version__} on {t.cuda.get_device_name()} (sm {cap}) "
                              f"runs none of its MX / NVFP4 scaled GEMMs: " + "; ".join(refused))
        return ops

    def candidates(self, v):
        """(the torch dtype it needs, op) for every op this adapter can declare."""
        swz = dict(a_scale_layouts=("nv_swizzle_128x4",), b_scale_layouts=("nv_swizzle_128x4",),
                   n=Dim(align=16), accumulator="fp32_rn")
        return [
            ("float8_e8m0fnu", Op("gemm_mx", self.mx, "scaled_mm_mxfp8", a_dtypes=("e4m3fn",),
                                  b_dtypes=("e4m3fn",), k=Dim(align=32),
                                  notes=f"torch {v}: MXFP8, e8m0 1x32 swizzled", **swz)),
            ("float4_e2m1fn_x2", Op("gemm_mx", self.mx, "scaled_mm_mxfp4", a_dtypes=("e2m1",),
                                    b_dtypes=("e2m1",), k=Dim(align=32),
                                    notes=f"torch {v}: MXFP4, e8m0 1x32 swizzled", **swz)),
            ("float4_e2m1fn_x2", Op("gemm_nvfp4", self.nvfp4, "scaled_mm_nvfp4", k=Dim(align=32),
                                    notes=f"torch {v}: NVFP4, E4M3 1x16 swizzled; global scales "
                                          f"on the fp32 result", **swz)),
        ]

    def probe(self, o):
        """None when one 128 x 128 x 128 call of op o runs here, else torch's message."""
        from ..adapter import Tensor

        m = n = k = 128
        packed = o.contract.a_dtypes == ("e2m1",)
        block = 16 if o.family == "gemm_nvfp4" else 32
        cols = k // 2 if packed else k
        sc = 128 * (-(-(k // block) // 4) * 4)
        tensors = [Tensor("a", o.contract.a_dtypes[0], m, k, 0, "row_major", m * cols),
                   Tensor("a_scale", "e8m0", m, k // block, 0, "nv_swizzle_128x4", sc),
                   Tensor("b", o.contract.b_dtypes[0], n, k, 0, "row_major", n * cols),
                   Tensor("b_scale", "e8m0", n, k // block, 0, "nv_swizzle_128x4", sc)]
        args = [np.zeros((m, cols), np.uint8), np.full(sc, 0x38, np.uint8),
                np.zeros((n, cols), np.uint8), np.full(sc, 0x38, np.uint8)]
        if o.family == "gemm_nvfp4":
            tensors += [Tensor("a_global", "f32", 1, 1, 1, "row_major", 4),
                        Tensor("b_global", "f32", 1, 1, 1, "row_major", 4)]
            args += [np.ones(1, np.float32), np.ones(1, np.float32)]
        from ..adapter import Call

        call = Call(o.family, m, n, k, tuple(tensors))
        try:
            o.fn(*args, call=call)
            return None
        except Exception as e:  # torch's own refusal, as it words it
            return " ".join(f"{type(e).__name__}: {e}".split())[:300]

    def _operand(self, x, dtype):
        t = self.torch
        name = "float4_e2m1fn_x2" if dtype == "e2m1" else _TYPES[dtype]
        return self.to_device(x).view(getattr(t, name))

    def _scales(self, s, rows, cols, dtype):
        """The swizzled storage as (rows padded to 128, cols padded to 4) of torch dtype."""
        t = self.torch
        shape = (-(-rows // 128) * 128, -(-cols // 4) * 4)
        return self.to_device(np.asarray(s).reshape(shape)).view(getattr(t, dtype))

    def _mm(self, a, a_scales, b, b_scales, call, scale_dtype, block):
        t = self.torch
        m, n, k = call.m, call.n, call.k
        kb = -(-k // block)
        fa = self._operand(a, call.tensor("a").dtype)
        fb = self._operand(b, call.tensor("b").dtype).t()
        sa = self._scales(a_scales, m, kb, scale_dtype)
        sb = self._scales(b_scales, n, kb, scale_dtype)
        return t._scaled_mm(fa, fb, scale_a=sa, scale_b=sb, out_dtype=t.float32).cpu().numpy()

    def mx(self, a, a_scales, b, b_scales, call):
        return self._mm(a, a_scales, b, b_scales, call, "float8_e8m0fnu", 32)

    def nvfp4(self, a, a_scales, b, b_scales, a_global, b_global, call):
        from .numpy import nvfp4_alpha

        c = self._mm(a, a_scales, b, b_scales, call, "float8_e4m3fn", 16)
        with np.errstate(over="ignore", invalid="ignore"):
            return (nvfp4_alpha(a_global, b_global, call) * c).astype(np.float32)
