"""mxgate.survey_cast: the cast half of `mxgate survey` for one Python cast op, in this process
(docs/python.md §13). The op's codes for every fp32 input (or the sample) are compared with
every claim defining the target format (the reference's run tables); a host op is called chunk by
chunk on host buffers, a device op (memory="cuda", a cuda-preset libmxgate.so) through the device
cast sweep: its inputs made on the device, its output compared there, only the counts and the
first mismatches coming back. The Python worker behind `--impl py:...` answers the survey's
"survey" request with this (mxgate._worker), so no input crosses its socket.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Tuple, Union

from . import _native
from .adapter import Op, as_adapter


@dataclass(frozen=True)
class ClaimResult:
    """One distinct expected table: the claims (conventions, "e8m0:RULE") that share it, how many
    inputs differ and the first one ("0x7f800000 (inf): expected 0x7e, actual 0x7f")."""

    claims: Tuple[str, ...]
    mismatches: int
    first: str


@dataclass(frozen=True)
class CastSurvey:
    op: str
    target: str
    claimed: str  # the op's claim, "" when none
    inputs: int
    seconds: float  # the timed sweep over the inputs
    error: str
    results: Tuple[ClaimResult, ...] = field(default_factory=tuple)
    # The one-time setup before the sweep: the claims' run tables (built once per format in a
    # process) and one warm-up call of the op on the sweep's first call's inputs (a kernel's
    # compile, a jit per shape).
    setup_seconds: float = 0.0
    # Of `seconds`, the time inside the op's calls (the rest is mxgate's comparison, poison and
    # inputs); None where not measured (a device op's sweep times its chunks as one).
    op_seconds: Optional[float] = None

    @property
    def matches(self) -> Tuple[str, ...]:
        """The claims the op equals bit for bit."""
        return tuple(c for r in self.results if r.mismatches == 0 for c in r.claims)


def parse_lines(text: str) -> Tuple[CastSurvey, ...]:
    """properties::survey_lines' text as CastSurvey values."""
    out = []
    for line in text.splitlines():
        f = line.split("\t")
        if f[0] == "cast" and len(f) >= 6:
            out.append(CastSurvey(f[1], f[2], "" if f[3] == "-" else f[3], int(f[4]),
                                  float(f[5]), f[6] if len(f) > 6 else "", (),
                                  float(f[7]) if len(f) > 7 and f[7] else 0.0,
                                  _op_seconds(f[8]) if len(f) > 8 and f[8] else None))
        elif f[0] == "claim" and len(f) >= 3 and out:
            r = ClaimResult(tuple(f[1].split(",")), int(f[2]), f[3] if len(f) > 3 else "")
            last = out[-1]
            out[-1] = dataclasses.replace(last, results=last.results + (r,))
    return tuple(out)


def _op_seconds(text: str) -> Optional[float]:
    s = float(text)
    return None if s < 0 else s


def call_inputs(op: Op, target: str) -> int:
    """A host op's inputs per survey call: 16 MiB of output (2^24 inputs of a one-byte target,
    2^23 of a two-byte one) for an op writing mxgate's output in place (keyword `out`: it
    allocates nothing per call, and fewer calls meet the op's thread pool stopping and the
    survey's pass starting fewer times, docs/python.md §14.8); 0, the library's default of 2^22,
    for an op returning its output (an array of 2^24 inputs' fp32 temporaries would be past
    glibc's mmap threshold, and faulted in on every call)."""
    from .adapter import NUMPY_OF, PACKED

    if not getattr(op, "_writes_out", False) or target not in NUMPY_OF:
        return 0
    width = 1 if target in PACKED else NUMPY_OF[target].itemsize
    return (1 << 24) // width


def survey_lines(op: Op, target: str, inputs: str = "all",
                 progress: Optional[Callable[[int, int], None]] = None) -> str:
    """The survey of one op (an mxgate.Op of family cast) to `target` as survey_lines' text."""
    from ._device import device_available
    from .adapter import Adapter
    from .check import _InMemory

    # A device op meets device buffers only where the library has the device sweep; elsewhere
    # it runs as a host op does (its views host arrays).
    memory = _InMemory(Adapter([op], name="python"), (op,), device=device_available())
    text = _native.survey_cast(_addressof(memory), 0, target, inputs, progress,
                               call_inputs(op, target))
    if memory.interrupt is not None:
        raise memory.interrupt
    return text


def _addressof(memory):
    import ctypes

    return ctypes.addressof(memory.c_impl)


def survey_cast(impl: Any, op: Union[str, Op, None] = None, target: Optional[str] = None,
                inputs: str = "all",
                progress: Optional[Callable[[int, int], None]] = None) -> Tuple[CastSurvey, ...]:
    """Surveys the cast ops of `impl` (an Adapter, an Op, or a callable with op="cast"): each op
    (op=: one by name) and each target it declares (target=: one), over inputs "all" (2^32) or
    "sample". progress(done, total) hears the inputs compared per op and target. Raises
    InputError for an unknown op or target, LibraryError when a device op meets a library
    without CUDA."""
    adapter, ops = as_adapter(impl, op)
    out = []
    for o in ops:
        if o.family != "cast":
            continue
        for t in o.contract.out_dtypes:
            if target is not None and t != target:
                continue
            out.extend(parse_lines(survey_lines(o, t, inputs, progress)))
    return tuple(out)
