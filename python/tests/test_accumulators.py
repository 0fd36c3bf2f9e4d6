"""The accumulator models through the Python API against the CLI: accumulators() lists the
registry `mxgate accumulators` prints (every model, its kind and every parameter with its value),
and check_gemm(accumulator=...) gives the verdict and text of `mxgate check-gemm --accumulator`
for sm90_fp8_mma and parameter overrides, in bound mode and in exact mode (whose text adds
whether the operands are exact in the accumulator). One case is the H200's own result for a probe
of docs/nvidia.md §4.1: sm90_fp8_mma accepts it, fp32_rn rejects it.
Not covered: the models' semantics and bounds (the C++ suites test_accumulator*), bad specs
(test_bad_input.py)."""

import numpy as np
import pytest

import mxgate
from support import same_bits

SEED = 20240614


def cli_listing(text):
    """`mxgate accumulators` text -> [(name, kind, {parameter: value})], parsed from the text
    form (not the JSON the package reads): "NAME (KIND)", a description line, "  PARAM VALUE
    MEANING" lines, "  source: ..."."""
    models = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        name, kind = lines[0].split(" (")
        params = {}
        for line in lines[2:]:
            if line.startswith("  source: "):
                break
            param, value = line.split()[:2]
            params[param] = value
        models.append((name, kind.rstrip(")"), params))
    return models


# Guards against the package listing other models or parameters than the CLI (a model missing,
# a parameter dropped or renamed on the way through the C ABI), and against a listing that is
# only names.
def test_accumulators_match_cli(cli):
    models = mxgate.accumulators()
    listed = [(m.name, m.kind, m.parameters) for m in models]
    assert listed == cli_listing(cli.ok("accumulators"))
    assert [m.name for m in models] == ["fp32_rn", "sm90_fp8_mma", "sm90_fp8_mma_nopromo",
                                        "cdna3_fp8_mfma", "sm100_f8f6f4", "sm100_mxf4nvf4"]
    sm90 = models[1]
    assert isinstance(sm90, mxgate.Accumulator) and str(sm90) == "sm90_fp8_mma"
    assert sm90.parameters["precision_bits"] == "14"  # docs/nvidia.md §4.1: 14 bits kept
    assert sm90.parameters["chunk_k"] == "128"
    assert sm90.parameters["rounding"] == "truncate"
    assert "docs/nvidia.md §4.1" in sm90.source and sm90.description
    assert models == mxgate.Accumulator.list_from_json(cli.ok("accumulators", "--json"))


def save(files, a, sa, b, sb, c):
    return ["--a", files.save("a.npy", a), "--a-scales", files.save("as.npy", sa), "--b",
            files.save("b.npy", b), "--b-scales", files.save("bs.npy", sb), "--c",
            files.save("c.npy", c)]


def check_both(cli, files, a, sa, b, sb, c, mode, accumulator):
    """The Python verdict, after asserting it equals the CLI's (exit code and text)."""
    args = save(files, a, sa, b, sb, c)
    code, out, err = cli("check-gemm", "--scheme", "block", *args, "--mode", mode,
                         "--accumulator", accumulator)
    v = mxgate.check_gemm(a, sa, b, sb, c, scheme="block", mode=mode, accumulator=accumulator)
    assert code == (0 if v.passed else 1), err
    assert v.text == out, (mode, accumulator)
    return v


def h200_probe_operands():
    """docs/nvidia.md §4.1's "64 x 2^-2 at k = 1..64" probe as a 1 x 1 x 128 block GEMM, scales
    1: A = [256, 0.25 x 64, 0...], B = [256, 1 x 64, 0...]. Exact: 2^16 + 16 = 65552; the H200
    returned 65536 (every small product aligned to 2^16, 14 bits kept, truncated: lost)."""
    x = np.zeros((1, 128), np.float32)
    w = np.zeros((1, 128), np.float32)
    x[0, 0], w[0, 0] = 256.0, 256.0
    x[0, 1:65], w[0, 1:65] = 0.25, 1.0
    a = mxgate.encode(x, "e4m3fn", "ocp_mx")
    b = mxgate.encode(w, "e4m3fn", "ocp_mx")
    ones = np.ones((1, 1), np.float32)
    return a, ones, b, ones.copy()


# Guards against check_gemm(accumulator="sm90_fp8_mma") not reaching the Hopper model (the H200's
# correct result rejected as by fp32_rn) or accepting anything (a result 2^3 further off, more
# than the model's truncation can lose, must fail), and against the exact-mode note missing.
def test_h200_result_passes_sm90_and_fails_fp32_rn(cli, files):
    a, sa, b, sb = h200_probe_operands()
    assert mxgate.gemm(a, sa, b, sb, scheme="block")[0, 0] == 65552.0
    h200 = np.array([[65536.0]], np.float32)
    v = check_both(cli, files, a, sa, b, sb, h200, "bound", "sm90_fp8_mma")
    assert v.passed, str(v)
    assert "bound mode (accumulator sm90_fp8_mma)" in v.text
    v = check_both(cli, files, a, sa, b, sb, h200, "bound", "fp32_rn")
    assert not v.passed and v.first.coords == (0, 0), str(v)
    # The model can lose at most kappa Q = (65 products + 3 running partials) * 2^3 = 544 here
    # (docs/accumulators.md §5); 1040 below the exact sum is outside.
    wrong = np.array([[65536.0 - 1024.0]], np.float32)
    v = check_both(cli, files, a, sa, b, sb, wrong, "bound", "sm90_fp8_mma")
    assert not v.passed and v.worst.coords == (0, 0) and v.worst.excess > 0, str(v)
    v = check_both(cli, files, a, sa, b, sb, h200, "exact", "sm90_fp8_mma")
    assert not v.passed and v.first.coords == (0, 0)
    assert "operands exact in accumulator sm90_fp8_mma: no (" in v.text, v.text


# Guards against the named model, its overrides or the exact-mode note differing between Python
# and the CLI on general block FP8 data (K with a tail chunk), for a correct and a wrong C.
@pytest.mark.parametrize(
    "accumulator",
    ["sm90_fp8_mma", "sm90_fp8_mma:precision_bits=12,group_size=16", "fp32_rn:block_k=32"])
def test_check_gemm_named_accumulator_equals_cli(cli, files, accumulator):
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((6, 200)).astype(np.float32)
    w = rng.standard_normal((20, 200)).astype(np.float32)
    a, sa = mxgate.quantize_block(x, "e4m3fn", "vllm_group_quant")
    b, sb = mxgate.quantize_block(w, "e4m3fn", "vllm_group_quant", scheme="w128x128")
    exact = mxgate.gemm(a, sa, b, sb, scheme="block")
    wrong = exact.copy()
    wrong[2, 5] += 4 * np.abs(exact).max()  # far beyond any of these bounds
    for c, passes in ((exact, True), (wrong, False)):
        for mode in ("exact", "bound"):
            v = check_both(cli, files, a, sa, b, sb, c, mode, accumulator)
            assert v.passed == passes, (mode, str(v))
            assert ("operands exact in accumulator " + accumulator) in v.text or mode == "bound"
            if not passes:
                assert v.first.coords == (2, 5), str(v)
    assert same_bits(files.load("c.npy"), wrong)
