// The decision model's tables of named cases (docs/dispatch_model.md §3-§6): each row's expected
// outcome comes from a rule of docs/dispatch_model.md (cited in the row's name), never from
// dispatch/ or from the model. tests/test_decision_model.cpp asserts every row; `mxgate gate`
// replays them (check decisions.tables) against the model and, through properties/, against
// dispatch/, so a regression only these rows see still fails the main job.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/decision_model.h"

namespace mxgate::model::tables {

struct SelectRow {
  const char* what;  // the rule and the production layer, if any
  Platform platform;
  LayerSpec layer;
  Environment env;
  std::optional<LinearKernel> want;
  Branch branch;  // a branch the selection must take
};

struct PlanRow {
  const char* what;
  Platform platform;
  LayerSpec layer;
  Environment env;
  LinearKernel linear_kernel;
  std::vector<LoadAction> load;
  ApplyPath apply;
};

// One step of a lifecycle and what it must do.
struct Step {
  enum Kind { kProcess, kModelShuffle, kApply } kind;
  ScaleOrder fused = ScaleOrder::kNone;     // kApply: the pre-quantized input (kNone: plain)
  std::vector<LoadAction> actions = {};     // kProcess: the actions
  bool shuffles = false;                    // kModelShuffle
  bool refused = false;                     // kApply
  ApplyPath path = ApplyPath::kBf16Gemm;    // kApply
  bool per_step_upcast = false;             // kApply
  ScaleOrder declared = ScaleOrder::kNone;  // the order declared after the step
};

struct LifecycleRow {
  const char* what;
  LinearKernel linear_kernel;
  LayerSpec layer;
  std::vector<Step> steps;
};

struct NegotiationRow {
  const char* what;
  std::vector<ScaleOrder> consumers;
  std::optional<ScaleOrder> want;
  Branch branch;
};

std::span<const SelectRow> select_rows();
std::span<const PlanRow> plan_rows();
std::span<const LifecycleRow> lifecycle_rows();
std::span<const NegotiationRow> negotiation_rows();

// A row against the model: nullopt, or what differs ("§3.3 gfx942 falls through: picked X,
// want Y").
std::optional<std::string> check(const SelectRow& r);
std::optional<std::string> check(const PlanRow& r);
std::optional<std::string> check(const LifecycleRow& r);
std::optional<std::string> check(const NegotiationRow& r);

// Every row of every table against the model; `rows` receives the number of rows replayed.
std::vector<std::string> replay_model(std::size_t* rows = nullptr);

}  // namespace mxgate::model::tables
