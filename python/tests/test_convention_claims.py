"""The cast claims of the conventions of docs/conventions.md §2.24 - §2.29 on the host, without
torch or triton: which convention the torch adapter's casts claim by torch version and device
(cast_claims), the Triton adapter's rtz cast op (CAST_CLAIMS), the library knowing every claimed
name, and cast.bit_exact judging a cast written out by each new convention's rule (passes) and
by a neighbouring rule (fails). Not covered: the real libraries (scripts/h200/conventions_bytes.py
on a GPU host, docs/conventions.md §3.8), the adapters' kernels."""

import struct

import numpy as np
import pytest

import mxgate
from mxgate.adapters import torch as torch_adapter
from mxgate.adapters import triton as triton_adapter

NEW = ("torch_2_13", "microxcaling", "torch_e8m0_nan_bits", "torchao_ceil", "torchao_even",
       "triton_rtz")


# Guards against an adapter claiming a convention the library does not know (the claim would be
# refused at load) and against one of the new names missing from the registry.
def test_library_knows_the_new_conventions():
    known = mxgate.conventions()
    for name in NEW:
        assert name in known, name


# Guards against torch >= 2.13 keeping the torch_2_11 claim for e4m3fn (whose NaN-on-overflow it
# no longer has, pytorch/pytorch#178817), against older torch claiming torch_2_13, and against
# the CUDA e4m3fn cast claiming a convention whose Inf was not read for its kernel.
@pytest.mark.parametrize("version,device,want", [
    ("2.11.0+cu130", "cpu", [("cast", "torch_2_11", ("e4m3fn", "e5m2"))]),
    ("2.12.1", "cpu", [("cast", "torch_2_11", ("e4m3fn", "e5m2"))]),
    ("2.13.0", "cpu", [("cast", "torch_2_11", ("e5m2",)),
                       ("cast_e4m3fn", "torch_2_13", ("e4m3fn",))]),
    ("2.13.0.dev20260601+cu130", "cpu", [("cast", "torch_2_11", ("e5m2",)),
                                         ("cast_e4m3fn", "torch_2_13", ("e4m3fn",))]),
    ("2.14.1", "cuda", [("cast", "torch_2_11", ("e5m2",))]),
    ("3.0.0", "cpu", [("cast", "torch_2_11", ("e5m2",)),
                      ("cast_e4m3fn", "torch_2_13", ("e4m3fn",))]),
])
def test_torch_cast_claims_by_version(version, device, want):
    assert torch_adapter.cast_claims(version, device, ("e4m3fn", "e5m2")) == want


# Guards against the rtz cast claiming an fp8e4nv target Triton cannot lower (§2.29) or another
# convention than triton_rtz, and against the round-to-nearest cast losing its claim.
def test_triton_rtz_claim():
    claims = {name: (conv, dtypes, rnd) for name, conv, dtypes, rnd in triton_adapter.CAST_CLAIMS}
    assert claims["cast_rtz"] == ("triton_rtz", ("e5m2",), "rtz")
    assert claims["cast"] == ("triton_nvidia", ("e4m3fn", "e5m2"), None)


def _f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _table(e_bits, m_bits, bias):
    """Every positive code's value below the Inf / NaN codes (IEEE-style exponent field)."""
    vals = []
    for code in range(128):
        e, m = code >> m_bits, code & ((1 << m_bits) - 1)
        if e == 0:
            vals.append(m / (1 << m_bits) * 2.0 ** (1 - bias))
        else:
            vals.append((1 + m / (1 << m_bits)) * 2.0 ** (e - bias))
    return np.array(vals)


E5M2 = _table(5, 2, 15)[:0x7C]     # 0x7C is Inf
E4M3 = _table(4, 3, 7)[:0x7F]      # 0x7F is NaN


