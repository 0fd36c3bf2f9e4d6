#!/usr/bin/env python3
"""Property cases per CPU second against the numpy adapter at M, N, K <= 256 (docs/python.md §12):
mxgate.check in this process, and `mxgate property --impl py:...` through the worker process,
next to the in-process C++ figure (bench_property_speed). Not a test. Run on one core:

    taskset -c 0 /usr/bin/python3 bench/python_check_speed.py [BUILD_DIR]

with PYTHONPATH=python and BUILD_DIR (default build/default) holding the CLI, libmxgate.so and
bench/bench_property_speed.
"""

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "default"
os.environ.setdefault("MXGATE_LIBRARY", str(BUILD / "capi" / "libmxgate.so"))
sys.path.insert(0, str(ROOT / "python"))

import mxgate  # noqa: E402
from mxgate.adapters import numpy as numpy_adapter  # noqa: E402

CASES = 1000


def best(f, repeats=3):
    return min(f() for _ in range(repeats))


def in_process(cls):
    def once():
        t = time.process_time()
        r = mxgate.check("gemm.exact", getattr(numpy_adapter, cls)(), cases=CASES, seed=7)
        assert r.passed, r
        return time.process_time() - t
    return CASES / best(once)


def worker(cls):
    env = dict(os.environ, MXGATE_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT / "python"))

    def once():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([str(BUILD / "tools" / "mxgate" / "mxgate"), "property", "gemm.exact",
                        "--impl", f"py:mxgate.adapters.numpy:{cls}", "--cases", str(CASES)],
                       check=True, capture_output=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # mxgate and its worker
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return CASES / best(once)


def cpp(limit):
    exe = BUILD / "bench" / "bench_property_speed"
    out = subprocess.run([str(exe), "--benchmark_format=json", "--benchmark_repetitions=3",
                          f"--benchmark_filter=/{limit}$",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)["benchmarks"]
    return max(r["items_per_second"] for r in rows if r.get("aggregate_name") in ("mean", "median"))


if __name__ == "__main__":
    print("CPU time (the processes' user + system), so a loaded machine reads as an idle one")
    for cls, limit in (("NumpySmall", 256), ("NumpyTiny", 64)):
        print(f"gemm.exact on gemm_mx, M, N, K <= {limit}, {CASES} cases, best of 3:")
        print(f"  mxgate.check, numpy adapter, in process : {in_process(cls):8.0f} cases/s")
        print(f"  mxgate property --impl py:..., worker    : {worker(cls):8.0f} cases/s")
        print(f"  C++ in process, example plugin gemm_mx   : {cpp(limit):8.0f} cases/s")
