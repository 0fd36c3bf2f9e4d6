// Shared by the property verbs (property, zoo, repro) and the gate: the faults a run plants,
// a failure's one-line location (properties/run_report.h renders it), and the mismatch heatmap of
// a failing GEMM output.
#pragma once

#include <optional>
#include <string>

#include "dispatch/faults.h"
#include "properties/property.h"
#include "properties/run_report.h"

namespace mxgate::cli {

// `--faults LIST` together with MXGATE_FAULTS (either may be empty).
dispatch::Faults faults_option(const std::optional<std::string>& list);
std::string describe(const dispatch::Faults& f);

using properties::located;

// Writes PREFIX.svg and PREFIX.png when the failure carries a whole GEMM output; returns the
// SVG path, or nullopt when there is nothing to draw.
std::optional<std::string> write_failure_heatmap(const properties::Failure& f,
                                                 const std::string& title,
                                                 const std::string& prefix);

}  // namespace mxgate::cli
