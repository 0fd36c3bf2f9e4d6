"""A small linear-kernel chain in numpy with the structure of vLLM's linear kernel classes
(can_implement, process_weights_after_loading, apply_weights; docs/dispatch_model.md for the
rules it follows), wrapped as an mxgate.layers.LayerAdapter. It passes every layer property;
linear_example_faulty plants one dispatch bug of the zoo (Z1-Z7) in it at a time.

Its numbers are its own: E4M3 / e8m0 / bf16 decoded from the format specifications
(mxgate.adapters.numpy), activations quantized by its own numpy quantizers, GEMMs as numpy
float32 matmuls; nothing here calls mxgate's reference. docs/layers.md §4."""

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import Unsupported
from ..layers import Layer, LayerAdapter, LayerConfig, QuantizedActivation
from .numpy import E2M1, E4M3FN, bf16_values, e8m0_values, expand, to_bf16_bits

DOT_SCALED_K_ALIGN = 128  # tl.dot_scaled tiles K by 128, unmasked (one constant: load, apply)
_POISON = 0xFF  # what lies past a buffer (E4M3 NaN, e8m0 NaN), as mxgate's harness poisons

_FINITE = np.flatnonzero(~np.isnan(E4M3FN))
_ORDER = _FINITE[np.argsort(E4M3FN[_FINITE], kind="stable")]


def encode_e4m3(v: np.ndarray) -> np.ndarray:
    """Nearest E4M3FN code of each value (saturating): exact for the values that have one."""
    vals = E4M3FN[_ORDER]
    i = np.clip(np.searchsorted(vals, v), 1, len(vals) - 1)
    pick = np.where(np.abs(vals[i - 1] - v) <= np.abs(vals[i] - v), i - 1, i)
    return _ORDER[pick].astype(np.uint8)


