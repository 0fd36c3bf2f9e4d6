"""ml_dtypes' other 8-bit formats through an adapter (docs/formats.md §1.4): a Python cast op
may declare e3m4, e4m3ieee and e4m3b11fnuz targets (the library's contract check knows their
codes), and cast.bit_exact judges them by the ml_dtypes convention. The op here encodes by the
format's own rules written out below (not mxgate's encoder); the real ml_dtypes runs on the GPU
host (scripts/h200/survey_targets.py). Not covered: other conventions (only ml_dtypes takes
these formats)."""

import numpy as np
import pytest

import mxgate

# (exponent bits, mantissa bits, bias, IEEE specials?) of each format, from ml_dtypes' float8.h
# numeric_limits (docs/formats.md §1.4).
FORMATS = {"e3m4": (3, 4, 3, True), "e4m3ieee": (4, 3, 7, True), "e4m3b11fnuz": (4, 3, 11, False)}


def _table(name):
    """Every code's value (NaN for the NaN codes), decoded from the fields."""
    e_bits, m_bits, bias, ieee = FORMATS[name]
    vals = []
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e, m = (code >> m_bits) & ((1 << e_bits) - 1), code & ((1 << m_bits) - 1)
        if not ieee and code == 0x80:
            vals.append(np.nan)
        elif ieee and e == (1 << e_bits) - 1:
            vals.append(sign * np.inf if m == 0 else np.nan)
        elif e == 0:
            vals.append(sign * m / (1 << m_bits) * 2.0 ** (1 - bias))
        else:
            vals.append(sign * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias))
    return np.array(vals)


def _encode(x, name, saturate=False):
    """Round to nearest even over the finite codes; past max + half an ulp: Inf (IEEE) or the
    NaN 0x80 (FNUZ); NaN: the quiet NaN with its sign (IEEE) or 0x80 -- ml_dtypes' rules."""
    e_bits, m_bits, bias, ieee = FORMATS[name]
    t = _table(name)
    finite = [c for c in range(128) if np.isfinite(t[c])]
    top = max(finite, key=lambda c: t[c])
    qnan = ((1 << e_bits) - 1) << m_bits | (1 << (m_bits - 1))
    out = np.empty(x.shape, np.uint8)
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    for i, v in enumerate(wide):
        neg = np.signbit(v)
        a = abs(v)
        if np.isnan(v):
            out[i] = (qnan | (0x80 if neg else 0)) if ieee else 0x80
            continue
        limit = t[top] + (t[top] - t[top - 1]) / 2  # the midpoint past max rounds up: overflow
        if a >= limit and not saturate:
            out[i] = (((1 << e_bits) - 1) << m_bits | (0x80 if neg else 0)) if ieee else 0x80
            continue
        d = np.abs(t[finite] - min(a, t[top]))
        best = [c for c, dd in zip(finite, d) if dd == d.min()]
        c = min(best, key=lambda c: c & 1)  # a tie: the even code
        out[i] = c | (0x80 if neg and not (not ieee and c == 0) else 0)
    return out


def _op(saturate=False):
    def cast(x, out_dtype):
        return _encode(np.asarray(x, np.float32), out_dtype, saturate)
    return mxgate.Op("cast", cast, name="peer_cast", out_dtypes=tuple(FORMATS),
                     convention="ml_dtypes")


# Guards against the library refusing the new codes in a contract, and against a cast to them
# that the property cannot judge: ml_dtypes' rules written out pass cast.bit_exact.
def test_peer_format_casts_pass_by_ml_dtypes_rules():
    r = mxgate.check("cast.bit_exact", impl=_op(), cases=300, seed=1)
    assert r.passed, str(r)


# Guards against a blind check on these formats: a cast that saturates where ml_dtypes goes to
# Inf / NaN fails, at an overflowing input.
def test_saturating_peer_cast_fails():
    r = mxgate.check("cast.bit_exact", impl=_op(saturate=True), cases=300, seed=1)
    assert not r.passed and r.kind == "fail", str(r)
    assert r.counterexample is not None
