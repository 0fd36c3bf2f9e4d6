"""mxgate.check_gemm on grouped GEMMs (docs/grouped.md §5): m-contiguous with `ends` and
`starts` offsets, masked counts, the buffer before the kernel (`c_before`) and bad offsets. The
expected C is computed here in float64 from small integers (every sum exact), one group at a
time, never by mxgate. Covers the Python surface only; the oracle and the CLI's grouped dumps are
tested in tests/test_grouped_gemm*.cpp and tests/test_check_gemm_grouped*.cpp."""

import numpy as np
import pytest

import mxgate

E, N, K = 3, 4, 128


def operands(rows_a, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, rows_a + (K,)).astype(np.float32)
    b = rng.integers(-3, 4, (E, N, K)).astype(np.float32)
    ac = mxgate.encode(a.reshape(-1, K), "e4m3fn", "ocp_mx").reshape(a.shape)
    bc = mxgate.encode(b.reshape(E * N, K), "e4m3fn", "ocp_mx").reshape(E, N, K)
    return a, b, ac, bc


def check(ac, bc, c, rows, **kw):
    # Unit fp32 scales: A one per row (1 x 128 blocks), B one 128 x 128 block per expert.
    sa = np.ones(rows + (1,), np.float32)
    sb = np.ones((E, 1, 1), np.float32)
    return mxgate.check_gemm(ac, sa, bc, sb, c, scheme="block", a_block=(1, 128),
                             b_block=(128, 128), mode="exact", **kw)


# Guards against grouped offsets ignored or read as the wrong kind: with ends [2, 2, 5] (expert 1
# empty) the true C passes, and one wrong element at global row 3 col 1 is located at group 2,
# row 1 of that group (rows 2..4 are group 2's).
def test_ends_pass_and_locate_the_group():
    a, b, ac, bc = operands((5,))
    ends = np.array([2, 2, 5], np.int32)
    c = np.concatenate([a[0:2] @ b[0].T, a[2:5] @ b[2].T]).astype(np.float32)
    assert check(ac, bc, c, (5,), offsets=ends).passed
    c[3, 1] += 1
    v = check(ac, bc, c, (5,), offsets=ends)
    assert not v.passed and v.mismatches == 1
    assert (v.first.row, v.first.col) == (3, 1) and v.group_of(v.first) == (2, 1)
    assert "group 2 row 1 (global row 3) col 1" in v.text


# Guards against `starts` read as ends: starts [0, 1, 1] make group 0 row 0 alone, group 2 rows
# 1..4 (group 1 empty); a C computed for those groups passes, and the same C read as ends
# [1, 5, 5] (group 1 owning rows 1..4) fails in group 1.
def test_starts_kind():
    a, b, ac, bc = operands((5,))
    starts = np.array([0, 1, 1], np.int64)
    c = np.concatenate([a[0:1] @ b[0].T, a[1:5] @ b[2].T]).astype(np.float32)
    v = check(ac, bc, c, (5,), offsets=starts, offsets_kind="starts")
    assert v.passed, str(v)
    v = check(ac, bc, c, (5,), offsets=[1, 5, 5])  # group 1 owns rows 1..4: expert 1's weights
    assert not v.passed and v.group_of(v.first)[0] == 1


# Guards against masked rows past a count judged or written unnoticed: counts [1, 0, 2] of
# max_m 2; rows past each count are poison before and after; a kernel that wrote one fails with
# c_before given.
def test_masked_counts_and_c_before():
    a, b, ac, bc = operands((E, 2))
    counts = np.array([1, 0, 2], np.int32)
    poison = np.full((E, 2, N), np.nan, np.float32)
    c = poison.copy()
    c[0, :1] = a[0, :1] @ b[0].T
    c[2, :2] = a[2, :2] @ b[2].T
    assert check(ac, bc, c, (E, 2), masked_counts=counts, c_before=poison).passed
    c[1, 0, 2] = 0.0  # expert 1 has no tokens: its slot must not be written
    v = check(ac, bc, c, (E, 2), masked_counts=counts, c_before=poison)
    assert not v.passed and "unwritten" in v.text, str(v)
    c[1, 0, 2] = np.nan
    c[2, 1, 3] += 2
    v = check(ac, bc, c, (E, 2), masked_counts=counts, c_before=poison)
    assert not v.passed and v.group_of(v.first) == (2, 1) and v.first.col == 3


# Guards against bad offsets accepted or crashing: off the declared alignment, decreasing,
# float, and both kinds given are InputErrors naming the option.
@pytest.mark.parametrize("kw,text", [
    (dict(offsets=[2, 2, 5], offsets_alignment=2), "alignment"),
    (dict(offsets=[3, 2, 5]), "offsets"),
    (dict(offsets=np.array([2.0, 2.0, 5.0])), "--offsets"),
    (dict(offsets=[2, 2, 5], masked_counts=[1, 1, 1]), "--masked-counts"),
    (dict(offsets_kind="ends"), "--offsets"),
])
def test_bad_offsets_are_input_errors(kw, text):
    a, b, ac, bc = operands((5,))
    c = np.zeros((5, N), np.float32)
    with pytest.raises(mxgate.InputError, match=text):
        check(ac, bc, c, (5,), **kw)
