"""A small numpy model for the flight recorder's tests (python/tests/test_record_*.py): DeepSeek-
style block FP8 linear layers (1x128 activation scales, 128x128 weight scales, float32) whose
GEMM is `block_gemm` below, with a planted fault of the form of torch's blockwise _scaled_mm
bug (docs/python.md §14): the weight's scale grid, unpadded (ceil(N/128), ceil(K/128)), read with
the row stride rounded up to 4, so a call is wrong exactly when ceil(K/128) % 4 != 0 and
ceil(N/128) >= 2 (a row past the first reads other rows' scales, or past the grid: 0 there).

Everything else is right: the dequantization is from the format specifications
(mxgate.adapters.numpy), the sum float32 (numpy matmul), the declaration fp32_rn as the numpy
adapters claim.
"""

import numpy as np

import mxgate
from mxgate.adapters.numpy import E4M3FN, encode_e4m3fn_satfinite, expand

E4M3_MAX = np.float32(448)


def quantize(x, block_rows, block_cols):
    """x (rows, cols) float32 -> (e4m3fn codes, float32 scales of block_rows x block_cols):
    scale = amax / 448 per block (1 for an all-zero block)."""
    rows, cols = x.shape
    sr, sc = -(-rows // block_rows), -(-cols // block_cols)
    p = np.zeros((sr * block_rows, sc * block_cols), np.float32)
    p[:rows, :cols] = np.abs(x)
    amax = p.reshape(sr, block_rows, sc, block_cols).max(axis=(1, 3))
    scales = np.where(amax > 0, amax / E4M3_MAX, 1).astype(np.float32)
    codes = encode_e4m3fn_satfinite(x / expand(scales, rows, cols, block_rows, block_cols))
    return codes, scales


def dequant(codes, scales, block_rows, block_cols):
    return E4M3FN.take(codes) * expand(scales, codes.shape[0], codes.shape[1], block_rows,
                                       block_cols)


@mxgate.op("gemm_block", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",), out_dtypes=("f32",),
           a_block=(1, 128), b_block=(128, 128), accumulator="fp32_rn")
def block_gemm(a, a_scales, b, b_scales):
    """C (M, N) float32 = A (M, K) e4m3fn x B (N, K)^T, the planted fault in B's scales."""
    nb, kb = b_scales.shape
    ld = -(-kb // 4) * 4  # the fault: the padded row stride on the unpadded grid
    flat = np.zeros(nb * ld + kb, np.float32)
    flat[:nb * kb] = np.ascontiguousarray(b_scales).reshape(-1)
    read = np.stack([flat[r * ld:r * ld + kb] for r in range(nb)])
    return (dequant(a, a_scales, 1, 128) @ dequant(b, read, 128, 128).T).astype(np.float32)


def correct_gemm(a, a_scales, b, b_scales):
    """The same GEMM without the fault (undeclared: tests hook it with a declaration given)."""
    return (dequant(a, a_scales, 1, 128) @ dequant(b, b_scales, 128, 128).T).astype(np.float32)


def lazy_gemm(a, a_scales, b, b_scales, out):
    """An out= kernel that writes nothing when N > 128 (vllm-project/vllm#7777's form)."""
    if b.shape[0] <= 128:
        out[...] = correct_gemm(a, a_scales, b, b_scales)


# (N, K) per layer: 512 = 4 blocks (right), 384 = 3 blocks with N = 256 (the fault), N = 128
# (one block row: right whatever K).
LAYERS = ((256, 512), (256, 384), (128, 256))


class Model:
    """Three linear layers (relu between), weights quantized once from a seeded normal."""

    def __init__(self, seed=1, layers=LAYERS, gemm="block"):
        rng = np.random.default_rng(seed)
        self.weights = []
        for n, k in layers:
            w = rng.standard_normal((n, k)).astype(np.float32) / np.float32(np.sqrt(k))
            self.weights.append(quantize(w, 128, 128))
        self.gemm = gemm

    def linear(self, x, i):
        codes, scales = quantize(x, 1, 128)
        w, ws = self.weights[i]
        if self.gemm == "lazy":
            out = np.zeros((x.shape[0], w.shape[0]), np.float32)
            lazy_gemm(codes, scales, w, ws, out=out)
            return out
        return block_gemm(codes, scales, w, ws)

    def forward(self, x):
        for i in range(len(self.weights)):
            k = self.weights[i][0].shape[1]
            if x.shape[1] < k:  # the layers' K are declared, not chained: pad or cut
                x = np.pad(x, ((0, 0), (0, k - x.shape[1])))
            x = np.maximum(self.linear(x[:, :k], i), 0)
        return x


CALLS = {"flaky": 0}


def flaky_gemm(a, a_scales, b, b_scales):
    """Right on its first call in a process; from the second on, or with RECORD_MODEL_FLAKY=1,
    element (0, 1) is off by one ulp (a kernel whose result depends on something other than its
    inputs: a racing reduction, a tactic picked by the environment)."""
    import os

    c = correct_gemm(a, a_scales, b, b_scales)
    CALLS["flaky"] += 1
    if CALLS["flaky"] > 1 or os.environ.get("RECORD_MODEL_FLAKY") == "1":
        c[0, 1] = np.nextafter(c[0, 1], np.float32(np.inf))
    return c
