"""The layer protocol (docs/layers.md §1): what a user implements around their own loader and
dispatch code (LayerAdapter), what describes one linear layer (LayerConfig), and what mxgate
hands their code (Layer, QuantizedActivation)."""

from dataclasses import dataclass, fields, replace
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError

SCHEMES = ("mxfp8", "fp8_block", "mxfp4", "nvfp4")
FP4_SCHEMES = ("mxfp4", "nvfp4")  # weight-only (W4A16): E2M1 weights, bf16-exact activations
PARALLEL = ("column", "row", "replicated")
WEIGHT_SCALES = ("e8m0", "fp32", "e4m3")  # e4m3: NVFP4's block scales
ORDERS = ("row_major", "col_major")
PLATFORMS = ("host", "gfx950", "gfx942", "sm90")
CONSUMERS = ("twin", "direct", "mxfp8")
TRANSFORMS = ("dequantize_bf16", "upcast_e8m0", "preshuffle")


def _bad(field: str, value: Any, allowed: str) -> InputError:
    return InputError(f"LayerConfig.{field}: {value!r} is not {allowed}")


@dataclass(frozen=True)
class LayerConfig:
    """One linear layer Y[M, N] = X[M, K] W[N, K]^T as one rank sees it.

    scheme: mxfp8 (E4M3 + e8m0 per 1x32), fp8_block (E4M3, 1x128 activation groups, 128x128
    weight blocks), mxfp4 (E2M1 weight, e8m0 per 1x32) or nvfp4 (E2M1 weight, E4M3 per 1x16 and
    a float32 global scale); the FP4 schemes are weight-only: the activation stays bf16;
    n, k: after sharding (even for the FP4 schemes: two codes a byte); tp and parallel (column: N is split, row: K is split
    and the outputs summed, replicated); weight_scale: e8m0 or fp32 (mxfp8: e8m0 only is an MX
    layer); act_scale_order: the order of a pre-quantized activation handed to the layer
    (row_major / col_major 1x128 scales, fp8_block) or None for the plain activation; platform:
    host gfx950 gfx942 sm90 (any string: the adapter decides what it means); is_bmm,
    skip_weight_relayout: other code reads the weight directly; consumers: the other consumers
    of this layer's activation quantization (twin: the same layer again, direct: the same with
    is_bmm, mxfp8: an MXFP8 layer, which reads no 1x128 scales)."""

    scheme: str = "mxfp8"
    n: int = 16
    k: int = 128
    tp: int = 1
    parallel: str = "column"
    weight_scale: str = "e8m0"
    act_scale_order: Optional[str] = None
    platform: str = "host"
    is_bmm: bool = False
    skip_weight_relayout: bool = False
    consumers: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise _bad("scheme", self.scheme, "one of " + ", ".join(SCHEMES))
        for name in ("n", "k", "tp"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise _bad(name, v, "a positive integer")
        if self.parallel not in PARALLEL:
            raise _bad("parallel", self.parallel, "one of " + ", ".join(PARALLEL))
        if self.parallel == "replicated" and self.tp != 1:
            raise InputError("LayerConfig.parallel: a replicated layer has tp 1 "
                             f"(got tp {self.tp})")
        if self.weight_scale not in WEIGHT_SCALES:
            raise _bad("weight_scale", self.weight_scale, "e8m0, fp32 or e4m3")
        takes = {"mxfp4": ("e8m0",), "nvfp4": ("e4m3",)}.get(self.scheme, ("e8m0", "fp32"))
        if self.weight_scale not in takes:
            raise InputError(f"LayerConfig.weight_scale: {self.scheme} weights take "
                             f"{' or '.join(takes)} scales, not {self.weight_scale}")
        if self.scheme in FP4_SCHEMES and self.k % 2:
            raise InputError(f"LayerConfig.k: {self.k} is odd; {self.scheme} packs two codes a "
                             "byte")
        if self.act_scale_order not in (None,) + ORDERS:
            raise _bad("act_scale_order", self.act_scale_order, "None, row_major or col_major")
        if self.act_scale_order is not None and self.scheme != "fp8_block":
            raise InputError("LayerConfig.act_scale_order: a pre-quantized 1x128 activation "
                             "goes with fp8_block, not " + self.scheme)
        if not isinstance(self.platform, str) or not self.platform:
            raise _bad("platform", self.platform, "a platform name")
        for name in ("is_bmm", "skip_weight_relayout"):
            if not isinstance(getattr(self, name), bool):
                raise _bad(name, getattr(self, name), "a bool")
        if isinstance(self.consumers, str) or not all(c in CONSUMERS for c in self.consumers):
            raise _bad("consumers", self.consumers, "a tuple of " + ", ".join(CONSUMERS))
        object.__setattr__(self, "consumers", tuple(self.consumers))

    @property
    def reads_weight_directly(self) -> bool:
        return self.is_bmm or self.skip_weight_relayout

    def unsharded(self) -> "LayerConfig":
        """The whole layer before tensor-parallel sharding (tp 1)."""
        if self.parallel == "column":
            return replace(self, n=self.n * self.tp, tp=1)
        if self.parallel == "row":
            return replace(self, k=self.k * self.tp, tp=1)
        return self

    def text(self) -> str:
        """key=value words, the form LayerConfig.parse reads back."""
        words = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "consumers":
                v = ",".join(v) if v else "-"
            elif v is None:
                v = "-"
            elif isinstance(v, bool):
                v = int(v)
            words.append(f"{f.name}={v}")
        return " ".join(words)


def parse_words(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise InputError(f"case text: '{word}' is not key=value")
        if key in out:
            raise InputError(f"case text: '{key}' given twice")
        out[key] = value
    return out


def config_from_words(words: Dict[str, str]) -> LayerConfig:
    kw: Dict[str, Any] = {}
    for f in fields(LayerConfig):
        if f.name not in words:
            continue
        v = words.pop(f.name)
        if f.name in ("n", "k", "tp"):
            try:
                kw[f.name] = int(v)
            except ValueError:
                raise _bad(f.name, v, "a positive integer") from None
        elif f.name in ("is_bmm", "skip_weight_relayout"):
            if v not in ("0", "1"):
                raise _bad(f.name, v, "0 or 1")
            kw[f.name] = v == "1"
        elif f.name == "consumers":
            kw[f.name] = () if v == "-" else tuple(v.split(","))
        elif f.name == "act_scale_order":
            kw[f.name] = None if v == "-" else v
        else:
            kw[f.name] = v
    return LayerConfig(**kw)


class Layer:
    """One layer as the loader produced it: the checkpoint's quantized weight and scales,
    which the user's load() may replace (as process_weights_after_loading does) and annotate.

    weight: (N, K) uint8 E4M3 codes, or for mxfp4 / nvfp4 (N, K/2) uint8 E2M1 codes two a byte
    (element 2i in the low nibble); weight_scale: mxfp8 / mxfp4 (N, ceil(K/32)) uint8 e8m0,
    nvfp4 (N, ceil(K/16)) uint8 E4M3, fp8_block (ceil(N/128), ceil(K/128)) uint8 e8m0 or
    float32; weight_global_scale: nvfp4's float32 (1,) global decode scale (ModelOpt's
    weight_scale_2: a weight element is e2m1 * block scale * global), else None; is_bmm / skip_weight_relayout: the
    config's flags; direct_reads: {attribute: bytes} that code other than the GEMM reads
    directly (the weight of a flagged layer), recorded before load; kernel: what select()
    returned. Arrays are numpy unless the adapter asks for torch tensors (tensor_type)."""

    def __init__(self, config: LayerConfig, weight: Any, weight_scale: Any,
                 kernel: Optional[str] = None, weight_global_scale: Any = None) -> None:
        self.config = config
        self.weight = weight
        self.weight_scale = weight_scale
        self.weight_global_scale = weight_global_scale
        self.is_bmm = config.is_bmm
        self.skip_weight_relayout = config.skip_weight_relayout
        self.kernel = kernel
        self.direct_reads: Dict[str, bytes] = {}
        if config.reads_weight_directly:
            self.direct_reads["weight"] = bytes(as_numpy(weight).tobytes())

    def __repr__(self) -> str:
        return f"<mxgate Layer {self.config.text()} kernel={self.kernel}>"


@dataclass(frozen=True)
class QuantizedActivation:
    """An activation a fused producer quantized already (1x128 groups, E4M3): data (M, K)
    uint8 codes; scales (M, ceil(K/128)) float32 whose MEMORY order is `order` (row_major: C
    order, col_major: Fortran order, As[m, kb] at kb * M + m: the same shape either way);
    plain: the unquantized activation, for consumers that read no 1x128 scales."""

    data: Any
    scales: Any
    order: str
    plain: Any


class LayerAdapter:
    """Subclass around your own linear-layer code (docs/layers.md §1).

    select(config) -> str | None   the linear kernel your code picks (your can_implement
                                   chain), None when none can run the layer
    load(layer) -> None            your load-time processing (process_weights_after_loading):
                                   may replace layer.weight / layer.weight_scale, set attributes
    apply(layer, x) -> y           your forward pass: x (M, K) float32 with bf16-exact values (or
                                   a QuantizedActivation); y (M, N) float32

    Optional, each enabling a property:
    transforms(config) -> [name]   the load-time transforms your selected kernel declares
                                   (TRANSFORMS), for layer.single_transform
    negotiate(layers) -> order|None  the scale order a fused producer of one activation emits
                                   to these consumers, None to refuse the fused path
                                   (layer.negotiation)
    accumulator(config, kernel) -> name|None  the selected kernel's accumulator model: outputs
                                   are then checked within its bound, not bit for bit
    decision_names: {your kernel name: model name}, claims_vllm_rules: opt in to
    layer.decisions in "layer.*" runs.
    tensor_type: "numpy" (default) or "torch" (layers and x as torch tensors on `device`)."""

    name: Optional[str] = None
    description: str = ""
    tensor_type: str = "numpy"
    device: str = "cpu"
    claims_vllm_rules: bool = False
    decision_names: Dict[str, str] = {}

    def __init__(self) -> None:
        if not self.name:
            self.name = type(self).__name__.lower()

    def select(self, config: LayerConfig) -> Optional[str]:
        raise NotImplementedError

    def load(self, layer: Layer) -> None:
        raise NotImplementedError

    def apply(self, layer: Layer, x: Any) -> Any:
        raise NotImplementedError

    def transforms(self, config: LayerConfig) -> Optional[Sequence[str]]:
        return None  # not declared: layer.single_transform has no case

    def negotiate(self, layers: Sequence[Layer]) -> Optional[str]:
        return None  # the fused path refused: every consumer quantizes the plain activation

    def accumulator(self, config: LayerConfig, kernel: str) -> Optional[str]:
        """The accumulator model (a name of mxgate.accumulators(), e.g. "sm90_fp8_mma" for a
        Hopper FP8 tensor-core GEMM) of the kernel select() picked; None or "fp32_rn": fp32
        with round-to-nearest, exact on the layer data, so outputs are compared bit for bit."""
        return None

    def check_available(self) -> None:
        """Raises mxgate.Unavailable when what the adapter wraps is absent here."""

    def __repr__(self) -> str:
        return f"<mxgate layer adapter {self.name}>"


def as_numpy(x: Any) -> np.ndarray:
    """A host numpy array of an array the user's code holds: numpy, torch (any device,
    bfloat16 as its uint16 bits, float8 as uint8 codes), DLPack or __array__ objects."""
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach"):
        import torch  # present: x is a torch tensor

        t = x.detach().cpu()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16)
        if "float8" in str(t.dtype):
            return t.view(torch.uint8).numpy()
        return t.numpy()
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    return np.asarray(x)


def to_tensor(a: np.ndarray, adapter: LayerAdapter) -> Any:
    """a as the adapter's tensor type (numpy: a itself)."""
    if adapter.tensor_type == "numpy":
        return a
    import torch  # tensor_type "torch" needs it; Unavailable is raised before a run otherwise

    return torch.from_numpy(np.ascontiguousarray(a)).to(adapter.device)
