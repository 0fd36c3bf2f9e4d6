"""The Python API against the CLI verbs on FP4 / FP6 (docs/fp4.md): encode / decode of e2m1, e2m3
and e3m2 under every convention; quantize / dequantize with the schemes mx (FP6 / FP4 elements),
mxfp4, mxfp6 and nvfp4 (every recipe, --global-amax, --tile, --pow2-scales, a physical scale
layout, an odd K with its padding nibble and --k); gemm and check-gemm for mxfp4, mxfp6, mixed
MX operands and nvfp4 with its global scales. Both sides must give equal bytes, or refuse with the
same message. Both run verbs/, so a difference is the Python layer or the C ABI changing data on
the way (packed codes unpacked, the global scale dropped, an option not forwarded).
Not covered here: the FP4 semantics themselves (tests/test_fp4_*.cpp, tests/test_cli_fp4.cpp),
bad input beyond the refusals met on the way (test_bad_input.py)."""

import numpy as np
import pytest

import mxgate
from support import same_bits
from test_against_cli import (
    activations,
    cli_text,
    f32,
    parse_decoded,
    python_decoded,
    quantizer_conventions,
)

SEED = 20240614
SUB_BYTE = {"e2m1": 4, "e2m3": 6, "e3m2": 6}


def fp4_values():
    """The FP4 / FP6 edges (every midpoint of e2m1, subnormal and overflow boundaries of e2m3 /
    e3m2, one ulp either side of the e2m1 0.25 tie, Inf, zeros) and seeded normal data at the
    formats' scale. No NaN: it refuses the whole array under ocp_mx (test_nan_encodes_as_cli)."""
    edges = [0.0, -0.0, np.inf, -np.inf, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, 6.0, 8.0,
             -0.25, -5.0, f32(0x3E800001), f32(0x3E7FFFFF), f32(0x40A00001), 0.0625, 1.0625, 7.25,
             7.75, 0.03125, 0.09375, 28.0, 30.0, 32.0, 1e-40, 2.0**-126, f32(0x7F7FFFFF)]
    rng = np.random.default_rng(SEED)
    return np.concatenate([np.array(edges, np.float32),
                           (rng.standard_normal(120) * 4).astype(np.float32)])


def outcome(cli, verb, *args):
    """(exit code, stdout, message): the message is stderr without "mxgate VERB: "."""
    code, out, err = cli(verb, *args)
    return code, out, err.removeprefix(f"mxgate {verb}: ").rstrip("\n")


def same_refusal(call, message):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == message


# Guards against encode differing from `mxgate encode` on FP4 / FP6: codes widened to uint16, a
# value rounded twice, a convention / format pair accepted by one side and refused by the other.
@pytest.mark.parametrize("fmt", sorted(SUB_BYTE))
def test_encode_equals_cli_for_every_convention(cli, fmt):
    values = fp4_values()
    texts = [cli_text(v) for v in values]
    defined = 0
    for convention in mxgate.conventions():
        code, out, message = outcome(cli, "encode", "--format", fmt, "--convention", convention,
                                     *texts)
        if code != 0:
            same_refusal(lambda: mxgate.encode(values, fmt, convention), message)
            continue
        defined += 1
        got = mxgate.encode(values, fmt, convention)
        assert got.dtype == np.uint8 and got.shape == values.shape
        assert got.tolist() == [int(line, 16) for line in out.split()], (fmt, convention)
        assert int(got.max()) < 2 ** SUB_BYTE[fmt]
    assert defined >= 1, fmt  # ocp_mx defines all three


# Guards against NaN handling differing: each convention's NaN policy (a code, or a refusal of
# the whole array under nan_undefined) must read the same from Python as from the CLI.
@pytest.mark.parametrize("fmt", sorted(SUB_BYTE))
def test_nan_encodes_as_cli(cli, fmt):
    refused = coded = 0
    for convention in mxgate.conventions():
        for text, value in (("nan", np.nan), ("-nan", -np.nan)):
            x = np.array([1.0, value], np.float32)
            code, out, message = outcome(cli, "encode", "--format", fmt, "--convention",
                                         convention, "1", text)
            if code != 0:
                same_refusal(lambda: mxgate.encode(x, fmt, convention), message)
                refused += "undefined by this convention" in message
                continue
            coded += 1
            assert mxgate.encode(x, fmt, convention).tolist() == [int(v, 16) for v in out.split()]
    assert refused >= 2, fmt  # ocp_mx: nan_undefined
    if fmt == "e2m1":
        assert coded >= 2  # the FP4 conventions name a code


