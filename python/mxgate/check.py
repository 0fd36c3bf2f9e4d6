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
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from . import _native
from .adapter import (DTYPES, FAMILY_CODE, DTYPE_CODE, LAYOUT_CODE, LAYOUTS, Adapter, Tensor,
                      as_adapter, describe_exception)


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
        ("b_scale_ld_align", ctypes.c_uint32)]


class _CTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_uint64), ("rows", ctypes.c_uint64),
                ("cols", ctypes.c_uint64), ("ld", ctypes.c_uint64), ("dtype", ctypes.c_uint32),
                ("layout", ctypes.c_uint32)]


_ROLES = ("a", "a_scale", "b", "b_scale", "out", "out_scale")


class _CCall(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("family", ctypes.c_uint32),
                ("m", ctypes.c_uint64), ("n", ctypes.c_uint64), ("k", ctypes.c_uint64)] + [
        (r, _CTensor) for r in _ROLES] + [("stream", ctypes.c_void_p)]


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
    return out


class _InMemory:
    """The ctypes mxgate_impl of an adapter's ops, alive as long as this object."""

    def __init__(self, adapter, ops):
        self.ops = ops
        self.interrupt = None
        self.callback = _RUN_FN(self._run)
        self.c_ops = (_COp * len(ops))()
        for i, o in enumerate(ops):
            c = self.c_ops[i]
            c.name = o.name.encode()
            c.family = FAMILY_CODE[o.family]
            c.memory = 0  # MXGATE_MEMORY_HOST: the callables get host arrays
            c.contract = _c_contract(o.contract)
            c.run = self.callback
            c.state = i + 1
        self.c_impl = _CImpl(adapter.name.encode(), (adapter.description or "").encode(),
                             len(ops), self.c_ops)

    def _run(self, state, call_p, message, size):
        try:
            op = self.ops[state - 1]
            c = call_p.contents
            tensors, buffers = [], []
            for role in _ROLES:
                t = getattr(c, role)
                if not t.data:
                    continue
                tensors.append(Tensor(role, DTYPES[t.dtype - 1], t.rows, t.cols, t.ld,
                                      LAYOUTS[t.layout], t.bytes))
                raw = (ctypes.c_uint8 * t.bytes).from_address(t.data)
                buffers.append(np.frombuffer(raw, dtype=np.uint8))
            status, text = op.invoke(c.m, c.n, c.k, tensors, buffers)
        except BaseException as e:  # nothing may unwind into C
            if isinstance(e, KeyboardInterrupt):
                self.interrupt = e
            status, text = "error", f"the mxgate callback raised {describe_exception(e)}"
        if text and message and size:
            data = text.encode("utf-8", "replace")[: size - 1]
            ctypes.memmove(message, data + b"\0", len(data) + 1)
        return _STATUS[status]


@dataclass(frozen=True)
class Location:
    """The first differing element of a failure: row, col (for elementwise ops: 0 and the
    element), the expected and actual bits (fp32 / bf16 patterns, codes) and the ULP distance."""

    row: int
    col: int
    expected_bits: int
    actual_bits: int
    ulp: int

    @property
    def coords(self):
        return (self.row, self.col)


@dataclass(frozen=True, repr=False)
class CheckResult:
    """What mxgate.check found. passed; cases run; unsupported (cases the implementation could
    not take: counted, never failures) and their reasons; the shrunk counterexample (the case's
    one-line text) with the failure's kind ("fail", "contract_mismatch", "error"), what and
    location; reproduce: a snippet that replays the shrunk case; cli: the same run from the
    shell when the adapter is importable (py:MODULE:OBJECT). str() tells the whole story;
    repr() fits pytest's 240-character assertion message."""

    property: str
    impl: str
    passed: bool
    cases: int
    unsupported: int
    unsupported_reasons: Tuple[str, ...]
    ops: Tuple[str, ...]
    seed: int
    cases_requested: int
    counterexample: Optional[str] = None
    kind: Optional[str] = None
    failure: Optional[str] = None
    location: Optional[Location] = None
    output: str = "fp32"
    reproduce: Optional[str] = None
    cli: Optional[str] = None

    @property
    def verdict(self):
        if self.passed:
            return "pass" if self.cases else "unsupported"
        return self.kind or "fail"

    def _located(self):
        e = self.location
        if e is None:
            return ""
        w = 4 if self.output == "bf16" else 8
        return (f"element ({e.row},{e.col}): expected 0x{e.expected_bits:0{w}X}, actual "
                f"0x{e.actual_bits:0{w}X}, {e.ulp} ulp")

    def __str__(self):
        head = f"{self.property} on {self.impl}: "
        if self.passed:
            head += (f"pass after {self.cases} cases" if self.cases else "no case ran") + \
                f" (seed {self.seed})"
        else:
            head += f"{self.verdict.upper()} after {self.cases} cases (seed {self.seed})"
        lines = [head + f", {self.unsupported} unsupported"]
        if self.ops:
            lines.append("  ops: " + ", ".join(self.ops))
        for r in self.unsupported_reasons:
            lines.append("  unsupported: " + r)
        if not self.passed:
            if self.counterexample:
                lines.append("  shrunk case: " + self.counterexample)
            if self.failure:
                lines.append("  failure: " + self.failure)
            if self.location:
                lines.append("  " + self._located())
            if self.reproduce:
                lines.append("  reproduce: " + self.reproduce)
            if self.cli:
                lines.append("  cli: " + self.cli)
        return "\n".join(lines)

    def __repr__(self):
        if self.passed:
            return (f"CheckResult({self.property}[{self.impl}] {self.verdict}, cases={self.cases},"
                    f" unsupported={self.unsupported})")
        at = f" at {self.location.coords}" if self.location else ""
        case = self.counterexample or (self.failure or "")[:80]
        text = f"CheckResult({self.property}[{self.impl}] {self.verdict.upper()}{at}: {case}"
        if len(text) > 225:
            text = text[:222] + "..."
        return text + "; print() it)"


