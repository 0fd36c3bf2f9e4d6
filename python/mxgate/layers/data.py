"""Cases of the layer properties: the drawn config, M, the data seed and regime; the
checkpoint and activation each case makes; and mxgate's reference for them (docs/layers.md §3).

Data are exact-mode by construction, so that every correct path gives the exact result:
- weight codes are the E4M3 codes of integers in [-8, 8] (mxgate.encode), weight scales powers
  of two (e8m0 bytes 127 + e, e in [-2, 1]; fp32 scales (1 + f/8) 2^e), and in the edge
  regimes the bytes 0x00 / 0x01 (2^-127, 2^-126) or one NaN block (0xFF);
- every activation element is +-7 2^j: any 1x32 or 1x128 group's amax is 7 2^j, so the scale
  amax / 448 = 2^(j-6) is a power of two and every E4M3 code is exact, for the MX rule
  (floor(log2 amax) - 8), the fp32 rule and the power-of-two rules alike: the quantization of
  the activation is lossless under any grouping (a TP shard's groups included).
- mxfp4 / nvfp4 weights (weight-only: the activation stays bf16) are E2M1 codes drawn from all
  16, packed two a byte; mxfp4 scales are e8m0 as above; nvfp4 block scales are E4M3 (1 or
  1.5) 2^e, e in [-2, 1] (edge regime: E4M3 zero, subnormals 2^-9, 2^-8, min normal 2^-6; NaN
  0x7F), its global scale 2^g, g in [-2, 2] (edge regime 2^-64): each weight element has at
  most 4 significant bits, so it is exact in bf16 and the reference is the bf16 GEMM of x and
  the weight the reference dequantizes.
Every fp32 sum of such products is exact, so the checks are mxgate.check_gemm exact mode."""

from dataclasses import dataclass, replace
from typing import Optional, Tuple

import numpy as np

from .. import reference as ref
from ..errors import InputError
from .protocol import FP4_SCHEMES, LayerConfig, config_from_words, parse_words

DATA = ("exact", "edge0", "nan")
_CONVENTION = "ocp_mx"
_BLOCK_CONVENTION = "vllm_group_quant"  # a convention with a 1x128 quantizer (amax / 448)
_NVFP4_CONVENTION = "te_nvfp4_ref"  # its decode: E4M3 block scale times the global scale


@dataclass(frozen=True)
class Case:
    """One case: the layer config, M tokens, the data seed and the scale regime."""

    config: LayerConfig
    m: int = 1
    seed: int = 0
    data: str = "exact"

    def __post_init__(self) -> None:
        # The data is made on the host: a layer config alone (mxgate plan) may be any size.
        c = self.config
        if c.n * c.k * c.tp > 1 << 26:
            raise InputError(f"case: N x K x TP = {c.n * c.k * c.tp} is above 2^26 elements "
                             "(the host makes this layer's data)")
        if c.scheme == "mxfp8" and c.weight_scale != "e8m0":
            # An MX layer's 1x32 scales are e8m0 (OCP MX v1.0 section 5.3); the reference has no
            # MXFP8 GEMM with fp32 block scales, so such a case is never drawn and cannot be run:
            # a layer config alone (mxgate plan, the dispatch model) may still name it.
            raise InputError(f"case: an mxfp8 layer's weight scales are e8m0, not "
                             f"{c.weight_scale} (no MXFP8 reference with fp32 1x32 scales)")

    def text(self) -> str:
        return f"{self.config.text()} m={self.m} seed={self.seed} data={self.data}"

    @classmethod
    def parse(cls, text: str) -> "Case":
        words = parse_words(text)
        extra = {k: words.pop(k) for k in ("m", "seed", "data") if k in words}
        config = config_from_words(words)
        if words:
            raise InputError(f"case text: unknown key '{sorted(words)[0]}'")
        try:
            m, seed = int(extra.get("m", 1)), int(extra.get("seed", 0))
        except ValueError:
            raise InputError("case text: m and seed are integers") from None
        data = extra.get("data", "exact")
        if m < 1 or m > 4096 or seed < 0:
            raise InputError(f"case text: m {m} is not in 1..4096 or seed {seed} is negative")
        if data not in DATA:
            raise InputError(f"case text: data '{data}' is not one of {', '.join(DATA)}")
        return cls(config, m, seed, data)


