// The layer properties (layer.*) of a Python LayerAdapter run in Python: `mxgate property
// layer.* --impl py:MODULE:OBJECT` and `mxgate gate --impl ...` delegate to
// `MXGATE_PYTHON -m mxgate.layers` (docs/layers.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/mxgate/gate_stages.h"

namespace mxgate::cli {

// Whether a property name is a layer property ("layer." or "moe." prefix, "layer.*", "moe.*":
// the MoE layer properties of docs/moe.md run in the same Python module).
bool is_layer_property(const std::string& name);

// Whether SPEC (py:MODULE:OBJECT) names an mxgate.layers.LayerAdapter or mxgate.moe.MoEAdapter.
bool is_layer_spec(const std::string& spec);

// is_layer_spec of each of SPECS, in order, from one interpreter (`python -m mxgate.layers
// is-layer SPEC...`) for all the py: specs; false for any other spec, and for every one when
// the interpreter's answer is not one line per spec (it did not run, or failed).
std::vector<bool> are_layer_specs(const std::vector<std::string>& specs);

// Runs the layer properties NAMES (comma-separated) on SPEC in Python, its verdict lines on
// stdout; returns its exit code (0 pass, 1 a property failed, 2 bad input, 3 unavailable).
int run_layer_properties(const std::string& names, const std::string& spec, uint64_t seed,
                         int cases);

// `mxgate plan --impl SPEC`: SPEC's decisions beside the model's for each config (LayerConfig
// text, docs/layers.md §1), labelled by LABELS (same length, or empty); its exit code.
int run_layer_plan(const std::string& spec, const std::vector<std::string>& configs,
                   const std::vector<std::string>& labels, bool json);

// One gate check per layer adapter: layer.*[SPEC], the Python run's verdict.
void add_layer_checks(std::vector<GateCheck>& checks, const std::vector<std::string>& specs,
                      const GateSettings& s);

}  // namespace mxgate::cli
