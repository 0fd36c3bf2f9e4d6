"""The bit-exact reference as functions on arrays: what the CLI verbs do to .npy files
(`mxgate encode`, `decode`, `quantize`, `dequantize`, `gemm`, `check-gemm`), done in memory by
the same library code, with the same option names and the same error texts (ValueError).

Arguments that name a CLI option keep its name with "_" for "-": a bad `a_scales` is reported
as "--a-scales: ...", the message `mxgate gemm` prints for the same file (dequantize's
`global_scale` is the CLI's --global, a Python keyword). docs/python.md §3.

FP4 / FP6 (docs/fp4.md): encode / decode take e2m1, e2m3 and e3m2 (one code per byte); the
schemes mxfp4, mxfp6 and nvfp4 hold E2M1 data packed two codes per byte, element 2i in the low
nibble, (rows, ceil(K/2)) uint8, with `k` giving K where no unpacked operand does.
"""

import os
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _native
from ._arrays import host_array
from .accumulator import Accumulator
from .verdict import Verdict

# Anything an array argument takes (docs/python.md §3.1): numpy arrays, objects with __array__
# or DLPack (torch / CuPy / JAX, on any device), plain Python numbers and lists.
ArrayInput = Any
Block = Union[str, Tuple[int, int], None]  # a block scheme's scale block: "1x0" or (1, 0)
PathLike = Union[str, "os.PathLike[str]"]

_SIXTEEN_BIT = ("bf16", "fp16")
_MX_SCALES = ("mx", "mxfp4", "mxfp6")


def _opt(options, name, value):
    """Adds --name value unless value is None (the option is then absent, as on the CLI)."""
    if value is not None:
        options.append((name, value if isinstance(value, str) else str(value)))


def _opts(**values):
    """_opt for each keyword (underscores become dashes), in the order given."""
    options = []
    for name, value in values.items():
        _opt(options, name.replace("_", "-"), value)
    return options


def _flag(options, name, on):
    if on:
        options.append((name, None))


def _value_text(v):
    """A number as the CLI's VALUE text, exactly: a hex float, so that the library rounds the
    Python float to fp32 once, as np.float32(v) does (str() would be a second decimal rounding)."""
    if v is None or isinstance(v, str):
        return v
    v = float(v)
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    return v.hex()  # "inf", "-inf", or "0x1.8p+2"


def formats() -> Tuple[str, ...]:
    """The format names encode / decode accept: e4m3fn e5m2 e4m3fnuz e5m2fnuz e8m0 bf16 fp16
    e2m1 e2m3 e3m2."""
    return _native.names("formats")


def conventions() -> Tuple[str, ...]:
    """The named conventions (`mxgate conventions` shows each one's policies and source)."""
    return _native.names("conventions")


def accumulators() -> Tuple[Accumulator, ...]:
    """The named accumulator models (`mxgate accumulators`), in registry order: a tuple of
    Accumulator (name, kind, parameters, description, source). check_gemm(accumulator=NAME) takes
    a name, or NAME:param=value,... to override parameters (docs/accumulators.md §1)."""
    _, text, _ = _native.run("accumulators", [("json", None)])
    return Accumulator.list_from_json(text)


def encode(x: ArrayInput, fmt: str, convention: str) -> np.ndarray:
    """Values to codes under `convention`: uint8 for 8-bit formats and for e2m1 / e2m3 / e3m2
    (one code per byte, not packed), uint16 for bf16 and fp16, same shape. x is float32 or
    float64 (rounded once to fp32, as the CLI rounds decimal text); float16 / bfloat16 / float8
    arrays are widened exactly. A NaN the convention leaves undefined for FP4 (ocp_mx) raises
    ValueError for the whole array, as `mxgate encode` exits 2."""
    options = _opts(format=fmt, convention=convention)
    values = host_array(x, "values", "values", plain=np.float64)
    out, _, _ = _native.run("encode", options, [("values", values)])
    return out["codes"]


def decode(codes: ArrayInput, fmt: str, convention: str) -> np.ndarray:
    """Codes (uint8 or uint16, any shape) to float32 values; e8m0 uses the convention's decode
    rule, every other format decodes exactly."""
    options = _opts(format=fmt, convention=convention)
    plain = np.uint16 if fmt in _SIXTEEN_BIT else np.uint8
    a = host_array(codes, "codes", "bits", fmt=fmt, plain=plain)
    out, _, _ = _native.run("decode", options, [("codes", a)])
    return out["values"]