def draw(rng: np.random.Generator, catalog) -> Case:
    """One generated case (docs/layers.md §3.1)."""
    s = rng.random()  # 1/10 FP4 (weight-only), 2/5 mxfp8, 1/2 fp8_block (Z2-Z5, Z7)
    scheme = ("mxfp4" if s < 0.05 else "nvfp4") if s < 0.1 else \
        "mxfp8" if s < 0.5 else "fp8_block"
    platform = ("host", "gfx950", "gfx942", "sm90")[rng.integers(4)]
    w = rng.random()  # drawn for every scheme: each draw takes the same count of numbers
    if scheme == "mxfp8":
        ws = "e8m0"  # w unused: an MX layer's scales are e8m0 (Case refuses fp32)
    elif scheme == "fp8_block":
        ws = "e8m0" if w < 2 / 3 else "fp32"
    else:
        ws = "e8m0" if scheme == "mxfp4" else "e4m3"
    u = rng.random()
    if u < 0.25 and catalog:
        row = catalog[rng.integers(len(catalog))]
        n, k, tp, parallel = row.n, row.k, row.tp, row.parallel
        if row.quant.startswith("MXFP8"):
            scheme, ws = "mxfp8", "e8m0"
        elif row.quant.startswith("FP8-B128"):
            scheme, ws = "fp8_block", "e8m0" if "ue8m0" in row.quant else "fp32"
        elif row.quant.startswith("MXFP4"):
            scheme, ws = "mxfp4", "e8m0"
    else:
        w = rng.random()
        n = int(rng.integers(1, 49)) if w < 1 / 4 else 16 * int(rng.integers(1, 17)) \
            if w < 1 / 2 else 128 * int(rng.integers(1, 3))
        k = 32 * int(rng.integers(1, 17)) if rng.random() < 0.8 else int(rng.integers(1, 301))
        if scheme in FP4_SCHEMES and k % 2:
            k += 1  # two codes a byte
        tp = (1, 2, 4, 8)[rng.integers(4)]
        parallel = "column" if rng.random() < 0.5 else "row"
    order = None
    if scheme == "fp8_block" and rng.random() < 0.75:
        order = "row_major" if rng.random() < 0.5 else "col_major"
    consumers: Tuple[str, ...] = ()
    if rng.random() < 0.5:
        consumers = tuple(c for c in ("twin", "direct", "mxfp8") if rng.random() < 0.5)
    config = LayerConfig(scheme=scheme, n=n, k=k, tp=tp, parallel=parallel, weight_scale=ws,
                         act_scale_order=order, platform=platform,
                         is_bmm=bool(rng.random() < 1 / 3),
                         skip_weight_relayout=bool(rng.random() < 1 / 3), consumers=consumers)
    m = int(rng.integers(1, 5))
    v = rng.random()
    data = "exact" if v < 0.5 else "edge0" if v < 0.85 else "nan"
    return Case(config, m, int(rng.integers(0, 1 << 30)), data)


def catalog_rows(shapes) -> tuple:
    """The catalog rows the generator draws: FP8 / MXFP8 / MXFP4 layers whose unsharded weight
    is at most 2^21 elements."""
    return tuple(s for s in shapes if s.n * s.k * s.tp <= 1 << 21 and s.k % 2 == 0
                 and s.quant.startswith(("MXFP8", "FP8-B128", "MXFP4")))


@dataclass
class Checkpoint:
    """A layer's weight as the checkpoint holds it: codes (N, K) uint8 E4M3, or (N, K/2) packed
    E2M1 (mxfp4, nvfp4); scales (mxfp8, mxfp4: (N, ceil(K/32)) uint8 e8m0; nvfp4: (N,
    ceil(K/16)) uint8 E4M3; fp8_block: (ceil(N/128), ceil(K/128)) uint8 e8m0 or float32);
    global_scale: nvfp4's float32 (1,) global decode scale, else None."""

    codes: np.ndarray
    scales: np.ndarray
    global_scale: Optional[np.ndarray] = None


