"""conventions_bytes.py: the real libraries' bytes for the hazard cases of the conventions added in
docs/conventions.md §2.24 - §2.29, printed next to mxgate's expected bytes (written out here, not
computed by mxgate), one TSV row per case: convention, case, library, input, got, expected, verdict
(same / DIFFERS / unavailable). Needs only torch and triton (no mxgate build); torchao's rows
run where torchao imports. On the GPU host
(torch 2.11, triton 3.6) torch_2_13's rows are expected to differ: 2.11 predates
pytorch/pytorch#178817. Exit code 0 always: it reports, it does not judge."""

import math
import struct
import subprocess
import sys


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


# (convention, case, input fp32 bits, expected byte) with the arithmetic beside each row.
TORCH_213_E4M3 = [
    ("torch_2_13", "896 saturates", 0x44600000, 0x7E),       # 896 = 2 * 448 > 464 -> 448 = 0x7E
    ("torch_2_13", "-896 saturates", 0xC4600000, 0xFE),      # sign bit 0x80 | 0x7E
    ("torch_2_13", "464 tie to even", 0x43E80000, 0x7E),     # 464 = (448 + 480) / 2, 0x7E even
    ("torch_2_13", "470 saturates", 0x43EB0000, 0x7E),       # > 464: rounds past 448 -> saturate
    ("torch_2_13", "nan keeps sign", 0x7FC00000, 0x7F),      # the one NaN code 0x7F
]
TRITON_RTZ_E5M2 = [
    ("triton_rtz", "1.75 exact", 0x3FE00000, 0x3F),          # 1.75 = 2^0 * 1.11b: 0 01111 11
    ("triton_rtz", "1.99 truncates", 0x3FFEB852, 0x3F),      # 1.99 < 2: RTZ keeps 1.75 (0x3F)
    ("triton_rtz", "-1.99 truncates", 0xBFFEB852, 0xBF),     # magnitude as above, sign 0x80
    ("triton_rtz", "60000 saturates", 0x476A6000, 0x7B),     # > 57344 (0x7B), RTZ never rounds up
    ("triton_rtz", "1e6 saturates", 0x49742400, 0x7B),       # fp16 RZ gives 65504, top byte 0x7B
    ("triton_rtz", "inf stays inf", 0x7F800000, 0x7C),       # fp16 Inf 0x7C00 -> 0x7C
    ("triton_rtz", "-inf", 0xFF800000, 0xFC),
    ("triton_rtz", "nan canonical", 0x7FC00000, 0x7F),       # cvt.rz.f16.f32 NaN -> 0x7FFF -> 0x7F
    ("triton_rtz", "-nan canonical", 0xFFC00000, 0x7F),      # sign dropped by the canonical NaN
    ("triton_rtz", "2^-17 truncates to 0", 0x37000000, 0x00),  # half the min subnormal 2^-16
    ("triton_rtz", "1.5*2^-16", 0x37C00000, 0x01),           # RTZ of 1.5 * 2^-16 -> 2^-16 = 0x01
]
# torch float8_e8m0fnu 0xFF -> float32 bits (Float8_e8m0fnu-inl.h: NaN as 0x7F800001).
TORCH_E8M0_NAN = [("torch_e8m0_nan_bits", "0xFF decodes to 0x7F800001", 0xFF, 0x7F800001),
                  ("torch_e8m0_nan_bits", "0x00 decodes to 2^-127", 0x00, 0x00400000)]


def row(conv, case, lib, x, got, want):
    verdict = "unavailable" if got is None else ("same" if got == want else "DIFFERS")
    g = "-" if got is None else (f"0x{got:08X}" if want > 0xFF else f"0x{got:02X}")
    w = f"0x{want:08X}" if want > 0xFF else f"0x{want:02X}"
    print("\t".join((conv, case, lib, f"0x{x:08X}", g, w, verdict)))


def torch_rows():
    try:
        import torch
    except ImportError as e:
        print(f"# torch unavailable: {e}")
        return
    devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devs:
        lib = f"torch {torch.__version__} {dev}"
        for conv, case, xb, want in TORCH_213_E4M3:
            x = torch.tensor([xb], dtype=torch.int64).to(torch.int32).view(torch.float32).to(dev)
            got = int(x.to(torch.float8_e4m3fn).view(torch.uint8).cpu()[0])
            row(conv, case, lib, xb, got, want)
        for conv, case, b, want in TORCH_E8M0_NAN:
            e = torch.tensor([b], dtype=torch.uint8, device=dev).view(torch.float8_e8m0fnu)
            got = int(e.to(torch.float32).view(torch.int32).cpu()[0]) & 0xFFFFFFFF
            row(conv, case, lib, b, got, want)
        # microxcaling's element rounding, floor(|a| + 0.5) in fp32 (mx/elemwise_ops.py
        # _round_mantissa "nearest"): the fp32 predecessor of 0.5 rounds up.
        a = torch.tensor([0.5 - 2.0 ** -25, 0.5, 1.5, 2.5], dtype=torch.float32, device=dev)
        got = (torch.sign(a) * torch.floor(torch.abs(a) + 0.5)).cpu().tolist()
        print(f"# {lib} floor(|a| + 0.5) for a = 0.5 - 2^-25, 0.5, 1.5, 2.5: {got}")
        # microxcaling's shared exponent floor(log2(amax)) just below powers of two.
        xs = [f32(0x407FFFFF), f32(0x3F7FFFFF), f32(0x437FFFFF), f32(0x43DFFFFF)]
        v = torch.tensor(xs, dtype=torch.float32, device=dev)
        print(f"# {lib} floor(log2 x) for x = 4(1-2^-24), 1-2^-24, 256(1-2^-24), 448-: "
              f"{torch.floor(torch.log2(v)).cpu().tolist()} (exact: 1, -1, 7, 8)")