def quantize(x: ArrayInput, scheme: str, fmt: Optional[str], convention: str, *,
             scale_layout: Optional[str] = None, ue8m0: bool = False,
             global_amax: Optional[float] = None, tile: Optional[str] = None,
             pow2_scales: bool = False) -> Tuple[np.ndarray, ...]:
    """`mxgate quantize`: x (M, K) float32 / float64 -> (codes uint8 (M, K), scales); e2m1 codes
    packed (M, ceil(K/2)). scheme mx (fmt any MX element format, FP8 / FP6 / FP4), mxfp4 (e2m1,
    fmt may be None), mxfp6 (fmt e2m3 or e3m2): scales uint8 e8m0 (M, ceil(K/32)); act1x128:
    float32 (M, ceil(K/128)); w128x128: float32 (ceil(M/128), ceil(K/128)). scheme nvfp4
    (convention te_nvfp4_ref, torchao_nvfp4 or flashinfer_nvfp4) returns three arrays: (codes,
    uint8 E4M3 scales (M, ceil(K/16)), float32 (1,) global decode scale), with global_amax (a
    number: the calibrated amax; default the amax of x), tile ("1x16" / "16x16") and
    pow2_scales (E8M0 scales). scale_layout returns the scales in that physical layout as 1-D
    storage (padding 0); ue8m0: power-of-two block scales."""
    options = _opts(scheme=scheme, format=fmt, convention=convention, scale_layout=scale_layout,
                    global_amax=_value_text(global_amax), tile=tile)
    _flag(options, "ue8m0", ue8m0)
    _flag(options, "pow2-scales", pow2_scales)
    a = host_array(x, "in", "values", plain=np.float64)
    out, _, _ = _native.run("quantize", options, [("in", a)])
    if "global" in out:
        return out["data"], out["scales"], out["global"]
    return out["data"], out["scales"]


