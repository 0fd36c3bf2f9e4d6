"""mxgate.check: a property of the C++ suites run against a Python implementation, in this
process (docs/python.md §9).

The adapter's ops become an in-memory mxgate_impl (include/mxgate/plugin.h) whose run functions
are ctypes callbacks; libmxgate.so's mxgate_api_check runs the property on it with the CLI's
generators, contracts and shrinking, calling back into Python once per op call. Generation,
the reference and the comparison stay in C++.
"""

import ctypes
import json
import sys
from typing import Callable, Iterable, Optional, Tuple, Union

import numpy as np

from . import _native
from . import spec as _spec
from .adapter import (DTYPE_CODE, DTYPE_OF_CODE, FAMILY_CODE, LAYOUT_CODE, LAYOUT_OF_CODE,
                      Adapter, Tensor, as_adapter, describe_exception)
from .adapter import Op, _Device
from .errors import InputError
from .result import CheckResult, Location

Impl = Union[Adapter, type, Op, Callable[..., object], str]
"""What mxgate.check runs: an Adapter (or subclass), an Op, a plain callable, or a spec string
(py:MODULE:OBJECT, MODULE:OBJECT)."""


class _CContract(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved0", ctypes.c_uint32)] + [
        (n, ctypes.c_uint64) for n in ("m_align", "n_align", "k_align", "m_min", "n_min", "k_min",
                                       "m_max", "n_max", "k_max", "a_dtypes", "b_dtypes",
                                       "out_dtypes")
    ] + [(n, ctypes.c_uint32) for n in ("a_scale_layouts", "b_scale_layouts", "b_layouts",
                                        "scale_dtype", "a_block_rows", "a_block_cols",
                                        "b_block_rows", "b_block_cols")] + [
        ("convention", ctypes.c_char_p), ("accumulator", ctypes.c_char_p),
        ("notes", ctypes.c_char_p), ("a_scale_ld_align", ctypes.c_uint32),
        ("b_scale_ld_align", ctypes.c_uint32), ("global_dtypes", ctypes.c_uint64),
        ("tactic_count", ctypes.c_uint32), ("flags", ctypes.c_uint32),
        ("tactics", ctypes.c_void_p)]  # mxgate_tactic*: revision 3 (docs/plugins.md §3.6)


class _CTactic(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("accumulator", ctypes.c_char_p),
                ("notes", ctypes.c_char_p)]


class _CTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_uint64), ("rows", ctypes.c_uint64),
                ("cols", ctypes.c_uint64), ("ld", ctypes.c_uint64), ("dtype", ctypes.c_uint32),
                ("layout", ctypes.c_uint32)]


_ROLES = ("a", "a_scale", "b", "b_scale", "out", "out_scale")
_GLOBALS = ("a_global", "b_global")  # appended to mxgate_call for NVFP4


class _CCall(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("family", ctypes.c_uint32),
                ("m", ctypes.c_uint64), ("n", ctypes.c_uint64), ("k", ctypes.c_uint64)] + [
        (r, _CTensor) for r in _ROLES] + [("stream", ctypes.c_void_p)] + [
        (r, _CTensor) for r in _GLOBALS] + [("tactic", ctypes.c_uint32),
                                             ("reserved1", ctypes.c_uint32)]


_RUN_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_CCall),
                           ctypes.c_void_p, ctypes.c_size_t)


class _COp(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("family", ctypes.c_uint32),
                ("memory", ctypes.c_uint32), ("contract", _CContract), ("run", _RUN_FN),
                ("state", ctypes.c_void_p)]


class _CImpl(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p),
                ("op_count", ctypes.c_uint32), ("ops", ctypes.POINTER(_COp))]


_STATUS = {"done": 0, "unsupported": 1, "error": 2}


def _mask(names, codes):
    m = 0
    for n in names:
        m |= 1 << codes[n]
    return m


