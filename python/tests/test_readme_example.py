"""The README's Python examples run: the ```python block after each marker
(`<!-- readme-example -->`: check_gemm; `<!-- readme-example-check -->`: mxgate.check) of
README.md is written to a file and run by pytest in a fresh interpreter, which must collect and
pass its test. So the examples users copy are the ones CI runs, and at most 12 lines of code
each (the README promises 10-line examples; blank lines aside).
Not covered: the README's shell commands (test_install.py runs the install)."""

import os
import re
import subprocess
import sys

import pytest
from support import REPO


def example(marker):
    text = (REPO / "README.md").read_text()
    match = re.search(rf"<!-- {marker} -->\n```python\n(.*?)\n```", text, re.S)
    assert match, f"README.md has no ```python block after <!-- {marker} -->"
    return match.group(1)


# Guards against the README example rotting (a renamed function or argument, an example that
# no longer passes) or growing past what the README calls a 10-line example.
@pytest.mark.parametrize("marker", ["readme-example", "readme-example-check"])
def test_readme_example_passes_under_pytest(tmp_path, marker):
    code = example(marker)
    assert len([line for line in code.splitlines() if line.strip()]) <= 12, code
    path = tmp_path / "test_readme_example_block.py"
    path.write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
