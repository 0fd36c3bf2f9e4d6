"""The package's dtype, family and layout codes come from the library (mxgate_api_vocabulary) and
equal the C ABI's (include/mxgate/plugin.h, parsed here independently of the library), FP4 / FP6
and the NVFP4 families included, each with a default contract. Not covered: adapters running
FP4 / FP6 or NVFP4 ops (test_adapters_fp4.py)."""

import re

import pytest

import mxgate
from mxgate import adapter
from support import REPO


def abi_codes(prefix):
    """{lowercase name: code} of the enumerators MXGATE_<prefix>_NAME = N of plugin.h."""
    text = (REPO / "include" / "mxgate" / "plugin.h").read_text()
    return {m.group(1).lower(): int(m.group(2))
            for m in re.finditer(r"\bMXGATE_" + prefix + r"_(\w+) = (\d+)", text)}


# Guards against the Python side numbering a dtype unlike the ABI (an e2m3 tensor handed to a
# plugin as another format), or missing one the ABI has.
def test_dtype_codes_equal_the_abis():
    abi = abi_codes("DTYPE")
    abi.pop("none")
    assert adapter.DTYPE_CODE == abi
    assert {"e2m1", "e2m3", "e3m2"} <= set(adapter.DTYPES)


# Guards against a family code drifting from mxgate_op_family (a gemm_mx op called as another
# family), and the NVFP4 families missing.
def test_family_codes_equal_the_abis():
    abi = {name.replace("op_", ""): code for name, code in abi_codes("OP").items()}
    assert adapter.FAMILY_CODE == abi
    assert {"quantize_nvfp4", "dequantize_nvfp4", "gemm_nvfp4"} <= set(adapter.FAMILIES)


# Guards against a layout code drifting from mxgate_layout.
def test_layout_codes_equal_the_abis():
    assert adapter.LAYOUT_CODE == abi_codes("LAYOUT")


# Guards against the scaled formats losing a member: MXFP4 and NVFP4 share E2M1, MXFP6 has both
# six-bit formats, MXINT8 its int8 element with e8m0 scales, and the vocabulary states the packing
# of E2M1 (two per byte).
def test_scaled_formats_and_storage():
    assert set(adapter.SCALED_FORMATS) == {"mxfp8", "mxfp6", "mxfp4", "nvfp4", "mxint8"}
    by_name = {d["name"]: d for d in adapter.VOCABULARY["dtypes"]}
    assert set(by_name["e2m1"]["element_of"]) == {"mxfp4", "nvfp4"}
    assert by_name["e2m1"]["storage_bytes"] == 0 and by_name["e2m1"]["bits"] == 4
    assert {d for d, v in by_name.items() if "mxfp6" in v["element_of"]} == {"e2m3", "e3m2"}
    assert by_name["e4m3fn"]["scale_of"] == ["nvfp4"]
    assert by_name["mxint8"]["element_of"] == ["mxint8"] and by_name["mxint8"]["bits"] == 8
    assert "mxint8" in by_name["e8m0"]["scale_of"]


# The library's families a Python adapter cannot declare yet (the grouped GEMMs take group
# offsets, which the adapter's call form has no role for); the list can only shrink.
NO_PYTHON_SUPPORT_YET = ("grouped_gemm_block", "grouped_gemm_mx")


# Guards against a family of the ABI that a Python adapter cannot declare (no default contract or
# roles: a KeyError, or a refusal), and an unknown family failing without a message naming it.
def test_every_family_has_a_default_contract():
    for family in adapter.FAMILIES:
        if family in NO_PYTHON_SUPPORT_YET:
            with pytest.raises(mxgate.AdapterError, match=f"family '{family}' has no Python "
                                                          "adapter support in this package"):
                mxgate.contract(family)
            continue
        assert isinstance(mxgate.contract(family), adapter.Contract), family
    assert set(NO_PYTHON_SUPPORT_YET) <= set(adapter.FAMILIES)
    assert mxgate.contract("gemm_nvfp4").global_dtypes == ("f32",)
    assert mxgate.contract("cast", out_dtypes=("e2m1", "e2m3", "e3m2")).out_dtypes[0] == "e2m1"
    with pytest.raises(mxgate.AdapterError, match="unknown family 'gemm_nvfp5'"):
        mxgate.contract("gemm_nvfp5")
