"""The Python API against the CLI verbs on the same data: encode, decode, quantize, dequantize,
gemm and check-gemm through both must give equal bytes (or, where the input is refused, the same
message). Both run the library code of verbs/, so a difference means the Python layer or the C ABI
changed data on the way (a dtype widened, a shape transposed, an option dropped or defaulted
differently).
Not covered here: the semantics of the reference itself (the C++ suites test that), bad input
beyond what a format / convention pair refuses (test_bad_input.py)."""

import struct

import numpy as np
import pytest

import mxgate
from support import same_bits

SEED = 20240613


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def cli_text(v):
    """An fp32 value as the CLI's VALUE text, exactly (hex float, inf, nan with its sign)."""
    v = float(v)
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    return v.hex()


def encode_values():
    """Every format's edges (max finite, halfway to the next binade, ties, subnormals, zeros,
    specials) plus seeded random fp32 bit patterns (NaN payloads excluded: the CLI's text has
    none)."""
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.5, 448.0, 464.0, 470.0, 480.0,
             240.0, 248.0, 57344.0, 61440.0, 2.0**-6, 2.0**-9, 2.0**-10, 2.0**-16, 2.0**-17,
             2.0**-127, 2.0**-128, 1.5 * 2.0**127, 3.0, 2.9, f32(0x3C000001), f32(0x7F7FFFFF)]
    rng = np.random.default_rng(SEED)
    bits = rng.integers(0, 2**32, size=160, dtype=np.uint64).astype(np.uint32)
    random = bits.view(np.float32)
    random = random[~np.isnan(random)]
    return np.concatenate([np.array(edges, dtype=np.float32), random])


def cli_or_same_refusal(cli, verb, api, data, texts, fmt, convention):
    """`mxgate VERB --format FMT --convention CONVENTION TEXTS...`'s stdout; where the CLI refuses,
    None, after checking that the API refuses `data` with the CLI's message."""
    code, out, err = cli(verb, "--format", fmt, "--convention", convention, *texts)
    if code == 0:
        return out
    with pytest.raises(ValueError) as e:
        api(data, fmt, convention)
    assert str(e.value) == err.removeprefix(f"mxgate {verb}: ").rstrip("\n"), convention
    return None


# Guards against encode's Python path differing from `mxgate encode` for any format and
# convention: a value rounded twice (float64 -> fp32 in Python and again), a code width mixed up
# (bf16 codes truncated to 8 bits), or a convention / format pair accepted by one and refused by
# the other.
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "e8m0", "bf16", "fp16"])
def test_encode_equals_cli_for_every_convention(cli, fmt):
    values = encode_values()
    texts = [cli_text(v) for v in values]
    for convention in mxgate.conventions():
        out = cli_or_same_refusal(cli, "encode", mxgate.encode, values, texts, fmt, convention)
        if out is None:
            continue
        want = [int(line, 16) for line in out.split()]
        got = mxgate.encode(values, fmt, convention)
        assert got.dtype == (np.uint16 if fmt in ("bf16", "fp16") else np.uint8)
        assert got.tolist() == want, (fmt, convention)


def decode_codes(fmt):
    if fmt in ("bf16", "fp16"):
        rng = np.random.default_rng(SEED)
        edges = [0x0000, 0x8000, 0x0001, 0x7C00, 0x7F80, 0x7FC0, 0xFFFF, 0x3F80, 0x3C00]
        return np.concatenate([np.array(edges), rng.integers(0, 2**16, 300)]).astype(np.uint16)
    return np.arange(256, dtype=np.uint16).astype(np.uint8)


def parse_decoded(line):
    """One `mxgate decode` line ("%a %.9g") as fp32 bits; NaN as its sign only (no payload in
    the text)."""
    text = line.split()[0]
    if text in ("nan", "-nan"):
        return ("nan", text.startswith("-"))
    return struct.unpack("<I", struct.pack("<f", float.fromhex(text) if "x" in text
                                           else float(text)))[0]


def python_decoded(v):
    if np.isnan(v):
        return ("nan", bool(np.signbit(v)))
    return int(np.float32(v).view(np.uint32))


# Guards against decode differing from `mxgate decode`: e8m0 decoded with a rule other than the
# convention's (0x00 as zero under `shift`, 0xFF as Inf), a sign lost on NaN or zero, or 16-bit
# codes read as 8-bit.
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "e8m0", "bf16", "fp16"])
def test_decode_equals_cli_for_every_convention(cli, fmt):
    codes = decode_codes(fmt)
    texts = [f"0x{int(c):x}" for c in codes]
    for convention in mxgate.conventions():
        out = cli_or_same_refusal(cli, "decode", mxgate.decode, codes, texts, fmt, convention)
        if out is None:
            continue
        want = [parse_decoded(line) for line in out.splitlines()]
        got = mxgate.decode(codes, fmt, convention)
        assert got.dtype == np.float32 and got.shape == codes.shape
        assert [python_decoded(v) for v in got] == want, (fmt, convention)


