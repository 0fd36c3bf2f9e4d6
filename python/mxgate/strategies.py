"""Hypothesis strategies over mxgate's formats, quantized tensors, production shapes and property
cases, so that a user's own `@given` test draws from mxgate's generators and hypothesis shrinks
its failures (docs/python.md §17). Needs hypothesis (Debian: python3-hypothesis, 6.67 tested).

    codes(fmt)                   every code of a format, edge codes first
    scale_codes(kind)            E8M0 or UE4M3 scale codes, the unit scale first
    mx_tensors(shape, fmt)       (codes, e8m0 scale bytes) of an MX tensor; e2m1 packed
    block_tensors(shape, fmt)    (codes, float32 scales) of a 1x128 / 128x128 block tensor
    nvfp4_tensors(shape)         (packed e2m1, UE4M3 scale codes, float32 global scale)
    production_shapes(model, tp) (m, n, k) of the production shape catalog (mxgate.shapes)
    group_sizes(E) / group_offsets(E)  rows per expert / their offsets, the grouped edges first
    cases(property, impl)        one case of a property, inside an op's contract, as the text
                                 mxgate.check(property, impl, case=...) replays

Formats, their codes and values come from the library (mxgate.formats, mxgate.decode), never
from a table here. Tensors are drawn as codes and scale codes, so shrinking moves every element
toward the code of +0 and every scale toward the unit scale.
"""

import functools
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # hypothesis is optional: only this module needs it
    raise ImportError(
        "mxgate.strategies needs hypothesis (Debian: apt install python3-hypothesis; or pip "
        f"install hypothesis): {e}") from e

import numpy as np

from .adapter import FAMILIES, LAYOUTS, Adapter, Contract, Dim, Op
from .catalog import shapes as _catalog_shapes
from .errors import InputError
from .reference import conventions, decode, formats
from . import spec as _spec

Shape2 = Tuple[int, int]
ShapeArg = Union[Shape2, "st.SearchStrategy[Shape2]"]

# Block sizes of the schemes: MX blocks of 32 along K (docs/formats.md §3), NVFP4 blocks of 16
# (docs/fp4.md §6), DeepSeek activation groups of 1 x 128 and weight blocks of 128 x 128
# (docs/formats.md §5). test_strategies.py holds them to the scale shapes mxgate.quantize returns.
MX_BLOCK = 32
NVFP4_BLOCK = 16
DEEPSEEK_BLOCK = 128


# ---- codes ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _table(fmt: str, convention: Optional[str]) -> Tuple[np.ndarray, np.ndarray]:
    """(codes, values) of every code of fmt, decoded by the library. The code width is the
    largest for which decode takes every code (it refuses a code that does not fit: "code 0x10
    does not fit a 4-bit format"); the convention is the given one, else the first that defines
    the format (only e8m0's values depend on it)."""
    if fmt not in formats():
        raise InputError(f"unknown format '{fmt}' (formats: {', '.join(formats())})")
    tried = []
    for conv in ([convention] if convention else conventions()):
        for width in (16, 8, 7, 6, 5, 4, 3, 2):
            codes = np.arange(2**width, dtype=np.uint16 if width > 8 else np.uint8)
            try:
                return codes.astype(np.int64), decode(codes, fmt, conv).astype(np.float64)
            except InputError as e:
                tried.append(str(e))
    raise InputError(f"no convention decodes format '{fmt}': {tried[-1]}")


def _finite(v: np.ndarray) -> np.ndarray:
    return np.isfinite(v)


def edge_codes(fmt: str, convention: Optional[str] = None) -> Tuple[int, ...]:
    """The codes at the edges of fmt, from its decoded values: +0 and -0, the smallest positive
    value (the min subnormal where the format has subnormals) and its negative, one, the largest
    finite value and its negative, +Inf and -Inf, the first NaN of each sign. Those the format
    lacks are absent (e8m0 has no zero, e2m1 no NaN)."""
    codes, v = _table(fmt, convention)
    out: List[int] = []

    def add(mask: np.ndarray) -> None:
        hits = codes[mask]
        if hits.size and int(hits[0]) not in out:
            out.append(int(hits[0]))

    sign = np.signbit(v)
    add((v == 0) & ~sign)
    add((v == 0) & sign)
    finite_pos = _finite(v) & (v > 0)
    if finite_pos.any():
        tiny, huge = v[finite_pos].min(), v[finite_pos].max()
        add(v == tiny)
        add(v == -tiny)
        add(v == 1.0)
        add(v == huge)
        add(v == -huge)
    add(np.isposinf(v))
    add(np.isneginf(v))
    add(np.isnan(v) & ~sign)
    add(np.isnan(v) & sign)
    return tuple(out)


