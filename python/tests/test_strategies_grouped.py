"""mxgate.strategies' grouped-GEMM strategies (group_sizes, group_offsets; docs/python.md §17)
with check_gemm(offsets=...): the edges drawn, the alignment kept, and a user's grouped kernel
checked in a hypothesis test: the faithful one passes, one whose tiles take the expert of their
first row fails and shrinks to two one-row experts. Expected C here is float64 per group from
small integers (exact), never mxgate's. Not covered: grouped property cases (none yet)."""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import find, given, settings  # noqa: E402

import mxgate  # noqa: E402
import mxgate.strategies as mst  # noqa: E402

E, N, K, TILE = 3, 2, 32, 4
QUIET = settings(derandomize=True, database=None, max_examples=30, deadline=None)
# check_gemm takes an A of at least one row: a call where every expert is empty has no C.
SOME_ROWS = mst.group_offsets(E, max_rows=9).filter(lambda o: o[-1] > 0)


def grouped_numpy(a, b, ends, tile_expert_from_first_row=False):
    """A user's m-contiguous grouped GEMM over row tiles of 4: each row times its group's expert;
    the faulty variant gives every row of a tile the expert of the tile's first row (the bug of
    a boundary off the kernel's alignment, deepseek-ai/DeepGEMM PR #450)."""
    group = np.searchsorted(ends, np.arange(a.shape[0]), side="right")
    if tile_expert_from_first_row:
        group = group[np.arange(a.shape[0]) // TILE * TILE]
    return np.stack([a[r] @ b[min(g, E - 1)].T for r, g in enumerate(group)]) if a.shape[0] \
        else np.zeros((0, N))


def verdict(ends, faulty):
    rows = int(ends[-1])
    rng = np.random.default_rng(rows)
    a = rng.integers(-3, 4, (rows, K)).astype(np.float32)
    b = rng.integers(-3, 4, (E, N, K)).astype(np.float32)
    c = grouped_numpy(a, b, ends, faulty).astype(np.float32)
    ac = mxgate.encode(a, "e4m3fn", "ocp_mx")
    bc = mxgate.encode(b.reshape(E * N, K), "e4m3fn", "ocp_mx").reshape(E, N, K)
    return mxgate.check_gemm(ac, np.ones((rows, 1), np.float32), bc,
                             np.ones((E, 1, 1), np.float32), c, scheme="block",
                             a_block=(1, 128), b_block=(128, 128), offsets=ends)


# Guards against a strategy that never reaches the grouped edges: a zero-token expert, one token,
# exactly one 128-row tile and a tile plus one are each found.
@pytest.mark.parametrize("edge", [0, 1, 128, 129])
def test_group_sizes_reach_the_edges(edge):
    found = find(mst.group_sizes(E), lambda s: edge in s, settings=QUIET)
    assert edge in found


# Guards against sizes off the declared alignment (a kernel's contract): every size a multiple
# of 32, the edges rounded up (129 -> 160), and offsets ends / starts consistent with them.
@QUIET
@given(mst.group_sizes(4, alignment=32), mst.group_offsets(4, kind="starts", alignment=32))
def test_alignment_and_kinds(sizes, starts):
    assert sizes.shape == (4,) and np.all(sizes % 32 == 0) and np.all(sizes <= 257)
    assert starts.dtype == np.int32 and starts[0] == 0 and np.all(np.diff(starts) % 32 == 0)


# Guards against check_gemm(offsets=...) failing a correct grouped kernel under hypothesis.
@QUIET
@given(SOME_ROWS)
def test_faithful_grouped_kernel_passes(ends):
    v = verdict(ends, faulty=False)
    assert v.passed, str(v)


# Guards against a grouped fault that hypothesis cannot reach or shrink: the tile fault needs two
# non-empty experts meeting inside a 4-row tile; the minimal example is two one-row experts, and
# the failure is located at the second's first row (group g, row 0).
def test_tile_fault_shrinks_to_two_one_row_experts():
    ends = find(SOME_ROWS, lambda o: not verdict(o, True).passed, settings=QUIET)
    sizes = np.diff(np.concatenate([[0], ends]))
    assert sorted(sizes.tolist()) == [0, 1, 1], ends
    v = verdict(ends, True)
    g, row = v.group_of(v.first)
    assert row == 0 and sizes[g] == 1 and g > 0


# Guards against bad arguments accepted silently.
def test_bad_arguments():
    with pytest.raises(mxgate.InputError, match="alignment"):
        mst.group_sizes(2, alignment=0)
    with pytest.raises(mxgate.InputError, match="kind"):
        mst.group_offsets(2, kind="counts")
