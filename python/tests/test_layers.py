"""The layer protocol (mxgate.layers, docs/layers.md): the example linear-kernel chain passes
every layer property; each faulty variant (Z1-Z7) is caught by its property with a minimal
shrunk config whose reproduce line replays it; the reference the properties use is mxgate's;
bad configs, cases and adapters are InputErrors naming the problem."""

import functools
import importlib.util
import statistics

import numpy as np
import pytest

import mxgate
from mxgate import layers
from mxgate.adapters import linear_example as ex
from mxgate.adapters import linear_example_faulty as bad
from mxgate.layers import data as D

CASES = 25


def words(case_text):
    return dict(w.split("=", 1) for w in case_text.split())


# Guards against a property that fails correct code (a reference or generator bug): the example
# chain, written from vLLM's rules, passes all seven, each running cases (not all unsupported).
@pytest.mark.parametrize("prop", list(layers.PROPERTIES))
def test_correct_example_passes(prop):
    r = mxgate.check(prop, impl=ex.LinearExample(), cases=CASES, seed=3)
    assert r.passed, str(r)
    assert r.cases >= 5, str(r)


# Guards against the kernel's own preshuffle branch going unchecked: with the model-side shuffle
# off, the linear kernel shuffles at load and every property still passes.
@pytest.mark.parametrize("prop", ["layer.end_to_end", "layer.single_transform",
                                  "layer.direct_reads", "layer.negotiation"])
def test_example_without_model_shuffle_passes(prop):
    r = mxgate.check(prop, impl=ex.LinearExample(model_preshuffles=False), cases=CASES, seed=4)
    assert r.passed, str(r)


# Each class's property and the bound its shrunk config must meet (docs/layers.md §5).
EXPECTED = {
    "Z1": ("layer.load_equivalence", dict(scheme="mxfp8", n="1", m="1", tp="1"),
           lambda w: int(w["k"]) % 128 != 0 and int(w["k"]) <= 160),
    "Z2": ("layer.end_to_end", dict(scheme="fp8_block", m="2", tp="1"),
           lambda w: int(w["n"]) <= 128 and 128 < int(w["k"]) <= 256
           and w["act_scale_order"] in ("row_major", "col_major")),
    "Z3": ("layer.single_transform", dict(scheme="fp8_block", m="1", tp="1", is_bmm="0",
                                          skip_weight_relayout="0"),
           lambda w: int(w["n"]) <= 128 and int(w["k"]) <= 64),
    "Z4": ("layer.direct_reads", dict(scheme="fp8_block", m="1", tp="1"),
           lambda w: int(w["n"]) <= 128 and int(w["k"]) <= 64
           and (w["is_bmm"], w["skip_weight_relayout"]) in (("1", "0"), ("0", "1"))),
    "Z5": ("layer.end_to_end", dict(scheme="fp8_block", weight_scale="e8m0", m="1", tp="1"),
           lambda w: int(w["n"]) <= 128 and int(w["k"]) <= 128 and w["data"] != "exact"),
    "Z6": ("layer.single_transform", dict(scheme="mxfp8", m="1", tp="1"),
           lambda w: int(w["k"]) % 128 != 0 and int(w["n"]) == 1 and int(w["k"]) <= 160),
    "Z7": ("layer.end_to_end", dict(scheme="fp8_block", weight_scale="e8m0", m="1", tp="1"),
           lambda w: int(w["n"]) <= 128 and int(w["k"]) <= 64
           and "1" in (w["is_bmm"], w["skip_weight_relayout"])),
    # One byte holds two codes: K = 2 is the smallest weight whose nibbles can be exchanged.
    "Z31": ("layer.end_to_end", dict(scheme="mxfp4", n="1", m="1", tp="1"),
            lambda w: int(w["k"]) <= 4),
}


@functools.lru_cache(maxsize=None)
def caught(zid):
    """The run of class zid's property on its faulty variant (shared by the tests below)."""
    return mxgate.check(EXPECTED[zid][0], impl=bad.FAULTY[zid](), cases=200, seed=1)


