"""Helpers of the mxgate Python suite: the CLI next to the library (to compare the two on the
same data), .npy files in a temporary directory, bit-for-bit array equality."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_path():
    """MXGATE_CLI (ctest sets it), else the checkout's default build. Missing is a failure, never
    a skip: these tests exist to compare the two."""
    env = os.environ.get("MXGATE_CLI")
    path = Path(env) if env else REPO / "build" / "default" / "tools" / "mxgate" / "mxgate"
    if not path.is_file():
        pytest.fail(f"no mxgate CLI at {path}: build it (./mxgate --help) or set MXGATE_CLI")
    return path


class Cli:
    """Runs `mxgate VERB ARGS...` and returns (exit code, stdout, stderr)."""

    def __init__(self, path):
        self.path = path

    def __call__(self, *args):
        r = subprocess.run([str(self.path), *map(str, args)], capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr

    def ok(self, *args):
        """stdout of a verb that must succeed."""
        code, out, err = self(*args)
        assert code == 0, f"mxgate {' '.join(map(str, args))} exited {code}: {out}{err}"
        return out

    def error(self, verb, *args):
        """The message of a failing verb: stderr without "mxgate VERB: " (exit code 2 asserted)."""
        code, out, err = self(verb, *args)
        assert code == 2, f"mxgate {verb} exited {code}, expected 2: {out}{err}"
        prefix = f"mxgate {verb}: "
        assert err.startswith(prefix), err
        return err[len(prefix):].rstrip("\n")


class Files:
    """np.save / np.load in one temporary directory."""

    def __init__(self, root):
        self.root = Path(root)

    def __call__(self, name):
        return str(self.root / name)

    def save(self, name, array):
        np.save(self(name), array)
        return self(name)

    def load(self, name):
        return np.load(self(name))


def same_bits(x, y):
    """Equal dtype, shape and bytes (floats compared as bits: -0 is not +0)."""
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
