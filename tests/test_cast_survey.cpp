// Covers the host cast survey's sweep (properties/cast_survey.h survey_cast) on buffers reused
// across its calls: every call of the op gets exactly its inputs and an output that is all poison
// (an op that wrote its input or left an output element unwritten on an earlier call changes
// nothing later), the resident inputs are views of one write-protected copy (an op writing them
// faults), the op's share of the sweep is timed, an element the op leaves unwritten is a mismatch
// on every call, a write past the output stops the sweep with the guard named, a call count that
// changes (the last, shorter call) gets buffers of its own, packed E2M1 is compared unpacked and
// poisoned again on every call, and the sample is heard by the progress callback once. The op is
// the example plugin's cast_satfinite with its contract's K limited, so the sample's 393,216 inputs
// take several calls. Does not cover: the verdicts of the claims' tables (test_conventions.cpp and
// the exhaustive encoder tests), the 2^32 inputs of CastInputs::kAll
// (bench/bench_host_cast_survey.cpp times them; `mxgate survey` over all inputs:
// test_cli_interrupt.cpp), device ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/harness.h"
#include "impl/registry.h"
#include "properties/cast_survey.h"
#include "reference/convention.h"
#include "reference/format.h"

namespace mxgate {
namespace {

using impl::Call;
using impl::Dtype;
using impl::Op;

// The sample as cast_survey.h documents it: per high half ascending, the low halves 0x0000,
// 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF.
std::vector<uint32_t> documented_sample() {
  std::vector<uint32_t> out;
  for (uint32_t high = 0; high < 65536; ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      out.push_back(high << 16 | low);
    }
  }
  return out;
}

// What the op saw at the entry of each call (the warm-up call first).
struct Seen {
  std::vector<uint64_t> counts;
  std::vector<bool> poisoned;         // every output byte 0xFF
  std::vector<bool> inputs_in_order;  // the sample's next `count` inputs (after the warm-up's)
};

// The example's cast_satfinite limited to K <= k_max, wrapped by `body(call index, inputs, output,
// count, inner)` where inner() runs the example's cast.
template <class Body>
Op wrapped_cast(uint64_t k_max, Body body) {
  const Op inner = *impl::resolve("example").front()->find_op("cast_satfinite");
  Op op = inner;
  op.impl = "test";
  op.contract.k.max = k_max;
  auto calls = std::make_shared<int>(0);
  op.run = [inner, body, calls](gpu::Backend& be, const Call& call, std::string& message) {
    auto* in = static_cast<uint32_t*>(be.address(call.a.buffer));
    auto* out = static_cast<uint8_t*>(be.address(call.out.buffer));
    return body((*calls)++, in, out, call.k, [&] { return inner.run(be, call, message); });
  };
  return op;
}

// The survey's inputs as the process's resident, write-protected copy (the default for the
// sample) or written per call into the call's own guarded buffer (MXGATE_SURVEY_RESIDENT=0),
// for one test's scope.
class InputsMode {
 public:
  explicit InputsMode(bool resident) {
    if (const char* e = std::getenv("MXGATE_SURVEY_RESIDENT")) saved_ = e;
    if (resident) {
      unsetenv("MXGATE_SURVEY_RESIDENT");
    } else {
      setenv("MXGATE_SURVEY_RESIDENT", "0", 1);
    }
  }
  ~InputsMode() {
    if (saved_) {
      setenv("MXGATE_SURVEY_RESIDENT", saved_->c_str(), 1);
    } else {
      unsetenv("MXGATE_SURVEY_RESIDENT");
    }
  }

