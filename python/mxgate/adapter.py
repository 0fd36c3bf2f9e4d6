"""Adapters: implementations written in Python, in mxgate's implementation model
(include/mxgate/plugin.h, docs/plugins.md §2-§3; docs/python.md §9).

An adapter is a named set of ops. Each op has a family (what its tensors hold), a contract (the
shapes, dtypes, layouts, scale blocks, convention and accumulator it declares: mxgate_contract
field by field) and a callable on numpy arrays. The same adapter object runs in-process
(`mxgate.check`) and in a worker process (`mxgate ... --impl py:MODULE:OBJECT`).

    class MyKernels(mxgate.Adapter):
        name = "mine"
        description = "my fused FP8 GEMM"

        @mxgate.op("gemm_mx", k=mxgate.Dim(align=32), accumulator="fp32_rn")
        def gemm(self, a, a_scales, b, b_scales):
            return my_gemm(a, a_scales, b, b_scales)      # float32 (M, N)

The callable gets the family's inputs as numpy arrays (copies: keeping them is safe) and
returns its outputs:

    cast            fn(x) -> codes                  x float32 (count,); codes (count,)
    quantize_mx     fn(x) -> (codes, scales)        x float32 (M, K) or uint16 bf16 bits
    quantize_block  fn(x) -> (codes, scales)
    dequantize      fn(codes, scales) -> y          y float32, or uint16 bf16 bits (M, K)
    upcast_e8m0     fn(e8m0) -> y                   y float32 (count,)
    preshuffle      fn(w) -> storage                uint8, the shuffled bytes
    gemm_mx         fn(a, a_scales, b, b_scales) -> c       c float32 (M, N) or uint16 bf16 bits
    gemm_block      fn(a, a_scales, b, b_scales) -> c
    gemm_bf16       fn(a, b) -> c
    quantize_nvfp4  fn(x, a_global) -> (codes, scales)    a_global: the global amax; codes e2m1
    dequantize_nvfp4  fn(codes, scales, a_global) -> y
    gemm_nvfp4      fn(a, a_scale, b, b_scale, a_global, b_global) -> c

Codes are uint8 (uint16 for bf16 / fp16 values); e2m3 / e3m2 one code per byte (low 6 bits);
packed e2m1 (FP4) as the ABI stores it, (rows, ceil(cols / 2)) uint8 with element 2i in the low
nibble and 2i+1 in the high one (pack_e2m1 / unpack_e2m1 convert); an odd row's padding nibble
is 0xF in an input and ignored in an output. The NVFP4 global scales a_global / b_global are
(1,) arrays: float32, or uint16 bf16 bits (contract global_dtypes says which the op takes).
torch / ml_dtypes float8 and bfloat16 arrays are accepted as outputs and read as their bits.
A 2-D array in a row-major or column-major layout is given in its logical shape (rows, cols)
whatever the physical order (a column-major one is the transpose of a C-contiguous array); a
padded layout (tma_col_major, nv_swizzle_128x4, aiter_shuffle_16x16) is given, and returned, as
its 1-D storage. A callable that also takes keyword `out_dtype` gets the output dtype's name
("f32", "bf16", "e4m3fn", ...), one that takes `call` a Call (m, n, k and every tensor's dtype
and layout). A host op of one output whose callable names a keyword `out` gets the output as a
writable numpy array over mxgate's poisoned buffer (its stored dtype, the shape it would return:
uint8 (count,) for a cast's codes), valid during the call only, and may write it in place and
return None, saving a copy per call (an element it leaves unwritten stays poison); a value it
returns is written as before.

An op declared with memory="cuda" (`@mxgate.op("cast", memory="cuda")`) is device-resident: it
gets its inputs as DLPack views (mxgate._device.DeviceArray: `torch.from_dlpack(x)`,
`jax.dlpack.from_dlpack(x)`) of device buffers mxgate allocated, with guard bands and poisoned
outputs as a plugin's device op gets, and returns any array with `__dlpack__` (a torch CUDA
tensor; float8 results as `.view(torch.uint8)` where the framework exports no float8 DLPack),
copied into the output buffer on the device. The survey's exhaustive casts then run on the
device with no host round trip (mxgate.survey_cast, `mxgate survey`). Where mxgate's buffers are
on the host (mxgate.check, which runs on the host backend), they are staged onto the device for
the op; with a libmxgate.so built without CUDA the views are host (numpy) arrays, which DLPack
consumers take as well. docs/python.md §9.

Raise mxgate.Unsupported(reason) to decline a case (inside the declared contract that is a
contract mismatch, a failure); any other exception is an error verdict naming the op.

An op may declare tactics, the kernels one library runs for the same call (autotune configs, a
tuned-shape table; docs/python.md §11.9): tactics=[mxgate.Tactic("bm64", {"BM": 64},
accumulator="sm90_fp8_mma"), ...]. mxgate then runs every property over every tactic and a
callable that takes keyword `tactic` gets the config of the one to run.
"""