# Guards against a dispatch bug class slipping through the layer properties, or a shrinker that
# stops early: each planted fault fails its property, shrunk to the class's minimal config.
@pytest.mark.parametrize("zid", sorted(bad.FAULTY))
def test_faulty_variant_caught_with_minimal_config(zid):
    prop, fields, minimal = EXPECTED[zid]
    r = caught(zid)
    assert not r.passed and r.kind == "fail", str(r)
    w = words(r.counterexample)
    assert {k: w[k] for k in fields} == fields, r.counterexample
    assert minimal(w), r.counterexample
    assert r.reproduce.startswith(f"mxgate.check({prop!r}, impl=mxgate.adapters."
                                  "linear_example_faulty."), r.reproduce
    assert r.cli == (f"mxgate property {prop} --impl py:mxgate.adapters.linear_example_faulty:"
                     f"{bad.FAULTY[zid].__name__} --seed 1 --cases 200")


# Guards against a generator that reaches a dispatch class only rarely (the zoo's bar,
# docs/bug_classes.md §1): over seeds 1..20 every faulty variant is found within 200 cases and
# the median of the cases to detection is at most 20 (docs/layers.md §5 gives the figures).
@pytest.mark.parametrize("zid", sorted(bad.FAULTY))
def test_faulty_variant_found_within_twenty_cases_median(zid):
    from mxgate.layers.measure import cases_to_detection

    counts = cases_to_detection(zid)
    assert None not in counts, counts
    assert statistics.median(counts) <= 20, counts


# Guards against a reproduce line that does not replay: evaluated as printed, it fails again
# with the same case, and the same case passes on the correct example (the fault makes the
# difference).
@pytest.mark.parametrize("zid", ["Z1", "Z3", "Z5", "Z7"])
def test_reproduce_line_replays(zid):
    prop = EXPECTED[zid][0]
    r = caught(zid)
    again = eval(r.reproduce, {"mxgate": mxgate})
    assert not again.passed and again.counterexample == r.counterexample, str(again)
    clean = mxgate.check(prop, impl=ex.LinearExample(), case=r.counterexample)
    assert clean.passed and clean.cases == 1, str(clean)


# Guards against Z6 being invisible: its numbers are right (end_to_end passes), only the state
# after load (single_transform) shows the per-step re-materialization.
def test_z6_numbers_right_state_wrong():
    text = caught("Z6").counterexample
    assert mxgate.check("layer.end_to_end", bad.PerStepRematerialize(), case=text).passed


# Guards against a second shuffle hidden by agreeing shapes: the message says how many times.
def test_double_shuffle_named():
    r = caught("Z3")
    assert "preshuffle applied 2 times" in r.failure, r.failure


# Guards against tp_consistency never reaching the catalog's TP sizes: the generator draws
# catalog rows at TP 4 and 8 whose per-rank K is off 128 (the misalignment only sharding makes).
def test_catalog_tp_sizes_reached():
    rows = D.catalog_rows(mxgate.shapes())
    rng = np.random.default_rng(1)
    drawn = [D.draw(rng, rows).config for _ in range(400)]
    assert {4, 8} <= {c.tp for c in drawn}
    assert any(c.tp >= 4 and c.k % 128 and c.parallel == "row" for c in drawn)


# Guards against a reference taken from the code under test: the preshuffle the properties use
# is docs/layouts.md §1's view / permute, equal to the example's closed form, and no involution.
def test_preshuffle_reference_matches_closed_form():
    w = np.random.default_rng(2).integers(0, 256, size=(32, 64)).astype(np.uint8)
    s = layers.preshuffle(w)
    assert np.array_equal(s, ex.shuffle_weight(w))
    assert not np.array_equal(layers.preshuffle(s), s)
    assert np.array_equal(ex.unshuffle_weight(s), w)


# Guards against data that are not exact-mode: the reference quantization of a generated
# activation is lossless for both schemes, so every correct path is exact.
@pytest.mark.parametrize("scheme", ["mxfp8", "fp8_block"])
def test_activation_quantization_is_lossless(scheme):
    case = D.Case(layers.LayerConfig(scheme=scheme, n=4, k=300 if scheme != "mxfp8" else 288),
                  m=3, seed=7)
    x = D.activation(case)
    codes, scales = D.quantize_activation(case.config, x)
    if scheme == "mxfp8":
        back = mxgate.dequantize(codes, scales, "e4m3fn", "ocp_mx")
    else:
        back = mxgate.decode(codes, "e4m3fn", "ocp_mx") * np.repeat(scales, 128, axis=1)[:, :300]
    assert np.array_equal(back, x)


