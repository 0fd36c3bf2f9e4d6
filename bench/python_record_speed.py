"""Flight recorder figures (docs/record.md §7): recording overhead per call against the call
alone (a numpy block-FP8 GEMM, small and 1024^3), replay calls/s, bytes per record against the
tensors' own bytes. Run: PYTHONPATH=python:python/tests MXGATE_LIBRARY=... python3 THIS [DIR]."""

import os
import shutil
import sys
import tempfile
import time

import numpy as np

import mxgate
import record_model
from mxgate.replay import replay


def operands(m, n, k, seed=1):
    rng = np.random.default_rng(seed)
    a, sa = record_model.quantize(rng.standard_normal((m, k)).astype(np.float32), 1, 128)
    b, sb = record_model.quantize(rng.standard_normal((n, k)).astype(np.float32), 128, 128)
    return a, sa, b, sb


def per_call(fn, args, reps):
    fn(*args)
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - t0) / reps


def main(root):
    hooks = {"record_model.correct_gemm": dict(family="gemm_block", accumulator="fp32_rn")}
    for m, n, k, reps in ((16, 256, 512, 50), (1024, 1024, 1024, 5)):
        args = operands(m, n, k)
        alone = per_call(record_model.correct_gemm, args, reps)
        d = os.path.join(root, f"rec_{m}x{n}x{k}")
        shutil.rmtree(d, ignore_errors=True)
        with mxgate.record(d, hooks=hooks, known=False):
            recorded = per_call(record_model.correct_gemm, args, reps)
        folders = [os.path.join(d, f) for f in os.listdir(d) if os.path.isdir(os.path.join(d, f))]
        rec_bytes = sum(os.path.getsize(os.path.join(f, x)) for f in folders for x in
                        os.listdir(f)) / len(folders)
        tensor_bytes = sum(a.nbytes for a in args) + m * n * 4
        t0 = time.perf_counter()
        r = replay(d)
        rate = len(r.results) / (time.perf_counter() - t0)
        print(f"M={m} N={n} K={k}: call alone {alone * 1e3:.3f} ms, recorded "
              f"{recorded * 1e3:.3f} ms (overhead {(recorded - alone) * 1e3:.3f} ms/call, "
              f"x{recorded / alone:.2f}); record {rec_bytes:.0f} B vs tensors {tensor_bytes} B "
              f"(x{rec_bytes / tensor_bytes:.3f}); replay {rate:.1f} calls/s "
              f"({len(r.results)} calls, exit {r.exit_code})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
