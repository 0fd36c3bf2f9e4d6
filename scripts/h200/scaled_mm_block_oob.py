"""Does torch's blockwise _scaled_mm read its 128x128 weight scales past the grid? (GPU only;
docs/record.md §6.) `replay --rerun` found the recorded K = 2304, N = 256 call not reproducible
on the same inputs. docs/layouts.md §6: torch demands the row stride ceil(K/128) = 18 for the
(N/128, K/128) grid, cuBLASLt reads rows at a stride padded to a multiple of 4 (20), so row 1
would read elements 20..37 of a 36-element grid: two floats past its end. Here the grid (all
ones) sits at the start of a larger buffer whose tail holds V; if the output changes with V, the
kernel reads past the grid, and the columns it changes say which block row.

    python3 scripts/h200/scaled_mm_block_oob.py OUT.json
"""

import json
import sys

import torch


def run(tail_value, m=64, n=256, k=2304):
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randint(-4, 5, (m, k), generator=g, device="cuda").float().to(torch.float8_e4m3fn)
    b = torch.randint(-4, 5, (n, k), generator=g, device="cuda").float().to(torch.float8_e4m3fn)
    kb, nb = k // 128, n // 128
    scale_a = torch.ones((kb, m), device="cuda").t()  # (M, K/128), outer-dim-major
    buf = torch.full((nb * kb + 64,), float(tail_value), device="cuda")
    buf[:nb * kb] = 1.0
    scale_b = buf[:nb * kb].view(nb, kb).t()  # (K/128, N/128) with strides (1, K/128)
    out = torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.float32)
    exact = a.float() @ b.float().t()  # small integers: every fp32 sum is exact
    return out, exact


def main(path):
    res = dict(torch=torch.__version__, device=torch.cuda.get_device_name(), runs=[])
    base, exact = run(1.0)
    for v in (1.0, 2.0, 1e6, float("nan")):
        out, _ = run(v)
        diff = ~((out == base) | (out.isnan() & base.isnan()))
        wrong = ~((out == exact) | (out.isnan() & exact.isnan()))
        cols = diff.any(dim=0).nonzero().flatten().tolist()
        wcols = wrong.any(dim=0).nonzero().flatten().tolist()
        r = dict(tail=str(v), differ_from_tail_1=int(diff.sum()),
                 cols_changed=[cols[0], cols[-1]] if cols else None,
                 wrong_vs_exact=int(wrong.sum()),
                 wrong_cols=[wcols[0], wcols[-1]] if wcols else None)
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
    for k in (512, 2048):  # K/128 % 4 == 0: no padding, nothing past the grid
        out, exact = run(float("nan"), k=k)
        r = dict(k=k, tail="nan", wrong_vs_exact=int((out != exact).sum()))
        res["runs"].append(r)
        print(json.dumps(r), flush=True)
    with open(path, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