import dataclasses
import inspect
import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from .errors import AdapterError, Unavailable, Unsupported  # Unavailable: adapters import it here

# The names and ABI codes come from the library (mxgate_api_vocabulary: common/dtypes.h and
# contract/contract.h), never numbered here.
VOCABULARY = _native.vocabulary()
FAMILIES = tuple(f["name"] for f in VOCABULARY["families"])
FAMILY_CODE = {f["name"]: f["code"] for f in VOCABULARY["families"]}  # mxgate_op_family
DTYPES = tuple(d["name"] for d in VOCABULARY["dtypes"])
DTYPE_CODE = {d["name"]: d["code"] for d in VOCABULARY["dtypes"]}  # mxgate_dtype
DTYPE_OF_CODE = {code: name for name, code in DTYPE_CODE.items()}
LAYOUTS = tuple(l["name"] for l in VOCABULARY["layouts"])
LAYOUT_CODE = {l["name"]: l["code"] for l in VOCABULARY["layouts"]}  # mxgate_layout
LAYOUT_OF_CODE = {code: name for name, code in LAYOUT_CODE.items()}
SCALED_FORMATS = tuple(f["name"] for f in VOCABULARY["scaled_formats"])  # mxfp8, ..., nvfp4
STRIDED = ("row_major", "col_major", "tma_col_major")
MEMORIES = ("host", "cuda")  # where an op's buffers are (plugin.h mxgate_memory)

# How a stored element of each dtype is held in numpy: the wide types as themselves (bf16 as its
# bits), one byte of bits for the narrow ones, packed E2M1 (storage 0: two codes per byte) as its
# bytes (PACKED).
_WIDE = {"f32": np.dtype("<f4"), "bf16": np.dtype("<u2"), "fp16": np.dtype("<f2")}
NUMPY_OF = {d["name"]: _WIDE.get(d["name"], np.dtype("u1")) for d in VOCABULARY["dtypes"]
            if d["name"] != "none"}
PACKED = tuple(d["name"] for d in VOCABULARY["dtypes"]
               if d["storage_bytes"] == 0 and d["name"] != "none")  # ("e2m1",)
GLOBAL_DTYPES = ("f32", "bf16")  # what an NVFP4 global scale may be (plugin.h global_dtypes)
NVFP4_FAMILIES = tuple(f for f in FAMILIES if f.endswith("_nvfp4"))

_INPUTS = {
    "cast": ("a",), "quantize_mx": ("a",), "quantize_block": ("a",),
    "dequantize": ("a", "a_scale"), "upcast_e8m0": ("a",), "preshuffle": ("a",),
    "gemm_mx": ("a", "a_scale", "b", "b_scale"), "gemm_block": ("a", "a_scale", "b", "b_scale"),
    "gemm_bf16": ("a", "b"),
    "quantize_nvfp4": ("a", "a_global"), "dequantize_nvfp4": ("a", "a_scale", "a_global"),
    "gemm_nvfp4": ("a", "a_scale", "b", "b_scale", "a_global", "b_global"),
}
_OUTPUTS = {"quantize_mx": ("out", "out_scale"), "quantize_block": ("out", "out_scale"),
            "quantize_nvfp4": ("out", "out_scale")}
# Inputs given as 1-D arrays whatever their (1 x count or 1 x 1) shape.
_FLAT = ("a_global", "b_global")


def unpack_e2m1(packed: Any, cols: int) -> np.ndarray:
    """Packed E2M1 bytes (rows, ceil(cols / 2)) -> codes (rows, cols), one per uint8: element 2i
    from the low nibble, 2i+1 from the high one (include/mxgate/plugin.h). 1-D stays 1-D."""
    p = np.asarray(packed, dtype=np.uint8)
    codes = np.stack([p & 0xF, p >> 4], axis=-1).reshape(p.shape[:-1] + (-1,))
    return codes[..., :cols]


def pack_e2m1(codes: Any) -> np.ndarray:
    """Codes (rows, cols), one per byte (low 4 bits) -> packed bytes (rows, ceil(cols / 2)), the
    padding nibble of an odd row 0."""
    c = np.asarray(codes, dtype=np.uint8) & 0xF
    if c.shape[-1] % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.uint8)], axis=-1)
    return (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)


@dataclass(frozen=True)
class Dim:
    """One dimension's clause: a multiple of align, min <= v <= max (max 0: unbounded)."""

    align: int = 1
    min: int = 1
    max: int = 0


def _names(value, known, what):
    if isinstance(value, str):
        value = (value,)
    out = tuple(value or ())
    for v in out:
        if v not in known:
            raise AdapterError(f"unknown {what} '{v}' (known: {', '.join(known)})")
    return out


