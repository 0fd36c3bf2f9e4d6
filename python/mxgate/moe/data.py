"""MoE cases (docs/moe.md §3): the layer config, the token count, the router's top-k choice
and the weights. Every number derives from the case's seed.

Data are exact where exactness is possible: activations are +-7 2^j per 32-block (lossless
under 1x32 and 1x128 quantization, as the dense layers' data, docs/layers.md §3.1), weight codes
are E4M3 codes of integers in [-8, 8] (bf16: the same integers), E2M1 codes any of the 16, scales
powers of two per expert (e8m0 bytes 127 + e, e in [-2, 1]) or fp32 (1 + f/8) 2^e. So the w13
GEMM is exact in fp32; the activation between the GEMMs is where exactness ends (docs/moe.md §2).
Experts get different scales: a kernel that reads another expert's scales shows itself
(FlashInfer#5438 was invisible when all experts shared them)."""

from dataclasses import dataclass, replace
from typing import Optional, Sequence, Tuple

import numpy as np

from .. import reference as ref
from ..errors import InputError
from ..layers.protocol import parse_words
from .config import MoEConfig, config_from_words

ROUTINGS = ("random", "all_to_first", "empty_ends", "single_token")
_CONVENTION = "ocp_mx"

# (name, hidden, moe_intermediate_size, routed experts, top-k, routed_scaling_factor, scheme)
# from the models' configs (docs/moe.md §3 cites them); the generator scales hidden and
# inter down to the host (at most 512) but keeps E, top-k and each TP size's K % 128 residue.
MODELS = (
    ("DeepSeek-V3", 7168, 2048, 256, 8, 2.5, "fp8_block"),
    ("Kimi-K2", 7168, 2048, 384, 8, 1.0, "fp8_block"),
    ("Qwen3-30B-A3B", 2048, 768, 128, 8, 1.0, "fp8_block"),
    ("Qwen3-235B-A22B", 4096, 1536, 128, 8, 1.0, "fp8_block"),
    ("gpt-oss-120b", 2880, 2880, 128, 4, 1.0, "mxfp4"),
    ("DeepSeek-V4-Flash", 4096, 2048, 256, 6, 1.0, "mxfp4"),
)


@dataclass(frozen=True)
class Case:
    """One MoE case: the layer config, M tokens, the data seed and the routing regime."""

    config: MoEConfig
    m: int = 4
    seed: int = 0
    routing: str = "random"

    def __post_init__(self) -> None:
        if self.routing not in ROUTINGS:
            raise InputError(f"case: routing '{self.routing}' is not one of "
                             f"{', '.join(ROUTINGS)}")
        if not 1 <= self.m <= 4096:
            raise InputError(f"case: m {self.m} is not in 1..4096")
        c = self.config
        if c.local_experts * 2 * c.inter * c.hidden > 1 << 24:
            raise InputError("case: the rank's expert weights are above 2^24 elements "
                             "(the host makes this layer's data)")

    def text(self) -> str:
        return f"{self.config.text()} m={self.m} seed={self.seed} routing={self.routing}"

    @classmethod
    def parse(cls, text: str) -> "Case":
        words = parse_words(text)
        extra = {k: words.pop(k) for k in ("m", "seed", "routing") if k in words}
        config = config_from_words(words)
        if words:
            raise InputError(f"case text: unknown key '{sorted(words)[0]}'")
        try:
            m, seed = int(extra.get("m", 4)), int(extra.get("seed", 0))
        except ValueError:
            raise InputError("case text: m and seed are integers") from None
        if seed < 0:
            raise InputError(f"case text: seed {seed} is negative")
        return cls(config, m, seed, extra.get("routing", "random"))


