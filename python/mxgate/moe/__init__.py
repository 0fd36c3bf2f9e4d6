"""Mixture-of-experts layers under test (docs/moe.md): subclass MoEAdapter around your fused-MoE
code (select / load / apply with the router's top-k ids and weights) and run
mxgate.check("moe.end_to_end", impl=MyMoE()) or `mxgate property moe.* --impl py:MODULE:OBJECT`."""

from .config import ACTIVATIONS, SCHEMES, MoEAdapter, MoEConfig, MoELayer
from .data import MODELS, ROUTINGS, Case
from .properties import PROPERTIES
from .run import check, is_moe_impl

__all__ = ["ACTIVATIONS", "Case", "MODELS", "MoEAdapter", "MoEConfig", "MoELayer", "PROPERTIES",
           "ROUTINGS", "SCHEMES", "check", "is_moe_impl"]
