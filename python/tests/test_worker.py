"""`--impl py:MODULE:OBJECT` (impl/python.cpp, impl/python_worker.cpp, mxgate/_worker.py;
docs/python.md §10): the same adapter from the CLI in a worker process. Covers: a correct adapter
passing and a planted fault caught with the same shrunk case as in-process, `mxgate impls` listing
the adapter's contract, a worker that crashes or hangs as an error naming the op while the gate goes
on, an unavailable adapter (exit 3), bad specs (exit 2). The interpreter is this one
(MXGATE_PYTHON)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mxgate
from mxgate.adapters import numpy_faulty

TESTS = Path(__file__).resolve().parent


def run(cli, *args, timeout_s=None, **env):
    e = dict(os.environ)
    e["MXGATE_PYTHON"] = sys.executable
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent)] +
                                      [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p])
    e.update(env)
    r = subprocess.run([str(cli.path), *args], capture_output=True, text=True, env=e,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr


# An accumulator declared as a spec with parameters (docs/plugins.md §3.4) loads through the
# worker as in process (the Triton mma.sync tile declares one), and a malformed one is refused
# naming the spec instead of being loaded or crashing.
def test_worker_accepts_accumulator_specs(cli):
    code, out, err = run(cli, "impls", "--impl", "py:worker_adapters:SpecAccumulator")
    assert code == 0, err
    assert "accumulator fp32_rn:unit_roundoff_bits=23" in out, out
    code, out, err = run(cli, "impls", "--impl", "py:worker_adapters:BadSpecAccumulator")
    assert code != 0
    assert "contract.accumulator 'fp32_rn:bits=2^3' is not a model spec" in out + err


# The correct numpy adapter passes through the worker as in-process.
def test_worker_adapter_passes(cli):
    code, out, err = run(cli, "property", "gemm.exact", "upcast_e8m0.bit_exact", "--impl",
                         "py:mxgate.adapters.numpy:NumpyAdapter", "--cases", "30")
    assert code == 0, out + err
    assert out.count("pass after 30 cases") == 2, out


# A planted fault fails through the worker with the case mxgate.check shrinks to in-process.
def test_worker_finds_the_same_shrunk_case(cli):
    spec = "py:mxgate.adapters.numpy_faulty:DropTrailingK"
    code, out, err = run(cli, "property", "gemm.exact", "--impl", spec, "--cases", "50")
    assert code == 1, out + err
    r = mxgate.check("gemm.exact", numpy_faulty.DropTrailingK(), cases=50)
    assert f"shrunk case: {r.counterexample}\n" in out, out
    assert f"reproduce: mxgate property gemm.exact --impl {spec}" in out


# `mxgate impls --impl py:...` lists the adapter's ops and contract clauses.
def test_impls_lists_the_adapter(cli):
    code, out, err = run(cli, "impls", "--impl", "py:mxgate.adapters.numpy:NumpyAdapter")
    assert code == 0, err
    assert "numpy (--impl py:mxgate.adapters.numpy:NumpyAdapter; python worker" in out
    assert "gemm_block_deepseek" in out and "scales f32: a 1x128" in out
    assert "accumulator fp32_rn" in out


# A worker killed by a signal in a call is an error verdict naming the op and the signal.
def test_worker_crash_is_an_error_naming_the_op(cli):
    code, out, err = run(cli, "property", "upcast_e8m0.bit_exact", "--impl",
                         "py:worker_adapters:Crashing", "--cases", "10")
    assert code == 1, out + err
    assert "error after 1 cases" in out
    assert "died: killed by signal 11" in out and "in op upcast_e8m0" in out


# A worker that does not answer is killed after MXGATE_PYTHON_TIMEOUT: an error naming the op.
def test_worker_hang_is_killed_and_named(cli):
    code, out, err = run(cli, "property", "upcast_e8m0.bit_exact", "--impl",
                         "py:worker_adapters:Hanging", "--cases", "10",
                         MXGATE_PYTHON_TIMEOUT="0.3")
    assert code == 1, out + err
    assert "gave no answer within 0.3 s (MXGATE_PYTHON_TIMEOUT), killed in op upcast_e8m0" in out


# In the gate, the crashing and hanging adapters are errors of their own checks; the built-in
# check and the correct adapter's still run and pass.
def test_gate_goes_on_after_crash_and_hang(cli):
    code, out, err = run(cli, "gate", "--only", "property.upcast", "--cases", "10", "--impl",
                         "py:worker_adapters:Crashing,py:worker_adapters:Hanging,"
                         "py:mxgate.adapters.numpy:NumpyAdapter",
                         MXGATE_PYTHON_TIMEOUT="0.3")
    assert code == 1, out + err
    rows = {line.split()[0]: line.split()[4] for line in out.splitlines()
            if line.startswith("property.upcast_e8m0.bit_exact")}
    assert rows == {"property.upcast_e8m0.bit_exact": "pass",
                    "property.upcast_e8m0.bit_exact[crashing]": "ERROR",
                    "property.upcast_e8m0.bit_exact[hanging]": "ERROR",
                    "property.upcast_e8m0.bit_exact[numpy]": "pass"}, out


# An adapter that reports itself unavailable is an environment error (exit 3), named.
def test_unavailable_adapter_exits_3(cli):
    code, out, err = run(cli, "property", "all", "--impl", "py:worker_adapters:Missing")
    assert code == 3, out + err
    assert "adapter unavailable: needs the module not_installed_anywhere" in err


BAD_SPECS = [
    ("py:worker_adapters", "a Python adapter is named py:MODULE:OBJECT"),
    ("py:no_such_module_xyz:Thing", "ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("py:worker_adapters:Nope", "module worker_adapters has no attribute 'Nope'"),
    ("py:worker_adapters:not_an_adapter", "is a int, not an mxgate.Adapter"),
]


# A spec that names no adapter exits 2 with the reason.
@pytest.mark.parametrize("spec,text", BAD_SPECS, ids=[s for s, _ in BAD_SPECS])
def test_bad_spec_exits_2(cli, spec, text):
    code, out, err = run(cli, "property", "all", "--impl", spec)
    assert code == 2, out + err
    assert text in err, err


# An interpreter that does not exist is a load error naming MXGATE_PYTHON.
def test_missing_interpreter(cli):
    code, out, err = run(cli, "impls", "--impl", "py:mxgate.adapters.numpy:NumpyAdapter",
                         MXGATE_PYTHON="/nonexistent/python")
    assert code == 2, out + err
    assert "cannot execute the interpreter (MXGATE_PYTHON)" in err


# Without MXGATE_PYTHON, a `python3` first on PATH that cannot import numpy (a fresh Debian 12's)
# is passed over for /usr/bin/python3: the adapter runs instead of failing on the import.
@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no /usr/bin/python3")
def test_worker_passes_over_a_python3_without_numpy(cli, tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: numpy' >&2\nexit 1\n")
    fake.chmod(0o755)
    e = dict(os.environ)
    e.pop("MXGATE_PYTHON", None)
    e["PATH"] = f"{tmp_path}{os.pathsep}{e.get('PATH', '')}"
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent)])
    r = subprocess.run([str(cli.path), "property", "upcast_e8m0.bit_exact", "--impl",
                        "py:mxgate.adapters.numpy:NumpyAdapter", "--cases", "3"],
                       capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pass after 3 cases" in r.stdout, r.stdout
