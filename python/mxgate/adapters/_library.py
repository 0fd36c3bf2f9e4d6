"""What the adapters over an optional library share (jax, ml_dtypes, torch, triton, triton_dot):
constructing one never fails when its library or device is absent; it then has no ops and
check_available raises the mxgate.Unavailable that says why (docs/python.md §11)."""

from ..adapter import Adapter, Op, Unavailable

# Our element dtype -> the name of its type in torch, jax.numpy and ml_dtypes (float8_e8m0fnu is
# absent from older versions of each).
FLOAT8_TYPES = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
                "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu"}


def float8_types(module):
    """Our dtype -> the type of FLOAT8_TYPES that `module` has."""
    return {k: getattr(module, v) for k, v in FLOAT8_TYPES.items() if hasattr(module, v)}


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

    def cast_ops(self, convention, cast_notes, upcast_notes):
        """Op cast to every dtype of self.types, and upcast_e8m0 where it has e8m0."""
        ops = [Op("cast", self.cast, "cast", out_dtypes=tuple(self.types), convention=convention,
                  notes=cast_notes)]
        if "e8m0" in self.types:
            ops.append(Op("upcast_e8m0", self.upcast_e8m0, "upcast_e8m0", convention=convention,
                          notes=upcast_notes))
        return ops
