"""The MoE layer properties (docs/moe.md §2): each runs one case against a MoEAdapter and
returns an Outcome; expected intervals come from mxgate's MoE reference (reference.py), never
from the code under test."""

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from ..errors import AdapterError, InputError
# The outcome of one case and how a property stops with it are the layer properties' own.
from ..layers.properties import Outcome, _fail, _skip, _Stop, _user
from ..layers.protocol import as_numpy
from ..result import Location
from . import data as D
from . import reference as R
from .config import MoEAdapter, MoEConfig, MoELayer

INTERMEDIATES = ("bf16", "fp32")
OUTPUTS = ("fp32", "bf16")


def _tensor(a: np.ndarray, adapter: MoEAdapter) -> Any:
    if a is None or adapter.tensor_type == "numpy":
        return a
    import torch  # tensor_type "torch" needs it

    return torch.from_numpy(np.ascontiguousarray(a)).to(adapter.device)


def declarations(adapter: MoEAdapter) -> Dict[str, Any]:
    """The adapter's declared precisions, validated (an InputError names a bad one)."""
    d = dict(intermediate=getattr(adapter, "intermediate", "bf16"),
             activation_error=getattr(adapter, "activation_error", 2.0**-20),
             output=getattr(adapter, "output", "fp32"),
             slot_rounding=getattr(adapter, "slot_rounding", "fp32"),
             mx_rule=getattr(adapter, "mx_rule", "floor"))
    if d["intermediate"] not in INTERMEDIATES:
        raise InputError(f"MoEAdapter.intermediate: {d['intermediate']!r} is not bf16 or fp32")
    for key in ("output", "slot_rounding"):
        if d[key] not in OUTPUTS:
            raise InputError(f"MoEAdapter.{key}: {d[key]!r} is not fp32 or bf16")
    if d["mx_rule"] not in ("floor", "rceil"):
        raise InputError(f"MoEAdapter.mx_rule: {d['mx_rule']!r} is not floor or rceil")
    e = d["activation_error"]
    if not isinstance(e, (int, float)) or not 0 <= e < 2.0**-4:
        raise InputError(f"MoEAdapter.activation_error: {e!r} is not in [0, 2^-4)")
    return d


class _Run:
    def __init__(self, adapter: MoEAdapter, case: D.Case) -> None:
        self.adapter, self.case = adapter, case
        self.kernels: List[str] = []
        self.full = D.checkpoint(case)
        self.decl = declarations(adapter)

    def layer(self, c: MoEConfig, tp_rank: int = 0, ep_rank: int = 0):
        backend = _user("select", self.adapter.select, c)
        if backend is None:
            raise _skip(f"select returned None ({c.scheme} {c.activation} H={c.hidden} "
                        f"I={c.inter} E={c.experts} on {c.platform})")
        if str(backend) not in self.kernels:
            self.kernels.append(str(backend))
        ck = D.shard(self.full, c, tp_rank, ep_rank)
        emap = D.expert_map(c, ep_rank)
        t = lambda a: None if a is None else _tensor(a.copy(), self.adapter)
        layer = MoELayer(c, t(ck.w13), t(ck.w13_scale), t(ck.w2), t(ck.w2_scale),
                         _tensor(emap, self.adapter), str(backend))
        _user("load", self.adapter.load, layer)
        return layer, ck, emap

    def apply(self, layer: MoELayer, x, ids, w, what: str) -> np.ndarray:
        a = self.adapter
        y = _user(what, a.apply, layer, _tensor(x, a), _tensor(ids, a), _tensor(w, a))
        try:
            y = as_numpy(y)
        except Exception as e:
            raise _Stop(Outcome("error", f"{what} returned {type(y).__name__}, not an array: "
                                         f"{e}")) from None
        want = (x.shape[0], layer.config.hidden)
        if y.dtype != np.float32 or y.shape != want:
            raise _Stop(Outcome("error", f"{what} returned {y.dtype} {tuple(y.shape)}; expected "
                                         f"float32 {want}"))
        return y

    def expected(self, c: MoEConfig, ck: D.Checkpoint, emap, x, ids, w) -> R.Expected:
        return R.expected(c, ck.w13, ck.w13_scale, ck.w2, ck.w2_scale, emap, x, ids, w,
                          **self.decl)


def _ordered(f: np.float32) -> int:
    """f's place on the fp32 number line (consecutive floats differ by 1)."""
    b = int(np.float32(f).view(np.int32))
    return b if b >= 0 else -(b & 0x7FFFFFFF)


