"""The shape of the public Python API (docs/python.md §3.2, §9.1): every public function and
method has type hints; every exception mxgate raises on purpose is an mxgate.Error carrying its
data, and the input errors stay ValueErrors; success is spelt `passed` on every result;
mxgate.check returns one CheckResult whatever it ran, takes spec strings, and refuses a case for
several properties. Not covered: the texts of the errors (test_bad_input.py) and of the results
(test_check.py, test_verdict.py)."""

import inspect

import numpy as np
import pytest

import mxgate
import mxgate.pytest_plugin
import mxgate.layers
import mxgate.strategies
from mxgate.adapters.numpy import NumpyAdapter
from mxgate.adapters.numpy_faulty import DropTrailingK


def public_callables():
    """(name, callable) of every public function, and every public method (and __init__) of
    every public class, of mxgate, mxgate.strategies, mxgate.layers and mxgate.pytest_plugin."""
    out = []
    modules = [(mxgate, mxgate.__all__), (mxgate.strategies, mxgate.strategies.__all__),
               (mxgate.layers, mxgate.layers.__all__),
               (mxgate.pytest_plugin, [n for n in vars(mxgate.pytest_plugin)
                                       if n.startswith("pytest_") or n == "mxgate_check"])]
    for module, names in modules:
        for name in names:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if isinstance(member, property):
                        member = member.fget
                    elif isinstance(member, classmethod):
                        member = member.__func__
                    if inspect.isfunction(member) and (attr == "__init__" or
                                                       not attr.startswith("_")):
                        out.append((f"{module.__name__}.{name}.{attr}", member))
            elif inspect.isfunction(obj):
                out.append((f"{module.__name__}.{name}", getattr(obj, "__wrapped__", obj)))
    return out


