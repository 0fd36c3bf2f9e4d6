"""The MoE layer protocol (mxgate.moe, docs/moe.md): the reference's roundings and intervals on
hand-computed cases; the faithful fused-MoE twin passes every MoE property; each faulty twin
(M1-M10, docs/bug_classes.md §7) is caught by its property with a minimal shrunk case; the
generator reaches every routing regime and token bucket; bad configs, cases, declarations and
adapter outputs are InputErrors or error verdicts naming the problem. Not covered here: torch
adapters (the H200's part), grouped GEMM kernels (the C++ suite)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import mxgate
from mxgate import moe
from mxgate.adapters import moe_example as ex
from mxgate.adapters import moe_example_faulty as bad
from mxgate.moe import data as D
from mxgate.moe import reference as R

from support import cli_path


# Guards against a rounding helper that is not round-to-nearest-even on the significand: each
# expected value is worked out beside it.
@pytest.mark.parametrize("v, want", [
    (1.0625, 1.0),           # halfway between 1.0 (mantissa 000) and 1.125 (001): the even one
    (1.1875, 1.25),          # halfway between 1.125 (001) and 1.25 (010): 1.25
    (500.0, 448.0),          # above E4M3FN's max: clamped (saturated) to 448
    (2.0**-10, 0.0),         # half the smallest subnormal 2^-9: ties to the even 0
    (3 * 2.0**-10, 2.0**-8),  # 1.5 quanta of 2^-9: ties to 2 quanta
    (-0.3, -0.3125),         # 0.3 = 1.2 2^-2: quantum 2^-5, 9.6 quanta -> 10 -> 0.3125
])
def test_e4m3_rounding(v, want):
    assert R.e4m3(np.array([v]))[0] == want


@pytest.mark.parametrize("v, want", [
    (1 + 2.0**-8, 1.0),               # halfway to 1 + 2^-7 (odd): the even 1.0
    (1 + 3 * 2.0**-8, 1 + 2.0**-6),   # halfway between 1 + 2^-7 and 1 + 2^-6: the even one
    (293.99975795, 294.0),            # quantum 2 above 256: 293.9998 -> 294
])
def test_bf16_rounding(v, want):
    assert R.bf16(np.array([v]))[0] == want


# Guards against an exactness test on the wrong bit: lsb is the largest power of two dividing
# every element (7 2^-4 = 0.4375 -> 2^-4; 1.5 2^-3 = 0.1875 -> 2^-4).
def test_lsb_from_the_bits():
    assert R.lsb(np.array([0.4375, 3.0, 0.5])) == 2.0**-4
    assert R.lsb(np.array([0.1875])) == 2.0**-4
    assert R.lsb(np.zeros(3)) == 1.0


def _tiny(activation="silu", rsf=1.0):
    """bf16, H = I = E = top_k = 1: x = 7, gate weight 2, up weight 3, w2 weight 1, weight 1."""
    c = moe.MoEConfig(scheme="bf16", hidden=1, inter=1, experts=1, top_k=1,
                      activation=activation, routed_scaling=rsf, weight_scale="none")
    bits = lambda v: (np.array(v, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    w13, w2 = bits([[[2.0], [3.0]]]), bits([[[1.0]]])
    x = np.array([[7.0]], np.float32)
    return c, w13, w2, x, np.zeros((1, 1), np.int32), np.ones((1, 1), np.float32)


# Guards against a reference that is not SiLU-and-mul of the gate (first half) and the up
# (second half): h = (14, 21), silu(14) 21 = 14 / (1 + e^-14) 21 = 293.99975795..., rounded to
# bf16 294 (quantum 2); w2 1, weight 1: y = 294 +- the fp32 error of the one-product w2 sum
# (gamma(1) 294) and of the weighting and the top-k sum (gamma(top_k + 2) = gamma(3) 294):
# 4 2^-24 294 = 7.0e-5 each side; routed_scaling 2.5 gives 735 +- 2.5 times that.
def test_reference_hand_case():
    c, w13, w2, x, ids, w = _tiny()
    e = R.expected(c, w13, None, w2, None, np.zeros(1, np.int32), x, ids, w)
    half = (R.gamma(1) + R.gamma(3)) * 294.0
    assert e.lo[0, 0] == pytest.approx(294.0 - half, abs=1e-9)
    assert e.hi[0, 0] == pytest.approx(294.0 + half, abs=1e-9)
    c2, *_ = _tiny(rsf=2.5)
    e2 = R.expected(c2, w13, None, w2, None, np.zeros(1, np.int32), x, ids, w)
    assert e2.lo[0, 0] == pytest.approx(735.0 - 2.5 * half, abs=1e-9)
    assert e2.hi[0, 0] == pytest.approx(735.0 + 2.5 * half, abs=1e-9)
    # gate and up the other way: silu(21) 14 = 293.99999..., also bf16 294: the hand case
    # cannot tell them apart, which is why the properties draw H and I up to hundreds.


# Guards against gpt-oss's clamped SwiGLU computed unclamped: gate 14 is clamped to 7, up 21 to
# 7: 7 sigmoid(1.702 7) (7 + 1) = 55.99964..., bf16 56.
def test_reference_swiglu_clamps():
    c, w13, w2, x, ids, w = _tiny(activation="swiglu_oai")
    e = R.expected(c, w13, None, w2, None, np.zeros(1, np.int32), x, ids, w)
    half = (R.gamma(1) + R.gamma(3)) * 56.0
    assert e.lo[0, 0] == pytest.approx(56.0 - half, abs=1e-9)
    assert e.hi[0, 0] == pytest.approx(56.0 + half, abs=1e-9)


# Guards against a property that fails correct code (a reference or a bound too tight): the
# faithful twin passes all four, running cases (not all unsupported).
@pytest.mark.parametrize("prop", list(moe.PROPERTIES))
def test_example_passes(prop):
    r = mxgate.check(prop, impl=ex.MoEExample(), cases=30, seed=3)
    assert r.passed, str(r)
    assert r.cases >= 3, str(r)


# Each faulty twin: its property, and what its minimal case must show (the fault's trigger).
MINIMAL = {
    "W13HalvesSwapped": ("moe.end_to_end", lambda c, m: c.experts == 1 and c.top_k == 1),
    "InterleaveTwice": ("moe.end_to_end", lambda c, m: c.activation == "swiglu_oai" and
                        c.experts == 1),
    "TopkWeightTwice": ("moe.end_to_end", lambda c, m: c.top_k == 2 and c.experts == 2),
    "TopkWeightDropped": ("moe.end_to_end", lambda c, m: c.top_k == 2 and c.experts == 2),
    "RoutedScalingDropped": ("moe.end_to_end", lambda c, m: c.routed_scaling != 1.0 and
                             c.experts == 1 and m == 1),
    "BucketFirstRowExpert": ("moe.end_to_end", lambda c, m: 3 <= m <= 4 and c.experts == 2),
    "DirtyPaddingRead": ("moe.end_to_end", lambda c, m: c.experts == 1 and m == 1),
    "NextExpertTailScales": ("moe.end_to_end", lambda c, m: c.scheme == "fp8_block" and
                             c.experts == 2 and m == 1),
    "TrailingKBlockDropped": ("moe.end_to_end", lambda c, m: c.inter % 128 != 0 and m == 1),
    "InterleaveInPlace": ("moe.single_transform", lambda c, m: c.activation == "swiglu_oai" and
                          c.experts == 1 and c.scheme != "fp8_block"),
}


def test_every_faulty_twin_has_a_row():
    assert sorted(MINIMAL) == sorted(cls.__name__ for cls in bad.FAULTY)


# Guards against a MoE class going undetected or shrinking to a case that does not show its
# trigger: each is caught and its shrunk case satisfies the class's minimal-case predicate.
@pytest.mark.parametrize("cls", bad.FAULTY, ids=lambda c: c.__name__)
def test_faulty_twin_caught_with_minimal_case(cls):
    prop, minimal = MINIMAL[cls.__name__]
    r = mxgate.check(prop, impl=cls(), cases=100, seed=1)
    assert not r.passed and r.kind == "fail", str(r)
    case = moe.Case.parse(r.counterexample)
    assert minimal(case.config, case.m), r.counterexample
    assert r.location is not None and 0 <= r.location.row < case.m


# Guards against detection by luck: each class is found within 100 cases on 5 other seeds.
@pytest.mark.parametrize("cls", bad.FAULTY, ids=lambda c: c.__name__)
def test_faulty_twin_caught_on_five_seeds(cls):
    prop, _ = MINIMAL[cls.__name__]
    for seed in range(11, 16):
        r = mxgate.check(prop, impl=cls(), cases=100, seed=seed, shrink=False)
        assert not r.passed, f"seed {seed}: {r}"


# Guards against a regime that never happens: every routing regime and every declared bucket
# is drawn, the empty experts are empty and expert 0 of single_token has one token.
def test_generator_reaches_regimes_and_buckets():
    rng = np.random.default_rng(4)
    cases = [D.draw(rng, ex.BUCKETS, i) for i in range(80)]
    assert {c.routing for c in cases} == set(D.ROUTINGS)
    for lo, hi in ex.BUCKETS:
        assert any(lo <= c.m <= hi for c in cases), (lo, hi)
    assert any(c.config.tp > 1 and c.config.inter % 128 for c in cases)
    assert any(c.config.ep > 1 for c in cases)
    c = moe.MoEConfig(experts=8, top_k=2)
    ids, w = D.routing(moe.Case(c, m=6, seed=1, routing="all_to_first"))
    assert set(ids.ravel()) == {0, 1}
    ids, _ = D.routing(moe.Case(c, m=6, seed=1, routing="empty_ends"))
    assert 0 not in ids and 7 not in ids
    ids, _ = D.routing(moe.Case(c, m=6, seed=1, routing="single_token"))
    assert (ids == 0).sum() == 1 and 0 in ids[0]
    assert np.all(w > 0) and np.allclose(w.sum(axis=1), 1, atol=1e-6)


@pytest.mark.parametrize("kwargs, text", [
    (dict(scheme="fp16"), "MoEConfig.scheme: 'fp16' is not one of"),
    (dict(top_k=9, experts=8), "top_k: 9 is above experts 8"),
    (dict(ep=3, experts=8), "ep: 3 does not divide experts 8"),
    (dict(scheme="mxfp8", hidden=48), "needs hidden and inter multiples of 32"),
    (dict(scheme="bf16", weight_scale="e8m0"), "bf16 experts take none scales"),
    (dict(activation="gelu"), "MoEConfig.activation: 'gelu'"),
    (dict(routed_scaling=0), "MoEConfig.routed_scaling: 0 is not a positive number"),
])
# Guards against a bad config reaching the properties: an InputError naming the field.
def test_bad_config_is_input_error(kwargs, text):
    with pytest.raises(mxgate.InputError) as e:
        moe.MoEConfig(**kwargs)
    assert text in str(e.value)


@pytest.mark.parametrize("case, text", [
    ("scheme=bf16 weight_scale=none bogus=1", "unknown key 'bogus'"),
    ("scheme=bf16 weight_scale=none routing=sideways", "routing 'sideways' is not one of"),
    ("scheme=bf16 weight_scale=none m=0", "m 0 is not in 1..4096"),
    ("hidden=two", "MoEConfig.hidden: 'two' is not a positive integer"),
])
# Guards against a malformed replayed case running something else.
def test_bad_case_text_is_input_error(case, text):
    with pytest.raises(mxgate.InputError) as e:
        mxgate.check("moe.end_to_end", ex.MoEExample(), case=case)
    assert text in str(e.value)


class WrongShape(ex.MoEExample):
    def apply(self, layer, x, topk_ids, topk_weights):
        return super().apply(layer, x, topk_ids, topk_weights)[:, :1]


class Raises(ex.MoEExample):
    def apply(self, layer, x, topk_ids, topk_weights):
        raise RuntimeError("kernel exploded")


class Declares(ex.MoEExample):
    intermediate = "fp16"


# Guards against a broken adapter read as a wrong answer (or a crash): error verdicts naming
# what it returned or raised; a bad declaration is an InputError before any case runs.
def test_adapter_errors_are_named():
    r = mxgate.check("moe.end_to_end", WrongShape(), cases=5, seed=1)
    assert r.kind == "error" and "expected float32" in r.failure, str(r)
    r = mxgate.check("moe.end_to_end", Raises(), cases=5, seed=1)
    assert r.kind == "error" and "kernel exploded" in r.failure, str(r)
    with pytest.raises(mxgate.InputError, match="MoEAdapter.intermediate: 'fp16'"):
        mxgate.check("moe.end_to_end", Declares(), cases=5, seed=1)


# Guards against the CLI losing a MoE failure: `mxgate property moe.*` exits 1 with the shrunk
# case and a reproduce line, and 0 for the faithful twin.
def test_cli_runs_moe_properties():
    env = dict(os.environ, MXGATE_PYTHON=sys.executable)
    run = lambda *a: subprocess.run([str(cli_path()), "property", *a], capture_output=True,
                                    text=True, env=env)
    r = run("moe.end_to_end", "--impl", "py:mxgate.adapters.moe_example_faulty:TopkWeightDropped",
            "--cases", "20")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "shrunk case: scheme=" in r.stdout and "reproduce: mxgate.check('moe.end_to_end'" \
        in r.stdout
    r = run("moe.*", "--impl", "py:mxgate.adapters.moe_example:MoEExample", "--cases", "5")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(" ... pass") == len(moe.PROPERTIES) and "moe.single_transform" in r.stdout


# Guards against the docs' MoE table and the faulty twins drifting apart: one row per twin, in
# order, naming its property.
def test_bug_class_table_is_the_faulty_twins():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "bug_classes.md")
    rows = [line.split("|")[1:-1] for line in open(path) if line.startswith("| M")]
    rows = [[c.strip() for c in r] for r in rows]
    assert [r[1] for r in rows] == [cls.__name__ for cls in bad.FAULTY]
    assert [r[0] for r in rows] == [f"M{i}" for i in range(1, len(bad.FAULTY) + 1)]
    for r in rows:
        assert r[3] == MINIMAL[r[1]][0], r


# A long CLI run of the MoE (or layer) properties that says nothing for minutes looks hung: the
# runner's meter prints the property, cases done of those asked and the unsupported count, and
# nothing once the run is complete (the verdict line says it).
def test_progress_line_names_the_property_and_counts(capsys):
    from mxgate.layers.run import Progress

    meter = Progress("moe.end_to_end", "moe_example", 10, period=0.0)
    meter.tick(3, 1)
    meter.tick(10, 1)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("  moe.end_to_end [moe_example]: 3/10 cases (1 unsupported), "), err


# The MoE runner drives its cases through the shared loop with the meter on and still finds the
# faulty twin (M4, top-k weights dropped) on its first case, as without it.
def test_progress_run_still_finds_the_fault(capsys):
    r = moe.check("moe.end_to_end", bad.TopkWeightDropped(), cases=20, seed=1, progress=True)
    assert not r.passed and r.cases <= 3, r
