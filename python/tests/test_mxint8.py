"""MXINT8 through Python adapters (docs/formats.md §1.5): the library's vocabulary names the dtype
(code and widths from common/dtypes.h, not from Python), NumpyMxint8Adapter's quantize_mx and
dequantize ops written from the OCP rules pass quantize.bit_exact, dequantize.bit_exact and
metamorphic.block_scale_shift under ocp_mx, and its two planted faults (codes decoded as unsigned;
the shared exponent one too large) fail with a located element that the correct adapter passes.
The adapter's decode table is also held to the two's complement rule written out here. Not
covered: MXINT8 GEMM (no op family multiplies MXINT8), casts of single values to mxint8 (no
convention defines one), the reference's encoder (tests/test_mxint8.cpp)."""

import numpy as np
import pytest

import mxgate
from mxgate import adapter
from mxgate.adapters import numpy_faulty
from mxgate.adapters.numpy import MXINT8, NumpyMxint8Adapter


# Guards against Python numbering or sizing MXINT8 by hand: the library's vocabulary gives its
# code (15, after e4m3b11fnuz), its 8 bits with 6 fraction bits, one byte of storage, and its
# scaled format.
def test_vocabulary_names_mxint8():
    by_name = {d["name"]: d for d in adapter.VOCABULARY["dtypes"]}
    d = by_name["mxint8"]
    assert adapter.DTYPE_CODE["mxint8"] == d["code"] == 15
    assert (d["bits"], d["exponent_bits"], d["mantissa_bits"], d["storage_bytes"]) == (8, 0, 6, 1)
    assert d["element_of"] == ["mxint8"]
    assert adapter.NUMPY_OF["mxint8"] == np.dtype("u1")


# Guards against the adapter's decode table reading the byte as unsigned or sign-magnitude: every
# code is its two's complement integer over 64.
def test_adapter_table_is_twos_complement():
    for code in range(256):
        signed = code - 256 if code >= 128 else code
        assert MXINT8[code] == np.float32(signed / 64.0), code


# Guards against the properties not reaching MXINT8 (a table of FP8 formats that leaves it out)
# and against a correct MXINT8 quantizer / dequantizer failing: the adapter passes every seed,
# and the runs did exercise its ops.
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numpy_mxint8_passes(seed):
    for prop in ("quantize.bit_exact", "dequantize.bit_exact", "metamorphic.block_scale_shift"):
        r = mxgate.check(prop, NumpyMxint8Adapter(), cases=60, seed=seed)
        assert r.passed, str(r)
        assert r.cases > 0 and r.unsupported < r.cases, str(r)
        assert set(r.ops) & {"quantize_mxint8", "dequantize_mxint8"}, str(r)


FAULTS = [
    # Unsigned decode differs at every code >= 0x80: one negative element shows it.
    (numpy_faulty.Mxint8UnsignedDecode, "dequantize.bit_exact"),
    # One more in the shared exponent moves the scale byte of any non-zero, finite block.
    (numpy_faulty.Mxint8ScaleOffByOne, "quantize.bit_exact"),
]


# Each planted MXINT8 fault fails its property within a few cases, with the element located, and
# the correct adapter passes the same shrunk case.
@pytest.mark.parametrize("plant,prop", FAULTS, ids=[f[0].__name__ for f in FAULTS])
def test_planted_mxint8_fault_fails_located(plant, prop):
    r = mxgate.check(prop, plant(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", str(r)
    assert r.cases <= 20, str(r)
    assert r.location is not None, str(r)
    assert plant.description.startswith("planted fault:")
    clean = mxgate.check(prop, NumpyMxint8Adapter(), case=r.counterexample)
    assert clean.passed, str(clean)


# Guards against the library's MXINT8 quantizer drifting from the OCP rule, and against a
# convention without an MXINT8 quantizer silently lending another one: hand-computed bytes under
# ocp_mx (amax 3 -> byte 128, x * 32; amax 0.75 -> byte 126, x * 128), an InputError naming
# ocp_mx otherwise.
def test_library_quantizes_mxint8_under_ocp_mx_only():
    x = np.zeros((1, 34), np.float32)
    x[0, :3] = [3.0, -3.0, 0.01]
    x[0, 32] = 0.75
    codes, scales = mxgate.quantize_mx(x, "mxint8", "ocp_mx")
    assert scales.tolist() == [[128, 126]]
    want = [0] * 34
    want[0], want[1], want[32] = 96, 256 - 96, 96
    assert codes.tolist() == [want]
    with pytest.raises(mxgate.InputError, match="ocp_mx"):
        mxgate.quantize_mx(x, "mxint8", "transformer_engine")