@dataclass(frozen=True)
class Contract:
    """mxgate_contract (include/mxgate/plugin.h) field by field; docs/plugins.md §3."""

    m: Dim = Dim()
    n: Dim = Dim()
    k: Dim = Dim()
    a_dtypes: Tuple[str, ...] = ()
    b_dtypes: Tuple[str, ...] = ()
    out_dtypes: Tuple[str, ...] = ()
    a_scale_layouts: Tuple[str, ...] = ()
    b_scale_layouts: Tuple[str, ...] = ()
    b_layouts: Tuple[str, ...] = ()
    scale_dtype: str = "none"
    a_block: Tuple[int, int] = (0, 0)
    b_block: Tuple[int, int] = (0, 0)
    convention: Optional[str] = None
    accumulator: Optional[str] = None
    notes: str = ""
    a_scale_ld_align: int = 1
    b_scale_ld_align: int = 1
    global_dtypes: Tuple[str, ...] = ()
    # True: the op reads its scale grids only at the ld the alignment gives (a library that takes
    # no scale stride); mxgate then draws no scale grid that is a view into a wider tensor.
    packed_scales: bool = False

    def __post_init__(self):
        for f in ("a_dtypes", "b_dtypes", "out_dtypes"):
            object.__setattr__(self, f, _names(getattr(self, f), tuple(NUMPY_OF), "dtype"))
        object.__setattr__(self, "global_dtypes",
                           _names(self.global_dtypes, GLOBAL_DTYPES, "global_dtypes dtype"))
        for f in ("a_scale_layouts", "b_scale_layouts", "b_layouts"):
            object.__setattr__(self, f, _names(getattr(self, f), LAYOUTS, "layout"))
        for f in ("m", "n", "k"):
            d = getattr(self, f)
            if isinstance(d, int):
                object.__setattr__(self, f, Dim(align=d))
        if self.scale_dtype not in ("none", "e8m0", "f32", "e4m3fn"):
            raise AdapterError(f"scale_dtype must be none, e8m0, f32 or e4m3fn (NVFP4), not "
                               f"'{self.scale_dtype}'")


# What each family's contract is unless the declaration says otherwise.
_DEFAULTS = {
    "cast": dict(a_dtypes=("f32",)),
    "quantize_mx": dict(a_dtypes=("f32",), out_dtypes=("e4m3fn",), scale_dtype="e8m0",
                        a_block=(1, 32), a_scale_layouts=("row_major",)),
    "quantize_block": dict(a_dtypes=("f32",), out_dtypes=("e4m3fn",), scale_dtype="f32",
                           a_block=(1, 128), a_scale_layouts=("row_major",)),
    "dequantize": dict(a_dtypes=("e4m3fn",), out_dtypes=("f32",), scale_dtype="e8m0",
                       a_block=(1, 32), a_scale_layouts=("row_major",)),
    "upcast_e8m0": dict(a_dtypes=("e8m0",), out_dtypes=("f32",)),
    "preshuffle": dict(a_dtypes=("e4m3fn",), out_dtypes=("e4m3fn",),
                       b_layouts=("aiter_shuffle_16x16",)),
    "gemm_mx": dict(a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
                    scale_dtype="e8m0", a_block=(1, 32), b_block=(1, 32),
                    a_scale_layouts=("row_major",), b_scale_layouts=("row_major",),
                    b_layouts=("row_major",)),
    "gemm_block": dict(a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
                       scale_dtype="f32", a_block=(1, 128), b_block=(128, 128),
                       a_scale_layouts=("row_major",), b_scale_layouts=("row_major",),
                       b_layouts=("row_major",)),
    "gemm_bf16": dict(a_dtypes=("bf16",), b_dtypes=("bf16",), out_dtypes=("f32",),
                      b_layouts=("row_major",)),
    # NVFP4 (plugin.h): packed E2M1, E4M3 scales of 1 x 16, fp32 global scales.
    "quantize_nvfp4": dict(a_dtypes=("f32",), out_dtypes=("e2m1",), scale_dtype="e4m3fn",
                           a_block=(1, 16), a_scale_layouts=("row_major",),
                           global_dtypes=("f32",)),
    "dequantize_nvfp4": dict(a_dtypes=("e2m1",), out_dtypes=("f32",), scale_dtype="e4m3fn",
                             a_block=(1, 16), a_scale_layouts=("row_major",),
                             global_dtypes=("f32",)),
    "gemm_nvfp4": dict(a_dtypes=("e2m1",), b_dtypes=("e2m1",), out_dtypes=("f32",),
                       scale_dtype="e4m3fn", a_block=(1, 16), b_block=(1, 16),
                       a_scale_layouts=("row_major",), b_scale_layouts=("row_major",),
                       b_layouts=("row_major",), global_dtypes=("f32",)),
}

_CONTRACT_FIELDS = {f.name for f in dataclasses.fields(Contract)}


