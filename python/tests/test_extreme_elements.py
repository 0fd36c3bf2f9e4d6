"""gemm.exact's extreme-element regime (docs/plugins.md §3.4, case field elements=extreme) against
numpy implementations: the correct adapter passes it for every pair of OCP FP8 formats and every
GEMM op, and a decoder that flushes E4M3 subnormals to zero (which exact-mode data without the
regime never shows) fails at a located element. Not covered: the planting itself
(tests/test_extreme_elements.cpp), FP4 / FP6 elements."""

import numpy as np

import mxgate
from mxgate.adapters.numpy import NumpyAdapter


class FlushSubnormals(NumpyAdapter):
    """Planted fault: E4M3 subnormal codes (exponent field 0) decoded as zero."""

    name = "numpy_flush_subnormals"

    def mx_operand(self, codes, scales, dtype):
        flushed = np.where((codes & 0x78) == 0, codes & 0x80, codes).astype(np.uint8)
        return super().mx_operand(flushed, scales, dtype)


def case(op, m, n, k, seed, a="e4m3fn", b="e4m3fn"):
    return (f"op={op} m={m} n={n} k={k} layout=row_major out=fp32 seed={seed} a_dtype={a} "
            f"b_dtype={b} elements=extreme")


# A correct implementation must pass every planting: a pairing that let a sum round (E5M2's
# 2^-16 against E4M3's partners) would fail it here.
def test_correct_adapter_passes_every_planting():
    for op in ("gemm_mx", "gemm_block_deepseek", "gemm_block_tensor", "gemm_block_rowwise"):
        for a in ("e4m3fn", "e5m2"):
            for b in ("e4m3fn", "e5m2"):
                for m, n, k in ((1, 1, 32), (3, 5, 64), (130, 2, 160)):
                    for seed in (0, 2, 6, 517):
                        r = mxgate.check("gemm.exact", NumpyAdapter(), op=op,
                                         case=case(op, m, n, k, seed, a, b))
                        assert r.passed, r


# The regime must see a subnormal flush that plain exact-mode data cannot: one planted case fails
# at a located element, and the generator reaches it within 100 cases.
def test_flushed_subnormals_fail():
    r = mxgate.check("gemm.exact", FlushSubnormals(), op="gemm_mx", case=case("gemm_mx", 2, 3, 64, 5))
    assert not r.passed and r.location is not None, r
    assert r.location.expected_bits != r.location.actual_bits
    r = mxgate.check("gemm.exact", FlushSubnormals(), op="gemm_mx", cases=100, seed=1)
    assert not r.passed and "elements=extreme" in r.counterexample, r
