"""The libraries' own fp32 -> e4m3fn cast over all 2^32 fp32 bit patterns on this host, timed
alone (input generation outside the clock), in chunks of 2^22 as the survey's host path calls an
op: torch on the CPU (its own threads: torch.get_num_threads()) and ml_dtypes (numpy astype, one
thread). The survey's seconds per format for the same op are within the goal when at most twice
these (docs/python.md §14.2). Prints one line per library."""

import time

import numpy as np

ALL, CHUNK = 1 << 32, 1 << 22


def timed(cast):
    spent = 0.0
    for lo in range(0, ALL, CHUNK):
        x = np.arange(lo, lo + CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        t0 = time.perf_counter()
        cast(x)
        spent += time.perf_counter() - t0
    return spent


try:
    import torch

    s = timed(lambda x: torch.from_numpy(x).to(torch.float8_e4m3fn))
    print(f"torch {torch.__version__} cpu threads {torch.get_num_threads()}: {s:.2f} s")
except ImportError as e:
    print("torch:", e)
try:
    import ml_dtypes

    s = timed(lambda x: x.astype(ml_dtypes.float8_e4m3fn))
    print(f"ml_dtypes {ml_dtypes.__version__} (one thread): {s:.2f} s")
except ImportError as e:
    print("ml_dtypes:", e)
