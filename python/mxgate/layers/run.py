"""Running the layer properties: generation from the seed, the greedy shrinker over the config,
and the CheckResult mxgate.check returns (docs/layers.md §3)."""

import importlib
import sys
import time
import zlib
from typing import Any, Callable, Iterable, List, Optional, Tuple, Union

import numpy as np

from .. import catalog
from .. import spec as _spec
from ..errors import AdapterError, InputError
from ..result import CheckResult
from . import data as D
from .properties import OPT_IN, PROPERTIES, Outcome, run_case
from .protocol import LayerAdapter

_CATALOG: Optional[tuple] = None
MAX_SHRINK_STEPS = 400
MAX_SHRINK_SECONDS = 30.0


def _catalog() -> tuple:
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = D.catalog_rows(catalog.shapes())
    return _CATALOG


def resolve(impl: Any) -> Tuple[LayerAdapter, Optional[str]]:
    """(adapter, MODULE:OBJECT or None) of a LayerAdapter, its class or a spec string."""
    spec = None
    if isinstance(impl, str):
        module, name = _spec.parse(impl)
        try:
            obj = getattr(importlib.import_module(module), name, None)
        except ImportError as e:  # the user's module, not ours: named, not a traceback
            raise InputError(f"implementation spec {impl!r}: cannot import {module}: {e}") from None
        if obj is None:
            raise AdapterError(f"module {module} has no attribute '{name}'")
        spec, impl = f"{module}:{name}", obj
    if isinstance(impl, type) and issubclass(impl, LayerAdapter):
        impl = impl()
    if not isinstance(impl, LayerAdapter):
        raise AdapterError(f"{type(impl).__name__} is not an mxgate.layers.LayerAdapter")
    if spec is None:
        spec = _find_spec(impl)
    impl.check_available()
    return impl, spec


def _find_spec(adapter: LayerAdapter) -> Optional[str]:
    cls = type(adapter)
    mod = sys.modules.get(cls.__module__)
    if mod is None or cls.__module__ == "__main__":
        return None
    for name, value in vars(mod).items():
        if value is adapter:
            return f"{cls.__module__}:{name}"
    if getattr(mod, cls.__name__, None) is cls:
        return f"{cls.__module__}:{cls.__name__}"
    return None


def is_layer_impl(impl: Any) -> bool:
    """Whether impl is a LayerAdapter (instance, class, or a spec naming one)."""
    if isinstance(impl, str):
        try:
            module, name = _spec.parse(impl)
            impl = getattr(importlib.import_module(module), name, None)
        except Exception:
            return False
    return isinstance(impl, LayerAdapter) or (isinstance(impl, type)
                                              and issubclass(impl, LayerAdapter))


def property_names(property: Union[str, Iterable[str]], adapter: LayerAdapter) -> List[str]:
    """layer.NAME, layer.* / all (every property; layer.decisions only when the adapter
    claims vLLM's rules), or a list of names."""
    if isinstance(property, str) and property in ("layer.*", "all"):
        return [p for p in PROPERTIES if p not in OPT_IN or adapter.claims_vllm_rules]
    names = [property] if isinstance(property, str) else list(property)
    if isinstance(property, str) and "," in property:
        names = property.split(",")
    for p in names:
        if p not in PROPERTIES:
            raise InputError(f"unknown layer property '{p}' (layer.*: "
                             f"{', '.join(PROPERTIES)})", verb="property")
    return names


def _shrink(name: str, adapter: LayerAdapter, case: D.Case, outcome: Outcome,
            candidates=D.shrink_candidates, run=run_case, max_steps: int = MAX_SHRINK_STEPS,
            max_seconds: float = MAX_SHRINK_SECONDS):
    """Greedy: the first smaller case that still fails replaces the case, until none does (or
    max_steps runs / max_seconds have passed). candidates and run: the case kind's (the MoE
    properties pass theirs)."""
    steps, start = 0, time.monotonic()
    improved = True
    while improved:
        improved = False
        for cand in candidates(case):
            if steps >= max_steps or time.monotonic() - start > max_seconds:
                return case, outcome
            steps += 1
            o = run(name, adapter, cand)
            if o.status in ("fail", "error"):
                case, outcome, improved = cand, o, True
                break
    return case, outcome


def _expression(adapter: LayerAdapter, spec: Optional[str]) -> str:
    if spec is None:
        return "<your adapter>"
    mod, name = spec.split(":")
    obj = getattr(sys.modules.get(mod), name, None)
    return f"{mod}.{name}" + ("()" if obj is type(adapter) else "")


