"""The production GEMM shape catalog (`mxgate shapes`, corpus/shapes/production_shapes.tsv): the
per-rank N x K of the linear layers of the catalogued models under tensor / expert parallelism,
read from the library (its `shapes` verb, which carries the catalog compiled in).
docs/python.md §16."""

import json
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _native


@dataclass(frozen=True)
class Shape:
    """One catalogued layer at one TP size: Y[M, N] = X[M, K] W[N, K]^T per rank. parallel:
    column, row or replicated; quant: the checkpoint's format (FP8-B128, MXFP4, ...); mode: TP or
    EP; n_parts: the parts of a merged layer (() if none); bmm_batch: local BMM groups (None if
    not a BMM); flagged, flags: whether it has alignment hazards and which (K%128!=0, N%128!=0, ...); line: its line in the
    catalog."""

    model: str
    layer: str
    parallel: str
    tp: int
    n: int
    k: int
    quant: str
    mode: str
    n_parts: Tuple[int, ...]
    bmm_batch: Optional[int]
    flagged: bool
    flags: Tuple[str, ...]
    line: int


def shapes(model: Optional[str] = None, tp: Optional[int] = None, flagged: bool = False,
           catalog: Optional[str] = None) -> Tuple[Shape, ...]:
    """The catalog's rows, in its order, filtered as `mxgate shapes` filters them: model a
    substring of the model name (InputError when it matches none), tp one TP size, flagged only
    rows with an alignment hazard; catalog another catalog file."""
    options = []
    if model is not None:
        options.append(("model", model))
    if tp is not None:
        options.append(("tp", str(tp)))
    if catalog is not None:
        options.append(("catalog", str(catalog)))
    if flagged:
        options.append(("flagged", None))
    _, text, _ = _native.run("shapes", options)
    return tuple(
        Shape(model=s["model"], layer=s["layer"], parallel=s["parallel"], tp=s["tp"], n=s["n"],
              k=s["k"], quant=s["quant"], mode=s["mode"], n_parts=tuple(s["n_parts"]),
              bmm_batch=s["bmm_batch"], flagged=s["flagged"], flags=tuple(s["flags"]), line=s["line"])
        for s in json.loads(text)["shapes"])
