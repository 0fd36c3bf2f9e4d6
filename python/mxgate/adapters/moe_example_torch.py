"""The MoE example chain (docs/moe.md §4) in torch on the adapter's device (CUDA on a GPU host):
the same structure as moe_example (pairs sorted by expert, the w13 GEMM, SiLU-and-mul or the
interleaved clamped SwiGLU, a bf16 intermediate, per_token_group_quant or MX requantization
through torch's float8_e4m3fn cast, the w2 GEMM, the top-k weight and routed scale, index_add
per token), with every numeric step in torch: fp32 torch.matmul with TF32 off, torch's silu /
sigmoid, torch's bf16 and float8 casts. Its numbers are its own: nothing here calls mxgate's
reference."""

from ..errors import Unavailable
from ..moe.config import SWIGLU_ALPHA, SWIGLU_LIMIT, MoEAdapter
from .moe_example import BUCKETS, E2M1


def _torch():
    import torch  # check_available proved it importable

    return torch


class MoEExampleTorch(MoEAdapter):
    """The faithful twin on torch tensors: every MoE property passes on it."""

    name = "moe_example_torch"
    tensor_type = "torch"
    device = "cuda"

    def check_available(self) -> None:
        try:
            import torch
        except ImportError as e:
            raise Unavailable(f"torch is not importable: {e}") from None
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise Unavailable("torch has no CUDA device")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    def select(self, config):
        return "OaiSwigluExperts" if config.activation == "swiglu_oai" else "TritonExperts"

    def token_buckets(self, config):
        return BUCKETS

    def _scales(self, s):
        torch = _torch()
        if s.dtype == torch.uint8:
            b = s.to(torch.int32)
            bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
            v = bits.view(torch.float32)
            return torch.where(b == 0xFF, torch.full_like(v, float("nan")), v)
        return s.to(torch.float32)

    def _decode(self, c, w, s, rows, cols, w13):
        torch = _torch()
        if c.scheme == "bf16":
            return ((w.view(torch.int16).to(torch.int32) & 0xFFFF) << 16).view(torch.float32)
        if c.scheme == "mxfp4":
            table = torch.tensor(E2M1, dtype=torch.float32, device=w.device)
            wi = w.to(torch.int64)
            v = torch.stack([table[wi & 0xF], table[wi >> 4]], dim=-1).reshape(
                w.shape[0], rows, cols)
        else:
            v = w.contiguous().view(torch.float8_e4m3fn).to(torch.float32)
        sf = self._scales(s)
        if c.scheme == "fp8_block":
            r = torch.arange(rows, device=w.device)
            if w13:
                half, nb = rows // 2, sf.shape[1] // 2
                r = torch.where(r < half, r // 128, nb + (r - half) // 128)
            else:
                r = r // 128
            return v * sf[:, r, :].repeat_interleave(128, dim=2)[:, :, :cols]
        return v * sf.repeat_interleave(32, dim=2)[:, :, :cols]

    def load(self, layer):
        c = layer.config
        layer.w13_f = self._decode(c, layer.w13, layer.w13_scale, 2 * c.inter, c.hidden, True)
        layer.w2_f = self._decode(c, layer.w2, layer.w2_scale, c.hidden, c.inter, False)
        if layer.backend == "OaiSwigluExperts":
            i = c.inter
            w = layer.w13_f
            layer.w13_f = _torch().stack([w[:, :i], w[:, i:]], dim=2).reshape(w.shape)

    def activation(self, layer, h):
        torch = _torch()
        c, i = layer.config, layer.config.inter
        if layer.backend == "OaiSwigluExperts":
            g, u = h[:, 0::2], h[:, 1::2]
        else:
            g, u = h[:, :i], h[:, i:]
        if c.activation == "silu":
            t = torch.nn.functional.silu(g) * u
        else:
            g = g.clamp(max=SWIGLU_LIMIT)
            u = u.clamp(-SWIGLU_LIMIT, SWIGLU_LIMIT)
            t = g * torch.sigmoid(SWIGLU_ALPHA * g) * (u + 1)
        return t.to(torch.bfloat16).to(torch.float32)

    def requantize(self, c, t):
        torch = _torch()
        if c.scheme in ("bf16", "mxfp4"):
            return t
        g = 128 if c.scheme == "fp8_block" else 32
        out = torch.empty_like(t)
        for start in range(0, t.shape[1], g):
            blk = t[:, start:start + g]
            amax = blk.abs().amax(dim=1, keepdim=True)
            if c.scheme == "fp8_block":
                s = amax.clamp(min=1e-10) / 448.0
            else:
                e = ((amax.view(torch.int32) >> 23) & 0xFF) - 127 - 8
                s = torch.ldexp(torch.ones_like(amax), e.clamp(min=-127).to(torch.float32))
            q = (blk / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).to(torch.float32)
            out[:, start:start + g] = q * s
        return out

    def weigh(self, c, y, w):
        return y * w[:, None] * c.routed_scaling

    def apply(self, layer, x, topk_ids, topk_weights):
        torch = _torch()
        c = layer.config
        m, k = topk_ids.shape
        emap = layer.expert_map.to(torch.int64)
        local = emap[topk_ids.to(torch.int64)].reshape(-1)
        out = torch.zeros((m, c.hidden), dtype=torch.float32, device=x.device)
        w = topk_weights.reshape(-1)
        order = torch.argsort(local, stable=True)
        counts = torch.bincount(local[local >= 0], minlength=c.local_experts).tolist()
        start = int((local < 0).sum())
        for e, n in enumerate(counts):
            if n == 0:
                continue
            pairs = order[start:start + n]
            start += n
            h = x[pairs // k] @ layer.w13_f[e].T
            q = self.requantize(c, self.activation(layer, h))
            y = q @ layer.w2_f[e].T
            out.index_add_(0, pairs // k, self.weigh(c, y, w[pairs]))
        return out


class MoEExampleTorchCpu(MoEExampleTorch):
    """The same on the CPU (torch's CPU kernels)."""

    name = "moe_example_torch_cpu"
    device = "cpu"


class TopkWeightDroppedTorch(MoEExampleTorch):
    """M4 in torch: the top-k weights never applied; must fail (a torch path that cannot fail
    would prove nothing)."""

    name = "moe_topk_weight_dropped_torch"

    def weigh(self, c, y, w):
        return y * c.routed_scaling
