"""The layer properties from the shell (docs/layers.md §6): `mxgate property layer.* --impl
py:MODULE:OBJECT` and `mxgate gate --impl ...` run `python -m mxgate.layers` with this
interpreter (MXGATE_PYTHON) and report its verdict lines and exit codes."""

import json
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


USER_MODULE = '''
from mxgate.adapters import linear_example as ex


class NoGate(ex.LinearExample):
    def select(self, config):  # the preshuffled kernel for any block layer off sm90
        if config.scheme == "fp8_block" and config.platform != "sm90":
            return "AiterPreshuffledFp8BlockScaledMMKernel"
        return super().select(config)
'''


# Guards against `plan --impl` hiding a difference: a user's select that skips the preshuffled
# kernel's N % 128 gate is DIFFERENT beside the model, an aligned layer is the same.
def test_plan_impl_side_by_side(tmp_path, monkeypatch):
    (tmp_path / "user_linear.py").write_text(USER_MODULE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    impl = "py:user_linear:NoGate"
    code, out, err = mxgate("plan", "--platform", "gfx942", "--scheme", "fp8_block", "--n", "16",
                            "--k", "64", "--impl", impl)
    assert code == 0, out + err
    assert "yours: AiterPreshuffledFp8BlockScaledMMKernel (PreshuffledBlockScaledFp8)" in out
    assert "model: BlockScaledFp8" in out and "DIFFERENT" in out, out
    assert "1 layer(s), 1 with different decisions" in out, out
    code, out, err = mxgate("plan", "--platform", "gfx942", "--scheme", "fp8_block", "--n", "128",
                            "--k", "128", "--impl", impl, "--json")
    assert code == 0, out + err
    row = json.loads(out)[0]
    assert (row["yours_as"], row["model"], row["same"]) == ("PreshuffledBlockScaledFp8",
                                                            "PreshuffledBlockScaledFp8", True)
    assert row["yours_load"] == row["model_load"] == ["preshuffle"], row


# Guards against the model form losing layers or hitting the layer data's host size limit: every
# block-FP8 layer of DeepSeek-V3/R1 at TP 8 is compared (labelled), and the example agrees.
def test_plan_impl_model_form():
    code, out, err = mxgate("plan", "--platform", "gfx942", "--model", "DeepSeek-V3/R1", "--tp",
                            "8", "--impl", GOOD, "--json")
    assert code == 0, out + err
    rows = json.loads(out)
    assert len(rows) >= 5 and all(r["same"] for r in rows), out
    kv = [r for r in rows if r["label"] == "DeepSeek-V3/R1 kv_b_proj"]
    assert kv and "skip_weight_relayout=1" in kv[0]["config"] and kv[0]["model_load"] == [], kv


# Guards against a traceback or a wrong exit code for an adapter that cannot be loaded.
def test_plan_impl_bad_module_exit_2():
    code, out, err = mxgate("plan", "--platform", "gfx942", "--scheme", "fp8_block", "--n", "16",
                            "--k", "64", "--impl", "py:no_such_module_here:X")
    assert code == 2, out + err
    assert "cannot import" in err and "Traceback" not in err, err


# Guards against a wrong answer when several specs are asked at once: each line says which of
# them is a LayerAdapter, in order; a bad spec is "other" (never a crash), exit 1 unless all are.
def test_is_layer_answers_every_spec():
    specs = [GOOD, "py:mxgate.adapters.numpy:NumpyAdapter", "py:no_such_module_here:X"]
    r = subprocess.run([sys.executable, "-m", "mxgate.layers", "is-layer", *specs],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"layer\t{specs[0]}", f"other\t{specs[1]}",
                                     f"other\t{specs[2]}"], r.stdout
    r = subprocess.run([sys.executable, "-m", "mxgate.layers", "is-layer", GOOD],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == f"layer\t{GOOD}\n", r.stdout + r.stderr


# Guards against the gate starting one Python per py: spec to ask whether it is a LayerAdapter
# (one interpreter answers all), and against a bad spec among them losing its error.
def test_gate_asks_once_for_every_spec(tmp_path):
    log = tmp_path / "calls"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    bad = "py:no_such_module_here:X"
    env = dict(os.environ, MXGATE_PYTHON=str(wrapper))
    r = subprocess.run([str(cli_path()), "gate", "--impl", f"{FAULTY}RelayoutDirectlyRead,"
                        f"py:mxgate.adapters.numpy:NumpyAdapter,{bad}", "--only", "layer.",
                        "--cases", "5"], capture_output=True, text=True, env=env)
    out = r.stdout + r.stderr
    asked = [c for c in log.read_text().splitlines() if " is-layer " in f" {c} "]
    assert len(asked) == 1, asked
    assert asked[0].endswith(f"is-layer {FAULTY}RelayoutDirectlyRead "
                             f"py:mxgate.adapters.numpy:NumpyAdapter {bad}"), asked
    assert r.returncode != 0, out
    assert f"layer.*[{FAULTY}RelayoutDirectlyRead] (host) ... FAIL" in r.stdout, out
    assert bad in out and "no_such_module_here" in out, out
