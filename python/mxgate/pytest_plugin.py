"""The pytest plugin of mxgate (docs/python.md §15): mxgate's properties as pytest items.

    pytest --mxgate-impl py:mxgate.adapters.numpy:NumpyAdapter [--mxgate-cases N] [--mxgate-seed S]
           [--mxgate-timeout SECONDS]

Registered as the `pytest11` entry point `mxgate.pytest_plugin` of the installed package (so an
installed mxgate loads it by itself); from a checkout, `-p mxgate.pytest_plugin` loads it.

Each `--mxgate-impl` SPEC (py:MODULE:OBJECT or MODULE:OBJECT, as the CLI's --impl; several
comma-separated or the option repeated) adds one item per (implementation, op, property that
applies to the op's family), node id `mxgate::IMPL::OP::PROPERTY`, e.g.
`mxgate::numpy::gemm_mx::gemm.exact`. An item runs `mxgate.check(PROPERTY, SPEC, op=OP,
cases=N, seed=S)`: pass; fail with the shrunk case, the located element and the reproduce lines
(`mxgate.check(..., case=...)` and the CLI's); skip with the reason when no case ran (the op
takes none of the property's cases) or the adapter is unavailable here. A SPEC that does not
load is a collection error naming it. Each spec is loaded once, its check_available() asked
once, for all its items (a kernel compiles once, not per item). As each implementation's items
end a line gives its counts and seconds and each failed item's case and CLI line; the summary
ends with the seconds per implementation. --mxgate-timeout: past SECONDS since the first item
began, the items left are skips ("not run"), so the run still ends with its report. JUnit XML
comes from pytest (`--junitxml FILE`): one testcase per item, classname `mxgate.IMPL.OP`, name
PROPERTY, with the cases run as a property.

The fixture `mxgate_check` runs checks inside the user's own tests with the same defaults:

    def test_my_gemm(mxgate_check):
        mxgate_check("gemm.exact", my_gemm, op="gemm_mx")   # fails / skips as the items do
"""

import importlib
import inspect
import re
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import pytest

from . import spec as _spec
from .adapter import Adapter, Op
from .check import _check_target, check, properties
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
    group.addoption("--mxgate-timeout", type=float, default=0, metavar="SECONDS",
                    help="stop starting mxgate items once SECONDS have passed since the first "
                         "began: the rest are skips saying so, and the run ends with its "
                         "summary (default 0: no limit)")


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
    if config.getoption("mxgate_timeout") < 0:
        raise pytest.UsageError("--mxgate-timeout must be at least 0")
    if config.pluginmanager.get_plugin(_TIMES) is None:
        config.pluginmanager.register(_Times(config), _TIMES)


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

    def unavailable(self) -> Optional[str]:
        """The reason the adapter cannot run here (its check_available(), asked once for all
        its items), or None."""
        if not hasattr(self, "_unavailable"):
            try:
                self.adapter.check_available()
                self._unavailable: Optional[str] = None
            except Unavailable as e:
                self._unavailable = e.reason
        return self._unavailable


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
        times = _times(config)
        spent = times.spent()
        limit = config.getoption("mxgate_timeout")
        if limit and spent is not None and spent >= limit:
            times.not_run += 1
            _skip(f"not run: --mxgate-timeout {limit:g} s spent ({spent:.1f} s since the first "
                  "mxgate item began)")
        times.begin()
        impl = self.parent.parent  # the ImplCollector: one adapter, loaded once, for its items
        reason = impl.unavailable()
        if reason is not None:
            _skip(f"unavailable: {reason}")
        try:
            r = _check_target(self.name, self.spec, impl.adapter, op=self.op,
                              cases=config.getoption("mxgate_cases"),
                              seed=config.getoption("mxgate_seed"), available_checked=True)
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


class _Times:
    """Registered per session (pytest_configure): per implementation, its items' outcomes and
    seconds, written as each implementation's items end and in the terminal summary; and when
    the first mxgate item began, for --mxgate-timeout."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.start: Optional[float] = None
        self.not_run = 0
        self.impls: Dict[str, Dict[str, Any]] = {}

    def begin(self) -> None:
        if self.start is None:
            self.start = time.monotonic()

    def spent(self) -> Optional[float]:
        return None if self.start is None else time.monotonic() - self.start

    def of(self, impl: str) -> Dict[str, Any]:
        return self.impls.setdefault(impl, {"passed": 0, "failed": 0, "skipped": 0,
                                            "seconds": 0.0, "failures": []})

    def pytest_runtest_logreport(self, report: Any) -> None:
        impl = _impl_of(report.nodeid)
        if impl is None:
            return
        row = self.of(impl)
        row["seconds"] += getattr(report, "duration", 0.0) or 0.0
        if report.when == "call" or (report.when == "setup" and not report.passed):
            row[report.outcome] += 1
            if report.failed:
                text = str(report.longrepr or "")
                case = re.search(r"shrunk case: (.*)", text)
                cli = re.search(r"cli: (.*)", text) or re.search(r"reproduce: (.*)", text)
                row["failures"].append("::".join(report.nodeid.split("::")[2:]) +
                                       (f": case {case.group(1)}" if case else "") +
                                       (f"; {cli.group(1)}" if cli else ""))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        yield
        # Progress per implementation as its items end: counts, seconds, and each failed item's
        # case and CLI line, written at once (a run stopped later keeps them in its log).
        impl = _impl_of(item.nodeid)
        if impl is None or (nextitem is not None and _impl_of(nextitem.nodeid) == impl):
            return
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            return
        row = self.of(impl)
        if getattr(getattr(tr, "_tw", None), "width_of_current_line", 1):
            tr.write("\n")  # after -q's letters: the line of its own
        tr.write_line(f"[mxgate] {impl}: {_counts(row)} in {row['seconds']:.1f} s")
        for f in row["failures"]:
            tr.write_line(f"[mxgate]   FAILED {f}")
        tr.flush()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.impls:
            return
        tr = terminalreporter
        tr.write_sep("-", "mxgate: seconds per implementation")
        for impl, row in self.impls.items():
            tr.write_line(f"{impl}: {row['seconds']:.1f} s, {_counts(row)}")
        if self.not_run:
            tr.write_line(f"{self.not_run} items not run: --mxgate-timeout "
                          f"{self.config.getoption('mxgate_timeout'):g} s spent")


def _times(config: Any) -> _Times:
    return config.pluginmanager.get_plugin(_TIMES)


_TIMES = "mxgate-times"


def _impl_of(nodeid: str) -> Optional[str]:
    """IMPL of an item's node id mxgate::IMPL[::OP::PROPERTY], or None for another test."""
    parts = nodeid.split("::")
    return parts[1] if len(parts) >= 2 and parts[0] == ROOT else None


def _counts(row: Dict[str, Any]) -> str:
    return ", ".join(f"{row[k]} {k}" for k in ("passed", "failed", "skipped") if row[k]) or "none"


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
