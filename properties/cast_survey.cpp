#include "properties/cast_survey.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/worker_pool.h"
#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/fp_encode.h"

namespace mxgate::properties {
namespace {

constexpr uint64_t kAll = uint64_t{1} << 32;
constexpr uint16_t kSampleLow[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
// A pass over a call's elements is split into slices of at least this many (per core: a few).
constexpr std::size_t kSliceMin = std::size_t{1} << 16;

// The survey's inputs in ascending order: input i is i (all) or the sample's i-th.
class Inputs {
 public:
  explicit Inputs(CastInputs which) : all_(which == CastInputs::kAll) {
    if (all_) return;
    sample_.reserve(65536 * std::size(kSampleLow));
    for (uint32_t high = 0; high < 65536; ++high) {
      for (uint16_t low : kSampleLow) sample_.push_back(high << 16 | low);
    }
  }
  uint64_t count() const { return all_ ? kAll : sample_.size(); }
  uint32_t at(uint64_t i) const { return all_ ? static_cast<uint32_t>(i) : sample_[i]; }
  // The first index in [j, hi) whose input is >= x; hi when none.
  uint64_t first_at_least(uint64_t x, uint64_t j, uint64_t hi) const {
    if (all_) return std::clamp(x, j, hi);
    const auto b = sample_.begin();
    return static_cast<uint64_t>(
        std::lower_bound(b + static_cast<std::ptrdiff_t>(j), b + static_cast<std::ptrdiff_t>(hi), x,
                         [](uint32_t v, uint64_t e) { return uint64_t{v} < e; }) -
        b);
  }
  // Inputs [from, from + n) into `out`.
  void fill(uint64_t from, uint32_t* out, std::size_t n) const {
    if (all_) {
      // Blocks of a constant count, so the compiler vectorizes the stores at -O2.
      constexpr std::size_t kBlock = 64;
      auto first = static_cast<uint32_t>(from);
      std::size_t i = 0;
      for (; i + kBlock <= n; i += kBlock, first += kBlock) {
        uint32_t* o = out + i;
        for (uint32_t j = 0; j < kBlock; ++j) o[j] = first + j;
      }
      for (; i < n; ++i) out[i] = first++;
    } else {
      std::memcpy(out, sample_.data() + from, n * sizeof(uint32_t));
    }
  }

 private:
  bool all_;
  std::vector<uint32_t> sample_;
};

// How many slices a pass over `count` elements takes on `pool`: a few per core, each of at least
// kSliceMin elements.
std::size_t slices_for(const WorkerPool& pool, uint64_t count) {
  return static_cast<std::size_t>(
      std::max<uint64_t>(1, std::min<uint64_t>(pool.size() * 4, count / kSliceMin)));
}

// Inputs [from, from + n) of `in` into `out`, a slice per task on every core.
void fill_on_pool(WorkerPool& pool, const Inputs& in, uint64_t from, uint32_t* out, uint64_t n) {
  const std::size_t slices = slices_for(pool, n);
  pool.run(slices, [&](std::size_t s) {
    const uint64_t lo = n * s / slices, hi = n * (s + 1) / slices;
    in.fill(from + lo, out + lo, static_cast<std::size_t>(hi - lo));
  });
}

// Whether `bytes` of resident inputs may be held: MXGATE_SURVEY_RESIDENT=0 never, =1 always;
// otherwise when they are small (the sample's 1.5 MiB) or at most half the memory the kernel
// reports available (all inputs are 16 GiB: a host with 32 GiB free), so a survey never pushes
// the host into swap or the OOM killer.
std::optional<bool> resident_asked() {
  const char* e = std::getenv("MXGATE_SURVEY_RESIDENT");
  if (e == nullptr || *e == '\0') return std::nullopt;
  return std::string(e) != "0";
}

bool resident_fits(uint64_t bytes) {
  if (const std::optional<bool> asked = resident_asked()) return *asked;
  if (bytes <= (uint64_t{64} << 20)) return true;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return bytes <= kib * 1024 / 2;
  }
  return false;
}

// The survey's inputs written once, in order, into pages that are then write-protected, with an
// inaccessible page on each side: a call's input is a view of its chunk (Invocation::input_view),
// so nothing is written per call, and an op that writes its input, or past either end, faults
// instead of changing what later calls read. Held for the process's later surveys (a survey of
// several formats fills them once). docs/python.md §13.
class ResidentInputs {
 public:
  // The process's resident copy of `in`, made on first use; nullptr when it does not fit
  // (resident_fits) or the pages cannot be had: the survey then writes each call's inputs.
  static std::shared_ptr<const ResidentInputs> of(const Inputs& in, CastInputs which) {
    if (resident_asked() == false) return nullptr;  // asked each survey, made or not
    static std::mutex mu;
    static std::map<CastInputs, std::shared_ptr<const ResidentInputs>> held;
    const std::lock_guard<std::mutex> lock(mu);
    auto it = held.find(which);
    if (it != held.end()) return it->second;
    std::shared_ptr<const ResidentInputs> r;
    if (resident_fits(in.count() * 4)) r = make(in);
    if (r) held.emplace(which, r);
    return r;
  }
  ~ResidentInputs() { munmap(map_, map_bytes_); }
  ResidentInputs(const ResidentInputs&) = delete;
  ResidentInputs& operator=(const ResidentInputs&) = delete;

