"""`mxgate plan --impl py:MODULE:OBJECT`: the user's decisions (select and the declared load
transforms) beside the decision model's for each layer config (docs/layers.md §6). The
comparison is layer.decisions' (properties.py `model_plan`), one row per config."""

import json
from typing import Any, Dict, List

from ..errors import InputError
from .properties import VLLM_NAMES, _Stop, _user, model_plan
from .protocol import LayerAdapter, config_from_words, parse_words


def side_by_side(adapter: LayerAdapter, text: str) -> Dict[str, Any]:
    """One config's row: yours (kernel, its model name, load) and the model's, and whether they
    agree (on the kernel, and on the load transforms where both declare them)."""
    words = parse_words(text)
    config = config_from_words(words)
    if words:
        raise InputError(f"plan: unknown config key '{sorted(words)[0]}'", verb="plan")
    if config.scheme not in ("mxfp8", "fp8_block"):
        raise InputError(f"plan: the decision model has no {config.scheme} linear kernels "
                         "(mxfp8, fp8_block)", verb="plan")
    row: Dict[str, Any] = dict(config=config.text())
    try:
        mine = _user("select", adapter.select, config)
        declared = None if mine is None else _user("transforms", adapter.transforms, config)
    except _Stop as s:  # the user's code declined or raised: shown, not hidden
        row.update(yours=None, error=s.outcome.message)
        mine, declared = None, None
    names = {**VLLM_NAMES, **(adapter.decision_names or {})}
    ours = None if mine is None else names.get(str(mine), str(mine))
    model = model_plan(config)
    row.setdefault("yours", None if mine is None else str(mine))
    row.update(yours_as=ours, yours_load=None if declared is None else list(declared),
               model=model[0] if model else None,
               model_load=list(model[1]) if model else None)
    same = ours == row["model"] and "error" not in row
    if same and declared is not None and model is not None:
        same = tuple(declared) == model[1]
    row["same"] = same
    return row


def main(adapter: LayerAdapter, configs: List[str], labels: List[str], as_json: bool) -> int:
    rows = [side_by_side(adapter, t) for t in configs]
    for r, label in zip(rows, labels):
        r["label"] = label
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        yours = str(r["yours"]) + (f" ({r['yours_as']})" if r["yours_as"] not in
                                   (None, r["yours"]) else "")
        load = "" if r["yours_load"] is None else f" load={r['yours_load']}"
        model_load = "" if r["model_load"] is None else f" load={r['model_load']}"
        head = f"{r['label']}: " if "label" in r else ""
        print(f"{head}{r['config']}\n    yours: {yours}{load}"
              f"{'  [' + r['error'] + ']' if 'error' in r else ''}\n"
              f"    model: {r['model']}{model_load}\n"
              f"    {'same' if r['same'] else 'DIFFERENT'}")
    differ = sum(not r["same"] for r in rows)
    print(f"{len(rows)} layer(s), {differ} with different decisions")
    return 0
