"""mxgate.shrink: a failing recorded GEMM call made small while it keeps failing (docs/record.md
§5). With the recorded callable importable in this process (the hooked function, a method of
its recorded class built without arguments, torch._scaled_mm), each candidate re-runs it and is
judged as replay judges (check_gemm, the declared accumulator): K first, in whole scale blocks
(a prefix or a window of blocks), then N (whole 128-row blocks of B's scale grid, or within
one), then M, then simpler values (every scale 1, every code 1.0). Without the callable, M and
N are cut to the first failing element's row and column (C's element depends on them alone),
the recorded output kept, K kept. The result: DIR/shrunk.case and its .npy files, which
`mxgate repro DIR/shrunk.case` replays (check-gemm on the files; `expect: fail`).
"""

import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from ._record import resolve
from ._record_bind import OpBinding, ScaledMmBinding, contract_from_fields, result_bits
from ._record_load import load_record
from .errors import InputError
from .replay import _Unsupported, gemm_call, judge

PathLike = Union[str, "os.PathLike[str]"]
_ONE = {"e4m3fn": 0x38, "e5m2": 0x3C}  # the code of 1.0
_CLI = {"scheme": "--scheme", "fmt": "--format", "a_format": "--a-format",
        "b_format": "--b-format", "convention": "--convention", "k": "--k", "mode": "--mode",
        "accumulator": "--accumulator"}
_FILES = {"a": "a.npy", "a_scales": "a_scales.npy", "b": "b.npy", "b_scales": "b_scales.npy",
          "c": "c.npy", "a_global": "a_global.npy", "b_global": "b_global.npy"}


@dataclass
class Shrunk:
    """What mxgate.shrink wrote: the .case file, the shapes before and after, how (rerun: the
    recorded callable re-run on each candidate; else the recorded output cut), the candidates
    tried and the final verdict's first element."""

    case: str
    before: tuple
    after: tuple
    rerun: bool
    tried: int
    first: Optional[Dict[str, Any]]


class _Rec:
    """The record's fields judge / gemm_call read, with operands replaced."""

    def __init__(self, rec, operands, shape):
        self.folder, self.contract, self.family = rec.folder, rec.contract, rec.family
        self.dtypes = rec.dtypes
        self.operands = operands
        self.problems, self.crashed = [], None
        self.manifest = dict(rec.manifest, m=shape[0], n=shape[1], k=shape[2])


def _callable(rec):
    """(fn, binding) re-running the recorded call, or None when it cannot be had here."""
    m = rec.manifest
    try:
        if m.get("binding") == "torch._scaled_mm":
            torch = importlib.import_module("torch")
            return torch._scaled_mm, ScaledMmBinding()
        owner, attr, target = resolve(m["hook"])
        fn = getattr(target, "__wrapped__", target)
        c = contract_from_fields(rec.family, m["op"]["contract"])
        if m.get("self_class"):
            mod, _, qual = m["self_class"].partition(":")
            cls = importlib.import_module(mod)
            for p in qual.split("."):
                cls = getattr(cls, p)
            inst = cls()
            binding = OpBinding(fn, rec.family, m["op"]["name"], c, method=True)
            return (lambda *a, **k: fn(inst, *a, **k)), binding
        return fn, OpBinding(fn, rec.family, m["op"]["name"], c)
    except Exception:
        return None


def rerun(rec, found, cand, shape):
    """The recorded callable (found: _callable's) run on operands `cand` of `shape` (M, N, K)
    in the recorded call's form; its output as numpy (bf16 as bits)."""
    fn, binding = found
    cand = dict(cand, m=shape[0], n=shape[1], k=shape[2])
    recorded = dict(rec.manifest.get("kwargs") or {})
    if binding.kind != "op":
        recorded["device"] = _device(rec)
    args, kwargs = binding.rebuild(cand, dict(rec.dtypes), recorded)
    if binding.kind == "op":
        args = [_as_recorded(rec, role, a) for role, a in zip(binding.roles, args)]
    if binding.kind == "op" and rec.manifest.get("out_arg"):
        kwargs["out"] = np.zeros((shape[0], shape[1]), rec.operands["out"].dtype)
        result = fn(*args, **kwargs)
        return kwargs["out"] if result is None else result_bits(result)
    return result_bits(fn(*args, **kwargs))