def _c_contract(c):
    out = _CContract()
    out.struct_size = ctypes.sizeof(_CContract)
    for d in ("m", "n", "k"):
        v = getattr(c, d)
        setattr(out, d + "_align", v.align)
        setattr(out, d + "_min", v.min)
        setattr(out, d + "_max", v.max)
    out.a_dtypes = _mask(c.a_dtypes, DTYPE_CODE)
    out.b_dtypes = _mask(c.b_dtypes, DTYPE_CODE)
    out.out_dtypes = _mask(c.out_dtypes, DTYPE_CODE)
    out.a_scale_layouts = _mask(c.a_scale_layouts, LAYOUT_CODE)
    out.b_scale_layouts = _mask(c.b_scale_layouts, LAYOUT_CODE)
    out.b_layouts = _mask(c.b_layouts, LAYOUT_CODE)
    out.scale_dtype = 0 if c.scale_dtype == "none" else DTYPE_CODE[c.scale_dtype]
    out.a_block_rows, out.a_block_cols = c.a_block
    out.b_block_rows, out.b_block_cols = c.b_block
    out.convention = c.convention.encode() if c.convention else None
    out.accumulator = c.accumulator.encode() if c.accumulator else None
    out.notes = c.notes.encode() if c.notes else None
    out.a_scale_ld_align = c.a_scale_ld_align
    out.b_scale_ld_align = c.b_scale_ld_align
    out.global_dtypes = _mask(c.global_dtypes, DTYPE_CODE)
    out.flags = 1 if c.packed_scales else 0  # MXGATE_CONTRACT_PACKED_SCALES
    return out


class _InMemory:
    """The ctypes mxgate_impl of an adapter's ops, alive as long as this object. device: the
    device ops (memory "cuda") declare device memory (the survey's device sweep hands them device
    buffers); otherwise every op declares host memory and a device op's inputs are staged."""

    def __init__(self, adapter, ops, device=False):
        self.ops = ops
        self.interrupt = None
        self.callback = _RUN_FN(self._run)
        self.c_ops = (_COp * len(ops))()
        self.c_tactics = []  # the mxgate_tactic arrays, alive with the ops
        for i, o in enumerate(ops):
            c = self.c_ops[i]
            c.name = o.name.encode()
            c.family = FAMILY_CODE[o.family]
            # plugin.h mxgate_memory: MXGATE_MEMORY_HOST 0, MXGATE_MEMORY_CUDA 1.
            c.memory = 1 if device and o.memory == "cuda" else 0
            c.contract = _c_contract(o.contract)
            if o.tactics:
                arr = (_CTactic * len(o.tactics))()
                for j, t in enumerate(o.tactics):
                    arr[j].name = t.name.encode()
                    arr[j].accumulator = t.accumulator.encode() if t.accumulator else None
                    arr[j].notes = t.notes.encode() if t.notes else None
                self.c_tactics.append(arr)
                c.contract.tactic_count = len(o.tactics)
                c.contract.tactics = ctypes.addressof(arr)
            c.run = self.callback
            c.state = i + 1
        self.c_impl = _CImpl(adapter.name.encode(), (adapter.description or "").encode(),
                             len(ops), self.c_ops)

    def _run(self, state, call_p, message, size):
        try:
            op = self.ops[state - 1]
            on_device = self.c_ops[state - 1].memory != 0
            c = call_p.contents
            tensors, buffers = [], []
            for role in _ROLES + (_GLOBALS if c.struct_size >= _CCall.tactic.offset else ()):
                t = getattr(c, role)
                if not t.data:
                    continue
                tensors.append(Tensor(role, DTYPE_OF_CODE[t.dtype], t.rows, t.cols, t.ld,
                                      LAYOUT_OF_CODE[t.layout], t.bytes))
                if on_device:
                    buffers.append(_Device(t.data))
                    continue
                raw = (ctypes.c_uint8 * t.bytes).from_address(t.data)
                buffers.append(np.frombuffer(raw, dtype=np.uint8))
            tactic = c.tactic if c.struct_size >= ctypes.sizeof(_CCall) else 0
            status, text = op.invoke(c.m, c.n, c.k, tensors, buffers, tactic,
                                     stream=c.stream if on_device else None)
        except BaseException as e:  # nothing may unwind into C
            if isinstance(e, KeyboardInterrupt):
                self.interrupt = e
            status, text = "error", f"the mxgate callback raised {describe_exception(e)}"
        if text and message and size:
            data = text.encode("utf-8", "replace")[: size - 1]
            ctypes.memmove(message, data + b"\0", len(data) + 1)
        return _STATUS[status]


