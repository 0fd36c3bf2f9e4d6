"""The C ABI of libmxgate.so (include/mxgate/api.h) through ctypes.

The library is loaded once, at import. It is looked for, in this order:
  1. the file named by the environment variable MXGATE_LIBRARY;
  2. the copy an installed package carries (mxgate/_lib/libmxgate.so);
  3. a checkout's default build: <repo>/build/default/capi/libmxgate.so (built by `./mxgate`).
"""

import ctypes
import json
import os
from pathlib import Path

import numpy as np

from .errors import Error, InputError, LibraryError, OutOfMemory

API_VERSION = 1
LIBRARY_NAME = "libmxgate.so"

# mxgate_api_status
OK = 0
ERROR_INPUT = 2
ERROR_MEMORY = 4
ERROR_RUNTIME = 5
ERROR_INTERNAL = 6


class Array(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("descr", ctypes.c_char_p),
        ("rank", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("shape", ctypes.POINTER(ctypes.c_uint64)),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_uint64),
    ]


class Element(ctypes.Structure):
    _fields_ = [
        ("row", ctypes.c_uint64),
        ("col", ctypes.c_uint64),
        ("expected_bits", ctypes.c_uint32),
        ("actual_bits", ctypes.c_uint32),
        ("ulp", ctypes.c_uint64),
        ("expected", ctypes.c_double),
        ("actual", ctypes.c_double),
        ("exact", ctypes.c_double),
        ("bound", ctypes.c_double),
        ("excess", ctypes.c_double),
    ]


class VerdictStruct(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ok", ctypes.c_uint32),
        ("mode", ctypes.c_uint32),
        ("output", ctypes.c_uint32),
        ("rows", ctypes.c_uint64),
        ("cols", ctypes.c_uint64),
        ("mismatches", ctypes.c_uint64),
        ("has_first", ctypes.c_uint32),
        ("has_worst", ctypes.c_uint32),
        ("first", Element),
        ("worst", Element),
    ]


def candidate_paths():
    """Where the library is looked for, in order (see the module docstring)."""
    paths = []
    env = os.environ.get("MXGATE_LIBRARY")
    if env:
        paths.append(Path(env))
    here = Path(__file__).resolve().parent
    paths.append(here / "_lib" / LIBRARY_NAME)
    paths.append(here.parent.parent / "build" / "default" / "capi" / LIBRARY_NAME)
    return paths


def _load():
    tried = []
    for path in candidate_paths():
        if path.is_file():
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as e:
                raise ImportError(f"mxgate: cannot load {path}: {e}") from e
            return lib, path
        tried.append(str(path))
        if os.environ.get("MXGATE_LIBRARY"):
            break  # an explicit choice is not second-guessed
    raise ImportError(
        "mxgate: libmxgate.so not found (looked at: " + ", ".join(tried) + "). In a checkout, "
        "run ./mxgate --help once (it builds the library); or pip install the package; or set "
        "MXGATE_LIBRARY to the library's path."
    )


_lib, library_path = _load()

_lib.mxgate_api_version.argtypes = []
_lib.mxgate_api_version.restype = ctypes.c_uint32
_lib.mxgate_api_run.argtypes = [
    ctypes.c_char_p,
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_size_t,
    ctypes.POINTER(Array),
    ctypes.POINTER(ctypes.c_void_p),
]
_lib.mxgate_api_run.restype = ctypes.c_int
_lib.mxgate_api_last_error.argtypes = []
_lib.mxgate_api_last_error.restype = ctypes.c_char_p
_lib.mxgate_api_result_array_count.argtypes = [ctypes.c_void_p]
_lib.mxgate_api_result_array_count.restype = ctypes.c_size_t
_lib.mxgate_api_result_array.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Array)]
_lib.mxgate_api_result_array.restype = ctypes.c_int
_lib.mxgate_api_result_text.argtypes = [ctypes.c_void_p]
_lib.mxgate_api_result_text.restype = ctypes.c_char_p
_lib.mxgate_api_result_verdict.argtypes = [ctypes.c_void_p, ctypes.POINTER(VerdictStruct)]
_lib.mxgate_api_result_verdict.restype = ctypes.c_int
_lib.mxgate_api_result_free.argtypes = [ctypes.c_void_p]
_lib.mxgate_api_result_free.restype = None
_lib.mxgate_api_check.argtypes = [
    ctypes.c_char_p,
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_void_p),
]
_lib.mxgate_api_check.restype = ctypes.c_int
_lib.mxgate_api_vocabulary.argtypes = []
_lib.mxgate_api_vocabulary.restype = ctypes.c_char_p

