"""The README's Python examples run: the ```python block after each marker
(`<!-- readme-example -->`: check_gemm; `<!-- readme-example-check -->`: mxgate.check;
`<!-- readme-example-hypothesis -->`: a hypothesis test drawing mxgate.strategies cases;
`<!-- readme-example-layer -->`: a LayerAdapter under the layer properties, under 30 lines) of
README.md is written to a file and run by pytest in a fresh interpreter, which must collect and
pass its test. So the examples users copy are the ones CI runs, and at most 12 lines of code
each (the README promises 10-line examples; blank lines aside). The ```sh line after
`<!-- readme-example-plugin -->` (the pytest plugin over the numpy adapter) runs as written, from
a directory laid out like the checkout.
Not covered: the README's other shell commands (test_install.py runs the install)."""

import os
import re
import subprocess
import sys

import pytest
from support import REPO


def example(marker, language="python"):
    text = (REPO / "README.md").read_text()
    match = re.search(rf"<!-- {marker} -->\n```{language}\n(.*?)\n```", text, re.S)
    assert match, f"README.md has no ```{language} block after <!-- {marker} -->"
    return match.group(1)


# Guards against a README example rotting (a renamed function, argument, protocol method or
# property, an example that no longer passes) or growing past the size the README gives it: the
# 10-line examples (12 non-blank lines with their imports) and a layer adapter "under 30 lines",
# as the issue asks of a user's adapter.
@pytest.mark.parametrize("marker, max_lines", [("readme-example", 12),
                                               ("readme-example-check", 12),
                                               ("readme-example-hypothesis", 12),
                                               ("readme-example-layer", 29)])
def test_readme_example_passes_under_pytest(tmp_path, marker, max_lines):
    code = example(marker)
    assert len([line for line in code.splitlines() if line.strip()]) <= max_lines, code
    path = tmp_path / f"test_{marker.replace('-', '_')}_block.py"
    path.write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


# Guards against the README's plugin command rotting (a renamed option, module or adapter) or
# no longer passing: run as written (one line), it must collect mxgate's items and pass them.
def test_readme_plugin_command_passes(tmp_path):
    command = example("readme-example-plugin", "sh")
    assert len(command.splitlines()) == 1, command
    (tmp_path / "python").symlink_to(REPO / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTEST_ADDOPTS"] = "-p no:cacheprovider"  # the rootdir is python/ (its setup.py): no cache
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=tmp_path,
                       env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    passed = re.search(r"(\d+) passed", r.stdout)
    assert passed and int(passed.group(1)) >= 30 and "failed" not in r.stdout, r.stdout