def properties() -> Tuple[Tuple[str, Tuple[str, ...], str], ...]:
    """Every property: a tuple of (name, families, guards)."""
    text = _native.check(None, [], None)
    return tuple((p["name"], tuple(p["families"]), p["guards"]) for p in json.loads(text))


def _import_spec(impl):
    """MODULE:OBJECT naming `impl` at module level (for the CLI line), or None."""
    target = impl
    mod = getattr(type(impl), "__module__", None) if isinstance(impl, Adapter) else \
        getattr(impl, "__module__", None)
    if not mod or mod == "__main__" or mod not in sys.modules:
        return None
    for name, value in vars(sys.modules[mod]).items():
        if value is target:
            return f"{mod}:{name}"
    if isinstance(impl, Adapter):
        cls = type(impl)
        if getattr(sys.modules[mod], cls.__name__, None) is cls:
            return f"{mod}:{cls.__name__}"
    return None


def _impl_expression(impl, spec, op):
    if isinstance(impl, str):
        expr = repr(impl)
    elif spec:
        mod, name = spec.split(":")
        expr = f"{mod}.{name}"
        if isinstance(impl, Adapter) and getattr(sys.modules[mod], name) is type(impl):
            expr += "()"
    else:
        expr = "<your implementation>"
    if op is not None and not isinstance(op, str):
        return expr + ", op=<its Op>"
    return expr + (f", op={op!r}" if op is not None else "")


def _is_layer_run(property, impl, layers) -> bool:
    """A layer property (layer.*, moe.*), a LayerAdapter or a MoEAdapter: mxgate.layers runs
    it (and hands MoE runs to mxgate.moe)."""
    from . import moe

    names = [property] if isinstance(property, str) else list(property)
    return all(str(p).startswith(("layer.", "moe.")) for p in names) or \
        layers.is_layer_impl(impl) or moe.is_moe_impl(impl)


def check(property: Union[str, Iterable[str]], impl: Impl, op: Union[str, Op, None] = None,
          cases: int = 100, seed: int = 1, accumulator: Optional[str] = None,
          case: Optional[str] = None, shrink: bool = True,
          max_size: Optional[int] = None, tactic: Optional[int] = None) -> CheckResult:
    """Runs `property` (mxgate.properties(); "all": every one that applies to impl's ops, or a
    list of names) against `impl`: an Adapter (op: one of its ops by name, default all), an Op,
    a plain callable with op= its family name (default contract of that family) or an Op
    declaring it, or a spec string naming an adapter (py:MODULE:OBJECT or MODULE:OBJECT, as the
    CLI's --impl). accumulator replaces the GEMM ops' declared accumulator model (`mxgate
    accumulators`). case= replays one case's text (a CheckResult's counterexample) without the
    generator. tactic= checks that tactic of ops declaring several (default: every one, a seeded
    sample past 8; docs/python.md §11.9). Returns one CheckResult whatever `property` is (several: its `results` holds one
    per property). Raises InputError (a ValueError) for a malformed adapter, contract, spec or
    option, Unavailable when the adapter cannot run here; never for a failing implementation."""
    from . import layers  # the layer protocol's properties (docs/layers.md)

    if _is_layer_run(property, impl, layers):
        if op is not None or accumulator is not None or max_size is not None or tactic is not None:
            raise InputError("op=, accumulator=, max_size= and tactic= do not apply to layer "
                             "properties",
                             verb="property")
        return layers.check(property, impl, cases=cases, seed=seed, case=case, shrink=shrink)
    target = _spec.load(impl) if isinstance(impl, str) else impl  # a spec: availability asked
    return _check_target(property, impl, target, op, cases, seed, accumulator, case, shrink,
                         max_size, tactic, available_checked=isinstance(impl, str))


