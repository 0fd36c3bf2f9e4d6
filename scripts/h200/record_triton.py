"""The flight recorder on a Triton tl.dot_scaled kernel (docs/record.md §6; GPU only): a
two-layer MXFP8 model whose linears call a user wrapper around the Triton adapter's
tl.dot_scaled kernel (e4m3 x e4m3, e8m0 scales 1 x 32, fp32 out), hooked by dotted path with a
declaration and recorded without changing the model's code. Layer 1 goes through the faithful
wrapper; layer 2 through one with a planted scale-order fault (b's scale rows reversed: the
"wrong scale order" class), so replay must fail the layer-2 calls only and shrink one of them.

    PYTHONPATH=python MXGATE_LIBRARY=build/default/capi/libmxgate.so python3 \\
        scripts/h200/record_triton.py OUTDIR
"""

import os
import sys

import torch
import triton
import triton.language as tl

import mxgate
from mxgate.adapters.triton import _kernels
from mxgate.replay import replay
from mxgate.shrink import shrink

_, DOT = _kernels(triton, tl)
DECL = dict(family="gemm_mx", a_dtypes=("e4m3fn",), b_dtypes=("e4m3fn",),
            k=mxgate.Dim(align=64), convention="triton_nvidia", accumulator="fp32_rn")


def mx_linear(a, a_scales, b, b_scales):
    """a (M, K) float8_e4m3fn, a_scales (M, K/32) uint8 e8m0, b (N, K), b_scales (N, K/32)."""
    m, k = a.shape
    n = b.shape[0]
    c = torch.empty((m, n), dtype=torch.float32, device=a.device)
    DOT[(-(-m // 32), -(-n // 32))](a, a_scales, b, b_scales, c, m, n, k, BM=32, BN=32, BK=64,
                                   A_FMT="e4m3", B_FMT="e4m3", A_PACK=1, B_PACK=1)
    return c


def mx_linear_reversed_scales(a, a_scales, b, b_scales):
    """The planted fault: b's scale rows taken in reverse order."""
    return mx_linear(a, a_scales, b, b_scales.flip(0).contiguous())


def quantize_mx(x):
    """x (rows, K) float32 -> (e4m3fn codes, e8m0 scales per 1 x 32), power-of-two scales."""
    rows, k = x.shape
    t = x.reshape(rows, k // 32, 32)
    amax = t.abs().amax(dim=2).clamp(min=2.0 ** -100)
    e = torch.floor(torch.log2(amax)).to(torch.int32) - 8  # amax / 2^e in [256, 512): e4m3 max 448
    q = (t / torch.exp2(e.float())[:, :, None]).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q.reshape(rows, k), (e + 127).to(torch.uint8)


class Model:
    def __init__(self, gen):
        w1 = torch.randn(256, 512, generator=gen, device="cuda")
        w2 = torch.randn(128, 256, generator=gen, device="cuda") * torch.exp2(
            torch.randint(-6, 6, (128, 1), generator=gen, device="cuda").float())
        self.w1, self.w2 = quantize_mx(w1), quantize_mx(w2)

    def __call__(self, x):
        h = mx_linear(*quantize_mx(x), *self.w1)
        return mx_linear_reversed_scales(*quantize_mx(torch.relu(h)), *self.w2)


def main(out):
    gen = torch.Generator(device="cuda").manual_seed(2)
    model = Model(gen)
    x = torch.randn(48, 512, generator=gen, device="cuda")
    rec = os.path.join(out, "record_triton")
    me = sys.modules[__name__].__name__
    with mxgate.record(rec, hooks={f"{me}.mx_linear": dict(DECL, name="mx_linear"),
                                   f"{me}.mx_linear_reversed_scales":
                                       dict(DECL, name="mx_linear_reversed_scales")}):
        for _ in range(2):
            model(x)
        torch.cuda.synchronize()
    r = replay(rec, rerun=True)
    print(r.text(), end="")
    bad = [x["record"] for x in r.failed]
    print(f"failed records: {[os.path.basename(b) for b in bad]}")
    ok = bool(bad) and all("reversed" in os.path.basename(b) for b in bad) and len(bad) == 2
    print(f"replay flags exactly the planted layer's calls: {ok}")
    for b in bad[:1]:
        s = shrink(b, os.path.join(out, "shrunk_triton"))
        print(f"shrunk {s.before} -> {s.after} (rerun {s.rerun}, {s.tried} candidates), "
              f"first {s.first and (s.first['row'], s.first['col'])}: {s.case}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "record_triton_out"))