 private:
  std::optional<std::string> saved_;
};

// The survey of the sample by `op` with K <= 100000 (3 calls of 100000, then one of 93216 on
// buffers of its own), checking what the op saw at each call's entry; `scribble` overwrites the
// inputs after each cast (only where they are not write-protected). Returns the input addresses
// of the calls.
std::vector<const uint32_t*> expect_every_call_gets_its_inputs(bool scribble) {
  const std::vector<uint32_t> sample = documented_sample();
  Seen seen;
  std::vector<const uint32_t*> addresses;
  uint64_t next = 0;  // the sample index the next sweep call starts at
  const Op op =
      wrapped_cast(100000, [&](int call, uint32_t* in, uint8_t* out, uint64_t count, auto inner) {
        addresses.push_back(in);
        seen.counts.push_back(count);
        seen.poisoned.push_back(std::all_of(out, out + count, [](uint8_t b) { return b == 0xFF; }));
        const uint64_t from = call == 0 ? 0 : next;
        seen.inputs_in_order.push_back(
            from + count <= sample.size() &&
            std::equal(in, in + count, sample.begin() + static_cast<std::ptrdiff_t>(from)));
        if (call > 0) next += count;
        const impl::Status s = inner();
        if (scribble) std::fill(in, in + count, 0x7F800000u);  // +Inf over every input
        return s;
      });
  gpu::HostBackend be;
  int heard = 0;
  const properties::CastSurvey s =
      properties::survey_cast(be, op, Dtype::kE4m3fn, properties::CastInputs::kSample,
                              uint64_t{1} << 24, [&](uint64_t done, uint64_t total) {
                                ++heard;
                                EXPECT_EQ(done, 393216u);
                                EXPECT_EQ(total, 393216u);
                                return true;
                              });
  EXPECT_EQ(s.error, "");
  EXPECT_EQ(s.inputs, 393216u);
  const std::vector<std::string> m = s.matches();
  EXPECT_NE(std::find(m.begin(), m.end(), "cuda_satfinite"), m.end());
  EXPECT_EQ(heard, 1);
  // The warm-up, then 3 calls of 100000 and the last of 93216 on buffers of its own.
  EXPECT_EQ(seen.counts.size(), 5u);
  for (std::size_t c = 0; c < seen.counts.size(); ++c) {
    SCOPED_TRACE("call " + std::to_string(c));
    EXPECT_EQ(seen.counts[c], c == 4 ? 93216u : 100000u);
    EXPECT_TRUE(seen.poisoned[c]);
    EXPECT_TRUE(seen.inputs_in_order[c]);
  }
  return addresses;
}

// Guards against reused buffers carrying one call into the next when the inputs are written per
// call: an output not poisoned again (an unwritten element would read as the previous call's
// code), inputs not rewritten after an op wrote them, or a call handed other inputs than the ones
// compared. The op scribbles over its input after every cast; it must still be bit-exact with
// its claim.
TEST(CastSurvey, EveryCallGetsItsInputsAndAPoisonedOutput) {
  const InputsMode written(false);
  expect_every_call_gets_its_inputs(true);
}

// Guards against the resident inputs being anything but views of one ascending copy: a call
// handed the wrong chunk, an output not poisoned again, or a copy per call after all (each call's
// input must start where the previous call's ended, in one array).
TEST(CastSurvey, ResidentInputsAreViewsOfOneCopy) {
  const InputsMode resident(true);
  const std::vector<const uint32_t*> at = expect_every_call_gets_its_inputs(false);
  ASSERT_EQ(at.size(), 5u);
  EXPECT_EQ(at[1], at[0]);  // the warm-up and the first call: the first chunk
  for (std::size_t c = 2; c < at.size(); ++c) EXPECT_EQ(at[c], at[c - 1] + 100000) << c;
}

// Guards against an op writing the resident inputs unseen (every later call, and the comparison,
// would read its writes): their pages are write-protected, so the write faults. A crash inside an
// op is the gate's watchdog's to report (impl/harness.h).
TEST(CastSurveyDeathTest, AnOpWritingItsResidentInputFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const InputsMode resident(true);
  const Op op = wrapped_cast(100000, [](int, uint32_t* in, uint8_t*, uint64_t, auto inner) {
    const impl::Status s = inner();
    in[0] = 0;
    return s;
  });
  EXPECT_EXIT(
      {
        gpu::HostBackend be;
        properties::survey_cast(be, op, Dtype::kE4m3fn, properties::CastInputs::kSample);
      },
      testing::KilledBySignal(SIGSEGV), "");
}

// Guards against the op's share of the sweep being misreported (the figure that says whether a
// slow survey is the op's or mxgate's): an op that sleeps 20 ms a call shows at least that per
// call, and never more than the sweep.
TEST(CastSurvey, OpSecondsHoldTheOpsCalls) {
  const Op op = wrapped_cast(100000, [](int, uint32_t*, uint8_t*, uint64_t, auto inner) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return inner();
  });
  gpu::HostBackend be;
  const properties::CastSurvey s =
      properties::survey_cast(be, op, Dtype::kE4m3fn, properties::CastInputs::kSample);
  ASSERT_EQ(s.error, "");
  EXPECT_GE(s.op_seconds, 4 * 0.020);  // 4 calls after the warm-up
  EXPECT_LE(s.op_seconds, s.seconds);
}

