"""`mxgate survey` (tools/mxgate/survey_cli.cpp; docs/python.md §13) at CI size: builtin, the
example plugin with its planted faults and the numpy adapters, casts on the sampled inputs. The
table must say, per implementation, what the example plugin's cast equals and where its
planted tie fault differs, and which properties catch each planted fault with its shrunk case;
the correct implementations pass. The expected facts come from the example plugin's own claims
(plugins/example: cuda_satfinite casts, docs/plugins.md) and the planted faults' descriptions,
not from the survey."""

import json
import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SPECS = ("builtin,example:all,py:mxgate.adapters.numpy:NumpyAdapter,"
         "py:mxgate.adapters.numpy_faulty:DropTrailingK,py:mxgate.adapters.numpy_faulty:ShiftE8m0,"
         "py:worker_adapters:Missing")


@pytest.fixture(scope="module")
def survey(cli, tmp_path_factory):
    import subprocess

    out = tmp_path_factory.mktemp("survey")
    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent), env.get("PYTHONPATH", "")])
    r = subprocess.run([str(cli.path), "survey", "--impl", SPECS, "--cast-inputs", "sample",
                        "--cases", "30", "--json", "--markdown", str(out / "s.md")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout), (out / "s.md").read_text()


def impl(survey, name):
    for i in survey[0]["implementations"]:
        if i["name"] == name or i["spec"] == name:
            return i
    raise AssertionError(f"{name} not in the survey")


def verdicts(i):
    return {p["property"]: p["verdict"] for p in i["properties"]}


# The example cast claims cuda_satfinite: the survey finds it bit-exact with that claim on every
# sampled input of each target, and lists the other conventions with the same table.
def test_correct_cast_matches_its_claim(survey):
    casts = {c["target"]: c for c in impl(survey, "example")["casts"]}
    assert set(casts) == {"e4m3fn", "e5m2", "e8m0"}
    for c in casts.values():
        assert c["inputs"] == 393216 and c["error"] == ""
        assert "cuda_satfinite" in ",".join(c["matches"]), c


# The planted ties-away cast differs from every convention on e4m3fn, first at a tie.
def test_planted_cast_fault_matches_nothing(survey):
    c = {c["target"]: c for c in impl(survey, "example_faulty_cast_ties_away")["casts"]}["e4m3fn"]
    assert c["matches"] == []
    claimed = [cl for cl in c["claims"] if "cuda_satfinite" in cl["conventions"]][0]
    assert claimed["mismatches"] > 0 and claimed["first"].startswith("0x"), claimed


FP4_PROPERTIES = ("quantize_fp4.", "dequantize_fp4.", "gemm_fp4.")
# Unsupported on the host whatever the implementation: 2^31 elements, device only.
DEVICE_ONLY = ("dequantize.large_offsets",)
# Apply by family but need an op that takes an absent B scale (the built-in dot_scaled GEMM).
ABSENT_B_SCALE = ("gemm.default_scale",)
# Apply by family to every quantize_mx op but need the 32 x 32 block (numpy's quantize_mx_2d);
# the 1x32 quantize properties, conversely, reach quantize_mx_2d by family but need 1 x 32.
QUANTIZE_2D = ("quantize_2d.", "metamorphic.quantize_2d_")
QUANTIZE_1X32 = ("quantize.bit_exact", "metamorphic.block_scale_shift")


# Correct implementations pass every property that applies; each planted fault fails the
# property that guards against it, with a shrunk case in the table. The FP4 properties apply by
# family to the FP8-only example and numpy ops but cannot build E2M1 inputs for them, nor
# gemm.default_scale absent B scales: unsupported; the device-only property is unsupported here.
# The quantize properties of one block shape (1x32, 32x32) are unsupported on the other's ops.
def test_property_verdicts(survey):
    for name in ("builtin", "example", "numpy"):
        v = verdicts(impl(survey, name))
        builtin = name == "builtin"
        unsupported = DEVICE_ONLY + (() if builtin else FP4_PROPERTIES + ABSENT_B_SCALE)
        unsupported += QUANTIZE_1X32 if name == "numpy" else QUANTIZE_2D
        assert v and all(x == ("unsupported" if p.startswith(unsupported) else "pass")
                         for p, x in v.items()), (name, v)
        assert builtin or any(p.startswith(FP4_PROPERTIES) for p in v), (name, v)
    assert verdicts(impl(survey, "numpy_faulty_drop_trailing_k"))["gemm.exact"] == "FAIL"
    assert verdicts(impl(survey, "numpy_faulty_shift_e8m0"))["upcast_e8m0.bit_exact"] == "FAIL"
    assert verdicts(impl(survey, "example_faulty_upcast_shift"))["upcast_e8m0.bit_exact"] == "FAIL"
    p = [p for p in impl(survey, "numpy_faulty_drop_trailing_k")["properties"]
         if p["property"] == "gemm.exact"][0]
    assert p["counterexample"].startswith("op=gemm_mx m=1 n=1 "), p


# An adapter that cannot run here is listed with the reason, and the survey goes on.
def test_unavailable_adapter_is_listed(survey):
    i = impl(survey, "py:worker_adapters:Missing")
    assert i["status"] == "unavailable" and "not_installed_anywhere" in i["message"]


# The markdown a reader scans: one row per cast and per property, failures with their cases.
def test_markdown_table(survey):
    md = survey[1]
    assert "| example_faulty_cast_ties_away | cast_satfinite | e4m3fn | cuda_satfinite | 393216 "\
           "| **none** |" in md
    assert "| numpy_faulty_shift_e8m0 | upcast_e8m0.bit_exact | **FAIL** |" in md
    assert "## Failures" in md and "- **numpy_faulty_drop_trailing_k** `gemm.exact` FAIL" in md
    assert "| py:worker_adapters:Missing | `py:worker_adapters:Missing` | unavailable: " in md
