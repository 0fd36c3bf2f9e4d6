"""The hypothesis strategies (python/mxgate/strategies.py, docs/python.md §17) with Debian's
python3-hypothesis: the module refuses to import without hypothesis, saying what to install;
every code of every format, edge codes first (the edges of OCP / IEEE formats as their
specifications give them); scale codes with the unit scale first; MX / block / NVFP4 tensors the
library takes, with the scale shapes its quantizers give and E2M1 packed as it reads it;
production shapes from the catalog, which the library gives as the CLI does; property cases
that the correct numpy adapter passes on replay; hypothesis shrinking a planted fault's case to
the smallest shape; the same strategies failing the correct adapter once its write-back is broken
(a fault planted in mxgate's own machinery, common/machinery_fault.h adapter_drops_odd_row), and
passing it again without. Every hypothesis run here is derandomized and keeps no database.
Not covered: strategies for the FP4 properties' cases (no case strategy draws them)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import mxgate
import mxgate.adapter
import mxgate.strategies as mst
from mxgate.adapters.numpy import NumpyAdapter
from mxgate.adapters.numpy_faulty import DropTrailingK

QUIET = settings(database=None, derandomize=True, deadline=None, max_examples=25,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def first(strategy, condition=lambda _: True):
    """The example hypothesis shrinks to (derandomized)."""
    return find(strategy, condition, settings=settings(QUIET, max_examples=300))


# Guards against `import mxgate.strategies` failing obscurely without hypothesis, or `import
# mxgate` needing hypothesis.
def test_import_without_hypothesis_names_what_to_install():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import mxgate\n"
            "try:\n    import mxgate.strategies\nexcept ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("mxgate.strategies needs hypothesis (Debian: apt install "
                               "python3-hypothesis; or pip install hypothesis)"), r.stdout


# The edge codes of each format, as its specification gives them (OCP MX v1.0 for the FP8 /
# FP6 / FP4 element types and E8M0; IEEE 754 binary16; bfloat16): +0, -0, the smallest
# positive and its negative, one, the largest finite and its negative, +Inf, -Inf, NaN.
EDGES = {
    "e4m3fn": [0x00, 0x80, 0x01, 0x81, 0x38, 0x7E, 0xFE, 0x7F, 0xFF],
    "e5m2": [0x00, 0x80, 0x01, 0x81, 0x3C, 0x7B, 0xFB, 0x7C, 0xFC, 0x7D, 0xFD],
    "e2m1": [0x0, 0x8, 0x1, 0x9, 0x2, 0x7, 0xF],
    "e2m3": [0x00, 0x20, 0x01, 0x21, 0x08, 0x1F, 0x3F],
    "e3m2": [0x00, 0x20, 0x01, 0x21, 0x0C, 0x1F, 0x3F],
    "e8m0": [0x00, 0x7F, 0xFE, 0xFF],
    "fp16": [0x0000, 0x8000, 0x0001, 0x8001, 0x3C00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7C01,
             0xFC01],
    "bf16": [0x0000, 0x8000, 0x0001, 0x8001, 0x3F80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7F81,
             0xFF81],
}
WIDTH = {"e2m1": 4, "e2m3": 6, "e3m2": 6, "bf16": 16, "fp16": 16}


# Guards against a format's codes missing or repeating a code, or its edges not coming first
# (hypothesis then neither tries them early nor shrinks toward +0).
@pytest.mark.parametrize("fmt", mxgate.formats())
def test_every_code_edges_first(fmt):
    got = mst.format_codes(fmt)
    assert sorted(got) == list(range(2**WIDTH.get(fmt, 8))), fmt
    if fmt in EDGES:
        assert list(got[:len(EDGES[fmt])]) == EDGES[fmt], [hex(c) for c in got[:12]]
    assert first(mst.codes(fmt)) == got[0]


# Guards against nan=False / inf=False leaving a NaN or an infinity in the draw.
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2", "bf16"])
def test_finite_codes(fmt):
    got = np.array(mst.format_codes(fmt, nan=False, inf=False))
    values = mxgate.decode(got.astype(np.uint16 if fmt == "bf16" else np.uint8), fmt, "ocp_mx")
    assert np.isfinite(values).all()
    assert len(got) == {"e4m3fn": 254, "e5m2": 248, "bf16": 65536 - 256}[fmt]


# Guards against the edge-first order not reaching the draw: hypothesis shrinks "a NaN code"
# to e4m3fn's positive NaN 0x7F, an edge, and "a negative code" to -0.
def test_shrinking_goes_to_the_edges():
    assert first(mst.codes("e4m3fn"), lambda c: np.isnan(mst._table("e4m3fn", None)[1][c])) \
        == 0x7F
    assert first(mst.codes("e4m3fn"), lambda c: np.signbit(mst._table("e4m3fn", None)[1][c])) \
        == 0x80


# Guards against scales shrinking to anything but the unit scale, and UE4M3 holding a code
# with the sign bit set.
def test_scale_codes():
    assert first(mst.scale_codes("e8m0")) == 0x7F
    assert first(mst.scale_codes("ue4m3")) == 0x38
    assert sorted(mst._scale_table("ue4m3", False)) == list(range(0x7F))
    assert sorted(mst._scale_table("e8m0", True)) == list(range(256))
    with pytest.raises(mxgate.InputError, match="is not e8m0 or ue4m3"):
        mst.scale_codes("e4m3")


# Guards against the strategies' block sizes drifting from the library's quantizers.
def test_block_sizes_are_the_library_scale_shapes():
    x = np.zeros((130, 65), np.float32)
    assert mxgate.quantize_mx(x, "e4m3fn", "ocp_mx")[1].shape == (130, -(-65 // mst.MX_BLOCK))
    assert mxgate.quantize_nvfp4(x, "te_nvfp4_ref")[1].shape == (130, -(-65 // mst.NVFP4_BLOCK))
    act = mxgate.quantize_block(x, "e4m3fn", "deepgemm")[1].shape
    weight = mxgate.quantize_block(x, "e4m3fn", "deepgemm", scheme="w128x128")[1].shape
    assert act == (130, -(-65 // mst.DEEPSEEK_BLOCK))
    assert weight == (-(-130 // mst.DEEPSEEK_BLOCK), -(-65 // mst.DEEPSEEK_BLOCK))


def unpack_e2m1(packed, k):
    """The test's own unpacking (docs/fp4.md §5: element 2i in the low nibble)."""
    lo, hi = packed & 0x0F, packed >> 4
    return np.stack([lo, hi], axis=2).reshape(packed.shape[0], -1)[:, :k]


