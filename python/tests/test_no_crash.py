"""The interpreter never crashes: garbage shapes, dtypes and values through every function of the
package, and misuse of the C ABI itself (NULL pointers, sizes that disagree with shapes, unknown
verbs, a verdict struct too small), end in a result or a Python exception, never in a signal.
These run in the test process on purpose: a crash kills pytest, and ctest reports it.
The seeded garbage loop prints its seed; rerun one with MXGATE_GARBAGE_SEED=S.
Not covered: wrong-but-plausible inputs' messages (test_bad_input.py), resource exhaustion."""

import ctypes
import os

import numpy as np
import pytest

import mxgate
from mxgate import _native

ALLOWED = (ValueError, TypeError)

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.longdouble, object, "U3",
          [("x", np.float32), ("y", np.uint8)]]
SHAPES = [(), (0,), (1,), (7,), (0, 0), (0, 5), (5, 0), (1, 1), (2, 64), (3, 33), (1, 1, 1),
          (2, 3, 4), (1,) * 10]


def garbage_arrays(rng, n):
    for _ in range(n):
        dtype = DTYPES[rng.integers(len(DTYPES))]
        shape = SHAPES[rng.integers(len(SHAPES))]
        a = np.zeros(shape, dtype=dtype)
        if a.dtype.kind in "iuf" and a.size:
            a = rng.integers(0, 256, size=shape).astype(a.dtype)
        choice = rng.integers(4)
        if choice == 1 and a.ndim >= 2:
            a = np.asfortranarray(a)
        elif choice == 2 and a.ndim >= 1 and a.shape[-1] > 1:
            a = a[..., ::2]  # not contiguous
        elif choice == 3 and a.dtype.kind in "iuf":
            a = a.astype(a.dtype.newbyteorder(">"))
        yield a


def calls(a, b, c):
    """Every function with garbage in its array arguments and plausible options."""
    return [
        lambda: mxgate.encode(a, "e4m3fn", "ocp_mx"),
        lambda: mxgate.encode(a, "bf16", "ocp_mx"),
        lambda: mxgate.decode(a, "e8m0", "ocp_mx"),
        lambda: mxgate.decode(a, "fp16", "ocp_mx"),
        lambda: mxgate.quantize_mx(a, "e4m3fn", "ocp_mx"),
        lambda: mxgate.quantize_block(a, "e4m3fn", "deepgemm", scheme="w128x128"),
        lambda: mxgate.quantize_mx(a, "e5m2", "torchao_rceil", scale_layout="nv_swizzle_128x4"),
        lambda: mxgate.dequantize(a, b, "e4m3fn", "ocp_mx"),
        lambda: mxgate.dequantize(a, b, "e4m3fn", "vllm_group_quant", scheme="w128x128"),
        lambda: mxgate.gemm(a, b, c, b),
        lambda: mxgate.gemm(a, None, c, None, scheme="bf16"),
        lambda: mxgate.gemm(a, b, c, a, scheme="block"),
        lambda: mxgate.check_gemm(a, b, c, b, a),
        lambda: mxgate.check_gemm(a, None, c, None, b, scheme="bf16", mode="bound"),
    ]


# Guards against a crash (segfault, abort, a C++ exception escaping the C ABI) on any
# combination of garbage dtypes, shapes, memory orders and byte orders.
def test_garbage_arrays_raise_or_return():
    seed = int(os.environ.get("MXGATE_GARBAGE_SEED", "7"))
    print(f"garbage seed {seed} (MXGATE_GARBAGE_SEED={seed} reruns it)")
    rng = np.random.default_rng(seed)
    arrays = list(garbage_arrays(rng, 90))
    raised = returned = 0
    for i in range(0, len(arrays) - 2, 3):
        for call in calls(*arrays[i:i + 3]):
            try:
                call()
                returned += 1
            except ALLOWED:
                raised += 1
    assert raised > 0 and raised + returned == 14 * 30


# Guards against a crash on values that are not arrays at all.
@pytest.mark.parametrize("junk", [None, "abc", b"\x00\x01", 3 + 4j, object(), [[1, 2], [3]],
                                  {"a": 1}, [None], float("nan"), 10**30])
def test_non_arrays_raise_or_return(junk):
    for call in calls(junk, junk, junk):
        try:
            call()
        except ALLOWED:
            pass


# Guards against a crash on option values that are not strings, or strings the C side must not
# trust (embedded "=", very long, non-ASCII).
@pytest.mark.parametrize("opt", [None, 3, "", "x" * 100000, "ocp_mx=1", "e4m3fn\u00e9", "--mode"])
def test_junk_options_raise_or_return(opt):
    x = np.ones((2, 64), np.float32)
    for call in [lambda: mxgate.encode(x, opt, "ocp_mx"),
                 lambda: mxgate.encode(x, "e4m3fn", opt),
                 lambda: mxgate.quantize(x, opt, "e4m3fn", "ocp_mx"),
                 lambda: mxgate.quantize_mx(x, "e4m3fn", "ocp_mx", scale_layout=opt),
                 lambda: mxgate.check_gemm(np.ones((2, 64), np.uint8), np.ones((2, 2), np.uint8),
                                           np.ones((2, 64), np.uint8), np.ones((2, 2), np.uint8),
                                           np.zeros((2, 2), np.float32), mode="bound",
                                           acc_bits=opt)]:
        try:
            call()
        except ALLOWED:
            pass


def raw_run(verb, names=None, values=None, count=0, arrays=None, array_count=0, result=True):
    out = ctypes.c_void_p()
    status = _native._lib.mxgate_api_run(verb, count, names, values, array_count, arrays,
                                         ctypes.byref(out) if result else None)
    if out.value:
        _native._lib.mxgate_api_result_free(out)
    return status, _native._lib.mxgate_api_last_error().decode()


