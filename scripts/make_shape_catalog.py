#!/usr/bin/env python3
"""Regenerates corpus/shapes/production_shapes.tsv from the computed shape list (JSON).

Developer tool, run by hand when the model list changes; nothing at build or test time runs it or
reads its input. The input is a JSON list of per-rank layers (model, layer, parallel, tp, n, k,
quant, mode, n_parts, bmm_batch, flag, flags) computed from each model's config.json and vLLM's
parallel class per layer kind (docs/architecture.md §2.8).
Usage: scripts/make_shape_catalog.py SHAPES.json > corpus/shapes/production_shapes.tsv
The routed-expert facts of its MoE models (experts, top-k, moe_intermediate_size) are not in the
JSON: corpus/shapes/moe_models.tsv, written by hand with each row's config.json keys and source,
must agree with the moe_w13 / moe_w2 rows written here (tests/test_moe_models.cpp checks it).
"""
import json
import sys

COLUMNS = ["model", "layer", "parallel", "tp", "n", "k", "quant", "mode", "n_parts",
           "bmm_batch", "flagged", "flags"]


def clean(text):
    return str(text).replace("\t", " ").replace("\n", " ")


def main(path):
    rows = json.load(open(path))
    out = sys.stdout
    out.write("# mxgate production GEMM shape catalog: Y[M,N] = X[M,K] W[N,K]^T per rank.\n")
    out.write("# Computed from each model's config.json and vLLM's parallel class per layer (docs/architecture.md §2.8), 16 models, TP 1-16,\n")
    out.write("# by scripts/make_shape_catalog.py. n_parts: merged-layer parts (comma list, - if none);\n")
    out.write("# bmm_batch: local BMM groups (- if not a BMM); flags: ';'-separated alignment hazards.\n")
    out.write("\t".join(COLUMNS) + "\n")
    for r in rows:
        parts = ",".join(str(p) for p in (r.get("n_parts") or [])) or "-"
        bmm = str(r["bmm_batch"]) if r.get("bmm_batch") else "-"
        flags = ";".join(r.get("flags") or []) or "-"
        fields = [r["model"], r["layer"], r["parallel"], r["tp"], r["n"], r["k"], r["quant"],
                  r["mode"], parts, bmm, 1 if r.get("flag") else 0, flags]
        out.write("\t".join(clean(f) for f in fields) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