def quantize_mx(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per token MXFP8: e8m0 scale 2^(floor(log2 amax) - 8) per 1x32 block (OCP MX v1.0)."""
    m, k = x.shape
    xp = np.zeros((m, -(-k // 32) * 32), np.float32)
    xp[:, :k] = x
    amax = np.abs(xp.reshape(m, -1, 32)).max(axis=2)
    e = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1))) - 8, -127)
    scale = np.exp2(e)
    codes = encode_e4m3((xp.reshape(m, -1, 32) / scale[..., None]).reshape(m, -1))[:, :k]
    return codes, (e + 127).astype(np.uint8)


def quantize_1x128(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per 1x128 group: fp32 scale amax / 448, row-major (M, ceil(K/128))."""
    m, k = x.shape
    xp = np.zeros((m, -(-k // 128) * 128), np.float32)
    xp[:, :k] = x
    amax = np.abs(xp.reshape(m, -1, 128)).max(axis=2)
    scale = np.where(amax > 0, amax / np.float32(448), 1).astype(np.float32)
    codes = encode_e4m3((xp.reshape(m, -1, 128) / scale[..., None]).reshape(m, -1))[:, :k]
    return codes, scale


def shuffle_weight(w: np.ndarray) -> np.ndarray:
    """AITER shuffle_weight(w, (16, 16)) for 1-byte elements, by its closed form: the byte of
    (n, k) goes to 16*K*(n/16) + 256*(k/16) + 16*(n%16) + k%16."""
    n, k = w.shape
    assert n % 16 == 0 and k % 32 == 0, "shuffle_weight needs N % 16 == 0 and K % 32 == 0"
    rows, cols = np.meshgrid(np.arange(n), np.arange(k), indexing="ij")
    dest = 16 * k * (rows // 16) + 256 * (cols // 16) + 16 * (rows % 16) + cols % 16
    out = np.empty(n * k, np.uint8)
    out[dest.reshape(-1)] = w.reshape(-1)
    return out.reshape(n, k)


def unshuffle_weight(w: np.ndarray) -> np.ndarray:
    n, k = w.shape
    rows, cols = np.meshgrid(np.arange(n), np.arange(k), indexing="ij")
    src = 16 * k * (rows // 16) + 256 * (cols // 16) + 16 * (rows % 16) + cols % 16
    return w.reshape(-1)[src]


def upcast_e8m0(scales: np.ndarray) -> np.ndarray:
    """vLLM's upcast of static e8m0 weight scales to fp32 (OCP: 0x00 = 2^-127, 0xFF = NaN)."""
    return e8m0_values(scales)


def dequant_mxfp8_to_bf16(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """bf16 bits of an MXFP8 weight (exact for E4M3 x 2^e)."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = E4M3FN[codes] * expand(e8m0_values(scales), codes.shape[0], codes.shape[1], 1, 32)
    return to_bf16_bits(v)


def unpack_e2m1(packed: np.ndarray) -> np.ndarray:
    """(N, K/2) bytes -> (N, K) E2M1 codes: element 2i in the low nibble (OCP MX v1.0 §5.3)."""
    out = np.empty((packed.shape[0], 2 * packed.shape[1]), np.uint8)
    out[:, 0::2] = packed & 0x0F
    out[:, 1::2] = packed >> 4
    return out


def dequant_fp4_to_bf16(layer: Layer) -> np.ndarray:
    """bf16 bits of an MXFP4 (e8m0 per 1x32) or NVFP4 (E4M3 per 1x16 times the global scale)
    weight: exact, every element has at most 4 significant bits."""
    codes = unpack_e2m1(layer.weight)
    n, k = codes.shape
    with np.errstate(over="ignore", invalid="ignore"):
        if layer.config.scheme == "mxfp4":
            s = expand(e8m0_values(layer.weight_scale), n, k, 1, 32)
        else:
            g = np.float32(np.asarray(layer.weight_global_scale).reshape(-1)[0])
            s = expand(E4M3FN[layer.weight_scale], n, k, 1, 16) * g
        return to_bf16_bits(E2M1[codes] * s)


def bf16_linear(x: np.ndarray, w_bits: np.ndarray) -> np.ndarray:
    xb = bf16_values(to_bf16_bits(x))
    return (xb @ bf16_values(w_bits).T).astype(np.float32)


def _past_end(buf: np.ndarray, rows: int, width: int) -> np.ndarray:
    """Rows of `width` elements read from a flat buffer of rows of buf.shape[1]: a read past a
    row runs into the next one, past the buffer into poison (an unmasked tile)."""
    flat = np.concatenate([buf.reshape(-1), np.full(width, _POISON, buf.dtype)])
    stride = buf.shape[1]
    return np.stack([flat[r * stride:r * stride + width] for r in range(rows)])


def dot_scaled(a: np.ndarray, a_s: np.ndarray, b: np.ndarray, b_s: np.ndarray) -> np.ndarray:
    """tl.dot_scaled emulated: K walked in tiles of 128 with no mask (a K off 128 reads past
    each row, as the Triton kernel does), e8m0 scales per 1x32, fp32 accumulation."""
    k = a.shape[1]
    kp = -(-k // DOT_SCALED_K_ALIGN) * DOT_SCALED_K_ALIGN
    a, b = _past_end(a, a.shape[0], kp), _past_end(b, b.shape[0], kp)
    a_s, b_s = _past_end(a_s, a.shape[0], kp // 32), _past_end(b_s, b.shape[0], kp // 32)
    with np.errstate(over="ignore", invalid="ignore"):
        da = E4M3FN[a] * np.repeat(e8m0_values(a_s), 32, axis=1)
        db = E4M3FN[b] * np.repeat(e8m0_values(b_s), 32, axis=1)
        return (da @ db.T).astype(np.float32)


def blockscale_gemm(a: np.ndarray, a_s_storage: np.ndarray, b: np.ndarray, b_s: np.ndarray,
                    a_s_order: str) -> np.ndarray:
    """AITER gemm_a8w8_blockscale (row-major As) / _bpreshuffle (column-major As): reads the
    activation scales' storage in its own order, As[m, kb] at m*Kb + kb or kb*M + m."""
    m, k = a.shape
    kb = -(-k // 128)
    s = np.asarray(a_s_storage).ravel(order="K")
    a_s = s.reshape(m, kb) if a_s_order == "row_major" else s.reshape(kb, m).T
    with np.errstate(over="ignore", invalid="ignore"):
        da = E4M3FN[a] * np.repeat(a_s, 128, axis=1)[:, :k]
        db = E4M3FN[b] * expand(b_s, b.shape[0], k, 128, 128)
        return (da @ db.T).astype(np.float32)


class NumpyOps:
    """The chain's numeric steps on host numpy arrays. A kernel calls them through self.ops, so
    that linear_example_torch runs the same chain on torch tensors with its own steps."""

    def tensor(self, a):
        return np.asarray(a)

    def is_bf16(self, a) -> bool:
        return a.dtype == np.uint16

    def is_codes(self, a) -> bool:
        return a.dtype == np.uint8

    def col_major(self, s):
        return np.asfortranarray(s)

    dequant_mxfp8_to_bf16 = staticmethod(dequant_mxfp8_to_bf16)
    dequant_fp4_to_bf16 = staticmethod(dequant_fp4_to_bf16)
    bf16_linear = staticmethod(bf16_linear)
    quantize_mx = staticmethod(quantize_mx)
    quantize_1x128 = staticmethod(quantize_1x128)
    dot_scaled = staticmethod(dot_scaled)
    blockscale_gemm = staticmethod(blockscale_gemm)
    shuffle_weight = staticmethod(shuffle_weight)
    unshuffle_weight = staticmethod(unshuffle_weight)
    upcast_e8m0 = staticmethod(upcast_e8m0)


NUMPY = NumpyOps()


class LinearKernel:
    """Base of the linear kernels (vLLM's MMLinearKernel shape)."""

    platforms: Tuple[str, ...] = ()
    preshuffles_weight = False
    ops: Any = NUMPY

    @classmethod
    def is_supported(cls, platform: str) -> Tuple[bool, str]:
        return platform in cls.platforms, f"{cls.__name__} does not run on {platform}"

    @classmethod
    def can_implement(cls, c: LayerConfig) -> Tuple[bool, str]:
        raise NotImplementedError

    @classmethod
    def load_transforms(cls, c: LayerConfig) -> List[str]:
        return []

    def process_weights_after_loading(self, layer: Layer) -> None:
        pass

    def act_scale_order(self, layer: Layer) -> Optional[str]:
        return None

    def apply_weights(self, layer: Layer, x: Any) -> np.ndarray:
        raise NotImplementedError


class _Mxfp8(LinearKernel):
    @classmethod
    def can_implement(cls, c):
        if c.scheme != "mxfp8":
            return False, "not MXFP8"
        if c.weight_scale != "e8m0":
            return False, "requires e8m0 weight_scale"
        if c.k % 32:
            return False, "K off the MX block of 32"
        return True, ""

    def per_step(self, layer, x):
        w = self.ops.dequant_mxfp8_to_bf16(layer.weight, layer.weight_scale)
        return self.ops.bf16_linear(x, w)


class RocmDotScaledMxfp8LinearKernel(_Mxfp8):
    platforms = ("gfx950", "host")

    @classmethod
    def load_transforms(cls, c):
        return ["dequantize_bf16"] if c.k % DOT_SCALED_K_ALIGN else []

    def process_weights_after_loading(self, layer):
        if self.ops.is_codes(layer.weight) and layer.weight.shape[1] % DOT_SCALED_K_ALIGN:
            layer.weight = self.ops.dequant_mxfp8_to_bf16(layer.weight, layer.weight_scale)

    def apply_weights(self, layer, x):
        x = self.ops.tensor(x.plain) if isinstance(x, QuantizedActivation) else x
        if self.ops.is_bf16(layer.weight):  # bf16: dequantized at load
            return self.ops.bf16_linear(x, layer.weight)
        if x.shape[1] % DOT_SCALED_K_ALIGN == 0:
            a, a_s = self.ops.quantize_mx(x)
            return self.ops.dot_scaled(a, a_s, layer.weight, layer.weight_scale)
        return self.per_step(layer, x)


class EmulationMxfp8LinearKernel(_Mxfp8):
    platforms = ("gfx950", "gfx942", "sm90", "host")

    @classmethod
    def load_transforms(cls, c):
        return ["dequantize_bf16"]

    def process_weights_after_loading(self, layer):
        if self.ops.is_codes(layer.weight):
            layer.weight = self.ops.dequant_mxfp8_to_bf16(layer.weight, layer.weight_scale)

    def apply_weights(self, layer, x):
        x = self.ops.tensor(x.plain) if isinstance(x, QuantizedActivation) else x
        if self.ops.is_bf16(layer.weight):
            return self.ops.bf16_linear(x, layer.weight)
        return self.per_step(layer, x)


class _Fp4WeightOnly(LinearKernel):
    """Weight-only FP4 (W4A16): the E2M1 weight dequantized to bf16, a bf16 GEMM."""

    scheme = ""
    platforms = ("gfx950", "gfx942", "sm90", "host")

    @classmethod
    def can_implement(cls, c):
        return c.scheme == cls.scheme, f"not {cls.scheme}"

    def weight_bf16(self, layer):
        w = layer.weight
        return w if self.ops.is_bf16(w) else self.ops.dequant_fp4_to_bf16(layer)

    def apply_weights(self, layer, x):
        return self.ops.bf16_linear(x, self.weight_bf16(layer))


class EmulationMxfp4LinearKernel(_Fp4WeightOnly):
    """Dequantizes the MXFP4 weight once, at load (vLLM's MXFP4 emulation)."""

    scheme = "mxfp4"

    @classmethod
    def load_transforms(cls, c):
        return ["dequantize_bf16"]

    def process_weights_after_loading(self, layer):
        layer.weight = self.weight_bf16(layer)


class MarlinNvfp4LinearKernel(_Fp4WeightOnly):
    """Keeps the packed NVFP4 weight and dequantizes it in every step (a W4A16 kernel)."""

    scheme = "nvfp4"


class AiterFp8BlockScaledMMKernel(LinearKernel):
    platforms = ("gfx950", "gfx942", "host")

    @classmethod
    def can_implement(cls, c):
        return c.scheme == "fp8_block", "not block FP8"

    @classmethod
    def load_transforms(cls, c):
        return ["upcast_e8m0"] if c.weight_scale == "e8m0" else []

    def upcast(self, layer):
        if self.ops.is_codes(layer.weight_scale):
            layer.weight_scale = self.ops.upcast_e8m0(layer.weight_scale)

    def process_weights_after_loading(self, layer):
        self.upcast(layer)

    def act_scale_order(self, layer):
        return "col_major" if getattr(layer, "weight_preshuffled", False) else "row_major"

    def weight_scales(self, layer):
        s = layer.weight_scale
        return self.ops.upcast_e8m0(s) if self.ops.is_codes(s) else s  # per step until load

    def apply_weights(self, layer, x):
        order = self.act_scale_order(layer)
        if isinstance(x, QuantizedActivation):
            if x.order != order:
                raise Unsupported(f"{type(self).__name__} reads {order} activation scales, "
                                  f"got {x.order}")
            a, a_s = x.data, x.scales
        else:
            a, a_s = self.ops.quantize_1x128(x)
            a_s = self.ops.col_major(a_s) if order == "col_major" else a_s
        w = layer.weight
        if getattr(layer, "weight_preshuffled", False):
            w = self.ops.unshuffle_weight(w)  # the bpreshuffle kernel reads the shuffled layout
        return self.ops.blockscale_gemm(a, a_s, w, self.weight_scales(layer), order)


class CutlassFp8BlockScaledMMKernel(AiterFp8BlockScaledMMKernel):
    platforms = ("sm90", "gfx950", "gfx942", "host")


class AiterPreshuffledFp8BlockScaledMMKernel(AiterFp8BlockScaledMMKernel):
    preshuffles_weight = True

    @classmethod
    def can_implement(cls, c):
        if c.scheme != "fp8_block":
            return False, "not block FP8"
        if c.n % 128:
            return False, "N % 128 != 0"
        if c.k % 32:
            return False, "shuffle_weight needs K % 32 == 0"
        return True, ""

    @classmethod
    def load_transforms(cls, c):
        shuffle = [] if c.reads_weight_directly else ["preshuffle"]
        return super().load_transforms(c) + shuffle

    def process_weights_after_loading(self, layer):
        self.upcast(layer)  # first, for every layer (the review's open risk)
        if layer.is_bmm or layer.skip_weight_relayout:
            return  # read directly: keep the checkpoint layout
        if getattr(layer, "weight_preshuffled", False):
            return  # the model shuffled it already: the shuffle is no involution
        layer.weight = self.ops.shuffle_weight(layer.weight)
        layer.weight_preshuffled = True


PRIORITY = {
    ("rocm", "mxfp8"): [RocmDotScaledMxfp8LinearKernel, EmulationMxfp8LinearKernel],
    ("rocm", "fp8_block"): [AiterPreshuffledFp8BlockScaledMMKernel, AiterFp8BlockScaledMMKernel],
    ("cuda", "mxfp8"): [EmulationMxfp8LinearKernel],
    ("cuda", "fp8_block"): [CutlassFp8BlockScaledMMKernel],
    ("rocm", "mxfp4"): [EmulationMxfp4LinearKernel],
    ("cuda", "mxfp4"): [EmulationMxfp4LinearKernel],
    ("rocm", "nvfp4"): [MarlinNvfp4LinearKernel],
    ("cuda", "nvfp4"): [MarlinNvfp4LinearKernel],
}


def choose_kernel(c: LayerConfig, kernels: dict, disabled: Sequence[str] = ()):
    """vLLM's walk: the platform's list, skipping disabled, unsupported and unable kernels."""
    family = "cuda" if c.platform.startswith("sm") else "rocm"
    for cls in kernels.get((family, c.scheme), []):
        if cls.__name__ in disabled:
            continue
        if cls.is_supported(c.platform)[0] and cls.can_implement(c)[0]:
            return cls
    return None


class LinearExample(LayerAdapter):
    """The example chain as a layer adapter. model_preshuffles: the model code B-preshuffles
    the weights of layers whose kernel reads a preshuffled weight, once and never a weight
    read directly (DeepSeek-V4's prepare_gateup_preshuffle after vLLM #56433)."""

    name = "linear_example"
    description = "numpy linear-kernel chain with vLLM's structure"
    claims_vllm_rules = True
    kernels = PRIORITY

    def __init__(self, model_preshuffles: bool = True) -> None:
        super().__init__()
        self.model_preshuffles = model_preshuffles

    ops: Any = NUMPY  # the numeric steps every kernel of this adapter runs

    def kernel(self, c: LayerConfig):
        return choose_kernel(c, self.kernels)

    def instance(self, c: LayerConfig) -> LinearKernel:
        k = self.kernel(c)()
        k.ops = self.ops
        return k

    def select(self, config):
        cls = self.kernel(config)
        return None if cls is None else cls.__name__

    def model_prepare(self, layer, kernel):
        if not self.model_preshuffles or not kernel.preshuffles_weight:
            return
        if layer.is_bmm or layer.skip_weight_relayout:
            return
        if getattr(layer, "weight_preshuffled", False):
            return
        layer.weight = self.ops.shuffle_weight(layer.weight)
        layer.weight_preshuffled = True

    def load(self, layer):
        kernel = self.instance(layer.config)
        self.model_prepare(layer, kernel)
        kernel.process_weights_after_loading(layer)

    def apply(self, layer, x):
        return self.instance(layer.config).apply_weights(layer, x)

    def transforms(self, config):
        cls = self.kernel(config)
        return None if cls is None else cls.load_transforms(config)

    def negotiate(self, layers):
        orders = {self.instance(l.config).act_scale_order(l) for l in layers}
        return orders.pop() if len(orders) == 1 and None not in orders else None
