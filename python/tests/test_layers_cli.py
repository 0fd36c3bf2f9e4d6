"""The layer properties from the shell (docs/layers.md §6): `mxgate property layer.* --impl
py:MODULE:OBJECT` and `mxgate gate --impl ...` run `python -m mxgate.layers` with this
interpreter (MXGATE_PYTHON) and report its verdict lines and exit codes."""

import os
import subprocess
import sys

from support import cli_path

FAULTY = "py:mxgate.adapters.linear_example_faulty:"
GOOD = "py:mxgate.adapters.linear_example:LinearExample"


def mxgate(*args):
    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    r = subprocess.run([str(cli_path()), *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


# Guards against the CLI losing a layer failure: exit 1, the shrunk case, the failure, the
# element and a reproduce line for Python and the shell.
def test_property_failure_exit_1_with_shrunk_case():
    code, out, err = mxgate("property", "layer.load_equivalence", "--impl",
                            FAULTY + "NoPerStepFallback", "--cases", "50")
    assert code == 1, out + err
    assert "layer.load_equivalence on z1_no_per_step_fallback, seed 1, 50 cases ... fail" in out
    assert "shrunk case: scheme=mxfp8 n=1 k=32 tp=1" in out
    assert "element (0,0): expected 0x" in out
    assert "reproduce: mxgate.check('layer.load_equivalence'" in out
    assert ("cli: mxgate property layer.load_equivalence --impl " + FAULTY +
            "NoPerStepFallback --seed 1 --cases 50") in out


# Guards against a passing adapter failing from the shell, and several names not all running.
def test_property_pass_exit_0():
    code, out, err = mxgate("property", "layer.end_to_end", "layer.direct_reads", "--impl", GOOD,
                            "--cases", "10", "--seed", "2")
    assert code == 0, out + err
    assert out.count("... pass") == 2, out


# Guards against layer properties run without an adapter, or with options they ignore.
def test_property_bad_input_exit_2():
    code, _, err = mxgate("property", "layer.end_to_end")
    assert code == 2 and "need --impl py:MODULE:OBJECT" in err, err
    code, _, err = mxgate("property", "layer.end_to_end", "--impl", GOOD, "--faults", "z1")
    assert code == 2 and "--faults does not go with layer properties" in err, err
    code, _, err = mxgate("property", "layer.nope", "--impl", GOOD)
    assert code == 2 and "unknown layer property 'layer.nope'" in err, err


# Guards against the gate passing a faulty layer adapter: one check layer.*[SPEC], failing with
# the shrunk case and the command that reproduces it.
def test_gate_runs_layer_adapter():
    code, out, err = mxgate("gate", "--impl", FAULTY + "RelayoutDirectlyRead", "--only",
                            "layer.", "--cases", "20")
    assert code == 1, out + err
    assert f"layer.*[{FAULTY}RelayoutDirectlyRead] (host) ... FAIL" in out, out
    assert "reproduce: mxgate property layer.direct_reads --impl" in out, out