def draw(rng: np.random.Generator, buckets: Sequence[Tuple[int, int]], index: int) -> Case:
    """Case `index` of a run: its token count from the adapter's bucket index % len(buckets),
    so every declared bucket is reached (ROCm/aiter#3933: one bucket's kernel was wrong)."""
    s = rng.random()
    scheme = "fp8_block" if s < 0.4 else "mxfp8" if s < 0.65 else "mxfp4" if s < 0.85 else "bf16"
    ws = {"fp8_block": "e8m0" if rng.random() < 0.5 else "fp32", "bf16": "none"}.get(scheme, "e8m0")
    model = MODELS[rng.integers(len(MODELS))]
    tp = int((1, 2, 4, 8)[rng.integers(4)])
    # inter per rank keeps the model's I / TP residue mod 128 (Qwen3-30B at TP 8: 96), scaled
    # down to at most 3 blocks of 128 past the residue.
    full = model[2] // tp
    inter = full % 128 + 128 * int(rng.integers(0 if full % 128 else 1, 3))
    hidden = 32 * int(rng.integers(1, 9)) if rng.random() < 0.7 else 128 * int(rng.integers(1, 4))
    use_tp = rng.random() < 0.5
    if use_tp and tp > 1:  # the whole layer's data is made: keep tp * inter * hidden small
        inter, hidden = full % 128 + 128 * (full % 128 == 0), min(hidden, 128)
    if scheme in ("mxfp8", "mxfp4"):
        inter = max(32, -(-inter // 32) * 32)
    experts = int((4, 8, 16)[rng.integers(3)])
    top_k = int(min(model[4], experts, 1 + rng.integers(4)))
    ep = int((1, 2, 4)[rng.integers(3)]) if rng.random() < 0.3 else 1
    activation = "swiglu_oai" if model[0].startswith("gpt-oss") and rng.random() < 0.8 else \
        "silu" if rng.random() < 0.85 else "swiglu_oai"
    config = MoEConfig(scheme=scheme, hidden=hidden, inter=inter, experts=experts, top_k=top_k,
                       tp=tp if use_tp else 1, ep=ep, activation=activation,
                       routed_scaling=float(model[5]) if rng.random() < 0.7 else 1.0,
                       weight_scale=ws)
    lo, hi = buckets[index % len(buckets)]
    m = int(rng.integers(lo, hi + 1))
    r = rng.random()
    routing = "random" if r < 0.55 else "all_to_first" if r < 0.7 else "empty_ends" if r < 0.85 \
        else "single_token"
    return Case(config, m, int(rng.integers(0, 1 << 30)), routing)


def routing(case: Case) -> Tuple[np.ndarray, np.ndarray]:
    """(topk_ids (M, top_k) int32 global ids, distinct per token; topk_weights float32 > 0):
    the top-k of random router logits, softmax over the chosen (renormalized), with the regime's
    experts made empty or busy by the logits."""
    c = case.config
    rng = np.random.default_rng([case.seed, 7])
    logits = rng.standard_normal((case.m, c.experts))
    if case.routing == "all_to_first":  # every token to experts 0..k-1: the others get none
        logits[:, :c.top_k] += 100.0
    elif case.routing == "empty_ends" and c.experts - 2 >= c.top_k:
        logits[:, [0, c.experts - 1]] = -np.inf  # the first and the last expert get none
    elif case.routing == "single_token" and case.m > 1:
        logits[:, 0] = -np.inf
        logits[0, 0] = 100.0  # expert 0 gets exactly token 0
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :c.top_k]
    chosen = np.take_along_axis(logits, ids, axis=1)
    chosen = np.where(np.isfinite(chosen), chosen, -50.0)
    w = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    return ids.astype(np.int32), w.astype(np.float32)


def activation(case: Case) -> np.ndarray:
    """x (M, H) float32: every element +-7 2^j, j from a per-32-block base in [-2, 2] minus
    0..2; any 1x32 or 1x128 group's amax / 448 is a power of two, so quantization is lossless."""
    h = case.config.hidden
    rng = np.random.default_rng([case.seed, 2])
    base = np.repeat(rng.integers(-2, 3, size=(case.m, -(-h // 32))), 32, axis=1)[:, :h]
    j = base - rng.integers(0, 3, size=(case.m, h))
    sign = np.where(rng.random((case.m, h)) < 0.5, -1.0, 1.0)
    return (sign * 7.0 * np.exp2(j)).astype(np.float32)


@dataclass
class Checkpoint:
    """All E experts' weights as a checkpoint holds them (MoELayer's layouts, E = all experts
    of the layer); shard() gives a rank's part."""

    w13: np.ndarray
    w13_scale: Optional[np.ndarray]
    w2: np.ndarray
    w2_scale: Optional[np.ndarray]


def _pack_e2m1(codes: np.ndarray) -> np.ndarray:
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def _weight(rng, c: MoEConfig, shape) -> np.ndarray:
    if c.scheme == "mxfp4":
        return _pack_e2m1(rng.integers(0, 16, size=shape).astype(np.uint8))
    ints = rng.integers(-8, 9, size=shape)
    if c.scheme == "bf16":
        return (ints.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return _e4m3_of_ints()[ints + 8]


_E4M3_INTS = None


def _e4m3_of_ints() -> np.ndarray:
    """The E4M3 codes of -8 .. 8 (mxgate's encoder, once): the weights index it."""
    global _E4M3_INTS
    if _E4M3_INTS is None:
        _E4M3_INTS = ref.encode(np.arange(-8, 9, dtype=np.float64), "e4m3fn", _CONVENTION)
    return _E4M3_INTS


def _scales(rng, c: MoEConfig, shape, const_axis: Optional[int]) -> Optional[np.ndarray]:
    """Per-expert scales, e in [-2, 1] drawn per expert and block; with const_axis, constant
    along that axis (the sharded I dimension: every TP shard sees the same scales however the
    blocks fall)."""
    if c.scheme == "bf16":
        return None
    e = rng.integers(-2, 2, size=shape)
    if const_axis is not None:
        e = np.repeat(np.take(e, [0], axis=const_axis), shape[const_axis], axis=const_axis)
    if c.weight_scale == "e8m0":
        return (e + 127).astype(np.uint8)
    frac = rng.integers(0, 8, size=shape)
    if const_axis is not None:
        frac = np.repeat(np.take(frac, [0], axis=const_axis), shape[const_axis], axis=const_axis)
    return ((1 + frac / 8) * np.exp2(e.astype(np.float64))).astype(np.float32)


def checkpoint(case: Case, config: Optional[MoEConfig] = None) -> Checkpoint:
    """The whole layer's checkpoint for `config` (default the case's) with tp 1, ep 1 sizes:
    inter is config.inter * config.tp (the unsharded I), every expert present."""
    c = config or case.config
    i_full, h, e = c.inter * c.tp, c.hidden, c.experts
    rng = np.random.default_rng([case.seed, 1])
    w13 = _weight(rng, c, (e, 2 * i_full, h))
    w2 = _weight(rng, c, (e, h, i_full))
    const = c.tp > 1  # shard-invariant scales along I
    if c.scheme == "fp8_block":
        s13 = _scales(rng, c, (e, 2, -(-i_full // 128), -(-h // 128)), 2 if const else None)
        s2 = _scales(rng, c, (e, -(-h // 128), -(-i_full // 128)), 2 if const else None)
    elif c.scheme in ("mxfp8", "mxfp4"):
        s13 = _scales(rng, c, (e, 2 * i_full, h // 32), None)
        s2 = _scales(rng, c, (e, h, i_full // 32), 2 if const else None)
    else:
        s13 = s2 = None
    return Checkpoint(w13, s13, w2, s2)


def shard(full: Checkpoint, c: MoEConfig, tp_rank: int, ep_rank: int) -> Checkpoint:
    """The rank's part of the whole checkpoint: experts [ep_rank E/ep, ...), the gate's and the
    up's rows [tp_rank I, (tp_rank + 1) I), w2's columns the same (as a loader narrows them)."""
    i, le = c.inter, c.local_experts
    ex = slice(ep_rank * le, (ep_rank + 1) * le)
    half = full.w13.shape[1] // 2
    rows = np.r_[tp_rank * i:(tp_rank + 1) * i, half + tp_rank * i:half + (tp_rank + 1) * i]
    pack = 2 if c.scheme == "mxfp4" else 1
    w13 = full.w13[ex][:, rows]
    w2 = full.w2[ex][:, :, tp_rank * i // pack:(tp_rank + 1) * i // pack]
    s13, s2 = full.w13_scale, full.w2_scale
    if c.scheme == "fp8_block":
        nb = -(-i // 128)  # tp > 1: constant along I, so every shard's blocks hold the same
        s13 = s13[ex][:, :, :nb].reshape(le, 2 * nb, -1)
        s2 = s2[ex][:, :, :nb]
    elif c.scheme in ("mxfp8", "mxfp4"):
        s13 = s13[ex][:, rows]
        s2 = s2[ex][:, :, tp_rank * i // 32:(tp_rank + 1) * i // 32]
    return Checkpoint(np.ascontiguousarray(w13), None if s13 is None else
                      np.ascontiguousarray(s13), np.ascontiguousarray(w2),
                      None if s2 is None else np.ascontiguousarray(s2))


def expert_map(c: MoEConfig, ep_rank: int) -> np.ndarray:
    m = np.full(c.experts, -1, np.int32)
    le = c.local_experts
    m[ep_rank * le:(ep_rank + 1) * le] = np.arange(le, dtype=np.int32)
    return m


def shrink_candidates(case: Case):
    """Smaller cases, most reduced first (docs/moe.md §3)."""
    c, out = case.config, []

    def cfg(**kw):
        try:
            out.append(replace(case, config=replace(c, **kw)))
        except InputError:
            pass

    if c.tp > 1:
        cfg(tp=1)
    if c.ep > 1:
        cfg(ep=1)
    for e in sorted({c.top_k, 2, 4, c.experts // 2}):
        if c.top_k <= e < c.experts:
            cfg(experts=e, ep=1)
    for k in (1, c.top_k - 1):
        if 1 <= k < c.top_k:
            cfg(top_k=k)
    step = 32 if c.scheme in ("mxfp8", "mxfp4") else 1
    for h in sorted({step, 32, 64, 128, c.hidden // 2 // step * step}):
        if step <= h < c.hidden:
            cfg(hidden=h)
    for i in sorted({step, 32, 64, 128, 129 // step * step, c.inter // 2 // step * step,
                     c.inter - 128}):
        if step <= i < c.inter and (i % 128 == c.inter % 128 or i < 128 or c.tp == 1):
            cfg(inter=i)
    if case.m > 1:
        out += [replace(case, m=1), replace(case, m=case.m // 2), replace(case, m=case.m - 1)]
    if c.routed_scaling != 1.0:
        cfg(routed_scaling=1.0)
    if c.activation != "silu":
        cfg(activation="silu")
    if c.scheme == "fp8_block" and c.weight_scale == "fp32":
        cfg(weight_scale="e8m0")
    if c.platform != "host":
        cfg(platform="host")
    if case.routing != "random":
        out.append(replace(case, routing="random"))
    return [o for o in out if o != case]
