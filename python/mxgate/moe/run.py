"""Running the MoE properties: generation from the seed over the adapter's token buckets, the
greedy shrinker over the case, and the CheckResult mxgate.check returns (docs/moe.md §3)."""

import importlib
import sys
import zlib
from typing import Any, Iterable, List, Optional, Tuple, Union

import numpy as np

from .. import spec as _spec
from ..errors import AdapterError, InputError
from ..layers.run import _shrink as layer_shrink
from ..layers.run import run_cases
from ..result import CheckResult
from . import data as D
from .config import MoEAdapter
from .properties import PROPERTIES, Outcome, declarations, run_case

MAX_SHRINK_STEPS = 300
MAX_SHRINK_SECONDS = 30.0


def resolve(impl: Any) -> Tuple[MoEAdapter, Optional[str]]:
    spec = None
    if isinstance(impl, str):
        module, name = _spec.parse(impl)
        try:
            obj = getattr(importlib.import_module(module), name, None)
        except ImportError as e:
            raise InputError(f"implementation spec {impl!r}: cannot import {module}: {e}") from None
        if obj is None:
            raise AdapterError(f"module {module} has no attribute '{name}'")
        spec, impl = f"{module}:{name}", obj
    if isinstance(impl, type) and issubclass(impl, MoEAdapter):
        impl = impl()
    if not isinstance(impl, MoEAdapter):
        raise AdapterError(f"{type(impl).__name__} is not an mxgate.moe.MoEAdapter")
    if spec is None:
        cls = type(impl)
        mod = sys.modules.get(cls.__module__)
        if mod is not None and cls.__module__ != "__main__" and getattr(mod, cls.__name__,
                                                                        None) is cls:
            spec = f"{cls.__module__}:{cls.__name__}"
    impl.check_available()
    declarations(impl)
    return impl, spec


def is_moe_impl(impl: Any) -> bool:
    if isinstance(impl, str):
        try:
            module, name = _spec.parse(impl)
            impl = getattr(importlib.import_module(module), name, None)
        except Exception:
            return False
    return isinstance(impl, MoEAdapter) or (isinstance(impl, type)
                                            and issubclass(impl, MoEAdapter))


def _buckets(adapter: MoEAdapter) -> Tuple[Tuple[int, int], ...]:
    b = tuple(tuple(x) for x in adapter.token_buckets(None))
    if not b or any(len(x) != 2 or not 1 <= x[0] <= x[1] <= 4096 for x in b):
        raise InputError(f"MoEAdapter.token_buckets: {b!r} is not a list of (lo, hi) with "
                         "1 <= lo <= hi <= 4096")
    return b


def _shrink(name: str, adapter: MoEAdapter, case: D.Case, outcome: Outcome):
    return layer_shrink(name, adapter, case, outcome, D.shrink_candidates, run_case,
                        MAX_SHRINK_STEPS, MAX_SHRINK_SECONDS)


def check_one(name: str, adapter: MoEAdapter, spec: Optional[str], cases: int, seed: int,
              case: Optional[str], shrink: bool, progress: bool = False) -> CheckResult:
    if name not in PROPERTIES:
        raise InputError(f"unknown MoE property '{name}' (moe.*: {', '.join(PROPERTIES)})",
                         verb="property")
    if cases < 1 or seed < 0:
        raise InputError(f"cases {cases} must be >= 1 and seed {seed} >= 0", verb="property")
    fixed = D.Case.parse(case) if case is not None else None
    buckets = _buckets(adapter)
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    run, unsupported, reasons, kernels, failing = run_cases(
        name, adapter, lambda i: fixed or D.draw(rng, buckets, i), 1 if fixed else cases,
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
    cli = f"mxgate property {name} --impl py:{spec} --seed {seed} --cases {cases}" if spec \
        else None
    expr = spec.replace(":", ".") + "()" if spec else "<your adapter>"
    return CheckResult(passed=False, counterexample=text, kind=o.status, failure=o.message,
                       location=o.location,
                       reproduce=f"mxgate.check({name!r}, impl={expr}, case={text!r})", cli=cli,
                       **base)


def property_names(property: Union[str, Iterable[str]]) -> List[str]:
    if isinstance(property, str) and property in ("moe.*", "all"):
        return list(PROPERTIES)
    names = property.split(",") if isinstance(property, str) else list(property)
    for p in names:
        if p not in PROPERTIES:
            raise InputError(f"unknown MoE property '{p}' (moe.*: {', '.join(PROPERTIES)})",
                             verb="property")
    return names


def check(property: Union[str, Iterable[str]], impl: Any, cases: int = 100, seed: int = 1,
          case: Optional[str] = None, shrink: bool = True, progress: bool = False) -> CheckResult:
    """mxgate.check for MoE properties: impl a MoEAdapter (instance, class or spec)."""
    adapter, spec = resolve(impl)
    names = property_names(property)
    if len(names) == 1 and property not in ("moe.*", "all"):
        return check_one(names[0], adapter, spec, cases, seed, case, shrink, progress)
    if case is not None:
        raise InputError("case= replays one property's case: name one property",
                         verb="property")
    parts = [check_one(p, adapter, spec, cases, seed, None, shrink, progress) for p in names]
    label = property if isinstance(property, str) else ",".join(names)
    return CheckResult.of_several(label, adapter.name, seed, cases, parts)
