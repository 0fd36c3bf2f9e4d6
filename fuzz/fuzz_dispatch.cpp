// fuzz_dispatch: one linear layer on the host backend, config and lifecycle decoded from the
// input, checked against the invariants of tests/test_dispatch.cpp after every step:
//   I1  dot_scaled is never launched for K % 128 != 0 (a spy on its launch count);
//   I2  a weight is preshuffled at most once, never when the layer reads it directly;
//   I3  a fused (pre-quantized) activation is accepted only in the order the layer declares,
//       and accepted when it is that order;
//   I4  every apply equals the reference bit for bit (properties/dispatch_apply_oracle.h);
//   I5  after load processing, apply re-materializes nothing (no dequantize / upcast /
//       preshuffle / per-step dequantize GEMM launch; activation-sized allocations only);
//   I7  every decision equals the decision model's (docs/dispatch_model.md, through
//       properties/dispatch_model_bridge.h): the static decisions of every linear kernel and the
//       registry on every platform, the pick, and each step's load actions, shuffles, declared
//       order, negotiation and apply path, observed through launch counters and layer state.
// DispatchError is allowed only where the lifecycle asks for it (a step before load, a second
// load, a layer no linear kernel can run, a fused order the layer does not read). MXGATE_FAULTS
// is honoured: the layer reads it when created.
//
// Input (FuzzedDataProvider: each field is ONE byte, taken from the END of the input backwards;
// value = min + byte % (max - min + 1); missing bytes read as 0):
//   platform 0..3 (gfx950 gfx942 sm90 host), scheme 0..2 (mxfp8 fp8_block bf16), N 0..34
//   (1..32, then 48, 128, 144: past the preshuffle tiles, one weight block, a shard past it;
//   N > 32 runs M = 1 and K <= 128), K/32 1..8, flags 0..3 (bit 0 is_bmm, bit 1
//   skip_weight_relayout), weight-scale 0..1 (e8m0 fp32), linear kernel 0..6 (registry,
//   DotScaledMxfp8, EmulationMxfp8 at load, EmulationMxfp8 per step, BlockScaledFp8,
//   PreshuffledBlockScaledFp8, Bf16), M 1..3, data seed 0..255, steps 1..8, then one byte per
//   step 0..6 (load, model_preshuffle, process, apply, apply fused in the order negotiated with
//   the other consumers, apply fused row-major, apply fused col-major), then the linear kernels
//   disabled in a registry pick (bit i: DotScaledMxfp8, EmulationMxfp8,
//   PreshuffledBlockScaledFp8, BlockScaledFp8, Bf16) and the orders the activation's other
//   consumers declare (two bits each for two of them: 0 absent, 1 none, 2 row-major,
//   3 column-major).
// The reference of an apply is computed at the first apply that returns and memoized by its
// exact inputs (ReferenceCache); a config's static checks (I7) run once per process, until they
// pass (StaticChecksPassed); this target's copy of dispatch/ memoizes its reference quantizer
// calls by exact input (dispatch/quantize_memo.h). None changes an input's verdict: an input run
// alone gives the same. The harness's own code carries no coverage.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch/layer.h"
#include "dispatch/negotiation.h"
#include "dispatch/registry.h"
#include "gpu/host/host_backend.h"
#include "properties/dispatch_apply_oracle.h"
#include "properties/dispatch_model_bridge.h"

using namespace mxgate;
using namespace mxgate::dispatch;
namespace decision = mxgate::properties::decision;
using dispatch::ActScaleOrder;
using gpu::Kernel;