  const uint32_t* at(uint64_t i) const { return data_ + i; }

 private:
  ResidentInputs(void* map, std::size_t map_bytes, const uint32_t* data)
      : map_(map), map_bytes_(map_bytes), data_(data) {}

  static std::shared_ptr<const ResidentInputs> make(const Inputs& in) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (in.count() * 4 + page - 1) / page * page;
    const std::size_t map_bytes = bytes + 2 * page;
    void* map =
        mmap(nullptr, map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return nullptr;
    auto* data = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(map) + page);
    if (mprotect(data, bytes, PROT_READ | PROT_WRITE) != 0) {
      munmap(map, map_bytes);
      return nullptr;
    }
    // Huge pages where the kernel grants them: 2^32 inputs are 4M small pages to fault in.
    (void)madvise(data, bytes, MADV_HUGEPAGE);
    fill_on_pool(WorkerPool::shared(), in, 0, data, in.count());
    if (mprotect(data, bytes, PROT_READ) != 0) {
      munmap(map, map_bytes);
      return nullptr;
    }
    return std::shared_ptr<const ResidentInputs>(new ResidentInputs(map, map_bytes, data));
  }

  void* map_;
  std::size_t map_bytes_;
  const uint32_t* data_;
};

// One slice's count of outputs that differ from a claim's table, and its first.
struct Part {
  uint64_t mismatches = 0;
  std::optional<uint32_t> first;
  uint32_t expected = 0, actual = 0;
};

// How many of a[0, n) differ from w. Blocks of a constant count, so the compiler vectorizes the
// comparison at -O2 (std::count_if's loop it does not: one element per step).
template <class T>
uint64_t count_not_equal(const T* a, std::size_t n, T w) {
  constexpr std::size_t kBlock = sizeof(T) == 1 ? 240 : 4096;  // its count fits in T
  uint64_t bad = 0;
  std::size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T c = 0;
    const T* b = a + i;
    for (std::size_t j = 0; j < kBlock; ++j) c = static_cast<T>(c + (b[j] != w ? 1 : 0));
    bad += c;
  }
  for (; i < n; ++i) bad += a[i] != w ? 1 : 0;
  return bad;
}

// Outputs [j, k) of `raw` (elements of T, the target's width; element j holds input base + j)
// against one code `want`, in one vectorizable pass. Returns the count.
template <class T>
uint64_t count_differing(const uint8_t* raw, std::size_t j, std::size_t k, uint32_t want) {
  return count_not_equal(reinterpret_cast<const T*>(raw) + j, k - j, static_cast<T>(want));
}

// The first output of [j, k) that differs from `want` (there is one) into `p`.
template <class T>
void note_first(const uint8_t* raw, std::size_t j, std::size_t k, uint32_t want, Part& p,
                const Inputs& in, uint64_t base) {
  const T* a = reinterpret_cast<const T*>(raw) + j;
  const T w = static_cast<T>(want);
  const T* f = std::find_if(a, a + (k - j), [w](T c) { return c != w; });
  p.first = in.at(base + j + static_cast<std::size_t>(f - a));
  p.expected = want;
  p.actual = *f;
}

