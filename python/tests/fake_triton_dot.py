"""A numpy stand-in for mxgate.adapters.triton_dot with the names scripts/run-triton-dot-probe
reads (TILES, PER_TILE, TritonDotAdapter with gemm(tile, ...), TritonDotScaleFirstBlock), so the
script's steps run through to summary.md on a host without a GPU (test_triton_dot.py,
MXGATE_TRITON_DOT_MODULE=fake_triton_dot). One tile accumulating in fp32 in k order,
declaring fp32_rn: the probe finds that model; the planted fault is the real one's."""

import numpy as np

from mxgate.adapter import Adapter, Op
from mxgate.adapters.numpy import decode
from mxgate.adapters.triton_dot import Tile

TILES = (Tile("dot_fp8_64x64", 64, 64, 64, 4, None, "fp32_rn", "numpy stand-in"),)


class TritonDotAdapter(Adapter):
    name = "fake_triton_dot"
    description = "numpy stand-in for the Triton FP8 tl.dot adapter"
    tiles = ()
    fault = False

    def __init__(self):
        ops = []
        for t in TILES:
            run = (lambda t: lambda a, sa, b, sb, call: self.gemm(t, a, sa, b, sb, call))(t)
            ops.append(Op("gemm_block", run, t.op, a_dtypes=("e4m3fn", "e5m2"),
                          b_dtypes=("e4m3fn", "e5m2"), out_dtypes=("f32",), a_block=(0, 0),
                          b_block=(0, 0), accumulator=t.accumulator))
        super().__init__(ops=ops)

    def gemm(self, tile, a, a_scales, b, b_scales, call):
        # fp32 round-to-nearest, k in increasing order (products of FP8 values are exact in
        # fp32), the scales once at the end: what fp32_rn simulates (its ordered_gemm).
        x = decode(a, call.tensor("a").dtype).astype(np.float32)
        y = decode(b, call.tensor("b").dtype).astype(np.float32)
        s = np.float32(np.float32(a_scales.reshape(-1)[0]) * np.float32(b_scales.reshape(-1)[0]))
        acc = np.zeros((x.shape[0], y.shape[0]), np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(x.shape[1]):
                acc += np.outer(x[:, k], y[:, k])
                if self.fault and k == tile.bk - 1:  # planted: the first K block scaled alone
                    acc *= s
            return acc if self.fault and x.shape[1] >= tile.bk else acc * s


class FakeDot64(TritonDotAdapter):
    name = "fake_triton_dot_64x64"
    tiles = ("dot_fp8_64x64",)


class TritonDotScaleFirstBlock(TritonDotAdapter):
    name = "fake_triton_dot_scale_first_block"
    description = "planted fault: sa * sb applied to the first K block's partial only"
    fault = True


PER_TILE = {"dot_fp8_64x64": FakeDot64}
