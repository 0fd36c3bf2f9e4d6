"""What describes one MoE layer as one rank sees it (MoEConfig), what mxgate hands the user's
code (MoELayer) and what the user implements around it (MoEAdapter): docs/moe.md §1."""

from dataclasses import dataclass, fields
from typing import Any, Dict, Optional, Sequence, Tuple

from ..errors import InputError

SCHEMES = ("bf16", "fp8_block", "mxfp8", "mxfp4")  # mxfp4: weight-only, bf16 activations
ACTIVATIONS = ("silu", "swiglu_oai")
WEIGHT_SCALES = ("e8m0", "fp32", "none")
# gpt-oss's clamped SwiGLU: gate clamped above at `limit`, up to [-limit, limit],
# out = gate * sigmoid(alpha * gate) * (up + 1) (openai/gpt-oss model.py: limit 7.0, alpha 1.702).
SWIGLU_LIMIT = 7.0
SWIGLU_ALPHA = 1.702


def _bad(field: str, value: Any, allowed: str) -> InputError:
    return InputError(f"MoEConfig.{field}: {value!r} is not {allowed}")


@dataclass(frozen=True)
class MoEConfig:
    """One MoE layer's routed experts on one rank.

    scheme: bf16 (no scales), fp8_block (E4M3, 1x128 activation groups, 128x128 weight blocks),
    mxfp8 (E4M3 + e8m0 per 1x32 on both operands) or mxfp4 (E2M1 weights + e8m0 per 1x32,
    bf16 activations); hidden H; inter I (moe_intermediate_size on this rank: I_full / tp);
    experts E (the whole layer's routed experts; a rank holds E / ep of them); top_k;
    tp, ep: tensor- and expert-parallel sizes; activation: silu (SiLU-and-mul) or swiglu_oai
    (gpt-oss's clamped SwiGLU); routed_scaling: the factor the routed sum is multiplied by
    (DeepSeek-V3's routed_scaling_factor 2.5); weight_scale: e8m0 / fp32 (fp8_block), e8m0
    (mxfp8, mxfp4), none (bf16); platform: any string, the adapter decides what it means."""

    scheme: str = "fp8_block"
    hidden: int = 128
    inter: int = 128
    experts: int = 8
    top_k: int = 2
    tp: int = 1
    ep: int = 1
    activation: str = "silu"
    routed_scaling: float = 1.0
    weight_scale: str = "e8m0"
    platform: str = "host"

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise _bad("scheme", self.scheme, "one of " + ", ".join(SCHEMES))
        for name in ("hidden", "inter", "experts", "top_k", "tp", "ep"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise _bad(name, v, "a positive integer")
        if self.top_k > self.experts:
            raise InputError(f"MoEConfig.top_k: {self.top_k} is above experts {self.experts}")
        if self.experts % self.ep:
            raise InputError(f"MoEConfig.ep: {self.ep} does not divide experts {self.experts}")
        if self.activation not in ACTIVATIONS:
            raise _bad("activation", self.activation, "one of " + ", ".join(ACTIVATIONS))
        if not isinstance(self.routed_scaling, (int, float)) or not self.routed_scaling > 0:
            raise _bad("routed_scaling", self.routed_scaling, "a positive number")
        takes = {"bf16": ("none",), "fp8_block": ("e8m0", "fp32")}.get(self.scheme, ("e8m0",))
        if self.weight_scale not in takes:
            raise InputError(f"MoEConfig.weight_scale: {self.scheme} experts take "
                             f"{' or '.join(takes)} scales, not {self.weight_scale!r}")
        if self.scheme in ("mxfp8", "mxfp4") and (self.hidden % 32 or self.inter % 32):
            raise InputError(f"MoEConfig: {self.scheme} needs hidden and inter multiples of 32 "
                             f"(got {self.hidden}, {self.inter})")
        if self.scheme == "mxfp4" and (self.hidden % 2 or self.inter % 2):
            raise InputError("MoEConfig: mxfp4 packs two codes a byte: hidden and inter even")
        if not isinstance(self.platform, str) or not self.platform:
            raise _bad("platform", self.platform, "a platform name")

    @property
    def local_experts(self) -> int:
        return self.experts // self.ep

    def text(self) -> str:
        return " ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


def config_from_words(words: Dict[str, str]) -> MoEConfig:
    kw: Dict[str, Any] = {}
    for f in fields(MoEConfig):
        if f.name not in words:
            continue
        v = words.pop(f.name)
        if f.name == "routed_scaling":
            try:
                kw[f.name] = float(v)
            except ValueError:
                raise _bad(f.name, v, "a positive number") from None
        elif f.type in (int, "int"):
            try:
                kw[f.name] = int(v)
            except ValueError:
                raise _bad(f.name, v, "a positive integer") from None
        else:
            kw[f.name] = v
    return MoEConfig(**kw)


class MoELayer:
    """One rank's routed experts as the loader produced them, which the user's load() may
    replace (reorder, interleave, shuffle, upcast) and annotate.

    w13: (E_local, 2I, H) the fused gate/up weight, rows 0..I-1 the gate (w1), rows I..2I-1 the
    up projection (w3), as vLLM's FusedMoE loads a checkpoint; w2: (E_local, H, I) the down
    projection. Codes: uint8 E4M3 (fp8_block, mxfp8), uint8 E2M1 two a byte along the last
    axis, element 2i in the low nibble (mxfp4), uint16 bf16 bits (bf16). Scales: fp8_block
    (E_local, 2 ceil(I/128), ceil(H/128)) (the gate's 128-row blocks, then the up's) and
    (E_local, ceil(H/128), ceil(I/128)), uint8 e8m0 or float32; mxfp8 / mxfp4 (E_local, 2I, H/32) and (E_local, H, I/32) uint8 e8m0; bf16 None.
    expert_map: (E,) int32, the global expert id -> this rank's local index or -1 (not here).
    backend: what select returned."""

    def __init__(self, config: MoEConfig, w13: Any, w13_scale: Any, w2: Any, w2_scale: Any,
                 expert_map: Any, backend: Optional[str] = None) -> None:
        self.config = config
        self.w13, self.w13_scale, self.w2, self.w2_scale = w13, w13_scale, w2, w2_scale
        self.expert_map = expert_map
        self.backend = backend

    def __repr__(self) -> str:
        return f"<mxgate MoELayer {self.config.text()} backend={self.backend}>"


class MoEAdapter:
    """Subclass around your own fused-MoE code (docs/moe.md §1).

    select(config) -> str | None     the MoE backend your code picks, None when none can
    load(layer) -> None              your load-time processing (w13 reorder / interleave,
                                     shuffle, scale swizzle, padding): may replace any array
    apply(layer, x, topk_ids, topk_weights) -> y
                                     your forward: x (M, H) float32 with bf16-exact values;
                                     topk_ids (M, top_k) int32 GLOBAL expert ids; topk_weights
                                     (M, top_k) float32; y (M, H) float32: the routed sum times
                                     routed_scaling (on an EP rank: the sum over its experts)

    Declarations (data the bound is derived from, docs/moe.md §2):
    token_buckets(config) -> [(lo, hi)]  the token-count ranges your backend picks kernels by;
                                     generated cases cover every one
    intermediate: "bf16" or "fp32"   the precision the activation output is rounded to before
                                     it is quantized for (or fed to) the w2 GEMM
    activation_error: relative error of your activation function against the exact one
                                     (default 2^-20: a few fp32 ulps of exp, divide, multiply)
    output: "fp32" or "bf16"         y rounded to bf16 before it is returned
    tensor_type / device: "numpy" (default) or "torch" (arrays as torch tensors on device)."""

    name: Optional[str] = None
    tensor_type: str = "numpy"
    device: str = "cpu"
    intermediate: str = "bf16"
    activation_error: float = 2.0**-20
    output: str = "fp32"

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__.lower()

    def select(self, config: MoEConfig) -> Optional[str]:
        raise NotImplementedError

    def load(self, layer: MoELayer) -> None:
        return None

    def apply(self, layer: MoELayer, x: Any, topk_ids: Any, topk_weights: Any) -> Any:
        raise NotImplementedError

    def token_buckets(self, config: MoEConfig) -> Sequence[Tuple[int, int]]:
        return ((1, 16),)

    def check_available(self) -> None:
        """Raises mxgate.Unavailable when what the adapter wraps is absent here."""

    def __repr__(self) -> str:
        return f"<mxgate MoE adapter {self.name}>"