class Results(tuple):
    """The results of several properties (mxgate.check("all", ...)): passed when every one
    passed; str() lists them all, repr() the ones that did not pass."""

    @property
    def passed(self):
        return all(r.passed for r in self)

    def __str__(self):
        return "\n".join(str(r) for r in self)

    def __repr__(self):
        bad = [r for r in self if not r.passed]
        if not bad:
            return f"Results({len(self)} properties pass)"
        text = "Results(" + "; ".join(repr(r) for r in bad)
        return (text[:222] + "...)") if len(text) > 225 else text + ")"


def properties():
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
    if spec:
        mod, name = spec.split(":")
        expr = f"{mod}.{name}"
        if isinstance(impl, Adapter) and getattr(sys.modules[mod], name) is type(impl):
            expr += "()"
    else:
        expr = "<your implementation>"
    if op is not None and not isinstance(op, str):
        return expr + ", op=<its Op>"
    return expr + (f", op={op!r}" if op is not None else "")


def check(property, impl, op=None, cases=100, seed=1, accumulator=None, case=None,
          shrink=True, max_size=None):
    """Runs `property` (mxgate.properties(); "all" or a list: every one that applies, returned
    as Results) against `impl`: an Adapter (op: one of its ops by name, default all), an Op, or
    a plain callable with op= its family name (default contract of that family) or an Op
    declaring it. accumulator replaces the GEMM ops' declared accumulator model
    (`mxgate accumulators`). case= replays one case's text (a CheckResult's counterexample)
    without the generator. Returns a CheckResult; raises ValueError for a malformed adapter,
    contract or option, never for a failing implementation."""
    adapter, ops = as_adapter(impl, op)
    if accumulator is not None:
        ops = tuple(o.with_contract(accumulator=accumulator) if o.family.startswith("gemm")
                    else o for o in ops)
    if not isinstance(property, str) or property == "all":
        names = [p for p, _, _ in properties()] if property == "all" else list(property)
        table = {p: set(f) for p, f, _ in properties()}
        families = {o.family for o in ops}
        picked = [p for p in names if property != "all" or table.get(p, set()) & families]
        return Results(check(p, impl, op=op, cases=cases, seed=seed, accumulator=accumulator,
                             shrink=shrink, max_size=max_size) for p in picked)
    memory = _InMemory(adapter, ops)
    options = [("seed", str(seed)), ("cases", str(cases))]
    if max_size is not None:
        options.append(("max-size", str(max_size)))
    if case is not None:
        options.append(("case", case))
    if not shrink:
        options.append(("no-shrink", None))
    text = _native.check(property, options, ctypes.addressof(memory.c_impl))
    if memory.interrupt is not None:
        raise memory.interrupt
    j = json.loads(text)
    f = j["failure"]
    where = f.get("where") if f else None
    spec = _import_spec(impl) if isinstance(impl, (Adapter, type)) else None
    result = dict(
        property=j["property"], impl=j["impl"], passed=j["passed"], cases=j["cases"],
        unsupported=j["unsupported"], unsupported_reasons=tuple(j["unsupported_reasons"]),
        ops=tuple(j["ops"]), seed=j["seed"], cases_requested=j["cases_requested"],
        counterexample=j["counterexample"], kind=f["kind"] if f else None,
        failure=f["what"] if f else (j["message"] or None) if not j["passed"] else None,
        location=Location(where["row"], where["col"], where["expected_bits"],
                          where["actual_bits"], where["ulp"]) if where else None,
        output=f["output"] if f else "fp32",
    )
    if not j["passed"] and j["counterexample"]:
        extra = f", accumulator={accumulator!r}" if accumulator is not None else ""
        result["reproduce"] = (f"mxgate.check({property!r}, impl={_impl_expression(impl, spec, op)}"
                               f"{extra}, case={j['counterexample']!r})")
        if spec and accumulator is None:
            result["cli"] = (f"mxgate property {property} --impl py:{spec} --seed {seed} "
                             f"--cases {cases}")
    return CheckResult(**result)