def format_codes(fmt: str, convention: Optional[str] = None, nan: bool = True,
                 inf: bool = True) -> Tuple[int, ...]:
    """Every code of fmt, edge codes (edge_codes) first, then the rest in code order; without
    the NaN codes unless nan, without the infinities unless inf."""
    codes, v = _table(fmt, convention)
    drop = set()
    if not nan:
        drop |= set(int(c) for c in codes[np.isnan(v)])
    if not inf:
        drop |= set(int(c) for c in codes[np.isinf(v)])
    edges = [c for c in edge_codes(fmt, convention) if c not in drop]
    rest = [int(c) for c in codes if int(c) not in drop and int(c) not in edges]
    return tuple(edges + rest)


def codes(fmt: str, *, convention: Optional[str] = None, nan: bool = True,
          inf: bool = True) -> "st.SearchStrategy[int]":
    """Every code of fmt (mxgate.formats()), edge codes first, so a failure shrinks toward +0
    and the edges are drawn early. nan / inf: include the NaN / infinite codes."""
    return st.sampled_from(format_codes(fmt, convention, nan, inf))


@functools.lru_cache(maxsize=None)
def _scale_table(kind: str, nan: bool) -> Tuple[int, ...]:
    if kind == "e8m0":
        c, v = _table("e8m0", "ocp_mx")
    elif kind == "ue4m3":  # NVFP4 block scales: E4M3 codes of sign 0 (docs/fp4.md)
        c, v = _table("e4m3fn", None)
        keep = ~np.signbit(v)
        c, v = c[keep], v[keep]
    else:
        raise InputError(f"scale kind '{kind}' is not e8m0 or ue4m3")
    if not nan:
        c, v = c[~np.isnan(v)], v[~np.isnan(v)]
    first = [int(x) for x in c[v == 1.0]]
    edges = first + [x for x in (edge_codes("e8m0", "ocp_mx") if kind == "e8m0"
                                 else edge_codes("e4m3fn")) if x in set(int(y) for y in c)]
    edges = list(dict.fromkeys(edges))
    return tuple(edges + [int(x) for x in c if int(x) not in edges])


def scale_codes(kind: str = "e8m0", *, nan: bool = False) -> "st.SearchStrategy[int]":
    """Scale codes: "e8m0" (MX scale bytes, 2^(e-127), 0xFF NaN) or "ue4m3" (NVFP4 block
    scales: the E4M3 codes of sign 0). The unit scale first, then the edges (the smallest, the
    largest, 0 for UE4M3), then every other code: a failure shrinks toward scale 1. nan: include
    the NaN code."""
    return st.sampled_from(_scale_table(kind, nan))


# ---- quantized tensors ---------------------------------------------------------------------

def _with_shape(shape: ShapeArg, build: Callable[[int, int], "st.SearchStrategy[Any]"]):
    if isinstance(shape, st.SearchStrategy):
        return shape.flatmap(lambda s: build(*s))
    m, k = shape
    if m < 1 or k < 1:
        raise InputError(f"shape {shape} is not (M >= 1, K >= 1)")
    return build(m, k)


def pack_e2m1(codes: np.ndarray) -> np.ndarray:
    """E2M1 codes (rows, K), one per byte, packed two per byte as the library reads them:
    element 2i in the low nibble (docs/fp4.md §5); (rows, ceil(K/2)) uint8."""
    c = np.asarray(codes, dtype=np.uint8)
    if c.shape[1] % 2:
        c = np.concatenate([c, np.zeros((c.shape[0], 1), np.uint8)], axis=1)
    return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)


def _code_array(m: int, k: int, fmt: str, nan: bool, inf: bool):
    dtype = np.uint16 if _table(fmt, None)[0].size > 256 else np.uint8
    return hnp.arrays(dtype, (m, k), elements=codes(fmt, nan=nan, inf=inf))