// Elements [lo, hi) of one call's output `raw` (element j holds input base + j) against every
// distinct claim table (parts[t] for tables[t]), segment by segment (inputs ascend): the elements
// whose input lies in one run of every table form one index range, compared once per distinct
// code the tables expect there (the tables agree on most inputs: one pass where they do). Each
// table's count and first difference are what comparing it alone gives.
void compare_slice(const uint8_t* raw, std::size_t width, const Inputs& in, uint64_t base,
                   std::size_t lo, std::size_t hi, const std::vector<std::vector<Run>>& tables,
                   Part* parts) {
  if (lo >= hi) return;
  const std::size_t nt = tables.size();
  const auto by_begin = [](uint64_t x, const Run& ru) { return x < ru.begin; };
  // The run of each table holding input x, searched from run `from` on.
  const auto run_of = [&](std::size_t t, std::size_t from, uint64_t x) {
    const std::vector<Run>& runs = tables[t];
    return static_cast<std::size_t>(
        std::upper_bound(runs.begin() + static_cast<std::ptrdiff_t>(from), runs.end(), x,
                         by_begin) -
        runs.begin() - 1);
  };
  std::vector<std::size_t> run(nt);
  std::vector<uint64_t> bad(nt);
  for (std::size_t t = 0; t < nt; ++t) run[t] = run_of(t, 0, in.at(base + lo));
  const uint64_t last = in.at(base + hi - 1);
  for (std::size_t j = lo; j < hi;) {
    uint64_t end = kAll;
    for (std::size_t t = 0; t < nt; ++t) {
      if (run[t] + 1 < tables[t].size()) end = std::min(end, tables[t][run[t] + 1].begin);
    }
    const std::size_t k =
        end > last ? hi
                   : static_cast<std::size_t>(in.first_at_least(end, base + j, base + hi) - base);
    for (std::size_t t = 0; t < nt; ++t) {
      const uint32_t want = tables[t][run[t]].code;
      std::size_t same = 0;
      while (same < t && tables[same][run[same]].code != want) ++same;
      bad[t] = same < t     ? bad[same]
               : width == 1 ? count_differing<uint8_t>(raw, j, k, want)
               : width == 2 ? count_differing<uint16_t>(raw, j, k, want)
                            : count_differing<uint32_t>(raw, j, k, want);
      if (bad[t] != 0 && parts[t].mismatches == 0) {
        if (width == 1) {
          note_first<uint8_t>(raw, j, k, want, parts[t], in, base);
        } else if (width == 2) {
          note_first<uint16_t>(raw, j, k, want, parts[t], in, base);
        } else {
          note_first<uint32_t>(raw, j, k, want, parts[t], in, base);
        }
      }
      parts[t].mismatches += bad[t];
    }
    j = k;
    if (j < hi) {
      const uint64_t x = in.at(base + j);
      for (std::size_t t = 0; t < nt; ++t) {
        if (run[t] + 1 < tables[t].size() && tables[t][run[t] + 1].begin <= x) {
          run[t] = run_of(t, run[t] + 1, x);
        }
      }
    }
  }
}

// One guarded set of buffers for calls of `count` inputs, used for every such call of a survey:
// the input a view of the resident inputs (a host op, when they fit), written in place (host
// memory) or from `stage_in` (device memory), the output compared in place or from `stage_out`,
// poisoned again before each next call.
struct Armed {
  std::unique_ptr<impl::Invocation> inv;
  std::size_t count = 0;
  bool host = false;
  const ResidentInputs* resident = nullptr;  // the input is a view of these (never written)
  std::vector<uint32_t> stage_in;
  std::vector<uint8_t> stage_out;

  uint32_t* input() {
    return host ? reinterpret_cast<uint32_t*>(inv->host_data(&impl::Call::a)) : stage_in.data();
  }
};

// claim_runs, built once per (claim, format) in a process: a survey of several ops to one
// format, or one op surveyed again, builds no table twice.
std::optional<std::vector<Run>> cached_claim_runs(const std::string& claim, Format f);

}  // namespace

std::optional<std::vector<Run>> claim_runs(const std::string& claim, Format f) {
  if (claim.rfind("e8m0:", 0) == 0) {
    const auto rule = parse_e8m0_encode(claim.substr(5));
    if (!rule || f != Format::kE8M0) return std::nullopt;
    return build_runs([&](uint32_t b) -> uint32_t { return e8m0_oracle(float_of(b), *rule); }, 0,
                      kAll);
  }
  const Convention* c = find_convention(claim);
  if (c == nullptr) return std::nullopt;
  if (f == Format::kE8M0) {
    if (!c->e8m0) return std::nullopt;
    const E8m0Encode rule = *c->e8m0;
    return build_runs([&](uint32_t b) -> uint32_t { return e8m0_oracle(float_of(b), rule); }, 0,
                      kAll);
  }
  if (!defines(*c, f)) return std::nullopt;
  const bool ieee16 = f == Format::kBF16 || f == Format::kFP16;
  // The policy encode_with uses: FP4 / FP6 / MXINT8 (no specials) take the convention's sub_byte
  // policy, so a survey row and cast.bit_exact hold one claim to the same bytes.
  const EncodeOracle oracle(f, ieee16 ? kIeeeDefault : element_policy(*c, f));
  try {
    return build_runs([&](uint32_t b) { return oracle.expected(pre_cast(*c, f, float_of(b))); }, 0,
                      kAll);
  } catch (const UndefinedEncoding&) {
    // The convention leaves some inputs undefined for this format (OCP MX: NaN to FP4 / FP6): it
    // has no table over all inputs, so no survey row can equal it bit for bit.
    return std::nullopt;
  }
}

