"""The flight recorder's declarations (docs/record.md §2): how one call of a hooked callable
becomes an mxgate op call. A binding names each argument tensor, says which mxgate role (a,
a_scale, b, b_scale, out) each one plays and how (transposed, a cut of a padded grid), and
carries the op's contract (family, conventions, accumulator, blocks, layouts) from the same
declarations the adapters use: an @mxgate.op function's own, an mxgate.Op / Contract given for
a plain callable, or the known torch._scaled_mm forms (torch is never imported here: the
binding reads tensors it is handed). It also rebuilds a call from smaller operands, which
shrink runs.
"""

import dataclasses
import inspect
from typing import Any, Dict, Optional

import numpy as np

from .adapter import _INPUTS, _OUTPUTS, Call, Contract, Dim, Op, Tensor, contract
from .errors import AdapterError, Unsupported
from ._record_tensors import _BY_NAME, framework_dtype, is_tensor, is_torch


def contract_fields(c: Contract) -> Dict[str, Any]:
    d = dataclasses.asdict(c)
    for f in ("m", "n", "k"):
        d[f] = dataclasses.asdict(getattr(c, f))
    return d


def contract_from_fields(family, d):
    d = dict(d)
    from .adapter import Dim

    for f in ("m", "n", "k"):
        if isinstance(d.get(f), dict):
            d[f] = Dim(**d[f])
    for f, v in list(d.items()):
        if isinstance(v, list):
            d[f] = tuple(v)
    return contract(family, **d)


def declaration_of(target, given=None):
    """(family, op name, Contract) for `target` from `given` (an mxgate.Op, a (family, Contract)
    pair, a dict family=..., **contract fields) or from the target's own @mxgate.op mark."""
    if isinstance(given, Op):
        return given.family, given.name, given.contract
    if isinstance(given, tuple) and len(given) == 2 and isinstance(given[1], Contract):
        return given[0], given[0], given[1]
    if isinstance(given, dict):
        fields = dict(given)
        family = fields.pop("family", None)
        name = fields.pop("name", None) or family
        if family is None:
            raise AdapterError("a hook's declaration dict needs family=")
        return family, name, contract(family, **fields)
    if given is not None:
        raise AdapterError(f"a hook's declaration is an mxgate.Op, (family, Contract) or a dict, "
                           f"not {type(given).__name__}")
    mark = getattr(target, "_mxgate_op", None)
    if mark is None:
        raise AdapterError(f"{getattr(target, '__qualname__', target)!r} carries no @mxgate.op "
                           f"declaration: give one (hooks={{PATH: mxgate.Op(...) or "
                           f"dict(family=..., accumulator=...)}})")
    family, name, fields = mark
    fields = dict(fields)
    fields.pop("memory", None)
    return family, name or getattr(target, "__name__", family), contract(family, **fields)


@dataclasses.dataclass
class Bound:
    """One call, bound: the tensors to record before the call (name -> (value, dtype)), the
    mxgate roles (role -> {"tensor": name, ...transform}), the shape, the op, the output's
    dtype if known, the out= argument's name, simple keyword values, and notes."""

    family: str
    op: str
    contract: Contract
    m: int
    n: int
    k: int
    tensors: Dict[str, Any]
    dtypes: Dict[str, Optional[str]]
    roles: Dict[str, Dict[str, Any]]
    out_arg: Optional[str] = None
    out_dtype: Optional[str] = None
    kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list = dataclasses.field(default_factory=list)
    unsupported: Optional[str] = None  # what replay cannot judge, said when recording


def _simple(v):
    return v is None or isinstance(v, (bool, int, float, str))