namespace {

// Largest shape the input decodes, so that one input costs tens of microseconds under ASan (the
// host models run every multiply-add in software). These still reach every K % 128 residue below
// and above one 128-block, two preshuffle tiles and the N % 16 boundaries, M = 1 and M > 1.
constexpr std::size_t kMaxN = 32, kMaxK = 256, kMaxM = 3;
// N past kMaxN (tiled from the seed's values): M = 1 and K <= kWideMaxK keep them cheap.
constexpr std::size_t kWideN[] = {48, 128, 144};
constexpr std::size_t kWideMaxK = 128;
constexpr unsigned kMaxSteps = 8;

enum class Step : uint8_t {
  kLoad,
  kModelPreshuffle,
  kProcess,
  kApply,
  kApplyNegotiated,
  kApplyRowMajor,
  kApplyColMajor
};

// The decoded case, formatted only when a violation is reported (no per-input string work).
struct Trace {
  LinearConfig config;
  unsigned linear_kernel_choice = 0;
  std::size_t m = 0;
  unsigned seed = 0;
  unsigned steps = 0;            // steps decoded so far
  uint8_t step[kMaxSteps] = {};  // their codes
} g_case;

[[noreturn]] void violation(const char* invariant, const std::string& what) {
  std::string steps;
  for (unsigned s = 0; s < g_case.steps; ++s) steps += " " + std::to_string(g_case.step[s]);
  std::fprintf(stderr,
               "fuzz_dispatch: %s violated: %s\n  case: %s linear_kernel_choice=%u M=%zu seed=%u "
               "steps:%s\n",
               invariant, what.c_str(), describe(g_case.config).c_str(),
               g_case.linear_kernel_choice, g_case.m, g_case.seed, steps.c_str());
  __builtin_trap();
}

// Harness code, not the code under test: no coverage (it would only make libFuzzer chase cache
// hits and misses or data values) and no comparison tracing.
// (The gate links this target built by g++, which has no such sanitizer: the attribute is
// clang's only.)
#if defined(__clang__)
#define MXGATE_HARNESS __attribute__((no_sanitize("coverage")))
#else
#define MXGATE_HARNESS
#endif

// Zeroed memory mapped once for the process, outside the heap (libFuzzer counts no malloc) and
// outside the globals (LeakSanitizer does not scan it); pages are touched as they fill.
MXGATE_HARNESS void* map_zeroed(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "fuzz_dispatch: mmap of %zu bytes failed\n", bytes);
    std::abort();
  }
  return p;
}

// splitmix64: the data of one seed, without std::mt19937's 5 KB state and seeding per input.
MXGATE_HARNESS uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The data of one seed: weight values first (up to kMaxN x kMaxK), then the activation's (up to
// kMaxM x kMaxK); a layer takes a prefix of each. block: uniform in [-3, 3); otherwise integers
// in [-8, 8], where every correct MXFP8 / bf16 path equals exact_gemm. Made once per (seed,
// kind) and kept: most inputs cost no generation at all. The tables live outside the heap: an
// input that filled one with malloc would look like a leak to libFuzzer, which then runs it
// again under LeakSanitizer (a stop-the-world scan, once per table).
constexpr std::size_t kSeedValues = kMaxN * kMaxK + kMaxM * kMaxK;
MXGATE_HARNESS std::span<const float> seed_values(unsigned seed, bool block) {
  // Mapped, not a global array: LeakSanitizer scans globals for pointers on every leak check,
  // and these 18 MB hold none.
  static float* const table = static_cast<float*>(map_zeroed(2 * 256 * kSeedValues * 4));
  static bool made[2][256];
  float* v = table + (block * 256 + seed) * kSeedValues;
  if (!made[block][seed]) {
    uint64_t rng = seed;
    for (std::size_t i = 0; i < kSeedValues; ++i) {
      const uint64_t r = next(rng);
      v[i] = block ? static_cast<float>(r >> 40) * 0x1p-24f * 6.0f - 3.0f
                   : static_cast<float>(static_cast<int>(r % 17) - 8);
    }
    made[block][seed] = true;
  }
  return {v, kSeedValues};
}

// Wide N: the seed's rows (`weight`, kMaxN x K at most), repeated to N x K in one buffer
// allocated once.
MXGATE_HARNESS std::span<const float> wide_weight(std::span<const float> weight, std::size_t n,
                                                  std::size_t k) {
  static std::vector<float> wide(kWideN[std::size(kWideN) - 1] * kWideMaxK);
  for (std::size_t i = 0; i < n * k; ++i) wide[i] = weight[i % weight.size()];
  return {wide.data(), n * k};
}