def _adapter_family(family: str) -> None:
    """Refuses a family the library does not know, or one this package has no roles for (a
    library newer than the package)."""
    if family not in FAMILIES:
        raise AdapterError(f"unknown family '{family}' (families: {', '.join(FAMILIES)})")
    if family not in _DEFAULTS:
        raise AdapterError(f"family '{family}' has no Python adapter support in this package "
                           f"(families: {', '.join(_DEFAULTS)})")


def _check_family_contract(family: str, name: str, c: Contract) -> None:
    """The clauses the C ABI ties to a family (impl/plugin.cpp), refused here with the op named
    rather than by the loader later."""
    if family in NVFP4_FAMILIES:
        if c.scale_dtype != "e4m3fn":
            raise AdapterError(f"op {name}: {family} takes E4M3 block scales: scale_dtype must "
                               f"be e4m3fn, not '{c.scale_dtype}'")
        if not c.global_dtypes:
            raise AdapterError(f"op {name}: {family} reads global scales: declare global_dtypes "
                               f"(f32 and / or bf16)")
    else:
        if c.global_dtypes:
            raise AdapterError(f"op {name}: global_dtypes is for the NVFP4 families; {family} "
                               f"takes no global scale")
        if c.scale_dtype == "e4m3fn":
            raise AdapterError(f"op {name}: scale_dtype e4m3fn is for the NVFP4 families, not "
                               f"{family} (e8m0 or f32)")


def contract(family: str, **fields: Any) -> Contract:
    """The family's default contract with `fields` replacing its clauses."""
    _adapter_family(family)
    bad = set(fields) - _CONTRACT_FIELDS
    if bad:
        raise AdapterError(f"unknown contract field(s) {', '.join(sorted(bad))} "
                           f"(fields: {', '.join(sorted(_CONTRACT_FIELDS))})")
    return Contract(**{**_DEFAULTS[family], **fields})


@dataclass(frozen=True)
class Tensor:
    """One tensor of a call, as mxgate_tensor describes it."""

    role: str  # a, a_scale, b, b_scale, out, out_scale
    dtype: str
    rows: int
    cols: int
    ld: int
    layout: str
    nbytes: int


@dataclass(frozen=True)
class Call:
    """What the keyword `call` receives: the call's shape and every tensor's description."""

    family: str
    m: int
    n: int
    k: int
    tensors: Tuple[Tensor, ...]

    def tensor(self, role: str) -> Optional[Tensor]:
        for t in self.tensors:
            if t.role == role:
                return t
        return None


def _storage_count(t):
    return t.nbytes // NUMPY_OF[t.dtype].itemsize


