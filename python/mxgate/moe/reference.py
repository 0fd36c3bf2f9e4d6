"""mxgate's MoE reference (docs/moe.md §2): for every token the interval its output must lie in,
derived from the declared precision of each step, never a tolerance tuned until green. It
shares no code with the example chain (mxgate/adapters/moe_example.py) or any kernel: weights
are decoded by mxgate's reference codecs, every rounding here is written on the float64
significand (frexp / rint: round to nearest even), the GEMMs are float64 sums of exact
products.

Steps, per (token, slot) routed to a local expert e:
1. h = x W13[e]^T exactly (float64). The implementation's fp32 accumulation of H products is
   exact, in any order and blocking, where sum |x||w| < 2^24 q, q the least significant bit
   common to every product (every partial sum is then a multiple of q below 2^24 q); elsewhere
   within gamma(H) sum |x||w| of it (gamma(n) = n u / (1 - n u), u = 2^-24).
2. gate, up = h[:I], h[I:]; t = act(gate, up) exactly; the implementation's value within
   activation_error |t| plus the step-1 error through the activation (its slope is at most
   1.1 in gate: max over z of sigmoid(z) + z sigmoid(z)(1 - sigmoid(z)) = 1.0998...).
3. The interval of t rounded to the declared intermediate (bf16: both ends rounded; fp32: one
   fp32 rounding each way), then quantized as the scheme's w2 input is: fp8_block 1x128 groups
   along I, scale amax / 448 in fp32 (amax at least 1e-10, vLLM's per_token_group_quant),
   codes E4M3 round-to-nearest-even clamped to +-448; mxfp8 1x32 groups, scale
   2^(floor(log2 amax) - 8) (OCP MX, E4M3's emax 8) or 2^ceil(log2(amax / 448)) (rceil);
   bf16 / mxfp4 experts take the bf16 intermediate as it is. Every scale the amax interval
   allows is tried: the result is the hull of the dequantized values.
4. y_slot = q W2[e]^T over the intervals (float64), plus gamma(I) sum |q||w| for the fp32
   accumulation; y = routed_scaling sum_slot w_slot y_slot, plus gamma(top_k + 2) for the
   weighting and the sum, plus half a bf16 ulp per declared bf16 rounding of the slot outputs
   or of y."""

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .. import reference as ref
from .config import SWIGLU_ALPHA, SWIGLU_LIMIT, MoEConfig

U32 = 2.0**-24  # fp32 unit roundoff
_FP64_MARGIN = 2.0**-48  # float64 sums of up to 2^12 terms: far inside this, relative


def gamma(n: int) -> float:
    return n * U32 / (1 - n * U32)


def round_fp(v: np.ndarray, p: int, emin: int, vmax: float) -> np.ndarray:
    """v rounded to nearest even with p significand bits, normal exponents from emin down to
    subnormals of quantum 2^(emin - p + 1), saturated at vmax (the sign kept)."""
    a = np.abs(v)
    _, e = np.frexp(a)  # a = m 2^e, m in [0.5, 1): a's exponent is e - 1 (bits, not log2)
    q = np.exp2(np.maximum(e - 1, emin) - p + 1)
    r = np.minimum(np.rint(a / q) * q, vmax)
    return np.where(a == 0, 0.0, np.copysign(r, v))


def bf16(v: np.ndarray) -> np.ndarray:
    return round_fp(v, 8, -126, 3.3895313892515355e38)


def e4m3(v: np.ndarray) -> np.ndarray:
    return round_fp(np.clip(v, -448.0, 448.0), 4, -6, 448.0)


def exponent(a: np.ndarray) -> np.ndarray:
    """floor(log2 a) for a > 0, from the bits."""
    return np.frexp(a)[1] - 1


def lsb(a: np.ndarray) -> float:
    """The largest power of two that divides every element of a (float64, finite): from the
    bits of each significand (its trailing zeros), never from log2. 1.0 when a is all zero."""
    a = np.abs(a[np.isfinite(a) & (a != 0)])
    if a.size == 0:
        return 1.0
    m, e = np.frexp(a)
    mant = np.ldexp(m, 53).astype(np.int64)  # an odd-or-even integer below 2^53
    low = mant & -mant  # its lowest set bit, a power of two
    tz = np.frexp(low.astype(np.float64))[1] - 1
    return float(np.ldexp(1.0, int((e - 53 + tz).min())))


