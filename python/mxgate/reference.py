"""The bit-exact reference as functions on arrays: what the CLI verbs do to .npy files
(`mxgate encode`, `decode`, `quantize`, `dequantize`, `gemm`, `check-gemm`), done in memory by
the same library code, with the same option names and the same error texts (ValueError).

Arguments that name a CLI option keep its name with "_" for "-": a bad `a_scales` is reported
as "--a-scales: ...", the message `mxgate gemm` prints for the same file. docs/python.md §3.
"""

import os

import numpy as np

from . import _native
from ._arrays import host_array
from .verdict import Verdict

_SIXTEEN_BIT = ("bf16", "fp16")


def _opt(options, name, value):
    """Adds --name value unless value is None (the option is then absent, as on the CLI)."""
    if value is not None:
        options.append((name, value if isinstance(value, str) else str(value)))


def formats():
    """The format names encode / decode accept: e4m3fn e5m2 e4m3fnuz e5m2fnuz e8m0 bf16 fp16."""
    return _native.names("formats")


def conventions():
    """The named conventions (`mxgate conventions` shows each one's policies and source)."""
    return _native.names("conventions")


def accumulators():
    """The named accumulator models of check_gemm(mode="bound", accumulator=...)."""
    return _native.names("accumulators")


def encode(x, fmt, convention):
    """Values to codes under `convention`: uint8 for 8-bit formats, uint16 for bf16 and fp16,
    same shape. x is float32 or float64 (rounded once to fp32, as the CLI rounds decimal text);
    float16 / bfloat16 / float8 arrays are widened exactly."""
    options = []
    _opt(options, "format", fmt)
    _opt(options, "convention", convention)
    values = host_array(x, "values", "values", plain=np.float64)
    out, _, _ = _native.run("encode", options, [("values", values)])
    return out["codes"]


def decode(codes, fmt, convention):
    """Codes (uint8 or uint16, any shape) to float32 values; e8m0 uses the convention's decode
    rule, every other format decodes exactly."""
    options = []
    _opt(options, "format", fmt)
    _opt(options, "convention", convention)
    plain = np.uint16 if fmt in _SIXTEEN_BIT else np.uint8
    a = host_array(codes, "codes", "bits", fmt=fmt, plain=plain)
    out, _, _ = _native.run("decode", options, [("codes", a)])
    return out["values"]


def quantize(x, scheme, fmt, convention, *, scale_layout=None, ue8m0=False):
    """`mxgate quantize`: x (M, K) float32 / float64 -> (codes uint8 (M, K), scales).
    scheme mx: scales uint8 e8m0 (M, ceil(K/32)); act1x128: float32 (M, ceil(K/128));
    w128x128: float32 (ceil(M/128), ceil(K/128)). scale_layout returns the scales in that
    physical layout as 1-D storage (padding 0); ue8m0: power-of-two block scales."""
    options = []
    _opt(options, "scheme", scheme)
    _opt(options, "format", fmt)
    _opt(options, "convention", convention)
    _opt(options, "scale-layout", scale_layout)
    if ue8m0:
        options.append(("ue8m0", None))
    a = host_array(x, "in", "values", plain=np.float64)
    out, _, _ = _native.run("quantize", options, [("in", a)])
    return out["data"], out["scales"]


def quantize_mx(x, fmt, convention, *, scale_layout=None):
    """MX quantization, blocks of 32 along K: (codes, e8m0 scale bytes)."""
    return quantize(x, "mx", fmt, convention, scale_layout=scale_layout)


def quantize_block(x, fmt, convention, *, scheme="act1x128", ue8m0=False, scale_layout=None):
    """Block FP8 (DeepSeek-style): scheme act1x128 (activations, 1x128 groups) or w128x128
    (weights, 128x128 blocks); (codes, float32 scales)."""
    return quantize(x, scheme, fmt, convention, scale_layout=scale_layout, ue8m0=ue8m0)


