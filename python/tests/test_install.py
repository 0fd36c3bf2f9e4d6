"""`pip install` from the repo works offline and gives a package that carries its library:
the README's command (`python3 -m pip install --no-build-isolation --no-deps ./python`, here in a
venv with the system's numpy and setuptools) on a copy of python/ laid out like a checkout whose
default build holds libmxgate.so; the installed package, imported from outside the checkout,
loads its own copy of the library, carries the adapters and the shape catalog (compiled into the
library), and registers the pytest plugin (entry point pytest11: pytest loads it without -p, and
with -p it stays one plugin); `pip wheel` tags the wheel py3-none-<platform> (no CPython
extension: one wheel for every CPython 3).
Not covered: installing on the H200 (Python 3.12, numpy 2.x), which uses the same wheel."""

import os
import shutil
import subprocess
import sys
import sysconfig

import mxgate
from support import REPO


def run(*args, cwd=None, env=None):
    r = subprocess.run(list(map(str, args)), capture_output=True, text=True, cwd=cwd, env=env)
    assert r.returncode == 0, f"{' '.join(map(str, args))}: {r.stdout}{r.stderr}"
    return r.stdout


# Guards against the install needing the network or a build isolation the machine cannot give,
# leaving the library, the adapters or the pytest plugin out of the package, or the installed
# package loading a checkout's library (or reading the checkout's catalog) instead of its own.
def test_pip_install_and_wheel(tmp_path):
    checkout = tmp_path / "repo"
    shutil.copytree(REPO / "python", checkout / "python",
                    ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    lib = checkout / "build" / "default" / "capi"
    lib.mkdir(parents=True)
    (lib / "libmxgate.so").symlink_to(mxgate.library_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MXGATE_LIBRARY")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--system-site-packages", venv, env=env)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "./python",
        cwd=checkout, env=env)
    shutil.rmtree(checkout / "build")  # the installed package must not need the checkout
    out = run(python, "-c",
              "import mxgate; print(mxgate.__file__); print(mxgate.library_path); "
              "print(mxgate.encode([448.0, 464.0], 'e4m3fn', 'ocp_mx').tolist())",
              cwd=tmp_path, env=env)
    module, library, codes = out.splitlines()
    assert module.startswith(str(venv)) and library.startswith(str(venv)), out
    assert library.endswith("mxgate/_lib/libmxgate.so")
    assert codes == "[126, 126]"
    out = run(python, "-c", "import mxgate; print(len(mxgate.shapes()))", cwd=tmp_path, env=env)
    assert int(out) == len(mxgate.shapes()) > 0, out
    for plugin_arg in ([], ["-p", "mxgate.pytest_plugin"]):
        r = subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-v",
                            *plugin_arg, "--mxgate-impl", "py:mxgate.adapters.numpy:NumpyAdapter",
                            "--mxgate-cases", "5", "-k", "upcast_e8m0.bit_exact"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "mxgate::numpy::upcast_e8m0::upcast_e8m0.bit_exact PASSED" in r.stdout, r.stdout
    (checkout / "build" / "default" / "capi").mkdir(parents=True)
    (checkout / "build" / "default" / "capi" / "libmxgate.so").symlink_to(mxgate.library_path)
    run(python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", tmp_path / "dist",
        "./python", cwd=checkout, env=env)
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheels = [p.name for p in (tmp_path / "dist").iterdir()]
    assert wheels == [f"mxgate-{mxgate.__version__}-py3-none-{platform}.whl"], wheels
