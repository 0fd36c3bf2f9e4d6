"""The flight recorder's tensors (docs/record.md §3): one raw-bytes file per tensor holding the
whole strided window it spans, described by name and geometry, and read back as the same view.

A tensor (a numpy array, or a torch tensor duck-typed: dtype / shape / stride() /
storage_offset()) is described by
  dtype           by name: f32 bf16 fp16 e4m3fn e4m3fnuz e5m2 e5m2fnuz e8m0 e2m1 (packed, two
                  codes a byte: the bytes are described) u8 i8 u16 i16 i32 u32 i64 f64 bool
  shape, strides  in elements (the tensor's own strides: a padded leading dimension survives)
  storage_offset  the first element's offset in its allocation (torch's storage_offset(); a
                  numpy view's offset in its base array; informational)
  window          the bytes from the lowest to the highest element the strides reach: what
                  the file holds; window_offset is the first element's place in it
  device, alignment (the first element's address modulo 256, -1 where not known)
A numpy array of uint8 codes does not say which format it holds: the caller names it (the op's
declaration, its `call` argument); an ml_dtypes / torch float8 array names itself.

No contiguous copy is ever made before writing: the window is copied as it lies.
"""

import ctypes
import hashlib
import os

import numpy as np

from .errors import InputError

# Every dtype a record may name: (numpy storage dtype, bytes per element).
STORAGE = {
    "f32": "<f4", "f64": "<f8", "fp16": "<f2", "bf16": "<u2",
    "e4m3fn": "u1", "e4m3fnuz": "u1", "e5m2": "u1", "e5m2fnuz": "u1", "e8m0": "u1",
    "e2m1": "u1", "e2m3": "u1", "e3m2": "u1", "mxint8": "u1",
    "u8": "u1", "i8": "i1", "u16": "<u2", "i16": "<i2", "u32": "<u4", "i32": "<i4",
    "i64": "<i8", "u64": "<u8", "bool": "?",
}
PACKED = ("e2m1",)  # float4_e2m1fn_x2: two codes a byte, shapes and strides in bytes

# Framework dtype names (numpy's, ml_dtypes', torch's after "torch.") -> record dtype names.
_BY_NAME = {
    "float32": "f32", "float64": "f64", "float16": "fp16", "bfloat16": "bf16",
    "float8_e4m3fn": "e4m3fn", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2": "e5m2",
    "float8_e5m2fnuz": "e5m2fnuz", "float8_e8m0fnu": "e8m0", "float4_e2m1fn_x2": "e2m1",
    "uint8": "u8", "int8": "i8", "uint16": "u16", "int16": "i16", "uint32": "u32",
    "int32": "i32", "int64": "i64", "uint64": "u64", "bool": "bool",
}


def is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "storage_offset")


def is_tensor(x):
    return isinstance(x, np.ndarray) or is_torch(x)


def framework_dtype(x):
    """The record dtype a tensor names itself (None for a dtype outside the table)."""
    return _BY_NAME.get(str(x.dtype).rsplit(".", 1)[-1])


