// The self-test's detector checks (gate_selftest.h):
//   selftest.cast_sweep   the sweep over the binade [1, 2), in four chunks, finds exactly the
//                         inputs where the example's ties-away cast differs from RNE (count,
//                         first and last, the last chunk included) and none for the correct cast;
//   selftest.guard_bands  a kernel writing exactly its output passes with nothing left poisoned;
//                         one skipping an element leaves its NaN poison; one writing past the end
//                         trips the back band; writes before the start and past the end are
//                         located at exactly the damaged byte offsets.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/registry.h"
#include "properties/cast_sweep.h"
#include "tools/mxgate/gate_selftest.h"

namespace mxgate::cli::selftest {

using report::CheckOutcome;

namespace {

std::string hex(uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", bits);
  return buf;
}

// "N inputs differ, first 0x..., last 0x..." or "0 inputs differ".
std::string sweep_answer(const properties::SweepResult& r) {
  std::string s = std::to_string(r.mismatches) + " inputs differ";
  if (r.first_input) s += ", first " + hex(*r.first_input);
  if (r.last_input) s += ", last " + hex(*r.last_input);
  return s;
}

}  // namespace

// The swept range: the binade [1, 2), bit patterns [0x3f800000, 0x40000000), 2^23 inputs in four
// chunks of 2^21 ([0x3f800000, 0x3fa00000) ... [0x3fe00000, 0x40000000)).
// Ties of a format with P mantissa bits sit at 1 + (2j + 1) 2^-(P+1), j = 0 .. 2^P - 1; ties
// away from zero and RNE differ where the lower neighbour's mantissa j is even:
//   e4m3fn (P = 3): j = 0, 2, 4, 6: 1 + 1/16, 5/16, 9/16, 13/16 = 0x3f880000, 0x3fa80000,
//                   0x3fc80000, 0x3fe80000 (1/16 = 2^-4 is fp32 mantissa bit 19, 0x80000):
//                   4 inputs, in chunks 0, 1, 2 and 3;
//   e5m2 (P = 2):   j = 0, 2: 1 + 1/8, 5/8 = 0x3f900000, 0x3fd00000: 2 inputs, chunks 0 and 2;
//   e8m0:           the cast rounds up (no ties): 0 inputs.
CheckRun cast_sweep_check() {
  CheckRun run;
  constexpr uint64_t kBegin = 0x3F800000u, kEnd = 0x40000000u, kChunk = uint64_t{1} << 21;
  const struct {
    const char* impl;
    const char* target;
    const char* expected;
  } kRows[] = {
      {"example", "e4m3fn", "0 inputs differ"},
      {"example", "e5m2", "0 inputs differ"},
      {"example", "e8m0", "0 inputs differ"},
      {"example_faulty_cast_ties_away", "e4m3fn",
       "4 inputs differ, first 0x3f880000, last 0x3fe80000"},
      {"example_faulty_cast_ties_away", "e5m2",
       "2 inputs differ, first 0x3f900000, last 0x3fd00000"},
      {"example_faulty_cast_ties_away", "e8m0", "0 inputs differ"},
  };
  gpu::HostBackend be;
  for (const auto& row : kRows) {
    const impl::Implementation* im = nullptr;
    try {
      im = impl::resolve(std::string("example:") + row.impl).at(0);
    } catch (const std::exception& e) {
      return error_run(std::string("the example plugin cannot be loaded: ") + e.what());
    }
    std::string got = "no host cast op to " + std::string(row.target);
    for (const auto& [op, target] : properties::sweep_targets(*im)) {
      if (impl::to_string(target) != row.target) continue;
      try {
        const properties::SweepResult r =
            properties::sweep_cast(be, *op, target, kBegin, kEnd, kChunk);
        got = sweep_answer(r);
      } catch (const std::exception& e) {
        got = std::string("error: ") + e.what();
      }
    }
    expect_answer(run,
                  std::string(row.impl) + " -> " + row.target + " over [0x3f800000, " +
                      "0x40000000) in 4 chunks",
                  row.expected, got);
  }
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro =
        "mxgate sweep-cast --impl example:example_faulty_cast_ties_away --from 0x3f800000 "
        "--count 0x800000";
  }
  return run;
}

