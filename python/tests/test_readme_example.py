"""The README's Python example runs: the ```python block after the `<!-- readme-example -->`
marker of README.md is written to a file and run by pytest in a fresh interpreter, which must
collect and pass its test. So the example users copy is the one CI runs, and at most 12 lines
of code (the README promises a 10-line example; blank lines aside).
Not covered: the README's shell commands (test_install.py runs the install)."""

import os
import re
import subprocess
import sys

from support import REPO


def example():
    text = (REPO / "README.md").read_text()
    match = re.search(r"<!-- readme-example -->\n```python\n(.*?)\n```", text, re.S)
    assert match, "README.md has no ```python block after <!-- readme-example -->"
    return match.group(1)


# Guards against the README example rotting (a renamed function or argument, an example that
# no longer passes) or growing past what the README calls a 10-line example.
def test_readme_example_passes_under_pytest(tmp_path):
    code = example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 12, code
    path = tmp_path / "test_readme_example_block.py"
    path.write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