class Progress:
    """One line on stderr at most every `period` seconds of a run (the CLI's; mxgate.check is
    quiet): the property, the cases done of those asked for, the unsupported ones."""

    def __init__(self, name: str, impl: str, total: int, period: float = 5.0) -> None:
        self.name, self.impl, self.total, self.period = name, impl, total, period
        self.start = self.last = time.monotonic()

    def tick(self, done: int, unsupported: int) -> None:
        now = time.monotonic()
        if now - self.last < self.period or done >= self.total:
            return
        self.last = now
        print(f"  {self.name} [{self.impl}]: {done}/{self.total} cases ({unsupported} "
              f"unsupported), {now - self.start:.0f} s", file=sys.stderr, flush=True)


def run_cases(name: str, adapter: Any, draw: Callable[[int], Any], cases: int,
              runner: Callable[[str, Any, Any], Outcome], progress: bool = False):
    """Draws case i by draw(i) and runs it until one does not pass: (run, unsupported,
    unsupported reasons (5 at most), kernels seen, (case, outcome) of the failing one or None)."""
    run = unsupported = 0
    reasons: List[str] = []
    kernels: List[str] = []
    meter = Progress(name, adapter.name, cases) if progress else None
    for index in range(cases):
        c = draw(index)
        o = runner(name, adapter, c)
        if meter is not None:
            meter.tick(index + 1, unsupported + (o.status == "unsupported"))
        if o.status == "unsupported":
            unsupported += 1
            if o.message not in reasons and len(reasons) < 5:
                reasons.append(o.message)
            continue
        run += 1
        kernels += [k for k in o.kernels if k not in kernels]
        if o.status != "pass":
            return run, unsupported, reasons, kernels, (c, o)
    return run, unsupported, reasons, kernels, None


def check_one(name: str, adapter: LayerAdapter, spec: Optional[str], cases: int, seed: int,
              case: Optional[str], shrink: bool, progress: bool = False) -> CheckResult:
    if name not in PROPERTIES:
        raise InputError(f"unknown layer property '{name}'", verb="property")
    if cases < 1 or seed < 0:
        raise InputError(f"cases {cases} must be >= 1 and seed {seed} >= 0", verb="property")
    fixed = D.Case.parse(case) if case is not None else None
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    run, unsupported, reasons, kernels, failing = run_cases(
        name, adapter, lambda i: fixed or D.draw(rng, _catalog()), 1 if fixed else cases,
        run_case, progress)
    base = dict(property=name, impl=adapter.name, cases=run, unsupported=unsupported,
                unsupported_reasons=tuple(reasons), ops=tuple(kernels), seed=seed,
                cases_requested=cases)
    if failing is None:
        return CheckResult(passed=True, **base)
    c, o = failing
    if shrink and fixed is None:
        c, o = _shrink(name, adapter, c, o)
    text = c.text()
    cli = None
    if spec is not None:
        cli = f"mxgate property {name} --impl py:{spec} --seed {seed} --cases {cases}"
    return CheckResult(passed=False, counterexample=text, kind=o.status, failure=o.message,
                       location=o.location,
                       reproduce=f"mxgate.check({name!r}, impl={_expression(adapter, spec)}, "
                                 f"case={text!r})", cli=cli, **base)


def check(property: Union[str, Iterable[str]], impl: Any, cases: int = 100, seed: int = 1,
          case: Optional[str] = None, shrink: bool = True, progress: bool = False) -> CheckResult:
    """mxgate.check for layer properties: impl a LayerAdapter (instance, class or spec); a
    MoEAdapter, or moe.* names, run the MoE properties (mxgate.moe; layer.* means moe.* there).
    progress: a line on stderr every 5 s of a property's run (the CLI's)."""
    from .. import moe

    names = [property] if isinstance(property, str) else list(property)
    if moe.is_moe_impl(impl) or all(str(p).startswith("moe.") for p in names):
        if isinstance(property, str) and property == "layer.*":
            property = "moe.*"
        return moe.check(property, impl, cases=cases, seed=seed, case=case, shrink=shrink,
                         progress=progress)
    adapter, spec = resolve(impl)
    names = property_names(property, adapter)
    if len(names) == 1 and (isinstance(property, str) and property not in ("layer.*", "all")):
        return check_one(names[0], adapter, spec, cases, seed, case, shrink, progress)
    if case is not None:
        raise InputError("case= replays one property's case: name one property",
                         verb="property")
    parts = [check_one(p, adapter, spec, cases, seed, None, shrink, progress) for p in names]
    label = property if isinstance(property, str) else ",".join(names)
    return CheckResult.of_several(label, adapter.name, seed, cases, parts)
