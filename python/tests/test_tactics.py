"""Tactics (docs/plugins.md §3.6, docs/python.md §11.9): an op declaring several kernels is
checked over every one of them. Covers the C ABI through the example plugin (example_tactics,
the planted example_faulty_tactic), the CLI (--tactic, reproduce lines, --save / repro, impls
--json, zoo --impl), the in-process route (mxgate.check over mxgate.Tactic configs, a tactic's
own accumulator, the seeded sample past eight) and the worker route (py:...). Not covered here:
cuBLASLt's heuristic tactics and Triton's tiles, which need the H200 (scripts/h200/tactics.sh)."""

import json
import os
import re
import sys
from pathlib import Path

import pytest

import mxgate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tactic_adapters as T  # noqa: E402

FAULTY = "example:example_faulty_tactic"


def worker_env():
    here = str(Path(__file__).resolve().parent)
    return dict(os.environ, MXGATE_PYTHON=sys.executable, PYTHONPATH=os.pathsep.join(
        [here, str(Path(here).parents[0]), os.environ.get("PYTHONPATH", "")]))


# A fault in one tactic fails on that tactic alone and the verdict names it: the other tactics
# pass, the reproduce line selects it with --tactic.
def test_cli_names_the_failing_tactic(cli):
    code, out, err = cli("property", "gemm.exact", "--impl", FAULTY, "--cases", "40")
    assert code == 1, out + err
    assert "tactics: 3 of 3" in out, out
    assert re.search(r"\[example_faulty_tactic tactic 0 \(rows\)\].*pass after 40", out), out
    assert re.search(r"\[example_faulty_tactic tactic 1 \(cols\)\].*pass after 40", out), out
    assert re.search(r"\[example_faulty_tactic tactic 2 \(tile4x4\)\].*fail after", out), out
    assert f"reproduce: mxgate property gemm.exact --impl {FAULTY} --tactic 2" in out, out


# --tactic N runs that tactic alone: a correct one passes, the faulty one fails; a tactic the
# implementation lacks is bad input (exit 2) naming the count.
def test_cli_tactic_option(cli):
    code, out, _ = cli("property", "gemm.exact", "--impl", FAULTY, "--tactic", "1", "--cases", "40")
    assert code == 0 and "tactic 1 (cols)" in out and "tactic 2" not in out, out
    code, out, _ = cli("property", "gemm.exact", "--impl", FAULTY, "--tactic", "2", "--cases", "40")
    assert code == 1 and "tactic 2 (tile4x4)" in out, out
    code, out, err = cli("property", "gemm.exact", "--impl", FAULTY, "--tactic", "3")
    assert code == 2 and "has 3 tactic(s)" in err, out + err


# A saved regression records the tactic and replays on it: the file fails on tactic 2, and
# without its tactic line (tactic 0) the same case passes.
def test_regression_file_keeps_the_tactic(cli, tmp_path):
    path = tmp_path / "t.case"
    code, out, _ = cli("property", "gemm.exact", "--impl", FAULTY, "--tactic", "2", "--cases",
                       "40", "--save", path)
    assert code == 1 and path.exists(), out
    text = path.read_text()
    assert "tactic: 2\n" in text, text
    code, out, _ = cli("repro", path)
    assert code == 1 and "tactic 2" in out and "FAIL" in out, out
    path.write_text(text.replace("tactic: 2\n", ""))
    code, out, _ = cli("repro", path)
    assert code == 0 and ": ok" in out, out
    path.write_text(text.replace("tactic: 2\n", "tactic: 9\n"))
    code, out, err = cli("repro", path)
    assert code == 2 and "no tactic 9" in err, out + err


# `mxgate impls --json` lists each op's tactics with index, name and accumulator; an op of an
# older plugin (no tactics declared) lists its one tactic.
def test_impls_json_lists_tactics(cli):
    d = json.loads(cli.ok("impls", "--json", "--impl", FAULTY))
    impls = {i["name"]: i for i in d["implementations"]}
    ops = impls["example_faulty_tactic"]["ops"]
    assert [t["name"] for t in ops[0]["tactics"]] == ["rows", "cols", "tile4x4"], ops
    assert [t["index"] for t in ops[0]["tactics"]] == [0, 1, 2], ops
    one = impls["example"]["ops"][0]["tactics"]
    assert len(one) == 1 and one[0]["name"] == "0" and one[0]["accumulator"] is None, one