def dequantize(data, scales, fmt, convention, *, scheme="mx", dtype="float32"):
    """`mxgate dequantize`: codes times logical row-major scales (mx bytes decoded by the
    convention's e8m0 rule) -> float32 (M, K), or dtype="bf16": uint16 bf16 bits."""
    options = []
    _opt(options, "scheme", scheme)
    _opt(options, "format", fmt)
    _opt(options, "convention", convention)
    _opt(options, "dtype", dtype)
    arrays = [
        ("data", host_array(data, "data", "bits", fmt=fmt, plain=np.uint8)),
        ("scales", _scales(scales, "scales", scheme)),
    ]
    out, _, _ = _native.run("dequantize", options, arrays)
    return out["out"]


def _scales(s, role, scheme):
    if scheme == "mx":
        return host_array(s, role, "bits", fmt="e8m0", plain=np.uint8)
    return host_array(s, role, "bits", plain=np.float32)


def _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention):
    options = []
    _opt(options, "scheme", scheme)
    _opt(options, "format", fmt)
    _opt(options, "convention", convention)
    code_fmt = "bf16" if scheme == "bf16" else (fmt or "e4m3fn")
    plain = np.uint16 if scheme == "bf16" else np.uint8
    arrays = [
        ("a", host_array(a, "a", "bits", fmt=code_fmt, plain=plain)),
        ("b", host_array(b, "b", "bits", fmt=code_fmt, plain=plain)),
    ]
    # A scale given to bf16 is passed on, so the library rejects it with the CLI's message.
    if a_scales is not None:
        arrays.append(("a-scales", _scales(a_scales, "a-scales", scheme)))
    if b_scales is not None:
        arrays.append(("b-scales", _scales(b_scales, "b-scales", scheme)))
    return options, arrays


def gemm(a, a_scales, b, b_scales, *, scheme="mx", fmt=None, convention=None, dtype="float32"):
    """The exact oracle C = A * B^T rounded once (`mxgate gemm`).

    scheme mx: a (M, K), b (N, K) uint8 codes of fmt (default e4m3fn), a_scales (M, ceil(K/32))
    and b_scales (N, ceil(K/32)) uint8 e8m0 decoded per convention (default ocp_mx). block:
    float32 scales a_scales (M, ceil(K/128)), b_scales (ceil(N/128), ceil(K/128)). bf16: a, b
    uint16 bf16 bits, a_scales = b_scales = None. Returns float32 (M, N), or dtype="bf16":
    uint16 bf16 bits."""
    options, arrays = _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention)
    _opt(options, "dtype", dtype)
    out, _, _ = _native.run("gemm", options, arrays)
    return out["out"]


def check_gemm(
    a, a_scales, b, b_scales, c, *, scheme="mx", fmt=None, convention=None, mode="exact",
    accumulator=None, acc_bits=None, block_k=None, dtype=None, heatmap=None,
):
    """Checks a kernel's C (float32 (M, N), or uint16 bf16 bits) against the oracle
    (`mxgate check-gemm`); gemm's inputs. mode="exact": C must equal the correctly rounded result
    bit for bit (any NaN equals any NaN). mode="bound": C must lie within the rigorous bound of
    an accumulator model: accumulator=NAME (accumulators(); default fp32_rn) or the manual form
    acc_bits / block_k. heatmap: an .svg or .png file to draw the mismatches into.
    Returns a Verdict; raises ValueError on bad input, never on a failing C."""
    options, arrays = _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention)
    arrays.append(("c", host_array(c, "c", "bits", fmt=None, plain=np.float32)))
    _opt(options, "mode", mode)
    _opt(options, "accumulator", accumulator)
    _opt(options, "acc-bits", acc_bits)
    _opt(options, "block-k", block_k)
    _opt(options, "dtype", dtype)
    if heatmap is not None:
        heatmap = os.fspath(heatmap)
        _opt(options, "heatmap", heatmap)
    _, text, v = _native.run("check-gemm", options, arrays, want_verdict=True)
    return Verdict.from_struct(v, text, heatmap)