# Guards against decisions checked against nothing: the model's plan (dispatch's with F1 / F2
# applied) refuses fp32 MXFP8 scales and gives the N = 2112 layer the plain block kernel.
def test_model_plan_applies_findings():
    assert layers.model_plan(layers.LayerConfig(scheme="mxfp8", n=16, k=96,
                                                weight_scale="fp32")) is None
    k, load = layers.model_plan(layers.LayerConfig(scheme="fp8_block", n=2112, k=7168,
                                                   weight_scale="fp32", platform="gfx942"))
    assert (k, load) == ("BlockScaledFp8", ())


# Guards against a decisions failure without the side-by-side view.
def test_decisions_show_both_sides():
    class NoGate(ex.LinearExample):
        name = "no_gate"

        def select(self, config):  # takes the preshuffled kernel for any block layer on ROCm
            if config.scheme == "fp8_block" and config.platform != "sm90":
                return "AiterPreshuffledFp8BlockScaledMMKernel"
            return super().select(config)

    r = mxgate.check("layer.decisions", NoGate(), cases=100, seed=1)
    assert not r.passed
    assert "yours" in r.failure and "model" in r.failure and "BlockScaledFp8" in r.failure
    assert r.reproduce.startswith("mxgate.check('layer.decisions', impl=<your adapter>")


# Guards against "layer.*" silently including the opt-in property or dropping one.
def test_layer_star_runs_six_and_decisions_opt_in():
    class Plain(ex.LinearExample):
        claims_vllm_rules = False

    r = mxgate.check("layer.*", Plain(), cases=3, seed=1)
    assert [p.property for p in r.results] == [p for p in layers.PROPERTIES
                                               if p != "layer.decisions"]
    r = mxgate.check("layer.*", ex.LinearExample(), cases=3, seed=1)
    assert len(r.results) == 7 and r.passed, str(r)


@pytest.mark.parametrize("kwargs, text", [
    (dict(scheme="mxfp6"), "LayerConfig.scheme: 'mxfp6' is not one of mxfp8, fp8_block"),
    (dict(scheme="nvfp4"), "LayerConfig.weight_scale: nvfp4 weights take e4m3 scales, not e8m0"),
    (dict(scheme="mxfp8", weight_scale="e4m3"), "mxfp8 weights take e8m0 or fp32 scales"),
    (dict(scheme="mxfp4", k=34 + 1), "LayerConfig.k: 35 is odd; mxfp4 packs two codes a byte"),
    (dict(n=0), "LayerConfig.n: 0 is not a positive integer"),
    (dict(parallel="diagonal"), "LayerConfig.parallel: 'diagonal'"),
    (dict(parallel="replicated", tp=2), "a replicated layer has tp 1"),
    (dict(weight_scale="bf16"), "LayerConfig.weight_scale: 'bf16' is not e8m0, fp32 or e4m3"),
    (dict(act_scale_order="row_major"), "goes with fp8_block, not mxfp8"),
    (dict(consumers=("twin", "nobody")), "LayerConfig.consumers"),
    (dict(is_bmm=1), "LayerConfig.is_bmm: 1 is not a bool"),
])
# Guards against a bad config reaching the properties: each is an InputError naming the field.
def test_bad_config_is_input_error(kwargs, text):
    with pytest.raises(mxgate.InputError, match=None) as e:
        layers.LayerConfig(**kwargs)
    assert text in str(e.value), str(e.value)


@pytest.mark.parametrize("case, text", [
    ("scheme=mxfp8 n=1 k=32 bogus=1", "unknown key 'bogus'"),
    ("scheme=mxfp8 n=one", "LayerConfig.n: 'one' is not a positive integer"),
    ("scheme=mxfp8 m=0", "m 0 is not in 1..4096"),
    ("scheme=mxfp8 data=weird", "data 'weird' is not one of exact, edge0, nan"),
    ("scheme=mxfp8 n=1 n=2", "'n' given twice"),
    ("scheme", "'scheme' is not key=value"),
])
# Guards against a malformed replayed case running something else: an InputError naming it.
def test_bad_case_text_is_input_error(case, text):
    with pytest.raises(mxgate.InputError) as e:
        mxgate.check("layer.end_to_end", ex.LinearExample(), case=case)
    assert text in str(e.value)