def quantize_mx(x: ArrayInput, fmt: str, convention: str, *,
                scale_layout: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """MX quantization, blocks of 32 along K: (codes, e8m0 scale bytes). fmt may be an FP6 / FP4
    element format (e2m3, e3m2, e2m1: packed codes)."""
    return quantize(x, "mx", fmt, convention, scale_layout=scale_layout)


def quantize_mxfp4(x: ArrayInput, convention: str, *,
                   scale_layout: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """MXFP4: e2m1 codes packed (M, ceil(K/2)) and e8m0 scale bytes (M, ceil(K/32))."""
    return quantize(x, "mxfp4", None, convention, scale_layout=scale_layout)


def quantize_nvfp4(x: ArrayInput, convention: str, *, global_amax: Optional[float] = None,
                   tile: Optional[str] = None, pow2_scales: bool = False,
                   scale_layout: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NVFP4 (docs/fp4.md §6): (e2m1 codes packed (M, ceil(K/2)), uint8 E4M3 block scales
    (M, ceil(K/16)), float32 (1,) global decode scale) with the recipe of `convention`
    (te_nvfp4_ref, torchao_nvfp4, flashinfer_nvfp4)."""
    return quantize(x, "nvfp4", None, convention, scale_layout=scale_layout,
                    global_amax=global_amax, tile=tile, pow2_scales=pow2_scales)


def quantize_block(x: ArrayInput, fmt: str, convention: str, *, scheme: str = "act1x128",
                   ue8m0: bool = False,
                   scale_layout: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Block FP8 (DeepSeek-style): scheme act1x128 (activations, 1x128 groups) or w128x128
    (weights, 128x128 blocks); (codes, float32 scales)."""
    return quantize(x, scheme, fmt, convention, scale_layout=scale_layout, ue8m0=ue8m0)


def dequantize(data: ArrayInput, scales: ArrayInput, fmt: Optional[str], convention: str, *,
               scheme: str = "mx", dtype: str = "float32", k: Optional[int] = None,
               global_scale: Optional[ArrayInput] = None, pow2_scales: bool = False) -> np.ndarray:
    """`mxgate dequantize`: codes times logical row-major scales (mx bytes decoded by the
    convention's e8m0 rule) -> float32 (M, K), or dtype="bf16": uint16 bf16 bits. Packed e2m1
    data (schemes mx with fmt e2m1, mxfp4, nvfp4) holds k codes a row (default twice the
    columns). scheme nvfp4: scales uint8 E4M3 (E8M0 with pow2_scales), global_scale the float32
    (1,) global decode scale quantize returned (the CLI's --global; a number is taken as (1,))."""
    options = _opts(scheme=scheme, format=fmt, convention=convention, dtype=dtype, k=k)
    _flag(options, "pow2-scales", pow2_scales)
    arrays = [
        ("data", host_array(data, "data", "bits", fmt=fmt, plain=np.uint8)),
        ("scales", _scales(scales, "scales", scheme, pow2_scales)),
    ]
    if global_scale is not None:
        arrays.append(("global", _global(global_scale, "global")))
    out, _, _ = _native.run("dequantize", options, arrays)
    return out["out"]


def _scales(s, role, scheme, pow2_scales=False):
    if scheme in _MX_SCALES:
        return host_array(s, role, "bits", fmt="e8m0", plain=np.uint8)
    if scheme == "nvfp4":
        return host_array(s, role, "bits", fmt="e8m0" if pow2_scales else "e4m3fn",
                          plain=np.uint8)
    return host_array(s, role, "bits", plain=np.float32)


def _global(g, role):
    """An NVFP4 global scale: float32 (1,); a Python number or 0-d array becomes shape (1,)."""
    a = host_array(g, role, "bits", plain=np.float32)
    return a.reshape(1) if a.ndim == 0 else a


def _code_format(scheme, fmt, operand_fmt):
    """The format an operand's codes are in, for refusing a float8 array of another format."""
    if scheme == "bf16":
        return "bf16"
    if scheme in ("mxfp4", "nvfp4"):
        return "e2m1"
    return operand_fmt or fmt or (None if scheme == "mxfp6" else "e4m3fn")


def _block_text(block):
    """A scale block as the CLI's RxC text: "1x128", or a (rows, cols) pair (0: whole)."""
    if block is None or isinstance(block, str):
        return block
    rows, cols = block
    return f"{int(rows)}x{int(cols)}"


def _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention, a_format=None,
                 b_format=None, k=None, a_global=None, b_global=None, a_block=None,
                 b_block=None):
    options = _opts(scheme=scheme, format=fmt, a_format=a_format, b_format=b_format,
                    convention=convention, k=k, a_block=_block_text(a_block),
                    b_block=_block_text(b_block))
    plain = np.uint16 if scheme == "bf16" else np.uint8
    arrays = [
        ("a", host_array(a, "a", "bits", fmt=_code_format(scheme, fmt, a_format), plain=plain)),
        ("b", host_array(b, "b", "bits", fmt=_code_format(scheme, fmt, b_format), plain=plain)),
    ]
    # A scale given to bf16 (a global scale to mx) is passed on, so the library rejects it with
    # the CLI's message.
    if a_scales is not None:
        arrays.append(("a-scales", _scales(a_scales, "a-scales", scheme)))
    if b_scales is not None:
        arrays.append(("b-scales", _scales(b_scales, "b-scales", scheme)))
    if a_global is not None:
        arrays.append(("a-global", _global(a_global, "a-global")))
    if b_global is not None:
        arrays.append(("b-global", _global(b_global, "b-global")))
    return options, arrays


def gemm(a: ArrayInput, a_scales: Optional[ArrayInput], b: ArrayInput,
         b_scales: Optional[ArrayInput], *, scheme: str = "mx", fmt: Optional[str] = None,
         convention: Optional[str] = None, dtype: str = "float32", a_format: Optional[str] = None,
         b_format: Optional[str] = None, k: Optional[int] = None,
         a_global: Optional[ArrayInput] = None,
         b_global: Optional[ArrayInput] = None, a_block: Block = None,
         b_block: Block = None) -> np.ndarray:
    """The exact oracle C = A * B^T rounded once (`mxgate gemm`).

    scheme mx: a (M, K), b (N, K) uint8 codes of fmt (default e4m3fn; a_format / b_format give
    each operand its own MX format, e.g. MXFP8 x MXFP4), a_scales (M, ceil(K/32)) and b_scales
    (N, ceil(K/32)) uint8 e8m0 decoded per convention (default ocp_mx); e2m1 operands are packed
    (rows, ceil(K/2)), k giving K when both are. mxfp4 / mxfp6: mx with e2m1 / e2m3|e3m2
    operands. nvfp4: packed e2m1 a, b, uint8 E4M3 scales (rows, ceil(K/16)), a_global /
    b_global the float32 (1,) global decode scales: C = fl32(fl32(a_global * b_global) * acc)
    (docs/fp4.md §8). block: float32 scales a_scales (M, ceil(K/128)), b_scales (ceil(N/128),
    ceil(K/128)); a_block / b_block other scale blocks ((rows, cols) or "RxC", 0 the whole
    dimension: (1, 0) one scale per row, (0, 0) one per tensor). bf16: a, b uint16 bf16 bits,
    a_scales = b_scales = None. Returns float32 (M, N), or dtype="bf16": uint16 bf16 bits."""
    options, arrays = _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention, a_format,
                                   b_format, k, a_global, b_global, a_block, b_block)
    _opt(options, "dtype", dtype)
    out, _, _ = _native.run("gemm", options, arrays)
    return out["out"]


def check_gemm(
    a: ArrayInput, a_scales: Optional[ArrayInput], b: ArrayInput, b_scales: Optional[ArrayInput],
    c: ArrayInput, *, scheme: str = "mx", fmt: Optional[str] = None,
    convention: Optional[str] = None, mode: str = "exact", accumulator: Optional[str] = None,
    acc_bits: Optional[int] = None, block_k: Optional[int] = None, dtype: Optional[str] = None,
    heatmap: Optional[PathLike] = None, a_format: Optional[str] = None,
    b_format: Optional[str] = None, k: Optional[int] = None,
    a_global: Optional[ArrayInput] = None, b_global: Optional[ArrayInput] = None,
    a_block: Block = None, b_block: Block = None, offsets: Optional[ArrayInput] = None,
    offsets_kind: Optional[str] = None, offsets_alignment: Optional[int] = None,
    masked_counts: Optional[ArrayInput] = None, c_before: Optional[ArrayInput] = None,
) -> Verdict:
    """Checks a kernel's C (float32 (M, N), or uint16 bf16 bits) against the oracle
    (`mxgate check-gemm`); gemm's inputs, the FP4 schemes and their options included.
    mode="exact": C must equal the correctly rounded result bit for bit (any NaN equals any
    NaN); with accumulator=NAME, the text adds whether the operands are exact in that
    accumulator (if not, a correct kernel with it may differ from the correctly rounded C).
    mode="bound": C must lie within the rigorous bound of an accumulator model:
    accumulator=NAME[:param=value,...] (accumulators(), e.g. "sm90_fp8_mma" for Hopper FP8
    tensor cores) or the manual form acc_bits / block_k (default 24 / 128: fp32_rn).
    heatmap: an .svg or .png file to draw the mismatches into. a_block / b_block: the block
    scheme's scale blocks, as gemm takes them.
    A grouped GEMM (docs/grouped.md §5): offsets (int32 / int64 (E,); offsets_kind "ends", the
    default, as torch's offs, or "starts"; offsets_alignment, default 1) with A (rows, K), B
    (E, N, K), B scales one grid per expert and C (rows, N); or masked_counts (E,) with A
    (E, max_m, K) and C (E, max_m, N). c_before: C's buffer before the kernel ran, whose rows
    no group writes must keep their bits. The verdict's `group_of(element)` gives (group, row
    within the group) of a located element.
    Returns a Verdict (passed: C passes); raises InputError (a ValueError) on bad input, never
    on a failing C."""
    options, arrays = _gemm_inputs(a, a_scales, b, b_scales, scheme, fmt, convention, a_format,
                                   b_format, k, a_global, b_global, a_block, b_block)
    arrays.append(("c", host_array(c, "c", "bits", fmt=None, plain=np.float32)))
    if heatmap is not None:
        heatmap = os.fspath(heatmap)
    options += _opts(mode=mode, accumulator=accumulator, acc_bits=acc_bits, block_k=block_k,
                     dtype=dtype, heatmap=heatmap, offsets_kind=offsets_kind,
                     offsets_alignment=offsets_alignment)
    groups = None
    for role, x in (("offsets", offsets), ("masked-counts", masked_counts)):
        if x is not None:
            arr = host_array(x, role, "bits", plain=np.int64)
            arrays.append((role, arr))
            groups = (role, offsets_kind or "ends", arr.astype(np.int64).reshape(-1))
    if c_before is not None:
        arrays.append(("c-before", host_array(c_before, "c-before", "bits", fmt=None,
                                              plain=np.float32)))
    _, text, v = _native.run("check-gemm", options, arrays, want_verdict=True)
    return Verdict.from_struct(v, text, heatmap, groups)