# Guards against decode differing from `mxgate decode`: every code of the format under every
# convention, and a code wider than the format refused with the same message.
@pytest.mark.parametrize("fmt", sorted(SUB_BYTE))
def test_decode_equals_cli_for_every_convention(cli, fmt):
    bits = SUB_BYTE[fmt]
    codes = np.arange(2**bits, dtype=np.uint8)
    texts = [f"0x{int(c):x}" for c in codes]
    for convention in mxgate.conventions():
        code, out, message = outcome(cli, "decode", "--format", fmt, "--convention", convention,
                                     *texts)
        if code != 0:
            same_refusal(lambda: mxgate.decode(codes, fmt, convention), message)
            continue
        got = mxgate.decode(codes, fmt, convention)
        assert got.dtype == np.float32 and got.shape == codes.shape
        assert [python_decoded(v) for v in got] == [parse_decoded(l) for l in out.splitlines()]
    code, _, message = outcome(cli, "decode", "--format", fmt, "--convention", "ocp_mx",
                               f"0x{2**bits:x}")
    assert code == 2
    same_refusal(lambda: mxgate.decode(np.array([2**bits], np.uint8), fmt, "ocp_mx"), message)


def finite(x):
    y = x.copy()
    y[~np.isfinite(y)] = 1.0
    return y


def mx_cases():
    """(scheme, fmt passed, element format): mx with FP6 / FP4 elements, mxfp4, mxfp6."""
    return [("mx", "e2m1", "e2m1"), ("mxfp4", None, "e2m1"), ("mx", "e2m3", "e2m3"),
            ("mxfp6", "e2m3", "e2m3"), ("mxfp6", "e3m2", "e3m2")]


def format_args(fmt):
    return ["--format", fmt] if fmt else []


