"""A fused-MoE forward written as the public fused-MoE classes are (vLLM's FusedMoE with
moe_align_block_size, fused_experts and moe_sum; gpt-oss's interleaved SwiGLU path), in numpy:
the faithful twin the MoE properties must pass (docs/moe.md §4). Its decoders and quantizers are
its own (tables and float32 bit arithmetic), sharing nothing with mxgate's reference.

Backends (select): TritonExperts (silu, any scheme: w13 as loaded, gate rows then up rows),
OaiSwigluExperts (swiglu_oai: load interleaves w13's rows gate0, up0, gate1, ...), each with
block_m chosen by token-count bucket as vLLM's tuned configs choose it."""

from typing import Optional

import numpy as np

from ..moe.config import SWIGLU_ALPHA, SWIGLU_LIMIT, MoEAdapter, MoEConfig, MoELayer

BUCKETS = ((1, 2), (3, 4), (5, 16), (17, 48))
BLOCK_M = {0: 16, 1: 16, 2: 32, 3: 64}  # per bucket index


def _e4m3_table() -> np.ndarray:
    """The 256 E4M3FN values by code: S.EEEE.MMM, bias 7, 0x7F / 0xFF NaN."""
    out = np.empty(256, np.float32)
    for code in range(256):
        e, m = (code >> 3) & 0xF, code & 7
        v = (m / 8) * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0**(e - 7)
        out[code] = -v if code & 0x80 else v
    out[0x7F] = out[0xFF] = np.nan
    return out


E4M3 = _e4m3_table()
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)
_POS = np.sort(E4M3[:0x7F])  # the 127 finite non-negative values, ascending


def e8m0(b: np.ndarray) -> np.ndarray:
    out = np.ldexp(np.float32(1), b.astype(np.int32) - 127).astype(np.float32)
    return np.where(b == 0xFF, np.float32(np.nan), out)


def to_e4m3_value(v: np.ndarray) -> np.ndarray:
    """v (float32) to the nearest E4M3 value, ties to the even code, clamped to +-448."""
    a = np.minimum(np.abs(v), np.float32(448))
    i = np.clip(np.searchsorted(_POS, a), 1, _POS.size - 1)
    below, above = _POS[i - 1], _POS[i]
    d_below, d_above = a - below, above - a
    codes_below = i - 1  # _POS[j] has code j: the positive codes are ascending
    even_below = codes_below % 2 == 0
    pick_above = (d_above < d_below) | ((d_above == d_below) & ~even_below)
    r = np.where(pick_above, above, below)
    r = np.where(a >= _POS[-1], _POS[-1], r)
    return np.copysign(r, v).astype(np.float32)


