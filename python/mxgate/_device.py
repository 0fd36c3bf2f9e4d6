"""Device-resident adapter ops (docs/python.md §9): the DLPack arrays a device op receives and
the reading of the arrays it returns, with no framework of mxgate's own.

An op declared with memory="cuda" gets each input as a `DeviceArray`: a view of a buffer that
mxgate's device side allocated (guard bands around it, poisoned outputs: the same buffers a
plugin's device op gets), exposing `__dlpack__` / `__dlpack_device__` so that
torch.from_dlpack, jax.dlpack.from_dlpack, cupy.from_dlpack or numpy.from_dlpack take it without
a copy. The op returns any object with `__dlpack__` (a torch CUDA tensor, a JAX array); mxgate
copies its bytes into the call's output buffer on the device. A view is valid during the call
only: an op must not keep it.

Where libmxgate.so was built without CUDA, or the call's buffers are host memory (mxgate.check
on the host backend, a worker's call), the views are of host memory (DLPack device CPU) or
staged onto the device through the library (`stage`), and the op's result is read back as a
host op's is.
"""

import ctypes

import numpy as np

from . import _native
from .errors import AdapterError

KDL_CPU = 1
KDL_CUDA = 2
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT = 0, 1, 2, 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]


@_DELETER
def _no_delete(_):
    """The views' memory belongs to mxgate's call, which outlives them: nothing to free."""


_NAME = b"dltensor"
_USED = b"used_dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# numpy dtype (as the adapter layer holds a stored element) -> DLPack (code, bits).
_DL_OF = {np.dtype("<f4"): (KDL_FLOAT, 32), np.dtype("<f2"): (KDL_FLOAT, 16),
          np.dtype("<u2"): (KDL_UINT, 16), np.dtype("u1"): (KDL_UINT, 8)}


class DeviceArray:
    """A DLPack view of memory mxgate owns: `pointer` (device or host), `shape` and `strides`
    in elements (None: C-contiguous), `dtype` a numpy dtype naming the element."""

    def __init__(self, pointer, shape, dtype, strides=None, device=KDL_CUDA, device_id=0):
        self.pointer = int(pointer)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = None if strides is None else tuple(int(s) for s in strides)
        self.device = (device, device_id)
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A legacy "dltensor" capsule (the consumer's stream needs no wait: mxgate's writes to
        the buffer are complete before the op is called)."""
        if copy:
            raise BufferError("mxgate's device views are given without copies (copy=True)")
        if dl_device is not None and tuple(dl_device) != self.device:
            raise BufferError(f"this view is on DLPack device {self.device}, not {dl_device}")
        nd = len(self.shape)
        shape = (ctypes.c_int64 * max(nd, 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(nd, 1))(*self.strides)
        m = DLManagedTensor()
        m.dl_tensor.data = self.pointer
        m.dl_tensor.device = DLDevice(*self.device)
        m.dl_tensor.ndim = nd
        code, bits = _DL_OF[self.dtype]
        m.dl_tensor.dtype = DLDataType(code, bits, 1)
        m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        m.dl_tensor.strides = (ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
                               if strides is not None else None)
        m.dl_tensor.byte_offset = 0
        m.manager_ctx = None
        m.deleter = _no_delete
        self._keep.append((m, shape, strides))  # alive as long as this view (the call)
        return _api.PyCapsule_New(ctypes.addressof(m), _NAME, None)

    def __repr__(self):
        where = "cuda" if self.device[0] == KDL_CUDA else "cpu"
        return f"<mxgate DeviceArray {where} {self.dtype} {self.shape}>"


class Returned:
    """What an op returned, read through its DLPack capsule: pointer, shape, element bytes,
    whether C-contiguous, the DLPack device. `release()` hands the capsule back."""

    def __init__(self, value, op):
        dev = value.__dlpack_device__()
        self.device = int(dev[0])
        if self.device == KDL_CUDA:
            cap = value.__dlpack__(stream=1)  # ready on the legacy stream, where mxgate copies
        else:
            cap = value.__dlpack__()
        if not _api.PyCapsule_IsValid(cap, _NAME):
            raise AdapterError(f"{op}: the returned array's __dlpack__ gave no 'dltensor' capsule")
        self._cap = cap
        self._m = DLManagedTensor.from_address(_api.PyCapsule_GetPointer(cap, _NAME))
        t = self._m.dl_tensor
        self.pointer = (t.data or 0) + t.byte_offset
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.code, self.bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        if lanes != 1 or self.bits % 8:
            raise AdapterError(f"{op}: the returned array's DLPack dtype has {lanes} lanes of "
                               f"{self.bits} bits")
        self.itemsize = self.bits // 8
        self.contiguous = True
        if t.strides:
            expect = 1
            for i in reversed(range(t.ndim)):
                if self.shape[i] != 1 and t.strides[i] != expect:
                    self.contiguous = False
                expect *= self.shape[i]

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def host_copy(self, dtype):
        """The returned elements in a new host array of `dtype` (same itemsize), its shape."""
        out = np.empty(self.shape, dtype=dtype)
        if out.nbytes:
            if self.device == KDL_CUDA:
                _native.device_copy(out.ctypes.data, self.pointer, out.nbytes, 1)
            else:
                ctypes.memmove(out.ctypes.data, self.pointer, out.nbytes)
        return out

    def release(self):
        if self._cap is not None:
            _api.PyCapsule_SetName(self._cap, _USED)
            if self._m.deleter:
                self._m.deleter(ctypes.pointer(self._m))
            self._cap = None


def has_dlpack(value):
    return hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")


def device_available():
    """Whether this libmxgate.so can stage and copy device memory (a CUDA build)."""
    return _native.device_kind() == "cuda"