def sum_error(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The bound of an fp32 accumulation of a @ b.T (n products a row): 0 where it is exact
    in any order (docs above, step 1), else gamma(n) sum |a||b|."""
    s = np.abs(a) @ np.abs(b).T
    exact = s < 2.0**24 * lsb(a) * lsb(b)
    return np.where(exact, 0.0, gamma(n) * s + _FP64_MARGIN * s)


def dequantized_weights(c: MoEConfig, w: np.ndarray, s: Optional[np.ndarray],
                        rows: int, cols: int, kind: str) -> np.ndarray:
    """(E, rows, cols) float64 of one weight tensor: codes decoded by mxgate's reference, times
    the scale of each element's block (kind "w13": fp8_block's gate-then-up block rows)."""
    if c.scheme == "bf16":
        return (w.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if c.scheme == "mxfp4":
        lo, hi = w & 0xF, w >> 4
        codes = np.stack([lo, hi], axis=-1).reshape(w.shape[0], rows, cols)
        v = ref.decode(codes, "e2m1", "ocp_mx").astype(np.float64)
    else:
        v = ref.decode(w, "e4m3fn", "ocp_mx").astype(np.float64)
    if c.weight_scale == "e8m0":
        sv = ref.decode(s, "e8m0", "ocp_mx").astype(np.float64)
    else:
        sv = s.astype(np.float64)
    if c.scheme == "fp8_block":
        if kind == "w13":  # (E, 2 nb, hb): the gate's blocks then the up's
            half, nb = rows // 2, sv.shape[1] // 2
            r = np.concatenate([np.arange(half) // 128, nb + np.arange(half) // 128])
        else:
            r = np.arange(rows) // 128
        return v * sv[:, r][:, :, np.arange(cols) // 128]
    return v * np.repeat(sv, 32, axis=2)[:, :, :cols]


def _activation(c: MoEConfig, g: np.ndarray, u: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-g) = inf for g < -709: silu(g) = -0, as it should
        if c.activation == "silu":
            return g / (1.0 + np.exp(-g)) * u
        gc, uc = np.minimum(g, SWIGLU_LIMIT), np.clip(u, -SWIGLU_LIMIT, SWIGLU_LIMIT)
        return gc / (1.0 + np.exp(-SWIGLU_ALPHA * gc)) * (uc + 1.0)


def _hull(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    return np.minimum(a, b), np.maximum(a, b)


def _requantize(c: MoEConfig, lo: np.ndarray, hi: np.ndarray, mx_rule: str):
    """The hull of the dequantized w2 input over every value in [lo, hi] and every scale the
    group's amax interval allows."""
    if c.scheme in ("bf16", "mxfp4"):
        return lo, hi
    g = 128 if c.scheme == "fp8_block" else 32
    rows, n = lo.shape
    pad = -n % g
    mag_lo = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
    mag_hi = np.maximum(np.abs(lo), np.abs(hi))
    blocks = lambda a: np.pad(a, ((0, 0), (0, pad))).reshape(rows, -1, g).max(axis=2)
    amax_lo, amax_hi = blocks(mag_lo), blocks(mag_hi)
    out_lo, out_hi = np.full_like(lo, np.inf), np.full_like(hi, -np.inf)
    each = lambda a: np.repeat(a, g, axis=1)[:, :n]
    if c.scheme == "fp8_block":
        s_lo = np.maximum(amax_lo, 1e-10) / 448.0 * (1 - 2.0**-23)
        s_hi = np.maximum(amax_hi, 1e-10) / 448.0 * (1 + 2.0**-23)
        candidates = [(each(s_lo), each(s_hi))]
    else:
        if mx_rule == "rceil":
            q_lo, q_hi = amax_lo / 448.0, amax_hi / 448.0
            e_of = lambda a: np.where(np.frexp(a)[0] == 0.5, exponent(a), exponent(a) + 1)
        else:
            q_lo, q_hi = amax_lo, amax_hi
            e_of = lambda a: exponent(a) - 8
        e_lo = e_of(np.maximum(q_lo, 2.0**-200))
        e_hi = e_of(np.maximum(q_hi, 2.0**-200))
        candidates = []
        for d in range(int((e_hi - e_lo).max()) + 1):
            e = np.clip(np.minimum(e_lo + d, e_hi), -127, 127).astype(np.float64)
            s = each(np.exp2(e))
            candidates.append((s, s))
    for s_a, s_b in candidates:
        for s in (s_a, s_b):
            for v in (lo, hi):
                q = e4m3(v / s)
                for s2 in (s_a, s_b):
                    out_lo, out_hi = np.minimum(out_lo, q * s2), np.maximum(out_hi, q * s2)
    return out_lo, out_hi