// Reference results by their exact inputs. The reference (exact_gemm / ordered_gemm on top of the
// reference quantizers) costs more than the layer it checks, while the fuzzer revisits the same
// few thousand layers all the time. A pure function memoized: a hit compares every input byte
// (shape, weight codes and scales, activation), never a hash alone, so I4 checks exactly what
// recomputing would. Entries live in one arena allocated once: an input that added an entry
// with malloc would look like a leak to libFuzzer, which then runs it again under LeakSanitizer.
class ReferenceCache {
 public:
  MXGATE_HARNESS GemmOutput get(const LinearConfig& c, const QuantizedWeight& w,
                                const Activation& x) {
    if (slots_.empty()) {
      slots_.resize(kSlots);
      arena_ = static_cast<uint8_t*>(map_zeroed(kArenaBytes));
      // The largest key, once: a key_ that grew during a later input would outlive it, which
      // libFuzzer takes for a leak and answers with a LeakSanitizer scan of the whole process.
      key_.reserve(kMaxKeyBytes);
    }
    key_.clear();
    const uint64_t shape[] = {static_cast<uint64_t>(c.scheme),
                              static_cast<uint64_t>(c.weight_scale),
                              c.n,
                              c.k,
                              x.m,
                              w.data.size(),
                              w.scales.size()};
    append(shape, sizeof shape);
    append(w.data.data(), w.data.size());
    append(w.scales.data(), w.scales.size());
    append(x.bf16.data(), 2 * x.bf16.size());
    const uint64_t h = hash(key_);
    std::size_t i = h & (kSlots - 1);
    for (; slots_[i].key_bytes != 0; i = (i + 1) & (kSlots - 1)) {
      const Slot& s = slots_[i];
      if (s.hash == h && s.key_bytes == key_.size() &&
          std::memcmp(&arena_[s.offset], key_.data(), key_.size()) == 0) {
        GemmOutput out{s.rows, s.cols, OutputFormat::kFp32, std::vector<float>(s.out_count), {}};
        std::memcpy(out.fp32.data(), &arena_[s.offset + s.key_bytes], 4 * s.out_count);
        return out;
      }
    }
    GemmOutput out = test_support::reference(c, w, x);
    const std::size_t bytes = key_.size() + 4 * out.fp32.size();
    if (used_ + bytes > kArenaBytes || 2 * (entries_ + 1) > kSlots) {  // full: start over
      std::fill(slots_.begin(), slots_.end(), Slot{});
      used_ = entries_ = 0;
      i = h & (kSlots - 1);
    }
    std::memcpy(&arena_[used_], key_.data(), key_.size());
    std::memcpy(&arena_[used_ + key_.size()], out.fp32.data(), 4 * out.fp32.size());
    slots_[i] = Slot{h, used_, key_.size(), out.rows, out.cols, out.fp32.size()};
    used_ += bytes;
    ++entries_;
    return out;
  }

 private:
  static constexpr std::size_t kArenaBytes = 64u << 20;
  // The largest key: shape words, weight codes (bf16 144 x 128: 36 KiB), scales (576 bytes at
  // most), the activation (3 x 256 bf16: 1.5 KiB); under 40 KiB.
  static constexpr std::size_t kMaxKeyBytes = 64u << 10;
  static constexpr std::size_t kSlots = 1u << 16;  // a power of two, at most half full
  struct Slot {
    uint64_t hash = 0;
    std::size_t offset = 0, key_bytes = 0;  // key_bytes 0: an empty slot
    std::size_t rows = 0, cols = 0, out_count = 0;
  };
  MXGATE_HARNESS void append(const void* p, std::size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    key_.insert(key_.end(), b, b + n);
  }
  MXGATE_HARNESS static uint64_t hash(const std::vector<uint8_t>& bytes) {
    uint64_t h = bytes.size(), word = 0;
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::memcpy(&word, &bytes[i], 8);
      h = (h ^ word) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 0x100000001B3ull;
    return h;
  }
  // Mapped (map_zeroed): its pages are touched as entries fill it (a vector would zero 64 MB
  // under ASan at the first apply), and LeakSanitizer does not scan it.
  uint8_t* arena_ = nullptr;
  std::vector<uint8_t> key_;  // scratch, reused
  std::vector<Slot> slots_;
  std::size_t used_ = 0, entries_ = 0;
};