# Guards against bad run requests being run: unknown property, an object that is no adapter,
# a case for several properties.
def test_bad_requests_are_input_errors():
    with pytest.raises(mxgate.InputError, match="unknown layer property 'layer.nope'"):
        mxgate.check("layer.nope", ex.LinearExample())
    with pytest.raises(mxgate.AdapterError, match="not an mxgate.layers.LayerAdapter"):
        mxgate.check("layer.end_to_end", object())
    with pytest.raises(mxgate.InputError, match="replays one property"):
        mxgate.check("layer.*", ex.LinearExample(), case="scheme=mxfp8")
    with pytest.raises(mxgate.InputError, match="do not apply to layer properties"):
        mxgate.check("layer.end_to_end", ex.LinearExample(), op="gemm_mx")
    with pytest.raises(mxgate.AdapterError, match="has no attribute 'Nope'"):
        mxgate.check("layer.end_to_end", "py:mxgate.adapters.linear_example:Nope")


# Guards against user errors crashing the run: an exception in apply is an error verdict naming
# it; a wrong output dtype too; Unsupported counts a case as unsupported.
def test_user_exceptions_are_verdicts():
    class Raises(ex.LinearExample):
        def apply(self, layer, x):
            raise RuntimeError("boom")

    class Float64(ex.LinearExample):
        def apply(self, layer, x):
            return super().apply(layer, x).astype(np.float64)

    class Declines(ex.LinearExample):
        def apply(self, layer, x):
            raise mxgate.Unsupported("not today")

    r = mxgate.check("layer.end_to_end", Raises(), cases=20, seed=1)
    assert r.kind == "error" and "RuntimeError: boom" in r.failure
    r = mxgate.check("layer.end_to_end", Float64(), cases=20, seed=1)
    assert r.kind == "error" and "float64" in r.failure
    r = mxgate.check("layer.end_to_end", Declines(), cases=10, seed=1)
    assert r.passed and r.cases == 0 and r.verdict == "unsupported"


# Guards against a spec string and the class giving different runs.
def test_spec_string_runs_the_same():
    a = mxgate.check("layer.load_equivalence", "py:mxgate.adapters.linear_example_faulty:"
                     "NoPerStepFallback", cases=100, seed=1)
    b = mxgate.check("layer.load_equivalence", bad.NoPerStepFallback, cases=100, seed=1)
    assert a.counterexample == b.counterexample and not a.passed


FP4_CASES = [
    "scheme=mxfp4 n=16 k=64 weight_scale=e8m0 platform=gfx950 m=2 seed=3 data=exact",
    "scheme=mxfp4 n=8 k=96 tp=4 parallel=row weight_scale=e8m0 platform=sm90 m=1 seed=4 "
    "data=edge0",
    "scheme=nvfp4 n=16 k=48 weight_scale=e4m3 platform=sm90 is_bmm=1 m=3 seed=5 data=exact",
    "scheme=nvfp4 n=6 k=32 tp=2 parallel=column weight_scale=e4m3 platform=gfx942 m=1 seed=6 "
    "data=nan",
    "scheme=nvfp4 n=4 k=16 tp=2 parallel=row weight_scale=e4m3 platform=host m=1 seed=7 "
    "data=edge0",
]


# Guards against an FP4 layer scheme that the properties cannot check: the example's FP4
# kernels (dequantized at load for MXFP4, per step for NVFP4) pass every property that applies.
@pytest.mark.parametrize("text", FP4_CASES)
def test_example_passes_fp4_layers(text):
    for prop in layers.PROPERTIES:
        r = mxgate.check(prop, ex.LinearExample(), case=text)
        assert r.passed or r.kind == "unsupported", f"{prop}: {r}"
    assert mxgate.check("layer.end_to_end", ex.LinearExample(), case=text).passed


# Guards against the NVFP4 global scale going unchecked: dropping it is caught by end_to_end on
# an NVFP4 layer whose global scale is not 1, with the located element.
def test_nvfp4_global_scale_dropped_is_caught():
    r = mxgate.check("layer.end_to_end", bad.Nvfp4GlobalScaleDropped(), cases=200, seed=1)
    assert not r.passed and r.kind == "fail", str(r)
    w = words(r.counterexample)
    assert w["scheme"] == "nvfp4" and int(w["n"]) == 1 and int(w["k"]) <= 16, r.counterexample
    assert r.location is not None, str(r)


# Guards against the torch variant of the example failing hard on a host without torch: it is
# unavailable with the reason, as every adapter of a library that is absent (its run is the GPU
# host's: scripts/run-layers-torch).
@pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                    reason="torch is installed here: the unavailable path is not this host's")
def test_torch_example_unavailable_without_torch():
    from mxgate.adapters import linear_example_torch as ext

    with pytest.raises(mxgate.Unavailable, match="torch is not installed"):
        mxgate.check("layer.end_to_end", ext.LinearExampleTorchCpu(), cases=1, seed=1)


