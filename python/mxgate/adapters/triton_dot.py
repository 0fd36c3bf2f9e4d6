"""Triton (https://github.com/triton-lang/triton) FP8 GEMM through tl.dot with per-tensor fp32
scales: the tile configurations are the tactics of one op, `dot_fp8`, as an autotuned kernel's
configs are, and each declares its own accumulator model (docs/python.md §11.7, §11.9); mxgate
runs every property over every tile. The per-tile adapters (PER_TILE) gate one tile alone, as an
op of its own name.

The kernel: A (M x K, row-major) and B (N x K, row-major) fp8 e4m3fn (tl.float8e4nv) or e5m2
(tl.float8e5), acc = tl.dot(a, b.T, acc) in fp32 over K in steps of BK (masked: any M, N, K),
then C = (sa * sb) * acc once after the loop, fp32 output. No dot_scaled. The op family is the
per-tensor `gemm_block` of torch._scaled_mm's `scaled_mm_tensor` (scale blocks (0, 0): one fp32
scale per tensor), so every GEMM property of that family applies.

Which tensor-core instruction a tile becomes decides the accumulator. On sm_90 Triton lowers a
dot to wgmma when the tile's M is a multiple of 64 (one warpgroup per 64 rows), else to
mma.sync. The NVIDIA backend sets max_num_imprecise_acc_default = 2**30 on sm_90
(third_party/nvidia/backend/compiler.py, CUDABackend.parse_options), and the wgmma lowering keeps
a separate partial only when max_num_imprecise_acc <= the dot's K (WarpGroupDotOp::
needsPartialAccumulator), so an FP8 wgmma dot never promotes its tensor-core partial to fp32
registers: the loop-carried acc is the wgmma's C, and all of K accumulates in the tensor core.
Measured on the H200 (Triton 3.6): 2^16 at k = 0 and 4 at k = 31, 100, 900 (K = 1024)
and 4000 (K = 4096) give 65536 with 64x64 and 128x128 tiles, 65540 with 16x16 tiles.
A dot given max_num_imprecise_acc = 128 with BK = 128 adds a fresh wgmma partial to the fp32 acc
every 128 k, at multiples of 128 (cuBLASLt's promotion; not yet measured here).
"""

from typing import NamedTuple, Optional, Tuple

import numpy as np

from ..adapter import Op, Tactic, Unavailable
from . import require
from ._library import LibraryAdapter


class Tile(NamedTuple):
    """One tactic: the op name, block sizes, warps, the dot's max_num_imprecise_acc (None:
    Triton's default) and the accumulator model it declares."""

    op: str
    bm: int
    bn: int
    bk: int
    num_warps: int
    imprecise: Optional[int]
    accumulator: str
    why: str


# The accumulator of each tile on sm_90 (docs/accumulators.md). sm90_fp8_mma_nopromo is
# sm90_fp8_mma with chunk_k = 0 (reference/accumulator.cpp); a library without it reports the
# bound checks of those ops as contract errors naming the unknown model, never a wrong verdict.
TILES: Tuple[Tile, ...] = (
    Tile("dot_fp8_16x16", 16, 16, 32, 4, None, "fp32_rn:unit_roundoff_bits=23",
         "mma.sync (M < 64); the H200 probe measured 24 bits kept by truncation: fp32 with "
         "directed rounding (unit roundoff 2^-23)"),
    Tile("dot_fp8_64x64", 64, 64, 64, 4, None, "sm90_fp8_mma_nopromo",
         "wgmma, never promoted (max_num_imprecise_acc_default = 2**30 on sm_90; measured)"),
    Tile("dot_fp8_128x128", 128, 128, 128, 8, None, "sm90_fp8_mma_nopromo",
         "wgmma, never promoted (max_num_imprecise_acc_default = 2**30 on sm_90; measured)"),
    Tile("dot_fp8_128x128_promote128", 128, 128, 128, 8, 128, "sm90_fp8_mma",
         "wgmma with max_num_imprecise_acc = 128: fp32 promotion every 128 k (measured)"),
)

_FP8 = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def _kernel(triton, tl):
    @triton.jit
    def dot_kernel(a_ptr, b_ptr, c_ptr, sa_ptr, sb_ptr, M, N, K, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr, IMPRECISE: tl.constexpr,
                   FAULT: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        s = tl.load(sa_ptr) * tl.load(sb_ptr)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rn[None, :] * K + rk[:, None],
                        mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
            if IMPRECISE > 0:
                acc = tl.dot(a, b, acc, max_num_imprecise_acc=IMPRECISE)
            else:
                acc = tl.dot(a, b, acc)
            if FAULT:  # planted: the scales applied inside the loop, to the first K block only
                if k0 == 0:
                    acc = acc * s
        # The scales once, after the loop: C = (sa * sb) * acc.
        if FAULT:
            c = acc
        else:
            c = acc * s
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], c,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    return dot_kernel