SHAPES = st.tuples(st.integers(1, 4), st.integers(1, 80))


# Guards against MX tensors the library refuses or reads otherwise: dequantize takes them, and
# each element is its code's value times its block's scale (exact wherever fp32 is normal).
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2", "e2m3", "e2m1"])
@QUIET
@given(data=st.data())
def test_mx_tensors_dequantize_as_drawn(fmt, data):
    m, k = data.draw(SHAPES)
    q, s = data.draw(mst.mx_tensors((m, k), fmt))
    assert s.shape == (m, -(-k // 32)) and s.dtype == np.uint8
    codes = unpack_e2m1(q, k) if fmt == "e2m1" else q
    assert q.shape == ((m, -(-k // 2)) if fmt == "e2m1" else (m, k))
    got = mxgate.dequantize(q, s, fmt, "ocp_mx", k=k if fmt == "e2m1" else None)
    value = mxgate.decode(codes, fmt, "ocp_mx").astype(np.float64)
    scale = mxgate.decode(s, "e8m0", "ocp_mx").astype(np.float64)
    want = value * np.repeat(scale, 32, axis=1)[:, :k]
    exact = (np.abs(want) >= 2.0**-126) & (np.abs(want) < 2.0**127) | (want == 0)
    assert np.array_equal(got[exact], want[exact].astype(np.float32)), (q, s)


# Guards against block / NVFP4 tensors of shapes or dtypes the library's GEMMs refuse.
@QUIET
@given(data=st.data())
def test_block_and_nvfp4_tensors_feed_the_gemms(data):
    m, n, k = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 130)), \
        data.draw(st.integers(1, 300))
    a, a_s = data.draw(mst.block_tensors((m, k)))
    b, b_s = data.draw(mst.block_tensors((n, k), scheme="w128x128", ue8m0=True))
    assert np.all(np.log2(b_s) == np.round(np.log2(b_s)))
    assert mxgate.gemm(a, a_s, b, b_s, scheme="block").shape == (m, n)
    a, a_s, a_g = data.draw(mst.nvfp4_tensors((m, k)))
    b, b_s, b_g = data.draw(mst.nvfp4_tensors((n, k)))
    assert a_s.max() < 0x80 and a_g.shape == (1,) and a_g.dtype == np.float32
    c = mxgate.gemm(a, a_s, b, b_s, scheme="nvfp4", k=k, a_global=a_g, b_global=b_g)
    assert c.shape == (m, n)


def cli_shapes(cli, *args):
    """(model, parallel, tp, n, k, quant) of each row `mxgate shapes` prints."""
    rows = []
    for line in cli.ok("shapes", *args).splitlines()[1:-1]:
        parallel, tp, n, k, quant = line[74:].split()[:5]
        rows.append((line[:28].rstrip(), parallel, int(tp), int(n), int(k), quant))
    return rows


# Guards against the library's compiled-in catalog differing from the file the CLI reads, or
# the filters differing from the CLI's.
@pytest.mark.parametrize("args,kwargs", [((), {}), (("--model", "Llama", "--tp", "8"),
                                                    dict(model="Llama", tp=8)),
                                         (("--flagged",), dict(flagged=True))])
def test_shapes_equal_the_cli(cli, args, kwargs):
    got = [(s.model[:28], s.parallel, s.tp, s.n, s.k, s.quant) for s in mxgate.shapes(**kwargs)]
    assert got == cli_shapes(cli, *args)
    assert len(got) > 0


# Guards against a bad filter passing silently: an unknown model is an InputError (a
# ValueError), as the CLI's exit code 2.
def test_shapes_unknown_model(cli):
    with pytest.raises(ValueError, match="--model 'nope' matches no model in") as e:
        mxgate.shapes(model="nope")
    assert isinstance(e.value, mxgate.InputError) and e.value.option == "--model"
    assert "--model 'nope' matches no model in" in cli.error("shapes", "--model", "nope")


# Guards against production shapes outside the catalog, or not shrinking to its smallest layer.
@QUIET
@given(shape=mst.production_shapes("DeepSeek-V3", 8, quant="FP8-B128"))
def test_production_shapes_are_catalogued(shape):
    m, n, k = shape
    rows = {(s.n, s.k) for s in mxgate.shapes(model="DeepSeek-V3", tp=8)
            if s.quant.startswith("FP8-B128")}
    assert (n, k) in rows and 1 <= m <= 16


def test_production_shapes_shrink_to_the_smallest():
    rows = {(s.n, s.k) for s in mxgate.shapes(model="Llama-3.1-405B", tp=16)}
    smallest = min(rows, key=lambda t: (t[0] * t[1], t))
    assert first(mst.production_shapes("Llama-3.1-405B", 16)) == (1, *smallest)
    with pytest.raises(mxgate.InputError, match="no catalogued shape"):
        mst.production_shapes("Llama", 8, quant="MXFP4")


# Guards against drawn cases outside the op's contract or with fields the property does not
# read: every case of every supported property replays on the correct adapter as one passing
# case (a malformed field would be an InputError, a case outside the contract a failure).
@pytest.mark.parametrize("prop", list(mst.CASE_PROPERTIES))
@settings(QUIET, max_examples=15)
@given(data=st.data())
def test_cases_replay_and_pass_on_the_correct_adapter(prop, data):
    case = data.draw(mst.cases(prop, NumpyAdapter(), max_dim=160))
    r = mxgate.check(prop, NumpyAdapter(), case=case)
    assert r.passed and r.cases == 1, r


# A family name stands for its default contract; a spec for the adapter it names.
def test_cases_of_a_family_and_of_a_spec():
    case = first(mst.cases("gemm.exact", "gemm_mx"))
    assert case == "op=gemm_mx m=1 n=1 k=1 layout=row_major out=fp32 seed=0"
    case = first(mst.cases("upcast_e8m0.bit_exact", "py:mxgate.adapters.numpy:NumpyAdapter"))
    assert case == "op=upcast_e8m0 count=1 scales=extreme seed=0"
    with pytest.raises(mxgate.InputError, match="draws no case of 'cast.bit_exact'"):
        mst.cases("cast.bit_exact", NumpyAdapter())
    with pytest.raises(mxgate.InputError, match="takes ops of upcast_e8m0; impl has none"):
        mst.cases("upcast_e8m0.bit_exact", "gemm_mx")


# Guards against hypothesis not shrinking a real failure: numpy_faulty's DropTrailingK (a
# partial trailing K block dropped) is found and shrunk to M = N = 1 and K of at most one MX
# block (docs/python.md §11.2 names k = 32 for the C++ generator, which draws K from multiples of
# 32 and block neighbours; K = 1 is inside this op's contract), with a located element.
def test_hypothesis_shrinks_a_planted_fault():
    fault = DropTrailingK()
    case = first(mst.cases("gemm.exact", fault),
                 lambda c: not mxgate.check("gemm.exact", fault, case=c).passed)
    fields = dict(kv.split("=") for kv in case.split())
    assert fields["m"] == "1" and fields["n"] == "1" and int(fields["k"]) <= 32, case
    r = mxgate.check("gemm.exact", fault, case=case)
    assert not r.passed and r.location.coords == (0, 0), r
    assert mxgate.check("gemm.exact", NumpyAdapter(), case=case).passed


# The same inside a user's own @given test: hypothesis reports the shrunk case it failed on.
def test_given_test_fails_on_the_shrunk_case():
    fault = DropTrailingK()

    @settings(QUIET, max_examples=50)
    @given(case=mst.cases("gemm.exact", fault))
    def user_test(case):
        r = mxgate.check("gemm.exact", fault, case=case)
        assert r.passed, r

    with pytest.raises(AssertionError) as e:
        user_test()
    text = str(e.value)  # the CheckResult's repr: verdict, element and the shrunk case
    assert text.startswith("CheckResult(gemm.exact[numpy_faulty_drop_trailing_k] FAIL at (0, 0)")
    assert "op=gemm_mx m=1 n=1 k=" in text


# Guards against strategies that cannot see a broken write-back path (only a broken adapter):
# with mxgate's own write-back dropping the last row of an odd row count (the plant the gate's
# self-test catches, here switched on in-process), the correct numpy adapter's gemm.exact fails,
# and hypothesis shrinks it to the smallest such shape: M = 3 (the smallest odd M > 1), N = K = 1,
# its row 2 never written (the NaN poison), so the first differing element is (2, 0). The same
# case passes with the write-back intact (the faithful twin).
def test_strategies_catch_a_planted_write_back(monkeypatch):
    adapter = NumpyAdapter()
    monkeypatch.setattr(mxgate.adapter, "_DROPS_ODD_ROW", True)
    case = first(mst.cases("gemm.exact", adapter, max_dim=160),
                 lambda c: not mxgate.check("gemm.exact", adapter, case=c).passed)
    fields = dict(kv.split("=") for kv in case.split())
    assert (fields["m"], fields["n"], fields["k"]) == ("3", "1", "1"), case
    r = mxgate.check("gemm.exact", adapter, case=case)
    assert not r.passed and r.location.coords == (2, 0), r
    monkeypatch.setattr(mxgate.adapter, "_DROPS_ODD_ROW", False)
    assert mxgate.check("gemm.exact", adapter, case=case).passed
