// The grouped GEMMs' clause of check_call (contract.h GroupedClause): the offsets a call carries,
// checked as data before any launch, so an offset off the declared alignment is outside the
// contract (unsupported), never a wrong result blamed on the kernel.
#include <string>

#include "contract/contract.h"

namespace mxgate::contract {

std::string_view to_string(GroupLayout l) {
  return l == GroupLayout::kMasked     ? "masked"
         : l == GroupLayout::kKGrouped ? "k_grouped"
                                       : "contiguous";
}

std::string_view to_string(OffsetsKind k) { return k == OffsetsKind::kStarts ? "starts" : "ends"; }

std::optional<std::string> check_grouped(const Contract& c, const Call& call) {
  const std::string n = std::to_string(call.offsets.size());
  if (!c.grouped) {
    if (!call.offsets.empty() || call.group_offsets.present()) {
      return "group offsets given to an op that is no grouped GEMM";
    }
    return std::nullopt;
  }
  const GroupedClause& g = *c.grouped;
  const uint64_t e = call.offsets.size();
  if (!g.groups.admits(e)) {
    return "groups: " + describe_dim('E', g.groups) + " violated (E = " + n + ")";
  }
  if (!call.group_offsets.present() || call.group_offsets.bytes < 4 * e ||
      call.group_offsets.cols != e) {
    return "group_offsets must be a buffer of E = " + n + " int32 offsets";
  }
  const bool kg = g.layout == GroupLayout::kKGrouped;
  if (kg && call.out.present() && call.out.rows != e * call.m) {
    return "k-grouped out must hold the E = " + n +
           " slices of M rows: " + std::to_string(e * call.m) + " rows, got " +
           std::to_string(call.out.rows);
  }
  if (kg && call.b.present() && call.b.rows != call.n) {
    return "k-grouped b must be N x K: " + std::to_string(call.n) + " rows, got " +
           std::to_string(call.b.rows);
  }
  if (!kg && call.b.present() && call.b.rows != e * call.n) {
    return "b must stack the E = " + n + " experts: " + std::to_string(e * call.n) + " rows, got " +
           std::to_string(call.b.rows);
  }
  const uint64_t align = g.offset_align == 0 ? 1 : g.offset_align;
  const std::string what = g.layout == GroupLayout::kMasked ? "masked count" : "group offset";
  for (uint64_t i = 0; i < e; ++i) {
    const uint64_t v = call.offsets[i];
    if (v % align != 0) {
      return what + " " + std::to_string(i) + " = " + std::to_string(v) +
             " is not a multiple of the offset alignment " + std::to_string(align);
    }
  }
  if (g.layout == GroupLayout::kMasked) {
    if (call.m % e != 0) {
      return "masked layout: M = " + std::to_string(call.m) + " is not E * max_m (E = " + n + ")";
    }
    const uint64_t max_m = call.m / e;
    for (uint64_t i = 0; i < e; ++i) {
      if (call.offsets[i] > max_m) {
        return "masked count " + std::to_string(i) + " = " + std::to_string(call.offsets[i]) +
               " exceeds max_m = " + std::to_string(max_m);
      }
    }
    return std::nullopt;
  }
  if (g.offsets == OffsetsKind::kStarts && call.offsets[0] != 0) {
    return "start offsets must begin at 0, got " + std::to_string(call.offsets[0]);
  }
  const uint64_t total = kg ? call.k : call.m;
  const std::string dim = kg ? "K = " : "M = ";
  for (uint64_t i = 0; i < e; ++i) {
    if (call.offsets[i] > total || (i > 0 && call.offsets[i] < call.offsets[i - 1])) {
      return "group offsets must be nondecreasing and at most " + dim + std::to_string(total) +
             " (offset " + std::to_string(i) + " = " + std::to_string(call.offsets[i]) + ")";
    }
  }
  if (kg && call.offsets[e - 1] != call.k) {
    return "k-grouped offsets must end at K = " + std::to_string(call.k) + " (offset " +
           std::to_string(e - 1) + " = " + std::to_string(call.offsets[e - 1]) + ")";
  }
  return std::nullopt;
}

}  // namespace mxgate::contract