def _check_target(property, impl, target, op=None, cases=100, seed=1, accumulator=None, case=None,
                  shrink=True, max_size=None, tactic=None,
                  available_checked=False) -> CheckResult:
    """check() of `target`, an implementation already loaded (from `impl`, its spec string or
    itself: what the reproduce lines name). The pytest plugin runs every item of one spec on the
    adapter it loaded once, its check_available() asked once (available_checked)."""
    adapter, ops = as_adapter(target, op, available_checked=available_checked)
    if accumulator is not None:
        ops = tuple(o.with_contract(accumulator=accumulator) if o.family.startswith("gemm")
                    else o for o in ops)
    if not isinstance(property, str) or property == "all":
        if case is not None:
            raise InputError("case= replays one property's case: name one property, not "
                             f"{property!r}", verb="property")
        listed = properties()
        names = [p for p, _, _ in listed] if property == "all" else list(property)
        table = {p: set(f) for p, f, _ in listed}
        families = {o.family for o in ops}
        picked = [p for p in names if property != "all" or table.get(p, set()) & families]
        parts = [_check_one(p, impl, target, adapter, ops, op, cases, seed, accumulator, case,
                            shrink, max_size, tactic) for p in picked]
        label = "all" if property == "all" else ",".join(names)
        return CheckResult.of_several(label, adapter.name, seed, cases, parts)
    return _check_one(property, impl, target, adapter, ops, op, cases, seed, accumulator, case,
                      shrink, max_size, tactic)


def _check_one(property, impl, target, adapter, ops, op, cases, seed, accumulator, case, shrink,
               max_size, tactic=None):
    memory = _InMemory(adapter, ops)
    options = [("seed", str(seed)), ("cases", str(cases))]
    if max_size is not None:
        options.append(("max-size", str(max_size)))
    if case is not None:
        options.append(("case", case))
    if not shrink:
        options.append(("no-shrink", None))
    if tactic is not None:
        options.append(("tactic", str(tactic)))
    text = _native.check(property, options, ctypes.addressof(memory.c_impl))
    if memory.interrupt is not None:
        raise memory.interrupt
    j = json.loads(text)
    f = j["failure"]
    where = f.get("where") if f else None
    if isinstance(impl, str):
        spec = ":".join(_spec.parse(impl))
    else:
        spec = _import_spec(target) if isinstance(target, (Adapter, type)) else None
    result = dict(
        property=j["property"], impl=j["impl"], passed=j["passed"], cases=j["cases"],
        unsupported=j["unsupported"], unsupported_reasons=tuple(j["unsupported_reasons"]),
        ops=tuple(j["ops"]), seed=j["seed"], cases_requested=j["cases_requested"],
        counterexample=j["counterexample"], kind=f["kind"] if f else None,
        failure=f["what"] if f else (j["message"] or None) if not j["passed"] else None,
        location=Location(where["row"], where["col"], where["expected_bits"],
                          where["actual_bits"], where["ulp"]) if where else None,
        output=f["output"] if f else "fp32",
        tactic=j.get("tactic"), tactic_name=j.get("tactic_name") or None,
        tactics=j.get("tactics", ""), ops_not_checked=tuple(j.get("ops_not_checked", ())),
    )
    if not j["passed"] and j["counterexample"]:
        extra = f", accumulator={accumulator!r}" if accumulator is not None else ""
        if j.get("tactic") is not None:
            extra += f", tactic={j['tactic']}"
        result["reproduce"] = (f"mxgate.check({property!r}, impl={_impl_expression(impl, spec, op)}"
                               f"{extra}, case={j['counterexample']!r})")
        if spec and accumulator is None:
            result["cli"] = (f"mxgate property {property} --impl py:{spec} --seed {seed} "
                             f"--cases {cases}" + (f" --tactic {j['tactic']}"
                                                  if j.get("tactic") is not None else ""))
    return CheckResult(**result)