def _span(shape, strides):
    """(lowest, highest) element offsets the strides reach from the first element."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n == 0:
            return 0, -1
        lo += min(0, (n - 1) * s)
        hi += max(0, (n - 1) * s)
    return lo, hi


def _numpy_window(a):
    """(window bytes, window offset in elements, strides in elements, storage offset, address)
    of a numpy array, the bytes read where they lie (no contiguous copy)."""
    item = a.dtype.itemsize
    if any(s % item for s in a.strides):
        raise InputError(f"a numpy array with byte strides {a.strides} not multiples of its "
                         f"itemsize {item} cannot be recorded")
    strides = tuple(s // item for s in a.strides)
    lo, hi = _span(a.shape, strides)
    address = a.__array_interface__["data"][0]
    count = hi - lo + 1
    if count <= 0:
        data = b""
    else:
        raw = (ctypes.c_uint8 * (count * item)).from_address(address + lo * item)
        data = bytes(raw)
    base, offset = a, 0
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base is not a:
        offset = (address - base.__array_interface__["data"][0]) // item
    return data, -lo, strides, offset, address


def _torch_window(t):
    """The same for a torch tensor: the window cut from its storage on its device, then copied
    to the host as bytes (device memory: one copy of the window, a synchronizing .cpu())."""
    import torch  # present: t is a torch tensor

    strides = tuple(t.stride())
    lo, hi = _span(tuple(t.shape), strides)
    count = hi - lo + 1
    start = t.storage_offset() + lo
    if count <= 0:
        return b"", 0, strides, t.storage_offset(), -1
    flat = t.detach().as_strided((count,), (1,), start)
    data = flat.view(torch.uint8).cpu().numpy().tobytes()
    address = t.data_ptr() if hasattr(t, "data_ptr") else -1
    return data, -lo, strides, t.storage_offset(), address


def describe(x, dtype=None):
    """(the description, the window's bytes) of tensor x; dtype: its record dtype when x does
    not name it (uint8 codes)."""
    own = framework_dtype(x)
    name = own if own not in (None, "u8", "u16") or dtype is None else dtype
    if name is None:
        raise InputError(f"a tensor of dtype {x.dtype} has no record dtype")
    if is_torch(x):
        data, window_offset, strides, storage_offset, address = _torch_window(x)
        device = str(x.device)
    else:
        data, window_offset, strides, storage_offset, address = _numpy_window(x)
        device = "cpu"
    d = dict(dtype=name, framework_dtype=str(x.dtype), shape=list(x.shape), strides=list(strides),
             storage_offset=int(storage_offset), window_offset=int(window_offset),
             window_bytes=len(data), itemsize=np.dtype(STORAGE[name]).itemsize, device=device,
             alignment=address % 256 if address >= 0 else -1)
    if name in PACKED:
        d["packed"] = "two e2m1 codes a byte, element 2i in the low nibble; shape in bytes"
    return d, data


def write(directory, name, x, dtype=None):
    """Writes tensor x to directory/name.bin; its description with file and sha256."""
    d, data = describe(x, dtype)
    path = os.path.join(directory, name + ".bin")
    with open(path, "wb") as f:
        f.write(data)
    d["file"] = name + ".bin"
    d["sha256"] = hashlib.sha256(data).hexdigest()
    return d


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class BadDump(InputError):
    """A record that cannot be read as it claims (a truncated file, an unknown dtype, a missing
    tensor, bytes that do not match their sha256): replay's exit 2, the file named."""


def load(directory, d):
    """The numpy view a description names, over the file's bytes (read-only), checked: the file
    exists, has the window's size and the sha256 the manifest gives, and the dtype is known."""
    path = os.path.join(directory, d.get("file", "?"))
    if d.get("dtype") not in STORAGE:
        raise BadDump(f"{path}: unknown dtype '{d.get('dtype')}' (known: "
                      f"{', '.join(STORAGE)})")
    if not os.path.isfile(path):
        raise BadDump(f"{path}: missing tensor file (the manifest names it)")
    size = os.path.getsize(path)
    if size != d["window_bytes"]:
        raise BadDump(f"{path}: truncated or wrong size: {size} bytes, the manifest says "
                      f"{d['window_bytes']}")
    if sha256_file(path) != d["sha256"]:
        raise BadDump(f"{path}: its bytes do not match the manifest's sha256")
    dt = np.dtype(STORAGE[d["dtype"]])
    with open(path, "rb") as f:
        window = np.frombuffer(f.read(), dtype=dt)
    shape, strides = tuple(d["shape"]), tuple(d["strides"])
    lo, hi = _span(shape, strides)
    off = d["window_offset"]
    if window.size and (off + lo < 0 or off + hi >= window.size):
        raise BadDump(f"{path}: shape {list(shape)} strides {list(strides)} reach outside the "
                      f"{window.size}-element window")
    if not window.size:
        return np.zeros(shape, dt)
    return np.lib.stride_tricks.as_strided(window[off:], shape, tuple(s * dt.itemsize
                                                                      for s in strides),
                                           writeable=False)
