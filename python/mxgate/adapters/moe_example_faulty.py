"""The MoE example with one public-record bug each (docs/bug_classes.md §7, M1-M10): every one
must be caught by its property with a minimal shrunk case (python/tests/test_moe_layer.py)."""

import numpy as np

from .moe_example import BUCKETS, MoEExample


class W13HalvesSwapped(MoEExample):
    """M1: the fused w13's halves read in the other order (up as gate: silu(up) * gate)."""

    name = "moe_w13_halves_swapped"

    @staticmethod
    def gate_up(h, i):
        return h[:, i:], h[:, :i]


class InterleaveTwice(MoEExample):
    """M2: the gate/up interleave applied at load to weights already interleaved (vllm PR
    #44893: gpt-oss accuracy to 0)."""

    name = "moe_interleave_twice"

    def load(self, layer):
        super().load(layer)
        if layer.backend == "OaiSwigluExperts":
            layer.w13_f = self.interleave(layer.w13_f)


class TopkWeightTwice(MoEExample):
    """M3: the top-k weights applied in the w2 epilogue and again in the sum."""

    name = "moe_topk_weight_twice"

    def weigh(self, c, y, w):
        return super().weigh(c, y, w) * w[:, None]


class TopkWeightDropped(MoEExample):
    """M4: the top-k weights never applied (triton#6527: matmul_ogs without gamma)."""

    name = "moe_topk_weight_dropped"

    def weigh(self, c, y, w):
        return y * np.float32(c.routed_scaling)


class RoutedScalingDropped(MoEExample):
    """M5: routed_scaling_factor dropped (vllm PR #43769)."""

    name = "moe_routed_scaling_dropped"

    def weigh(self, c, y, w):
        return y * w[:, None]


class BucketFirstRowExpert(MoEExample):
    """M6: the kernel tuned for one token-count bucket (3-4 tokens) packs the sorted rows
    without per-expert padding and gives each 4-row tile the expert of its first row
    (ROCm/aiter#3933's bucket kernel; DeepGEMM's contiguous layout off its alignment)."""

    name = "moe_bucket_first_row_expert"

    def apply(self, layer, x, topk_ids, topk_weights):
        if self.bucket(topk_ids.shape[0]) != 1:
            return super().apply(layer, x, topk_ids, topk_weights)
        c = layer.config
        m, k = topk_ids.shape
        local = layer.expert_map[topk_ids].reshape(-1)
        pairs = np.array([p for e in range(c.local_experts) for p in np.nonzero(local == e)[0]],
                         np.int64)
        out = np.zeros((m, c.hidden), np.float32)
        w = topk_weights.reshape(-1)
        for start in range(0, pairs.size, 4):
            tile = pairs[start:start + 4]
            e = int(local[tile[0]])  # the tile's expert from its first row only
            h = x[tile // k] @ layer.w13_f[e].T
            y = self.w2_gemm(layer, self.requantize(c, self.activation(layer, h)), e)
            np.add.at(out, tile // k, self.weigh(c, y, w[tile]))
        return out


class DirtyPaddingRead(MoEExample):
    """M7: the sorted buffer comes from a dirty allocator (NaN here) and the padding rows are
    summed into token 0 with weight 0: 0 x NaN = NaN (pytorch#193633, #154557)."""

    name = "moe_dirty_padding_read"

    def buffer(self, rows, hidden):
        return np.full((rows, hidden), np.nan, np.float32)

    def apply(self, layer, x, topk_ids, topk_weights):
        with np.errstate(invalid="ignore", over="ignore"):  # NaN rows are the point here
            return super().apply(layer, x, topk_ids, topk_weights)

    def combine(self, out, y, ids, wflat, sentinel, k, c):
        super().combine(out, y, ids, wflat, sentinel, k, c)
        pad = ids >= sentinel
        if pad.any():
            out[0] += (y[pad] * np.float32(0)).sum(axis=0)


class NextExpertTailScales(MoEExample):
    """M8: w2's last K block (along I) scaled with the next expert's block scale
    (FlashInfer#5438: invisible when every expert has the same scales)."""

    name = "moe_next_expert_tail_scales"

    def load(self, layer):
        super().load(layer)
        c = layer.config
        if c.scheme != "fp8_block" or c.local_experts < 2:
            return
        s = layer.w2_scale
        sf = s.astype(np.float32) if s.dtype != np.uint8 else \
            np.ldexp(np.float32(1), s.astype(np.int32) - 127).astype(np.float32)
        tail = slice((sf.shape[2] - 1) * 128, c.inter)
        for e in range(c.local_experts):
            nxt = (e + 1) % c.local_experts
            ratio = sf[nxt, :, -1] / sf[e, :, -1]
            layer.w2_f[e, :, tail] *= np.repeat(ratio, 128)[:c.hidden, None]


class TrailingKBlockDropped(MoEExample):
    """M9: the w2 GEMM loops over floor(I / 128) K blocks: the partial last block of a TP
    shard whose I / TP is off 128 (Qwen3-30B at TP 8: 96) is lost."""

    name = "moe_trailing_k_block_dropped"

    def w2_gemm(self, layer, q, e):
        kk = q.shape[1] // 128 * 128
        return q[:, :kk] @ layer.w2_f[e][:, :kk].T


class InterleaveInPlace(MoEExample):
    """M10: the gpt-oss gate/up interleave applied to the layer's own w13 (and its per-row
    scales) in place at load: right after one load, applied again by a second one (a reload
    runs process_weights_after_loading again; the class of vllm PR #44893). fp8_block keeps
    the faithful load (its 128-row scale blocks do not interleave)."""

    name = "moe_interleave_in_place"

    def load(self, layer):
        c = layer.config
        if layer.backend != "OaiSwigluExperts" or c.scheme == "fp8_block":
            return super().load(layer)
        layer.w13 = self.interleave(np.asarray(layer.w13))
        if layer.w13_scale is not None:
            layer.w13_scale = self.interleave(np.asarray(layer.w13_scale))
        layer.w13_f = self._decode(layer, layer.w13, layer.w13_scale, 2 * c.inter, c.hidden,
                                   False)
        layer.w2_f = self._decode(layer, layer.w2, layer.w2_scale, c.hidden, c.inter, False)


FAULTY = (W13HalvesSwapped, InterleaveTwice, TopkWeightTwice, TopkWeightDropped,
          RoutedScalingDropped, BucketFirstRowExpert, DirtyPaddingRead, NextExpertTailScales,
          TrailingKBlockDropped, InterleaveInPlace)
__all__ = [c.__name__ for c in FAULTY] + ["FAULTY", "BUCKETS"]