def _judge(exp: R.Expected, y: np.ndarray, what: str, rows: Optional[np.ndarray] = None):
    count, at = R.first_outside(exp, y)
    if at is None:
        return
    t, col = at
    token = int(rows[t]) if rows is not None else t
    lo, hi = float(exp.lo[t, col]), float(exp.hi[t, col])
    v = float(y[t, col])
    near = np.float32(lo if not v > hi else hi)  # the interval end nearest y (NaN: lo)
    ulp = 0 if np.isnan(v) else abs(_ordered(np.float32(v)) - _ordered(near))
    loc = Location(token, col, int(near.view(np.uint32)), int(np.float32(v).view(np.uint32)), ulp)
    raise _fail(f"{what}: y[{token}, {col}] = {float(y[t, col])!r} is outside the reference "
                f"interval [{lo!r}, {hi!r}] in {count} of {y.size} elements", loc)


def end_to_end(adapter: MoEAdapter, case: D.Case) -> _Run:
    """One rank (TP rank 0, EP rank 0) of the case's layer: apply after load lies in the
    reference interval for every token, zero-token experts included."""
    run = _Run(adapter, case)
    c = case.config
    layer, ck, emap = run.layer(c)
    x, (ids, w) = D.activation(case), D.routing(case)
    y = run.apply(layer, x, ids, w, f"apply ({layer.backend})")
    _judge(run.expected(c, ck, emap, x, ids, w), y, f"apply ({layer.backend})")
    return run


def routing_invariance(adapter: MoEAdapter, case: D.Case) -> _Run:
    """Tokens permuted and each token's slots permuted: the output rows are the permuted rows,
    each in its interval (a kernel whose result depends on where a token sits, e.g. a tile
    taking its expert from its first row, fails here)."""
    run = _Run(adapter, case)
    c = case.config
    if case.m < 2 and c.top_k < 2:
        raise _skip("one token with one slot: nothing to permute")
    layer, ck, emap = run.layer(c)
    x, (ids, w) = D.activation(case), D.routing(case)
    rng = np.random.default_rng([case.seed, 11])
    perm = rng.permutation(case.m)
    slots = np.argsort(rng.random((case.m, c.top_k)), axis=1)
    xp = np.ascontiguousarray(x[perm])
    idp = np.ascontiguousarray(np.take_along_axis(ids[perm], slots, axis=1))
    wp = np.ascontiguousarray(np.take_along_axis(w[perm], slots, axis=1))
    y = run.apply(layer, xp, idp, wp, "apply of the permuted tokens")
    _judge(run.expected(c, ck, emap, xp, idp, wp), y,
           f"apply of the permuted tokens ({layer.backend}; row r is token perm[r])", perm)
    return run


def _gathered(run: _Run, configs, what: str) -> None:
    """Each rank applied on its own; each rank's output in its interval, and their fp32 sum
    (the all-reduce) in the sum of the intervals widened by gamma(ranks) of the magnitudes."""
    case = run.case
    x, (ids, w) = D.activation(case), D.routing(case)
    total, lo, hi, mag = None, 0.0, 0.0, 0.0
    for label, c, tp_rank, ep_rank in configs:
        layer, ck, emap = run.layer(c, tp_rank, ep_rank)
        y = run.apply(layer, x, ids, w, f"apply on {label}")
        exp = run.expected(c, ck, emap, x, ids, w)
        _judge(exp, y, f"{what}: {label} ({layer.backend})")
        total = y.astype(np.float32) if total is None else (total + y).astype(np.float32)
        lo, hi = lo + exp.lo, hi + exp.hi
        mag = mag + np.maximum(np.abs(exp.lo), np.abs(exp.hi))
    e = R.gamma(len(configs)) * mag
    _judge(R.Expected(lo - e, hi + e), total, f"{what}: the ranks' outputs summed")


def tp_consistency(adapter: MoEAdapter, case: D.Case) -> _Run:
    """The layer's TP shards (I / TP each: the gate's and the up's rows and w2's columns
    narrowed as a loader narrows them, K % 128 residues included) each in their interval, and
    their sum in the sum of the intervals."""
    c = case.config
    if c.tp == 1:
        raise _skip("tp 1: no shards")
    run = _Run(adapter, case)
    _gathered(run, [(f"TP rank {r} of {c.tp}", c, r, 0) for r in range(c.tp)],
              "tp_consistency")
    return run


