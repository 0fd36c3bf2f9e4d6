#!/usr/bin/env python3
"""The host cast survey through Python (mxgate.survey_cast in process: the route of `mxgate
survey --impl py:...` for a host op, docs/python.md §13) over all 2^32 inputs, against the op's
own call loop over the same chunks of 2^22 with the inputs made outside the clock (as
scripts/h200/own_cast_time.py times the libraries). Not a test, and not a cast: the op is a
cheap numpy stand-in (each input's top byte as its code: every input differs from every claim,
which the survey counts), so mxgate's own work per call shows. Run:

    /usr/bin/python3 bench/python_survey_speed.py [BUILD_DIR...]

with BUILD_DIR (default build/default) holding capi/libmxgate.so; each build is driven by the
python/ of its own source tree (BUILD_DIR/../../python), this tree's where that is absent, in a
process of its own, the builds interleaved. Prints per build the survey's sweep seconds for the op
returning its codes and, where the package knows keyword `out`, for the op writing them into
mxgate's buffer; and the op's own seconds.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALL, CHUNK = 1 << 32, 1 << 22


def python_dir(build):
    own = Path(build).resolve().parents[1] / "python"
    return own if (own / "mxgate").is_dir() else ROOT / "python"


def child(build):
    os.environ["MXGATE_LIBRARY"] = str(Path(build) / "capi" / "libmxgate.so")
    sys.path.insert(0, str(python_dir(build)))
    import numpy as np

    import mxgate

    def codes(x):
        return (x.view(np.uint32) >> 24).astype(np.uint8)

    def returning(x, out_dtype):
        return codes(x)

    def in_place(x, out_dtype, out):
        np.right_shift(x.view(np.uint32), 24, out=out, casting="unsafe")

    spent = 0.0
    for lo in range(0, ALL, CHUNK):
        x = np.arange(lo, lo + CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        t0 = time.perf_counter()
        codes(x)
        spent += time.perf_counter() - t0
    print(f"  op alone (returning its codes): {spent:.2f} s")
    variants = [("returning", returning)]
    if hasattr(mxgate.Op("cast", returning, "probe"), "_writes_out"):  # the package knows `out`
        variants.append(("in place (out=)", in_place))
    for name, fn in variants:
        op = mxgate.Op("cast", fn, "stand_in", out_dtypes=("e4m3fn",))
        (s,) = mxgate.survey_cast(op, target="e4m3fn", inputs="all")
        assert s.inputs == ALL and not s.error, s
        print(f"  survey, op {name}: {s.seconds:.2f} s (setup {s.setup_seconds:.2f} s)")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    builds = sys.argv[1:] or [str(ROOT / "build" / "default")]
    for b in builds:
        print(f"{b} (python: {python_dir(b)}), load {os.getloadavg()[0]:.1f}", flush=True)
        subprocess.run([sys.executable, __file__, "--child", b], check=True)


if __name__ == "__main__":
    main()
