"""What mxgate.check returns: one CheckResult whatever it ran (one property, a list, "all"),
with success spelt `passed`, as on check_gemm's Verdict (docs/python.md §9.1)."""

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple


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
    def coords(self) -> Tuple[int, int]:
        return (self.row, self.col)


@dataclass(frozen=True, repr=False)
class CheckResult:
    """What mxgate.check found. passed; cases run; unsupported (cases the implementation could
    not take: counted, never failures) and their reasons; the shrunk counterexample (the case's
    one-line text) with the failure's kind ("fail", "contract_mismatch", "error"), what and
    location; reproduce: a snippet that replays the shrunk case; cli: the same run from the
    shell when the adapter is importable (py:MODULE:OBJECT).

    A run of several properties ("all" or a list) is one CheckResult too: property names them
    ("all" or "a,b"), `results` holds one CheckResult per property, passed is every one passed,
    cases and unsupported are sums, and the failure fields are the first failing property's.
    For one property `results` is (self,), so `for r in result.results` reads either.

    str() tells the whole story; repr() fits pytest's 240-character assertion message."""

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
    parts: Optional[Tuple["CheckResult", ...]] = None  # per property, in a run of several
    # An op of several tactics (docs/python.md §11.9): the tactic this result is of (the first
    # that failed, else the last run), its name, and the run's tactic selection.
    tactic: Optional[int] = None
    tactic_name: Optional[str] = None
    tactics: str = ""
    # Ops of the property's families it could not take while it checked others, each
    # "impl/op: why" (never silently dropped; with no op at all they are unsupported_reasons).
    ops_not_checked: Tuple[str, ...] = ()

    @classmethod
    def of_several(cls, label: str, impl: str, seed: int, cases_requested: int,
                   parts: Sequence["CheckResult"]) -> "CheckResult":
        """One result for the properties `parts` ran (label: "all" or their names)."""
        parts = tuple(parts)
        bad = next((r for r in parts if not r.passed), None)
        ops: Tuple[str, ...] = ()
        not_checked: Tuple[str, ...] = ()
        for r in parts:
            ops += tuple(o for o in r.ops if o not in ops)
            not_checked += tuple(w for w in r.ops_not_checked if w not in not_checked)
        first = {} if bad is None else dict(
            counterexample=bad.counterexample, kind=bad.kind, failure=bad.failure,
            location=bad.location, output=bad.output, reproduce=bad.reproduce, cli=bad.cli,
            tactic=bad.tactic, tactic_name=bad.tactic_name)
        return cls(property=label, impl=parts[0].impl if parts else impl, passed=bad is None,
                   cases=sum(r.cases for r in parts),
                   unsupported=sum(r.unsupported for r in parts),
                   unsupported_reasons=tuple(s for r in parts for s in r.unsupported_reasons),
                   ops=ops, seed=seed, cases_requested=cases_requested, parts=parts,
                   ops_not_checked=not_checked, **first)

    @property
    def results(self) -> Tuple["CheckResult", ...]:
        """One CheckResult per property run: (self,) for a single property."""
        return self.parts if self.parts is not None else (self,)

    @property
    def verdict(self) -> str:
        """"pass", "unsupported" (no case ran), or the failure's kind ("fail", "error", ...)."""
        if self.passed:
            return "pass" if self.cases else "unsupported"
        return self.kind or "fail"

    @property
    def failed_property(self) -> Optional[str]:
        """The property the failure fields describe (the first failing one), or None."""
        return next((r.property for r in self.results if not r.passed), None)

    def located(self) -> str:
        """The located element as one line ('' when the failure located none)."""
        e = self.location
        if e is None:
            return ""
        w = 4 if self.output == "bf16" else 8
        return (f"element ({e.row},{e.col}): expected 0x{e.expected_bits:0{w}X}, actual "
                f"0x{e.actual_bits:0{w}X}, {e.ulp} ulp")

    def _story(self) -> str:
        head = f"{self.property} on {self.impl}"
        if self.tactic is not None and not self.passed:
            head += f" tactic {self.tactic} ({self.tactic_name})"
        head += ": "
        if self.passed:
            head += (f"pass after {self.cases} cases" if self.cases else "no case ran") + \
                f" (seed {self.seed})"
        else:
            head += f"{self.verdict.upper()} after {self.cases} cases (seed {self.seed})"
        lines = [head + f", {self.unsupported} unsupported"]
        if self.ops:
            lines.append("  ops: " + ", ".join(self.ops))
        if self.tactics:
            lines.append("  " + self.tactics)
        for r in self.unsupported_reasons:
            lines.append("  unsupported: " + r)
        for r in self.ops_not_checked:
            lines.append("  not checked: " + r)
        if not self.passed:
            if self.counterexample:
                lines.append("  shrunk case: " + self.counterexample)
            if self.failure:
                lines.append("  failure: " + self.failure)
            if self.location:
                lines.append("  " + self.located())
            if self.reproduce:
                lines.append("  reproduce: " + self.reproduce)
            if self.cli:
                lines.append("  cli: " + self.cli)
        return "\n".join(lines)

    def __str__(self) -> str:
        if self.parts is None:
            return self._story()
        failing = sum(not r.passed for r in self.parts)
        empty = sum(r.passed and not r.cases for r in self.parts)
        head = (f"{self.property} on {self.impl}: {len(self.parts)} properties, "
                f"{len(self.parts) - failing - empty} pass, {failing} fail, {empty} ran no case "
                f"(seed {self.seed})")
        return "\n".join([head] + [r._story() for r in self.parts])

    def __repr__(self) -> str:
        if self.passed:
            return (f"CheckResult({self.property}[{self.impl}] {self.verdict}, cases={self.cases},"
                    f" unsupported={self.unsupported})")
        at = f" at {self.location.coords}" if self.location else ""
        case = self.counterexample or (self.failure or "")[:80]
        which = "" if self.parts is None else f"{self.failed_property}: "
        text = (f"CheckResult({self.property}[{self.impl}] {self.verdict.upper()}{at}: "
                f"{which}{case}")
        if len(text) > 225:
            text = text[:222] + "..."
        return text + "; print() it)"