def ep_consistency(adapter: MoEAdapter, case: D.Case) -> _Run:
    """The layer's EP ranks (E / EP experts each, global ids through expert_map) each in
    their interval, and their sum in the sum of the intervals: a token routed to no local
    expert gets zeros from that rank."""
    c = case.config
    if c.ep == 1:
        raise _skip("ep 1: no expert-parallel ranks")
    run = _Run(adapter, case)
    _gathered(run, [(f"EP rank {r} of {c.ep}", c, 0, r) for r in range(c.ep)],
              "ep_consistency")
    return run


LAYER_ARRAYS = ("w13", "w13_scale", "w2", "w2_scale")


def _snapshot(layer: MoELayer) -> Dict[str, np.ndarray]:
    out = {}
    for name in LAYER_ARRAYS:
        v = getattr(layer, name, None)
        if v is not None:
            out[name] = np.array(as_numpy(v), copy=True)
    return out


def _first_change(before: np.ndarray, after: np.ndarray) -> str:
    if before.dtype != after.dtype or before.shape != after.shape:
        return f"{before.dtype} {tuple(before.shape)} became {after.dtype} {tuple(after.shape)}"
    a = np.ascontiguousarray(before).view(np.uint8).reshape(before.shape + (-1,))
    b = np.ascontiguousarray(after).view(np.uint8).reshape(after.shape + (-1,))
    diff = np.any(a != b, axis=-1)
    at = tuple(int(i) for i in np.argwhere(diff)[0])
    return (f"{int(diff.sum())} of {diff.size} elements changed, first at [{', '.join(map(str, at))}]"
            f" (expert {at[0]})")


def single_transform(adapter: MoEAdapter, case: D.Case) -> _Run:
    """Load is applied once: apply after load lies in its interval, and a second load (a model
    reload, process_weights_after_loading run again) changes no byte of the layer's w13, w2 and
    their scales and no bit of the output. A transform that is not idempotent (an interleave or
    shuffle applied to the weights in place) shows here even where one load is right."""
    run = _Run(adapter, case)
    c = case.config
    layer, ck, emap = run.layer(c)
    x, (ids, w) = D.activation(case), D.routing(case)
    y1 = run.apply(layer, x, ids, w, f"apply ({layer.backend})")
    _judge(run.expected(c, ck, emap, x, ids, w), y1, f"apply ({layer.backend})")
    before = _snapshot(layer)
    _user("a second load", adapter.load, layer)
    after = _snapshot(layer)
    changed = []
    for name, b in before.items():
        a = after.get(name)
        if a is None:
            raise _fail(f"a second load ({layer.backend}) removed layer.{name}")
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(
                np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)):
            changed.append(f"layer.{name}: {_first_change(b, a)}")
    what = f"a second load ({layer.backend}) changed " + "; ".join(changed) if changed else ""
    y2 = run.apply(layer, x, ids, w, f"apply after a second load ({layer.backend})")
    diff = ~((y1.view(np.uint32) == y2.view(np.uint32)) | (np.isnan(y1) & np.isnan(y2)))
    if diff.any():
        t, col = (int(i) for i in np.argwhere(diff)[0])
        loc = Location(t, col, int(y1[t, col].view(np.uint32)), int(y2[t, col].view(np.uint32)),
                       abs(_ordered(y1[t, col]) - _ordered(y2[t, col])))
        raise _fail(f"apply after a second load ({layer.backend}) differs from apply after one "
                    f"in {int(diff.sum())} of {y1.size} elements, first y[{t}, {col}] = "
                    f"{float(y2[t, col])!r}, was {float(y1[t, col])!r}"
                    f"{'; ' + what if what else ''}; load must be applied exactly once", loc)
    if changed:
        raise _fail(f"{what}; load must be applied exactly once")
    return run


PROPERTIES: Dict[str, Callable[[MoEAdapter, D.Case], _Run]] = {
    "moe.end_to_end": end_to_end,
    "moe.routing_invariance": routing_invariance,
    "moe.tp_consistency": tp_consistency,
    "moe.ep_consistency": ep_consistency,
    "moe.single_transform": single_transform,
}


def run_case(name: str, adapter: MoEAdapter, case: D.Case) -> Outcome:
    try:
        r = PROPERTIES[name](adapter, case)
    except _Stop as s:
        return s.outcome
    except AdapterError:
        raise
    return Outcome("pass", kernels=tuple(r.kernels))