namespace {

// The damaged offsets of the guards, "-4..-1, 256..259" (runs of consecutive offsets).
std::string damaged_offsets(const std::vector<gpu::GuardDamage>& damage) {
  std::string out;
  for (std::size_t i = 0; i < damage.size();) {
    std::size_t j = i;
    while (j + 1 < damage.size() && damage[j + 1].offset == damage[j].offset + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(damage[i].offset) +
           (j > i ? ".." + std::to_string(damage[j].offset) : "");
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

// 64 fp32 elements: 256 bytes, guarded by 256-byte bands front and back (gpu/backend.h).
CheckRun guard_bands_check() {
  CheckRun run;
  gpu::HostBackend be;
  constexpr uint64_t kCount = 64;
  {
    // Twin: fault_skip_element with nothing to skip (skip = count) writes exactly the output.
    gpu::FaultArgs args;
    args.p = {kCount, kCount};
    args.out = be.allocate(kCount * 4, "selftest_exact");
    std::string got;
    try {
      be.run({gpu::kernel("fault_skip_element"), args});
      const std::vector<float> out = be.download_as<float>(args.out);
      std::size_t poisoned = 0;
      for (float x : out) poisoned += std::isnan(x) ? 1 : 0;
      got = "pass, " + std::to_string(poisoned) + " elements poisoned";
    } catch (const std::exception& e) {
      got = std::string("error: ") + e.what();
    }
    be.release(args.out);
    expect_answer(run, "exact writer (faithful twin)", "pass, 0 elements poisoned", got);
  }
  {
    // Element 17 skipped: its 0xFF poison bytes (NaN) survive.
    gpu::FaultArgs args;
    args.p = {kCount, 17};
    args.out = be.allocate(kCount * 4, "selftest_out");
    be.run({gpu::kernel("fault_skip_element"), args});
    const std::vector<float> got = be.download_as<float>(args.out);
    be.release(args.out);
    std::string nan_at;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(got[i])) nan_at += (nan_at.empty() ? "" : ", ") + std::to_string(i);
    }
    expect_answer(run, "fault_skip_element (skip 17): poisoned elements", "17",
                  nan_at.empty() ? "none" : nan_at);
  }
  {
    // One element too many: element 64 is bytes 256..259, the back band's first four.
    gpu::FaultArgs args;
    args.p = {kCount, 0};
    args.out = be.allocate(kCount * 4, "selftest_victim");
    std::string got = "no error";
    try {
      be.run({gpu::kernel("fault_write_past_end"), args});
    } catch (const gpu::GpuError& e) {
      const std::string m = e.what();
      const std::size_t at = m.find("guard byte(s) damaged");
      got = at == std::string::npos ? m : m.substr(m.rfind(": ", at) + 2);
    }
    be.release(args.out);
    expect_answer(run, "fault_write_past_end",
                  "4 guard byte(s) damaged; first: buffer "
                  "'selftest_victim' guard damaged at byte offset 256 (past its end) (expected "
                  "0xa5, found 0x00)",
                  got);
  }
  {
    // 1.0f (bytes 00 00 80 3f) at element -1 and element 64: bytes -4..-1 and 256..259. None of
    // them equals its guard byte (0xA5 ^ 29 i: front i = 252..255 hold 0x29 0x0c 0x63 0x46, back
    // i = 0..3 hold 0xa5 0xb8 0x9f 0xf2), so all eight are damage.
    const gpu::BufferId out = be.allocate(kCount * 4, "selftest_both");
    auto* data = static_cast<uint8_t*>(be.address(out));
    const float one = 1.0f;
    std::memcpy(data - 4, &one, 4);
    std::memcpy(data + kCount * 4, &one, 4);
    const std::vector<gpu::GuardDamage> damage = be.check_guards();
    be.release(out);
    expect_answer(run, "writes at element -1 and 64: damaged offsets", "-4..-1, 256..259",
                  damaged_offsets(damage));
  }
  if (run.report.result == CheckOutcome::kFail) {
    run.report.repro = "mxgate gate --only selftest.guard_bands";
  }
  return run;
}

}  // namespace mxgate::cli::selftest
