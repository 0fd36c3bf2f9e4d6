"""What the adapters over an optional library share (jax, ml_dtypes, torch, triton, triton_dot):
constructing one never fails when its library or device is absent; it then has no ops and
check_available raises the mxgate.Unavailable that says why (docs/python.md §11)."""

from ..adapter import Adapter, Unavailable

# Our element dtype -> the name of its type in torch, jax.numpy and ml_dtypes (float8_e8m0fnu is
# absent from older versions of each).
FLOAT8_TYPES = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
                "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu"}


class LibraryAdapter(Adapter):
    """load() imports the library (mxgate.adapters.require) and checks the device, raising
    mxgate.Unavailable when either is missing, and returns the ops."""

    def __init__(self):
        self._error = None
        try:
            ops = self.load()
        except Unavailable as e:
            self._error = e
            ops = []
        super().__init__(ops=ops)

    def load(self):
        raise NotImplementedError

    def check_available(self):
        if self._error is not None:
            raise self._error
