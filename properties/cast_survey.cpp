#include "properties/cast_survey.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <span>
#include <thread>

#include "impl/harness.h"
#include "properties/cast_values.h"
#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/fp_encode.h"

namespace mxgate::properties {
namespace {

constexpr uint64_t kAll = uint64_t{1} << 32;
constexpr uint16_t kSampleLow[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};

// The inputs of chunk `i` (ascending) and whether there is one.
bool chunk_inputs(CastInputs which, uint64_t chunk, uint64_t i, std::vector<uint32_t>& out) {
  out.clear();
  if (which == CastInputs::kAll) {
    const uint64_t lo = i * chunk;
    if (lo >= kAll) return false;
    const uint64_t hi = std::min(kAll, lo + chunk);
    out.resize(hi - lo);
    std::iota(out.begin(), out.end(), static_cast<uint32_t>(lo));
    return true;
  }
  if (i > 0) return false;
  out.reserve(65536 * std::size(kSampleLow));
  for (uint32_t high = 0; high < 65536; ++high) {
    for (uint16_t low : kSampleLow) out.push_back(high << 16 | low);
  }
  return true;
}

// One slice's count of outputs that differ from a claim's table, and its first.
struct Part {
  uint64_t mismatches = 0;
  std::optional<uint32_t> first;
  uint32_t expected = 0, actual = 0;
};

// Outputs [j, k) of `raw` (elements of T, the target's width) against one run's code `want`, in
// one vectorizable pass; the first difference goes to `p` when it has none yet. Returns the count.
template <class T>
uint64_t count_differing(const std::vector<uint8_t>& raw, std::size_t j, std::size_t k,
                         uint32_t want, Part& p, const std::vector<uint32_t>& in) {
  const T* a = reinterpret_cast<const T*>(raw.data()) + j;
  const T* b = reinterpret_cast<const T*>(raw.data()) + k;
  const T w = static_cast<T>(want);
  const auto differs = [w](T c) { return c != w; };
  const auto bad = static_cast<uint64_t>(std::count_if(a, b, differs));
  if (bad != 0 && p.mismatches == 0) {
    const T* f = std::find_if(a, b, differs);
    p.first = in[j + static_cast<std::size_t>(f - a)];
    p.expected = want;
    p.actual = *f;
  }
  return bad;
}

// Packed E2M1 codes, element 2i in the low nibble of byte i: one code per byte.
std::vector<uint8_t> unpack_nibbles(const std::vector<uint8_t>& packed, std::size_t count) {
  std::vector<uint8_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = (packed[i / 2] >> (4 * (i % 2))) & 0xF;
  return out;
}

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
  char setup[32];
  std::snprintf(setup, sizeof setup, "\t%.3f", s.setup_seconds);
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
  std::vector<uint32_t> in;
  // Warm-up: one call on the sweep's first call's inputs, untimed by the sweep (a Triton
  // kernel's compile, a jax.jit per shape, a library's lazy start happen here); its output is
  // not compared. A failure here is the row's error, as in the sweep.
  if (chunk_inputs(which, chunk, 0, in)) {
    const std::size_t count = std::min<std::size_t>(in.size(), chunk);
    try {
      impl::Invocation inv(op, be);
      inv.input(&impl::Call::a,
                std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), count * 4), 1,
                count, count, impl::Dtype::kF32, impl::Layout::kRowMajor);
      inv.output(&impl::Call::out, impl::tensor_bytes(target, 1, count), 1, count, count, target,
                 impl::Layout::kRowMajor);
      impl::Call call;
      call.m = 1;
      call.k = count;
      inv.run(call);
      (void)inv.read(&impl::Call::out);
    } catch (const std::exception& e) {
      out.error = e.what();
      out.setup_seconds = since(t0);
      return out;
    }
  }
  out.setup_seconds = since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; chunk_inputs(which, chunk, i, in); ++i) {
    // The harness takes at most the contract's K per call: split the chunk. The inputs go to
    // the harness as they are (their bytes), the outputs stay the op's bytes, compared in place.
    const std::size_t per = std::min<std::size_t>(in.size(), chunk);
    std::vector<uint8_t> raw;
    for (std::size_t at = 0; at < in.size(); at += per) {
      const std::size_t count = std::min(per, in.size() - at);
      const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(in.data() + at),
                                           count * 4);
      try {
        impl::Invocation inv(op, be);
        inv.input(&impl::Call::a, bytes, 1, count, count, impl::Dtype::kF32,
                  impl::Layout::kRowMajor);
        inv.output(&impl::Call::out, impl::tensor_bytes(target, 1, count), 1, count, count, target,
                   impl::Layout::kRowMajor);
        impl::Call call;
        call.m = 1;
        call.k = count;
        inv.run(call);
        std::vector<uint8_t> got = inv.read(&impl::Call::out);
        if (packed) got = unpack_nibbles(got, count);
        if (at == 0 && count == in.size()) {
          raw = std::move(got);
        } else {
          raw.insert(raw.end(), got.begin(),
                     got.begin() + static_cast<std::ptrdiff_t>(count * width));
        }
      } catch (const std::exception& e) {
        out.error = e.what();
        out.seconds = since(t1);
        return out;
      }
    }
    // Every distinct table over slices of the chunk, on the host's cores: each task walks one
    // slice for one table; the slices' counts add up and the lowest slice's first mismatch is
    // the chunk's (inputs ascend).
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t slices = std::max<std::size_t>(
        1, (cores + tables.size() - 1) / std::max<std::size_t>(1, tables.size()));
    std::vector<Part> parts(tables.size() * slices);
    const auto compare = [&](std::size_t task) {
      const std::size_t t = task % tables.size(), s = task / tables.size();
      const std::size_t lo = in.size() * s / slices, hi = in.size() * (s + 1) / slices;
      if (lo >= hi) return;
      const std::vector<Run>& runs = tables[t];
      Part& p = parts[task];
      // Run by run (inputs ascend): the slice's elements whose input lies in one run form one
      // index range, compared with the run's code in one vectorizable pass.
      const auto by_begin = [](uint64_t x, const Run& ru) { return x < ru.begin; };
      std::size_t run = static_cast<std::size_t>(
          std::upper_bound(runs.begin(), runs.end(), uint64_t{in[lo]}, by_begin) - runs.begin() -
          1);
      for (std::size_t j = lo; j < hi;) {
        const uint64_t run_end = run + 1 < runs.size() ? runs[run + 1].begin : kAll;
        const std::size_t k =
            run_end > in[hi - 1]
                ? hi
                : static_cast<std::size_t>(
                      std::lower_bound(in.begin() + static_cast<std::ptrdiff_t>(j),
                                       in.begin() + static_cast<std::ptrdiff_t>(hi), run_end,
                                       [](uint32_t x, uint64_t e) { return uint64_t{x} < e; }) -
                      in.begin());
        const uint32_t want = runs[run].code;
        const auto bad = width == 1   ? count_differing<uint8_t>(raw, j, k, want, p, in)
                         : width == 2 ? count_differing<uint16_t>(raw, j, k, want, p, in)
                                      : count_differing<uint32_t>(raw, j, k, want, p, in);
        p.mismatches += bad;
        j = k;
        if (j < hi) {
          run = static_cast<std::size_t>(
              std::upper_bound(runs.begin() + static_cast<std::ptrdiff_t>(run + 1), runs.end(),
                               uint64_t{in[j]}, by_begin) -
              runs.begin() - 1);
        }
      }
    };
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
      for (std::size_t k = next++; k < parts.size(); k = next++) compare(k);
    };
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < std::min(cores, parts.size()); ++i) threads.emplace_back(worker);
    worker();
    for (std::thread& th : threads) th.join();
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
    out.inputs += in.size();
    const uint64_t total = survey_input_count(which);
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
