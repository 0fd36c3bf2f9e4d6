"""Adapters of tactics for test_tactics.py (in-process and through the worker, py:tactic_adapters:
NAME): one per-tensor FP8 GEMM op whose tactics are configs of one numpy kernel."""

import mxgate
from mxgate.adapters.numpy import NumpyAdapter

_CONTRACT = dict(a_dtypes=("e4m3fn", "e5m2"), b_dtypes=("e4m3fn", "e5m2"), out_dtypes=("f32",),
                 a_block=(0, 0), b_block=(0, 0), accumulator="fp32_rn")


class _Tactics(NumpyAdapter):
    """gemm_tensor with the tactics TACTICS; a config {"drop_b_scale": True} multiplies without
    B's scale (the planted fault of one tactic)."""

    TACTICS = ()

    def __init__(self):
        def run(a, a_scales, b, b_scales, call, tactic):
            if tactic.get("drop_b_scale"):
                b_scales = b_scales * 0 + 1
            return self._gemm_block(a, a_scales, b, b_scales, call, (0, 0), (0, 0))

        super().__init__(ops=[mxgate.Op("gemm_block", run, "gemm_tensor", tactics=self.TACTICS,
                                        **_CONTRACT)])


class Correct(_Tactics):
    name = "tactics_correct"
    description = "three correct tactics"
    TACTICS = (mxgate.Tactic("a", {}), mxgate.Tactic("b", {}), mxgate.Tactic("c", {}))


class FaultyTactic(_Tactics):
    name = "tactics_faulty"
    description = "planted fault: tactic 2 (no_b) multiplies without B's scale"
    TACTICS = (mxgate.Tactic("a", {}), mxgate.Tactic("b", {}),
               mxgate.Tactic("no_b", {"drop_b_scale": True}))


class UnknownModel(_Tactics):
    name = "tactics_unknown_model"
    description = "tactic 1 declares an accumulator model no library has"
    TACTICS = (mxgate.Tactic("a", {}), mxgate.Tactic("b", {}, accumulator="no_such_model"))


class Many(_Tactics):
    name = "tactics_many"
    description = "twenty correct tactics: a run samples eight"
    TACTICS = tuple(mxgate.Tactic(f"t{i}", {}) for i in range(20))
