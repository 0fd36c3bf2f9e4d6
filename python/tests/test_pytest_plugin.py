"""The pytest plugin (python/mxgate/pytest_plugin.py, docs/python.md §15), run as users run it: a
fresh pytest with `-p mxgate.pytest_plugin` in a temporary directory. Covers: one item per
(implementation, op, property of the op's family) named mxgate::IMPL::OP::PROPERTY; the correct
numpy adapter passing; each planted fault of numpy_faulty failing with its shrunk case, located
element and reproduce lines (the reproduce line replaying the same element); unsupported and
unavailable as skips with their reasons; JUnit XML (pytest's --junitxml) naming the items; -k
selecting them; bad specs and bad option values stopping the run; the mxgate_check fixture; the
correct adapter's items failing once mxgate's own write-back is broken (MXGATE_MACHINERY_FAULT,
common/machinery_fault.h), while an item none of whose cases could run stays a skip.
Not covered: the entry point of an installed package (test_install.py)."""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import mxgate
from mxgate.adapters.numpy import NumpyAdapter

TESTS = Path(__file__).resolve().parent
NUMPY = "py:mxgate.adapters.numpy:NumpyAdapter"

# Each planted fault: its spec, and the item (IMPL::OP::PROPERTY) that must fail on it (the
# property that catches it, as test_adapters_numpy.py asserts for mxgate.check).
FAULTS = [
    ("py:mxgate.adapters.numpy_faulty:ScaleTransposed",
     "numpy_faulty_scale_transposed::gemm_block_deepseek::gemm.exact"),
    ("py:mxgate.adapters.numpy_faulty:DropTrailingK",
     "numpy_faulty_drop_trailing_k::gemm_mx::gemm.exact"),
    ("py:mxgate.adapters.numpy_faulty:ShiftE8m0",
     "numpy_faulty_shift_e8m0::upcast_e8m0::upcast_e8m0.bit_exact"),
    ("py:mxgate.adapters.numpy_faulty:ActScalesColMajor",
     "numpy_faulty_act_scales_col_major::gemm_block_deepseek::gemm.exact"),
]


def pytest_run(tmp_path, *args, env_extra=None):
    """A fresh `python -m pytest -p mxgate.pytest_plugin ARGS` in tmp_path: (exit code, output)."""
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS.parent), str(TESTS)] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "mxgate.pytest_plugin", "-p",
                        "no:cacheprovider", "-rs", *map(str, args)], capture_output=True,
                       text=True, cwd=tmp_path, env=env)
    return r.returncode, r.stdout + r.stderr


