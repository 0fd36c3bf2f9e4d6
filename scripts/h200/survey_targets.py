"""survey_targets.py SPEC TARGET...: the exhaustive cast survey (all 2^32 fp32 inputs) of one
adapter's cast op for the named targets only, in process (mxgate.survey_cast), as a TSV: target,
inputs, the sweep's seconds and the setup's (run tables, the op's warm-up call; docs/python.md
§13), the claims it equals bit for bit, and per claim the mismatches and the first one.
For a GPU host where the whole survey of an adapter would take too long (docs/formats.md §1.4:
ml_dtypes' e3m4, e4m3ieee and e4m3b11fnuz)."""

import sys

import mxgate
from mxgate import spec


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    import importlib

    module, name = spec.parse(argv[0])
    try:
        adapter = getattr(importlib.import_module(module), name)()
        adapter.check_available()
    except (ImportError, mxgate.Unavailable) as e:
        print(f"survey_targets: {argv[0]} is unavailable here: {e}", file=sys.stderr)
        return 3
    print("target\tinputs\tsweep_s\tsetup_s\top_s\tequals\tclaim\tmismatches\tfirst")
    for target in argv[1:]:
        for s in mxgate.survey_cast(adapter, target=target, inputs="all"):
            for r in s.results or [None]:
                print("\t".join(str(v) for v in (
                    s.target, s.inputs, f"{s.seconds:.2f}", f"{s.setup_seconds:.2f}",
                    "-" if s.op_seconds is None else f"{s.op_seconds:.2f}",
                    ",".join(s.matches) or "-",
                    ",".join(r.claims) if r else "-", r.mismatches if r else "-",
                    (r.first if r else s.error) or "-")))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