namespace {

std::optional<std::vector<Run>> cached_claim_runs(const std::string& claim, Format f) {
  static std::mutex mu;
  static std::map<std::pair<std::string, Format>, std::optional<std::vector<Run>>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(claim, f);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, claim_runs(claim, f)).first;
  return it->second;
}

}  // namespace

std::vector<std::string> claims_for(Format f) {
  std::vector<std::string> out;
  for (const Convention& c : all_conventions()) {
    if (f == Format::kE8M0 ? c.e8m0.has_value() : defines(c, f)) out.emplace_back(c.name);
  }
  if (f == Format::kE8M0) {
    for (E8m0Encode r : all_e8m0_encodes()) out.push_back("e8m0:" + std::string(name(r)));
  }
  return out;
}

std::vector<std::string> CastSurvey::matches() const {
  std::vector<std::string> out;
  for (const ClaimResult& r : results) {
    if (r.mismatches == 0) out.insert(out.end(), r.claims.begin(), r.claims.end());
  }
  return out;
}

std::vector<std::pair<const impl::Op*, impl::Dtype>> survey_targets(const impl::Implementation& im,
                                                                    const gpu::Backend& be) {
  std::vector<std::pair<const impl::Op*, impl::Dtype>> out;
  for (const impl::Op& op : im.ops) {
    if (op.family != impl::Family::kCast) continue;
    if ((op.contract.a_dtypes & impl::dtype_bit(impl::Dtype::kF32)) == 0) continue;
    if (op.memory != impl::Memory::kHost && op.memory != be.memory()) continue;
    for (impl::Dtype d : impl::dtypes_in(op.contract.out_dtypes)) {
      // FP4 / FP6 targets on the host only: the device sweep compares one code per byte.
      if (op.memory == impl::Memory::kHost ? element_cast_format(d).has_value()
                                           : cast_format(d).has_value()) {
        out.emplace_back(&op, d);
      }
    }
  }
  return out;
}

uint64_t survey_input_count(CastInputs inputs) {
  return inputs == CastInputs::kAll ? kAll : 65536 * std::size(kSampleLow);
}

std::string survey_lines(const CastSurvey& s) {
  std::string error = s.error;
  for (char& c : error) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  char head[64];
  std::snprintf(head, sizeof head, "\t%llu\t%.3f\t", static_cast<unsigned long long>(s.inputs),
                s.seconds);
  char setup[64];
  std::snprintf(setup, sizeof setup, "\t%.3f\t%.3f", s.setup_seconds, s.op_seconds);
  std::string out = "cast\t" + s.op + "\t" + std::string(impl::to_string(s.target)) + "\t" +
                    (s.claimed.empty() ? "-" : s.claimed) + head + error + setup + "\n";
  for (const ClaimResult& r : s.results) {
    std::string first;
    if (r.first_input) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "0x%08x (%a): expected 0x%02x, actual 0x%02x", *r.first_input,
                    static_cast<double>(float_of(*r.first_input)), r.expected, r.actual);
      first = buf;
    }
    std::string claims;
    for (const std::string& c : r.claims) claims += (claims.empty() ? "" : ",") + c;
    out += "claim\t" + claims + "\t" + std::to_string(r.mismatches) + "\t" + first + "\n";
  }
  return out;
}

