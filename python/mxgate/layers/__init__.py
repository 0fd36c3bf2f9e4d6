"""Dispatch under test: the user's own loader and dispatch code through a layer protocol
(docs/layers.md). Subclass LayerAdapter around your linear layer (select / load / apply) and
run mxgate.check("layer.end_to_end", impl=MyLinear()) or `mxgate property layer.* --impl
py:MODULE:OBJECT`."""

from .data import Case, preshuffle
from .properties import OPT_IN, PROPERTIES, VLLM_NAMES, model_plan
from .protocol import (CONSUMERS, ORDERS, PLATFORMS, SCHEMES, TRANSFORMS, Layer, LayerAdapter,
                       LayerConfig, QuantizedActivation)
from .run import check, is_layer_impl

__all__ = [
    "CONSUMERS",
    "Case",
    "Layer",
    "LayerAdapter",
    "LayerConfig",
    "OPT_IN",
    "ORDERS",
    "PLATFORMS",
    "PROPERTIES",
    "QuantizedActivation",
    "SCHEMES",
    "TRANSFORMS",
    "VLLM_NAMES",
    "check",
    "is_layer_impl",
    "model_plan",
    "preshuffle",
]
