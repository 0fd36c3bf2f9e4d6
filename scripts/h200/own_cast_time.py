"""The libraries' own fp32 -> e4m3fn cast over all 2^32 fp32 bit patterns on this host, timed
alone (input generation outside the clock): torch on the CPU (its own threads:
torch.get_num_threads()) in chunks of 2^22 and of 2^24 (the survey's host path calls an op with
2^24 inputs of a one-byte target), and ml_dtypes (numpy astype, one thread) in chunks of 2^22.
The survey's seconds per format for the same op are within the goal when at most twice these
(docs/python.md §14.2). Prints one line per library and chunk size."""

import time

import numpy as np

ALL = 1 << 32


def timed(cast, chunk=1 << 22):
    spent = 0.0
    for lo in range(0, ALL, chunk):
        x = np.arange(lo, lo + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
        t0 = time.perf_counter()
        cast(x)
        spent += time.perf_counter() - t0
    return spent


try:
    import torch

    for log2 in (22, 24):
        s = timed(lambda x: torch.from_numpy(x).to(torch.float8_e4m3fn), 1 << log2)
        print(f"torch {torch.__version__} cpu threads {torch.get_num_threads()}, chunks of "
              f"2^{log2}: {s:.2f} s")
except ImportError as e:
    print("torch:", e)
try:
    import ml_dtypes

    s = timed(lambda x: x.astype(ml_dtypes.float8_e4m3fn))
    print(f"ml_dtypes {ml_dtypes.__version__} (one thread): {s:.2f} s")
except ImportError as e:
    print("ml_dtypes:", e)