class TritonDotAdapter(LibraryAdapter):
    """One op, dot_fp8, whose tactics are the tiles of TILES; a subclass with `tiles` set gates
    those tiles alone, each as an op of its own name."""

    name = "triton_dot"
    description = ("Triton FP8 tl.dot GEMM, per-tensor fp32 scales, the tile configurations as "
                   "tactics of one op")
    tiles: Tuple[str, ...] = ()  # op names of TILES; empty: all
    fault = False  # the planted fault of TritonDotScaleFirstBlock

    def load(self):
        triton = require("triton", f"the {self.name} adapter")
        self.torch = require("torch", f"the {self.name} adapter")
        tl = require("triton.language", f"the {self.name} adapter")
        if not self.torch.cuda.is_available():
            raise Unavailable("no CUDA device here (torch.cuda.is_available())")
        self.kernel = _kernel(triton, tl)
        v = triton.__version__
        contract = dict(a_dtypes=tuple(_FP8), b_dtypes=tuple(_FP8), out_dtypes=("f32",),
                        a_block=(0, 0), b_block=(0, 0))
        if not self.tiles:
            # Every tile a tactic of one op; the call's tactic config is its Tile.
            tactics = [Tactic(t.op, t, t.accumulator,
                              f"tile {t.bm}x{t.bn}x{t.bk}, num_warps {t.num_warps}: {t.why}")
                       for t in TILES]
            run = lambda a, a_scales, b, b_scales, call, tactic: self.gemm(  # noqa: E731
                tactic, a, a_scales, b, b_scales, call)
            run.__name__ = "dot_fp8"
            return [Op("gemm_block", run, "dot_fp8", accumulator=TILES[0].accumulator,
                       tactics=tactics, notes=f"triton {v}: tl.dot, one tactic per tile",
                       **contract)]
        ops = []
        for t in TILES:
            if t.op not in self.tiles:
                continue
            ops.append(Op("gemm_block", self._runner(t), t.op, accumulator=t.accumulator,
                          notes=f"triton {v}: tl.dot, tile {t.bm}x{t.bn}x{t.bk}, "
                                f"num_warps {t.num_warps}: {t.why}", **contract))
        return ops

    def _runner(self, tile):
        def run(a, a_scales, b, b_scales, call):
            return self.gemm(tile, a, a_scales, b, b_scales, call)

        run.__name__ = tile.op
        return run

    def gemm(self, tile, a, a_scales, b, b_scales, call):
        t = self.torch
        dev = lambda v: t.from_numpy(np.ascontiguousarray(v)).cuda()
        m, k = a.shape
        n = b.shape[0]
        fa = dev(a).view(getattr(t, _FP8[call.tensor("a").dtype]))
        fb = dev(b).view(getattr(t, _FP8[call.tensor("b").dtype]))
        sa = dev(np.asarray(a_scales, dtype=np.float32).reshape(1))
        sb = dev(np.asarray(b_scales, dtype=np.float32).reshape(1))
        c = t.empty((m, n), dtype=t.float32, device="cuda")
        grid = (-(-m // tile.bm), -(-n // tile.bn))
        self.kernel[grid](fa, fb, c, sa, sb, m, n, k, BM=tile.bm, BN=tile.bn, BK=tile.bk,
                          IMPRECISE=tile.imprecise or 0, FAULT=self.fault,
                          num_warps=tile.num_warps)
        return c.cpu().numpy()


class TritonDot16(TritonDotAdapter):
    name = "triton_dot_16x16"
    description = "Triton FP8 tl.dot GEMM, per-tensor scales, 16x16 tiles (mma.sync on sm_90)"
    tiles = ("dot_fp8_16x16",)


class TritonDot64(TritonDotAdapter):
    name = "triton_dot_64x64"
    description = "Triton FP8 tl.dot GEMM, per-tensor scales, 64x64 tiles (wgmma on sm_90)"
    tiles = ("dot_fp8_64x64",)


class TritonDot128(TritonDotAdapter):
    name = "triton_dot_128x128"
    description = "Triton FP8 tl.dot GEMM, per-tensor scales, 128x128 tiles (wgmma on sm_90)"
    tiles = ("dot_fp8_128x128",)


class TritonDot128Promote(TritonDotAdapter):
    name = "triton_dot_128x128_promote128"
    description = ("Triton FP8 tl.dot GEMM, per-tensor scales, 128x128 tiles, "
                   "max_num_imprecise_acc = 128")
    tiles = ("dot_fp8_128x128_promote128",)


class TritonDotScaleFirstBlock(TritonDotAdapter):
    """The proof that the properties see a misplaced scale through the no-promotion bound."""

    name = "triton_dot_scale_first_block"
    description = ("planted fault: sa * sb applied inside the K loop to the first K block's "
                   "partial only (64x64 tiles)")
    tiles = ("dot_fp8_64x64",)
    fault = True


# One adapter per tactic, for gating a tile alone (scripts/run-triton-dot-probe).
PER_TILE = {"dot_fp8_16x16": TritonDot16, "dot_fp8_64x64": TritonDot64,
            "dot_fp8_128x128": TritonDot128, "dot_fp8_128x128_promote128": TritonDot128Promote}