// Guards against an element the op never writes going unseen on a call after the first (the
// output of reused buffers keeping the previous call's code there): on each call after the
// warm-up, the op leaves unwritten the first element whose code equals the one it wrote there on
// its previous call, so only the poison shows it (the previous code would pass). K <= 196608
// splits the sample into its positive and its negative half, whose NaNs have one code (0x7F).
TEST(CastSurvey, AnUnwrittenElementIsAMismatchOnEveryCall) {
  const std::vector<uint32_t> sample = documented_sample();
  std::vector<uint8_t> previous;
  int skipped = 0;
  const Op op =
      wrapped_cast(196608, [&](int call, uint32_t*, uint8_t* out, uint64_t count, auto inner) {
        const std::vector<uint8_t> entry(out, out + count);
        const impl::Status s = inner();
        const std::vector<uint8_t> written(out, out + count);
        if (call > 0 && previous.size() == count) {
          for (std::size_t j = 0; j < count; ++j) {
            if (written[j] == previous[j]) {
              out[j] = entry[j];
              ++skipped;
              break;
            }
          }
        }
        previous = written;
        return s;
      });
  gpu::HostBackend be;
  const properties::CastSurvey s =
      properties::survey_cast(be, op, Dtype::kE4m3fn, properties::CastInputs::kSample);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.inputs, 393216u);
  EXPECT_EQ(skipped, 2);
  bool found = false;
  for (const properties::ClaimResult& r : s.results) {
    if (std::find(r.claims.begin(), r.claims.end(), "cuda_satfinite") == r.claims.end()) continue;
    found = true;
    EXPECT_EQ(r.mismatches, 2u);
    ASSERT_TRUE(r.first_input.has_value());
    EXPECT_EQ(*r.first_input, sample[0]);
    EXPECT_EQ(r.actual, 0xFFu);
  }
  EXPECT_TRUE(found);
}

// Guards against guard bands checked once per sweep (or never again on reused buffers): a write
// one byte past the output on the third call of the sweep stops it there, naming the guard, with
// the two calls before it counted.
TEST(CastSurvey, AWritePastTheOutputOnALaterCallStopsTheSweep) {
  const Op op =
      wrapped_cast(65536, [](int call, uint32_t*, uint8_t* out, uint64_t count, auto inner) {
        const impl::Status s = inner();
        if (call == 3) out[count] = 0;  // the warm-up is call 0
        return s;
      });
  gpu::HostBackend be;
  const properties::CastSurvey s =
      properties::survey_cast(be, op, Dtype::kE4m3fn, properties::CastInputs::kSample);
  EXPECT_NE(s.error.find("guard"), std::string::npos) << s.error;
  EXPECT_NE(s.error.find("'out'"), std::string::npos) << s.error;
  EXPECT_EQ(s.inputs, 2u * 65536u);
}

// Guards against packed E2M1 on reused buffers: its codes compared as bytes instead of unpacked
// (low nibble first), a byte shared by two slices poisoned before both were compared, or its
// output not poisoned again. The op encodes with the reference under ml_dtypes (correct by
// construction: the test checks the survey's plumbing); K <= 100001, an odd count, so a call's
// last byte holds one code, and the last call (93213) gets buffers of its own.
TEST(CastSurvey, PackedE2m1IsComparedUnpackedOnEveryCall) {
  std::vector<bool> poisoned;
  Op op;
  op.name = "cast_e2m1";
  op.impl = "test";
  op.family = impl::Family::kCast;
  op.memory = impl::Memory::kHost;
  op.contract.a_dtypes = impl::dtype_bit(Dtype::kF32);
  op.contract.out_dtypes = impl::dtype_bit(Dtype::kE2m1);
  op.contract.conventions = {"ml_dtypes"};
  op.contract.k.max = 100001;
  op.run = [&poisoned](gpu::Backend& be, const Call& call, std::string&) {
    const auto* in = static_cast<const uint32_t*>(be.address(call.a.buffer));
    auto* out = static_cast<uint8_t*>(be.address(call.out.buffer));
    const std::size_t bytes = (call.k + 1) / 2;
    poisoned.push_back(std::all_of(out, out + bytes, [](uint8_t b) { return b == 0xFF; }));
    const Convention& c = require_convention("ml_dtypes");
    for (std::size_t i = 0; i < call.k; ++i) {
      float x;
      std::memcpy(&x, &in[i], 4);
      const auto code = static_cast<uint8_t>(encode_with(c, Format::kE2M1, x));
      uint8_t& b = out[i / 2];
      b = i % 2 == 0 ? static_cast<uint8_t>((b & 0xF0) | code)
                     : static_cast<uint8_t>((b & 0x0F) | code << 4);
    }
    return impl::Status::kDone;
  };
  gpu::HostBackend be;
  const properties::CastSurvey s =
      properties::survey_cast(be, op, Dtype::kE2m1, properties::CastInputs::kSample);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.inputs, 393216u);
  const std::vector<std::string> m = s.matches();
  EXPECT_NE(std::find(m.begin(), m.end(), "ml_dtypes"), m.end());
  ASSERT_EQ(poisoned.size(), 5u);  // the warm-up, 3 calls of 100001, 1 of 93213
  for (std::size_t c = 0; c < poisoned.size(); ++c) EXPECT_TRUE(poisoned[c]) << "call " << c;
}

}  // namespace
}  // namespace mxgate