def mx_tensors(shape: ShapeArg, fmt: str = "e4m3fn", *, nan: bool = False, inf: bool = False,
               scale_nan: bool = False) -> "st.SearchStrategy[Tuple[np.ndarray, np.ndarray]]":
    """An MX tensor of shape (M, K) (or a strategy of shapes): (codes uint8 (M, K), e2m1 packed
    (M, ceil(K/2)); e8m0 scale bytes (M, ceil(K/32))), what mxgate.gemm / dequantize take with
    scheme "mx" and this format. nan / inf: element NaN / Inf codes; scale_nan: the 0xFF scale."""

    def build(m: int, k: int):
        blocks = -(-k // MX_BLOCK)
        data = _code_array(m, k, fmt, nan, inf)
        if fmt == "e2m1":
            data = data.map(pack_e2m1)
        scales = hnp.arrays(np.uint8, (m, blocks), elements=scale_codes("e8m0", nan=scale_nan))
        return st.tuples(data, scales)

    return _with_shape(shape, build)


def _fp32_scales(shape: Tuple[int, int], ue8m0: bool):
    """Positive normal float32 scales 2^e (1 + f / 2^23), e in [-20, 20]: they shrink toward 1.
    ue8m0: powers of two only."""
    # e = 0, 1, -1, 2, -2, ...: the draw shrinks toward exponent 0
    exponent = st.integers(0, 40).map(lambda i: (i + 1) // 2 * (1 if i % 2 else -1))
    fraction = st.just(0) if ue8m0 else st.integers(0, 2**23 - 1)
    scale = st.builds(lambda e, f: float(np.float32(np.ldexp(1.0 + f / 2**23, e))), exponent,
                      fraction)
    return hnp.arrays(np.float32, shape, elements=scale)


def block_tensors(shape: ShapeArg, fmt: str = "e4m3fn", *, scheme: str = "act1x128",
                  ue8m0: bool = False, nan: bool = False,
                  inf: bool = False) -> "st.SearchStrategy[Tuple[np.ndarray, np.ndarray]]":
    """A block-scaled FP8 tensor (DeepSeek): scheme act1x128 (scales (M, ceil(K/128))) or
    w128x128 (scales (ceil(M/128), ceil(K/128))): (codes uint8 (M, K), float32 scales), what
    mxgate.gemm(scheme="block") takes as A / B. ue8m0: power-of-two scales."""
    if scheme not in ("act1x128", "w128x128"):
        raise InputError(f"scheme '{scheme}' is not act1x128 or w128x128")

    def build(m: int, k: int):
        rows = m if scheme == "act1x128" else -(-m // DEEPSEEK_BLOCK)
        grid = (rows, -(-k // DEEPSEEK_BLOCK))
        return st.tuples(_code_array(m, k, fmt, nan, inf), _fp32_scales(grid, ue8m0))

    return _with_shape(shape, build)


def nvfp4_tensors(
        shape: ShapeArg, *, scale_nan: bool = False
) -> "st.SearchStrategy[Tuple[np.ndarray, np.ndarray, np.ndarray]]":
    """An NVFP4 tensor: (packed e2m1 (M, ceil(K/2)), UE4M3 scale codes (M, ceil(K/16)), float32
    global decode scale (1,)), what mxgate.gemm(scheme="nvfp4") takes per operand."""

    def build(m: int, k: int):
        data = _code_array(m, k, "e2m1", False, False).map(pack_e2m1)
        scales = hnp.arrays(np.uint8, (m, -(-k // NVFP4_BLOCK)),
                            elements=scale_codes("ue4m3", nan=scale_nan))
        return st.tuples(data, scales, _fp32_scales((1,), False))

    return _with_shape(shape, build)


# ---- production shapes ---------------------------------------------------------------------

def production_shapes(model: Optional[str] = None, tp: Optional[int] = None, *,
                      quant: Optional[str] = None, flagged: bool = False,
                      m: "Optional[st.SearchStrategy[int]]" = None
                      ) -> "st.SearchStrategy[Tuple[int, int, int]]":
    """(M, N, K) with (N, K) a per-rank shape of the production catalog (mxgate.shapes: model a
    substring of the model name, tp a TP size, quant a prefix of the checkpoint format such as
    "FP8-B128" or "MXFP4", flagged only shapes with an alignment hazard) and M from `m`
    (default 1..16). Distinct (N, K) smallest first, so a failure shrinks toward the smallest
    catalogued layer."""
    rows = _catalog_shapes(model=model, tp=tp, flagged=flagged)
    nk = sorted({(s.n, s.k) for s in rows if quant is None or s.quant.startswith(quant)},
                key=lambda t: (t[0] * t[1], t))
    if not nk:
        raise InputError(f"no catalogued shape for model={model!r} tp={tp!r} quant={quant!r}")
    return st.tuples(m if m is not None else st.integers(1, 16), st.sampled_from(nk)).map(
        lambda t: (t[0], t[1][0], t[1][1]))


# ---- grouped GEMMs (mixture of experts) ----------------------------------------------------

# The row counts where grouped kernels break (docs/grouped.md §8): an expert with no tokens,
# one token, exactly one 128-row tile, a tile plus one.
TILE_ROWS = 128


def group_sizes(experts: Union[int, "st.SearchStrategy[int]"], *, alignment: int = 1,
                max_rows: int = 2 * TILE_ROWS + 1) -> "st.SearchStrategy[np.ndarray]":
    """Rows per expert, int64 (E,), each a multiple of `alignment` (what the kernel's contract
    requires of its offsets) in [0, max_rows]: the edges first (0, one alignment unit, 128,
    129 rounded up to the alignment), then any multiple; a failure shrinks toward empty
    experts."""
    if alignment < 1 or max_rows < 0:
        raise InputError(f"group_sizes: alignment {alignment} must be >= 1 and max_rows "
                         f"{max_rows} >= 0")
    up = lambda r: -(-r // alignment) * alignment
    edges = sorted({up(r) for r in (0, 1, TILE_ROWS, TILE_ROWS + 1) if up(r) <= max_rows})
    size = st.one_of(st.sampled_from(edges),
                     st.integers(0, max_rows // alignment).map(lambda u: u * alignment))
    count = st.just(experts) if isinstance(experts, int) else experts
    return count.flatmap(lambda e: hnp.arrays(np.int64, (e,), elements=size))


def group_offsets(experts: Union[int, "st.SearchStrategy[int]"], *, kind: str = "ends",
                  alignment: int = 1,
                  max_rows: int = 2 * TILE_ROWS + 1) -> "st.SearchStrategy[np.ndarray]":
    """int32 (E,) offsets of drawn group sizes (group_sizes) as check_gemm(offsets=...) and
    torch._grouped_mm's `offs` take them: kind "ends" (cumulative ends: group g is
    [ends[g-1], ends[g])) or "starts" (group g starts at starts[g])."""
    if kind not in ("ends", "starts"):
        raise InputError(f"group_offsets: kind '{kind}' is not ends or starts")
    sizes = group_sizes(experts, alignment=alignment, max_rows=max_rows)
    if kind == "ends":
        return sizes.map(lambda s: np.cumsum(s).astype(np.int32))
    return sizes.map(lambda s: (np.cumsum(s) - s).astype(np.int32))


# ---- property cases ------------------------------------------------------------------------

_GEMM_FAMILIES = ("gemm_mx", "gemm_block", "gemm_bf16")
_FP8 = ("e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz")
# The properties whose cases this module draws, by the families of the ops they take.
CASE_PROPERTIES: Dict[str, Tuple[str, ...]] = {
    "gemm.exact": _GEMM_FAMILIES,
    "gemm.ordered_bound": _GEMM_FAMILIES,
    "upcast_e8m0.bit_exact": ("upcast_e8m0",),
    "dequantize.bit_exact": ("dequantize",),
}


def _dim(d: Dim, cap: int) -> "st.SearchStrategy[int]":
    """Multiples of d.align in [max(d.min, 1), d.max or cap], smallest first."""
    align = max(1, d.align)
    lo = -(-max(d.min, 1) // align)
    hi = (min(d.max, cap) if d.max else max(cap, d.min)) // align
    if hi < lo:
        raise InputError(f"no value of {d} up to {cap}")
    return st.integers(lo, hi).map(lambda j: j * align)


def _ops_of(impl: Any, op: Optional[str]) -> Tuple[Op, ...]:
    if isinstance(impl, str) and impl in FAMILIES:
        return (Op(impl, lambda *a: None, name=op or impl),)
    if isinstance(impl, str):
        impl = _spec.load(impl, check_available=False)
    if isinstance(impl, type) and issubclass(impl, Adapter):
        impl = impl()
    if isinstance(impl, Adapter):
        return (impl.find(op),) if op else impl.ops
    if isinstance(impl, Op):
        return (impl,)
    raise InputError(f"impl must be a family name, a spec, an mxgate.Adapter or an mxgate.Op, "
                     f"not {type(impl).__name__}")


def _gemm_case(o: Op, cap: int):
    c: Contract = o.contract
    layouts = [l for l in LAYOUTS if l in c.a_scale_layouts and l != "aiter_shuffle_16x16"]
    if o.family == "gemm_bf16" or not layouts:
        layouts = ["row_major"]
    outs = [name for d, name in (("f32", "fp32"), ("bf16", "bf16")) if d in c.out_dtypes]
    parts = [st.just(f"op={o.name}"), _dim(c.m, cap).map("m={}".format),
             _dim(c.n, cap).map("n={}".format), _dim(c.k, cap).map("k={}".format),
             st.sampled_from(layouts).map("layout={}".format),
             st.sampled_from(outs).map("out={}".format),
             st.integers(0, 2**20 - 1).map("seed={}".format)]
    if o.family != "gemm_bf16":
        for role, dtypes in (("a", c.a_dtypes), ("b", c.b_dtypes)):
            fp8 = [d for d in ("e4m3fn", "e5m2") if d in dtypes]
            if fp8 and fp8 != ["e4m3fn"]:  # named only where the op takes more than E4M3FN
                parts.append(st.sampled_from(fp8).map(f"{role}_dtype={{}}".format))
    return parts


def _upcast_case(o: Op, cap: int):
    return [st.just(f"op={o.name}"), _dim(o.contract.k, min(cap, 299)).map("count={}".format),
            st.sampled_from(["extreme", "normal"]).map("scales={}".format),
            st.integers(0, 2**20 - 1).map("seed={}".format)]


def _dequantize_case(o: Op, cap: int):
    c = o.contract
    parts = [st.just(f"op={o.name}")]
    fp8 = [d for d in _FP8 if d in c.a_dtypes]
    if len(fp8) > 1:
        parts.append(st.sampled_from(fp8).map("format={}".format))
    if "f32" in c.out_dtypes and "bf16" in c.out_dtypes:
        parts.append(st.sampled_from(["bf16", "fp32"]).map("out={}".format))
    parts += [_dim(c.m, 3).map("rows={}".format), _dim(c.k, cap).map("cols={}".format),
              st.sampled_from(["extreme", "normal"]).map("scales={}".format),
              st.integers(0, 2**20 - 1).map("seed={}".format)]
    return parts


_CASE_BUILDERS = {"gemm.exact": _gemm_case, "gemm.ordered_bound": _gemm_case,
                  "upcast_e8m0.bit_exact": _upcast_case, "dequantize.bit_exact": _dequantize_case}


def cases(property: str, impl: Any, op: Optional[str] = None, *,
          max_dim: int = 256) -> "st.SearchStrategy[str]":
    """One case of `property` (CASE_PROPERTIES) for an op of impl, as the one-line text that
    mxgate.check(property, impl, op=..., case=TEXT) replays: the case's fields drawn inside the
    op's contract (M, N, K multiples of its alignments within its bounds and max_dim; a scale
    layout, output type and element types it declares; the seed of its data). impl: a family
    name (that family's default contract, the op named `op` or the family), an Adapter (class
    or instance) or spec (op: one of its ops, default any), or an Op. Fields shrink toward the
    smallest shape, the first declared layout and type, and seed 0."""
    if property not in CASE_PROPERTIES:
        raise InputError(f"mxgate.strategies.cases draws no case of '{property}' (it draws "
                         f"{', '.join(CASE_PROPERTIES)})")
    families = CASE_PROPERTIES[property]
    ops = [o for o in _ops_of(impl, op) if o.family in families]
    if not ops:
        raise InputError(f"{property} takes ops of {', '.join(families)}; impl has none")
    build = _CASE_BUILDERS[property]
    per_op = [st.tuples(*build(o, max_dim)).map(" ".join) for o in ops]
    return st.one_of(per_op) if len(per_op) > 1 else per_op[0]


__all__ = [
    "CASE_PROPERTIES",
    "block_tensors",
    "cases",
    "codes",
    "edge_codes",
    "format_codes",
    "group_offsets",
    "group_sizes",
    "mx_tensors",
    "nvfp4_tensors",
    "pack_e2m1",
    "production_shapes",
    "scale_codes",
]