def to_bf16(v: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(v, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


class MoEExample(MoEAdapter):
    """The faithful twin: every MoE property passes on it."""

    name = "moe_example"

    def select(self, config: MoEConfig) -> Optional[str]:
        return "OaiSwigluExperts" if config.activation == "swiglu_oai" else "TritonExperts"

    def token_buckets(self, config):
        return BUCKETS

    # -- load --------------------------------------------------------------------------------
    def _decode(self, layer: MoELayer, w, s, rows, cols, w13: bool) -> np.ndarray:
        c = layer.config
        if c.scheme == "bf16":
            return (w.astype(np.uint32) << 16).view(np.float32)
        if c.scheme == "mxfp4":
            v = np.empty(w.shape[:-1] + (cols,), np.float32)
            v[..., 0::2], v[..., 1::2] = E2M1[w & 0xF], E2M1[w >> 4]
        else:
            v = E4M3[w]
        sf = e8m0(s) if s.dtype == np.uint8 else s.astype(np.float32)
        if c.scheme == "fp8_block":
            # Row r's block row: the gate's r // 128, the up's nb + (r - I) // 128 (w13).
            r = np.arange(rows)
            if w13:
                half, nb = rows // 2, sf.shape[1] // 2
                r = np.where(r < half, r // 128, nb + (r - half) // 128)
            else:
                r = r // 128
            per_row = sf[:, r, :]
            return v * np.repeat(per_row, 128, axis=2)[:, :, :cols]
        return v * np.repeat(sf, 32, axis=2)[:, :, :cols]

    def load(self, layer: MoELayer) -> None:
        c = layer.config
        layer.w13_f = self._decode(layer, layer.w13, layer.w13_scale, 2 * c.inter, c.hidden, True)
        layer.w2_f = self._decode(layer, layer.w2, layer.w2_scale, c.hidden, c.inter, False)
        if layer.backend == "OaiSwigluExperts":
            layer.w13_f = self.interleave(layer.w13_f)

    @staticmethod
    def interleave(w13: np.ndarray) -> np.ndarray:
        i = w13.shape[1] // 2
        out = np.empty_like(w13)
        out[:, 0::2], out[:, 1::2] = w13[:, :i], w13[:, i:]
        return out

    # -- forward -----------------------------------------------------------------------------
    def bucket(self, m: int) -> int:
        for b, (lo, hi) in enumerate(BUCKETS):
            if lo <= m <= hi:
                return b
        return len(BUCKETS) - 1

    def align(self, local: np.ndarray, experts: int, block_m: int):
        """moe_align_block_size: (token*slot) pairs sorted by expert, each expert's rows padded
        to block_m with the sentinel pair index; the expert of each block."""
        flat = local.reshape(-1)
        sentinel = flat.size
        sorted_ids, block_expert = [], []
        for e in range(experts):
            pairs = np.nonzero(flat == e)[0]
            if pairs.size == 0:
                continue
            padded = -(-pairs.size // block_m) * block_m
            sorted_ids += list(pairs) + [sentinel] * (padded - pairs.size)
            block_expert += [e] * (padded // block_m)
        return np.array(sorted_ids, np.int64), np.array(block_expert, np.int64), sentinel

    def activation(self, layer: MoELayer, h: np.ndarray) -> np.ndarray:
        c, i = layer.config, layer.config.inter
        if layer.backend == "OaiSwigluExperts":
            g, u = h[:, 0::2], h[:, 1::2]
        else:
            g, u = self.gate_up(h, i)
        with np.errstate(over="ignore"):  # exp overflow: the activation is -0, as it should be
            if c.activation == "silu":
                t = g / (np.float32(1) + np.exp(-g)) * u
            else:
                g = np.minimum(g, np.float32(SWIGLU_LIMIT))
                u = np.clip(u, np.float32(-SWIGLU_LIMIT), np.float32(SWIGLU_LIMIT))
                t = g / (np.float32(1) + np.exp(np.float32(-SWIGLU_ALPHA) * g)) * \
                    (u + np.float32(1))
        return to_bf16(t.astype(np.float32))

    @staticmethod
    def gate_up(h: np.ndarray, i: int):
        return h[:, :i], h[:, i:]

    def requantize(self, c: MoEConfig, t: np.ndarray) -> np.ndarray:
        """The w2 GEMM's input as values: per_token_group_quant (1x128, amax / 448) or MX
        (1x32, 2^(floor(log2 amax) - 8) from the exponent bits); A16 schemes keep bf16."""
        if c.scheme in ("bf16", "mxfp4"):
            return t
        g = 128 if c.scheme == "fp8_block" else 32
        out = np.empty_like(t)
        for start in range(0, t.shape[1], g):
            blk = t[:, start:start + g]
            amax = np.abs(blk).max(axis=1, keepdims=True).astype(np.float32)
            if c.scheme == "fp8_block":
                s = np.maximum(amax, np.float32(1e-10)) / np.float32(448)
            else:
                e = ((amax.view(np.uint32) >> 23) & 0xFF).astype(np.int32) - 127 - 8
                s = np.ldexp(np.float32(1), np.maximum(e, -127)).astype(np.float32)
            out[:, start:start + g] = to_e4m3_value(blk / s) * s
        return out

    def w2_gemm(self, layer: MoELayer, q: np.ndarray, e: int) -> np.ndarray:
        return q @ layer.w2_f[e].T

    def weigh(self, c: MoEConfig, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        return y * w[:, None] * np.float32(c.routed_scaling)

    def apply(self, layer: MoELayer, x, topk_ids, topk_weights):
        c = layer.config
        m, k = topk_ids.shape
        local = layer.expert_map[topk_ids]
        block_m = BLOCK_M[self.bucket(m)]
        sorted_ids, block_expert, sentinel = self.align(local, c.local_experts, block_m)
        a = self.buffer(sorted_ids.size, c.hidden)
        real = sorted_ids < sentinel
        a[real] = x[sorted_ids[real] // k]
        out = np.zeros((m, c.hidden), np.float32)
        wflat = topk_weights.reshape(-1)
        for b, e in enumerate(block_expert):
            rows = slice(b * block_m, (b + 1) * block_m)
            h = a[rows] @ layer.w13_f[e].T
            q = self.requantize(c, self.activation(layer, h))
            y = self.w2_gemm(layer, q, int(e))
            ids = sorted_ids[rows]
            self.combine(out, y, ids, wflat, sentinel, k, c)
        return out

    def buffer(self, rows: int, hidden: int) -> np.ndarray:
        return np.zeros((rows, hidden), np.float32)

    def combine(self, out, y, ids, wflat, sentinel, k, c):
        ok = ids < sentinel
        yw = self.weigh(c, y[ok], wflat[ids[ok]])
        np.add.at(out, ids[ok] // k, yw)
