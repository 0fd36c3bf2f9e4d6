"""Implementation specs: the text that names a Python adapter, as the CLI's `--impl
py:MODULE:OBJECT` does (docs/python.md §10). `mxgate.check`, the pytest plugin and the worker
process load adapters through `load`, so one spec means the same thing everywhere.

    py:mxgate.adapters.numpy:NumpyAdapter     the CLI's form
    mxgate.adapters.numpy:NumpyAdapter        the same without the prefix (an object path)

OBJECT is an `mxgate.Adapter` instance or subclass (instantiated without arguments).
"""

import importlib
from typing import Tuple

from .adapter import Adapter
from .errors import AdapterError, InputError

PREFIX = "py:"


def parse(spec: str) -> Tuple[str, str]:
    """(MODULE, OBJECT) of a spec; InputError when it is not of either form."""
    # "py:" is the prefix only where it leaves MODULE:OBJECT (a module may be named py).
    text = spec[len(PREFIX):] if spec.startswith(PREFIX) and spec.count(":") == 2 else spec
    module, sep, name = text.partition(":")
    if not sep or not module or not name or ":" in name:
        raise InputError(f"implementation spec '{spec}' is not py:MODULE:OBJECT or MODULE:OBJECT "
                         "(e.g. py:mxgate.adapters.numpy:NumpyAdapter)")
    return module, name


def load(spec: str, check_available: bool = True) -> Adapter:
    """The adapter `spec` names. Importing the module may raise anything its import raises;
    a missing attribute or an object that is no Adapter is an AdapterError. check_available:
    call the adapter's check_available(), which raises Unavailable when what it wraps is
    absent (False: the adapter as declared, for listing its ops)."""
    module, name = parse(spec)
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None:
        raise AdapterError(f"module {module} has no attribute '{name}'")
    if isinstance(obj, type) and issubclass(obj, Adapter):
        obj = obj()
    if not isinstance(obj, Adapter):
        raise AdapterError(f"{module}:{name} is a {type(obj).__name__}, not an mxgate.Adapter")
    if check_available:
        obj.check_available()
    return obj