# Guards against MXFP4 / MXFP6 quantize and dequantize through Python differing from the CLI for
# every convention with such a quantizer: e2m1 codes returned unpacked or with the nibbles
# swapped, the padding nibble of an odd K set, --k not forwarded, a NaN / Inf input handled
# differently (a refusal on one side only).
@pytest.mark.parametrize("scheme, fmt, element", mx_cases())
def test_mx_fp4_fp6_quantize_and_dequantize_equal_cli(cli, files, scheme, fmt, element):
    m, k = 5, 69  # an odd K: the last packed byte holds one code and a padding nibble
    conventions = quantizer_conventions(mx=True, fmt=element)
    assert "ocp_mx" in conventions, conventions
    compared = 0
    for x in (activations(m, k, SEED), finite(activations(m, k, SEED + 1))):
        files.save("x.npy", x)
        for convention in conventions:
            code, _, message = outcome(cli, "quantize", "--scheme", scheme, *format_args(fmt),
                                       "--convention", convention, "--in", files("x.npy"),
                                       "--out", files("q"))
            if code != 0:
                same_refusal(lambda: mxgate.quantize(x, scheme, fmt, convention), message)
                continue
            data, scales = mxgate.quantize(x, scheme, fmt, convention)
            assert same_bits(data, files.load("q.data.npy")), convention
            assert same_bits(scales, files.load("q.scales.npy")), convention
            assert data.shape == ((m, (k + 1) // 2) if element == "e2m1" else (m, k))
            k_args, k_kw = (["--k", str(k)], {"k": k}) if element == "e2m1" else ([], {})
            for dtype in ("float32", "bf16"):
                cli.ok("dequantize", "--scheme", scheme, *format_args(fmt), "--convention",
                       convention, "--data", files("q.data.npy"), "--scales",
                       files("q.scales.npy"), "--out", files("y.npy"), "--dtype", dtype, *k_args)
                y = mxgate.dequantize(data, scales, fmt, convention, scheme=scheme, dtype=dtype,
                                      **k_kw)
                assert same_bits(y, files.load("y.npy")), (convention, dtype)
                assert y.shape == (m, k)
            compared += 1
    assert compared >= 2, compared


NVFP4_VARIANTS = [
    ({}, []),
    ({"global_amax": 3.0}, ["--global-amax", "0x1.8000000000000p+1"]),
    ({"tile": "16x16"}, ["--tile", "16x16"]),
    ({"pow2_scales": True}, ["--pow2-scales"]),
    ({"scale_layout": "nv_swizzle_128x4"}, ["--scale-layout", "nv_swizzle_128x4"]),
]


# Guards against NVFP4 quantize / dequantize through Python differing from the CLI for each
# recipe (te_nvfp4_ref, torchao_nvfp4, flashinfer_nvfp4) and option: the global decode scale
# (PREFIX.global.npy) missing or different, --global-amax rounded differently (Python passes the
# float as hex text, rounded once to fp32), --tile / --pow2-scales dropped, E4M3 scales decoded as
# E8M0 or the reverse on dequantize.
@pytest.mark.parametrize("convention", ["te_nvfp4_ref", "torchao_nvfp4", "flashinfer_nvfp4"])
@pytest.mark.parametrize("kw, args", NVFP4_VARIANTS, ids=["default", "global_amax", "tile16x16",
                                                         "pow2_scales", "layout"])
def test_nvfp4_quantize_and_dequantize_equal_cli(cli, files, convention, kw, args):
    m, k = 18, 45  # two 16-row tiles, a short last block, an odd K
    x = finite(activations(m, k, SEED + 2))
    files.save("x.npy", x)
    code, _, message = outcome(cli, "quantize", "--scheme", "nvfp4", "--convention", convention,
                               "--in", files("x.npy"), "--out", files("q"), *args)
    if code != 0:
        same_refusal(lambda: mxgate.quantize_nvfp4(x, convention, **kw), message)
        assert kw, message  # the plain recipe always quantizes
        return
    data, scales, global_scale = mxgate.quantize_nvfp4(x, convention, **kw)
    assert same_bits(data, files.load("q.data.npy"))
    assert same_bits(scales, files.load("q.scales.npy"))
    assert same_bits(global_scale, files.load("q.global.npy"))
    assert global_scale.dtype == np.float32 and global_scale.shape == (1,)
    assert data.shape == (m, (k + 1) // 2)
    if "scale_layout" in kw:
        return  # dequantize takes logical scales only
    pow2 = ["--pow2-scales"] if kw.get("pow2_scales") else []
    for dtype in ("float32", "bf16"):
        cli.ok("dequantize", "--scheme", "nvfp4", "--convention", convention, "--data",
               files("q.data.npy"), "--scales", files("q.scales.npy"), "--global",
               files("q.global.npy"), "--k", str(k), "--out", files("y.npy"), "--dtype", dtype,
               *pow2)
        y = mxgate.dequantize(data, scales, None, convention, scheme="nvfp4", dtype=dtype, k=k,
                              global_scale=global_scale, pow2_scales=bool(pow2))
        assert same_bits(y, files.load("y.npy")), dtype


def quantized(scheme, element, x, convention):
    if scheme == "nvfp4":
        return mxgate.quantize_nvfp4(x, convention)
    return mxgate.quantize(x, "mx", element, convention) + (None,)


def fp4_gemm_operands(case, m, n, k, seed):
    """A, B of one FP4 GEMM case, from finite normal data: (arrays by CLI option, the Python
    keyword arguments and the CLI options besides the arrays)."""
    scheme, fa, fb = case
    x = finite(activations(m, k, seed))
    w = np.random.default_rng(seed + 7).standard_normal((n, k)).astype(np.float32)
    convention = "te_nvfp4_ref" if scheme == "nvfp4" else "ocp_mx"
    a, sa, ga = quantized(scheme, fa, x, convention)
    b, sb, gb = quantized(scheme, fb, w, convention)
    if scheme != "nvfp4":
        # Scale bytes whose value depends on the e8m0 decode rule (0x00: 2^-127 or 0), so that
        # a convention dropped on the way changes C.
        sa[m - 1, 0] = 0x00
    arrays = {"a": a, "a-scales": sa, "b": b, "b-scales": sb}
    kw, opts = {"scheme": scheme}, ["--scheme", scheme]
    if scheme == "nvfp4":
        arrays.update({"a-global": ga, "b-global": gb})
    elif scheme == "mx":
        kw.update(a_format=fa, b_format=fb)
        opts += ["--a-format", fa, "--b-format", fb]
    elif scheme == "mxfp6":
        kw.update(a_format=fa, b_format=fb)
        opts += ["--a-format", fa, "--b-format", fb]
    if fa == "e2m1" and fb == "e2m1":
        kw["k"] = k
        opts += ["--k", str(k)]
    return arrays, kw, opts


def call_kw(arrays, kw):
    out = dict(kw)
    if "a-global" in arrays:
        out.update(a_global=arrays["a-global"], b_global=arrays["b-global"])
    return out


def save_all(files, arrays):
    args = []
    for option, array in arrays.items():
        args += ["--" + option, files.save(option + ".npy", array)]
    return args


GEMM_CASES = [("mxfp4", "e2m1", "e2m1"), ("mxfp6", "e2m3", "e3m2"), ("mx", "e4m3fn", "e2m1"),
              ("mx", "e2m1", "e5m2"), ("nvfp4", "e2m1", "e2m1")]
GEMM_IDS = ["mxfp4", "mxfp6_e2m3xe3m2", "mx_e4m3fnxe2m1", "mx_e2m1xe5m2", "nvfp4"]


# Guards against gemm through Python differing from `mxgate gemm` on FP4 / FP6: the operand
# formats (--a-format / --b-format) or --k not forwarded, the NVFP4 global scales (alpha) dropped,
# the e8m0 decode rule (--convention) lost, for both output dtypes.
@pytest.mark.parametrize("case", GEMM_CASES, ids=GEMM_IDS)
@pytest.mark.parametrize("dtype", ["float32", "bf16"])
def test_fp4_gemm_equals_cli(cli, files, case, dtype):
    arrays, kw, opts = fp4_gemm_operands(case, 7, 20, 75, SEED + 3)
    args = save_all(files, arrays)
    conventions = [None] if case[0] == "nvfp4" else [None, "aiter_fp4_fallback"]
    for convention in conventions:
        conv = ["--convention", convention] if convention else []
        code, _, message = outcome(cli, "gemm", *opts, *args, *conv, "--out", files("c.npy"),
                                   "--dtype", dtype)
        call = lambda: mxgate.gemm(arrays["a"], arrays["a-scales"], arrays["b"],
                                   arrays["b-scales"], dtype=dtype, convention=convention,
                                   **call_kw(arrays, kw))
        if code != 0:  # aiter_fp4_fallback defines e2m1 only
            assert convention and "does not define" in message, message
            same_refusal(call, message)
            continue
        c = call()
        assert same_bits(c, files.load("c.npy")), convention
        assert c.shape == (7, 20)


# Guards against check_gemm's verdict differing from `mxgate check-gemm` on FP4 / FP6 GEMMs: its
# text and pass / fail in exact and bound mode, for the exact C and for one with a flipped ulp.
@pytest.mark.parametrize("case", GEMM_CASES, ids=GEMM_IDS)
def test_fp4_check_gemm_equals_cli(cli, files, case):
    arrays, kw, opts = fp4_gemm_operands(case, 9, 12, 64, SEED + 4)
    args = save_all(files, arrays)
    operands = (arrays["a"], arrays["a-scales"], arrays["b"], arrays["b-scales"])
    exact = mxgate.gemm(*operands, **call_kw(arrays, kw))
    wrong = exact.copy()
    assert np.isfinite(exact[3, 7]) and exact[3, 7] != 0
    wrong[3, 7] = np.nextafter(wrong[3, 7], np.float32(np.inf))
    for c, passes in ((exact, True), (wrong, False)):
        files.save("c.npy", c)
        for mode in ("exact", "bound"):
            code, out, err = cli("check-gemm", *opts, *args, "--c", files("c.npy"), "--mode",
                                 mode)
            v = mxgate.check_gemm(*operands, c, mode=mode, **call_kw(arrays, kw))
            assert code == (0 if v.passed else 1), err
            assert v.text == out, mode
            if mode == "exact":  # the exact C passes, the flipped ulp fails at its coordinate
                assert v.passed == passes
                assert passes or (v.first.coords == (3, 7) and v.mismatches == 1)
