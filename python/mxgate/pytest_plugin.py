"""The pytest plugin of mxgate (docs/python.md §15): mxgate's properties as pytest items.

    pytest --mxgate-impl py:mxgate.adapters.numpy:NumpyAdapter [--mxgate-cases N] [--mxgate-seed S]

Registered as the `pytest11` entry point `mxgate.pytest_plugin` of the installed package (so an
installed mxgate loads it by itself); from a checkout, `-p mxgate.pytest_plugin` loads it.

Each `--mxgate-impl` SPEC (py:MODULE:OBJECT or MODULE:OBJECT, as the CLI's --impl; several
comma-separated or the option repeated) adds one item per (implementation, op, property that
applies to the op's family), node id `mxgate::IMPL::OP::PROPERTY`, e.g.
`mxgate::numpy::gemm_mx::gemm.exact`. An item runs `mxgate.check(PROPERTY, SPEC, op=OP,
cases=N, seed=S)`: pass; fail with the shrunk case, the located element and the reproduce lines
(`mxgate.check(..., case=...)` and the CLI's); skip with the reason when no case ran (the op
takes none of the property's cases) or the adapter is unavailable here. A SPEC that does not
load is a collection error naming it. JUnit XML comes from pytest (`--junitxml FILE`): one
testcase per item, classname `mxgate.IMPL.OP`, name PROPERTY, with the cases run as a property.

The fixture `mxgate_check` runs checks inside the user's own tests with the same defaults:

    def test_my_gemm(mxgate_check):
        mxgate_check("gemm.exact", my_gemm, op="gemm_mx")   # fails / skips as the items do
"""

import importlib
import inspect
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple, Union

import pytest

from . import spec as _spec
from .adapter import Adapter, Op
from .check import check, properties
from .errors import AdapterError, Error, Unavailable
from .result import CheckResult

ROOT = "mxgate"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("mxgate", "mxgate property checks (docs/python.md §15)")
    group.addoption("--mxgate-impl", action="append", default=[], metavar="SPEC[,SPEC...]",
                    help="an implementation to check: py:MODULE:OBJECT or MODULE:OBJECT (an "
                         "mxgate.Adapter); one item per (implementation, op, property)")
    group.addoption("--mxgate-cases", type=int, default=100, metavar="N",
                    help="cases per property (default 100)")
    group.addoption("--mxgate-seed", type=int, default=1, metavar="S",
                    help="the seed every case derives from (default 1)")


def specs_of(config: Any) -> List[str]:
    """The --mxgate-impl specs, split at commas, in order, each once."""
    out: List[str] = []
    for value in config.getoption("mxgate_impl") or ():
        for s in value.split(","):
            s = s.strip()
            if s and s not in out:
                out.append(s)
    return out


def pytest_configure(config: Any) -> None:
    # Bad option values stop the run before collection, as pytest's own do (its exit code 4).
    if config.getoption("mxgate_cases") < 1:
        raise pytest.UsageError("--mxgate-cases must be at least 1")
    if config.getoption("mxgate_seed") < 0:
        raise pytest.UsageError("--mxgate-seed must be at least 0")


def pytest_report_header(config: Any) -> str:
    from . import __version__, library_path

    seed, cases = config.getoption("mxgate_seed"), config.getoption("mxgate_cases")
    return f"mxgate {__version__} ({library_path}): --mxgate-seed {seed} --mxgate-cases {cases}"


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselect, so that they select mxgate items too
def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    if specs_of(config):
        root = MxgateCollector.from_parent(session, name=ROOT, nodeid=ROOT)
        items.extend(session.genitems(root))


def _families() -> List[Tuple[str, Tuple[str, ...]]]:
    return [(name, families) for name, families, _ in properties()]


class MxgateCollector(pytest.Collector):
    """`mxgate`: one collector per --mxgate-impl spec."""

    def collect(self) -> Iterator[Union[pytest.Item, pytest.Collector]]:
        listed = _families()
        for spec in specs_of(self.config):
            try:
                adapter = _spec.load(spec, check_available=False)
            except Unavailable as e:  # the adapter could not even be built here
                _, obj = _spec.parse(spec)
                yield UnavailableItem.from_parent(self, name=obj, spec=spec, reason=e.reason)
                continue
            except Exception as e:  # a bad spec: a collection error naming it
                yield BrokenSpec.from_parent(self, name=spec.replace(":", "_"), spec=spec, error=e)
                continue
            if not adapter.ops:  # an adapter whose library is absent declares none
                try:
                    adapter.check_available()
                except Unavailable as e:
                    yield UnavailableItem.from_parent(self, name=adapter.name, spec=spec,
                                                      reason=e.reason)
                    continue
                yield BrokenSpec.from_parent(self, name=adapter.name, spec=spec, error=AdapterError(
                    f"adapter {adapter.name} declares no op"))
                continue
            yield ImplCollector.from_parent(self, name=adapter.name, spec=spec, adapter=adapter,
                                            listed=listed)

    def repr_failure(self, excinfo: Any) -> str:
        return str(excinfo.value) if isinstance(excinfo.value, Error) else \
            super().repr_failure(excinfo)


