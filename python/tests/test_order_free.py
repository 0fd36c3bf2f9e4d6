"""Order-free exact operands (docs/accumulators.md §6.1): the exact-mode operands of gemm.exact
and the metamorphic GEMM properties make every partial sum exact in the op's declared fp32
accumulator, so a correct kernel is bit-equal to the oracle whatever its summation order and tile
shape, and a scale-layout fault still fails at a located element. Covers: gemm_mx kernels written
here that sum K reversed, in K tiles that cut the 32-blocks, and block by block with the scales
applied per block partial; one of them with a transposed scale read. Not covered: the aligned-chunk
accumulators (tests/test_accumulator_exact.cpp), the built-in kernels (tests/property_zoo.cpp)."""

import numpy as np

import mxgate
from mxgate.adapters.numpy import E8M0, decode, finish

SMALL = mxgate.Dim(max=96)  # keeps the Python loops short (K up to 192: TP row shards of 128)
CONTRACT = dict(a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"), out_dtypes=("f32", "bf16"),
                a_scale_layouts=("row_major", "col_major"),
                b_scale_layouts=("row_major", "col_major"), convention="ocp_mx",
                accumulator="fp32_rn", m=SMALL, n=SMALL, k=mxgate.Dim(max=192))


def dequantized(codes, scales, dtype):
    """codes x their 1x32 E8M0 scales, in float32 (one multiply per element)."""
    s = np.repeat(E8M0[scales], 32, axis=1)[:, : codes.shape[1]]
    with np.errstate(over="ignore", invalid="ignore"):
        return decode(codes, dtype) * s


def reversed_k(a, a_scales, b, b_scales, call):
    """One fp32 partial per element, K walked from the last k to the first."""
    x = dequantized(a, a_scales, call.tensor("a").dtype)
    y = dequantized(b, b_scales, call.tensor("b").dtype)
    acc = np.zeros((call.m, call.n), np.float32)
    for kk in range(call.k - 1, -1, -1):
        acc += np.outer(x[:, kk], y[:, kk])
    return finish(acc, call.tensor("out").dtype)


def tiled_k(a, a_scales, b, b_scales, call, tile=48):
    """Tiles of 48 k (cutting the 32-blocks), each summed by einsum, the tiles' partials added
    last tile first."""
    x = dequantized(a, a_scales, call.tensor("a").dtype)
    y = dequantized(b, b_scales, call.tensor("b").dtype)
    partials = [np.einsum("ik,jk->ij", x[:, t:t + tile], y[:, t:t + tile])
                for t in range(0, call.k, tile)]
    acc = np.zeros((call.m, call.n), np.float32)
    for p in reversed(partials):
        acc += p
    return finish(acc, call.tensor("out").dtype)


def per_block_partials(a, a_scales, b, b_scales, call, transposed_scales=False):
    """Each 32-block's codes summed unscaled, the partial times sa * sb (fp32), the blocks added
    in reverse. transposed_scales: the planted layout fault, A's (M x K/32) scale grid read as if
    stored K/32 x M."""
    xa = decode(a, call.tensor("a").dtype)
    yb = decode(b, call.tensor("b").dtype)
    sa, sb = E8M0[a_scales], E8M0[b_scales]
    if transposed_scales:
        sa = np.ascontiguousarray(sa).reshape(sa.shape[1], sa.shape[0]).T  # the fault
    acc = np.zeros((call.m, call.n), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for kb in range((call.k + 31) // 32 - 1, -1, -1):
            part = np.einsum("ik,jk->ij", xa[:, 32 * kb:32 * kb + 32], yb[:, 32 * kb:32 * kb + 32])
            acc += part * np.outer(sa[:, kb], sb[:, kb])
    return finish(acc, call.tensor("out").dtype)


def op(fn, name):
    return mxgate.Op("gemm_mx", fn, name=name, **CONTRACT)


# A correct kernel must be bit-equal to the oracle on exact-mode operands in any order: a
# generator that let one partial sum round would fail one of these three orders.
def test_every_summation_order_is_bit_exact():
    adapter = mxgate.Adapter([op(reversed_k, "reversed_k"), op(tiled_k, "tiled_k"),
                              op(per_block_partials, "per_block_partials")], name="orders")
    for prop in ("gemm.exact", "metamorphic.tp_column_split", "metamorphic.tp_row_split"):
        r = mxgate.check(prop, adapter, cases=60, seed=4)
        assert r.passed and r.cases >= (60 if prop == "gemm.exact" else 1), r
        assert set(r.ops) == {"reversed_k", "tiled_k", "per_block_partials"}


# A scale read from the wrong slot must still fail under an order-free kernel, at an element of
# the shrunk case's output whose expected and actual bits differ.
def test_layout_fault_fails_at_a_located_element():
    def faulty(a, a_scales, b, b_scales, call):
        return per_block_partials(a, a_scales, b, b_scales, call, transposed_scales=True)

    r = mxgate.check("gemm.exact", op(faulty, "transposed_scales"), cases=100, seed=4)
    assert not r.passed and r.kind == "fail", r
    fields = dict(f.split("=") for f in r.counterexample.split())
    m, n = int(fields["m"]), int(fields["n"])
    assert m > 1 and int(fields["k"]) > 32, r.counterexample  # the fault needs both
    assert 0 <= r.location.row < m and 0 <= r.location.col < n, r
    assert r.location.expected_bits != r.location.actual_bits, r