class OpBinding:
    """A callable in the adapter form: the family's inputs as its positional parameters (after
    `self` for a method), optional keywords call / out_dtype / out (docs/python.md §9)."""

    kind = "op"

    def __init__(self, target, family, name, c, method=False):
        self.family, self.name, self.contract = family, name, c
        self.method = method
        self.roles = _INPUTS[family]
        try:
            params = list(inspect.signature(target).parameters.values())
        except (TypeError, ValueError):
            params = []
        if method and params:
            params = params[1:]
        named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                       p.KEYWORD_ONLY)]
        # A callable taking *args (a torch custom op): its positional arguments are the roles.
        self.names = named if len(named) >= len(self.roles) else list(self.roles)

    def _dtype(self, role, value, call, which):
        own = framework_dtype(value) if is_tensor(value) else None
        if own not in (None, "u8", "u16"):
            return own, None
        if call is not None and call.tensor(role) is not None:
            return call.tensor(role).dtype, None
        if role == "out" and own == "u16":
            return "bf16", None
        if role in ("a_scale", "b_scale"):
            if self.contract.scale_dtype != "none":
                return self.contract.scale_dtype if own == "u8" else "f32", None
        if role in ("a_global", "b_global"):
            return "f32", None
        declared = getattr(self.contract, which, ()) or ()
        if own == "u8" and declared:
            note = None if len(declared) == 1 else (
                f"{role}: uint8 codes with no `call`: the declaration's first dtype "
                f"{declared[0]} of {', '.join(declared)} taken")
            return declared[0], note
        return own, None

    def bind(self, args, kwargs):
        names = self.names
        values = dict(zip(names, args[1:] if self.method else args))
        values.update(kwargs)
        call = values.get("call") if isinstance(values.get("call"), Call) else None
        b = Bound(self.family, self.name, self.contract, 0, 0, 0, {}, {}, {})
        for i, role in enumerate(self.roles):
            if i >= len(names) or names[i] not in values:
                raise AdapterError(f"{self.name}: the call has no argument for {role}")
            v = values[names[i]]
            if not is_tensor(v):
                v = np.asarray(v)
            which = {"a": "a_dtypes", "b": "b_dtypes"}.get(role, "")
            dt, note = self._dtype(role, v, call, which)
            b.tensors[names[i]] = v
            b.dtypes[names[i]] = dt
            b.roles[role] = {"tensor": names[i]}
            if note:
                b.notes.append(note)
        out = values.get("out")
        if out is not None and is_tensor(out) and "out" in names:
            b.out_arg = "out"
            b.tensors["out"] = out
            b.dtypes["out"] = self._dtype("out", out, call, "out_dtypes")[0]
        b.out_dtype = values.get("out_dtype") if isinstance(values.get("out_dtype"), str) else (
            call.tensor("out").dtype if call is not None and call.tensor("out") else None)
        a = b.tensors[b.roles["a"]["tensor"]]
        if self.family.startswith("gemm"):
            bt = b.tensors[b.roles["b"]["tensor"]]
            b.m, b.n = int(a.shape[0]), int(bt.shape[0])
            b.k = call.k if call is not None else int(a.shape[1]) * (
                2 if b.dtypes[b.roles["a"]["tensor"]] == "e2m1" else 1)
        elif len(a.shape) == 2:
            b.m, b.k = int(a.shape[0]), int(a.shape[1])
            b.n = b.m
        else:
            b.m, b.n, b.k = 1, 1, int(np.prod(a.shape))
        b.kwargs = {k: v for k, v in values.items()
                    if k not in names[:len(self.roles)] and k not in ("out", "call") and _simple(v)}
        if call is not None:
            b.kwargs["call"] = "mxgate.adapter.Call"
        return b

    def outputs(self, result):
        """The judged outputs of a result: {role: value}."""
        roles = _OUTPUTS.get(self.family, ("out",))
        if len(roles) == 1:
            return {"out": result}
        return dict(zip(roles, result))

    def rebuild(self, operands, dtypes, recorded_kwargs):
        """(args, kwargs) calling the target on new operands (numpy, role -> array), the keyword
        arguments as recorded (a `call` rebuilt for the new shape)."""
        args = [np.ascontiguousarray(operands[r]) for r in self.roles]
        kwargs = {k: v for k, v in recorded_kwargs.items() if k != "call"}
        if "call" in recorded_kwargs:
            tensors = []
            for r in self.roles + ("out",):
                v = operands.get(r)
                if v is None:
                    continue
                rows, cols = (v.shape + (1,))[:2] if v.ndim else (1, 1)
                if r in ("a", "b") and dtypes.get(r) == "e2m1":
                    cols = operands["k"]
                tensors.append(Tensor(r, dtypes[r], rows, cols, 0, "row_major", v.nbytes))
            kwargs["call"] = Call(self.family, operands["m"], operands["n"], operands["k"],
                                  tuple(tensors))
        return args, kwargs


