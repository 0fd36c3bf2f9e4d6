"""Packaging of `mxgate` with the library it loads (docs/python.md §2).

The wheel carries libmxgate.so as mxgate/_lib/libmxgate.so. The library is taken from, in this
order: the file MXGATE_LIBRARY names; the checkout's default build (../build/default/capi/),
built first with `cmake --preset default` and `cmake --build build/default --target mxgate_capi`
when it is missing. The package has no compiled Python extension, so the wheel is tagged
py3-none-<platform>: one wheel serves every CPython 3 on that platform.
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LIBRARY = "libmxgate.so"


def library():
    env = os.environ.get("MXGATE_LIBRARY")
    if env:
        path = Path(env)
        if not path.is_file():
            raise SystemExit(f"mxgate setup: MXGATE_LIBRARY={env} is not a file")
        return path
    built = REPO / "build" / "default" / "capi" / LIBRARY
    if not built.is_file():
        if not (REPO / "CMakeLists.txt").is_file():
            raise SystemExit(
                f"mxgate setup: no {LIBRARY}: set MXGATE_LIBRARY, or install from a checkout"
            )
        if not (REPO / "build" / "default" / "CMakeCache.txt").is_file():
            subprocess.run(["cmake", "--preset", "default"], cwd=REPO, check=True)
        subprocess.run(
            ["cmake", "--build", "build/default", "--target", "mxgate_capi"], cwd=REPO, check=True
        )
    return built


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "mxgate" / "_lib"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library(), target / LIBRARY)


commands = {"build_py": BuildPyWithLibrary}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheelPlatform(bdist_wheel):
        """A platform wheel (it carries a shared library) for any CPython 3."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    commands["bdist_wheel"] = BdistWheelPlatform
except ImportError:  # no wheel package: pip falls back to a plain install
    pass

setup(cmdclass=commands)
