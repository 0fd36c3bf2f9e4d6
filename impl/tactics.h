// Which tactics a run checks (docs/plugins.md §3.6): every one of an implementation's tactics, or
// a seeded sample of `limit` of them when it declares more; the selection is printed with its
// seed so a run is reproducible, and `--tactic N` checks one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/op.h"

namespace mxgate::impl {

// The most tactics a run checks unless told otherwise (--max-tactics).
inline constexpr uint32_t kDefaultTacticLimit = 8;

struct TacticSelection {
  uint32_t count = 1;            // the implementation's tactic_count()
  std::vector<uint32_t> chosen;  // increasing
  bool sampled = false;          // count > limit: `chosen` is a seeded sample
  uint64_t seed = 0;             // the sample's seed
  // "" for one tactic; "tactics: 3 of 3" or "tactics: 8 of 20, a sample (seed 7): 0,3,..."
  std::string describe() const;
};

// Every tactic when count <= limit (limit 0: no limit), else `limit` of them drawn from `seed`
// (tactic 0 always among them: the library's default choice). `only`: that tactic alone (throws
// std::out_of_range naming the count when the implementation has no such tactic).
TacticSelection select_tactics(const Implementation& im, uint32_t limit, uint64_t seed,
                               std::optional<uint32_t> only = std::nullopt);

}  // namespace mxgate::impl