# Guards against a public function or method losing its type hints (an argument or the return).
@pytest.mark.parametrize("name,fn", public_callables(), ids=[n for n, _ in public_callables()])
def test_public_api_has_type_hints(name, fn):
    sig = inspect.signature(fn)
    missing = [p.name for p in sig.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    assert not missing, f"{name}: no annotation for {missing}"
    assert sig.return_annotation is not inspect.Signature.empty or name.endswith("__init__"), \
        f"{name}: no return annotation"


# Guards against the list above checking nothing (a module renamed, __all__ emptied).
def test_the_hint_check_sees_the_api():
    names = {n for n, _ in public_callables()}
    for must in ("mxgate.check", "mxgate.check_gemm", "mxgate.Adapter.find", "mxgate.shapes",
                 "mxgate.strategies.cases", "mxgate.pytest_plugin.pytest_addoption",
                 "mxgate.CheckResult.results", "mxgate.load", "mxgate.layers.LayerAdapter.select",
                 "mxgate.layers.check"):
        assert must in names, must


# Guards against an exception escaping the base class, or input errors no longer being
# ValueErrors (existing `except ValueError` code).
def test_exception_hierarchy():
    assert issubclass(mxgate.InputError, mxgate.Error) and issubclass(mxgate.InputError,
                                                                      ValueError)
    assert issubclass(mxgate.AdapterError, mxgate.InputError)
    for cls in (mxgate.Unsupported, mxgate.Unavailable, mxgate.OutOfMemory, mxgate.LibraryError):
        assert issubclass(cls, mxgate.Error)
    assert issubclass(mxgate.OutOfMemory, MemoryError)
    assert issubclass(mxgate.LibraryError, RuntimeError)
    assert mxgate.Unsupported("no fp4").reason == "no fp4" == str(mxgate.Unsupported("no fp4"))


# Guards against the data of an input error getting lost: the verb it came from, the option it
# names, the status, and str() being the CLI's message exactly.
def test_input_error_carries_verb_and_option():
    with pytest.raises(ValueError) as e:
        mxgate.gemm(np.zeros((2, 64), np.float32), np.zeros((2, 2), np.uint8),
                    np.zeros((2, 64), np.uint8), np.zeros((2, 2), np.uint8))
    err = e.value
    assert isinstance(err, mxgate.InputError)
    assert (err.verb, err.option, err.status) == ("gemm", "--a", 2)
    assert str(err) == err.message == "--a: expected uint8 (M, K), got float32 (2, 64)"
    with pytest.raises(mxgate.InputError) as e:
        mxgate.check("gemm.nope", NumpyAdapter())
    assert e.value.verb == "property" and e.value.option is None
    with pytest.raises(mxgate.InputError) as e:
        mxgate.decode(None, "e4m3fn", "ocp_mx")  # refused in Python, before the library
    assert e.value.option == "--codes" and e.value.verb is None


# Guards against a failure of the library other than bad input escaping as a bare RuntimeError.
def test_library_error_carries_status():
    a, s = np.full((1, 32), 0x38, np.uint8), np.full((1, 1), 127, np.uint8)
    with pytest.raises(RuntimeError) as e:
        mxgate.check_gemm(a, s, a, s, np.zeros((1, 1), np.float32), heatmap="/proc/m.svg")
    assert isinstance(e.value, mxgate.LibraryError) and e.value.status == 5
    assert "cannot write '/proc/m.svg'" in str(e.value)


# Guards against check() returning another type for a list or "all", or the composite's
# verdict disagreeing with its parts.
def test_check_returns_one_type():
    one = mxgate.check("gemm.exact", NumpyAdapter(), cases=5)
    assert isinstance(one, mxgate.CheckResult) and one.results == (one,) and one.parts is None
    several = mxgate.check(["gemm.exact", "upcast_e8m0.bit_exact"], NumpyAdapter(), cases=5)
    assert isinstance(several, mxgate.CheckResult) and several.passed
    assert several.property == "gemm.exact,upcast_e8m0.bit_exact"
    assert [r.property for r in several.results] == ["gemm.exact", "upcast_e8m0.bit_exact"]
    assert several.cases == sum(r.cases for r in several.results) == 10
    bad = mxgate.check("all", DropTrailingK(), cases=20)
    assert isinstance(bad, mxgate.CheckResult) and not bad.passed
    failing = [r for r in bad.results if not r.passed]
    assert failing and bad.failed_property == failing[0].property
    assert bad.counterexample == failing[0].counterexample and bad.location == failing[0].location
    assert len(repr(bad)) <= 240 and f"FAIL at {bad.location.coords}" in repr(bad)
    assert str(bad).startswith(f"all on numpy_faulty_drop_trailing_k: {len(bad.results)} "
                               f"properties, ")


# Guards against success being spelt two ways again (Verdict.ok beside CheckResult.passed).
def test_success_is_spelt_passed_everywhere():
    fields = {f for f in mxgate.Verdict.__dataclass_fields__}
    assert "passed" in fields and "ok" not in fields
    assert "passed" in mxgate.CheckResult.__dataclass_fields__
    assert not hasattr(mxgate, "Results")


# Guards against a spec string meaning something else in check() than on the CLI, or its
# reproduce line not replaying; a case given for several properties is refused.
def test_check_takes_a_spec_string():
    spec = "py:mxgate.adapters.numpy_faulty:DropTrailingK"
    r = mxgate.check("gemm.exact", spec, cases=50)
    same = mxgate.check("gemm.exact", DropTrailingK(), cases=50)
    assert (r.counterexample, r.location) == (same.counterexample, same.location)
    assert r.reproduce == f"mxgate.check('gemm.exact', impl={spec!r}, case={r.counterexample!r})"
    again = eval(r.reproduce, {"mxgate": mxgate})
    assert again.location == r.location
    assert r.cli.startswith(f"mxgate property gemm.exact --impl {spec} ")
    assert mxgate.load("mxgate.adapters.numpy:NumpyAdapter").name == "numpy"
    with pytest.raises(mxgate.InputError, match="is not py:MODULE:OBJECT or MODULE:OBJECT"):
        mxgate.check("gemm.exact", "numpy")
    with pytest.raises(mxgate.InputError, match="case= replays one property's case"):
        mxgate.check("all", NumpyAdapter(), case=r.counterexample)