class BrokenSpec(pytest.Collector):
    """A spec that does not load: collecting it raises what loading raised."""

    def __init__(self, *, spec: str, error: BaseException, **kw: Any) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.error = error

    def collect(self) -> List[Any]:
        raise self.error

    def repr_failure(self, excinfo: Any) -> str:
        e = excinfo.value
        return f"--mxgate-impl {self.spec}: {type(e).__name__}: {e}"


class ImplCollector(pytest.Collector):
    """`mxgate::IMPL`: one collector per op of the adapter."""

    def __init__(self, *, spec: str, adapter: Adapter,
                 listed: List[Tuple[str, Tuple[str, ...]]], **kw: Any) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.adapter = adapter
        self.listed = listed

    def collect(self) -> Iterator[pytest.Collector]:
        for o in self.adapter.ops:
            yield OpCollector.from_parent(self, name=o.name, spec=self.spec, op=o,
                                          listed=self.listed)


class OpCollector(pytest.Collector):
    """`mxgate::IMPL::OP`: one item per property of the op's family."""

    def __init__(self, *, spec: str, op: Op, listed: List[Tuple[str, Tuple[str, ...]]],
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.op = op
        self.listed = listed

    def collect(self) -> Iterator[pytest.Item]:
        for name, families in self.listed:
            if self.op.family in families:
                yield PropertyItem.from_parent(self, name=name, spec=self.spec, op=self.op.name,
                                               source=_source_of(self.op.fn))


def _source_of(obj: Any) -> Optional[Tuple[str, int]]:
    """(file, 0-based line) of an op's callable or an adapter class: where the skips of its
    items are reported."""
    try:
        obj = inspect.unwrap(getattr(obj, "__func__", obj))
        return inspect.getsourcefile(obj) or "", inspect.getsourcelines(obj)[1] - 1
    except (TypeError, OSError):
        return None


def _source_of_spec(spec: str) -> Optional[Tuple[str, int]]:
    try:
        module, name = _spec.parse(spec)
        obj = getattr(importlib.import_module(module), name)
    except Exception:
        return None
    return _source_of(obj if isinstance(obj, type) else type(obj))


def _report_location(item: Any, headline: str) -> Tuple[Any, Optional[int], str]:
    # headline: the failure's title. It must not end the node id: pytest shows such a domain
    # with its dots as "::" (a Python test's module.Class.name), which would misspell gemm.exact.
    if item.source and item.source[0]:
        return Path(item.source[0]), item.source[1], headline
    return item.path, 0, headline


class MxgateFailure(Exception):
    """A property failed: carries its CheckResult (str: the whole story)."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(str(result))
        self.result = result


def _skip_reason(r: CheckResult) -> str:
    reasons = "; ".join(dict.fromkeys(r.unsupported_reasons)) or "no case ran"
    return f"unsupported: {reasons}"


def _skip(reason: str) -> None:
    """A skip reported at the item (its node id), not at this file's line, as a skip mark is."""
    try:
        exc = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # a pytest without the keyword (before 7.0)
        exc = pytest.skip.Exception(reason)
    raise exc


class PropertyItem(pytest.Item):
    """`mxgate::IMPL::OP::PROPERTY`: mxgate.check of one property on one op."""

    def __init__(self, *, spec: str, op: str, source: Optional[Tuple[str, int]],
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.op = op
        self.source = source
        self.result: Optional[CheckResult] = None

    def runtest(self) -> None:
        config = self.config
        try:
            r = check(self.name, self.spec, op=self.op, cases=config.getoption("mxgate_cases"),
                      seed=config.getoption("mxgate_seed"))
        except Unavailable as e:
            _skip(f"unavailable: {e.reason}")
        self.result = r
        self.user_properties.append(("mxgate_cases", r.cases))
        self.user_properties.append(("mxgate_unsupported", r.unsupported))
        if not r.passed:
            raise MxgateFailure(r)
        if r.cases == 0:
            _skip(_skip_reason(r))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, (MxgateFailure, Error)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> Tuple[Any, Optional[int], str]:
        return _report_location(self, f"{self.name} on {self.parent.parent.name}/{self.op}")


class UnavailableItem(pytest.Item):
    """`mxgate::OBJECT` for an adapter that could not be built here: a skip with the reason."""

    def __init__(self, *, spec: str, reason: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.reason = reason
        self.source = _source_of_spec(spec)

    def runtest(self) -> None:
        _skip(f"unavailable: {self.spec}: {self.reason}")

    def reportinfo(self) -> Tuple[Any, Optional[int], str]:
        return _report_location(self, f"{self.spec}: unavailable")


@pytest.fixture
def mxgate_check(request: Any) -> Callable[..., CheckResult]:
    """mxgate.check inside a test, with the session's --mxgate-cases / --mxgate-seed as
    defaults: fails the test with the result's whole story when the property fails, skips it
    with the reasons when no case ran, returns the CheckResult otherwise."""
    cases = request.config.getoption("mxgate_cases")
    seed = request.config.getoption("mxgate_seed")

    def run(property: Any, impl: Any, op: Any = None, **kwargs: Any) -> CheckResult:
        kwargs.setdefault("cases", cases)
        kwargs.setdefault("seed", seed)
        r = check(property, impl, op=op, **kwargs)
        if not r.passed:
            pytest.fail(str(r), pytrace=False)
        if r.cases == 0:
            pytest.skip(_skip_reason(r))
        return r

    return run
