// The decision model's tables (model/decision_tables.h) replayed on dispatch/: every selection
// and plan row's layer through the glue's static checks (check_static: the registry's pick, every
// linear kernel's support, can_implement and plan on every platform, up to the findings of
// docs/dispatch_model.md §9), every lifecycle row as a dispatch layer on the host backend with
// the glue's step checks (launch counters, layer state), every negotiation row through dispatch's
// negotiation. `mxgate gate` runs this beside the model replay (check decisions.tables), so a
// decision only the unit tests' rows reach still fails the main job (I7).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mxgate::properties {

// The violations, each naming its row and the invariant (I7); `rows` receives the rows replayed.
std::vector<std::string> replay_decision_tables_on_dispatch(std::size_t* rows = nullptr);

}  // namespace mxgate::properties