def _packed_view(flat, t):
    """A packed E2M1 tensor's (rows, ceil(cols / 2)) bytes: row r starts at r * ceil(ld / 2)."""
    if t.layout != "row_major":
        raise AdapterError(f"{t.role}: packed {t.dtype} in layout {t.layout}; the ABI packs "
                           f"E2M1 row-major only")
    row = ((t.ld or t.cols) + 1) // 2
    return flat[: t.rows * row].reshape(t.rows, row)[:, : (t.cols + 1) // 2]


def _view(buf, t):
    """The logical view of a tensor's bytes (a numpy array over `buf`, not a copy)."""
    dt = NUMPY_OF[t.dtype]
    flat = np.frombuffer(buf, dtype=dt, count=_storage_count(t))
    if t.dtype in PACKED:
        return _packed_view(flat, t)
    if t.layout == "row_major":
        ld = t.ld or t.cols
        return flat[: t.rows * ld].reshape(t.rows, ld)[:, : t.cols]
    if t.layout in ("col_major", "tma_col_major") and (t.layout == "col_major" or t.ld):
        ld = t.ld or t.rows
        return flat[: t.cols * ld].reshape(t.cols, ld)[:, : t.rows].T
    return flat


def _logical(t):
    return t.layout in STRIDED and not (t.layout == "tma_col_major" and not t.ld)


def _as_bits(value, t, op):
    """An output value as a numpy array of t's stored dtype, refusing anything that would
    change a value (float64 for an fp32 result: mxgate does not round for the op)."""
    from ._arrays import to_numpy

    a, _ = to_numpy(value, "bits")
    want = NUMPY_OF[t.dtype]
    if a.dtype == want or (a.dtype.kind == want.kind and a.dtype.itemsize == want.itemsize):
        return a.astype(want, copy=False)
    raise AdapterError(f"{op}: output {t.role} is {a.dtype} {a.shape}; the call's {t.role} is "
                       f"{t.dtype} ({want.str}) {t.rows} x {t.cols}: return that dtype (mxgate "
                       f"does not convert an op's output)")


# A fault planted in the write-back for the gate's self-test tests only (MXGATE_MACHINERY_FAULT,
# common/machinery_fault.h names every plant).
_DROPS_ODD_ROW = os.environ.get("MXGATE_MACHINERY_FAULT") == "adapter_drops_odd_row"


def emit(t: Tensor, value: Any, target: np.ndarray, op: str) -> None:
    """Writes an op's output into `target` (a writable uint8 array of t.nbytes bytes, poisoned
    by the caller) in t's layout: a logical (rows, cols) array (1-D for a single row) is laid
    out, a 1-D array of the storage size is copied as it is."""
    a = _as_bits(value, t, op)
    typed = target.view(NUMPY_OF[t.dtype])
    packed = t.dtype in PACKED
    shape = (t.rows, (t.cols + 1) // 2 if packed else t.cols)
    if _logical(t) and a.size == shape[0] * shape[1] and (
            a.shape == shape or (a.ndim == 1 and t.rows == 1)):
        logical = a.reshape(shape)
        if shape[0] > 1 and shape[0] % 2 == 1 and _DROPS_ODD_ROW:
            # Test plant (common/machinery_fault.h): an odd row count's last row is not written.
            _typed_view(typed, t)[:-1] = logical[:-1]
            return
        _typed_view(typed, t)[...] = logical
        return
    if a.ndim == 1 and a.size == typed.size:
        typed[:] = a
        return
    what = f"{t.rows} x {t.cols} in {t.layout}"
    if packed:
        what += f", packed {t.dtype}: {shape[0]} x {shape[1]} bytes (pack_e2m1)"
    raise AdapterError(f"{op}: output {t.role} has shape {a.shape}; the call's {t.role} is " +
                       what + ("" if _logical(t) else f" (storage: {typed.size} elements, 1-D)"))


def _typed_view(typed, t):
    """The logical (rows, cols) view of a typed storage array (writable)."""
    if t.dtype in PACKED:
        return _packed_view(typed, t)
    if t.layout == "row_major":
        ld = t.ld or t.cols
        return typed[: t.rows * ld].reshape(t.rows, ld)[:, : t.cols]
    ld = t.ld or t.rows
    return typed[: t.cols * ld].reshape(t.cols, ld)[:, : t.rows].T


class _Device:
    """A device buffer of a call (its address), as _InMemory hands a device op's buffers."""

    def __init__(self, address: int) -> None:
        self.address = int(address)


def _device_view(t, address, flat, op):
    """The DLPack view (mxgate._device.DeviceArray) of tensor t's device storage at address:
    the logical (rows, cols) with strides as _view gives it on the host, 1-D where flat."""
    from . import _device

    dt = NUMPY_OF[t.dtype]
    if t.dtype in PACKED:
        if t.layout != "row_major":
            raise AdapterError(f"{t.role}: packed {t.dtype} in layout {t.layout}; the ABI packs "
                               f"E2M1 row-major only")
        shape, strides = (t.rows, (t.cols + 1) // 2), (((t.ld or t.cols) + 1) // 2, 1)
    elif t.layout == "row_major":
        shape, strides = (t.rows, t.cols), (t.ld or t.cols, 1)
    elif _logical(t):
        shape, strides = (t.rows, t.cols), (1, t.ld or t.rows)
    else:
        return _device.DeviceArray(address, (t.nbytes // dt.itemsize,), dt)
    if flat:
        if t.rows != 1 and strides != (shape[1], 1):
            raise AdapterError(f"{op}: {t.role} is {t.rows} x {t.cols} with ld {t.ld}: not one "
                               f"run of elements, cannot be given flat")
        shape, strides = (shape[0] * shape[1],), (1,)
    return _device.DeviceArray(address, shape, dt, strides)


def _emit_device(t, value, address, op):
    """Writes an op's result into tensor t's device storage at address: one device-to-device
    copy when the result is a contiguous device array of t's contiguous logical shape, else
    through the host (emit's rules on the storage read back)."""
    from . import _device

    want = NUMPY_OF[t.dtype]
    if _device.has_dlpack(value):
        r = _device.Returned(value, op)
        try:
            if r.itemsize != want.itemsize or (want.kind == "f") != (r.code == _device.KDL_FLOAT):
                raise AdapterError(f"{op}: output {t.role} has DLPack dtype code {r.code} of "
                                   f"{r.bits} bits; the call's {t.role} is {t.dtype} "
                                   f"({want.str}): return that dtype (mxgate does not convert "
                                   f"an op's output)")
            count = t.nbytes // want.itemsize
            packed = t.dtype in PACKED
            logical = (t.rows, (t.cols + 1) // 2 if packed else t.cols)
            dense = t.layout == "row_major" and (t.rows == 1 or t.ld in (0, t.cols)) and not packed
            fits = (r.shape == logical or (len(r.shape) == 1 and r.size == logical[0] *
                                           logical[1] and (t.rows == 1 or dense)))
            if r.device == _device.KDL_CUDA and r.contiguous and (
                    (dense and fits) or (len(r.shape) == 1 and r.size == count)):
                from . import _native

                _native.device_copy(address, r.pointer, r.size * want.itemsize, 2)
                return
            value = r.host_copy(want) if r.contiguous else None
            if value is None:
                raise AdapterError(f"{op}: output {t.role} is a strided DLPack array: return a "
                                   f"contiguous one")
        finally:
            r.release()
    from . import _native

    storage = np.empty(t.nbytes, dtype=np.uint8)
    _native.device_copy(storage.ctypes.data, address, t.nbytes, 1)  # the poisoned storage
    emit(t, value, storage, op)
    _native.device_copy(address, storage.ctypes.data, t.nbytes, 0)


@dataclass(frozen=True)
class Tactic:
    """One tactic of an op (include/mxgate/plugin.h mxgate_tactic): its name ([a-z0-9_.]+), the
    config the callable gets as keyword `tactic`, and, for a GEMM, its own accumulator model
    (None: the op's)."""

    name: str
    config: Any = None
    accumulator: Optional[str] = None
    notes: str = ""

    def __post_init__(self):
        if not self.name or not all(c.islower() or c.isdigit() or c in "_." for c in self.name):
            raise AdapterError(f"tactic name '{self.name}' is not [a-z0-9_.]+")


class Op:
    """One op: name, family, contract, the callable, its memory ("host" or "cuda") and its
    tactics (none: one)."""

    def __init__(self, family: str, fn: Callable[..., Any], name: Optional[str] = None,
                 contract_: Optional[Contract] = None, memory: str = "host",
                 tactics: Sequence[Tactic] = (),
                 **fields: Any) -> None:
        _adapter_family(family)
        if not callable(fn):
            raise AdapterError(f"op {name or family}: {fn!r} is not callable")
        self.family = family
        self.fn = fn
        self.name = name or getattr(fn, "__name__", family)
        if not self.name or not all(c.islower() or c.isdigit() or c in "_." for c in self.name):
            raise AdapterError(f"op name '{self.name}' is not [a-z0-9_.]+")
        self.contract = contract_ if contract_ is not None else contract(family, **fields)
        _check_family_contract(family, self.name, self.contract)
        if memory not in MEMORIES:
            raise AdapterError(f"op {self.name}: memory must be one of {', '.join(MEMORIES)}, "
                               f"not '{memory}'")
        self.memory = memory
        self.tactics = tuple(tactics)
        for t in self.tactics:
            if not isinstance(t, Tactic):
                raise AdapterError(f"op {self.name}: tactics holds {t!r}, not an mxgate.Tactic")
            if t.accumulator is not None and not family.startswith("gemm"):
                raise AdapterError(f"op {self.name}: tactic {t.name} declares an accumulator, "
                                   f"but {family} is no GEMM")
        if len({t.name for t in self.tactics}) != len(self.tactics):
            raise AdapterError(f"op {self.name}: two tactics of one name")
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = {}
        kw = any(p.kind == p.VAR_KEYWORD for p in params.values())
        self._wants = tuple(w for w in ("out_dtype", "call", "tactic") if kw or w in params)
        # Keyword `out`, named (never through **kwargs): the output written in place.
        self._writes_out = "out" in params and params["out"].kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        if self._writes_out and (memory != "host" or len(_OUTPUTS.get(family, ("out",))) != 1):
            raise AdapterError(f"op {self.name}: keyword `out` (the output written in place) is "
                               f"for host ops of one output; {family} with memory {memory} "
                               f"returns its outputs")

    def with_contract(self, **fields: Any) -> "Op":
        """A copy of this op with contract clauses replaced (e.g. accumulator=...)."""
        c = dataclasses.replace(self.contract, **fields)
        return Op(self.family, self.fn, self.name, c, memory=self.memory, tactics=self.tactics)

    def invoke(self, m: int, n: int, k: int, tensors: Sequence[Tensor],
               buffers: Sequence[Any], tactic: int = 0,
               stream: Optional[int] = None) -> Tuple[str, str]:
        """Runs the op on one call with tactic index `tactic`: tensors (Tensor per present slot,
        inputs then outputs) and their buffers (inputs: bytes-like; outputs: writable uint8
        arrays; or, for a device op, _Device addresses of device buffers, ready once `stream`
        is). Returns (status, message): status "done", "unsupported" or "error"; never raises."""
        if self.memory != "host":
            return self._invoke_device(m, n, k, tensors, buffers, stream, tactic)
        # A cast's input is a read-only view, not a copy: a survey's chunks are 2^24 inputs, and
        # the copy per call was a fifth of the host survey's time (an op writing its input
        # raises, an error verdict).
        readonly = self.family == "cast"
        return self._call(m, n, k, tensors, buffers, tactic,
                          lambda t, buf, flat: _host_arg(t, buf, flat, readonly),
                          lambda t, value, target: emit(t, value, target, self.name),
                          out_view=_out_view if self._writes_out else None)

    def _call(self, m, n, k, tensors, buffers, tactic, arg, put, before=None, out_view=None):
        """The body invoke and _invoke_device share: the tactic's range, the op's positional
        arguments (arg(tensor, buffer, flat) each, in the family's input order), its keyword
        arguments (out_view(tensor, buffer, flat): keyword `out`, the output's writable view),
        the call (`before()` first), the outputs' count, and put(tensor, value, buffer) per
        output (none for an op given `out` that returns None: it wrote there). Returns (status,
        message); never raises."""
        try:
            if tactic >= max(1, len(self.tactics)):
                raise AdapterError(f"{self.name}: tactic {tactic} asked, "
                                   f"{max(1, len(self.tactics))} declared")
            by_role = dict(zip((t.role for t in tensors), zip(tensors, buffers)))
            args = []
            for role in _INPUTS[self.family]:
                if role not in by_role:
                    raise AdapterError(f"{self.name}: the call has no {role}")
                t, buf = by_role[role]
                args.append(arg(t, buf, self.family in ("cast", "upcast_e8m0") or role in _FLAT))
            if before is not None:
                before()
            outs = [r for r in _OUTPUTS.get(self.family, ("out",)) if r in by_role]
            kwargs = {}
            if "out_dtype" in self._wants:
                kwargs["out_dtype"] = by_role["out"][0].dtype
            if "call" in self._wants:
                kwargs["call"] = Call(self.family, m, n, k, tuple(tensors))
            if "tactic" in self._wants:
                kwargs["tactic"] = self.tactics[tactic].config if self.tactics else None
            if out_view is not None:
                t, target = by_role["out"]
                kwargs["out"] = out_view(t, target, self.family in ("cast", "upcast_e8m0"))
            result = self.fn(*args, **kwargs)
            if out_view is not None and result is None:
                return "done", ""  # written in place
            if len(outs) > 1:
                if not isinstance(result, (tuple, list)) or len(result) != len(outs):
                    raise AdapterError(f"{self.name}: a {self.family} op returns "
                                       f"({', '.join(outs)}), got {type(result).__name__}")
            else:
                result = (result,)
            for role, value in zip(outs, result):
                t, target = by_role[role]
                put(t, value, target)
            return "done", ""
        except Unsupported as e:
            return "unsupported", f"{self.name} declined: {e}"
        except Exception as e:  # the op's own failure: an error verdict, never a crash
            return "error", f"{self.name} raised {describe_exception(e)}"

    def _invoke_device(self, m, n, k, tensors, buffers, stream, tactic=0):
        """invoke for a device op: DLPack views of the device buffers, or of host buffers
        staged onto the device (a CUDA library), or host arrays (a library without CUDA)."""
        from . import _device, _native

        staged = []
        on_device = any(isinstance(b, _Device) for b in buffers)
        use_device = on_device or _device.device_available()

        def arg(t, buf, flat):
            if not use_device:
                return _host_arg(t, buf, flat)
            if on_device:
                address = buf.address
            else:
                host = np.frombuffer(buf, dtype=np.uint8, count=t.nbytes)
                address = _native.device_alloc(t.nbytes)
                staged.append(address)
                _native.device_copy(address, host.ctypes.data, t.nbytes, 0)
            return _device_view(t, address, flat, self.name)

        def before():
            if on_device and stream:
                _native.device_sync(stream)

        def put(t, value, target):
            if on_device:
                _emit_device(t, value, target.address, self.name)
                return
            if _device.has_dlpack(value) and not isinstance(value, np.ndarray):
                r = _device.Returned(value, self.name)
                try:
                    value = r.host_copy(NUMPY_OF[t.dtype]) if r.contiguous else value
                finally:
                    r.release()
            emit(t, value, target, self.name)

        try:
            return self._call(m, n, k, tensors, buffers, tactic, arg, put, before)
        finally:
            for address in staged:
                _native.device_free(address)


def _out_view(t, target, flat):
    """An output as the op's keyword `out`: a writable view of mxgate's (poisoned) buffer in the
    output's stored dtype, of its logical shape (flat: one dimension), as an input is given."""
    v = _typed_view(target.view(NUMPY_OF[t.dtype]), t)
    return v.reshape(-1) if flat and v.ndim == 2 else v


def _host_arg(t, buf, flat, readonly=False):
    """An input as a host array of its logical shape (flat: one dimension) for the op: a copy,
    or (readonly) a read-only view of the buffer."""
    v = _view(buf, t)
    if readonly:
        v = v.view()
        v.flags.writeable = False
    else:
        v = np.array(v)
    return v.reshape(-1) if flat and v.ndim == 2 else v


def describe_exception(e: BaseException) -> str:
    """'TypeError: message (file.py:12 in fn)': the exception and where it was raised."""
    frames = traceback.extract_tb(e.__traceback__)
    where = ""
    if frames:
        f = frames[-1]
        where = f" ({f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name})"
    return f"{type(e).__name__}: {e}{where}"


def op(family: str, name: Optional[str] = None,
       **fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator declaring a method of an Adapter subclass (or a function) as an op."""

    def wrap(fn):
        fn._mxgate_op = (family, name, fields)
        return fn

    return wrap


class Adapter:
    """A named set of ops. Subclasses set `name`, `description` and declare ops with @op, or
    pass ops to the constructor. `check_available()` raises Unavailable when what the adapter
    wraps is absent (the default: always available)."""

    name: Optional[str] = None
    description: str = ""

    def __init__(self, ops: Optional[Iterable[Op]] = None, name: Optional[str] = None,
                 description: Optional[str] = None) -> None:
        if name is not None:
            self.name = name
        if description is not None:
            self.description = description
        if not self.name:
            self.name = type(self).__name__.lower()
        if not all(c.islower() or c.isdigit() or c == "_" for c in self.name):
            raise AdapterError(f"adapter name '{self.name}' is not [a-z0-9_]+")
        self._ops = list(ops) if ops is not None else self._declared_ops()

    def _declared_ops(self):
        out = []
        for attr in dir(type(self)):
            fn = getattr(type(self), attr, None)
            decl = getattr(fn, "_mxgate_op", None)
            if decl is None:
                continue
            family, name, fields = decl
            fields = dict(fields)
            memory = fields.pop("memory", "host")
            out.append(Op(family, getattr(self, attr), name or attr, memory=memory, **fields))
        return out

    @property
    def ops(self) -> Tuple[Op, ...]:
        return tuple(self._ops)

    def check_available(self) -> None:
        """Raises Unavailable(reason) when the adapter cannot run here."""

    def find(self, name: str) -> Op:
        for o in self._ops:
            if o.name == name:
                return o
        raise AdapterError(f"adapter {self.name} has no op '{name}' "
                           f"(ops: {', '.join(o.name for o in self._ops)})")

    def __repr__(self) -> str:
        return f"<mxgate adapter {self.name}: {', '.join(o.name for o in self._ops)}>"


def as_adapter(impl: Any, op: Union[str, Op, None] = None,
               available_checked: bool = False) -> Tuple["Adapter", Tuple[Op, ...]]:
    """(adapter, ops) for mxgate.check: an Adapter (op: one of its op names, or None for all),
    an Op, or a callable with op naming its family (or an Op declaring it). An adapter's
    check_available() is asked unless the caller already did (available_checked)."""
    if isinstance(impl, type) and issubclass(impl, Adapter):
        impl = impl()
    if isinstance(impl, Adapter):
        if not available_checked:
            impl.check_available()
        if op is None:
            return impl, impl.ops
        if isinstance(op, str):
            return impl, (impl.find(op),)
        raise AdapterError("with an adapter, op= names one of its ops")
    if isinstance(impl, Op):
        return Adapter([impl], name="python"), (impl,)
    if callable(impl):
        if isinstance(op, Op):
            o = Op(op.family, impl, op.name, op.contract, memory=op.memory, tactics=op.tactics)
        elif isinstance(op, str) and op in FAMILIES:
            o = Op(op, impl, name=op)
        else:
            raise AdapterError("a plain callable needs op=FAMILY (" + ", ".join(FAMILIES) +
                               ") or op=mxgate.Op(...) declaring its contract")
        return Adapter([o], name="python"), (o,)
    raise AdapterError(f"impl must be an mxgate.Adapter, an mxgate.Op or a callable, not "
                       f"{type(impl).__name__}")


def describe(adapter: Adapter) -> str:
    """The worker's handshake text (impl/python_description.cpp parse_python_description)."""

    def line(s):
        return " ".join(str(s).split())

    out = [f"impl {adapter.name}", f"description {line(adapter.description)}"]
    for o in adapter.ops:
        c = o.contract
        out.append(f"op {o.name}")
        out.append(f"family {o.family}")
        for d in ("m", "n", "k"):
            v = getattr(c, d)
            out.append(f"{d} {v.align} {v.min} {v.max}")
        for f in ("a_dtypes", "b_dtypes", "out_dtypes", "a_scale_layouts", "b_scale_layouts",
                  "b_layouts"):
            out.append(f"{f} {','.join(getattr(c, f))}")
        out.append(f"scale_dtype {c.scale_dtype}")
        out.append(f"a_block {c.a_block[0]} {c.a_block[1]}")
        out.append(f"b_block {c.b_block[0]} {c.b_block[1]}")
        out.append(f"a_scale_ld_align {c.a_scale_ld_align}")
        out.append(f"b_scale_ld_align {c.b_scale_ld_align}")
        if c.packed_scales:
            out.append("packed_scales 1")
        if c.global_dtypes:
            out.append(f"global_dtypes {','.join(c.global_dtypes)}")
        if c.convention:
            out.append(f"convention {c.convention}")
        if c.accumulator:
            out.append(f"accumulator {c.accumulator}")
        if c.notes:
            out.append(f"notes {line(c.notes)}")
        for t in o.tactics:
            out.append(f"tactic {t.name}" + (f" {t.accumulator}" if t.accumulator else ""))
    return "\n".join(out) + "\n"
