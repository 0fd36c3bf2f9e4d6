// Tactic views and the tactic selection of a run (impl/op.h, impl/tactics.h).
#include "impl/tactics.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace mxgate::impl {

uint32_t Implementation::tactic_count() const {
  uint32_t n = 1;
  for (const Op& o : ops) n = std::max(n, o.tactic_count());
  return n;
}

std::string Implementation::tactic_label() const {
  if (!tactic || tactic_count() <= 1) return "";
  std::string label = " tactic " + std::to_string(*tactic);
  std::string name;
  for (const Op& o : ops) {
    if (o.tactics.empty()) continue;
    const std::string& n = o.tactics[o.tactic].name;
    if (name.empty()) {
      name = n;
    } else if (name != n) {
      return label;  // the ops name their tactic t differently: the index alone
    }
  }
  return name.empty() || name == std::to_string(*tactic) ? label : label + " (" + name + ")";
}

Implementation tactic_view(const Implementation& im, uint32_t t) {
  if (t >= im.tactic_count()) {
    throw std::out_of_range("implementation " + im.name + " has " +
                            std::to_string(im.tactic_count()) + " tactic(s); no tactic " +
                            std::to_string(t));
  }
  Implementation v = im;
  v.ops.clear();
  for (const Op& o : im.ops) {
    if (t >= o.tactic_count()) continue;
    Op b = o;
    b.tactic = t;
    if (o.run_tactic) {
      b.run = [run = o.run_tactic, t](gpu::Backend& be, const Call& call, std::string& message) {
        return run(be, call, t, message);
      };
    }
    if (!o.tactics.empty() && !o.tactics[t].accumulator.empty() && is_gemm(o.family)) {
      b.contract.accumulator = o.tactics[t].accumulator;
    }
    v.ops.push_back(std::move(b));
  }
  v.tactic = t;
  return v;
}

std::string TacticSelection::describe() const {
  if (count <= 1 && chosen.size() <= 1 && !sampled) return "";
  std::string out = "tactics: " + std::to_string(chosen.size()) + " of " + std::to_string(count);
  if (sampled) {
    out += ", a sample (seed " + std::to_string(seed) + "):";
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      out += (i ? "," : " ") + std::to_string(chosen[i]);
    }
  }
  return out;
}

TacticSelection select_tactics(const Implementation& im, uint32_t limit, uint64_t seed,
                               std::optional<uint32_t> only) {
  TacticSelection s;
  s.count = im.tactic_count();
  s.seed = seed;
  if (only) {
    if (*only >= s.count) {
      throw std::out_of_range("--tactic " + std::to_string(*only) + ": implementation " + im.name +
                              " has " + std::to_string(s.count) + " tactic(s) (0.." +
                              std::to_string(s.count - 1) + ")");
    }
    s.chosen = {*only};
    return s;
  }
  if (limit == 0 || s.count <= limit) {
    for (uint32_t t = 0; t < s.count; ++t) s.chosen.push_back(t);
    return s;
  }
  // Tactic 0 and limit - 1 others, a partial Fisher-Yates shuffle of 1..count-1 from the seed.
  s.sampled = true;
  std::vector<uint32_t> rest;
  for (uint32_t t = 1; t < s.count; ++t) rest.push_back(t);
  std::mt19937_64 rng(seed);
  s.chosen = {0};
  for (uint32_t i = 0; i + 1 < limit; ++i) {
    // Modulo, not a std:: distribution: the same sample from every standard library.
    std::swap(rest[i], rest[i + rng() % (rest.size() - i)]);
    s.chosen.push_back(rest[i]);
  }
  std::sort(s.chosen.begin(), s.chosen.end());
  return s;
}

}  // namespace mxgate::impl
