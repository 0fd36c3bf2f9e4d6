"""The cast survey's setup timed apart from its sweep (properties/cast_survey.h; docs/python.md
§13): a cast op whose first call sleeps, as a Triton kernel's compile or a jax.jit does, is
surveyed in process (mxgate.survey_cast) and through `mxgate survey`'s worker; the sleep must be
in the setup seconds, never in the sweep's, and both figures must reach the CastSurvey, the
JSON and the markdown. Not covered: the device sweep's setup (a cuda-preset library on a GPU:
scripts/h200/survey.sh records it), the figures' accuracy beyond the sleep's bound."""

import json
import os
import subprocess
import sys
from pathlib import Path

import mxgate
from mxgate.survey import parse_lines

import cast_adapters
from cast_adapters import SLOW_FIRST_SECONDS

TESTS = Path(__file__).resolve().parent


# Guards against a first-call compile counted in the sweep (the 1 s per format goal compared
# with a figure that holds the compile), and against the warm-up hiding it: the setup shows it.
def test_in_process_setup_holds_the_first_call():
    cast_adapters.SlowFirstCast.calls = 0
    (s,) = mxgate.survey_cast(cast_adapters.SlowFirstCast(), inputs="sample")
    assert s.error == "" and "ocp_mx" in s.matches, s
    assert s.setup_seconds >= SLOW_FIRST_SECONDS, s
    assert s.seconds < SLOW_FIRST_SECONDS, s
    # The warm-up is a call of its own: the sweep called the op again on every input.
    assert cast_adapters.SlowFirstCast.calls >= 2


# Guards against the worker's survey losing the setup figure on its way to the report: the
# JSON carries both per cast, and the markdown's casts table shows both columns.
def test_cli_survey_reports_setup_and_sweep(cli, tmp_path):
    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent), env.get("PYTHONPATH", "")])
    md = tmp_path / "s.md"
    r = subprocess.run([str(cli.path), "survey", "--impl", "py:cast_adapters:SlowFirstCast",
                        "--cast-inputs", "sample", "--cases", "1", "--json", "--markdown",
                        str(md)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (impl,) = json.loads(r.stdout)["implementations"]
    (c,) = impl["casts"]
    assert c["error"] == "" and c["inputs"] == 393216, c
    assert c["setup_seconds"] >= SLOW_FIRST_SECONDS and c["seconds"] < SLOW_FIRST_SECONDS, c
    text = md.read_text()
    assert "| closest otherwise | sweep s | setup s |" in text
    row = [line for line in text.splitlines() if line.startswith("| slow_first_cast | cast |")]
    assert len(row) == 1, text
    sweep, setup = (float(x) for x in row[0].rstrip(" |").split(" | ")[-2:])
    assert setup >= SLOW_FIRST_SECONDS > sweep, row


# Guards against the eighth field breaking the survey lines' readers: it is read when present,
# and a line of the older seven fields still reads (setup 0).
def test_survey_lines_with_and_without_setup():
    new, old = parse_lines("cast\tc\te4m3fn\tocp_mx\t10\t0.250\t\t1.750\n"
                           "claim\tocp_mx\t0\t\n"
                           "cast\tc\te5m2\t-\t10\t0.500\tboom\n")
    assert (new.seconds, new.setup_seconds, new.error, new.matches) == (0.25, 1.75, "", ("ocp_mx",))
    assert (old.seconds, old.setup_seconds, old.error) == (0.5, 0.0, "boom")
