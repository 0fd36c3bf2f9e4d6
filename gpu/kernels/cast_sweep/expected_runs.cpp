// The expected output of a cast op, from the reference's independent oracles (encode_oracle.h:
// value search over decoded code tables, never the encoders under test), as run tables.
#include <cstdio>
#include <string_view>

#include "gpu/kernels/cast_sweep/cast_sweep.h"
#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/encode_oracle.h"
#include "reference/format.h"

namespace mxgate::sweep {
namespace {

std::optional<Format> format_of(mxgate_dtype d) {
  switch (d) {
    case MXGATE_DTYPE_E4M3FN:
      return Format::kE4M3FN;
    case MXGATE_DTYPE_E5M2:
      return Format::kE5M2;
    case MXGATE_DTYPE_E4M3FNUZ:
      return Format::kE4M3FNUZ;
    case MXGATE_DTYPE_E5M2FNUZ:
      return Format::kE5M2FNUZ;
    case MXGATE_DTYPE_E8M0:
      return Format::kE8M0;
    case MXGATE_DTYPE_BF16:
      return Format::kBF16;
    case MXGATE_DTYPE_FP16:
      return Format::kFP16;
    default:
      return std::nullopt;
  }
}

RunTable to_table(const std::vector<Run>& runs, std::string describes) {
  RunTable t;
  t.describes = std::move(describes);
  t.begin.reserve(runs.size());
  t.code.reserve(runs.size());
  for (const Run& r : runs) {
    t.begin.push_back(static_cast<uint32_t>(r.begin));
    t.code.push_back(static_cast<uint16_t>(r.code));
  }
  return t;
}

std::optional<RunTable> fail(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return std::nullopt;
}

}  // namespace

std::optional<RunTable> expected_runs(const std::string& claim, mxgate_dtype out,
                                      std::string* why) {
  const std::optional<Format> f = format_of(out);
  if (!f) return fail(why, "output dtype " + std::to_string(out) + " is not a cast target");
  constexpr uint64_t kAll = uint64_t{1} << 32;
  constexpr std::string_view kRulePrefix = "e8m0:";
  if (std::string_view(claim).substr(0, kRulePrefix.size()) == kRulePrefix) {
    const std::string rule_name = claim.substr(kRulePrefix.size());
    const std::optional<E8m0Encode> rule = parse_e8m0_encode(rule_name);
    if (!rule) return fail(why, "unknown e8m0 rule '" + rule_name + "'");
    if (*f != Format::kE8M0) return fail(why, "claim '" + claim + "' names an e8m0 rule");
    const auto runs = build_runs(
        [&](uint32_t b) -> uint32_t { return e8m0_oracle(float_of(b), *rule); }, 0, kAll);
    return to_table(runs, "e8m0 under rule " + rule_name);
  }
  const Convention* c = find_convention(claim);
  if (c == nullptr) return fail(why, "unknown convention '" + claim + "'");
  if (*f == Format::kE8M0) {
    if (!c->e8m0) return fail(why, "convention '" + claim + "' has no fp32 -> e8m0 rule");
    const E8m0Encode rule = *c->e8m0;
    const auto runs =
        build_runs([&](uint32_t b) -> uint32_t { return e8m0_oracle(float_of(b), rule); }, 0, kAll);
    return to_table(runs, "e8m0 under " + claim + " (rule " + std::string(name(rule)) + ")");
  }
  if (!defines(*c, *f)) {
    return fail(why, "convention '" + claim + "' does not define " + std::string(info(*f).name));
  }
  const bool ieee16 = *f == Format::kBF16 || *f == Format::kFP16;
  const EncodeOracle oracle(*f, ieee16 ? kIeeeDefault : element_policy(*c, *f));
  const Convention& conv = *c;
  const Format fmt = *f;
  const auto runs = build_runs(
      [&](uint32_t b) { return oracle.expected(pre_cast(conv, fmt, float_of(b))); }, 0, kAll);
  return to_table(runs, std::string(info(*f).name) + " under " + claim);
}

std::string SweepResult::summary() const {
  char buf[512];
  if (status != MXGATE_DONE) {
    std::snprintf(buf, sizeof buf, "%s after %llu inputs: %s",
                  status == MXGATE_UNSUPPORTED ? "UNSUPPORTED" : "ERROR",
                  static_cast<unsigned long long>(checked), message.c_str());
    return buf;
  }
  if (mismatches == 0) {
    std::snprintf(buf, sizeof buf, "%llu inputs, 0 mismatches%s, %.2f ms",
                  static_cast<unsigned long long>(checked),
                  guard_damaged ? ", GUARD BAND DAMAGED" : "", device_ms);
    return buf;
  }
  std::snprintf(
      buf, sizeof buf,
      "%llu of %llu inputs differ in %zu%s ranges%s; first 0x%08x (%a): expected 0x%x, "
      "got 0x%x; %.2f ms",
      static_cast<unsigned long long>(mismatches), static_cast<unsigned long long>(checked),
      ranges.size(), ranges_truncated ? "+" : "", guard_damaged ? ", GUARD BAND DAMAGED" : "",
      first ? first->first : 0u, first ? static_cast<double>(float_of(first->first)) : 0.0,
      first ? first->expected : 0u, first ? first->actual : 0u, device_ms);
  return buf;
}

}  // namespace mxgate::sweep
