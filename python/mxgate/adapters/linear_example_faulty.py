"""linear_example with one dispatch bug of the zoo planted at a time (docs/bug_classes.md §2,
Z1-Z7, and Z31's nibble order in an MXFP4 layer), each in the place vLLM had it;
Nvfp4GlobalScaleDropped is a layer bug of no zoo class. Each variant must be caught by a layer property with a
minimal shrunk config (docs/layers.md §5)."""

import numpy as np

from ..layers import QuantizedActivation
from . import linear_example as ex


def _swap(old, new):
    """The priority lists with linear kernel class `old` replaced by `new`."""
    return {key: [new if k is old else k for k in ks] for key, ks in ex.PRIORITY.items()}


class _DotScaledNoFallback(ex.RocmDotScaledMxfp8LinearKernel):
    def apply_weights(self, layer, x):
        x = x.plain if isinstance(x, QuantizedActivation) else x
        if layer.weight.dtype == np.uint16:
            return ex.bf16_linear(x, layer.weight)
        a, a_s = ex.quantize_mx(x)  # planted: no per-step fallback for K % 128 != 0
        return ex.dot_scaled(a, a_s, layer.weight, layer.weight_scale)


class NoPerStepFallback(ex.LinearExample):
    """Z1: apply keys on the weight's element size only; an fp8 weight whose load did not run
    reaches dot_scaled with K % 128 != 0 (vLLM #56560's first version)."""

    name = "z1_no_per_step_fallback"
    kernels = _swap(ex.RocmDotScaledMxfp8LinearKernel, _DotScaledNoFallback)


class _IgnoreOrder(ex.AiterPreshuffledFp8BlockScaledMMKernel):
    def apply_weights(self, layer, x):
        if isinstance(x, QuantizedActivation):  # planted: the order tag is not looked at
            x = QuantizedActivation(x.data, x.scales, self.act_scale_order(layer), x.plain)
        return super().apply_weights(layer, x)


class IgnoreActScaleOrder(ex.LinearExample):
    """Z2: the bpreshuffle GEMM takes a pre-quantized activation without checking its scale
    order: row-major As read column-major (same shape; vLLM #56433 defect (a))."""

    name = "z2_ignore_act_scale_order"
    kernels = _swap(ex.AiterPreshuffledFp8BlockScaledMMKernel, _IgnoreOrder)


class _ShuffleAlways(ex.AiterPreshuffledFp8BlockScaledMMKernel):
    def process_weights_after_loading(self, layer):
        self.upcast(layer)
        if layer.is_bmm or layer.skip_weight_relayout:
            return
        layer.weight = self.ops.shuffle_weight(layer.weight)  # planted: no already-shuffled guard
        layer.weight_preshuffled = True


class NoPreshuffleGuard(ex.LinearExample):
    """Z3: the model preshuffles the weight and the linear kernel shuffles it again."""

    name = "z3_no_preshuffle_guard"
    kernels = _swap(ex.AiterPreshuffledFp8BlockScaledMMKernel, _ShuffleAlways)


class _ShuffleDirect(ex.AiterPreshuffledFp8BlockScaledMMKernel):
    def process_weights_after_loading(self, layer):
        self.upcast(layer)
        if getattr(layer, "weight_preshuffled", False):
            return
        layer.weight = ex.shuffle_weight(layer.weight)  # planted: flags not looked at
        layer.weight_preshuffled = True


class RelayoutDirectlyRead(ex.LinearExample):
    """Z4: a weight read directly (is_bmm wo_a, MLA kv_b_proj) is preshuffled anyway."""

    name = "z4_relayout_directly_read"
    kernels = _swap(ex.AiterPreshuffledFp8BlockScaledMMKernel, _ShuffleDirect)


def _shift_upcast(scales):
    return (scales.astype(np.uint32) << 23).view(np.float32)  # planted: 0x00 -> 0, 0xFF -> Inf


class _ShiftPlain(ex.AiterFp8BlockScaledMMKernel):
    def upcast(self, layer):
        if layer.weight_scale.dtype == np.uint8:
            layer.weight_scale = _shift_upcast(layer.weight_scale)

    def weight_scales(self, layer):
        s = layer.weight_scale
        return _shift_upcast(s) if s.dtype == np.uint8 else s


class _ShiftPreshuffled(ex.AiterPreshuffledFp8BlockScaledMMKernel):
    upcast = _ShiftPlain.upcast
    weight_scales = _ShiftPlain.weight_scales