// The static checks (I7: every linear kernel's support, can_implement, planned load and apply on
// the input's config, and the registry's pick) are a pure function of the decoded config and the
// disabled set: dispatch's plan / can_implement / planned_* and the model read nothing else
// (MXGATE_FAULTS reaches a layer only). They took 11 % of the time while the fuzzer revisits the
// same few thousand configs, so a config whose checks passed once is not checked again in this
// process. Only passes are remembered (a violation stops the process), so an input alone, in a
// fresh process, runs the same checks with the same outcome: a crash found here reproduces.
// Static storage, one bit per key (no allocation, nothing for LeakSanitizer to chase).
class StaticChecksPassed {
 public:
  static constexpr std::size_t kKeys = std::size_t{1} << 21;
  // platform 2 bits, scheme 2, N choice 6, K / 32 - 1 3, flags 2, weight-scale 1, disabled 5.
  MXGATE_HARNESS static std::size_t key(unsigned platform, unsigned scheme, unsigned n_choice,
                                        unsigned k_blocks, unsigned flags, unsigned weight_scale,
                                        unsigned disabled_bits) {
    return platform | scheme << 2 | n_choice << 4 | (k_blocks - 1) << 10 | flags << 13 |
           weight_scale << 15 | (disabled_bits & 31u) << 16;
  }
  MXGATE_HARNESS bool contains(std::size_t key) const {
    return (bits_[key / 64] >> (key % 64)) & 1u;
  }
  MXGATE_HARNESS void insert(std::size_t key) { bits_[key / 64] |= uint64_t{1} << (key % 64); }

 private:
  static inline uint64_t bits_[kKeys / 64];
};