def _scale_grid(config: LayerConfig) -> Tuple[int, int, int, int]:
    """(rows, cols, block rows, block cols) of the weight scale grid."""
    if config.scheme in ("mxfp8", "mxfp4"):
        return config.n, -(-config.k // 32), 1, 32
    if config.scheme == "nvfp4":
        return config.n, -(-config.k // 16), 1, 16
    return -(-config.n // 128), -(-config.k // 128), 128, 128


def pack_e2m1(codes: np.ndarray) -> np.ndarray:
    """(N, K) E2M1 codes (K even) two a byte, element 2i in the low nibble (docs/fp4.md §5.1)."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def _nvfp4_scales(rng: np.random.Generator, data: str, shape) -> np.ndarray:
    """E4M3 block-scale bytes: (1 or 1.5) 2^e, e in [-2, 1] (0x38 is 1.0: exponent field 7,
    0x3C is 1.5); edge0: 0x00 (zero), 0x01 (2^-9), 0x02 (2^-8), 0x08 (2^-6, min normal)."""
    if data == "edge0":
        return np.array([0x00, 0x01, 0x02, 0x08], np.uint8)[rng.integers(0, 4, size=shape)]
    e = rng.integers(-2, 2, size=shape)
    return (((7 + e) << 3) | (4 * rng.integers(0, 2, size=shape))).astype(np.uint8)


def checkpoint(case: Case, config: Optional[LayerConfig] = None) -> Checkpoint:
    """The checkpoint of case.config (or of `config`, e.g. the unsharded layer, from the same
    seed). Scale exponents are constant along a sharded dimension whose per-rank size is off
    the scale block, so that slicing the scale grid at the shard's blocks is the shard's grid."""
    config = config or case.config
    rng = np.random.default_rng([case.seed, 1])
    rows, cols, br, bc = _scale_grid(config)
    global_scale = None
    if config.scheme in FP4_SCHEMES:
        codes = pack_e2m1(rng.integers(0, 16, size=(config.n, config.k)).astype(np.uint8))
    else:
        ints = rng.integers(-8, 9, size=(config.n, config.k)).astype(np.float64)
        codes = ref.encode(ints, "e4m3fn", _CONVENTION)
    if case.data == "edge0":
        e = rng.integers(-127, -125, size=(rows, cols))
    else:
        e = rng.integers(-2, 2, size=(rows, cols))
    if config.scheme == "nvfp4":
        scales = _nvfp4_scales(rng, case.data, (rows, cols))
        g = -64 if case.data == "edge0" else int(rng.integers(-2, 3))
        global_scale = np.array([2.0**g], np.float32)
    elif config.weight_scale == "e8m0":
        scales = (e + 127).astype(np.uint8)
    else:
        frac = rng.integers(0, 8, size=(rows, cols)) if case.data == "exact" else 0
        scales = ((1 + frac / 8) * np.exp2(e.astype(np.float64))).astype(np.float32)
    c = case.config  # the per-rank config decides which dimension is sharded
    along_n = c.tp > 1 and c.parallel == "column" and c.n % br
    along_k = c.tp > 1 and c.parallel == "row" and c.k % bc
    if along_n:
        scales[:] = scales[:1, :]
    if along_k:
        scales[:] = scales[:, :1]
    if config.weight_scale in ("e8m0", "e4m3") and case.data == "nan":
        # After the fill, along the constant dimension, so that no shard loses the NaN block.
        r, col = rng.integers(rows), rng.integers(cols)
        nan = 0xFF if config.weight_scale == "e8m0" else 0x7F  # E4M3FN NaN: S.1111.111
        scales[slice(None) if along_n else r, slice(None) if along_k else col] = nan
    return Checkpoint(codes, scales, global_scale)


def shard(full: Checkpoint, config: LayerConfig, rank: int) -> Checkpoint:
    """Rank `rank`'s slice of the unsharded checkpoint, as a loader narrows weight and scales."""
    rows, cols, br, bc = _scale_grid(config)
    if config.parallel == "column":
        lo = rank * config.n
        first = min(lo // br, full.scales.shape[0] - rows)  # off-block: the values are equal
        return Checkpoint(full.codes[lo:lo + config.n].copy(),
                          full.scales[first:first + rows].copy(), full.global_scale)
    lo = rank * config.k
    first = min(lo // bc, full.scales.shape[1] - cols)
    per = 2 if config.scheme in FP4_SCHEMES else 1  # elements a byte (K is even for FP4)
    return Checkpoint(full.codes[:, lo // per:(lo + config.k) // per].copy(),
                      full.scales[:, first:first + cols].copy(), full.global_scale)


def activation(case: Case, k: Optional[int] = None) -> np.ndarray:
    """x (M, K) float32: every element +-7 2^j, j from a per-32-block base (docs above)."""
    k = k or case.config.k
    rng = np.random.default_rng([case.seed, 2])
    blocks = -(-k // 32)
    base = np.repeat(rng.integers(-2, 3, size=(case.m, blocks)), 32, axis=1)[:, :k]
    j = base - rng.integers(0, 3, size=(case.m, k))
    sign = np.where(rng.random((case.m, k)) < 0.5, -1.0, 1.0)
    return (sign * 7.0 * np.exp2(j)).astype(np.float32)


def quantize_activation(config: LayerConfig, x: np.ndarray):
    """mxgate's reference quantization of x for the layer's scheme: (codes, scales)."""
    if config.scheme == "mxfp8":
        return ref.quantize_mx(x, "e4m3fn", _CONVENTION)
    return ref.quantize_block(x, "e4m3fn", _BLOCK_CONVENTION, scheme="act1x128")


def weight_scales_fp32(config: LayerConfig, ck: Checkpoint) -> np.ndarray:
    """The block weight scales as the reference GEMM takes them (e8m0 decoded by OCP)."""
    if ck.scales.dtype == np.uint8:
        return ref.decode(ck.scales, "e8m0", _CONVENTION)
    return ck.scales


def dequantized_bf16(config: LayerConfig, ck: Checkpoint) -> np.ndarray:
    """The reference's bf16 bits (N, K) of an mxfp8 / mxfp4 / nvfp4 checkpoint's weight."""
    if config.scheme == "mxfp8":
        return ref.dequantize(ck.codes, ck.scales, "e4m3fn", _CONVENTION, scheme="mx",
                              dtype="bf16")
    if config.scheme == "mxfp4":
        return ref.dequantize(ck.codes, ck.scales, None, _CONVENTION, scheme="mxfp4",
                              dtype="bf16", k=config.k)
    if config.scheme == "nvfp4":
        return ref.dequantize(ck.codes, ck.scales, None, _NVFP4_CONVENTION, scheme="nvfp4",
                              dtype="bf16", k=config.k, global_scale=ck.global_scale)
    raise InputError(f"dequantized_bf16: {config.scheme} weights are not dequantized to bf16")


def check_output(config: LayerConfig, ck: Checkpoint, x: np.ndarray, y: np.ndarray,
                 accumulator: Optional[str] = None):
    """mxgate.check_gemm of y against the exact oracle of (x quantized, the checkpoint); for the
    weight-only FP4 schemes, the bf16 GEMM of x and the reference's dequantized weight. With an
    accumulator (a model of mxgate.accumulators()): bound mode under that model."""
    mode = dict(mode="bound", accumulator=accumulator) if accumulator else dict(mode="exact")
    if config.scheme in FP4_SCHEMES:
        a = (np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return ref.check_gemm(a, None, dequantized_bf16(config, ck), None, y, scheme="bf16",
                              **mode)
    a, a_scales = quantize_activation(config, x)
    if config.scheme == "mxfp8":
        return ref.check_gemm(a, a_scales, ck.codes, ck.scales, y, scheme="mx", **mode)
    return ref.check_gemm(a, a_scales, ck.codes, weight_scales_fp32(config, ck), y,
                          scheme="block", **mode)


def fused_activation(config: LayerConfig, x: np.ndarray, order: str):
    """(codes, scales in `order`'s memory order) of x's 1x128 quantization by the reference."""
    codes, scales = ref.quantize_block(x, "e4m3fn", _BLOCK_CONVENTION, scheme="act1x128")
    scales = np.asfortranarray(scales) if order == "col_major" else np.ascontiguousarray(scales)
    return codes, scales


def preshuffle(codes: np.ndarray) -> np.ndarray:
    """AITER shuffle_weight(w, (16, 16)) of 1-byte codes, as docs/layouts.md §1 states it:
    view(N/16, 16, K/32, 2, 16).permute(0, 2, 3, 1, 4) (K/BK x BK/KP packs of KP = 16)."""
    n, k = codes.shape
    if n % 16 or k % 32:
        raise InputError(f"preshuffle: N {n} % 16 or K {k} % 32 is not 0")
    v = codes.reshape(n // 16, 16, k // 32, 2, 16).transpose(0, 2, 3, 1, 4)
    return np.ascontiguousarray(v).reshape(n, k)


def shrink_candidates(case: Case):
    """Smaller cases to try, most reduced first (docs/layers.md §3.3)."""
    c = case.config
    out = []

    def cfg(**kw):
        try:
            out.append(replace(case, config=replace(c, **kw)))
        except InputError:
            pass

    if c.tp > 1:
        for tp in sorted({1, 2, c.tp // 2} - {c.tp}):
            if tp < c.tp:
                cfg(tp=tp)
    for n in sorted({1, 2, 16, 32, 128, c.n // 2, c.n - 16, c.n - 1}):
        if 1 <= n < c.n:
            cfg(n=n)
    for k in sorted({1, 32, 64, 96, 128, 160, 256, c.k // 2, c.k - 32 * (c.k > 32), c.k - 1,
                     (c.k // 2) // 32 * 32}):
        if 1 <= k < c.k:
            cfg(k=k)
    if case.m > 1:
        out += [replace(case, m=1), replace(case, m=case.m - 1)]
    for flag in ("is_bmm", "skip_weight_relayout"):
        if getattr(c, flag):
            cfg(**{flag: False})
    for i in range(len(c.consumers)):
        cfg(consumers=c.consumers[:i] + c.consumers[i + 1:])
    if c.act_scale_order is not None:
        cfg(act_scale_order=None)
    if c.platform != "host":
        cfg(platform="host")
    if case.data != "exact":
        out.append(replace(case, data="exact"))
    if c.tp == 1 and c.parallel != "column":
        cfg(parallel="column")
    for s in (0, 1, 2):
        if s < case.seed:
            out.append(replace(case, seed=s))
    return out
