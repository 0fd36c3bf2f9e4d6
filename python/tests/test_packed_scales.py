"""The contract clause packed_scales from Python (docs/plugins.md §3.3): an op declaring it is
never handed a scale grid that is a view into a wider tensor, in process (mxgate.check) or through
the worker (the description line `packed_scales 1`, shown by `mxgate impls --json`); the same op
without it is. Not covered here: C++ ops and plugins (tests/test_packed_scales.cpp)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import mxgate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import packed_adapters as P  # noqa: E402


def views_seen(adapter):
    P.SEEN.clear()
    r = mxgate.check("gemm.exact", adapter, cases=120, seed=3)
    assert r.passed, r
    assert P.SEEN, "no call reached the op"
    return [s for s in P.SEEN if s[0] != s[1]]


# A library that takes no scale stride reads a padded row as the next one: an op declaring the
# clause must get packed grids only, and without it the same generator must still draw views
# (else the first assertion could not fail).
def test_in_process_packed_op_gets_no_views():
    assert views_seen(P.Views()), "the generator drew no scale view at all"
    assert views_seen(P.Packed()) == []


# The clause crosses the worker's description: impls --json reports it for the packed op only.
def test_worker_description_carries_the_clause(cli):
    here = str(Path(__file__).resolve().parent)
    env = dict(os.environ, MXGATE_PYTHON=sys.executable, PYTHONPATH=os.pathsep.join(
        [here, str(Path(here).parents[0]), os.environ.get("PYTHONPATH", "")]))
    for name, impl_name, want in (("Packed", "packed_only", True),
                                  ("Views", "packed_views", False)):
        r = subprocess.run([str(cli.path), "impls", "--json", "--impl", f"py:packed_adapters:{name}"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        d = json.loads(r.stdout)
        impl = {i["name"]: i for i in d["implementations"]}[impl_name]
        assert impl["ops"][0]["contract"]["packed_scales"] is want, impl["ops"][0]
