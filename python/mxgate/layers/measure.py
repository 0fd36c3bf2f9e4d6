"""Cases to detection of the faulty layer adapters (docs/layers.md §5): for each class of
linear_example_faulty, the property that catches it, run over seeds 1..20 without shrinking;
the median of the cases drawn until the first failure, and the shrunk config of seed 1.

    python -m mxgate.layers.measure [--seeds 20] [--cases 200]"""

import argparse
import statistics
import sys
from typing import List, Optional

from ..adapters.linear_example_faulty import FAULTY
from .run import check

DETECTED_BY = {
    "Z1": "layer.load_equivalence",
    "Z2": "layer.end_to_end",
    "Z3": "layer.single_transform",
    "Z4": "layer.direct_reads",
    "Z5": "layer.end_to_end",
    "Z6": "layer.single_transform",
    "Z7": "layer.end_to_end",
    "Z31": "layer.end_to_end",
}


def cases_to_detection(z: str, seeds: int = 20, cases: int = 200) -> List[Optional[int]]:
    """Per seed 1..seeds: the cases drawn (unsupported included) until class z's variant first
    failed its property, or None when it passed all `cases`."""
    counts: List[Optional[int]] = []
    for seed in range(1, seeds + 1):
        r = check(DETECTED_BY[z], FAULTY[z](), cases=cases, seed=seed, shrink=False)
        counts.append(r.cases + r.unsupported if not r.passed else None)
    return counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m mxgate.layers.measure")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--cases", type=int, default=200)
    a = p.parse_args(argv)
    for z, cls in FAULTY.items():
        prop = DETECTED_BY[z]
        found = [c for c in cases_to_detection(z, a.seeds, a.cases) if c is not None]
        shrunk = check(prop, cls(), cases=a.cases, seed=1)
        print(f"| {z} | {cls.__name__} | {prop} | {len(found)}/{a.seeds} | "
              f"{statistics.median(found) if found else '-'} | {shrunk.counterexample} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
