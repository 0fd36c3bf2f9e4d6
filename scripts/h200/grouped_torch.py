"""torch's grouped GEMMs on a GPU host against mxgate's dense oracle per group (docs/moe.md §5):
torch._grouped_mm (bf16) and torch._scaled_grouped_mm (FP8 e4m3fn, rowwise float32 scales, bf16
out), m-grouped 2D x 3D with offs = int32 cumulative END offsets. A group is a dense GEMM on a
row range, so each group's rows are judged by mxgate.check_gemm in exact mode: the data (small
integers, power-of-two scales) make every fp32 sum exact, so any correct kernel is exact.
Regimes reach the edges: zero-token groups (first, last, middle, all but one), one row, exactly
128, 129, and offsets ending below the dimension (rows past offs[-1], after a dirty-allocator
warm-up that leaves NaN where the output will be: pytorch/pytorch#154557 documents them as never
written). A torch refusal is counted as unsupported with its message, never as a failure.
Beside the exact check, each case runs grouped.determinism, grouped.group_isolation and
grouped.ep_split as metamorphic relations on torch itself (see `metamorphic`).

    PYTHONPATH=python MXGATE_LIBRARY=build/default/capi/libmxgate.so python3 \
        scripts/h200/grouped_torch.py OUT.json [CASES]
"""

import json
import sys
import time

import numpy as np
import torch

import mxgate

REGIMES = ("random", "zero_first", "zero_last", "zero_middle", "all_but_one_empty", "one_row",
           "exactly_128", "tile_plus_one", "below_dimension")


def group_sizes(rng, regime, e):
    sizes = rng.integers(0, 40, size=e)
    if regime == "zero_first":
        sizes[0] = 0
    elif regime == "zero_last":
        sizes[-1] = 0
    elif regime == "zero_middle" and e > 2:
        sizes[e // 2] = 0
    elif regime == "all_but_one_empty":
        sizes[:] = 0
        sizes[rng.integers(e)] = int(rng.integers(1, 64))
    elif regime == "one_row":
        sizes[rng.integers(e)] = 1
    elif regime == "exactly_128":
        sizes[rng.integers(e)] = 128
    elif regime == "tile_plus_one":
        sizes[rng.integers(e)] = 129
    return sizes


def bf16_bits(t):
    return t.view(torch.int16).cpu().numpy().view(np.uint16)


def one_case(kind, rng, seed):
    e = int((1, 2, 4, 8)[rng.integers(4)])
    n = int((16, 32, 128, 256)[rng.integers(4)])
    k = int((16, 32, 64, 128, 160, 256)[rng.integers(6)])
    regime = REGIMES[rng.integers(len(REGIMES))]
    sizes = group_sizes(rng, regime, e)
    ends = np.cumsum(sizes)
    total = int(ends[-1]) + (int(rng.integers(1, 20)) if regime == "below_dimension" else 0)
    total = max(total, 1)
    a_int = rng.integers(-4, 5, size=(total, k)).astype(np.float32)
    b_int = rng.integers(-4, 5, size=(e, n, k)).astype(np.float32)
    dev = "cuda"
    desc = dict(kind=kind, seed=seed, e=e, n=n, k=k, regime=regime, sizes=sizes.tolist(),
                total_m=total)
    offs = torch.tensor(ends, dtype=torch.int32, device=dev)
    # Dirty allocator: a NaN block of the output's size freed just before the call.
    junk = torch.full((total, n), float("nan"), dtype=torch.bfloat16, device=dev)
    del junk
    try:
        if kind == "grouped_mm_bf16":
            a = torch.from_numpy(a_int).to(dev, torch.bfloat16)
            b = torch.from_numpy(b_int).to(dev, torch.bfloat16)
            out = torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)
        else:
            sa = np.exp2(rng.integers(-2, 3, size=(total,))).astype(np.float32)
            sb = np.exp2(rng.integers(-2, 3, size=(e, n))).astype(np.float32)
            a = torch.from_numpy(a_int).to(dev).to(torch.float8_e4m3fn)
            b = torch.from_numpy(b_int).to(dev).to(torch.float8_e4m3fn)
            out = torch._scaled_grouped_mm(a, b.transpose(-2, -1),
                                           torch.from_numpy(sa).to(dev),
                                           torch.from_numpy(sb).to(dev), offs=offs,
                                           out_dtype=torch.bfloat16)
        torch.cuda.synchronize()
    except Exception as ex:  # torch declined: unsupported, with its reason
        desc.update(status="unsupported", why=f"{type(ex).__name__}: {str(ex).splitlines()[0]}")
        return desc
    c = bf16_bits(out)
    try:
        desc = judge(kind, desc, c, a_int, b_int, ends, e, locals().get("sa"), locals().get("sb"))
    except mxgate.InputError as ex:  # mxgate refused the check: said, never a pass
        desc.update(status="check_error", why=str(ex))
        return desc
    try:
        metamorphic(kind, desc, rng, c, a_int, b_int, ends, locals().get("sa"),
                    locals().get("sb"))
    except Exception as ex:  # torch refusing a sub-call is said, not a failure of the relation
        desc["metamorphic_error"] = f"{type(ex).__name__}: {str(ex).splitlines()[0]}"
    return desc