if _lib.mxgate_api_version() != API_VERSION:
    raise ImportError(
        f"mxgate: {library_path} implements C API version {_lib.mxgate_api_version()}, this "
        f"package needs {API_VERSION}: rebuild the library (./mxgate --help) or reinstall"
    )


def _error(status: int, verb: str) -> Error:
    """The exception of a failed call (errors.py): InputError for bad input (a ValueError),
    OutOfMemory, or LibraryError naming the status."""
    message = (_lib.mxgate_api_last_error() or b"").decode("utf-8", "replace")
    if status == ERROR_INPUT:
        return InputError(message, verb=verb)
    if status == ERROR_MEMORY:
        return OutOfMemory(message)
    return LibraryError(message, status=status)


def _check(status, verb):
    if status != OK:
        raise _error(status, verb)


def run(verb, options=(), arrays=(), want_verdict=False):
    """Runs a verb of the C API.

    options: (name, value) pairs, value a str or None (a flag); arrays: (name, ndarray) pairs,
    each C-contiguous and little-endian. Returns (outputs, text, verdict): outputs a dict of role
    -> ndarray (copies), text what the CLI prints, verdict a VerdictStruct when asked for.
    Raises InputError (a ValueError) with the CLI's message on bad input.
    """
    names = [n.encode() for n, _ in options]
    values = [None if v is None else v.encode() for _, v in options]
    c_names = (ctypes.c_char_p * len(names))(*names)
    c_values = (ctypes.c_char_p * len(values))(*values)
    shapes = [(ctypes.c_uint64 * a.ndim)(*a.shape) for _, a in arrays]  # alive until the call ends
    c_arrays = (Array * len(arrays))(*(
        Array(name.encode(), a.dtype.str.encode(), a.ndim, 0, shape,
              a.ctypes.data if a.nbytes else None, a.nbytes)
        for (name, a), shape in zip(arrays, shapes)
    ))
    result = ctypes.c_void_p()
    _check(
        _lib.mxgate_api_run(
            verb.encode(), len(names), c_names, c_values, len(arrays), c_arrays,
            ctypes.byref(result),
        ),
        verb,
    )
    try:
        outputs = {}
        out = Array()
        for i in range(_lib.mxgate_api_result_array_count(result)):
            _check(_lib.mxgate_api_result_array(result, i, ctypes.byref(out)), verb)
            dtype = np.dtype(out.descr.decode())
            shape = tuple(out.shape[d] for d in range(out.rank))
            if out.nbytes:
                raw = (ctypes.c_char * out.nbytes).from_address(out.data)
                array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
            else:
                array = np.empty(shape, dtype=dtype)
            outputs[out.name.decode()] = array
        text = _lib.mxgate_api_result_text(result).decode()
        verdict = None
        if want_verdict:
            verdict = VerdictStruct()
            verdict.struct_size = ctypes.sizeof(VerdictStruct)
            _check(_lib.mxgate_api_result_verdict(result, ctypes.byref(verdict)), verb)
        return outputs, text, verdict
    finally:
        _lib.mxgate_api_result_free(result)


def names(verb):
    """The lines of a listing verb (formats, conventions) as a tuple."""
    _, text, _ = run(verb)
    return tuple(line for line in text.splitlines() if line)


def check(prop, options, impl_address):
    """mxgate_api_check: the JSON text of a property run against the mxgate_impl at
    impl_address (prop None: the property list). Raises InputError (a ValueError) on bad
    input; its verb is "property", the CLI verb of the same run."""
    names = [n.encode() for n, _ in options]
    values = [None if v is None else v.encode() for _, v in options]
    c_names = (ctypes.c_char_p * len(names))(*names)
    c_values = (ctypes.c_char_p * len(values))(*values)
    result = ctypes.c_void_p()
    _check(_lib.mxgate_api_check(None if prop is None else prop.encode(), len(names), c_names,
                                 c_values, impl_address, ctypes.byref(result)), "property")
    try:
        return _lib.mxgate_api_result_text(result).decode()
    finally:
        _lib.mxgate_api_result_free(result)