def one_array(**fields):
    arrays = (_native.Array * 1)()
    shape = (ctypes.c_uint64 * 2)(2, 64)
    data = (ctypes.c_uint8 * 128)()
    defaults = dict(name=b"values", descr=b"<f4", rank=2, shape=shape, data=ctypes.addressof(data),
                    nbytes=512)
    defaults.update(fields)
    for key, value in defaults.items():
        setattr(arrays[0], key, value)
    return arrays, (shape, data)


def fmt_options():
    names = (ctypes.c_char_p * 2)(b"format", b"convention")
    values = (ctypes.c_char_p * 2)(b"e4m3fn", b"ocp_mx")
    return names, values


# Guards against the C ABI trusting its caller: NULL verb, names, values, arrays, result; an
# array whose nbytes disagrees with its shape (it must not be read), NULL data, an absurd rank
# or a shape whose product overflows. Each is refused with a message.
@pytest.mark.parametrize(
    "case",
    ["null verb", "unknown verb", "null result", "null names", "null arrays", "nameless array",
     "nbytes short", "null data", "null descr", "rank 40", "null shape", "overflowing shape",
     "array twice"],
)
def test_c_abi_misuse_is_refused(case):
    names, values = fmt_options()
    huge = (ctypes.c_uint64 * 2)(2**62, 2**62)
    arrays, keep = one_array()
    kwargs = dict(names=names, values=values, count=2, arrays=arrays, array_count=1)
    if case == "null verb":
        status, message = raw_run(None, **kwargs)
    elif case == "unknown verb":
        status, message = raw_run(b"explode", **kwargs)
    elif case == "null result":
        status, message = raw_run(b"encode", result=False, **kwargs)
    elif case == "null names":
        status, message = raw_run(b"encode", None, None, 2, arrays, 1)
    elif case == "null arrays":
        status, message = raw_run(b"encode", names, values, 2, None, 1)
    else:
        fields = {"nameless array": dict(name=None), "nbytes short": dict(nbytes=511),
                  "null data": dict(data=None), "null descr": dict(descr=None),
                  "rank 40": dict(rank=40), "null shape": dict(shape=None),
                  "overflowing shape": dict(shape=huge), "array twice": {}}[case]
        arrays, keep = one_array(**fields)
        if case == "array twice":
            arrays = (_native.Array * 2)(arrays[0], arrays[0])
        status, message = raw_run(b"encode", names, values, 2, arrays, len(arrays))
    assert status == _native.ERROR_INPUT, (case, status, message)
    assert message, case


# Guards against the result accessors crashing on NULL, an index out of range, a result without
# a verdict, or a verdict struct smaller than the library's.
def test_result_accessors_refuse_misuse():
    lib = _native._lib
    out = _native.Array()
    assert lib.mxgate_api_result_array(None, 0, ctypes.byref(out)) == _native.ERROR_INPUT
    assert lib.mxgate_api_result_array_count(None) == 0
    assert lib.mxgate_api_result_text(None) == b""
    lib.mxgate_api_result_free(None)
    result = ctypes.c_void_p()
    assert lib.mxgate_api_run(b"formats", 0, None, None, 0, None, ctypes.byref(result)) == 0
    try:
        assert lib.mxgate_api_result_array(result, 0, ctypes.byref(out)) == _native.ERROR_INPUT
        verdict = _native.VerdictStruct()
        verdict.struct_size = ctypes.sizeof(verdict)
        assert lib.mxgate_api_result_verdict(result, ctypes.byref(verdict)) == _native.ERROR_INPUT
        assert "no verdict" in lib.mxgate_api_last_error().decode()
    finally:
        lib.mxgate_api_result_free(result)
    # A struct_size of 16 gets 16 bytes and no more: the canary after them survives.
    _, _, _ = _native.run("formats")
    a = np.ones((1, 32), np.uint8)
    s = np.full((1, 1), 127, np.uint8)
    c = np.zeros((1, 1), np.float32)
    arrays = [("a", a), ("a-scales", s), ("b", a), ("b-scales", s), ("c", c)]
    names = (ctypes.c_char_p * 1)(b"scheme")
    values = (ctypes.c_char_p * 1)(b"mx")
    c_arrays = (_native.Array * 5)()
    keep = []
    for slot, (name, arr) in zip(c_arrays, arrays):
        shape = (ctypes.c_uint64 * 2)(*arr.shape)
        keep.append(shape)
        slot.name, slot.descr, slot.rank = name.encode(), arr.dtype.str.encode(), 2
        slot.shape, slot.data, slot.nbytes = shape, arr.ctypes.data, arr.nbytes
    assert lib.mxgate_api_run(b"check-gemm", 1, names, values, 5, c_arrays,
                              ctypes.byref(result)) == 0
    try:
        small = (ctypes.c_uint8 * 64)(*([0xAB] * 64))
        ctypes.cast(small, ctypes.POINTER(ctypes.c_uint32))[0] = 16
        assert lib.mxgate_api_result_verdict(result, ctypes.cast(small, ctypes.POINTER(
            _native.VerdictStruct))) == 0
        assert bytes(small[16:]) == b"\xab" * 48
        assert ctypes.cast(small, ctypes.POINTER(ctypes.c_uint32))[0] == 16
        tiny = _native.VerdictStruct()
        tiny.struct_size = 4
        assert lib.mxgate_api_result_verdict(result, ctypes.byref(tiny)) == _native.ERROR_INPUT
    finally:
        lib.mxgate_api_result_free(result)
