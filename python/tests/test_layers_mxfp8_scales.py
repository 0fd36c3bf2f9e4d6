"""The layer generator and the MXFP8 scheme's weight scales (a mend: an adapter was blamed for the reference's refusal): an MXFP8 layer's
1x32 scales are e8m0 (OCP MX), so the generator never draws fp32 ones, a case that names them is
an InputError before any adapter runs, and an adapter that accepts every config is never blamed
for a refusal of mxgate's own. Not covered: fp8_block's fp32 scales (test_layers.py)."""

import numpy as np
import pytest

import mxgate
from mxgate import layers
from mxgate.adapters import linear_example as ex
from mxgate.layers import data as D


# Guards against the generator drawing an MXFP8 layer with fp32 scales (the reference has none:
# "--b-scales: expected uint8" blamed on the adapter); fp32 must still be drawn for fp8_block,
# so the count below can fail both ways.
def test_generator_draws_mxfp8_with_e8m0_only():
    rng = np.random.default_rng(11)
    rows = D.catalog_rows(mxgate.shapes())
    drawn = [D.draw(rng, rows).config for _ in range(2000)]
    mx = [c.weight_scale for c in drawn if c.scheme == "mxfp8"]
    block = [c.weight_scale for c in drawn if c.scheme == "fp8_block"]
    assert len(mx) > 500 and set(mx) == {"e8m0"}, sorted(set(mx))
    assert "fp32" in block


# Guards against an fp32-scaled MXFP8 case reaching an adapter, by object or by replayed text:
# an InputError naming the scheme and the scales.
def test_mxfp8_fp32_case_is_input_error():
    config = layers.LayerConfig(scheme="mxfp8", n=1, k=32, weight_scale="fp32")
    with pytest.raises(mxgate.InputError, match="mxfp8 layer's weight scales are e8m0, not fp32"):
        D.Case(config)
    with pytest.raises(mxgate.InputError, match="weight scales are e8m0, not fp32"):
        mxgate.check("layer.end_to_end", ex.LinearExample(),
                     case="scheme=mxfp8 n=1 k=32 weight_scale=fp32 m=1 seed=0")


class Offered(ex.LinearExample):
    """The example chain, recording every config the properties offer its select."""

    def __init__(self):
        super().__init__()
        self.offered = []

    def select(self, config):
        self.offered.append(config)
        return super().select(config)


# Guards against mxgate's own refusal surfacing as the adapter's failure: over 200 cases the
# adapter is offered MXFP8 layers, none with fp32 scales, and the run passes.
def test_adapter_never_offered_mxfp8_fp32():
    impl = Offered()
    r = mxgate.check("layer.end_to_end", impl, cases=200, seed=5)
    mx = [c for c in impl.offered if c.scheme == "mxfp8"]
    assert len(mx) > 20 and all(c.weight_scale == "e8m0" for c in mx)
    assert r.passed, str(r)
