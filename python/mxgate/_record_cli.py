"""`python -m mxgate._record_cli VERB ARGS...`: the flight recorder's CLI verbs, which the C++
CLI's `mxgate replay` / `mxgate shrink` run with the interpreter the gate uses (docs/record.md
§4). Exit codes: 0 all pass, 1 a call failed, 2 bad input or a bad dump (the file named)."""

import sys

from .errors import Error


def main(argv):
    if not argv or argv[0] not in ("replay", "shrink"):
        print("usage: python -m mxgate._record_cli {replay,shrink} ...", file=sys.stderr)
        return 2
    try:
        if argv[0] == "replay":
            from .replay import main_replay

            return main_replay(argv[1:])
        from .shrink import main_shrink

        return main_shrink(argv[1:])
    except Error as e:  # bad input or a bad dump: exit 2 naming it, never a traceback
        print(f"mxgate {argv[0]}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
