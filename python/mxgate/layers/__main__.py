"""`python -m mxgate.layers`: the layer properties from the shell, for `mxgate property
layer.* --impl py:MODULE:OBJECT` and `mxgate gate --impl ...`, which run this (docs/layers.md
§6).

    python -m mxgate.layers property NAME[,NAME...]|layer.* --impl SPEC [--seed S] [--cases N]
                           [--case TEXT] [--json FILE]
    python -m mxgate.layers is-layer SPEC...     one line per SPEC, "layer SPEC" or "other SPEC"
                                                 (tab-separated); exit 0 when every SPEC names
                                                 a LayerAdapter, else 1
    python -m mxgate.layers list                 the properties, one a line
    python -m mxgate.layers plan --impl SPEC --config TEXT [--label L] [--config ...] [--json]
                                                 the user's decisions beside the model's

Exit codes as `mxgate property`: 0 every property passed, 1 one failed, 2 bad input, 3 the
adapter is unavailable here."""

import argparse
import json
import sys
from typing import Callable, List, Optional

from ..errors import InputError, Unavailable
from .properties import OPT_IN, PROPERTIES
from . import plan
from .run import check, is_layer_impl, resolve


def _json(r) -> dict:
    loc = r.location
    return dict(property=r.property, impl=r.impl, passed=r.passed, verdict=r.verdict,
                cases=r.cases, unsupported=r.unsupported,
                unsupported_reasons=list(r.unsupported_reasons), kernels=list(r.ops),
                seed=r.seed, cases_requested=r.cases_requested, counterexample=r.counterexample,
                failure=r.failure, reproduce=r.reproduce, cli=r.cli,
                location=None if loc is None else dict(row=loc.row, col=loc.col,
                                                       expected_bits=loc.expected_bits,
                                                       actual_bits=loc.actual_bits, ulp=loc.ulp))


def _print(r) -> None:
    """The verdict lines of `mxgate property`."""
    head = f"{r.property} on {r.impl}, seed {r.seed}, {r.cases_requested} cases ... "
    if r.passed:
        print(head + (f"pass ({r.cases} cases, {r.unsupported} unsupported)" if r.cases else
                      f"unsupported ({r.unsupported} cases: "
                      f"{r.unsupported_reasons[0] if r.unsupported_reasons else ''})"))
        return
    print(head + f"{r.verdict} after {r.cases} cases")
    print(f"    shrunk case: {r.counterexample}")
    for i, line in enumerate((r.failure or "").splitlines()):
        print(("    failure: " if i == 0 else "    ") + line)
    if r.location is not None:
        print("    " + r.located())
    print(f"    reproduce: {r.reproduce}")
    if r.cli:
        print(f"    cli: {r.cli}")


def _guarded(verb: str, impl: str, run: Callable[[], int]) -> int:
    """run()'s exit code; its Unavailable exit 3 and its InputError exit 2, each one line on
    stderr as `mxgate VERB` writes them."""
    try:
        return run()
    except Unavailable as e:
        print(f"mxgate {verb}: --impl {impl}: unavailable: {e}", file=sys.stderr)
        return 3
    except InputError as e:
        print(f"mxgate {verb}: {e}", file=sys.stderr)
        return 2


def _plan(spec: str, configs: List[str], labels: List[str], as_json: bool) -> int:
    if labels and len(labels) != len(configs):
        raise InputError("plan: give one --label per --config, or none")
    adapter, _ = resolve(spec)
    return plan.main(adapter, configs, labels, as_json)


def _property(a: argparse.Namespace, spec: str) -> int:
    result = check(a.names, spec, cases=a.cases, seed=a.seed, case=a.case, progress=True)
    for r in result.results:
        _print(r)
    if a.json:
        text = json.dumps(dict(schema="mxgate-layer-property/1",
                               results=[_json(r) for r in result.results]), indent=1)
        if a.json == "-":
            print(text)
        else:
            with open(a.json, "w") as f:
                f.write(text + "\n")
    return 0 if result.passed else 1


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mxgate.layers")
    sub = p.add_subparsers(dest="verb", required=True)
    prop = sub.add_parser("property")
    prop.add_argument("names")
    prop.add_argument("--impl", required=True)
    prop.add_argument("--seed", type=int, default=1)
    prop.add_argument("--cases", type=int, default=100)
    prop.add_argument("--case")
    prop.add_argument("--json")
    isl = sub.add_parser("is-layer")
    isl.add_argument("specs", nargs="+")
    sub.add_parser("list")
    pl = sub.add_parser("plan")
    pl.add_argument("--impl", required=True)
    pl.add_argument("--config", action="append", required=True)
    pl.add_argument("--label", action="append", default=[])
    pl.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.verb == "list":
        from .. import moe

        for name, fn in list(PROPERTIES.items()) + list(moe.PROPERTIES.items()):
            doc = (fn.__doc__ or "").split("\n")[0]
            print(f"{name:<24} {'(opt-in) ' if name in OPT_IN else ''}{doc}")
        return 0
    if a.verb == "is-layer":  # one interpreter answers every spec the gate has (tab-separated)
        from .. import moe

        layer = [is_layer_impl(s) or moe.is_moe_impl(s) for s in a.specs]
        for s, yes in zip(a.specs, layer):
            print(f"{'layer' if yes else 'other'}\t{s}")
        return 0 if all(layer) else 1
    spec = a.impl[3:] if a.impl.startswith("py:") else a.impl
    if a.verb == "plan":
        return _guarded("plan", spec, lambda: _plan(spec, a.config, a.label, a.json))
    return _guarded("property", a.impl, lambda: _property(a, spec))


if __name__ == "__main__":
    sys.exit(main())
