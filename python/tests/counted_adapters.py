"""An adapter that counts, in the file $MXGATE_COUNT_FILE, each time it is built and each time
its check_available() is asked (one line "init" or "available" each): for the pytest plugin's
test that one implementation is loaded once for all its items (test_pytest_plugin_shipped.py).
Its upcast is numpy's, correct by the OCP MX definition of E8M0 (2^(code - 127), 0xFF NaN)."""

import os

import numpy as np

import mxgate


def _note(what):
    path = os.environ.get("MXGATE_COUNT_FILE")
    if path:
        with open(path, "a") as f:
            f.write(what + "\n")


class Counted(mxgate.Adapter):
    name = "counted"

    def __init__(self):
        _note("init")
        super().__init__()

    def check_available(self):
        _note("available")

    @mxgate.op("upcast_e8m0", convention="ocp_mx")
    def upcast_e8m0(self, e8m0):
        codes = np.asarray(e8m0, dtype=np.uint8).astype(np.int32)
        with np.errstate(over="ignore"):
            out = np.ldexp(np.float32(1), codes - 127).astype(np.float32)
        out[codes == 0xFF] = np.float32("nan")
        return out
