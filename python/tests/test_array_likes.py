"""What the functions accept besides C-contiguous numpy arrays: objects with __array__, objects
with only DLPack, an object on a non-CPU DLPack device (copied to the host through .cpu()),
Fortran-ordered, strided and big-endian arrays, plain Python numbers and lists. Each must give
the bytes the plain array gives; a plain list converts only exactly (0.1 stays float64 and is
refused as a block scale, like a float64 .npy).
Not covered: real torch / CuPy / JAX objects (not installed here; they run on the H200 later)."""

import numpy as np
import pytest

import mxgate
from support import same_bits

X = np.random.default_rng(3).standard_normal((4, 96)).astype(np.float32)


class WithArray:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class DlpackOnly:
    """Only the DLPack protocol, like a framework tensor without __array__."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None, **kwargs):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class OnDevice:
    """A tensor on a CUDA device (DLPack device type 2): numpy cannot read it, .cpu() copies it."""

    def __init__(self, a):
        self.a = a
        self.copies = 0

    def __dlpack__(self, stream=None, **kwargs):
        raise BufferError("device memory")

    def __dlpack_device__(self):
        return (2, 0)

    def cpu(self):
        self.copies += 1
        return DlpackOnly(self.a)


def variants(a):
    big = a.astype(a.dtype.newbyteorder(">"))
    fortran = np.asfortranarray(a)
    strided = np.repeat(a, 2, axis=1)[:, ::2]
    return {"__array__": WithArray(a), "dlpack": DlpackOnly(a), "device": OnDevice(a),
            "fortran": fortran, "strided": strided, "big-endian": big}


# Guards against an array-like being read with the wrong strides, byte order or device (a
# Fortran array read as C order transposes the data silently; device memory read directly
# crashes).
@pytest.mark.parametrize("kind", ["__array__", "dlpack", "device", "fortran", "strided",
                                  "big-endian"])
def test_array_likes_give_the_plain_arrays_bytes(kind):
    want_codes, want_scales = mxgate.quantize_mx(X, "e4m3fn", "ocp_mx")
    x = variants(X)[kind]
    codes, scales = mxgate.quantize_mx(x, "e4m3fn", "ocp_mx")
    assert same_bits(codes, want_codes) and same_bits(scales, want_scales)
    if kind == "device":
        assert x.copies == 1
    c = variants(codes)[kind]
    s = variants(scales)[kind] if kind != "device" else OnDevice(scales)
    assert same_bits(mxgate.dequantize(c, s, "e4m3fn", "ocp_mx"),
                     mxgate.dequantize(codes, scales, "e4m3fn", "ocp_mx"))


# Guards against plain Python input being refused or converted inexactly: ints and floats for
# encode; ints that fit as codes; a scalar keeps its 0-d shape.
def test_plain_python_numbers_and_lists():
    assert mxgate.encode([448, 464.0, 1e9], "e4m3fn", "ocp_mx").tolist() == [0x7E, 0x7E, 0x7E]
    assert mxgate.encode(1.0, "bf16", "ocp_mx").shape == ()
    assert mxgate.decode([0x3F80, 0xFF80], "bf16", "ocp_mx").tolist() == [1.0, -np.inf]
    assert mxgate.decode([[0x38]], "e4m3fn", "ocp_mx").tolist() == [[1.0]]


# Guards against an inexact conversion of plain input: 0.1 is not a float32, so a list of it
# stays float64 and is refused with the CLI's message for a float64 scale file; -1 is no code.
def test_plain_lists_convert_only_exactly():
    codes = np.full((1, 128), 0x38, np.uint8)
    with pytest.raises(ValueError, match=r"--a-scales: expected float32 .*got float64"):
        mxgate.gemm(codes, [[0.1]], codes, [[1.0]], scheme="block")
    assert mxgate.gemm(codes, [[0.5]], codes, [[2.0]], scheme="block").tolist() == [[128.0]]
    with pytest.raises(ValueError, match=r"--codes: expected uint8 or uint16, got int64"):
        mxgate.decode([-1], "e4m3fn", "ocp_mx")