CastSurvey survey_cast(gpu::Backend& be, const impl::Op& op, impl::Dtype target, CastInputs which,
                       uint64_t chunk, const SurveyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (op.family != impl::Family::kCast) throw impl::Unsupported(op.name + " is not a cast op");
  const std::optional<Format> format = element_cast_format(target);
  if (!format) {
    throw impl::Unsupported(std::string(impl::to_string(target)) + " is no cast target format");
  }
  const Format f = *format;
  // E2M1 codes come packed two per byte (the ABI's order); they are compared unpacked.
  const bool packed = f == Format::kE2M1;
  CastSurvey out;
  out.op = op.name;
  out.target = target;
  out.claimed = op.contract.conventions.empty() ? "" : op.contract.conventions.front();
  // Distinct tables: claims with equal expected output share one comparison.
  std::vector<std::vector<Run>> tables;
  for (const std::string& claim : claims_for(f)) {
    auto runs = cached_claim_runs(claim, f);
    if (!runs) continue;
    bool merged = false;
    for (std::size_t i = 0; i < tables.size() && !merged; ++i) {
      const auto same = [](const Run& a, const Run& b) {
        return a.begin == b.begin && a.code == b.code;
      };
      if (tables[i].size() == runs->size() &&
          std::equal(tables[i].begin(), tables[i].end(), runs->begin(), same)) {
        out.results[i].claims.push_back(claim);
        merged = true;
      }
    }
    if (!merged) {
      tables.push_back(std::move(*runs));
      out.results.push_back({{claim}, 0, std::nullopt, 0, 0});
    }
  }
  const std::size_t width = packed ? 1 : impl::dtype_bytes(target);
  chunk = std::max<uint64_t>(
      1, std::min<uint64_t>(chunk, op.contract.k.max ? op.contract.k.max : chunk));
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  const Inputs in(which);
  const uint64_t total = in.count();
  // A host op reads views of the resident inputs when they fit (setup: filled once a process).
  // An op with no backend here (a device op without its device) gets none: the warm-up's
  // Invocation then reports that as the row's error.
  std::shared_ptr<const ResidentInputs> resident;
  try {
    if (impl::backend_for(op, be).memory() == impl::Memory::kHost) {
      resident = ResidentInputs::of(in, which);
    }
  } catch (const impl::Unsupported&) {
  }
  // The calls: [base, base + count) each, at most `chunk` inputs; all inputs are reported to
  // `progress` per call, the sample once at its end.
  std::vector<std::pair<uint64_t, std::size_t>> calls;
  for (uint64_t base = 0; base < total; base += chunk) {
    calls.emplace_back(base, static_cast<std::size_t>(std::min<uint64_t>(chunk, total - base)));
  }
  WorkerPool& pool = WorkerPool::shared();
  // A pass over the elements of a call of `count` in slices, on every core.
  const auto slices_of = [&pool](std::size_t count) { return slices_for(pool, count); };
  const auto slice = [](std::size_t count, std::size_t slices, std::size_t s) {
    return std::make_pair(count * s / slices, count * (s + 1) / slices);
  };
  // The inputs of the call at `base` written into `a`'s input, or (resident) viewed.
  const auto load = [&](Armed& a, uint64_t base) {
    if (a.resident != nullptr) {
      a.inv->input_view(&impl::Call::a, reinterpret_cast<const uint8_t*>(a.resident->at(base)),
                        a.count * 4, 1, a.count, a.count, impl::Dtype::kF32,
                        impl::Layout::kRowMajor);
      return;
    }
    fill_on_pool(pool, in, base, a.input(), a.count);
    if (!a.host) {
      a.inv->refill(&impl::Call::a,
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(a.stage_in.data()),
                                             a.count * 4));
    }
  };
  // Buffers for calls of `count`, holding the inputs of the call at `base`, the output poisoned.
  const auto arm = [&](std::size_t count, uint64_t base) {
    Armed a;
    a.inv = std::make_unique<impl::Invocation>(op, be);
    a.count = count;
    a.resident = resident.get();
    if (a.resident == nullptr) {
      a.inv->input(&impl::Call::a, count * 4, 1, count, count, impl::Dtype::kF32,
                   impl::Layout::kRowMajor);
    }
    a.inv->output(&impl::Call::out, impl::tensor_bytes(target, 1, count), 1, count, count, target,
                  impl::Layout::kRowMajor);
    a.host = a.inv->host_data(&impl::Call::out) != nullptr;
    if (!a.host) a.stage_in.resize(count);
    load(a, base);
    return a;
  };
  const auto run = [](Armed& a) {
    impl::Call call;
    call.m = 1;
    call.k = a.count;
    a.inv->run(call);
  };
  Armed armed;
  // Warm-up: one call on the sweep's first call's inputs, untimed by the sweep (a Triton
  // kernel's compile, a jax.jit per shape, a library's lazy start happen here); its output is
  // not compared. A failure here is the row's error, as in the sweep. Then the same buffers are
  // armed again for the sweep's first call: its inputs rewritten (an op may write its input),
  // its output poisoned.
  try {
    armed = arm(calls.front().second, 0);
    run(armed);
    load(armed, 0);
    armed.inv->repoison(&impl::Call::out);
  } catch (const std::exception& e) {
    out.error = e.what();
    out.setup_seconds = since(t0);
    return out;
  }
  out.setup_seconds = since(t0);
  out.op_seconds = 0;
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<Part> parts;
  std::vector<uint8_t> unpacked;  // packed E2M1's codes, one a byte
  for (std::size_t c = 0; c < calls.size(); ++c) {
    // Named copies, not a structured binding: the lambdas below capture them, which C++20
    // allows but the hip preset's clang does not yet.
    const uint64_t base = calls[c].first;
    const std::size_t count = calls[c].second;
    try {
      if (armed.count != count) {
        armed = Armed{};
        armed = arm(count, base);
      } else if (armed.resident != nullptr) {
        load(armed, base);
      }
      const auto t_op = std::chrono::steady_clock::now();
      run(armed);
      out.op_seconds += since(t_op);
      if (!armed.host) {
        armed.stage_out = armed.inv->read(&impl::Call::out);
        armed.inv->repoison(&impl::Call::out);
      }
    } catch (const std::exception& e) {
      out.error = e.what();
      out.seconds = since(t1);
      return out;
    }
    // One pass on every core, a task per slice: each distinct table compared with the slice of
    // the output in place; then, when the next call uses these buffers, the slice poisoned again
    // and (inputs not resident) its inputs written for the next call. The slices' counts add up
    // and the lowest slice's first mismatch is the call's (inputs ascend).
    const bool again = c + 1 < calls.size() && calls[c + 1].second == count;
    const uint64_t next_base = again ? calls[c + 1].first : 0;
    // Packed E2M1 (two codes a byte, the ABI's order) is compared unpacked, each slice unpacking
    // its elements first; its bytes are poisoned again after the pass (a byte can hold the last
    // element of one slice and the first of the next).
    const uint8_t* raw =
        armed.host ? armed.inv->host_data(&impl::Call::out) : armed.stage_out.data();
    if (packed) unpacked.resize(count);
    const uint8_t* codes = packed ? unpacked.data() : raw;
    uint8_t* poison =
        armed.host && again && !packed ? armed.inv->host_data(&impl::Call::out) : nullptr;
    uint32_t* next_in = again && armed.resident == nullptr ? armed.input() : nullptr;
    const std::size_t slices = slices_of(count);
    parts.assign(slices * tables.size(), Part{});
    pool.run(slices, [&](std::size_t s) {
      const auto [lo, hi] = slice(count, slices, s);
      if (packed) {
        for (std::size_t i = lo; i < hi; ++i) unpacked[i] = (raw[i / 2] >> (4 * (i % 2))) & 0xF;
      }
      compare_slice(codes, width, in, base, lo, hi, tables, parts.data() + s * tables.size());
      if (poison != nullptr) std::memset(poison + lo * width, gpu::kPoisonByte, (hi - lo) * width);
      if (next_in != nullptr) in.fill(next_base + lo, next_in + lo, hi - lo);
    });
    if (again && (!armed.host || packed)) {
      try {
        if (armed.host) armed.inv->repoison(&impl::Call::out);
        if (!armed.host) {
          armed.inv->refill(
              &impl::Call::a,
              std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(armed.stage_in.data()),
                                       count * 4));
        }
      } catch (const std::exception& e) {
        out.error = e.what();
        out.seconds = since(t1);
        return out;
      }
    }
    for (std::size_t s = 0; s < slices; ++s) {
      for (std::size_t t = 0; t < tables.size(); ++t) {
        const Part& p = parts[s * tables.size() + t];
        ClaimResult& r = out.results[t];
        if (p.first && !r.first_input) {
          r.first_input = p.first;
          r.expected = p.expected;
          r.actual = p.actual;
        }
        r.mismatches += p.mismatches;
      }
    }
    out.inputs += count;
    if (which == CastInputs::kSample && out.inputs < total) continue;
    if (progress && !progress(out.inputs, total) && out.inputs < total) {
      out.error = "interrupted (Ctrl-C) after " + std::to_string(out.inputs) + " of " +
                  std::to_string(total) + " inputs";
      break;
    }
  }
  out.seconds = since(t1);
  return out;
}

}  // namespace mxgate::properties