def vocabulary():
    """mxgate_api_vocabulary: the library's dtypes, scaled formats, op families and layouts with
    their ABI codes (common/dtypes.h, contract/contract.h), parsed from its JSON."""
    return json.loads(_lib.mxgate_api_vocabulary().decode())


# Device memory and the in-process cast survey (api.h mxgate_api_survey_cast, mxgate_api_device_*).
# A library older than these functions has none of them: device_kind() is then "" and
# survey_cast raises LibraryError.
PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)
_HAS_SURVEY = hasattr(_lib, "mxgate_api_survey_cast")
if _HAS_SURVEY:
    _lib.mxgate_api_survey_cast.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p,
                                            ctypes.c_char_p, PROGRESS_FN, ctypes.c_void_p,
                                            ctypes.POINTER(ctypes.c_void_p)]
    _lib.mxgate_api_survey_cast.restype = ctypes.c_int
_HAS_SURVEY_CALLS = hasattr(_lib, "mxgate_api_survey_cast_calls")
if _HAS_SURVEY_CALLS:
    _lib.mxgate_api_survey_cast_calls.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64,
        PROGRESS_FN, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    _lib.mxgate_api_survey_cast_calls.restype = ctypes.c_int
if _HAS_SURVEY:
    _lib.mxgate_api_device_kind.argtypes = []
    _lib.mxgate_api_device_kind.restype = ctypes.c_char_p
    _lib.mxgate_api_device_alloc.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p)]
    _lib.mxgate_api_device_alloc.restype = ctypes.c_int
    _lib.mxgate_api_device_free.argtypes = [ctypes.c_void_p]
    _lib.mxgate_api_device_free.restype = ctypes.c_int
    _lib.mxgate_api_device_copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                            ctypes.c_uint32]
    _lib.mxgate_api_device_copy.restype = ctypes.c_int
    _lib.mxgate_api_device_sync.argtypes = [ctypes.c_void_p]
    _lib.mxgate_api_device_sync.restype = ctypes.c_int


def device_kind():
    """"cuda" when the library can hold device memory (a cuda-preset build), else ""."""
    return _lib.mxgate_api_device_kind().decode() if _HAS_SURVEY else ""


def device_alloc(nbytes):
    p = ctypes.c_void_p()
    _check(_lib.mxgate_api_device_alloc(nbytes, ctypes.byref(p)) if _HAS_SURVEY else ERROR_RUNTIME,
           "device")
    return p.value


def device_free(pointer):
    if _HAS_SURVEY and pointer:
        _lib.mxgate_api_device_free(pointer)


def device_copy(dst, src, nbytes, kind):
    """kind 0 host -> device, 1 device -> host, 2 device -> device; synchronous."""
    _check(_lib.mxgate_api_device_copy(dst, src, nbytes, kind) if _HAS_SURVEY else ERROR_RUNTIME,
           "device")


def device_sync(stream):
    _check(_lib.mxgate_api_device_sync(stream) if _HAS_SURVEY else ERROR_RUNTIME, "device")


def survey_cast(impl_address, op_index, target, inputs, progress=None, call_inputs=0):
    """mxgate_api_survey_cast: the survey's text lines (properties::survey_lines' form).
    progress(done, total), when given, hears the inputs compared so far. call_inputs: a host
    op's inputs per call (0: the library's default; a library older than
    mxgate_api_survey_cast_calls always takes its default)."""
    if not _HAS_SURVEY:
        raise LibraryError(f"{library_path} has no mxgate_api_survey_cast (rebuild it)",
                           status=ERROR_RUNTIME)
    heard = []

    def relay(_, done, total):
        if progress is not None and not heard:
            try:
                progress(done, total)
            except BaseException as e:  # nothing may unwind into C; raised after the call
                heard.append(e)

    cb = PROGRESS_FN(relay)
    result = ctypes.c_void_p()
    if _HAS_SURVEY_CALLS:
        status = _lib.mxgate_api_survey_cast_calls(impl_address, op_index, target.encode(),
                                                   inputs.encode(), call_inputs, cb, None,
                                                   ctypes.byref(result))
    else:
        status = _lib.mxgate_api_survey_cast(impl_address, op_index, target.encode(),
                                             inputs.encode(), cb, None, ctypes.byref(result))
    if heard:
        if status == OK:
            _lib.mxgate_api_result_free(result)
        raise heard[0]
    _check(status, "survey")
    try:
        return _lib.mxgate_api_result_text(result).decode()
    finally:
        _lib.mxgate_api_result_free(result)
