"""The numpy adapters (python/mxgate/adapters/numpy.py, numpy_faulty.py; docs/python.md §11):
each planted fault is caught by the property that guards against it and shrunk to a small case,
located; the correct adapter passes the same properties. Not covered: the other adapters
(test_adapters_optional.py)."""

import pytest

import mxgate
from mxgate.adapters import numpy_faulty
from mxgate.adapters.numpy import NumpyAdapter


def shape(case):
    fields = dict(kv.split("=", 1) for kv in case.split())
    return {k: int(v) for k, v in fields.items() if k in ("m", "n", "k", "count")}


# (adapter, property that must catch it, the bound on the shrunk case, why that bound).
FAULTS = [
    # A transposed 128x128 grid equals the right one unless both grid dimensions exceed 1.
    (numpy_faulty.ScaleTransposed, "gemm.exact", dict(m=1, n=256, k=256)),
    # Dropping the partial trailing block: one block of 32 with M = N = 1 shows it.
    (numpy_faulty.DropTrailingK, "gemm.exact", dict(m=1, n=1, k=127)),
    # The shift decode differs at 0x00 and 0xFF: one byte.
    (numpy_faulty.ShiftE8m0, "upcast_e8m0.bit_exact", dict(count=1)),
    # Column-major reading of a row-major grid needs two rows and two K blocks.
    (numpy_faulty.ActScalesColMajor, "gemm.exact", dict(m=2, n=16, k=256)),
    # The E8M0 0xFF decoded as +Inf or as 2^127 (docs/bug_classes.md §6): one row, one column,
    # a K block or two (a NaN scale over +1 elements; test_e8m0_nan_scale.py).
    (numpy_faulty.E8m0NanAsInf, "gemm.exact", dict(m=1, n=1, k=64)),
    (numpy_faulty.E8m0NanAsMax, "gemm.exact", dict(m=1, n=1, k=64)),
]


# Each planted fault is detected within the default case count and shrunk to a small case with
# a located element; the correct adapter passes the same case.
@pytest.mark.parametrize("adapter,prop,bound", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_planted_fault_caught_and_shrunk(adapter, prop, bound):
    r = mxgate.check(prop, adapter(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", r
    assert r.cases <= 20, r
    assert r.location is not None, r
    got = shape(r.counterexample)
    for key, most in bound.items():
        assert got[key] <= most, f"{key}={got[key]} > {most}: {r}"
    assert adapter.description.startswith("planted fault:")
    clean = mxgate.check(prop, NumpyAdapter(), case=r.counterexample)
    assert clean.passed, clean


# Detection does not hang on one seed: over 5 seeds every fault is found.
@pytest.mark.parametrize("adapter,prop,bound", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_planted_fault_caught_over_seeds(adapter, prop, bound):
    for seed in range(2, 7):
        r = mxgate.check(prop, adapter(), cases=100, seed=seed)
        assert not r.passed, r


# The correct adapter passes exact and bound mode over several seeds and both output formats.
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_numpy_adapter_exact_and_bound(seed):
    for prop in ("gemm.exact", "gemm.ordered_bound"):
        r = mxgate.check(prop, NumpyAdapter(), cases=40, seed=seed)
        assert r.passed, r