class _NegNaNDequant(ex.EmulationMxfp8LinearKernel):
    def process_weights_after_loading(self, layer):  # bf16 NaN written as 0xFFFF (torch's CPU)
        super().process_weights_after_loading(layer)
        w = layer.weight
        layer.weight = np.where((w & 0x7FFF) > 0x7F80, np.uint16(0xFFFF), w).astype(np.uint16)


class _OffByOne(_NegNaNDequant):
    def process_weights_after_loading(self, layer):  # and the last element one bf16 ulp off
        super().process_weights_after_loading(layer)
        layer.weight[-1, -1] ^= 1


class OffByOneExample(ex.LinearExample):
    kernels = {key: [_OffByOne if k is ex.EmulationMxfp8LinearKernel else k for k in ks]
               for key, ks in ex.PRIORITY.items()}


class NegNaNExample(ex.LinearExample):
    kernels = {key: [_NegNaNDequant if k is ex.EmulationMxfp8LinearKernel else k for k in ks]
               for key, ks in ex.PRIORITY.items()}


# Guards against a state check that fails a correct dequantization on its NaN payload: a NaN
# block dequantized to bf16 0xFFFF (as torch does on the CPU) is the reference's 0x7FC0 there,
# for the loaded state and for a reader of the weight alike; a wrong finite value still fails.
def test_dequantized_nan_payload_is_not_a_failure():
    text = ("scheme=mxfp8 n=4 k=64 weight_scale=e8m0 platform=sm90 is_bmm=1 m=1 seed=0 "
            "data=nan")
    assert D.checkpoint(D.Case.parse(text)).scales.max() == 0xFF  # the case holds a NaN block
    for prop in ("layer.single_transform", "layer.direct_reads", "layer.end_to_end"):
        r = mxgate.check(prop, NegNaNExample(), case=text)
        assert r.passed, f"{prop}: {r}"
    r = mxgate.check("layer.single_transform", OffByOneExample(), case=text)
    assert not r.passed and r.kind == "fail", str(r)
    assert (r.location.row, r.location.col) == (3, 63), str(r)


class OneUlpOff(ex.LinearExample):
    """Every finite nonzero output one fp32 ulp off: inside a Hopper FP8 tensor core's bound
    (14 bits kept per group: docs/accumulators.md §3), outside an exact comparison."""

    declared = "sm90_fp8_mma"

    def apply(self, layer, x):
        y = np.array(super().apply(layer, x), np.float32)
        flip = np.isfinite(y) & (y != 0)
        y.view(np.uint32)[flip] ^= 1
        return y

    def accumulator(self, config, kernel):
        return self.declared


class OneUlpOffUndeclared(OneUlpOff):
    declared = None


# Guards against a kernel with a declared inexact accumulator failing on its rounding (the
# check is then the model's bound), and against the bound hiding a real error: the same
# outputs with no accumulator declared fail, and a 2^-6 relative error fails the bound too.
def test_declared_accumulator_checks_within_its_bound():
    text = "scheme=fp8_block n=16 k=256 tp=2 parallel=row weight_scale=fp32 platform=gfx942 m=2"
    for prop in ("layer.end_to_end", "layer.load_equivalence", "layer.tp_consistency"):
        assert mxgate.check(prop, OneUlpOff(), case=text).passed, prop
        r = mxgate.check(prop, OneUlpOffUndeclared(), case=text)
        assert not r.passed and "differs from the reference" in r.failure, (prop, str(r))

    class Coarse(OneUlpOff):
        def apply(self, layer, x):
            return (ex.LinearExample.apply(self, layer, x) * np.float32(1 + 2**-6)).astype(
                np.float32)

    r = mxgate.check("layer.end_to_end", Coarse(), case=text)
    assert not r.passed and "outside the sm90_fp8_mma bound" in r.failure, str(r)
    assert r.location is not None, str(r)


# Guards against a user's module that does not import surfacing as a traceback: resolving the
# spec (shared by check, the CLI's property runs and plan) names it as an input error.
def test_spec_that_does_not_import_is_input_error():
    with pytest.raises(mxgate.InputError, match="cannot import no_such_module_here"):
        layers.check("layer.end_to_end", "py:no_such_module_here:X", cases=1)