@dataclass
class Expected:
    """Per token and hidden column the interval [lo, hi] the output must lie in; width is
    what the declared precisions allow (for the closing figures: how tight the bound is)."""

    lo: np.ndarray
    hi: np.ndarray


def expected(c: MoEConfig, w13: np.ndarray, s13, w2: np.ndarray, s2, emap: np.ndarray,
             x: np.ndarray, ids: np.ndarray, weights: np.ndarray, intermediate: str = "bf16",
             activation_error: float = 2.0**-20, output: str = "fp32",
             slot_rounding: str = "fp32", mx_rule: str = "floor") -> Expected:
    """The interval of one rank's output (its local experts' share of every token)."""
    i, h = c.inter, c.hidden
    W13 = dequantized_weights(c, w13, s13, 2 * i, h, "w13")
    W2 = dequantized_weights(c, w2, s2, h, i, "w2")
    xf = x.astype(np.float64)
    m, k = ids.shape
    lo_y, hi_y = np.zeros((m, h)), np.zeros((m, h))
    err = np.zeros((m, h))
    rsf = float(c.routed_scaling)
    for slot in range(k):
        local = emap[ids[:, slot]]
        for e in np.unique(local[local >= 0]):
            rows = np.nonzero(local == e)[0]
            xe = xf[rows]
            hh = xe @ W13[e].T
            dh = sum_error(xe, W13[e], h)
            g, u = hh[:, :i], hh[:, i:]
            dg, du = dh[:, :i], dh[:, i:]
            t = _activation(c, g, u)
            au = np.abs(u) + du + (1.0 if c.activation == "swiglu_oai" else 0.0)
            ag = np.abs(_activation(c, g, np.ones_like(u)))
            dt = activation_error * np.abs(t) + 1.1 * dg * au + ag * du + 2.0**-140
            tl, th = t - dt, t + dt
            if intermediate == "bf16":
                tl, th = bf16(tl), bf16(th)
            else:
                tl, th = tl - U32 * np.abs(tl), th + U32 * np.abs(th)
            ql, qh = _requantize(c, tl, th, mx_rule)
            wp, wn = np.maximum(W2[e], 0), np.minimum(W2[e], 0)
            yl = ql @ wp.T + qh @ wn.T
            yh = qh @ wp.T + ql @ wn.T
            qmax = np.maximum(np.abs(ql), np.abs(qh))
            wt = weights[rows, slot].astype(np.float64)[:, None] * rsf
            lo_y[rows] += wt * yl
            hi_y[rows] += wt * yh
            slot_err = wt * (gamma(i) * (qmax @ np.abs(W2[e]).T) * (1 + _FP64_MARGIN))
            ymax = wt * np.maximum(np.abs(yl), np.abs(yh))
            slot_err += gamma(k + 2) * ymax + (2.0**-8 * ymax if slot_rounding == "bf16" else 0)
            # fp32 subnormals: each of the I + k + 2 roundings may err by half of 2^-149
            # absolutely, whatever the relative bound says (an output near 2^-140 shows it).
            slot_err += (i + k + 2) * 2.0**-150
            err[rows] += slot_err
    lo, hi = lo_y - err, hi_y + err
    if output == "bf16":  # rounding is monotone: the rounded y lies between the rounded ends
        lo, hi = bf16(lo), bf16(hi)
    return Expected(lo, hi)


def first_outside(exp: Expected, y: np.ndarray):
    """(count, (token, col) of the first element outside its interval or NaN) or (0, None)."""
    bad = ~((y >= exp.lo) & (y <= exp.hi))
    if not bad.any():
        return 0, None
    t, col = np.argwhere(bad)[0]
    return int(bad.sum()), (int(t), int(col))
