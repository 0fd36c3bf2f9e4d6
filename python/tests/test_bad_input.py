"""Bad input through the Python API raises ValueError with the CLI's message: the same text
`mxgate VERB` prints for the same arrays saved as .npy files (less "mxgate VERB: " and the file
name, which an array in memory does not have). One named case per problem: wrong dtype, wrong
shape, empty, a K mismatch, unknown scheme / format / convention / layout / mode / accumulator
(and accumulator parameter), an accumulator whose chunks cross the scale blocks,
options a scheme or mode does not use, out-of-range integers, a heatmap that cannot be written;
for FP4 / FP6, a NaN a convention leaves undefined, a scheme / format mismatch, packed e2m1 of
the wrong width or --k, NVFP4 global scales missing, misshapen or given to another scheme.
Not covered: that the messages are good (the CLI's own tests), inputs that crash (test_no_crash.py).
"""

import numpy as np
import pytest

import mxgate

U8 = np.uint8
F32 = np.float32


def x(m=2, k=64, dtype=F32):
    return np.linspace(-3, 3, m * k).reshape(m, k).astype(dtype)


def codes(m, k, dtype=U8):
    return np.full((m, k), 0x38, dtype=dtype)  # 1.0 in e4m3fn


def e8m0(m, kb):
    return np.full((m, kb), 127, dtype=U8)


# (name, verb, python arrays {cli option: array}, python call, cli options besides the arrays)
# A None array means "absent". Every python call takes the arrays dict.
GOOD_MX = {"a": codes(2, 64), "a-scales": e8m0(2, 2), "b": codes(3, 64), "b-scales": e8m0(3, 2)}


def with_(base, **changes):
    d = dict(base)
    for key, value in changes.items():
        d[key.replace("_", "-")] = value
    return d


def gemm_call(scheme="mx", **kw):
    return lambda d: mxgate.gemm(d["a"], d.get("a-scales"), d["b"], d.get("b-scales"),
                                 scheme=scheme, **kw)


def check_call(scheme="mx", **kw):
    return lambda d: mxgate.check_gemm(d["a"], d.get("a-scales"), d["b"], d.get("b-scales"),
                                       d["c"], scheme=scheme, **kw)


C_OK = np.zeros((2, 3), F32)