def junit(path):
    """{nodeid: (outcome, message)} of a JUnit XML file; nodeid rebuilt from classname.name."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        node = case.get("classname").replace(".", "::", 2) + "::" + case.get("name")
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            e = case.find(kind)
            if e is not None:
                outcome, message = kind, (e.get("message") or "") + "\n" + (e.text or "")
        out[node] = (outcome, message)
    return out


def expected_items(adapter):
    """IMPL::OP::PROPERTY of every (op, property of its family) of an adapter."""
    return {f"mxgate::{adapter.name}::{o.name}::{p}" for o in adapter.ops
            for p, families, _ in mxgate.properties() if o.family in families}


# Guards against items missing, named otherwise, or a correct implementation failing; and
# against a property the op cannot take being dropped (it must be a skip with its reason).
def test_numpy_adapter_items_pass_and_junit_names_them(tmp_path):
    code, out = pytest_run(tmp_path, "--mxgate-impl", NUMPY, "--mxgate-cases", "20", "-v",
                           "--junitxml", tmp_path / "junit.xml")
    assert code == 0, out
    items = junit(tmp_path / "junit.xml")
    assert set(items) == expected_items(NumpyAdapter()), out
    assert "mxgate::numpy::gemm_mx::gemm.exact PASSED" in out
    outcomes = {node: o for node, (o, _) in items.items()}
    assert outcomes["mxgate::numpy::gemm_mx::gemm.exact"] == "passed"
    assert outcomes["mxgate::numpy::upcast_e8m0::upcast_e8m0.bit_exact"] == "passed"
    # numpy's gemm_mx takes no E2M1: the FP4 property's items are skips saying why.
    outcome, message = items["mxgate::numpy::gemm_mx::gemm_fp4.exact"]
    assert outcome == "skipped" and "cannot build its inputs" in message, message
    assert sum(o == "passed" for o in outcomes.values()) >= 30, outcomes
    assert all(o in ("passed", "skipped") for o in outcomes.values()), outcomes
    assert "--mxgate-seed 1 --mxgate-cases 20" in out  # the report header prints the seed


# Guards against a planted fault passing, or failing without the story a user needs: the shrunk
# case, the located element and a reproduce line that replays the same element.
def test_each_planted_fault_fails_with_shrunk_case_element_and_reproduce_line(tmp_path):
    specs = ",".join(spec for spec, _ in FAULTS)
    code, out = pytest_run(tmp_path, "--mxgate-impl", specs, "--junitxml",
                           tmp_path / "junit.xml")
    assert code == 1, out
    items = junit(tmp_path / "junit.xml")
    for spec, item in FAULTS:
        outcome, message = items["mxgate::" + item]
        assert outcome == "failure", (item, message)
        for part in ("shrunk case: ", "element (", "reproduce: mxgate.check(",
                     f"cli: mxgate property {item.rsplit('::', 1)[1]} --impl {spec} --seed 1"):
            assert part in message, (item, part, message)
        assert f"{item.rsplit('::', 1)[1]} on {item.split('::')[0]}/{item.split('::')[1]}" in out
        case = re.search(r"shrunk case: (.*)", message).group(1)
        element = re.search(r"element \((\d+),(\d+)\)", message).groups()
        again = mxgate.check(item.rsplit("::", 1)[1], spec, op=item.split("::")[1], case=case)
        assert not again.passed and again.location is not None, again
        assert again.location.coords == tuple(map(int, element)), (again, message)


# Guards against a plugin that cannot see a broken call path (only a broken adapter): with the
# write-back dropping the last row of an odd row count (a fault planted in mxgate's own
# machinery), the correct numpy adapter's GEMM items fail, each at a located element in a row of
# an odd M, while its items whose cases were all unsupported (no E2M1 in gemm_mx) stay skips,
# never passes; without the plant the same items pass (test_numpy_adapter_items_pass_...).
def test_planted_write_back_fails_the_correct_adapter(tmp_path):
    code, out = pytest_run(tmp_path, "--mxgate-impl", NUMPY, "--mxgate-cases", "20", "-k",
                           "gemm_mx", "--junitxml", tmp_path / "junit.xml",
                           env_extra={"MXGATE_MACHINERY_FAULT": "adapter_drops_odd_row"})
    assert code == 1 and "generated xml file" in out, out
    items = junit(tmp_path / "junit.xml")
    outcome, message = items["mxgate::numpy::gemm_mx::gemm.exact"]
    assert outcome == "failure", (outcome, message)
    case = re.search(r"shrunk case: (.*)", message).group(1)
    m = int(re.search(r"\bm=(\d+)", case).group(1))
    row = int(re.search(r"element \((\d+),\d+\)", message).group(1))
    assert m % 2 == 1 and m > 1 and row == m - 1, (case, message)  # the dropped last row
    outcome, message = items["mxgate::numpy::gemm_mx::gemm_fp4.exact"]
    assert outcome == "skipped" and "cannot build its inputs" in message, message


# Guards against an unavailable adapter vanishing from the run (its items must be visible
# skips naming what is missing) and against an unloadable spec being ignored.
def test_unavailable_is_a_skip_and_a_bad_spec_a_collection_error(tmp_path):
    code, out = pytest_run(tmp_path, "--mxgate-impl", "py:worker_adapters:Missing", "-v")
    assert code == 0, out
    assert "mxgate::missing::upcast_e8m0::upcast_e8m0.bit_exact SKIPPED" in out, out
    assert "unavailable: needs the module not_installed_anywhere" in out, out
    code, out = pytest_run(tmp_path, "--mxgate-impl", "py:worker_adapters:not_an_adapter")
    assert code == 2, out
    assert "--mxgate-impl py:worker_adapters:not_an_adapter: AdapterError: " in out, out
    assert "is a int, not an mxgate.Adapter" in out, out
    code, out = pytest_run(tmp_path, "--mxgate-impl", "no_colon_here")
    assert code == 2 and "is not py:MODULE:OBJECT or MODULE:OBJECT" in out, out


# Guards against -k / -m not reaching the plugin's items (they are added before deselection).
def test_k_selects_items(tmp_path):
    code, out = pytest_run(tmp_path, "--mxgate-impl", NUMPY, "--mxgate-cases", "5", "-v", "-k",
                           "gemm_mx and gemm.exact")
    assert code == 0, out
    assert re.findall(r"^mxgate::\S+", out, re.M) == ["mxgate::numpy::gemm_mx::gemm.exact"], out


# Guards against bad option values reaching the library as a failure of every item.
@pytest.mark.parametrize("args,text", [(("--mxgate-cases", "0"), "--mxgate-cases must be"),
                                       (("--mxgate-seed", "-1"), "--mxgate-seed must be")])
def test_bad_option_values_stop_the_run(tmp_path, args, text):
    code, out = pytest_run(tmp_path, "--mxgate-impl", NUMPY, *args)
    assert code == 4 and text in out, out


FIXTURE_TESTS = '''
import mxgate
from mxgate.adapters.numpy import NumpyAdapter
from mxgate.adapters.numpy_faulty import DropTrailingK

def test_correct(mxgate_check):
    r = mxgate_check("gemm.exact", NumpyAdapter(), op="gemm_mx")
    assert r.passed and r.cases == 7 and r.seed == 5

def test_faulty(mxgate_check):
    mxgate_check("gemm.exact", DropTrailingK())

def test_unsupported(mxgate_check):
    mxgate_check("cast.bit_exact", NumpyAdapter())
'''


# Guards against the fixture ignoring the session's seed and case count, passing a failing
# property, or failing (instead of skipping) a property that applies to no op.
def test_fixture_checks_inside_user_tests(tmp_path):
    (tmp_path / "test_user.py").write_text(FIXTURE_TESTS)
    code, out = pytest_run(tmp_path, "--mxgate-cases", "7", "--mxgate-seed", "5", "-v")
    assert code == 1, out
    assert "test_user.py::test_correct PASSED" in out, out
    assert "test_user.py::test_faulty FAILED" in out, out
    assert "test_user.py::test_unsupported SKIPPED" in out, out
    assert "shrunk case: op=gemm_mx" in out and "reproduce: mxgate.check(" in out, out
    assert "unsupported: " in out and "no op of its families" in out, out
