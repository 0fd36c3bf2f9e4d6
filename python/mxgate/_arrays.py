"""Array-likes to the arrays the C API reads: numpy arrays, anything with __array__ or DLPack
(torch tensors on any device: device memory is copied to the host), and plain Python numbers or
sequences.

Two kinds of input:
  "values"  numbers (encode's values, quantize's input): exact widenings to float32 are made
            here (float16, bfloat16, float8 arrays); float32 / float64 pass as they are.
  "bits"    codes, scales and GEMM operands / outputs: bfloat16 and float8 arrays are passed as
            their bit patterns (uint16 / uint8), which is how the CLI's .npy files hold them.
Everything else is passed with its own dtype, and the library rejects what the CLI would reject,
with the CLI's message. Nothing is converted silently in a way that changes a value.
"""

import numpy as np

from .errors import InputError

DLPACK_CPU = 1
DLPACK_CUDA_HOST = 3

# Narrow float dtypes by name (torch.float8_e4m3fn -> "float8_e4m3fn"; ml_dtypes the same):
# the mxgate format each one is, and the unsigned type of its bits.
_NARROW = {
    "bfloat16": ("bf16", np.uint16),
    "float8_e4m3fn": ("e4m3fn", np.uint8),
    "float8_e5m2": ("e5m2", np.uint8),
    "float8_e4m3fnuz": ("e4m3fnuz", np.uint8),
    "float8_e5m2fnuz": ("e5m2fnuz", np.uint8),
    "float8_e8m0fnu": ("e8m0", np.uint8),
}


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]  # "torch.bfloat16" -> "bfloat16"


def _from_torch(t, kind):
    """A torch.Tensor (duck-typed: detach / cpu / numpy) to numpy, on the host."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    name = _dtype_name(t.dtype)
    if name in _NARROW:
        if kind == "values":
            return t.float().contiguous().numpy(), name
        import torch  # present: t is a torch tensor

        width = torch.int16 if _NARROW[name][1] is np.uint16 else torch.uint8
        return t.contiguous().view(width).numpy().view(_NARROW[name][1]), name
    return t.resolve_conj().resolve_neg().contiguous().numpy(), None


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def to_numpy(x, kind):
    """x as a numpy array, and the narrow float type it was given as (or None)."""
    narrow = None
    if isinstance(x, np.ndarray):
        a = x
    elif _is_torch(x):
        a, narrow = _from_torch(x, kind)
    elif hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        device, _ = x.__dlpack_device__()
        if device not in (DLPACK_CPU, DLPACK_CUDA_HOST):
            if hasattr(x, "cpu"):
                x = x.cpu()
            elif hasattr(x, "get"):  # CuPy
                x = x.get()
        a = x if isinstance(x, np.ndarray) else np.from_dlpack(x)
    else:
        a = np.asarray(x)
    # ml_dtypes' types are numpy user types of kind "V"; naming only those keeps builtin dtypes
    # (the common case) off the slow str(dtype).
    name = _dtype_name(a.dtype) if a.dtype.kind == "V" else None
    if name in _NARROW and narrow is None:
        narrow = name
        a = a.astype(np.float32) if kind == "values" else a.view(_NARROW[name][1])
    if kind == "values" and a.dtype == np.float16:
        a = a.astype(np.float32)  # exact
    return a, narrow


def _is_plain(x):
    """A Python number or sequence, not an array-like with a dtype of its own."""
    return not (
        isinstance(x, np.ndarray) or hasattr(x, "__array__") or hasattr(x, "__dlpack__")
        or isinstance(x, np.generic)
    )


def host_array(x, role, kind, fmt=None, plain=None):
    """x as a C-contiguous little-endian numpy array for the C API.

    role is the CLI option the array stands for ("a-scales"), named in messages. fmt, when
    given, is the format the array's codes are in: a float8 / bfloat16 array of a different
    format is refused rather than reinterpreted. plain is the dtype a plain Python number or
    sequence becomes when that conversion is exact (ints that fit, floats that are
    representable); otherwise it keeps numpy's dtype and the library names the problem.
    """
    if x is None:
        raise InputError(f"--{role}: None is not an array")
    if plain is not None and _is_plain(x):
        a = np.asarray(x)
        if a.dtype.kind in "iufb":
            with np.errstate(all="ignore"):
                b = a.astype(plain)
                if np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind == "f"):
                    x = b
    a, narrow = to_numpy(x, kind)
    if kind == "bits" and narrow and fmt and _NARROW[narrow][0] != fmt:
        raise InputError(f"--{role}: a {narrow} array holds {_NARROW[narrow][0]} codes, not {fmt}")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))  # same values, the byte order the library reads
    return a if a.flags.c_contiguous else a.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
