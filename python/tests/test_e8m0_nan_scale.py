"""docs/bug_classes.md §6: an MXFP8 GEMM right in every way but its decode of the E8M0 scale
byte 0xFF (NaN in the OCP MX spec) must fail gemm.exact, whether it reads 0xFF as +Inf
(llvm/llvm-project#214919; numpy_faulty.E8m0NanAsInf) or as 2^127, the largest finite scale
(numpy_faulty.E8m0NanAsMax), and the faithful NumpyAdapter must pass the same cases. gemm.exact's
NaN-scale regime (properties/nan_scale_regime.h, edge=nan_scale_block) puts 0xFF over +1
elements, where 0 x Inf = NaN cannot hide the decode; the located element's verdict names NaN and
what came instead. dequantize.bit_exact catches both too (0xFF over random element codes).
Not covered: the built-in kernels' Z50 / Z51 (tests/test_nan_scale_regime.cpp), the figures of
docs/bug_classes.md §6."""

import pytest

import mxgate
from mxgate.adapters.numpy import NumpyAdapter
from mxgate.adapters.numpy_faulty import E8m0NanAsInf, E8m0NanAsMax

FAULTY = [E8m0NanAsInf, E8m0NanAsMax]
NAN_BITS = 0x7FC00000  # the reference's quiet NaN

# The regime's smallest case: seed 0 puts the 0xFF on A's only scale block, K = 32 elements +1.
REGIME_CASE = ("op=gemm_mx m=1 n=1 k=32 layout=row_major out=fp32 seed=0 a_dtype=e4m3fn "
               "b_dtype=e4m3fn edge=nan_scale_block")


def is_nan_bits(b):
    return (b & 0x7FFFFFFF) > 0x7F800000


# Guards against the gap of docs/bug_classes.md §6: the regime's case must fail both decodes
# at (0,0), NaN expected, +Inf got for the Inf decode (32 products 1 x Inf x 2^e), a number or
# an Inf for the 2^127 one, and say so; the faithful adapter passes it.
@pytest.mark.parametrize("adapter", FAULTY, ids=[a.__name__ for a in FAULTY])
def test_regime_case_fails_the_wrong_decode(adapter):
    r = mxgate.check("gemm.exact", adapter(), case=REGIME_CASE)
    assert not r.passed and r.kind == "fail", r
    assert r.location is not None and (r.location.row, r.location.col) == (0, 0), r
    assert r.location.expected_bits == NAN_BITS, r
    assert not is_nan_bits(r.location.actual_bits), r
    if adapter is E8m0NanAsInf:
        assert r.location.actual_bits == 0x7F800000, r
        assert "NaN-vs-number (expected NaN, got +Inf)" in str(r), r
    else:
        assert "NaN-vs-number (expected NaN, got " in str(r), r
    assert mxgate.check("gemm.exact", NumpyAdapter(), case=REGIME_CASE).passed


# Guards against detection that depends on a lucky seed: generated cases (no case given) catch
# both on each of 20 seeds within 100 cases, and shrink to one row, one column, K <= 64.
@pytest.mark.parametrize("adapter", FAULTY, ids=[a.__name__ for a in FAULTY])
def test_caught_on_every_seed(adapter):
    assert adapter.description.startswith("planted fault:")
    for seed in range(1, 21):
        r = mxgate.check("gemm.exact", adapter(), cases=100, seed=seed)
        assert not r.passed and r.kind == "fail", (seed, r)
        assert r.location is not None and r.location.expected_bits == NAN_BITS, (seed, r)
        f = dict(kv.split("=", 1) for kv in r.counterexample.split())
        assert (int(f["m"]), int(f["n"])) == (1, 1) and int(f["k"]) <= 64, (seed, r)


# Guards against a dequantizer with the same decode passing: 0xFF over nonzero element codes.
@pytest.mark.parametrize("adapter", FAULTY, ids=[a.__name__ for a in FAULTY])
def test_dequantize_catches_the_same_decode(adapter):
    r = mxgate.check("dequantize.bit_exact", adapter(), cases=100, seed=1)
    assert not r.passed and r.location is not None, r
    assert mxgate.check("dequantize.bit_exact", NumpyAdapter(), case=r.counterexample).passed


# Guards against a regime that fails correct code: the faithful adapter passes gemm.exact on
# the seeds above (100 cases each; the regime in one MX case of four, one block case of eight).
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_faithful_adapter_passes(seed):
    r = mxgate.check("gemm.exact", NumpyAdapter(), cases=100, seed=seed)
    assert r.passed, r