def call(kind, a_int, b_int, ends, sa, sb):
    dev = "cuda"
    offs = torch.tensor(ends, dtype=torch.int32, device=dev)
    if kind == "grouped_mm_bf16":
        a = torch.from_numpy(a_int).to(dev, torch.bfloat16)
        b = torch.from_numpy(b_int).to(dev, torch.bfloat16)
        out = torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)
    else:
        a = torch.from_numpy(a_int).to(dev).to(torch.float8_e4m3fn)
        b = torch.from_numpy(b_int).to(dev).to(torch.float8_e4m3fn)
        out = torch._scaled_grouped_mm(a, b.transpose(-2, -1), torch.from_numpy(sa).to(dev),
                                       torch.from_numpy(sb).to(dev), offs=offs,
                                       out_dtype=torch.bfloat16)
    torch.cuda.synchronize()
    return bf16_bits(out)


def metamorphic(kind, desc, rng, c, a_int, b_int, ends, sa, sb):
    """grouped.determinism (the same call twice: the same bits), grouped.group_isolation (a fresh
    draw of one non-empty expert's weights changes no row of the other groups) and
    grouped.ep_split (the experts split over two ranks, each rank's call over its own experts
    and tokens: its rows equal the full call's bit for bit), on the rows the groups own."""
    owned = int(ends[-1])
    out = {}
    again = call(kind, a_int, b_int, ends, sa, sb)
    out["determinism"] = bool(np.array_equal(again[:owned], c[:owned]))
    starts = np.concatenate([[0], ends[:-1]])
    full = [g for g in range(len(ends)) if ends[g] > starts[g]]
    if full:
        g = int(full[rng.integers(len(full))])
        b2 = b_int.copy()
        b2[g] = rng.integers(-4, 5, size=b2[g].shape).astype(np.float32)
        iso = call(kind, a_int, b2, ends, sa, sb)
        keep = np.ones(owned, bool)
        keep[starts[g]:ends[g]] = False
        out["group_isolation"] = bool(np.array_equal(iso[:owned][keep], c[:owned][keep]))
    e = len(ends)
    if e >= 2:
        h = e // 2
        for lo, hi in ((0, h), (h, e)):
            r0, r1 = int(starts[lo]), int(ends[hi - 1])
            if r1 == r0:
                continue
            part = call(kind, a_int[r0:r1], b_int[lo:hi], (ends[lo:hi] - r0).astype(np.int64),
                        None if sa is None else sa[r0:r1], None if sb is None else sb[lo:hi])
            same = bool(np.array_equal(part, c[r0:r1]))
            out["ep_split"] = out.get("ep_split", True) and same
    desc["metamorphic"] = out
    if not all(out.values()):
        desc["status"] = "fail"
        desc.setdefault("findings", []).append(dict(metamorphic=out))


def judge(kind, desc, c, a_int, b_int, ends, e, sa, sb):
    findings, start = [], 0
    for g in range(e):
        rows = slice(start, int(ends[g]))
        start = int(ends[g])
        if rows.stop == rows.start:
            continue
        if kind == "grouped_mm_bf16":
            ab = (a_int[rows].view(np.uint32) >> 16).astype(np.uint16)
            bb = (b_int[g].view(np.uint32) >> 16).astype(np.uint16)
            v = mxgate.check_gemm(ab, None, bb, None, c[rows], scheme="bf16", mode="exact",
                                  dtype="bf16")
        else:
            ac = mxgate.encode(a_int[rows], "e4m3fn", "ocp_mx")
            bc = mxgate.encode(b_int[g], "e4m3fn", "ocp_mx")
            v = mxgate.check_gemm(ac, sa[rows][:, None], bc, sb[g][:, None], c[rows],
                                  scheme="block", mode="exact", dtype="bf16", a_block=(1, 0),
                                  b_block=(1, 0))
        if not v.passed:
            f = v.first
            findings.append(dict(group=g, row=int(f.row), global_row=rows.start + int(f.row),
                                 col=int(f.col), mismatches=int(v.mismatches),
                                 expected=hex(f.expected_bits), actual=hex(f.actual_bits)))
    past = c[int(ends[-1]):]
    desc["rows_past_last_offset"] = int(past.shape[0])
    if past.size:
        nan = (past & 0x7FFF) > 0x7F80
        desc["rows_past_last_offset_nan"] = int(nan.any(axis=1).sum())
        desc["rows_past_last_offset_nonzero"] = int((past & 0x7FFF != 0).any(axis=1).sum())
    desc["status"] = "fail" if findings else "pass"
    desc["findings"] = findings[:4]
    return desc


def main(path, cases):
    out = dict(torch=torch.__version__, device=torch.cuda.get_device_name(), results=[])
    for kind in ("grouped_mm_bf16", "scaled_grouped_mm_fp8_rowwise"):
        rng = np.random.default_rng([1, len(kind)])
        t0 = time.time()
        tally = dict(pass_=0, fail=0, unsupported=0, check_error=0)
        for i in range(cases):
            r = one_case(kind, rng, i)
            out["results"].append(r)
            tally["pass_" if r["status"] == "pass" else r["status"]] += 1
            if r["status"] != "pass":
                print(json.dumps(r), flush=True)
        print(f"{kind}: {tally} in {time.time() - t0:.1f}s", flush=True)
        mine = [r for r in out["results"] if r["kind"] == kind and "metamorphic" in r]
        for prop in ("determinism", "group_isolation", "ep_split"):
            ran = [r["metamorphic"][prop] for r in mine if prop in r["metamorphic"]]
            print(f"{kind}: grouped.{prop}: {sum(ran)} of {len(ran)} cases hold", flush=True)
        past = [r for r in out["results"] if r["kind"] == kind and r.get("rows_past_last_offset")]
        print(f"{kind}: {len(past)} cases with rows past offs[-1]; "
              f"{sum(1 for r in past if r.get('rows_past_last_offset_nan'))} of them left NaN "
              f"(the dirty block), {sum(1 for r in past if r.get('rows_past_last_offset_nonzero'))}"
              " nonzero", flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