def _rtz_e5m2(x, rne=False):
    """Triton's rtz rule written out (§2.29): the largest code not above |x| (at most 0x7B),
    ±Inf -> 0x7C / 0xFC, NaN -> 0x7F; rne=True rounds to nearest even instead (the wrong rule)."""
    out = np.empty(x.shape, np.uint8)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        wide = x.astype(np.float64)
    for i, v in enumerate(wide):
        if np.isnan(v):
            out[i] = 0x7F
            continue
        s = 0x80 if np.signbit(v) else 0
        a = abs(v)
        if np.isinf(a):
            out[i] = s | 0x7C
            continue
        if rne:
            d = np.abs(E5M2 - min(a, E5M2[-1]))
            best = [c for c in range(len(E5M2)) if d[c] == d.min()]
            c = min(best, key=lambda c: c & 1)
        else:
            c = int(np.searchsorted(E5M2, a, side="right")) - 1
        out[i] = s | c
    return out


def _sat_e4m3(x, saturate=True):
    """torch_2_13's e4m3fn rule written out (§2.24): RNE over the finite codes, a finite value past
    448 -> ±448 (saturate=False: NaN, torch 2.11's rule), ±Inf and NaN -> 0x7F with the sign."""
    out = np.empty(x.shape, np.uint8)
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)
    for i, v in enumerate(wide):
        s = 0x80 if np.signbit(v) else 0
        a = abs(v)
        if np.isnan(a) or np.isinf(a) or (a > 464 and not saturate):
            out[i] = s | 0x7F
            continue
        d = np.abs(E4M3 - min(a, 448.0))
        best = [c for c in range(len(E4M3)) if d[c] == d.min()]
        out[i] = s | min(best, key=lambda c: c & 1)
    return out


def _op(fn, dtype, convention):
    def cast(x, out_dtype):
        return fn(np.asarray(x, np.float32))
    return mxgate.Op("cast", cast, name="written_out", out_dtypes=(dtype,), convention=convention)


# Guards against the library's triton_rtz convention drifting from the rule read in Triton's
# lowering: the rule written out passes cast.bit_exact, round-to-nearest fails.
def test_triton_rtz_rule_passes_and_rne_fails():
    r = mxgate.check("cast.bit_exact", impl=_op(_rtz_e5m2, "e5m2", "triton_rtz"), cases=300,
                     seed=1)
    assert r.passed, str(r)
    r = mxgate.check("cast.bit_exact", impl=_op(lambda x: _rtz_e5m2(x, rne=True), "e5m2",
                                                "triton_rtz"), cases=300, seed=1)
    assert not r.passed and r.kind == "fail", str(r)


# Guards against torch_2_13 keeping 2.11's NaN on finite overflow: the saturating rule passes,
# the non-saturating one fails (at an overflowing input such as 896).
def test_torch_2_13_rule_passes_and_2_11_rule_fails():
    r = mxgate.check("cast.bit_exact", impl=_op(_sat_e4m3, "e4m3fn", "torch_2_13"), cases=300,
                     seed=1)
    assert r.passed, str(r)
    r = mxgate.check("cast.bit_exact", impl=_op(lambda x: _sat_e4m3(x, saturate=False), "e4m3fn",
                                                "torch_2_13"), cases=300, seed=1)
    assert not r.passed and r.kind == "fail", str(r)
    assert _sat_e4m3(np.array([896.0, -896.0], np.float32)).tolist() == [0x7E, 0xFE]


# Guards against the reference's encode of the hazard inputs drifting from the bytes written in
# docs/conventions.md §2.24 / §2.25 / §2.29 (mxgate.encode is the library's reference).
@pytest.mark.parametrize("convention,fmt,bits,code", [
    ("torch_2_13", "e4m3fn", 0x44600000, 0x7E),    # 896 = 2 * 448 saturates
    ("torch_2_11", "e4m3fn", 0x44600000, 0x7F),    # ... where 2.11 gives NaN
    ("microxcaling", "e4m3fn", 0x3F880000, 0x39),  # 1.0625: tie between 0x38 and 0x39, away
    ("microxcaling", "e4m3fn", 0x3A7FFFFF, 0x01),  # 2^-10 - 2^-34: fl32(a + 0.5) = 1.0
    ("triton_rtz", "e5m2", 0x3FFEB852, 0x3F),      # 1.99 truncates to 1.75
    ("triton_rtz", "e5m2", 0x7F800000, 0x7C),      # Inf stays Inf
])
def test_reference_bytes_of_hazards(convention, fmt, bits, code):
    assert list(mxgate.encode([_f32(bits)], fmt, convention)) == [code]