CASES = [
    # encode / decode: option errors (their VALUE / code arguments are text on the CLI)
    ("encode unknown format", "encode", {}, lambda d: mxgate.encode([1.0], "e4m3", "ocp_mx"),
     ["--format", "e4m3", "--convention", "ocp_mx", "1"]),
    ("encode unknown convention", "encode", {}, lambda d: mxgate.encode([1.0], "e4m3fn", "ocp"),
     ["--format", "e4m3fn", "--convention", "ocp", "1"]),
    ("encode format the convention lacks", "encode", {},
     lambda d: mxgate.encode([1.0], "e4m3fnuz", "ocp_mx"),
     ["--format", "e4m3fnuz", "--convention", "ocp_mx", "1"]),
    ("encode e8m0 without an encoder", "encode", {},
     lambda d: mxgate.encode([1.0], "e8m0", "triton_nvidia"),
     ["--format", "e8m0", "--convention", "triton_nvidia", "1"]),
    ("decode convention missing", "decode", {}, lambda d: mxgate.decode([1], "e4m3fn", None),
     ["--format", "e4m3fn", "0x01"]),
    ("decode code too wide", "decode", {},
     lambda d: mxgate.decode(np.array([0x1FF], np.uint16), "e4m3fn", "ocp_mx"),
     ["--format", "e4m3fn", "--convention", "ocp_mx", "0x1ff"]),
    # quantize
    ("quantize unknown scheme", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mx2", "e4m3fn", "ocp_mx"),
     ["--scheme", "mx2", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize e8m0 as element format", "quantize", {"in": x()},
     lambda d: mxgate.quantize_mx(d["in"], "e8m0", "ocp_mx"),
     ["--scheme", "mx", "--format", "e8m0", "--convention", "ocp_mx"]),
    ("quantize convention without MX quantizer", "quantize", {"in": x()},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "triton_nvidia"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "triton_nvidia"]),
    ("quantize convention without block quantizer", "quantize", {"in": x()},
     lambda d: mxgate.quantize_block(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "act1x128", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize ue8m0 with mx", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mx", "e4m3fn", "ocp_mx", ue8m0=True),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx", "--ue8m0"]),
    ("quantize unknown scale layout", "quantize", {"in": x()},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx", scale_layout="swizzled"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx", "--scale-layout",
      "swizzled"]),
    ("quantize uint8 input", "quantize", {"in": x(dtype=U8)},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize bf16 bits input", "quantize", {"in": x(dtype=np.uint16)},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize int64 input", "quantize", {"in": x(dtype=np.int64)},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize 1-D input", "quantize", {"in": np.ones(64, F32)},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize empty input", "quantize", {"in": np.ones((0, 64), F32)},
     lambda d: mxgate.quantize_mx(d["in"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    # dequantize
    ("dequantize float32 data", "dequantize", {"data": x(), "scales": e8m0(2, 2)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("dequantize scales of the wrong shape", "dequantize",
     {"data": codes(2, 64), "scales": e8m0(2, 3)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "ocp_mx"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("dequantize block scales as bytes", "dequantize",
     {"data": codes(2, 64), "scales": e8m0(2, 1)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "vllm_group_quant",
                                 scheme="act1x128"),
     ["--scheme", "act1x128", "--format", "e4m3fn", "--convention", "vllm_group_quant"]),
    ("dequantize unknown dtype", "dequantize", {"data": codes(2, 64), "scales": e8m0(2, 2)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "ocp_mx", dtype="fp16"),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx", "--dtype", "fp16"]),
    # gemm
    ("gemm unknown scheme", "gemm", GOOD_MX, gemm_call("mxfp8"), ["--scheme", "mxfp8"]),
    ("gemm float32 A", "gemm", with_(GOOD_MX, a=x(2, 64)), gemm_call(), ["--scheme", "mx"]),
    ("gemm 3-D B", "gemm", with_(GOOD_MX, b=np.zeros((3, 64, 1), U8)), gemm_call(),
     ["--scheme", "mx"]),
    ("gemm K mismatch", "gemm", with_(GOOD_MX, b=codes(3, 96), b_scales=e8m0(3, 3)),
     gemm_call(), ["--scheme", "mx"]),
    ("gemm A scales of the wrong shape", "gemm", with_(GOOD_MX, a_scales=e8m0(2, 1)),
     gemm_call(), ["--scheme", "mx"]),
    ("gemm B scales transposed", "gemm", with_(GOOD_MX, b_scales=e8m0(2, 3)), gemm_call(),
     ["--scheme", "mx"]),
    ("gemm missing B scales", "gemm", with_(GOOD_MX, b_scales=None), gemm_call(),
     ["--scheme", "mx"]),
    ("gemm bf16 with scales", "gemm",
     with_(GOOD_MX, a=np.zeros((2, 64), np.uint16), b=np.zeros((3, 64), np.uint16)),
     gemm_call("bf16"), ["--scheme", "bf16"]),
    ("gemm block with a convention", "gemm",
     {"a": codes(2, 64), "a-scales": np.ones((2, 1), F32), "b": codes(3, 64),
      "b-scales": np.ones((1, 1), F32)},
     gemm_call("block", convention="ocp_mx"), ["--scheme", "block", "--convention", "ocp_mx"]),
    ("gemm format the convention lacks", "gemm", GOOD_MX,
     gemm_call(fmt="e4m3fnuz"), ["--scheme", "mx", "--format", "e4m3fnuz"]),
    ("gemm empty A", "gemm", with_(GOOD_MX, a=np.zeros((0, 64), U8), a_scales=e8m0(0, 2)),
     gemm_call(), ["--scheme", "mx"]),
    # check-gemm
    ("check-gemm C of the wrong shape", "check-gemm", with_(GOOD_MX, c=np.zeros((3, 2), F32)),
     check_call(), ["--scheme", "mx"]),
    ("check-gemm float64 C", "check-gemm", with_(GOOD_MX, c=np.zeros((2, 3))), check_call(),
     ["--scheme", "mx"]),
    ("check-gemm uint8 C", "check-gemm", with_(GOOD_MX, c=np.zeros((2, 3), U8)), check_call(),
     ["--scheme", "mx"]),
    ("check-gemm unknown mode", "check-gemm", with_(GOOD_MX, c=C_OK), check_call(mode="close"),
     ["--scheme", "mx", "--mode", "close"]),
    ("check-gemm acc-bits in exact mode", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(acc_bits=23), ["--scheme", "mx", "--acc-bits", "23"]),
    ("check-gemm block-k in exact mode", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(block_k=64), ["--scheme", "mx", "--block-k", "64"]),
    ("check-gemm acc-bits out of range", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(mode="bound", acc_bits=53), ["--scheme", "mx", "--mode", "bound", "--acc-bits",
                                             "53"]),
    ("check-gemm block-k not an integer", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(mode="bound", block_k="1e3"), ["--scheme", "mx", "--mode", "bound", "--block-k",
                                               "1e3"]),
    ("check-gemm unknown accumulator", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(mode="bound", accumulator="fp16_rz"),
     ["--scheme", "mx", "--mode", "bound", "--accumulator", "fp16_rz"]),
    ("check-gemm accumulator and acc-bits", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(mode="bound", accumulator="fp32_rn", acc_bits=23),
     ["--scheme", "mx", "--mode", "bound", "--accumulator", "fp32_rn", "--acc-bits", "23"]),
    ("check-gemm unknown accumulator parameter", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(mode="bound", accumulator="sm90_fp8_mma:bits=13"),
     ["--scheme", "mx", "--mode", "bound", "--accumulator", "sm90_fp8_mma:bits=13"]),
    ("check-gemm accumulator parameter out of range", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(accumulator="sm90_fp8_mma:precision_bits=30"),
     ["--scheme", "mx", "--accumulator", "sm90_fp8_mma:precision_bits=30"]),
    ("check-gemm sm90_fp8_mma chunk across MX scale blocks", "check-gemm",
     with_(GOOD_MX, c=C_OK), check_call(mode="bound", accumulator="sm90_fp8_mma"),
     ["--scheme", "mx", "--mode", "bound", "--accumulator", "sm90_fp8_mma"]),
    ("check-gemm dtype that is not C's", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(dtype="bf16"), ["--scheme", "mx", "--dtype", "bf16"]),
    ("check-gemm heatmap extension", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(heatmap="map.jpg"), ["--scheme", "mx", "--heatmap", "map.jpg"]),
    ("check-gemm heatmap directory missing", "check-gemm", with_(GOOD_MX, c=C_OK),
     check_call(heatmap="/nonexistent-dir/map.svg"),
     ["--scheme", "mx", "--heatmap", "/nonexistent-dir/map.svg"]),
    # FP4 / FP6 (docs/fp4.md): the schemes mxfp4 / mxfp6 / nvfp4, packed e2m1, global scales
    ("encode e2m1 NaN left undefined", "encode", {},
     lambda d: mxgate.encode([1.0, np.nan], "e2m1", "ocp_mx"),
     ["--format", "e2m1", "--convention", "ocp_mx", "1", "nan"]),
    ("decode e2m1 code too wide", "decode", {},
     lambda d: mxgate.decode(np.array([0x10], U8), "e2m1", "ocp_mx"),
     ["--format", "e2m1", "--convention", "ocp_mx", "0x10"]),
    ("quantize mxfp4 with an FP8 format", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mxfp4", "e4m3fn", "ocp_mx"),
     ["--scheme", "mxfp4", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("quantize mxfp6 with e2m1", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mxfp6", "e2m1", "ocp_mx"),
     ["--scheme", "mxfp6", "--format", "e2m1", "--convention", "ocp_mx"]),
    ("quantize mx e2m1 without an FP4 quantizer", "quantize", {"in": x()},
     lambda d: mxgate.quantize_mx(d["in"], "e2m1", "triton_nvidia"),
     ["--scheme", "mx", "--format", "e2m1", "--convention", "triton_nvidia"]),
    ("quantize mxfp4 NaN left undefined", "quantize",
     {"in": np.where(np.arange(64) == 5, np.nan, 1.0).reshape(1, 64).astype(F32)},
     lambda d: mxgate.quantize_mxfp4(d["in"], "aiter_gfx950"),
     ["--scheme", "mxfp4", "--convention", "aiter_gfx950"]),
    ("quantize nvfp4 convention without a recipe", "quantize", {"in": x()},
     lambda d: mxgate.quantize_nvfp4(d["in"], "ocp_mx"), ["--scheme", "nvfp4", "--convention",
                                                           "ocp_mx"]),
    ("quantize nvfp4 unknown tile", "quantize", {"in": x()},
     lambda d: mxgate.quantize_nvfp4(d["in"], "te_nvfp4_ref", tile="32x32"),
     ["--scheme", "nvfp4", "--convention", "te_nvfp4_ref", "--tile", "32x32"]),
    ("quantize nvfp4 global amax not a number", "quantize", {"in": x()},
     lambda d: mxgate.quantize_nvfp4(d["in"], "te_nvfp4_ref", global_amax="big"),
     ["--scheme", "nvfp4", "--convention", "te_nvfp4_ref", "--global-amax", "big"]),
    ("quantize global amax outside nvfp4", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mx", "e4m3fn", "ocp_mx", global_amax=2.0),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx", "--global-amax",
      "0x1.0000000000000p+1"]),
    ("quantize pow2 scales outside nvfp4", "quantize", {"in": x()},
     lambda d: mxgate.quantize(d["in"], "mxfp4", None, "ocp_mx", pow2_scales=True),
     ["--scheme", "mxfp4", "--convention", "ocp_mx", "--pow2-scales"]),
    ("dequantize nvfp4 without its global scale", "dequantize",
     {"data": codes(2, 32), "scales": np.full((2, 4), 0x38, U8)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], None, "te_nvfp4_ref", scheme="nvfp4"),
     ["--scheme", "nvfp4", "--convention", "te_nvfp4_ref"]),
    ("dequantize nvfp4 global scale of shape (2,)", "dequantize",
     {"data": codes(2, 32), "scales": np.full((2, 4), 0x38, U8), "global": np.ones(2, F32)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], None, "te_nvfp4_ref", scheme="nvfp4",
                                 global_scale=d["global"]),
     ["--scheme", "nvfp4", "--convention", "te_nvfp4_ref"]),
    ("dequantize global scale outside nvfp4", "dequantize",
     {"data": codes(2, 64), "scales": e8m0(2, 2), "global": np.ones(1, F32)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "ocp_mx",
                                 global_scale=d["global"]),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx"]),
    ("dequantize k for unpacked codes", "dequantize",
     {"data": codes(2, 64), "scales": e8m0(2, 2)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], "e4m3fn", "ocp_mx", k=64),
     ["--scheme", "mx", "--format", "e4m3fn", "--convention", "ocp_mx", "--k", "64"]),
    ("dequantize mxfp4 k that does not fit the packed columns", "dequantize",
     {"data": codes(2, 32), "scales": e8m0(2, 2)},
     lambda d: mxgate.dequantize(d["data"], d["scales"], None, "ocp_mx", scheme="mxfp4", k=66),
     ["--scheme", "mxfp4", "--convention", "ocp_mx", "--k", "66"]),
    ("gemm nvfp4 with a format", "gemm",
     {"a": codes(2, 32), "a-scales": np.full((2, 4), 0x38, U8), "b": codes(3, 32),
      "b-scales": np.full((3, 4), 0x38, U8), "a-global": np.ones(1, F32),
      "b-global": np.ones(1, F32)},
     lambda d: mxgate.gemm(d["a"], d["a-scales"], d["b"], d["b-scales"], scheme="nvfp4",
                           fmt="e2m1", a_global=d["a-global"], b_global=d["b-global"]),
     ["--scheme", "nvfp4", "--format", "e2m1"]),
    ("gemm nvfp4 without the global scale of B", "gemm",
     {"a": codes(2, 32), "a-scales": np.full((2, 4), 0x38, U8), "b": codes(3, 32),
      "b-scales": np.full((3, 4), 0x38, U8), "a-global": np.ones(1, F32)},
     lambda d: mxgate.gemm(d["a"], d["a-scales"], d["b"], d["b-scales"], scheme="nvfp4",
                           a_global=d["a-global"]),
     ["--scheme", "nvfp4"]),
    ("gemm global scale outside nvfp4", "gemm", with_(GOOD_MX, a_global=np.ones(1, F32)),
     lambda d: mxgate.gemm(d["a"], d["a-scales"], d["b"], d["b-scales"],
                           a_global=d["a-global"]),
     ["--scheme", "mx"]),
    ("gemm operand format outside the MX schemes", "gemm",
     {"a": codes(2, 64), "a-scales": np.ones((2, 1), F32), "b": codes(3, 64),
      "b-scales": np.ones((1, 1), F32)},
     gemm_call("block", a_format="e4m3fn"), ["--scheme", "block", "--a-format", "e4m3fn"]),
    ("gemm mxfp4 with an FP8 operand", "gemm", GOOD_MX, gemm_call("mxfp4", b_format="e4m3fn"),
     ["--scheme", "mxfp4", "--b-format", "e4m3fn"]),
    ("gemm mixed MX: packed e2m1 B of the wrong width", "gemm",
     with_(GOOD_MX, b=codes(3, 64)), gemm_call(b_format="e2m1"), ["--scheme", "mx",
                                                                   "--b-format", "e2m1"]),
    ("gemm mixed MX: k that contradicts the unpacked operand", "gemm",
     with_(GOOD_MX, b=codes(3, 32)), gemm_call(b_format="e2m1", k=62),
     ["--scheme", "mx", "--b-format", "e2m1", "--k", "62"]),
    ("gemm k for FP8 operands", "gemm", GOOD_MX, gemm_call(k=64), ["--scheme", "mx", "--k",
                                                                   "64"]),
    ("check-gemm mxfp6 without formats", "check-gemm", dict(GOOD_MX, c=C_OK),
     check_call("mxfp6"), ["--scheme", "mxfp6"]),
]


# Guards against a ValueError whose text differs from the CLI's for the same input (a check done
# only in Python, a different role name, the path-less message of an array garbled), and against
# a bad input that Python accepts and the CLI refuses (the call then returns: the test fails).
@pytest.mark.parametrize("name, verb, arrays, call, options", CASES, ids=[c[0] for c in CASES])
def test_value_error_text_equals_cli(cli, files, name, verb, arrays, call, options):
    args = list(options)
    paths = []
    for option, array in arrays.items():
        if array is not None:
            paths.append(files.save(option + ".npy", array))
            args += ["--" + option, paths[-1]]
    if verb == "quantize":
        args += ["--out", files("q")]
    elif verb in ("dequantize", "gemm"):
        args += ["--out", files("out.npy")]
    want = cli.error(verb, *args)
    for path in paths:  # an array in memory has no file name
        want = want.replace(path + ": ", "")
    with pytest.raises(ValueError) as e:
        call({k: v for k, v in arrays.items() if v is not None})
    assert str(e.value) == want
