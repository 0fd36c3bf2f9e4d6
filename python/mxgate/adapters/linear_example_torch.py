"""linear_example on torch tensors (docs/layers.md §4): the same chain, kernels and priority
lists, with every numeric step in torch on the adapter's device (CUDA on a GPU host): E4M3 /
E2M1 codes decoded through torch's float8 dtype and a table, e8m0 by ldexp, bf16 weights as
torch.bfloat16, GEMMs as fp32 torch.matmul with TF32 off. Layers and activations arrive as torch
tensors (tensor_type "torch"); pre-quantized activation scales may arrive as numpy arrays in
either memory order, and are read in their storage order as the numpy chain reads them.

Its numbers are its own, as the numpy chain's are: nothing here calls mxgate's reference."""

from typing import Any, Tuple

import numpy as np

from ..errors import Unavailable
from . import linear_example as ex
from . import linear_example_faulty as faulty

_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # OCP MX v1.0 §5.3.3, codes 0-7; 8-15 negated


def _torch():
    import torch  # the adapter's check_available proved it importable

    return torch


class TorchOps:
    """The chain's numeric steps on torch tensors on `device`."""

    def __init__(self, device: str) -> None:
        self.device = device

    def tensor(self, a: Any):
        torch = _torch()
        if isinstance(a, torch.Tensor):
            return a.to(self.device)
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def is_bf16(self, a) -> bool:
        return a.dtype == _torch().bfloat16

    def is_codes(self, a) -> bool:
        return a.dtype == _torch().uint8

    def col_major(self, s):
        return s.t().contiguous().t()  # the same shape, As[m, kb] at kb * M + m

    # ---- decoding -----------------------------------------------------------------------------
    def e4m3(self, codes):
        torch = _torch()
        return codes.contiguous().view(torch.float8_e4m3fn).to(torch.float32)

    def e8m0(self, b):
        """OCP e8m0: 2^(b - 127) built on its fp32 bits (byte b as the exponent field; 0x00 is
        2^-127, the subnormal 0x00400000), 0xFF NaN."""
        torch = _torch()
        b = b.to(torch.int32)
        bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
        v = bits.view(torch.float32)
        return torch.where(b == 0xFF, torch.full_like(v, float("nan")), v)

    def upcast_e8m0(self, s):
        return self.e8m0(s)

    def expand(self, s, rows: int, cols: int, br: int, bc: int):
        return s.repeat_interleave(br, dim=0).repeat_interleave(bc, dim=1)[:rows, :cols]

    def dequant_mxfp8_to_bf16(self, codes, scales):
        n, k = codes.shape
        return (self.e4m3(codes) * self.expand(self.e8m0(scales), n, k, 1, 32)).to(
            _torch().bfloat16)

    def dequant_fp4_to_bf16(self, layer):
        torch = _torch()
        w = layer.weight
        codes = torch.stack([w & 0x0F, w >> 4], dim=2).reshape(w.shape[0], 2 * w.shape[1])
        table = torch.tensor(_E2M1 + tuple(-v for v in _E2M1), dtype=torch.float32,
                             device=w.device)
        n, k = codes.shape
        if layer.config.scheme == "mxfp4":
            s = self.expand(self.e8m0(layer.weight_scale), n, k, 1, 32)
        else:
            g = self.tensor(layer.weight_global_scale).to(torch.float32).reshape(-1)[0]
            s = self.expand(self.e4m3(layer.weight_scale), n, k, 1, 16) * g
        return (table[codes.long()] * s).to(torch.bfloat16)

    # ---- GEMMs (fp32, TF32 off: every exact-mode sum is exact in any order) -----------------
    def _matmul(self, a, b):
        torch = _torch()
        allow = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            return (a @ b.T).to(torch.float32)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = allow

    def bf16_linear(self, x, w_bf16):
        torch = _torch()
        xb = self.tensor(x).to(torch.bfloat16).to(torch.float32)
        return self._matmul(xb, w_bf16.to(torch.float32))

    # ---- quantizers ---------------------------------------------------------------------------
    def _e4m3_codes(self, v):
        torch = _torch()
        return v.clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)

    def _groups(self, x, size: int):
        """x (M, K) as float32 groups (M, ceil(K/size), size), zero-padded, and each one's amax."""
        torch = _torch()
        x = self.tensor(x).to(torch.float32)
        m, k = x.shape
        xp = torch.zeros((m, -(-k // size) * size), dtype=torch.float32, device=x.device)
        xp[:, :k] = x
        g = xp.reshape(m, -1, size)
        return g, g.abs().amax(dim=2)

    def quantize_mx(self, x) -> Tuple[Any, Any]:
        """Per token MXFP8: e8m0 scale 2^(floor(log2 amax) - 8) per 1x32 (OCP MX v1.0)."""
        torch = _torch()
        m, k = x.shape
        g, amax = self._groups(x, 32)
        _, ex_ = torch.frexp(torch.where(amax > 0, amax, torch.ones_like(amax)))
        e = torch.where(amax > 0, ex_ - 1 - 8, torch.full_like(ex_, -127))  # floor(log2 amax)
        byte = (e + 127).clamp(0, 254).to(torch.uint8)
        scale = self.e8m0(byte)
        codes = self._e4m3_codes((g / scale[..., None]).reshape(m, -1))
        return codes[:, :k].contiguous(), byte

    def quantize_1x128(self, x) -> Tuple[Any, Any]:
        """Per 1x128 group: fp32 scale amax / 448, row-major (M, ceil(K/128))."""
        torch = _torch()
        m, k = x.shape
        g, amax = self._groups(x, 128)
        scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
        codes = self._e4m3_codes((g / scale[..., None]).reshape(m, -1))
        return codes[:, :k].contiguous(), scale

    # ---- the kernels' own reads ---------------------------------------------------------------
    def _past_end(self, buf, rows: int, width: int):
        """Rows of `width` read from the flat buffer: past a row into the next, past the end
        into poison (the unmasked tile of the numpy chain's dot_scaled)."""
        torch = _torch()
        flat = torch.cat([buf.reshape(-1), torch.full((width,), ex._POISON, dtype=buf.dtype,
                                                      device=buf.device)])
        idx = (torch.arange(rows, device=buf.device)[:, None] * buf.shape[1] +
               torch.arange(width, device=buf.device)[None, :])
        return flat[idx]

    def dot_scaled(self, a, a_s, b, b_s):
        torch = _torch()
        k = a.shape[1]
        kp = -(-k // ex.DOT_SCALED_K_ALIGN) * ex.DOT_SCALED_K_ALIGN
        a, b = self._past_end(a, a.shape[0], kp), self._past_end(b, b.shape[0], kp)
        a_s = self._past_end(a_s, a.shape[0], kp // 32)
        b_s = self._past_end(b_s, b.shape[0], kp // 32)
        da = self.e4m3(a) * self.e8m0(a_s).repeat_interleave(32, dim=1)
        db = self.e4m3(b) * self.e8m0(b_s).repeat_interleave(32, dim=1)
        return self._matmul(da, db).to(torch.float32)

    def _storage(self, s):
        """A dense scale tensor's elements in memory order (numpy: ravel order K)."""
        torch = _torch()
        if isinstance(s, torch.Tensor):
            if s.is_contiguous():
                return s.reshape(-1)
            if s.t().is_contiguous():
                return s.t().reshape(-1)  # column-major: its memory order is the transpose's
            return s.contiguous().reshape(-1)
        return self.tensor(np.asarray(s).ravel(order="K"))

    def blockscale_gemm(self, a, a_s_storage, b, b_s, a_s_order: str):
        """gemm_a8w8_blockscale (row-major As) / _bpreshuffle (column-major As), each reading
        the activation scales' storage in its own order."""
        torch = _torch()
        a = self.tensor(a)
        m, k = a.shape
        kb = -(-k // 128)
        s = self._storage(a_s_storage).to(torch.float32)
        a_s = s.reshape(m, kb) if a_s_order == "row_major" else s.reshape(kb, m).T
        da = self.e4m3(a) * a_s.repeat_interleave(128, dim=1)[:, :k]
        db = self.e4m3(b) * self.expand(self.tensor(b_s).to(torch.float32), b.shape[0], k,
                                        128, 128)
        return self._matmul(da, db)

    def _shuffle_index(self, n: int, k: int, device):
        torch = _torch()
        rows = torch.arange(n, device=device)[:, None]
        cols = torch.arange(k, device=device)[None, :]
        return (16 * k * (rows // 16) + 256 * (cols // 16) + 16 * (rows % 16) +
                cols % 16).reshape(-1)

    def shuffle_weight(self, w):
        """AITER shuffle_weight(w, (16, 16)) of 1-byte elements, by its closed form."""
        torch = _torch()
        n, k = w.shape
        assert n % 16 == 0 and k % 32 == 0, "shuffle_weight needs N % 16 == 0 and K % 32 == 0"
        out = torch.empty(n * k, dtype=w.dtype, device=w.device)
        out[self._shuffle_index(n, k, w.device)] = w.reshape(-1)
        return out.reshape(n, k)

    def unshuffle_weight(self, w):
        n, k = w.shape
        return w.reshape(-1)[self._shuffle_index(n, k, w.device)].reshape(n, k)


class LinearExampleTorch(ex.LinearExample):
    """The example chain with torch tensors on `device` (default cuda)."""

    name = "linear_example_torch"
    description = "torch linear-kernel chain with vLLM's structure"
    tensor_type = "torch"

    def __init__(self, model_preshuffles: bool = True, device: str = "cuda") -> None:
        super().__init__(model_preshuffles)
        self.device = device
        self.ops = TorchOps(device)

    def check_available(self) -> None:
        try:
            import torch
        except ImportError:
            raise Unavailable("torch is not installed") from None
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise Unavailable("torch has no CUDA device here")
        if not hasattr(torch, "float8_e4m3fn"):
            raise Unavailable(f"torch {torch.__version__} has no float8_e4m3fn")


class LinearExampleTorchCpu(LinearExampleTorch):
    """The same on the CPU (torch's CPU matmul)."""

    name = "linear_example_torch_cpu"

    def __init__(self, model_preshuffles: bool = True) -> None:
        super().__init__(model_preshuffles, device="cpu")


class NoPreshuffleGuardTorch(LinearExampleTorch):
    """Z3 on torch (linear_example_faulty.NoPreshuffleGuard's kernels): the model preshuffles
    the weight and the linear kernel shuffles it again; layer.single_transform must fail."""

    name = "z3_no_preshuffle_guard_torch"
    kernels = faulty.NoPreshuffleGuard.kernels