const LinearKernel* named_linear_kernel(unsigned i) {
  static const DotScaledMxfp8 dot;
  static const EmulationMxfp8 emu_load(true), emu_step(false);
  static const BlockScaledFp8 block;
  static const PreshuffledBlockScaledFp8 pre;
  static const Bf16 bf16;
  static const LinearKernel* const linear_kernels[] = {&dot,   &emu_load, &emu_step,
                                                       &block, &pre,      &bf16};
  return linear_kernels[i - 1];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  LinearConfig& c = g_case.config;
  c = LinearConfig{};
  c.platform = static_cast<Platform>(in.ConsumeIntegralInRange<uint8_t>(0, 3));
  c.scheme = static_cast<Scheme>(in.ConsumeIntegralInRange<uint8_t>(0, 2));
  const unsigned n_choice = in.ConsumeIntegralInRange<uint8_t>(0, kMaxN + 2);
  c.n = n_choice < kMaxN ? n_choice + 1 : kWideN[n_choice - kMaxN];
  c.k = 32u * in.ConsumeIntegralInRange<uint8_t>(1, kMaxK / 32);
  if (c.n > kMaxN) c.k = std::min(c.k, kWideMaxK);
  const unsigned flags = in.ConsumeIntegralInRange<uint8_t>(0, 3);
  c.is_bmm = (flags & 1u) != 0;
  c.skip_weight_relayout = (flags & 2u) != 0;
  c.weight_scale = static_cast<WeightScaleDtype>(in.ConsumeIntegralInRange<uint8_t>(0, 1));
  const unsigned linear_kernel_choice = g_case.linear_kernel_choice =
      in.ConsumeIntegralInRange<uint8_t>(0, 6);
  const std::size_t m = g_case.m = c.n > kMaxN ? (in.ConsumeIntegral<uint8_t>(), 1)
                                               : in.ConsumeIntegralInRange<uint8_t>(1, kMaxM);
  const unsigned seed = g_case.seed = in.ConsumeIntegral<uint8_t>();
  const unsigned steps = in.ConsumeIntegralInRange<uint8_t>(1, kMaxSteps);
  g_case.steps = 0;
  uint8_t step_codes[kMaxSteps];
  for (unsigned s = 0; s < steps; ++s) step_codes[s] = in.ConsumeIntegralInRange<uint8_t>(0, 6);
  const unsigned disabled_bits = in.ConsumeIntegral<uint8_t>();
  const unsigned other_consumers = in.ConsumeIntegral<uint8_t>();
  std::set<std::string> disabled;
  if (linear_kernel_choice == 0) {
    static const char* const kNames[] = {"DotScaledMxfp8", "EmulationMxfp8",
                                         "PreshuffledBlockScaledFp8", "BlockScaledFp8", "Bf16"};
    for (unsigned i = 0; i < 5; ++i) {
      if ((disabled_bits >> i) & 1u) disabled.insert(kNames[i]);
    }
  }
  // The registry on the input's platform (the other platforms are other inputs).
  static StaticChecksPassed static_checks_passed;
  const std::size_t static_key = StaticChecksPassed::key(
      static_cast<unsigned>(c.platform), static_cast<unsigned>(c.scheme), n_choice,
      static_cast<unsigned>(c.k / 32), flags, static_cast<unsigned>(c.weight_scale),
      linear_kernel_choice == 0 ? disabled_bits : 0u);
  if (!static_checks_passed.contains(static_key)) {
    if (auto v = decision::check_static(c, disabled, {}, false)) violation("I7", *v);
    static_checks_passed.insert(static_key);
  }

  gpu::HostBackend be;
  std::unique_ptr<LinearLayer> layer;
  try {
    layer = linear_kernel_choice == 0
                ? std::make_unique<LinearLayer>(be, c, disabled)
                : std::make_unique<LinearLayer>(be, c, *named_linear_kernel(linear_kernel_choice));
  } catch (const DispatchError&) {
    // No linear kernel can run this config: a loud, named refusal, right if the model refuses.
    const std::string_view asked =
        linear_kernel_choice == 0 ? "registry" : named_linear_kernel(linear_kernel_choice)->name();
    if (auto v = decision::check_refusal(c, asked, disabled, {})) violation("I7", *v);
    return 0;
  }
  decision::LayerCheck mc(c, layer->linear_kernel(), linear_kernel_choice == 0, disabled,
                          linear_kernel_choice != 3, {});
  if (mc.construction()) violation("I7", *mc.construction());
  const bool block = c.scheme == Scheme::kFp8Block;
  const bool per_step_linear_kernel = layer->linear_kernel().name() == "EmulationMxfp8" &&
                                      layer->linear_kernel().planned_load(c).empty();
  const std::span<const float> data_values = seed_values(seed, block);
  std::span<const float> weight = data_values.first(std::min(c.n, kMaxN) * c.k);
  if (c.n > kMaxN) weight = wide_weight(weight, c.n, c.k);
  Activation x = make_activation(data_values.subspan(kMaxN * kMaxK, m * c.k), m, c.k);
  static ReferenceCache reference_cache;
  std::optional<QuantizedWeight> w;
  std::optional<GemmOutput> want;  // the reference of w and x, once an apply needs it

  for (unsigned s = 0; s < steps; ++s) {
    const auto step = static_cast<Step>(step_codes[s]);
    g_case.step[g_case.steps++] = static_cast<uint8_t>(step);
    try {
      switch (step) {
        case Step::kLoad:
          try {
            w = layer->load_float_weights(weight);
            want.reset();  // computed at the first apply that returns
            if (auto v = mc.loaded(layer->state())) violation("I7", *v);
          } catch (const DispatchError&) {
            if (!w) violation("load", "the first load of a valid weight threw");
          }
          break;
        case Step::kModelPreshuffle:
          try {
            const gpu::Counters before = be.counters();
            const bool shuffled = layer->model_preshuffle();
            if (!w) violation("load", "model_preshuffle succeeded before the weights were loaded");
            if (auto v = mc.model_preshuffled(shuffled, before, be.counters(), layer->state())) {
              violation("I7", *v);
            }
          } catch (const DispatchError&) {
            if (w) violation("load", "model_preshuffle threw on a loaded layer");
          }
          break;
        case Step::kProcess:
          try {
            const gpu::Counters before = be.counters();
            layer->process_weights_after_loading();
            if (!w) violation("load", "load processing succeeded before the weights were loaded");
            if (auto v = mc.processed(before, be.counters(), layer->state())) violation("I7", *v);
          } catch (const DispatchError&) {
            if (w) violation("load", "process_weights_after_loading threw on a loaded layer");
          }
          break;
        case Step::kApply:
        case Step::kApplyNegotiated:
        case Step::kApplyRowMajor:
        case Step::kApplyColMajor: {
          const ActScaleOrder declared = layer->act_scale_order();
          model::ScaleOrder model_declared = model::ScaleOrder::kNone;
          if (w) {
            if (auto v = mc.declared(declared, &model_declared)) violation("I7", *v);
          }
          ActScaleOrder order = ActScaleOrder::kNone;  // unfused
          if (step == Step::kApplyNegotiated) {
            // The layer and the activation's other consumers (their orders from the input).
            ActScaleOrder consumers[3] = {declared};
            model::ScaleOrder model_consumers[3] = {model_declared};
            std::size_t count = 1;
            for (unsigned i = 0; i < 2; ++i) {
              const unsigned code = (other_consumers >> (2 * i)) & 3u;
              if (code == 0) continue;
              consumers[count] = code == 1   ? ActScaleOrder::kNone
                                 : code == 2 ? ActScaleOrder::kRowMajor
                                             : ActScaleOrder::kColMajor;
              model_consumers[count] = decision::to_model(consumers[count]);
              ++count;
            }
            order = negotiate_act_scale_order(std::span(consumers, count));
            if (w) {
              if (auto v = decision::check_negotiation(std::span(model_consumers, count), order,
                                                       nullptr, {})) {
                violation("I7", *v);
              }
            }
          } else if (step == Step::kApplyRowMajor) {
            order = ActScaleOrder::kRowMajor;
          } else if (step == Step::kApplyColMajor) {
            order = ActScaleOrder::kColMajor;
          }
          // x itself carries the fused form for this one apply (no copy of the activation).
          if (order != ActScaleOrder::kNone) x.pre_quantized = quantize_activation_1x128(x, order);
          const bool mismatch = order != ActScaleOrder::kNone && declared != ActScaleOrder::kNone &&
                                order != declared;
          const bool processed = layer->state().load_processed;
          ApplyResult r;
          try {
            r = layer->apply(x);
            x.pre_quantized.reset();
          } catch (const DispatchError& e) {
            x.pre_quantized.reset();
            if (w) {
              if (auto v = mc.applied(decision::to_model(order), true, {}, {}, layer->state())) {
                violation("I7", *v);
              }
            }
            if (w && !mismatch) violation("I4", std::string("apply threw: ") + e.what());
            break;
          }
          if (!w) violation("I4", "apply succeeded before the weights were loaded");
          if (mismatch) {
            violation("I3", "a " + std::string(dispatch::to_string(order)) +
                                " pre-quantized activation was accepted by a layer that reads " +
                                std::string(dispatch::to_string(declared)));
          }
          const gpu::Counters& d = layer->last_apply().delta;
          if (c.k % kDotScaledKAlign != 0 &&
              d.launches_of(gpu::kernel("gemm_mx_dot_scaled")) != 0) {
            violation("I1", "dot_scaled launched with K = " + std::to_string(c.k));
          }
          if (!want) want = reference_cache.get(c, *w, x);
          const long bad = test_support::first_difference(*want, r.out);
          if (bad >= 0) {
            violation("I4", "apply differs from the reference at element " + std::to_string(bad) +
                                " (path " + std::string(to_string(r.path)) + ")");
          }
          if (processed) {
            for (Kernel k : {gpu::kernel("dequant_mx_to_bf16"), gpu::kernel("upcast_e8m0"),
                             gpu::kernel("preshuffle_weight"), gpu::kernel("gemm_mx_dequant")}) {
              // The per-step linear kernel's plan dequantizes on every apply (§5.1).
              if (k == gpu::kernel("dequant_mx_to_bf16") && per_step_linear_kernel) continue;
              if (d.launches_of(k) != 0) {
                violation("I5", "per-step " + std::string(gpu::kernel_name(k)) +
                                    " after load processing");
              }
            }
            const std::size_t bound = m * (c.k * 2 + c.k + c.k * 4 + c.n * 4) + 256;
            if (!per_step_linear_kernel && d.bytes_allocated > bound) {
              violation("I5", std::to_string(d.bytes_allocated) +
                                  " bytes allocated in one apply after load processing");
            }
          }
          if (auto v = mc.applied(decision::to_model(order), false, r.path, d, layer->state())) {
            violation("I7", *v);
          }
          break;
        }
      }
    } catch (const std::exception& e) {
      // Anything but the DispatchErrors allowed above: a guard band or contract check of the
      // backend, an allocation, ... is a bug of the layer, never an acceptable answer.
      violation("contract", e.what());
    }
    const LayerState& st = layer->state();
    if (st.weight_relayouts > 1) {
      violation("I2", "weight preshuffled " + std::to_string(st.weight_relayouts) + " times");
    }
    if (c.reads_weight_directly() && st.weight_relayouts != 0) {
      violation("I2", "a weight read directly (is_bmm / skip_weight_relayout) was preshuffled");
    }
  }
  return 0;
}
