"""The result of check_gemm: a verdict that names the element."""

import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple

NAN_ULP = 2**64 - 1  # reference/verdict.h kNanUlpDistance: NaN against a number


def _nan_side(v):
    """One side of a NaN-vs-number mismatch, as reference/verdict.cpp writes it: NaN, +Inf, -Inf
    or "finite <value>" (so that an Inf where NaN is expected reads as such)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return f"finite {v:.9g}"


@dataclass(frozen=True)
class Element:
    """One located element of C (row, col). Bits are fp32 patterns or 16-bit bf16 patterns;
    expected is the exact result rounded once to C's format, ulp the ordered-integer distance
    (NAN_ULP for NaN against a number). Bound mode adds exact (the exact result rounded to
    double), bound (the allowed |actual - exact|) and excess; they are None in exact mode."""

    row: int
    col: int
    expected_bits: int
    actual_bits: int
    ulp: int
    expected: float
    actual: float
    exact: Optional[float] = None
    bound: Optional[float] = None
    excess: Optional[float] = None
    output: str = "fp32"

    @property
    def coords(self) -> Tuple[int, int]:
        return (self.row, self.col)

    def __str__(self) -> str:
        digits = 8 if self.output == "fp32" else 4
        ulp = (f"NaN-vs-number (expected {_nan_side(self.expected)}, got "
               f"{_nan_side(self.actual)})" if self.ulp == NAN_ULP else f"{self.ulp} ulp")
        text = (
            f"({self.row},{self.col}) expected 0x{self.expected_bits:0{digits}x} "
            f"({self.expected:.9g}) actual 0x{self.actual_bits:0{digits}x} ({self.actual:.9g}) "
            f"{ulp}"
        )
        if self.bound is not None:
            text += f"; exact {self.exact:.17g} bound {self.bound:.6g} excess {self.excess:.6g}"
        return text


def _element(e, bound_mode, output):
    optional = (lambda v: None if math.isnan(v) else v) if bound_mode else (lambda v: None)
    return Element(
        row=e.row,
        col=e.col,
        expected_bits=e.expected_bits,
        actual_bits=e.actual_bits,
        ulp=e.ulp,
        expected=e.expected,
        actual=e.actual,
        exact=optional(e.exact),
        bound=optional(e.bound),
        excess=optional(e.excess),
        output=output,
    )


@dataclass(frozen=True, repr=False)
class Verdict:
    """check_gemm's verdict. passed: C passes (success is spelt `passed` on every result:
    mxgate.check's CheckResult too); mismatches: elements whose bits differ (exact mode) or
    outside their bound (bound mode); first: the row-major first of them; worst: the largest ULP
    distance (exact) or excess (bound); text: what `mxgate check-gemm` prints; heatmap: the file
    drawn on request."""

    passed: bool
    mode: str  # "exact" or "bound"
    output: str  # C's format: "fp32" or "bf16"
    shape: Tuple[int, int]
    mismatches: int
    first: Optional[Element]
    worst: Optional[Element]
    text: str
    heatmap: Optional[str] = None
    groups: Optional[Tuple[str, str, Tuple[int, ...]]] = None  # grouped: (option, kind, entries)

    def __str__(self) -> str:
        """The CLI's text; in bound mode (whose summary has no bits) the located elements too."""
        lines = [self.text.rstrip("\n")]
        if self.mode == "bound":
            lines += [f"{name}: {e}" for name, e in (("first", self.first), ("worst", self.worst))
                      if e is not None]
        if self.heatmap:
            lines.append(f"heatmap: {self.heatmap}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        located = (("first", self.first), ("worst", self.worst))
        where = "".join(f", {name}={e.coords}" for name, e in located if e)
        return (f"Verdict(passed={self.passed}, mode={self.mode!r}, "
                f"mismatches={self.mismatches}{where})")

    def group_of(self, e: Optional[Element]) -> Optional[Tuple[int, int]]:
        """(group, row within the group) of a located element of a grouped check (None for a
        dense one): m-contiguous rows through the offsets as declared ("ends": group g holds
        [ends[g-1], ends[g]); "starts": [starts[g], starts[g+1])), masked rows of C (E, max_m,
        N) flattened, so group row // max_m."""
        if e is None or self.groups is None:
            return None
        option, kind, entries = self.groups
        row = e.row
        if option == "masked-counts":
            max_m = self.shape[0] // max(len(entries), 1)
            return row // max_m, row % max_m
        g, start = 0, 0
        for i, x in enumerate(entries):
            begin = (entries[i - 1] if i else 0) if kind == "ends" else x
            end = x if kind == "ends" else (entries[i + 1] if i + 1 < len(entries) else None)
            if begin <= row and (end is None or row < end):
                g, start = i, begin
        return g, row - start

    @classmethod
    def from_struct(cls, v: Any, text: str, heatmap: Optional[str],
                    groups: Optional[Tuple[str, str, Any]] = None) -> "Verdict":
        """The verdict of a check-gemm result (_native.VerdictStruct), its text and heatmap."""
        bound_mode = v.mode == 1
        output = "fp32" if v.output == 0 else "bf16"
        return cls(
            passed=bool(v.ok),
            mode="bound" if bound_mode else "exact",
            output=output,
            shape=(v.rows, v.cols),
            mismatches=v.mismatches,
            first=_element(v.first, bound_mode, output) if v.has_first else None,
            worst=_element(v.worst, bound_mode, output) if v.has_worst else None,
            text=text,
            heatmap=heatmap,
            groups=None if groups is None else (groups[0], groups[1],
                                                tuple(int(x) for x in groups[2])),
        )
