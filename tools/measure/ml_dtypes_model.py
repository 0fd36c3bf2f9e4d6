#!/usr/bin/env python3
"""The expected ml_dtypes 0.6.0 bytes for tools/measure/fp4_fp6_bytes.py's inputs, from the
semantics of its float32 -> float4_e2m1fn / float6_* conversion (docs/fp4.md §3.1), restated here
on integers: round the fp32 significand to nearest-even at the target's quantum (subnormals at the
fixed quantum 2^(1 - bias - m)), a result past max or an Inf becomes infinity() = +-max, a NaN
becomes quiet_NaN() = the -0 code, negated (sign bit flipped) for a negative NaN, -0 stays -0.
Writes the same line format as the measurement; the device run then confirms or refutes it.

    python3 tools/measure/ml_dtypes_model.py > tests/data/fp4_fp6_bytes_ml_dtypes_model.txt
"""

import importlib.util
import os

spec = importlib.util.spec_from_file_location(
    "m", os.path.join(os.path.dirname(__file__), "fp4_fp6_bytes.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

SPEC = {"e2m1": (2, 1, 1), "e2m3": (2, 3, 1), "e3m2": (3, 2, 3)}  # exp bits, man bits, bias


def model(bits, fmt):
    e_bits, m_bits, bias = SPEC[fmt]
    sign_bit = 1 << (e_bits + m_bits)
    max_mag = (1 << (e_bits + m_bits)) - 1
    neg = bits >> 31
    exp = (bits >> 23) & 0xFF
    frac = bits & 0x7FFFFF
    if exp == 0xFF and frac:  # NaN: -quiet_NaN() for a negative NaN
        return 0 if neg else sign_bit
    if exp == 0xFF:  # Inf: +-infinity() = +-max
        return max_mag | (sign_bit if neg else 0)
    # |x| = sig * 2^e2 exactly; target quantum 2^q with q = max(floor(log2|x|), 1 - bias) - m.
    sig, e2 = (frac, -149) if exp == 0 else (frac | 0x800000, exp - 150)
    if sig == 0:
        return sign_bit if neg else 0
    fl = sig.bit_length() - 1 + e2
    q = max(fl, 1 - bias) - m_bits
    shift = q - e2
    if shift <= 0:
        n = sig << -shift
    else:
        n, rem, half = sig >> shift, sig & ((1 << shift) - 1), 1 << (shift - 1)
        if rem > half or (rem == half and n & 1):
            n += 1
    # n * 2^q is the rounded magnitude; encode it.
    if n >> (m_bits + 1):
        n >>= 1
        q += 1
    if n >> m_bits:
        field = q + m_bits + bias
        mag = (field << m_bits) | (n & ((1 << m_bits) - 1))
    else:
        mag = n
    if mag > max_mag or (n >> m_bits and q + m_bits + bias >= (1 << e_bits)):
        mag = max_mag
    return mag | (sign_bit if neg else 0)


def main():
    m.note("mxgate fp4/fp6 byte vectors v1: expected ml_dtypes 0.6.0 bytes from the model in")
    m.note("tools/measure/ml_dtypes_model.py (docs/fp4.md §3.1), not a measurement")
    for fmt in m.FORMATS:
        for b in m.EDGE_BITS:
            m.emit("cast", "ml_dtypes", fmt, f"0x{b:08x}", f"0x{model(b, fmt):02x}")


if __name__ == "__main__":
    main()