# torch._scaled_mm(mat1, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
# use_fast_accum=False, *, out=...): the modes are those of ScaledMmAdapter
# (mxgate/adapters/torch.py), told apart by the scales' dtypes and shapes as torch does.
SCALED_MM_PARAMS = ("mat1", "mat2", "scale_a", "scale_b", "bias", "scale_result", "out_dtype",
                    "use_fast_accum")
SCALED_MM_ACCUMULATOR = "sm90_fp8_mma"  # ScaledMmAdapter's, measured on the H200 (cuBLASLt)


class ScaledMmBinding:
    kind = "torch._scaled_mm"

    def __init__(self, name="torch._scaled_mm"):
        self.name = name
        self.family = "gemm_block"

    def bind(self, args, kwargs):
        values = dict(zip(SCALED_MM_PARAMS, args))
        values.update(kwargs)
        for p in ("mat1", "mat2", "scale_a", "scale_b"):
            if p not in values:
                raise AdapterError(f"torch._scaled_mm call without {p}")
        m1, m2, sa, sb = (values[p] for p in ("mat1", "mat2", "scale_a", "scale_b"))
        m, k = int(m1.shape[0]), int(m1.shape[1])
        n = int(m2.shape[1])
        da, db, ds = framework_dtype(m1), framework_dtype(m2), framework_dtype(sa)
        packed = da == "e2m1"
        if packed:
            k *= 2
        kb = -(-k // 128)
        nb = -(-n // 128)
        sa_shape, sb_shape = tuple(sa.shape), tuple(sb.shape)
        notes, unsupported = [], None
        roles = {"a": {"tensor": "mat1"}, "b": {"tensor": "mat2", "transpose": True}}
        if ds == "f32" and _numel(sa) == 1 and _numel(sb) == 1:
            mode, fields = "tensor", dict(a_block=(0, 0), b_block=(0, 0))
            roles["a_scale"] = {"tensor": "scale_a", "reshape": [1, 1]}
            roles["b_scale"] = {"tensor": "scale_b", "reshape": [1, 1]}
        elif ds == "f32" and sa_shape == (m, 1) and sb_shape == (1, n):
            mode, fields = "rowwise", dict(a_block=(1, 0), b_block=(1, 0))
            roles["a_scale"] = {"tensor": "scale_a"}
            roles["b_scale"] = {"tensor": "scale_b", "transpose": True}
        elif ds == "f32" and sa_shape == (m, kb) and len(sb_shape) == 2 and sb_shape[1] == nb:
            mode, fields = "block", dict(a_block=(1, 128), b_block=(128, 128))
            roles["a_scale"] = {"tensor": "scale_a"}
            roles["b_scale"] = {"tensor": "scale_b", "transpose": True, "cols": kb}
            fields["notes"] = f"scale_b {list(sb_shape)} strides {list(_strides(sb))}"
        else:
            mode = "mx" if ds == "e8m0" else "nvfp4" if ds == "e4m3fn" else "unknown"
            fields = {}
            unsupported = (f"torch._scaled_mm with {ds} scales {sa_shape} x {sb_shape} ({mode} "
                           f"scaling): recorded, replay does not judge this form yet")
            roles["a_scale"] = {"tensor": "scale_a"}
            roles["b_scale"] = {"tensor": "scale_b"}
        if values.get("bias") is not None:
            unsupported = unsupported or "torch._scaled_mm with bias: the epilogue is not modelled"
        if values.get("scale_result") is not None:
            unsupported = unsupported or "torch._scaled_mm with scale_result: not modelled"
        fast = bool(values.get("use_fast_accum", False))
        if fast:
            unsupported = unsupported or ("use_fast_accum=True: no accumulator model declared "
                                          "for cuBLASLt's fast FP8 accumulation")
        od = values.get("out_dtype")
        out_dtype = _BY_NAME.get(str(od).rsplit(".", 1)[-1]) if od is not None else None
        out_dtype = out_dtype if out_dtype in ("f32", "bf16") else None
        if od is None:
            out_dtype = da  # torch's default: mat1's dtype
            unsupported = unsupported or f"out_dtype {da}: an fp8 output is not judged yet"
        elif out_dtype is None:
            unsupported = unsupported or f"out_dtype {od}: not judged yet"
        # ScaledMmAdapter's clauses: K, N multiples of 16; M of 4 for the block form.
        fields.update(k=Dim(align=16), n=Dim(align=16))
        if mode == "block":
            fields["m"] = Dim(align=4)
        c = contract("gemm_block", a_dtypes=(da,) if da in ("e4m3fn", "e5m2") else ("e4m3fn",),
                     b_dtypes=(db,) if db in ("e4m3fn", "e5m2") else ("e4m3fn",),
                     accumulator=SCALED_MM_ACCUMULATOR, **fields) if mode in (
            "tensor", "rowwise", "block") else contract("gemm_block")
        b = Bound("gemm_block", f"scaled_mm_{mode}", c, m, n, k,
                  {p: values[p] for p in ("mat1", "mat2", "scale_a", "scale_b")},
                  {"mat1": da, "mat2": db, "scale_a": ds, "scale_b": framework_dtype(sb)},
                  roles, notes=notes, unsupported=unsupported, out_dtype=out_dtype)
        if values.get("out") is not None:
            b.out_arg = "out"
            b.tensors["out"] = values["out"]
            b.dtypes["out"] = framework_dtype(values["out"])
        b.kwargs = {"out_dtype": str(od) if od is not None else None, "use_fast_accum": fast,
                    "mode": mode}
        if mode == "block":
            st = _strides(sb)
            b.kwargs["scale_b_form"] = ("padded" if st[1] == -(-kb // 4) * 4 != kb else
                                        "unpadded")
            b.kwargs["scale_b_rows"] = int(sb_shape[0])
        return b

    def outputs(self, result):
        return {"out": result}

    def rebuild(self, operands, dtypes, recorded_kwargs):
        """The torch tensors of a call on new operands, in the recorded forms (the scale grids'
        layout and padding rule kept: a bug that lives there survives the shrink)."""
        import torch

        dev = recorded_kwargs.get("device", "cuda")
        types = {"e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}

        def t(a):
            return torch.from_numpy(np.ascontiguousarray(a)).to(dev)

        mat1 = t(operands["a"]).view(types[dtypes["a"]])
        mat2 = t(operands["b"]).view(types[dtypes["b"]]).t()
        mode = recorded_kwargs.get("mode")
        sa, sb = operands["a_scale"], operands["b_scale"]
        if mode == "tensor":
            scale_a, scale_b = t(sa.reshape(())), t(sb.reshape(()))
        elif mode == "rowwise":
            scale_a, scale_b = t(sa.reshape(-1, 1)), t(sb.reshape(1, -1))
        elif mode == "block":
            scale_a = t(np.ascontiguousarray(sa.T)).t()
            nb, kb = sb.shape
            if recorded_kwargs.get("scale_b_form") == "padded":
                l4 = -(-kb // 4) * 4
                padded = np.zeros((nb, l4), np.float32)
                padded[:, :kb] = sb
                scale_b = t(padded).t()
                if recorded_kwargs.get("scale_b_rows") == kb:
                    scale_b = scale_b[:kb]
            else:
                scale_b = t(np.ascontiguousarray(sb)).t()
        else:
            raise Unsupported(f"torch._scaled_mm {mode} scaling is not rebuilt")
        od = recorded_kwargs.get("out_dtype")
        out_dtype = torch.bfloat16 if od == "torch.bfloat16" else torch.float32
        return [mat1, mat2], dict(scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype,
                                  use_fast_accum=bool(recorded_kwargs.get("use_fast_accum")))


def _numel(x):
    return int(np.prod(tuple(x.shape)))


def _strides(x):
    """Strides in elements of a torch tensor or numpy array."""
    return tuple(x.stride()) if is_torch(x) else tuple(s // x.itemsize for s in x.strides)


def result_bits(value, dtype=None):
    """A call's output as numpy: bf16 as uint16 bits, float32 as itself (torch on any device)."""
    if is_torch(value):
        import torch

        v = value.detach()
        if v.dtype == torch.bfloat16:
            return v.contiguous().view(torch.int16).cpu().numpy().view(np.uint16)
        return v.contiguous().cpu().numpy()
    return np.asarray(value)
