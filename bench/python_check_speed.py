#!/usr/bin/env python3
"""Property cases per CPU second against the numpy adapter at M, N, K <= 256 (docs/python.md §12):
mxgate.check in process, and `mxgate property --impl py:...` through the worker process, next to
the in-process C++ figure (bench_property_speed). Not a test. Run on one core:

    taskset -c 0 /usr/bin/python3 bench/python_check_speed.py [BUILD_DIR...]

with BUILD_DIR (default build/default) holding the CLI, libmxgate.so and bench/bench_property_speed.
Several build directories (e.g. an older commit's, built in a tree of its own) are measured in one
run, interleaved, each figure the best of the rounds, side by side. Each build is driven by the
python/ of its own source tree (BUILD_DIR/../../python: the package and adapters of that commit,
so an adapter's change is measured with the library's), this tree's where that is absent.
"""

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = 1000
ROUNDS = 3
SHAPES = (("NumpySmall", 256), ("NumpyTiny", 64))


def python_dir(build):
    """The python/ of the build's source tree (a build directory two levels below it), else
    this tree's."""
    own = Path(build).resolve().parents[1] / "python"
    return own if (own / "mxgate").is_dir() else ROOT / "python"


def in_process_child(build, cls):
    """In a process of its own (one libmxgate per process): cases per CPU second of one
    mxgate.check run, printed."""
    os.environ["MXGATE_LIBRARY"] = str(Path(build) / "capi" / "libmxgate.so")
    sys.path.insert(0, str(python_dir(build)))
    import mxgate
    from mxgate.adapters import numpy as numpy_adapter

    impl = getattr(numpy_adapter, cls)()
    t = time.process_time()
    r = mxgate.check("gemm.exact", impl, cases=CASES, seed=7)
    assert r.passed, r
    print(CASES / (time.process_time() - t))


def in_process(build, cls):
    out = subprocess.run([sys.executable, __file__, "--in-process", str(build), cls],
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def worker(build, cls):
    env = dict(os.environ, MXGATE_PYTHON=sys.executable, PYTHONPATH=str(python_dir(build)))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(build / "tools" / "mxgate" / "mxgate"), "property", "gemm.exact",
                    "--impl", f"py:mxgate.adapters.numpy:{cls}", "--cases", str(CASES)],
                   check=True, capture_output=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # mxgate and its worker
    return CASES / ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))


def cpp(build, limit):
    out = subprocess.run([str(build / "bench" / "bench_property_speed"), "--benchmark_format=json",
                          f"--benchmark_filter=/{limit}$"],
                         check=True, capture_output=True, text=True).stdout
    return max(r["items_per_second"] for r in json.loads(out)["benchmarks"])


ROUTES = (("mxgate.check, numpy adapter, in process", in_process),
          ("mxgate property --impl py:..., worker", worker),
          ("C++ in process, example plugin gemm_mx", None))


def main(builds):
    best = {}
    for _ in range(ROUNDS):  # interleaved: a load change hits every build alike
        for cls, limit in SHAPES:
            for label, route in ROUTES:
                for b in builds:
                    v = route(b, cls) if route else cpp(b, limit)
                    best[(cls, label, b)] = max(best.get((cls, label, b), 0.0), v)
    print("cases per CPU second (the processes' user + system), best of "
          f"{ROUNDS} interleaved rounds, {CASES} cases each")
    for i, b in enumerate(builds):
        print(f"  [{i}] {b} (python: {python_dir(b)})")
    for cls, limit in SHAPES:
        print(f"gemm.exact on gemm_mx, M, N, K <= {limit}:")
        for label, _ in ROUTES:
            vals = [best[(cls, label, b)] for b in builds]
            cells = "  ".join(f"[{i}] {v:6.0f}" for i, v in enumerate(vals))
            ratio = f"  x{vals[-1] / vals[0]:.2f}" if len(vals) > 1 else ""
            print(f"  {label:42s}: {cells}{ratio}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--in-process"]:
        in_process_child(sys.argv[2], sys.argv[3])
    else:
        main([Path(a).resolve() for a in sys.argv[1:]] or [ROOT / "build" / "default"])
