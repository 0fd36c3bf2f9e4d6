"""The layer properties (docs/layers.md §2): each runs one case against a LayerAdapter and
returns an Outcome. Expected results come from mxgate's reference (mxgate.quantize_*,
mxgate.check_gemm, mxgate.dequantize, mxgate.decode), never from the code under test."""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _native
from .. import reference as ref
from ..adapter import describe_exception
from ..errors import AdapterError, InputError, Unsupported
from ..result import Location
from . import data as D
from .protocol import (ORDERS, TRANSFORMS, Layer, LayerAdapter, LayerConfig, QuantizedActivation,
                       as_numpy, to_tensor)


@dataclass
class Outcome:
    status: str  # pass, fail, error, unsupported
    message: str = ""
    location: Optional[Location] = None
    kernels: Tuple[str, ...] = ()


class _Stop(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


def _skip(reason: str) -> _Stop:
    return _Stop(Outcome("unsupported", reason))


def _fail(message: str, location: Optional[Location] = None) -> _Stop:
    return _Stop(Outcome("fail", message, location))


def _user(what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Calls the adapter: Unsupported declines the case, any other exception is an error."""
    try:
        return fn(*args)
    except Unsupported as e:
        raise _skip(f"{what} declined: {e}") from None
    except Exception as e:  # the user's code failed: an error verdict naming it
        raise _Stop(Outcome("error", f"{what} raised {describe_exception(e)}")) from None


class _Run:
    """One property run on one case: builds layers, records the kernels selected."""

    def __init__(self, adapter: LayerAdapter, case: D.Case) -> None:
        self.adapter = adapter
        self.case = case
        self.kernels: List[str] = []

    def layer(self, config: LayerConfig, ck: D.Checkpoint, load: bool = True) -> Layer:
        kernel = _user("select", self.adapter.select, config)
        if kernel is None:
            raise _skip(f"select returned None ({config.scheme} N={config.n} K={config.k} "
                        f"{config.weight_scale} on {config.platform})")
        if kernel not in self.kernels:
            self.kernels.append(str(kernel))
        g = None if ck.global_scale is None else to_tensor(ck.global_scale.copy(), self.adapter)
        layer = Layer(config, to_tensor(ck.codes.copy(), self.adapter),
                      to_tensor(ck.scales.copy(), self.adapter), str(kernel), g)
        if load:
            _user("load", self.adapter.load, layer)
        return layer

    def acc(self, layer: Layer) -> Optional[str]:
        """The accumulator model the adapter declares for this layer's kernel (None: exact)."""
        a = _user("accumulator", self.adapter.accumulator, layer.config, layer.kernel)
        if a is not None and not isinstance(a, str):
            raise _Stop(Outcome("error", f"accumulator returned {a!r}, not a model name"))
        return None if a in (None, "fp32_rn") else a

    def apply(self, layer: Layer, x: Any, what: str = "apply") -> np.ndarray:
        if isinstance(x, np.ndarray):
            x = to_tensor(x, self.adapter)
        y = _user(what, self.adapter.apply, layer, x)
        try:
            y = as_numpy(y)
        except Exception as e:
            raise _Stop(Outcome("error", f"{what} returned {type(y).__name__}, not an array: "
                                         f"{e}")) from None
        want = (self.case.m, layer.config.n)
        if y.dtype != np.float32 or y.shape != want:
            raise _Stop(Outcome("error", f"{what} returned {y.dtype} {tuple(y.shape)}; expected "
                                         f"float32 {want}"))
        return y


def _location(v) -> Optional[Location]:
    e = v.first
    return None if e is None else Location(e.row, e.col, e.expected_bits, e.actual_bits, e.ulp)


def _expect(config: LayerConfig, ck: D.Checkpoint, x: np.ndarray, y: np.ndarray,
            what: str, acc: Optional[str] = None) -> None:
    """y against the reference: bit for bit, or within the bound of the declared accumulator."""
    try:
        v = D.check_output(config, ck, x, y, acc)
    except InputError as e:  # e.g. an accumulator name the library does not know
        raise _Stop(Outcome("error", f"accumulator {acc!r}: {e}")) from None
    if not v.passed:
        how = f"outside the {acc} bound" if acc else "differs from the reference"
        raise _fail(f"{what} {how} in {v.mismatches} of {y.size} elements", _location(v))


def _same_bits(a: np.ndarray, b: np.ndarray) -> Optional[Tuple[int, int]]:
    """The first (row, col) where two float32 arrays differ (any NaN equals any NaN)."""
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    diff = (ua != ub) & ~(np.isnan(a) & np.isnan(b))
    if not diff.any():
        return None
    r, c = np.argwhere(diff)[0]
    return int(r), int(c)


def end_to_end(adapter: LayerAdapter, case: D.Case) -> _Run:
    """apply after load equals the reference (x quantized as the scheme says, the checkpoint's
    weight); a pre-quantized activation in act_scale_order is refused (Unsupported) or gives
    the reference too."""
    run = _Run(adapter, case)
    c, ck, x = case.config, D.checkpoint(case), D.activation(case)
    layer = run.layer(c, ck)
    _expect(c, ck, x, run.apply(layer, x), f"apply after load ({layer.kernel})", run.acc(layer))
    if c.act_scale_order is not None:
        codes, scales = D.fused_activation(c, x, c.act_scale_order)
        qa = QuantizedActivation(to_tensor(codes, adapter), scales, c.act_scale_order, x)
        try:
            y = run.apply(layer, qa, "apply of a pre-quantized activation")
        except _Stop as s:
            if s.outcome.status == "unsupported":
                return run  # refused loudly (I3)
            raise
        _expect(c, ck, x, y, f"apply of a {c.act_scale_order} pre-quantized activation "
                             f"({layer.kernel})", run.acc(layer))
    return run


def load_equivalence(adapter: LayerAdapter, case: D.Case) -> _Run:
    """The same layer with and without load: both equal the reference and each other, bit for
    bit (the data are exact-mode, so every correct path is exact)."""
    run = _Run(adapter, case)
    c, ck, x = case.config, D.checkpoint(case), D.activation(case)
    unloaded = run.layer(c, ck, load=False)
    y_step = run.apply(unloaded, x, "apply without load")
    _expect(c, ck, x, y_step, f"apply without load (the per-step path, {unloaded.kernel})",
            run.acc(unloaded))
    loaded = run.layer(c, ck)
    y_load = run.apply(loaded, x)
    _expect(c, ck, x, y_load, f"apply after load ({loaded.kernel})", run.acc(loaded))
    if run.acc(loaded) is not None or run.acc(unloaded) is not None:
        return run  # each within its bound; bit for bit only where the paths are exact
    at = _same_bits(y_load, y_step)
    if at is not None:
        raise _fail(f"I4: with load and without load differ at {at}")
    return run


def direct_reads(adapter: LayerAdapter, case: D.Case) -> _Run:
    """The bytes other code reads directly (a flagged layer's weight) are the same after load."""
    run = _Run(adapter, case)
    c = case.config
    if not c.reads_weight_directly:
        raise _skip("the weight is not read directly (neither is_bmm nor skip_weight_relayout)")
    layer = run.layer(c, D.checkpoint(case))
    flag = "is_bmm" if c.is_bmm else "skip_weight_relayout"
    for name, before in layer.direct_reads.items():
        now = as_numpy(getattr(layer, name, None))
        after = bytes(np.ascontiguousarray(now).tobytes())
        if name == "weight" and now.dtype == np.uint16 and now.shape == (c.n, c.k) and \
                c.scheme != "fp8_block":
            # Dequantized to bf16 at load (§4.1): the reader sees values, in the same layout,
            # any NaN equal to any NaN (the payload is the converter's).
            want = D.dequantized_bf16(c, D.checkpoint(case))
            nan = (want & 0x7FFF > 0x7F80) & (now & 0x7FFF > 0x7F80)
            before = bytes(np.where(nan, now, want).astype(np.uint16).tobytes())
        if after != before:
            loc = None
            a = np.frombuffer(before, np.uint8)
            b = np.frombuffer(after, np.uint8)
            if a.size == b.size:
                i = int(np.argmax(a != b))
                row = len(before) // c.n  # bytes a weight row
                loc = Location(i // row, i % row, int(a[i]), int(b[i]), 0)
            raise _fail(f"I2: layer.{name}, read directly by other code ({flag}), changed in "
                        f"load ({layer.kernel}): {len(before)} bytes before, "
                        f"{len(after)} after, {now.dtype} {tuple(now.shape)}", loc)
    return run


def _values(a: np.ndarray, want_bf16: bool) -> np.ndarray:
    """float32 values of what the layer holds: bf16 bits (uint16), float32, float64."""
    if a.dtype == np.uint16 and want_bf16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    return a


def _state(layer: Layer):
    return as_numpy(layer.weight).copy(), as_numpy(layer.weight_scale).copy()


def single_transform(adapter: LayerAdapter, case: D.Case) -> _Run:
    """After load, the weight and scales are exactly one application of each transform the
    selected kernel declares (adapter.transforms), and a second load changes nothing."""
    run = _Run(adapter, case)
    c, ck = case.config, D.checkpoint(case)
    declared = _user("transforms", adapter.transforms, c)
    if declared is None:
        raise _skip("the adapter declares no transforms (LayerAdapter.transforms)")
    declared = list(declared)
    bad = [t for t in declared if t not in TRANSFORMS]
    if bad or len(set(declared)) != len(declared):
        raise _Stop(Outcome("error", f"transforms returned {declared}: each of "
                                     f"{', '.join(TRANSFORMS)} at most once"))
    layer = run.layer(c, ck)
    w_exp: np.ndarray = ck.codes
    s_exp: Optional[np.ndarray] = ck.scales
    if "preshuffle" in declared:
        w_exp = D.preshuffle(w_exp)
    dequantized = "dequantize_bf16" in declared
    if dequantized:
        if c.scheme == "fp8_block":
            raise _skip("dequantize_bf16 of an fp8_block weight: not covered")
        bits = D.dequantized_bf16(c, ck)
        w_exp = (bits.astype(np.uint32) << 16).view(np.float32)
        s_exp = None  # nothing reads the scales of a dequantized weight
    if "upcast_e8m0" in declared and s_exp is not None:
        s_exp = D.weight_scales_fp32(c, ck)
    for attempt in ("load", "a second load"):
        w, s = _state(layer)
        wv = _values(w, dequantized)
        if wv.dtype != w_exp.dtype or wv.shape != w_exp.shape:
            raise _fail(f"after {attempt} ({layer.kernel}, declared {declared}) layer.weight is "
                        f"{w.dtype} {tuple(w.shape)}; exactly one application of the declared "
                        f"transforms gives {'bf16' if dequantized else w_exp.dtype} "
                        f"{tuple(w_exp.shape)}")
        # Codes compare as bytes; a dequantized weight as values, any NaN equal to any NaN (a
        # NaN block's bf16 payload is the converter's: torch gives 0x7FFF on CUDA, 0xFFFF on
        # the CPU, where the reference gives 0x7FC0).
        same = _same_bits(wv, w_exp) is None if dequantized else \
            np.array_equal(wv.view(np.uint8), w_exp.view(np.uint8))
        if not same:
            times = ""
            if "preshuffle" in declared and not dequantized:
                cur = ck.codes
                for i in range(4):
                    if np.array_equal(cur, w):
                        times = f": it is the checkpoint with preshuffle applied {i} times"
                        break
                    cur = D.preshuffle(cur)
            cols = w_exp.shape[1]
            if dequantized:
                r, col = _same_bits(wv, w_exp)
                e = r * cols + col
            else:
                e = int(np.argmax(wv.reshape(-1) != w_exp.reshape(-1)))
            loc = Location(e // cols, e % cols, int(w_exp.reshape(-1)[e].view(
                np.uint32 if dequantized else np.uint8)), int(wv.reshape(-1)[e].view(
                    np.uint32 if dequantized else np.uint8)), 0)
            raise _fail(f"after {attempt} ({layer.kernel}) layer.weight is not one application "
                        f"of {declared or 'no transform'} to the checkpoint{times}", loc)
        if s_exp is not None:
            sv = _values(s, False)
            if sv.dtype != s_exp.dtype or not np.array_equal(
                    np.ascontiguousarray(sv).view(np.uint8), np.ascontiguousarray(s_exp).view(
                        np.uint8)):
                raise _fail(f"after {attempt} ({layer.kernel}) layer.weight_scale ({s.dtype}) "
                            f"is not one application of {declared or 'no transform'} to the "
                            f"checkpoint's {ck.scales.dtype} scales ({s_exp.dtype} expected)")
        if attempt == "load":
            _user("a second load", adapter.load, layer)
    return run


_CONSUMER = {
    "twin": lambda c: c,
    "direct": lambda c: replace(c, is_bmm=True),
    "mxfp8": lambda c: replace(c, scheme="mxfp8", weight_scale="e8m0", act_scale_order=None),
}


def negotiation(adapter: LayerAdapter, case: D.Case) -> _Run:
    """One fused producer, the layer and its other consumers: the order negotiate() returns
    gives every consumer the reference (or a loud refusal); None: each takes the plain x."""
    run = _Run(adapter, case)
    c, x = case.config, D.activation(case)
    if c.scheme != "fp8_block":
        raise _skip(f"a {c.scheme} layer reads no 1x128 scales: nothing to negotiate")
    layers, checkpoints = [], []
    for i, kind in enumerate(("twin",) + c.consumers):
        cc = _CONSUMER[kind](replace(c, consumers=()))
        ck = D.checkpoint(replace(case, config=cc, seed=case.seed + i))
        try:
            layers.append(run.layer(cc, ck))
        except _Stop as s:
            if s.outcome.status != "unsupported" or i == 0:
                raise
            continue  # no kernel for that consumer: it is not one
        checkpoints.append(ck)
    order = _user("negotiate", adapter.negotiate, layers)
    if order is None:
        for i, (layer, ck) in enumerate(zip(layers, checkpoints)):
            _expect(layer.config, ck, x, run.apply(layer, x), f"consumer {i} ({layer.kernel})",
                    run.acc(layer))
        return run
    if order not in ORDERS:
        raise _Stop(Outcome("error", f"negotiate returned {order!r}, not None, row_major or "
                                     "col_major"))
    codes, scales = D.fused_activation(c, x, order)
    for i, (layer, ck) in enumerate(zip(layers, checkpoints)):
        qa = QuantizedActivation(to_tensor(codes, adapter), scales, order, x)
        try:
            y = run.apply(layer, qa, f"apply of consumer {i}")
        except _Stop as s:
            if s.outcome.status == "unsupported":
                continue  # refused loudly (I3)
            raise
        _expect(layer.config, ck, x, y, f"I3: negotiate returned {order}; consumer {i} "
                                        f"({layer.kernel}, {layer.config.scheme}"
                                        f"{', is_bmm' if layer.config.is_bmm else ''}) output",
                run.acc(layer))
    return run


def tp_consistency(adapter: LayerAdapter, case: D.Case) -> _Run:
    """The TP shards' outputs gathered as the parallel side says (column: concatenated along
    N, row: summed in fp32) equal the reference of the unsharded layer and its own output."""
    run = _Run(adapter, case)
    c = case.config
    if c.tp == 1:
        raise _skip("tp 1: nothing to gather")
    full = c.unsharded()
    ck_full, x_full = D.checkpoint(case, full), D.activation(case, full.k)
    whole = run.layer(full, ck_full)
    y_full = run.apply(whole, x_full, "apply of the unsharded layer")
    acc = run.acc(whole)
    _expect(full, ck_full, x_full, y_full, f"the unsharded layer ({whole.kernel})", acc)
    parts, shards = [], []
    for r in range(c.tp):
        layer = run.layer(c, D.shard(ck_full, c, r))
        shards += [layer.kernel] if layer.kernel not in shards else []
        acc = acc or run.acc(layer)
        x_r = x_full if c.parallel == "column" else x_full[:, r * c.k:(r + 1) * c.k]
        parts.append(run.apply(layer, np.ascontiguousarray(x_r), f"apply of rank {r}"))
    if c.parallel == "column":
        gathered = np.concatenate(parts, axis=1)
    else:
        gathered = parts[0].copy()
        for p in parts[1:]:
            gathered = (gathered + p).astype(np.float32)
    _expect(full, ck_full, x_full, gathered,
            f"TP {c.tp} {c.parallel}-parallel shards ({', '.join(shards)}) gathered", acc)
    if acc is not None:
        return run  # within the declared accumulator's bound; bit for bit only where exact
    at = _same_bits(gathered, y_full)
    if at is not None:
        raise _fail(f"TP {c.tp} shards gathered and the unsharded layer differ at {at}")
    return run


# vLLM class names of the model's linear kernels (docs/dispatch_model.md §2.2).
VLLM_NAMES = {
    "RocmDotScaledMxfp8LinearKernel": "DotScaledMxfp8",
    "EmulationMxfp8LinearKernel": "EmulationMxfp8",
    "AiterPreshuffledFp8BlockScaledMMKernel": "PreshuffledBlockScaledFp8",
    "AiterFp8BlockScaledMMKernel": "BlockScaledFp8",
    "TritonFp8BlockScaledMMKernel": "BlockScaledFp8",
    "CutlassFp8BlockScaledMMKernel": "BlockScaledFp8",
    "DeepGemmFp8BlockScaledMMKernel": "BlockScaledFp8",
}
_LOAD_NAMES = {"dequantize_weight_to_bf16": "dequantize_bf16",
               "upcast_weight_scale_e8m0_to_fp32": "upcast_e8m0",
               "preshuffle_weight": "preshuffle"}
_PLANS: Dict[Tuple[Any, ...], Optional[Tuple[str, Tuple[str, ...]]]] = {}


def cli_path() -> str:
    """The mxgate CLI: MXGATE_CLI, else the build next to the loaded library, else PATH."""
    env = os.environ.get("MXGATE_CLI")
    if env:
        return env
    lib = _native.library_path or ""
    near = os.path.normpath(os.path.join(os.path.dirname(lib), "..", "tools", "mxgate", "mxgate"))
    if os.path.isfile(near):
        return near
    return shutil.which("mxgate") or "mxgate"


def model_plan(c: LayerConfig) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """The decision model's (linear kernel, load transforms) for c, None when no linear kernel
    can run it: `mxgate plan --json` (dispatch's registry) with findings F1 and F2 of
    docs/dispatch_model.md §9 applied, the two places where dispatch departs from the model."""
    key = (c.platform, c.scheme, c.n, c.k, c.weight_scale, c.is_bmm, c.skip_weight_relayout)
    if key in _PLANS:
        return _PLANS[key]
    cmd = [cli_path(), "plan", "--platform", c.platform, "--scheme", c.scheme, "--n", str(c.n),
           "--k", str(c.k), "--weight-scale", c.weight_scale, "--json"]
    flags = [f for f in ("is_bmm", "skip_weight_relayout") if getattr(c, f)]
    if flags:
        cmd += ["--flags", ",".join(flags)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 2 and "no linear kernel" in p.stderr:
        _PLANS[key] = None
        return None
    if p.returncode != 0:
        raise _Stop(Outcome("error", f"mxgate plan failed ({p.returncode}): {p.stderr.strip()}"))
    j = json.loads(p.stdout)
    kernel, load = j["linear_kernel"], [_LOAD_NAMES[a] for a in j["load"]]
    if kernel == "PreshuffledBlockScaledFp8" and (c.n % 128 or c.k % 32):  # F1, F2
        kernel, load = "BlockScaledFp8", [a for a in load if a == "upcast_e8m0"]
    _PLANS[key] = (kernel, tuple(load))
    return _PLANS[key]


def decisions(adapter: LayerAdapter, case: D.Case) -> _Run:
    """select(config) (and the declared transforms) against the decision model, side by side."""
    run = _Run(adapter, case)
    c = case.config
    if c.platform not in ("host", "gfx950", "gfx942", "sm90"):
        raise _skip(f"platform {c.platform} is not one of the model's")
    if c.scheme not in ("mxfp8", "fp8_block"):
        raise _skip(f"the decision model has no {c.scheme} linear kernels")
    mine = _user("select", adapter.select, c)
    if mine is not None:
        run.kernels.append(str(mine))
    names = {**VLLM_NAMES, **(adapter.decision_names or {})}
    ours = None if mine is None else names.get(str(mine), str(mine))
    model = model_plan(c)
    rows = [("linear kernel", f"{mine} ({ours})" if mine is not None and ours != mine else
             str(mine), model[0] if model else "None")]
    differ = ours != (model[0] if model else None)
    if mine is not None and model is not None and not differ:
        declared = _user("transforms", adapter.transforms, c)
        if declared is not None:
            rows.append(("load", str(list(declared)), str(list(model[1]))))
            differ = tuple(declared) != model[1]
    if differ:
        table = "\n".join(f"    {what:<14}{a:<48}{b}" for what, a, b in
                          [("", "yours", "model (docs/dispatch_model.md)")] + rows)
        raise _fail(f"I7: decisions differ for {c.scheme} N={c.n} K={c.k} {c.weight_scale} on "
                    f"{c.platform}{' is_bmm' if c.is_bmm else ''}"
                    f"{' skip_weight_relayout' if c.skip_weight_relayout else ''}:\n{table}")
    return run


PROPERTIES: Dict[str, Callable[[LayerAdapter, D.Case], _Run]] = {
    "layer.end_to_end": end_to_end,
    "layer.load_equivalence": load_equivalence,
    "layer.direct_reads": direct_reads,
    "layer.single_transform": single_transform,
    "layer.negotiation": negotiation,
    "layer.tp_consistency": tp_consistency,
    "layer.decisions": decisions,
}
OPT_IN = ("layer.decisions",)


def run_case(name: str, adapter: LayerAdapter, case: D.Case) -> Outcome:
    try:
        r = PROPERTIES[name](adapter, case)
    except _Stop as s:
        return s.outcome
    except AdapterError:
        raise
    return Outcome("pass", kernels=tuple(r.kernels))
