#!/usr/bin/env python3
"""Measure the bytes real FP4 / FP6 casts give, for mxgate's test vectors (docs/fp4.md §9).

Prints one line per measurement, machine-readable, to stdout:

    # comment lines (versions, devices, what was unavailable and why)
    cast <source> <format> <fp32 bits hex> <code hex>
    decode <source> <format> <code hex> <fp32 bits hex>
    probe <source> <name> <input fp32 bits hex> <output fp32 bits hex>

<format> is e2m1, e2m3 or e3m2; <source> names the library and device (ml_dtypes,
jax_<platform>, torch_<device>, triton_kernels_<device>, ptx_rcp_approx_ftz). Every cast covers the
fixed edge inputs below and, for decode, every code. Each source is import-guarded: a missing
library or device prints a '# skipped' line, never a traceback. tests/test_fp4_vectors.cpp reads
the committed output (tests/data/fp4_fp6_bytes_*.txt) and compares each source with the convention
docs/fp4.md §9 maps it to.

Usage (Python 3.12 with ml_dtypes 0.6, jax 0.11, torch 2.11, triton 3.6 where present):
    python3 tools/measure/fp4_fp6_bytes.py > tests/data/fp4_fp6_bytes_h200.txt
"""

import struct
import sys

FORMATS = ("e2m1", "e2m3", "e3m2")
BITS = {"e2m1": 4, "e2m3": 6, "e3m2": 6}

# Edge inputs (fp32 bit patterns): the midpoints of every format, just above / below them, the
# maxima and their overflow ties, subnormal boundaries, Triton's 0.25 + k ulp, Inf, NaNs, -0.
EDGE_BITS = sorted(set([
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000,
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFFFFFFFF,
    0x7F7FFFFF, 0xFF7FFFFF,
    # e2m1 midpoints 0.25 .75 1.25 1.75 2.5 3.5 5 7 and neighbours
    0x3E800000, 0x3E7FFFFF, 0x3E800001, 0x3E800002, 0x3E800003, 0x3E800004,
    0x3F400000, 0x3F3FFFFF, 0x3F400001, 0x3FA00000, 0x3FA00001, 0x3FE00000, 0x40200000,
    0x40600000, 0x40A00000, 0x40A00001, 0x409FFFFF, 0x40C00000, 0x40E00000, 0x40DFFFFF,
    0x41000000, 0xC0A00000, 0xBE800000, 0xBE800001, 0xBDCCCCCD,
    # e2m3: 0.0625 1.0625 7.25 7.75 8
    0x3D800000, 0x3D800001, 0x3F880000, 0x40E80000, 0x40F80000, 0x40F7FFFF,
    # e3m2: 0.03125 0.09375 28 30 32
    0x3D000000, 0x3D000001, 0x3DC00000, 0x41E00000, 0x41F00000, 0x41EFFFFF, 0x42000000,
]))


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def emit(*fields):
    print(" ".join(fields))


def note(text):
    print("# " + text)