def activations(m, k, seed):
    """Normal data with the value classes quantizers disagree on: a zero block, a tiny block, a
    NaN, an Inf, a 448 block (the AITER Triton bump) and a short last block when K % 32 != 0."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, k)) * rng.choice([1e-3, 1.0, 300.0], size=(m, 1))).astype(
        np.float32
    )
    x[0, :32] = 0.0
    if m > 1:
        x[1, :32] *= np.float32(2.0**-120)
    if m > 2:
        x[2, 3] = np.nan
        x[2, 40 % k] = np.inf
    if m > 3:
        x[3, :32] = 448.0
    return x


def quantizer_conventions(mx, fmt="e4m3fn"):
    """The conventions with an MX (or block) quantizer for fmt: those `mxgate quantize` accepts
    (the others have no such quantizer, or do not define fmt at all: the FP4-only ones)."""
    out = []
    for c in mxgate.conventions():
        try:
            mxgate.quantize(np.ones((1, 32), np.float32), "mx" if mx else "act1x128", fmt, c)
            out.append(c)
        except ValueError as e:
            assert "has no" in str(e) or "does not define" in str(e), e
    return out


# Guards against quantize / dequantize through Python differing from the CLI for any convention
# with an MX quantizer, fp32 and bf16 output: scales transposed or re-laid-out, a short K block
# padded differently, float64 input rounded differently.
@pytest.mark.parametrize("dtype_in", [np.float32, np.float64])
def test_mx_quantize_and_dequantize_equal_cli(cli, files, dtype_in):
    x = activations(5, 70, SEED).astype(dtype_in)
    files.save("x.npy", x)
    conventions = quantizer_conventions(mx=True)
    assert len(conventions) >= 5, conventions
    for convention in conventions:
        cli.ok("quantize", "--scheme", "mx", "--format", "e4m3fn", "--convention", convention,
               "--in", files("x.npy"), "--out", files("q"))
        data, scales = mxgate.quantize_mx(x, "e4m3fn", convention)
        assert same_bits(data, files.load("q.data.npy")), convention
        assert same_bits(scales, files.load("q.scales.npy")), convention
        for dtype in ("float32", "bf16"):
            cli.ok("dequantize", "--scheme", "mx", "--format", "e4m3fn", "--convention",
                   convention, "--data", files("q.data.npy"), "--scales",
                   files("q.scales.npy"), "--out", files("y.npy"), "--dtype", dtype)
            y = mxgate.dequantize(data, scales, "e4m3fn", convention, dtype=dtype)
            assert same_bits(y, files.load("y.npy")), (convention, dtype)


# Guards against the block schemes (1x128 activations, 128x128 weights, UE8M0 scales) and the
# physical scale layouts differing between Python and the CLI (a layout applied to the wrong
# grid, the ue8m0 flag dropped).
@pytest.mark.parametrize(
    "scheme, ue8m0, layout",
    [("act1x128", False, None), ("act1x128", True, "col_major"), ("w128x128", False, None),
     ("w128x128", True, "row_major")],
)
def test_block_quantize_and_dequantize_equal_cli(cli, files, scheme, ue8m0, layout):
    x = activations(130, 300, SEED + 1)
    files.save("x.npy", x)
    extra = (["--ue8m0"] if ue8m0 else []) + (["--scale-layout", layout] if layout else [])
    for convention in quantizer_conventions(mx=False):
        cli.ok("quantize", "--scheme", scheme, "--format", "e4m3fn", "--convention", convention,
               "--in", files("x.npy"), "--out", files("q"), *extra)
        data, scales = mxgate.quantize_block(x, "e4m3fn", convention, scheme=scheme, ue8m0=ue8m0,
                                             scale_layout=layout)
        assert same_bits(data, files.load("q.data.npy")), convention
        assert same_bits(scales, files.load("q.scales.npy")), convention
        if layout is None:
            cli.ok("dequantize", "--scheme", scheme, "--format", "e4m3fn", "--convention",
                   convention, "--data", files("q.data.npy"), "--scales",
                   files("q.scales.npy"), "--out", files("y.npy"))
            y = mxgate.dequantize(data, scales, "e4m3fn", convention, scheme=scheme)
            assert same_bits(y, files.load("y.npy")), convention


def gemm_operands(scheme, m, n, k, seed):
    """Quantized operands of a scheme (mx: e8m0 scales; block: fp32 1x128 / 128x128; bf16: bits),
    from normal data."""
    x = activations(m, k, seed)
    x[~np.isfinite(x)] = 1.0
    w = np.random.default_rng(seed + 7).standard_normal((n, k)).astype(np.float32)
    if scheme == "mx":
        a, sa = mxgate.quantize_mx(x, "e4m3fn", "ocp_mx")
        b, sb = mxgate.quantize_mx(w, "e4m3fn", "ocp_mx")
        # The bytes whose value depends on the convention's e8m0 decode rule (0x00: 2^-127 or 0;
        # 0xFF: NaN or Inf), so that a convention dropped on the way changes C.
        sa[m - 1, 0], sb[n - 1, -1] = 0x00, 0xFF
    elif scheme == "block":
        a, sa = mxgate.quantize_block(x, "e4m3fn", "vllm_group_quant")
        b, sb = mxgate.quantize_block(w, "e4m3fn", "vllm_group_quant", scheme="w128x128")
    else:
        a, sa = mxgate.encode(x, "bf16", "ocp_mx"), None
        b, sb = mxgate.encode(w, "bf16", "ocp_mx"), None
    return a, sa, b, sb


def save_gemm(files, a, sa, b, sb):
    args = ["--a", files.save("a.npy", a), "--b", files.save("b.npy", b)]
    if sa is not None:
        args += ["--a-scales", files.save("as.npy", sa), "--b-scales", files.save("bs.npy", sb)]
    return args


# Guards against gemm through Python differing from `mxgate gemm` for any scheme and output
# dtype, or the mx scale decode (--convention) being dropped on the way.
@pytest.mark.parametrize("scheme", ["mx", "block", "bf16"])
@pytest.mark.parametrize("dtype", ["float32", "bf16"])
def test_gemm_equals_cli(cli, files, scheme, dtype):
    a, sa, b, sb = gemm_operands(scheme, 7, 130, 200, SEED + 2)
    args = save_gemm(files, a, sa, b, sb)
    conventions = ["ocp_mx", "vllm_e8m0_shift"] if scheme == "mx" else [None]
    for convention in conventions:
        opt = ["--convention", convention] if convention else []
        cli.ok("gemm", "--scheme", scheme, *args, "--out", files("c.npy"), "--dtype", dtype, *opt)
        c = mxgate.gemm(a, sa, b, sb, scheme=scheme, dtype=dtype, convention=convention)
        assert same_bits(c, files.load("c.npy")), convention


# Guards against check_gemm's verdict differing from `mxgate check-gemm`: its text, its pass /
# fail (exit 0 / 1), in exact and bound mode, with the named (fp32_rn; sm90_fp8_mma for block
# scales) and the manual accumulator, and the heatmap it draws on request (the same bytes).
@pytest.mark.parametrize("scheme", ["mx", "block", "bf16"])
def test_check_gemm_equals_cli(cli, files, scheme):
    a, sa, b, sb = gemm_operands(scheme, 9, 20, 160, SEED + 3)
    args = save_gemm(files, a, sa, b, sb)
    exact = mxgate.gemm(a, sa, b, sb, scheme=scheme)
    wrong = exact.copy()
    wrong[3, 7] = np.nextafter(wrong[3, 7], np.float32(np.inf))
    assert np.isfinite(exact[4, 3]) and exact[4, 3] != 0
    wrong[4, 3] *= 2  # (not the last row or column: the mx scales 0x00 / 0xFF are there)
    for c, passes in ((exact, True), (wrong, False)):
        files.save("c.npy", c)
        named = [("bound", {"accumulator": "fp32_rn"}), ("exact", {"accumulator": "fp32_rn"})]
        if scheme == "block":  # sm90_fp8_mma's 128-wide chunks lie under one block scale
            named += [("bound", {"accumulator": "sm90_fp8_mma"}),
                      ("exact", {"accumulator": "sm90_fp8_mma"})]
        for mode, extra in (("exact", {}), ("bound", {}), *named,
                            ("bound", {"acc_bits": 23, "block_k": 32})):
            opts = []
            for key, value in extra.items():
                opts += ["--" + key.replace("_", "-"), str(value)]
            for ext in ("svg", "png"):
                code, out, err = cli("check-gemm", "--scheme", scheme, *args, "--c",
                                     files("c.npy"), "--mode", mode, *opts, "--heatmap",
                                     files(f"cli.{ext}"))
                v = mxgate.check_gemm(a, sa, b, sb, c, scheme=scheme, mode=mode,
                                      heatmap=files(f"py.{ext}"), **extra)
                assert code == (0 if v.passed else 1), err
                assert v.text == out, (mode, extra)
                with open(files(f"cli.{ext}"), "rb") as f1, open(files(f"py.{ext}"), "rb") as f2:
                    assert f1.read() == f2.read(), ext
            # Exact mode must catch the one-ulp flip; the doubled element fails every mode.
            assert v.passed == passes, (mode, extra, str(v))


# Guards against the listings drifting from the CLI's: every convention of `mxgate conventions`,
# every format of `mxgate --help` and every model of `mxgate accumulators`.
def test_listings_match_cli(cli):
    out = cli.ok("conventions")
    table = out.split("\n\n")[1]
    rows = [line.split()[0] for line in table.splitlines()[1:] if line.strip()]
    assert list(mxgate.conventions()) == rows
    usage = cli.ok("--help")
    line = next(l for l in usage.splitlines() if l.startswith("formats: "))
    assert list(mxgate.formats()) == line.removeprefix("formats: ").split()
    names = [line.split(" (")[0] for line in cli.ok("accumulators").splitlines()
             if line and not line.startswith(" ")]
    assert [m.name for m in mxgate.accumulators()] == names