class _ShiftCutlass(ex.CutlassFp8BlockScaledMMKernel):
    upcast = _ShiftPlain.upcast
    weight_scales = _ShiftPlain.weight_scales


class ShiftE8m0Upcast(ex.LinearExample):
    """Z5: e8m0 weight scales upcast by byte << 23 (0x00 gives +0.0, 0xFF +Inf)."""

    name = "z5_shift_e8m0_upcast"
    kernels = {
        ("rocm", "mxfp8"): ex.PRIORITY[("rocm", "mxfp8")],
        ("rocm", "fp8_block"): [_ShiftPreshuffled, _ShiftPlain],
        ("cuda", "mxfp8"): ex.PRIORITY[("cuda", "mxfp8")],
        ("cuda", "fp8_block"): [_ShiftCutlass],
    }


class _DotScaledPerStep(ex.RocmDotScaledMxfp8LinearKernel):
    def process_weights_after_loading(self, layer):
        pass  # planted: the unaligned-K weight is dequantized on every apply instead


class PerStepRematerialize(ex.LinearExample):
    """Z6: a static weight dequantized on every forward instead of once at load (numbers
    right, the hot path re-materializes a constant; vLLM #56560)."""

    name = "z6_per_step_rematerialize"
    kernels = _swap(ex.RocmDotScaledMxfp8LinearKernel, _DotScaledPerStep)


class _EarlyReturn(ex.AiterPreshuffledFp8BlockScaledMMKernel):
    def process_weights_after_loading(self, layer):
        layer.processed = True
        if layer.is_bmm or layer.skip_weight_relayout:
            return  # planted: returns before the e8m0 upcast
        super().process_weights_after_loading(layer)

    def weight_scales(self, layer):
        if getattr(layer, "processed", False):  # processing ran: the scales are fp32 now
            return np.asarray(layer.weight_scale, dtype=np.float32)
        return super().weight_scales(layer)


class EarlyReturnSkipsUpcast(ex.LinearExample):
    """Z7: a layer excluded from the preshuffle returns before its e8m0 scales are upcast; the
    plain path then reads the e8m0 bytes as fp32 values (vLLM #56433, its review's open risk)."""

    name = "z7_early_return_skips_upcast"
    kernels = _swap(ex.AiterPreshuffledFp8BlockScaledMMKernel, _EarlyReturn)


class _NibbleSwap(ex.EmulationMxfp4LinearKernel):
    def weight_bf16(self, layer):
        if layer.weight.dtype == np.uint16:
            return layer.weight
        w = layer.weight
        swapped = ((w >> 4) | (w << 4)).astype(np.uint8)  # planted: element 2i read high
        return ex.dequant_fp4_to_bf16(_With(layer, weight=swapped))


class NibbleOrderSwapped(ex.LinearExample):
    """Z31 in a layer: the MXFP4 weight's two codes a byte unpacked in the other order (the
    high nibble taken for element 2i), so every pair of a row is exchanged."""

    name = "z31_nibble_order_swapped"
    kernels = _swap(ex.EmulationMxfp4LinearKernel, _NibbleSwap)


class _DropGlobal(ex.MarlinNvfp4LinearKernel):
    def weight_bf16(self, layer):  # planted: the NVFP4 global scale (weight_scale_2) never read
        return ex.dequant_fp4_to_bf16(_With(layer, weight_global_scale=np.ones(1, np.float32)))


class Nvfp4GlobalScaleDropped(ex.LinearExample):
    """The NVFP4 weight dequantized with its E4M3 block scales only, the float32 global scale
    (ModelOpt's weight_scale_2) dropped: wrong by that factor whenever it is not 1."""

    name = "nvfp4_global_scale_dropped"
    kernels = _swap(ex.MarlinNvfp4LinearKernel, _DropGlobal)


class _With:
    """A view of a layer with some attributes replaced (the layer itself is left alone)."""

    def __init__(self, layer, **over):
        self._layer, self._over = layer, over

    def __getattr__(self, name):
        return self._over[name] if name in self._over else getattr(self._layer, name)


FAULTY = {
    "Z1": NoPerStepFallback,
    "Z2": IgnoreActScaleOrder,
    "Z3": NoPreshuffleGuard,
    "Z4": RelayoutDirectlyRead,
    "Z5": ShiftE8m0Upcast,
    "Z6": PerStepRematerialize,
    "Z7": EarlyReturnSkipsUpcast,
    "Z31": NibbleOrderSwapped,
}