def measure_ml_dtypes():
    try:
        import ml_dtypes
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any import failure is a skip
        note(f"skipped ml_dtypes: {e!r}")
        return
    note(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")
    types = {"e2m1": ml_dtypes.float4_e2m1fn, "e2m3": ml_dtypes.float6_e2m3fn,
             "e3m2": ml_dtypes.float6_e3m2fn}
    x = np.array(EDGE_BITS, dtype=np.uint32).view(np.float32)
    for fmt, t in types.items():
        codes = x.astype(t).view(np.uint8)
        for b, c in zip(EDGE_BITS, codes):
            emit("cast", "ml_dtypes", fmt, f"0x{b:08x}", f"0x{int(c):02x}")
        allc = np.arange(1 << BITS[fmt], dtype=np.uint8).view(t).astype(np.float32)
        for c, v in enumerate(allc.view(np.uint32)):
            emit("decode", "ml_dtypes", fmt, f"0x{c:02x}", f"0x{int(v):08x}")


def measure_jax():
    try:
        import jax
        import jax.numpy as jnp
        import ml_dtypes
        import numpy as np
    except Exception as e:  # noqa: BLE001
        note(f"skipped jax: {e!r}")
        return
    types = {"e2m1": jnp.float4_e2m1fn, "e2m3": jnp.float6_e2m3fn, "e3m2": jnp.float6_e3m2fn}
    for dev in jax.devices():
        src = f"jax_{dev.platform}"
        note(f"jax {jax.__version__} on {dev}")
        x = jax.device_put(np.array(EDGE_BITS, dtype=np.uint32).view(np.float32), dev)
        for fmt, t in types.items():
            try:
                y = jax.jit(lambda v, t=t: v.astype(t))(x)
                codes = np.asarray(y).view(np.uint8)
            except Exception as e:  # noqa: BLE001 - an unsupported cast is a named skip
                note(f"skipped {src} {fmt} cast: {e!r}")
                continue
            for b, c in zip(EDGE_BITS, codes):
                emit("cast", src, fmt, f"0x{b:08x}", f"0x{int(c):02x}")
        break  # the first device (the GPU when present)


def measure_torch():
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        note(f"skipped torch: {e!r}")
        return
    note(f"torch {torch.__version__}")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        note("skipped torch float4: no torch.float4_e2m1fn_x2")
        return
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        x = torch.tensor(EDGE_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32)
        x = x.to(dev)
        try:
            # float4_e2m1fn_x2 packs two codes; cast a pair (x, 0) so the low nibble is x's.
            pairs = torch.stack([x, torch.zeros_like(x)], dim=-1)
            y = pairs.to(torch.float4_e2m1fn_x2)
            codes = y.view(torch.uint8).cpu().tolist()
        except Exception as e:  # noqa: BLE001
            note(f"skipped torch_{dev} e2m1 cast: {e!r}")
            continue
        for b, c in zip(EDGE_BITS, codes):
            c = c[0] if isinstance(c, list) else c
            emit("cast", f"torch_{dev}", "e2m1", f"0x{b:08x}", f"0x{int(c) & 0xF:02x}")


def measure_triton():
    try:
        import torch
        import triton
        import triton.language as tl
    except Exception as e:  # noqa: BLE001
        note(f"skipped triton: {e!r}")
        return
    if not torch.cuda.is_available():
        note("skipped triton: no CUDA device")
        return
    note(f"triton {triton.__version__} on {torch.cuda.get_device_name()}")

    @triton.jit
    def rcp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        y = tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [x],
                                      dtype=tl.float32, is_pure=True, pack=1)
        tl.store(y_ptr + offs, y, mask=offs < n)

    # FlashInfer's fast NVFP4 path uses rcp.approx.ftz: mxgate models it as the correctly
    # rounded reciprocal with flush-to-zero (docs/fp4.md §6.4); these probes confirm or refute it.
    probes = [0x40C00000, 0x3F800000, 0x3E2AAAAB, 0x43E00000, 0x3B124925, 0x00400000,
              0x7F7FFFFF, 0x3FC00000, 0x45280000]
    try:
        x = torch.tensor(probes, dtype=torch.int64).to(torch.int32).view(torch.float32).cuda()
        y = torch.empty_like(x)
        rcp_kernel[(1,)](x, y, len(probes), BLOCK=16)
        for b, v in zip(probes, y.view(torch.int32).cpu().tolist()):
            emit("probe", "ptx_rcp_approx_ftz", "rcp", f"0x{b:08x}", f"0x{v & 0xFFFFFFFF:08x}")
    except Exception as e:  # noqa: BLE001
        note(f"skipped ptx rcp probe: {e!r}")

    try:
        from triton_kernels.numerics_details.mxfp import downcast_to_mxfp
    except Exception as e:  # noqa: BLE001
        note(f"skipped triton_kernels downcast_to_mxfp: {e!r}")
        return
    # One 32-element block per edge input: [x, 6, 0, ...] so the scale is fixed by 6 (or by x
    # when |x| > 6); only rows whose scale byte is 127 (2^0) are element casts of x itself.
    rows = []
    for b in EDGE_BITS:
        row = [0.0] * 32
        row[0] = f32(b)
        row[1] = 6.0
        rows.append(row)
    x = torch.tensor(rows, dtype=torch.float32).cuda()
    try:
        q, s = downcast_to_mxfp(x, torch.uint8, axis=1)
    except Exception as e:  # noqa: BLE001
        note(f"skipped triton_kernels downcast_to_mxfp: {e!r}")
        return
    q = q.view(torch.uint8).cpu().tolist()
    s = s.view(torch.uint8).cpu().tolist()
    for b, qrow, srow in zip(EDGE_BITS, q, s):
        if srow[0] == 127:
            emit("cast", "triton_kernels_cuda", "e2m1", f"0x{b:08x}", f"0x{qrow[0] & 0xF:02x}")
        else:
            note(f"triton_kernels 0x{b:08x}: scale byte {srow[0]}, not an element cast")


def main():
    note("mxgate fp4/fp6 byte vectors v1 (tools/measure/fp4_fp6_bytes.py)")
    note(f"python {sys.version.split()[0]}")
    measure_ml_dtypes()
    measure_jax()
    measure_torch()
    measure_triton()


if __name__ == "__main__":
    main()
