"""The flight recorder on the GPU (docs/record.md §6; not run on the host CI): a two-layer torch
MLP whose linears call torch._scaled_mm blockwise (1x128 activation scales, 128x128 weight
scales, float32; scale_b passed as the unpadded (K/128, N/128) column-major grid) at M = 64,
N = 256, K = 2304, recorded without changing its code (mxgate.record patches torch._scaled_mm),
then replayed and the failing calls shrunk. torch's blockwise _scaled_mm is expected wrong when
(K/128) % 4 != 0 and N/128 >= 2 (docs/python.md §14): layer 1 (K = 2304, 18 blocks) should
fail, layer 2 (K = 256 -> N = 128, one block row) pass; the shrink should reach N = 256, K = 128.

    PYTHONPATH=python MXGATE_LIBRARY=build/default/capi/libmxgate.so python3 \
        scripts/h200/record_torch.py OUTDIR
"""

import json
import os
import shutil
import sys
import time

import torch

import mxgate
from mxgate.replay import replay
from mxgate.shrink import shrink


def quantize(x, br, bc):
    """x (rows, cols) float32 on the GPU -> (float8_e4m3fn, float32 scales per br x bc)."""
    rows, cols = x.shape
    t = x.reshape(rows // br, br, cols // bc, bc)
    s = (t.abs().amax(dim=(1, 3)) / 448).clamp(min=1e-12)
    q = (t / s[:, None, :, None]).reshape(rows, cols).to(torch.float8_e4m3fn)
    return q, s.float()


class BlockLinear:
    def __init__(self, n, k, gen):
        w = torch.randn(n, k, generator=gen, device="cuda") / k ** 0.5
        self.w, self.ws = quantize(w, 128, 128)  # (N, K), (N/128, K/128)

    def __call__(self, x):
        q, s = quantize(x, 1, 128)  # (M, K), (M, K/128)
        scale_a = s.t().contiguous().t()  # outer-dim-major, as torch wants
        return torch._scaled_mm(q, self.w.t(), scale_a=scale_a, scale_b=self.ws.t(),
                                out_dtype=torch.bfloat16)


def main(out):
    gen = torch.Generator(device="cuda").manual_seed(1)
    l1, l2 = BlockLinear(256, 2304, gen), BlockLinear(128, 256, gen)
    x = torch.randn(64, 2304, generator=gen, device="cuda")
    rec = os.path.join(out, "record")
    with mxgate.record(rec):  # torch is imported: torch._scaled_mm is hooked
        t0 = time.perf_counter()
        for _ in range(3):
            l2(torch.relu(l1(x).float()))
        torch.cuda.synchronize()
        recorded = (time.perf_counter() - t0) / 6
    t0 = time.perf_counter()
    for _ in range(3):
        l2(torch.relu(l1(x).float()))
    torch.cuda.synchronize()
    alone = (time.perf_counter() - t0) / 6
    print(f"per call: alone {alone * 1e3:.3f} ms, recorded {recorded * 1e3:.3f} ms")
    r = replay(rec)
    print(r.text(), end="")
    print(f"replay: {len(r.results) / r.seconds:.1f} calls/s")
    for failed in r.failed[:1]:
        s = shrink(failed["record"], os.path.join(out, "shrunk"))
        print(f"shrunk {s.before} -> {s.after} (rerun {s.rerun}, {s.tried} candidates), "
              f"first {s.first and (s.first['row'], s.first['col'])}: {s.case}")
    # The same model through the TorchDispatchMode (aten._scaled_mm) instead of the patch.
    rec_d = os.path.join(out, "record_dispatch")
    with mxgate.record(rec_d, dispatch=True):
        l2(torch.relu(l1(x).float()))
        torch.cuda.synchronize()
    rd = replay(rec_d, rerun=True)
    print("dispatch mode:", rd.text(), end="")
    # CUDA graphs: the eager warm-up call is recorded; the calls made while the graph is
    # captured run unrecorded (a copy to the host would break the capture), counted as
    # cuda_graph_capture; the graph's replays run no Python, so nothing sees them.
    rec_g = os.path.join(out, "record_graph")
    try:
        with mxgate.record(rec_g):
            l1(x)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                yg = l1(x)
            graph.replay()
            torch.cuda.synchronize()
        gs = json.load(open(os.path.join(rec_g, "summary.json")))
        print(f"cuda graph: {gs['ops']}; graph output equals eager: "
              f"{bool(torch.equal(yg, l1(x)))}")
    except Exception as e:  # said, not hidden: the rest of the run goes on
        print(f"cuda graph: FAILED {type(e).__name__}: {e}")
    # Overhead at 4096^3 (one blockwise call; recording writes every byte, replay not timed).
    big = BlockLinear(4096, 4096, gen)
    xb = torch.randn(4096, 4096, generator=gen, device="cuda")
    big(xb)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(3):
        big(xb)
    torch.cuda.synchronize()
    alone = (time.perf_counter() - t0) / 3
    with mxgate.record(os.path.join(out, "record_4096"), max_bytes=1 << 30) as recorder:
        t0 = time.perf_counter()
        for _ in range(3):
            big(xb)
        torch.cuda.synchronize()
        recorded = (time.perf_counter() - t0) / 3
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in
               os.walk(os.path.join(out, "record_4096")) for f in fs)
    print(f"4096^3 blockwise: alone {alone * 1e3:.3f} ms (quantize + _scaled_mm), recorded "
          f"{recorded * 1e3:.1f} ms per call; record {size / 3 / 2**20:.1f} MiB per call")
    shutil.rmtree(os.path.join(out, "record_4096"))
    return r.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "record_torch_out"))