RTZ_CHILD = r"""
import sys, torch, triton, triton.language as tl
@triton.jit
def k(x_ptr, y_ptr, n, E5: tl.constexpr):
    o = tl.arange(0, 64)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    if E5:
        y = x.to(tl.float8e5, fp_downcast_rounding="rtz")
    else:
        y = x.to(tl.float8e4nv, fp_downcast_rounding="rtz")
    tl.store(y_ptr + o, y.to(tl.uint8, bitcast=True), mask=m)
bits = [int(b, 16) for b in sys.argv[2:]]
x = torch.tensor(bits, dtype=torch.int64).to(torch.int32).view(torch.float32).cuda()
y = torch.empty(len(bits), dtype=torch.uint8, device="cuda")
k[(1,)](x, y, len(bits), E5=sys.argv[1] == "e5")
torch.cuda.synchronize()
print(" ".join(f"{v:02x}" for v in y.cpu().tolist()))
"""


def triton_rows():
    try:
        import torch
        import triton
    except ImportError as e:
        print(f"# triton unavailable: {e}")
        return
    if not torch.cuda.is_available():
        print("# triton: no CUDA device")
        return
    lib = f"triton {triton.__version__} sm{''.join(map(str, torch.cuda.get_device_capability()))}"
    import os
    import tempfile

    # @triton.jit needs its source in a file; a child process because an unsupported lowering
    # may abort the process (llvm::report_fatal_error).
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(RTZ_CHILD)
        child = f.name
    for target, rows in (("e5", TRITON_RTZ_E5M2), ("e4", TRITON_RTZ_E5M2)):
        args = [sys.executable, child, target] + [f"{r[2]:x}" for r in rows]
        p = subprocess.run(args, capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
            print(f"# {lib} fp32 -> fp8{target} rtz: exit {p.returncode}: {' | '.join(tail)}")
            continue
        got = [int(v, 16) for v in p.stdout.split()]
        for (conv, case, xb, want), g in zip(rows, got):
            if target == "e5":
                row(conv, case, f"{lib} fp8e5 rtz", xb, g, want)
            else:
                print(f"# {lib} fp8e4nv rtz {case} 0x{xb:08X} -> 0x{g:02X}")
    os.unlink(child)


# torchao to_mx scale bytes (docs/conventions.md §2.27, §2.28): (convention, mode, element dtype
# name, amax, expected byte) for a block of 32 holding amax and zeros.
TORCHAO_SCALES = [
    ("torchao_ceil", "CEIL", "float8_e4m3fn", 448.0, 0x80),    # 1.75 * 2^8: 8 + 1 - 8 = 1
    ("torchao_ceil", "CEIL", "float8_e4m3fn", 256.0, 0x7F),    # 2^8: 8 - 8 = 0
    ("torchao_even", "EVEN", "float8_e4m3fn", 500.0, 0x80),    # 1.953 >= 1.9375: 9 - 8
    ("torchao_even", "EVEN", "float8_e4m3fn", 480.0, 0x7F),    # 1.875 < 1.9375: 8 - 8
    ("torchao_even", "EVEN", "float8_e5m2", 61440.0, 0x80),    # + 0x100000 bumps: 16 - 15
    ("torchao_even", "EVEN", "float8_e4m3fn", f32(0x7F7FFFFF), 0xFF),  # bumps to Inf: NaN scale
]


def torchao_rows():
    try:
        import torch
        from torchao.prototype.mx_formats.config import ScaleCalculationMode
        from torchao.prototype.mx_formats.mx_tensor import to_mx
    except Exception as e:  # absent, or an API that moved
        print(f"# torchao unavailable: {e}")
        return
    for conv, mode, dtype, amax, want in TORCHAO_SCALES:
        x = torch.zeros(32, dtype=torch.float32)
        x[0] = amax
        try:
            s, _ = to_mx(x, getattr(torch, dtype), 32, getattr(ScaleCalculationMode, mode))
            got = int(s.view(torch.uint8).reshape(-1)[0])
        except Exception as e:
            print(f"# torchao to_mx {mode} {dtype}: {e}")
            got = None
        xb = struct.unpack("<I", struct.pack("<f", amax))[0]
        row(conv, f"{mode} {dtype} amax {amax:g}", "torchao", xb, got, want)


def main():
    print("convention\tcase\tlibrary\tinput\tgot\texpected\tverdict")
    torch_rows()
    triton_rows()
    torchao_rows()
    return 0


if __name__ == "__main__":
    sys.exit(main())