# The planted one-tactic fault is detected by `mxgate zoo --impl`, its detection names tactic 2,
# within the zoo's budget (median <= 20 cases over 20 seeds); the correct three tactics pass
# every property.
def test_zoo_catches_the_planted_tactic(cli):
    code, out, err = cli("zoo", "--impl", FAULTY + ",example:example_tactics", "--json")
    assert code == 0, out + err
    r = {x["impl"]: x for x in json.loads(out)["implementations"]}
    bad, good = r["example_faulty_tactic"], r["example_tactics"]
    assert bad["planted"] and bad["detected"] and bad["tactic"] == 2, bad
    assert "tactic 2 (tile4x4)" in bad["caught_by"] and bad["median_cases"] <= 20, bad
    assert not good["planted"] and not good["detected"] and good["tactic"] is None, good


# In-process: a fault in one tactic config is a failure of that tactic, named with its index
# and name; the reproduce expression and CLI line select it; tactic= alone runs one.
def test_check_names_the_failing_tactic():
    r = mxgate.check("gemm.exact", T.FaultyTactic(), cases=40)
    assert not r.passed and r.tactic == 2 and r.tactic_name == "no_b", r
    assert "tactic=2" in r.reproduce and "--tactic 2" in r.cli, r
    assert "tactic 2 (no_b)" in str(r)
    assert mxgate.check("gemm.exact", T.FaultyTactic(), cases=40, tactic=1).passed
    assert mxgate.check("gemm.exact", T.Correct(), cases=40).passed


# A tactic's own accumulator model is the one its bounds use: tactic 1 declares a model no
# library has and fails as a contract error, tactic 0 (the op's fp32_rn) passes.
def test_tactic_accumulator_is_used():
    r = mxgate.check("gemm.ordered_bound", T.UnknownModel(), cases=20)
    assert not r.passed and r.tactic == 1 and "no_such_model" in r.failure, r
    assert mxgate.check("gemm.ordered_bound", T.UnknownModel(), cases=20, tactic=0).passed


# Past eight tactics a run checks a seeded sample of eight (tactic 0 among them) and says so; the
# sample is the same for the same seed.
def test_sample_past_the_limit():
    r = mxgate.check("gemm.exact", T.Many(), cases=3, seed=5)
    m = re.fullmatch(r"tactics: 8 of 20, a sample \(seed 5\): ([0-9,]+)", r.tactics)
    assert m and m.group(1).split(",")[0] == "0" and len(m.group(1).split(",")) == 8, r.tactics
    assert mxgate.check("gemm.exact", T.Many(), cases=3, seed=5).tactics == r.tactics


# Bad tactic declarations are AdapterErrors at declaration, not failures later.
def test_bad_tactics_are_refused():
    with pytest.raises(mxgate.AdapterError, match="not \\[a-z0-9_.\\]"):
        mxgate.Tactic("Bad Name")
    with pytest.raises(mxgate.AdapterError, match="two tactics of one name"):
        mxgate.Op("gemm_block", lambda a, sa, b, sb: a, "g", a_block=(0, 0), b_block=(0, 0),
                  tactics=[mxgate.Tactic("x"), mxgate.Tactic("x")])
    with pytest.raises(mxgate.AdapterError, match="no GEMM"):
        mxgate.Op("upcast_e8m0", lambda e: e, "u", tactics=[mxgate.Tactic("x", None, "fp32_rn")])


# Through the worker (py:MODULE:OBJECT) the tactic index reaches the adapter: the CLI fails on
# tactic 2 alone.
def test_worker_route(cli):
    import subprocess

    r = subprocess.run([str(cli.path), "property", "gemm.exact", "--impl",
                        "py:tactic_adapters:FaultyTactic", "--cases", "30"],
                       capture_output=True, text=True, env=worker_env(), timeout=300)
    assert r.returncode == 1, r
    assert re.search(r"tactic 1 \(b\)\].*pass after 30", r.stdout), r.stdout
    assert re.search(r"tactic 2 \(no_b\)\].*fail after", r.stdout), r.stdout
