"""The pytest plugin (python/mxgate/pytest_plugin.py, docs/python.md §15) over every shipped
adapter (mxgate.adapters.SHIPPED), as scripts/h200/survey.sh runs it, on a host without torch,
Triton or JAX: an adapter whose library is missing is a skip naming it, never a failure or an
error; every failure (only the planted faults of numpy_faulty) shows its shrunk case, its located
element and reproduce lines in -q output, and at once in the per-implementation progress lines;
each implementation is loaded once and asked check_available() once for all its items; the
seconds per implementation close the run; --mxgate-timeout stops starting items and the run still
ends with its summary. Not covered: the GPU adapters' verdicts (scripts/h200/survey.sh on a GPU
host), the figures' accuracy."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mxgate.adapters import SHIPPED

TESTS = Path(__file__).resolve().parent


def pytest_run(tmp_path, *args, env=None):
    """A fresh `python -m pytest -q -p mxgate.pytest_plugin ARGS` in tmp_path: (code, output)."""
    e = dict(os.environ, **(env or {}))
    e["PYTHONPATH"] = os.pathsep.join(
        [str(TESTS.parent), str(TESTS)] + [p for p in [e.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "mxgate.pytest_plugin", "-p",
                        "no:cacheprovider", "-rfEs", *map(str, args)], capture_output=True,
                       text=True, cwd=tmp_path, env=e, timeout=600)
    return r.returncode, r.stdout + r.stderr


def importable(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    return pytest_run(tmp_path_factory.mktemp("shipped"), "--mxgate-impl", ",".join(SHIPPED),
                      "--mxgate-cases", "20")


def sections(out):
    """{title: text} of the FAILURES section's entries."""
    body = out.split("= FAILURES =", 1)[1] if "= FAILURES =" in out else ""
    body = re.split(r"\n=+ (warnings summary|short test summary info|mxgate)", body)[0]
    parts = re.split(r"^_+ (.+?) _+$", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


# Guards against a missing library turning into F or E (or vanishing): each adapter that cannot
# be built here is a skip naming the module it needs.
def test_missing_libraries_are_skips_with_their_reason(shipped):
    code, out = shipped
    assert code == 1, out  # the planted faults fail
    assert not re.search(r"^ERROR ", out, re.M) and " error" not in out.splitlines()[-1], out
    for spec, module in (("py:mxgate.adapters.torch:TorchCpuAdapter", "torch"),
                         ("py:mxgate.adapters.triton_dot:TritonDotAdapter", "triton"),
                         ("py:mxgate.adapters.jax:JaxAdapter", "jax"),
                         ("py:mxgate.adapters.ml_dtypes:MlDtypesAdapter", "ml_dtypes")):
        if importable(module):
            continue
        assert re.search(rf"^SKIPPED .*unavailable: {re.escape(spec)}: .*needs {module}", out,
                         re.M), (spec, out)


# Guards against a failure whose log says only "F": every failed item is a planted fault, and
# its -q report holds the shrunk case, the located element (the first differing element, or
# for a bound the worst one) and both reproduce lines; the progress line names it at once.
def test_every_failure_shows_case_element_and_reproduce(shipped):
    code, out = shipped
    failed = re.findall(r"^FAILED \S*?(mxgate::\S+)", out, re.M)
    assert failed, out
    assert all(f.startswith("mxgate::numpy_faulty_") for f in failed), failed
    found = sections(out)
    assert len(found) == len(failed), (sorted(found), failed)
    for title, text in found.items():
        for part in ("shrunk case: ", "reproduce: mxgate.check(", "cli: mxgate property "):
            assert part in text, (title, part, text)
        assert re.search(r"element \(\d+,\d+\)|worst \(\d+,\d+\)", text), (title, text)
    for f in failed:
        impl, item = f.split("::")[1], "::".join(f.split("::")[2:])
        assert re.search(rf"^\[mxgate\]   FAILED {re.escape(item)}: case op=\S+ .*; mxgate "
                         rf"property ", out, re.M), (impl, item, out)


# Guards against a run with no sign of where it is or where its time went: one progress line
# per implementation as its items end, and the seconds per implementation at the end.
def test_progress_and_seconds_per_implementation(shipped):
    code, out = shipped
    assert re.search(r"^\[mxgate\] numpy: \d+ passed, \d+ skipped in [\d.]+ s$", out, re.M), out
    summary = out.split("mxgate: seconds per implementation", 1)[1]
    for name in ("numpy", "numpy_faulty_drop_trailing_k", "numpy_fp4"):
        assert re.search(rf"^{name}: [\d.]+ s, ", summary, re.M), (name, summary)


# Guards against an implementation built (and its check_available asked, which may start a
# device) once per item instead of once per implementation.
def test_one_load_per_implementation(tmp_path):
    count = tmp_path / "count"
    code, out = pytest_run(tmp_path, "--mxgate-impl", "py:counted_adapters:Counted",
                           "--mxgate-cases", "5", env={"MXGATE_COUNT_FILE": str(count)})
    assert code == 0, out
    assert re.search(r"^\[mxgate\] counted: ([2-9]|\d\d+) passed in ", out, re.M), out
    lines = count.read_text().split()
    assert lines.count("init") == 1 and lines.count("available") == 1, (lines, out)


# Guards against --mxgate-timeout killing the summary or dropping items silently: past the
# limit the items left are skips that say so, counted in the summary; the run ends normally.
def test_timeout_skips_the_rest_and_keeps_the_summary(tmp_path):
    code, out = pytest_run(tmp_path, "--mxgate-impl", "py:mxgate.adapters.numpy:NumpyAdapter",
                           "--mxgate-cases", "5", "--mxgate-timeout", "0.001")
    assert code == 0, out
    skipped = re.findall(r"^SKIPPED \[\d+\] .*not run: --mxgate-timeout 0.001 s spent", out, re.M)
    assert skipped, out
    n = int(re.search(r"^(\d+) items not run: --mxgate-timeout 0.001 s spent", out, re.M)[1])
    assert n >= 30 and re.search(r"\b1 passed|\b1 skipped", out.splitlines()[-1]), out
    code, out = pytest_run(tmp_path, "--mxgate-impl", "py:mxgate.adapters.numpy:NumpyAdapter",
                           "--mxgate-timeout", "-1")
    assert code == 4 and "--mxgate-timeout must be at least 0" in out, out