def _as_recorded(rec, role, array):
    """`array` (numpy, the role's storage dtype) as the recorded call passed it: a torch tensor
    on the recorded device with the recorded torch dtype (a callable written for torch CUDA
    tensors gets torch CUDA tensors), else numpy."""
    m = rec.manifest
    name = (m.get("roles", {}).get(role) or {}).get("tensor")
    d = m.get("tensors", {}).get(name) or {}
    fd = d.get("framework_dtype", "")
    if not fd.startswith("torch."):
        return array
    torch = importlib.import_module("torch")
    a = np.ascontiguousarray(array)
    if a.dtype == np.uint16:  # bf16 / fp16 bits: torch's uint16 has few kernels
        a = a.view(np.int16)
    t = torch.from_numpy(a).to(d.get("device", "cpu"))
    return t.view(getattr(torch, fd.split(".", 1)[1]))


def _cut(ops, m0, m1, n0, n1, k_blocks, block_k, nblock):
    """Operands cut to rows m0:m1 of A, n0:n1 of B and the K blocks k_blocks (b0, b1)."""
    b0, b1 = k_blocks
    out = dict(ops)
    out["a"] = ops["a"][m0:m1, b0 * block_k:b1 * block_k]
    out["b"] = ops["b"][n0:n1, b0 * block_k:b1 * block_k]
    if "a_scale" in ops:
        sa = ops["a_scale"]
        out["a_scale"] = sa[m0:m1, b0:b1] if sa.shape[0] > 1 else sa
    if "b_scale" in ops:
        sb = ops["b_scale"]
        r0, r1 = n0 // nblock, -(-n1 // nblock)
        out["b_scale"] = sb[r0:r1, b0:b1] if sb.shape[0] > 1 else sb
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def shrink(record: PathLike, out: Optional[PathLike] = None,
           max_candidates: int = 400) -> Shrunk:
    """Shrinks the failing recorded call in folder `record`; writes `out` (default
    RECORD/shrunk)/shrunk.case with its .npy files. InputError when the record does not fail
    (or is not a GEMM replay judges), a BadDump (an InputError) for a bad record."""
    rec = load_record(os.fspath(record))
    if rec.problems:
        raise InputError("; ".join(rec.problems))
    v = judge(rec)
    if v["verdict"] != "fail":
        raise InputError(f"{record}: the recorded call does not fail ({v['verdict']}"
                         + (f": {v.get('reason')}" if v.get("reason") else "") + "): nothing to "
                         "shrink")
    fam, c = rec.family, rec.contract
    m, n, k = rec.manifest["m"], rec.manifest["n"], rec.manifest["k"]
    if fam != "gemm_block" and fam != "gemm_mx":
        raise InputError(f"{record}: shrink takes gemm_block and gemm_mx calls, not {fam}")
    block_k = c.a_block[1] if fam == "gemm_block" else 32
    nblock = c.b_block[0] if fam == "gemm_block" else 1
    ops = {r: rec.operands[r] for r in ("a", "a_scale", "b", "b_scale")}
    found = _callable(rec)
    tried = [0]
    state = dict(ops=ops, shape=(m, n, k), c=rec.operands["out"])

    def run(cand, shape):
        return rerun(rec, found, cand, shape)

    def fails(cand, shape):
        if tried[0] >= max_candidates or not admitted(c, shape):
            return False  # a shape outside the op's contract reproduces nothing the op owns
        tried[0] += 1
        try:
            got = run(cand, shape)
            r = judge(_Rec(rec, dict(cand, out=got), shape))
        except Exception:  # the callable refusing a shape is no reproduction
            return False
        if r["verdict"] == "fail":
            state.update(ops=cand, shape=shape, c=got, first=r["first"])
            return True
        return False

    if found is None:
        f = v["first"]
        r, j = f["row"], f["col"]
        cut = _cut(ops, r, r + 1, j, j + 1, (0, -(-k // block_k)), block_k, nblock)
        cut["a"], cut["b"] = ops["a"][r:r + 1], ops["b"][j:j + 1]
        state.update(ops=cut, shape=(1, 1, k), c=np.ascontiguousarray(
            rec.operands["out"][r:r + 1, j:j + 1]))
    else:
        _reduce(state, fails, c, block_k, nblock)
    return _write(rec, state, out, v, found is not None, tried[0])


def admitted(c, shape) -> bool:
    """Whether the declared contract takes (M, N, K): each a multiple of its clause's align,
    within its min and max (max 0: unbounded). A candidate outside it is never tried, so a
    kernel's out-of-contract behaviour (e.g. a K below its tile, read past the end) is never
    shrunk to."""
    for d, v in zip((c.m, c.n, c.k), shape):
        if v % max(1, d.align) or v < d.min or (d.max and v > d.max):
            return False
    return True


def _reduce(state, fails, c, block_k, nblock):
    """The greedy passes: K blocks, N, M, values; each keeps the first candidate that fails."""
    for _ in range(2):
        m, n, k = state["shape"]
        ops = state["ops"]
        kb = -(-k // block_k)
        done = False
        for width in range(1, kb):
            for b0 in range(0, kb - width + 1):
                cand = _cut(ops, 0, m, 0, n, (b0, b0 + width), block_k, nblock)
                if fails(cand, (m, n, min(width * block_k, k - b0 * block_k))):
                    done = True
                    break
            if done:
                break
        m, n, k = state["shape"]
        ops = state["ops"]
        sizes = sorted({s for s in _sizes(c.n.align, n) if s < n} |
                       {s for s in range(nblock, n, nblock)})
        for s in sizes:
            starts = range(0, n - s + 1, nblock if s >= nblock else max(1, c.n.align))
            if any(fails(_cut(ops, 0, m, j, j + s, (0, -(-k // block_k)), block_k, nblock),
                         (m, s, k)) for j in list(starts)[:8]):
                break
        m, n, k = state["shape"]
        ops = state["ops"]
        for s in [s for s in _sizes(c.m.align, m) if s < m]:
            if any(fails(_cut(ops, i, i + s, 0, n, (0, -(-k // block_k)), block_k, nblock),
                         (s, n, k)) for i in range(0, m - s + 1, s)[:8]):
                break
    ops = state["ops"]
    for role in ("a_scale", "b_scale"):
        ops = state["ops"]
        if role in ops and ops[role].dtype == np.float32:
            fails(dict(ops, **{role: np.ones_like(ops[role])}), state["shape"])
    for role in ("a", "b"):
        ops = state["ops"]
        fails(dict(ops, **{role: np.full_like(ops[role], 0x38)}), state["shape"])


def _sizes(align, limit):
    s, out = max(1, align), []
    while s < limit:
        out.append(s)
        s *= 2
    return out


def _device(rec):
    for d in rec.manifest.get("tensors", {}).values():
        return d.get("device", "cpu")
    return "cpu"


def _write(rec, state, out, v, rerun, tried):
    out = os.fspath(out) if out is not None else os.path.join(rec.folder, "shrunk")
    os.makedirs(out, exist_ok=True)
    shape = state["shape"]
    kw, mode, acc = gemm_call(_Rec(rec, dict(state["ops"], out=state["c"]), shape))
    arrays = {name: kw.pop(name) for name in list(kw) if name in _FILES}
    args = []
    for name, value in kw.items():
        if value is not None and name in _CLI:
            args += [_CLI[name], str(value)]
    for name, value in arrays.items():
        if value is None:
            continue
        np.save(os.path.join(out, _FILES[name]), np.ascontiguousarray(value))
        args += ["--" + name.replace("_", "-"), _FILES[name]]
    m0 = rec.manifest
    first = state.get("first") or v.get("first")
    lines = [
        f"# shrunk from {rec.folder}: {m0['hook']} ({m0['op']['name']}), M={m0['m']} N={m0['n']} "
        f"K={m0['k']} -> M={shape[0]} N={shape[1]} K={shape[2]}",
        "# " + ("the recorded callable re-run on each candidate" if rerun else
                "the recorded callable was not importable: M and N cut to the failing element, "
                "the recorded output kept"),
        f"# called at {m0.get('site')}",
        "check-gemm: " + " ".join(args),
        "expect: fail",
    ]
    case = os.path.join(out, "shrunk.case")
    with open(case, "w") as f:
        f.write("\n".join(lines) + "\n")
    return Shrunk(case, (m0["m"], m0["n"], m0["k"]), shape, rerun, tried, first)


def main_shrink(argv) -> int:
    """`mxgate shrink RECORD [--out DIR] [--max-calls N]` (the CLI verb)."""
    from .replay import _parse

    args, opts = _parse(argv, ("out", "max-calls"), "shrink RECORD")
    try:
        s = shrink(args[0], opts.get("out"), int(opts.get("max-calls", 400)))
    except InputError as e:
        if "does not fail" in str(e):
            print(f"mxgate shrink: {e}")
            return 1
        raise
    f = s.first
    print(f"shrunk M={s.before[0]} N={s.before[1]} K={s.before[2]} -> M={s.after[0]} "
          f"N={s.after[1]} K={s.after[2]} ({'re-running the callable' if s.rerun else 'cut'}, "
          f"{s.tried} candidates)" + (f"; first ({f['row']},{f['col']})" if f else ""))
    print(f"case: {s.case}\nreproduce: mxgate repro {s.case}")
    return 0
