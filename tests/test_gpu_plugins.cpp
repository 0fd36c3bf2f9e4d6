// Covers the shipped NVIDIA plugins (plugins/cuda_fp8, plugins/cublaslt), loaded through dlopen
// and driven through the plugin C ABI only (include/mxgate/plugin.h):
//   - both descriptors: ABI version, op names, families, contracts (runs without a GPU);
//   - every cuda_fp8 cast op swept over all 2^32 fp32 inputs on the device against its claimed
//     convention (gpu/kernels/cast_sweep), mismatches compared with the figures measured on the
//     H200 and documented in docs/nvidia.md §5;
//   - every cuBLASLt GEMM op on exact-mode data (bit-exact against reference/gemm_oracle.h),
//     on general data (max relative error vs fp64 and bound verdicts), the scale-layout
//     fingerprint (every scale block its own power of two, so a misplaced one is located),
//     M / N / K residues, and guard bands around every buffer;
//   - the Hopper FP8 accumulator probe through cuBLASLt (Fasi et al., PeerJ CS 2021 method).
// Every GPU test SKIPS when no CUDA device is present (decided by cudaGetDeviceCount alone).
// Not covered: the mxgate loader and property runner over these ops (impl branch), speed
// (bench/bench_gpu_cast_sweep.cpp). Reproduce any case: MXGATE_SEED=<seed printed>
// build/cuda/tests/test_gpu_plugins --gtest_filter=<test>.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/blocks.h"
#include "gpu/kernels/cast_sweep/cast_sweep.h"
#include "mxgate/plugin.h"
#include "reference/convention.h"
#include "reference/e8m0.h"
#include "reference/format.h"
#include "reference/fp_encode.h"
#include "reference/gemm_oracle.h"
#include "reference/verdict.h"

namespace mxgate {
namespace {

// ---- What the H200 measured (docs/nvidia.md). A change here is a change of documented fact. ----

// Mismatches of each cast op's exhaustive sweep against its claimed convention (docs/nvidia.md
// §5.1).
const std::map<std::string, uint64_t> kCastMismatches = {
    {"e4m3_satfinite", 0},    {"e4m3_nosat", 0},    {"e5m2_satfinite", 0},    {"e5m2_nosat", 0},
    {"e8m0_rz_satfinite", 0}, {"e8m0_rz_nosat", 0}, {"e8m0_rp_satfinite", 0}, {"e8m0_rp_nosat", 0},
};

// The Hopper FP8 accumulation through cuBLASLt (docs/nvidia.md §4): significant bits kept
// relative to the largest term inside a promotion chunk, how the dropped bits go, and the K
// chunk after which partials are promoted to fp32.
constexpr int kAccumBitsKept = 14;
constexpr const char* kAccumRounding = "truncate";
constexpr int kAccumChunk = 128;

uint64_t base_seed() {
  const char* s = std::getenv("MXGATE_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 1;
}

// ---- Loading the plugins ----------------------------------------------------------------------

std::string exe_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

// MXGATE_PLUGIN_DIR/libmxgate_<name>.so, else the build tree next to this binary.
std::string plugin_path(const std::string& name) {
  if (const char* dir = std::getenv("MXGATE_PLUGIN_DIR")) {
    return std::string(dir) + "/libmxgate_" + name + ".so";
  }
  return exe_dir() + "/../plugins/" + name + "/libmxgate_" + name + ".so";
}

struct Loaded {
  std::string path;
  std::string error;
  const mxgate_plugin* plugin = nullptr;
  bool init_done = false;
  std::string init_error;
};

Loaded& load(const std::string& name) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  Loaded& l = cache[name];
  l.path = plugin_path(name);
  void* h = dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    l.error = std::string("dlopen: ") + dlerror();
    return l;
  }
  auto entry = reinterpret_cast<mxgate_plugin_entry_fn>(dlsym(h, MXGATE_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    l.error = std::string("dlsym ") + MXGATE_PLUGIN_ENTRY_SYMBOL + ": " + dlerror();
    return l;
  }
  l.plugin = entry();
  if (l.plugin == nullptr) l.error = "entry point returned NULL";
  return l;
}

// The plugin after init(); empty error string when ready.
const mxgate_plugin* ready(const std::string& name, std::string* error) {
  Loaded& l = load(name);
  if (!l.error.empty()) {
    *error = l.path + ": " + l.error;
    return nullptr;
  }
  if (!l.init_done) {
    l.init_done = true;
    const char* why = l.plugin->init ? l.plugin->init() : nullptr;
    if (why != nullptr) l.init_error = why;
  }
  if (!l.init_error.empty()) {
    *error = l.init_error;
    return nullptr;
  }
  return l.plugin;
}

std::vector<const mxgate_op*> ops_of(const mxgate_plugin* p) {
  std::vector<const mxgate_op*> out;
  for (uint32_t i = 0; i < p->impl_count; ++i) {
    for (uint32_t j = 0; j < p->impls[i].op_count; ++j) out.push_back(&p->impls[i].ops[j]);
  }
  return out;
}

bool device_present() { return sweep::CastSweeper::device_present(); }

class GpuPlugins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_present()) GTEST_SKIP() << "no CUDA device";
  }
  const mxgate_plugin* plugin(const std::string& name) {
    std::string error;
    const mxgate_plugin* p = ready(name, &error);
    EXPECT_NE(p, nullptr) << name << ": " << error;
    return p;
  }
};

// ---- Device buffers with guard bands -----------------------------------------------------------

constexpr size_t kGuard = 256;  // keeps the payload 16-byte aligned

uint8_t guard_byte(size_t j) { return static_cast<uint8_t>(0x5Au ^ (j * 13u)); }

class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, uint8_t poison) : bytes_(bytes) {
    const size_t payload = (bytes + 15) / 16 * 16;
    total_ = payload + 2 * kGuard;
    if (cudaMalloc(&base_, total_) != cudaSuccess) throw std::runtime_error("cudaMalloc");
    std::vector<uint8_t> host(total_, poison);
    for (size_t j = 0; j < kGuard; ++j) {
      host[j] = guard_byte(j);
      host[total_ - kGuard + j] = guard_byte(j + kGuard);
    }
    cudaMemcpy(base_, host.data(), total_, cudaMemcpyHostToDevice);
  }
  ~DeviceBuffer() { cudaFree(base_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return static_cast<uint8_t*>(base_) + kGuard; }
  size_t bytes() const { return bytes_; }
  void upload(const void* src, size_t n) { cudaMemcpy(data(), src, n, cudaMemcpyHostToDevice); }
  void download(void* dst, size_t n) const { cudaMemcpy(dst, data(), n, cudaMemcpyDeviceToHost); }
  bool guards_intact() const {
    std::vector<uint8_t> host(total_);
    cudaMemcpy(host.data(), base_, total_, cudaMemcpyDeviceToHost);
    for (size_t j = 0; j < kGuard; ++j) {
      if (host[j] != guard_byte(j) || host[total_ - kGuard + j] != guard_byte(j + kGuard)) {
        return false;
      }
    }
    return true;
  }

 private:
  void* base_ = nullptr;
  size_t bytes_;
  size_t total_;
};

// ---- Cast ops: the exhaustive sweep ------------------------------------------------------------

mxgate_dtype cast_target(const mxgate_op& op) {
  for (uint32_t d = 1; d < 64; ++d) {
    if (op.contract.out_dtypes & MXGATE_DTYPE_BIT(d)) return static_cast<mxgate_dtype>(d);
  }
  return MXGATE_DTYPE_NONE;
}

// MXGATE_SWEEP_INPUTS=N sweeps only inputs [0, N) (compute-sanitizer runs); default all 2^32.
uint64_t sweep_end() {
  const char* s = std::getenv("MXGATE_SWEEP_INPUTS");
  const uint64_t all = uint64_t{1} << 32;
  return s ? std::min<uint64_t>(all, std::strtoull(s, nullptr, 0)) : all;
}

// All 2^32 inputs resident (16 GiB, generated once); a limited sweep regenerates small chunks,
// so sanitizer runs do not instrument a 2^32-element fill.
sweep::CastSweeper& sweeper() {
  const bool all = sweep_end() == uint64_t{1} << 32;
  static sweep::CastSweeper s(all ? uint64_t{1} << 28 : uint64_t{1} << 20, all);
  return s;
}

void print_ranges(const sweep::SweepResult& r, size_t limit) {
  for (size_t i = 0; i < r.ranges.size() && i < limit; ++i) {
    const sweep::MismatchRange& g = r.ranges[i];
    std::printf(
        "    inputs 0x%08x..0x%08x (%a .. %a, %llu values): expected 0x%02x, got 0x%02x\n", g.first,
        g.last, static_cast<double>(float_of(g.first)), static_cast<double>(float_of(g.last)),
        static_cast<unsigned long long>(uint64_t{g.last} - g.first + 1), g.expected, g.actual);
  }
  if (r.ranges.size() > limit) std::printf("    ... %zu ranges in all\n", r.ranges.size());
}

// Every cast op through all 2^32 inputs against its claimed convention: the mismatch count is
// what the H200 measured (a change means the library or the reference moved), and the
// mismatching ranges are printed as the finding.
TEST_F(GpuPlugins, CastOpsExhaustiveAgainstClaim) {
  const mxgate_plugin* p = plugin("cuda_fp8");
  ASSERT_NE(p, nullptr);
  std::printf("sweep: inputs %s, chunk 2^%d, one-time input fill %.2f ms\n",
              sweeper().inputs_resident() ? "resident" : "regenerated per chunk",
              static_cast<int>(std::log2(static_cast<double>(sweeper().chunk()))),
              sweeper().fill_ms());
  for (const mxgate_op* op : ops_of(p)) {
    ASSERT_EQ(op->family, MXGATE_OP_CAST) << op->name;
    const mxgate_dtype out = cast_target(*op);
    std::string why;
    const auto table = sweep::expected_runs(op->contract.convention, out, &why);
    ASSERT_TRUE(table.has_value())
        << op->name << " claims '" << op->contract.convention << "': " << why;
    const sweep::SweepResult r = sweeper().sweep(*op, out, *table, 0, sweep_end());
    std::printf("SWEEP %-18s vs %-32s %zu runs: %s\n", op->name, table->describes.c_str(),
                table->begin.size(), r.summary().c_str());
    print_ranges(r, 40);
    EXPECT_EQ(r.status, MXGATE_DONE) << op->name << ": " << r.message;
    EXPECT_EQ(r.checked, sweep_end()) << op->name;
    EXPECT_FALSE(r.guard_damaged) << op->name << " wrote outside its output";
    const auto documented = kCastMismatches.find(op->name);
    ASSERT_NE(documented, kCastMismatches.end()) << op->name << " has no documented figure";
    if (sweep_end() == uint64_t{1} << 32) {
      EXPECT_EQ(r.mismatches, documented->second)
          << op->name << " vs " << table->describes << ": " << r.summary()
          << " (documented in docs/nvidia.md §5.1)";
    } else {
      EXPECT_LE(r.mismatches, documented->second) << op->name << ": " << r.summary();
    }
  }
}

// Which existing conventions / e8m0 rules each cast op matches bit for bit over all 2^32 inputs:
// the evidence behind each claim (an op that matches none is a finding, not a new convention).
TEST_F(GpuPlugins, CastOpsAgainstEveryConvention) {
  const mxgate_plugin* p = plugin("cuda_fp8");
  ASSERT_NE(p, nullptr);
  for (const mxgate_op* op : ops_of(p)) {
    const mxgate_dtype out = cast_target(*op);
    std::vector<std::string> claims;
    for (const Convention& c : all_conventions()) claims.emplace_back(c.name);
    if (out == MXGATE_DTYPE_E8M0) {
      for (E8m0Encode r : all_e8m0_encodes()) claims.push_back("e8m0:" + std::string(name(r)));
    }
    std::string matches;
    size_t swept = 0;
    for (const std::string& claim : claims) {
      const auto table = sweep::expected_runs(claim, out);
      if (!table) continue;  // the convention does not define this format
      const sweep::SweepResult r = sweeper().sweep(*op, out, *table);
      ASSERT_EQ(r.status, MXGATE_DONE) << op->name << ": " << r.message;
      ++swept;
      std::printf("MATCH %-18s %-28s %llu mismatches in %zu%s ranges\n", op->name, claim.c_str(),
                  static_cast<unsigned long long>(r.mismatches), r.ranges.size(),
                  r.ranges_truncated ? "+" : "");
      if (r.mismatches == 0) matches += (matches.empty() ? "" : ", ") + claim;
    }
    EXPECT_GT(swept, 0u) << op->name;
    std::printf("MATCHES %-18s claims %-18s bit-exact with: %s\n", op->name,
                op->contract.convention, matches.empty() ? "(none)" : matches.c_str());
  }
}

// ---- GEMM ops ----------------------------------------------------------------------------------

std::optional<Format> element_format(uint32_t d) {
  if (d == MXGATE_DTYPE_E4M3FN) return Format::kE4M3FN;
  if (d == MXGATE_DTYPE_E5M2) return Format::kE5M2;
  return std::nullopt;
}

uint32_t first_bit(uint64_t mask) {
  for (uint32_t i = 0; i < 64; ++i) {
    if (mask & (uint64_t{1} << i)) return i;
  }
  return 0;
}

struct GemmShape {
  size_t m, n, k;
};

struct Grid {
  size_t rows, cols;
};

Grid scale_grid(uint32_t block_rows, uint32_t block_cols, size_t rows, size_t k) {
  return {block_rows ? ceil_div(rows, block_rows) : 1, block_cols ? ceil_div(k, block_cols) : 1};
}

// An op's view of one GEMM: element formats, output, scale grids and block sizes.
struct GemmOpInfo {
  Format fa, fb;
  OutputFormat out;
  bool scaled;
  BlockSizes blocks(const GemmShape& s, const mxgate_contract& c) const {
    return {c.a_block_rows ? c.a_block_rows : s.m, c.a_block_cols ? c.a_block_cols : s.k,
            c.b_block_rows ? c.b_block_rows : s.n, c.b_block_cols ? c.b_block_cols : s.k};
  }
};

GemmOpInfo info_of(const mxgate_op& op) {
  GemmOpInfo i{};
  i.fa = *element_format(first_bit(op.contract.a_dtypes));
  i.fb = *element_format(first_bit(op.contract.b_dtypes));
  i.out = first_bit(op.contract.out_dtypes) == MXGATE_DTYPE_BF16 ? OutputFormat::kBf16
                                                                 : OutputFormat::kFp32;
  i.scaled = op.contract.scale_dtype == MXGATE_DTYPE_F32;
  return i;
}

bool in_contract(const mxgate_contract& c, const GemmShape& s) {
  auto ok = [](uint64_t v, uint64_t align, uint64_t lo, uint64_t hi) {
    return (align <= 1 || v % align == 0) && v >= std::max<uint64_t>(lo, 1) && (hi == 0 || v <= hi);
  };
  return ok(s.m, c.m_align, c.m_min, c.m_max) && ok(s.n, c.n_align, c.n_min, c.n_max) &&
         ok(s.k, c.k_align, c.k_min, c.k_max);
}

// A GEMM case as codes and logical (row-major) fp32 scale grids, plus its decoded problem.
struct GemmCase {
  GemmShape s;
  std::vector<uint8_t> a, b;  // codes, M x K and N x K row-major
  GemmProblem problem;        // decoded values and the same scale grids
};

GemmCase make_case(const mxgate_op& op, const GemmShape& s) {
  const GemmOpInfo i = info_of(op);
  GemmCase c;
  c.s = s;
  c.a.assign(s.m * s.k, 0);
  c.b.assign(s.n * s.k, 0);
  c.problem = make_gemm_problem(s.m, s.n, s.k, i.blocks(s, op.contract), true);
  return c;
}

void set_a(GemmCase& c, Format f, size_t row, size_t kk, float v) {
  c.a[row * c.s.k + kk] = static_cast<uint8_t>(encode(f, v, EncodePolicy{}));
  c.problem.a_at(row, kk) = decode(f, c.a[row * c.s.k + kk]);
}
void set_b(GemmCase& c, Format f, size_t col, size_t kk, float v) {
  c.b[col * c.s.k + kk] = static_cast<uint8_t>(encode(f, v, EncodePolicy{}));
  c.problem.b_at(col, kk) = decode(f, c.b[col * c.s.k + kk]);
}

struct GemmRun {
  mxgate_status status = MXGATE_ERROR;
  std::string message;
  GemmOutput out;
  bool guards_ok = true;
};

// The scale grid in the first layout the op accepts, padding poisoned with NaN (a kernel that
// reads padding turns its outputs NaN).
std::vector<float> pack_scale(const std::vector<float>& logical, Grid g, uint32_t layout,
                              uint32_t ld_align, uint64_t* ld_out) {
  const bool col = layout == MXGATE_LAYOUT_COL_MAJOR;
  const size_t packed = col ? g.rows : g.cols;
  const size_t ld = ld_align > 1 ? ceil_div(packed, ld_align) * ld_align : packed;
  const size_t outer = col ? g.cols : g.rows;
  std::vector<float> out(outer * ld, std::nanf(""));
  for (size_t r = 0; r < g.rows; ++r) {
    for (size_t c = 0; c < g.cols; ++c) {
      out[col ? c * ld + r : r * ld + c] = logical[r * g.cols + c];
    }
  }
  *ld_out = ld;
  return out;
}

mxgate_tensor tensor(const DeviceBuffer& d, uint64_t rows, uint64_t cols, uint64_t ld,
                     uint32_t dtype, uint32_t layout) {
  mxgate_tensor t;
  std::memset(&t, 0, sizeof t);
  t.data = d.data();
  t.bytes = d.bytes();
  t.rows = rows;
  t.cols = cols;
  t.ld = ld;
  t.dtype = dtype;
  t.layout = layout;
  return t;
}

cudaStream_t test_stream() {
  static cudaStream_t s = [] {
    cudaStream_t st = nullptr;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    return st;
  }();
  return s;
}

GemmRun run_gemm(const mxgate_op& op, const GemmCase& c) {
  const mxgate_contract& k = op.contract;
  const GemmOpInfo i = info_of(op);
  const GemmShape& s = c.s;
  const Grid ga{c.problem.a_scale_rows(), c.problem.a_scale_cols()};
  const Grid gb{c.problem.b_scale_rows(), c.problem.b_scale_cols()};
  const uint32_t la = first_bit(k.a_scale_layouts), lb = first_bit(k.b_scale_layouts);
  uint64_t lda_s = 0, ldb_s = 0;
  const std::vector<float> sa = pack_scale(c.problem.a_scale, ga, la, k.a_scale_ld_align, &lda_s);
  const std::vector<float> sb = pack_scale(c.problem.b_scale, gb, lb, k.b_scale_ld_align, &ldb_s);
  const size_t out_size = i.out == OutputFormat::kBf16 ? 2 : 4;
  DeviceBuffer A(c.a.size(), 0), B(c.b.size(), 0), SA(sa.size() * 4, 0), SB(sb.size() * 4, 0),
      Y(s.m * s.n * out_size, 0xFF);
  A.upload(c.a.data(), c.a.size());
  B.upload(c.b.data(), c.b.size());
  SA.upload(sa.data(), sa.size() * 4);
  SB.upload(sb.data(), sb.size() * 4);
  mxgate_call call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.family = MXGATE_OP_GEMM_BLOCK;
  call.m = s.m;
  call.n = s.n;
  call.k = s.k;
  call.a = tensor(A, s.m, s.k, 0, first_bit(k.a_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.b = tensor(B, s.n, s.k, 0, first_bit(k.b_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.a_scale = tensor(SA, ga.rows, ga.cols, lda_s, MXGATE_DTYPE_F32, la);
  call.b_scale = tensor(SB, gb.rows, gb.cols, ldb_s, MXGATE_DTYPE_F32, lb);
  call.out = tensor(Y, s.m, s.n, 0, first_bit(k.out_dtypes), MXGATE_LAYOUT_ROW_MAJOR);
  call.stream = test_stream();
  GemmRun r;
  char message[4096] = {0};
  r.status = op.run(op.state, &call, message, sizeof message);
  r.message = message;
  if (r.status != MXGATE_DONE) return r;
  const cudaError_t e = cudaStreamSynchronize(test_stream());
  if (e != cudaSuccess) {
    r.status = MXGATE_ERROR;
    r.message = std::string("after the call: ") + cudaGetErrorString(e);
    return r;
  }
  r.out.rows = s.m;
  r.out.cols = s.n;
  r.out.format = i.out;
  if (i.out == OutputFormat::kFp32) {
    r.out.fp32.resize(s.m * s.n);
    Y.download(r.out.fp32.data(), r.out.fp32.size() * 4);
  } else {
    r.out.bf16.resize(s.m * s.n);
    Y.download(r.out.bf16.data(), r.out.bf16.size() * 2);
  }
  r.guards_ok = A.guards_intact() && B.guards_intact() && SA.guards_intact() &&
                SB.guards_intact() && Y.guards_intact();
  return r;
}

double value_at(const GemmOutput& o, size_t r, size_t c) {
  if (o.format == OutputFormat::kFp32) return o.fp32[r * o.cols + c];
  return float_of_bf16(o.bf16[r * o.cols + c]);
}

BitExactVerdict compare_exact(const GemmOutput& want, const GemmOutput& got) {
  return want.format == OutputFormat::kFp32
             ? compare_fp32(want.rows, want.cols, want.fp32, got.fp32)
             : compare_bf16(want.rows, want.cols, want.bf16, got.bf16);
}

// Exact-mode operands small enough for ANY accumulator of at least 11 bits: integers in
// {-3..3} (|a b| <= 9, a 128-chunk sums to at most 1152 < 2^11), power-of-two scales 2^[-2, 2].
GemmCase exact_case(const mxgate_op& op, const GemmShape& s, uint64_t seed) {
  const GemmOpInfo i = info_of(op);
  GemmCase c = make_case(op, s);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> v(-3, 3), e(-2, 2);
  for (size_t r = 0; r < s.m; ++r) {
    for (size_t kk = 0; kk < s.k; ++kk) set_a(c, i.fa, r, kk, static_cast<float>(v(rng)));
  }
  for (size_t r = 0; r < s.n; ++r) {
    for (size_t kk = 0; kk < s.k; ++kk) set_b(c, i.fb, r, kk, static_cast<float>(v(rng)));
  }
  for (float& x : c.problem.a_scale) x = std::ldexp(1.0f, e(rng));
  for (float& x : c.problem.b_scale) x = std::ldexp(1.0f, e(rng));
  return c;
}

std::string shape_text(const GemmShape& s) {
  return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

// The first shapes of `candidates` inside the op's contract.
std::vector<GemmShape> shapes_in_contract(const mxgate_op& op,
                                          const std::vector<GemmShape>& candidates, size_t want) {
  std::vector<GemmShape> out;
  for (const GemmShape& s : candidates) {
    if (out.size() < want && in_contract(op.contract, s)) out.push_back(s);
  }
  return out;
}

// Every GEMM op on exact-mode data is bit-exact with the oracle rounded once: a correct kernel
// equals it whatever its summation order (a dropped K block, a misread scale or a wrong output
// rounding shows as a located element).
TEST_F(GpuPlugins, GemmExactModeSmallMagnitudes) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  const std::vector<GemmShape> candidates = {{64, 256, 2048}, {16, 128, 512}, {8, 136, 400},
                                             {4, 264, 272},   {32, 64, 128},  {4, 8, 16}};
  for (const mxgate_op* op : ops_of(p)) {
    for (const GemmShape& s : shapes_in_contract(*op, candidates, 4)) {
      const uint64_t seed = base_seed() * 1000003u + s.m * 7919u + s.n * 131u + s.k;
      GemmCase c = exact_case(*op, s, seed);
      std::string why;
      ASSERT_TRUE(is_exact_mode(c.problem, &why)) << why;
      const GemmRun r = run_gemm(*op, c);
      if (r.status != MXGATE_DONE) {
        std::printf("EXACT %-24s %-22s %s\n", op->name, shape_text(s).c_str(),
                    r.message.substr(0, 400).c_str());
        ADD_FAILURE() << op->name << " " << shape_text(s)
                      << " declined or failed a case inside its contract: " << r.message;
        continue;
      }
      EXPECT_TRUE(r.guards_ok) << op->name << " " << shape_text(s) << ": guard band damaged";
      const BitExactVerdict v = compare_exact(exact_gemm(c.problem, info_of(*op).out), r.out);
      std::printf("EXACT %-24s %-22s seed=%llu %s [%s]\n", op->name, shape_text(s).c_str(),
                  static_cast<unsigned long long>(seed), v.summary().c_str(), r.message.c_str());
      EXPECT_TRUE(v.ok()) << op->name << " " << shape_text(s) << ": " << v.summary()
                          << "\nreproduce: MXGATE_SEED=" << base_seed()
                          << " test_gpu_plugins --gtest_filter=*GemmExactMode*";
    }
  }
}

// General data (e4m3 / e5m2 codes of normal(0, 64) values, random positive fp32 scales): the
// error vs the exact fp64 result and the bound verdicts. fp32_rn (every addition fp32 RN) is
// today's default model and is NOT expected to hold for Hopper FP8 (docs/nvidia.md §4.2); the
// manual model with the measured accumulator precision (docs/nvidia.md §4) must hold for a correct
// kernel.
TEST_F(GpuPlugins, GemmGeneralDataErrorStatistics) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  const std::vector<GemmShape> candidates = {{64, 256, 2048}, {128, 136, 1040}};
  for (const mxgate_op* op : ops_of(p)) {
    const GemmOpInfo info = info_of(*op);
    for (const GemmShape& s : shapes_in_contract(*op, candidates, 2)) {
      const uint64_t seed = base_seed() * 7777u + s.k;
      GemmCase c = make_case(*op, s);
      std::mt19937_64 rng(seed);
      std::normal_distribution<float> val(0.0f, 64.0f);
      std::uniform_real_distribution<float> sc(0.001f, 0.01f);
      const EncodePolicy sat{Rounding::kNearestEven, Overflow::kSaturate, NanPolicy::kCanonical};
      for (size_t r = 0; r < s.m; ++r) {
        for (size_t kk = 0; kk < s.k; ++kk) {
          c.a[r * s.k + kk] = static_cast<uint8_t>(encode(info.fa, val(rng), sat));
          c.problem.a_at(r, kk) = decode(info.fa, c.a[r * s.k + kk]);
        }
      }
      for (size_t r = 0; r < s.n; ++r) {
        for (size_t kk = 0; kk < s.k; ++kk) {
          c.b[r * s.k + kk] = static_cast<uint8_t>(encode(info.fb, val(rng), sat));
          c.problem.b_at(r, kk) = decode(info.fb, c.b[r * s.k + kk]);
        }
      }
      for (float& x : c.problem.a_scale) x = sc(rng);
      for (float& x : c.problem.b_scale) x = sc(rng);
      const GemmRun r = run_gemm(*op, c);
      if (r.status != MXGATE_DONE) {
        std::printf("GENERAL %-24s %-22s %s\n", op->name, shape_text(s).c_str(),
                    r.message.substr(0, 400).c_str());
        ADD_FAILURE() << op->name << " " << shape_text(s) << ": " << r.message;
        continue;
      }
      const std::vector<double> ref = exact_gemm_fp64(c.problem);
      AccumModel fp32_rn;
      fp32_rn.output = info.out;
      AccumModel measured = fp32_rn;
      measured.unit_roundoff = std::ldexp(1.0, -(kAccumBitsKept - 1));  // truncation, p bits
      measured.block_k = kAccumChunk;
      const GemmBounds b_rn = compute_bounds(c.problem, fp32_rn);
      const BoundVerdict v_rn = check_bound(b_rn, r.out);
      const BoundVerdict v_meas = check_bound(compute_bounds(c.problem, measured), r.out);
      // Error measures: vs the largest |exact| (what torch tests report), normwise, per element
      // relative to sum |a b sa sb| (the scale every accumulator bound has), per element
      // relative to |exact| (large where the sum cancels).
      double max_err = 0, max_ref = 0, err2 = 0, ref2 = 0, max_vs_abs = 0, max_elem = 0;
      size_t nonfinite = 0;
      for (size_t i = 0; i < s.m * s.n; ++i) {
        const double got = value_at(r.out, i / s.n, i % s.n), want = ref[i];
        if (!std::isfinite(got)) ++nonfinite;
        const double e = std::fabs(got - want);
        max_err = std::max(max_err, e);
        max_ref = std::max(max_ref, std::fabs(want));
        err2 += e * e;
        ref2 += want * want;
        if (b_rn.abs_sum[i] > 0) max_vs_abs = std::max(max_vs_abs, e / b_rn.abs_sum[i]);
        if (want != 0) max_elem = std::max(max_elem, e / std::fabs(want));
      }
      std::printf(
          "GENERAL %-24s %-22s seed=%llu err/max|ref|=%.3g normwise=%.3g max err/sum|t|=%.3g "
          "(2^%.1f) elementwise=%.3g outside_fp32_rn=%zu/%zu (%.4f) "
          "outside_measured(u=2^-%d,block_k=%d)=%zu\n",
          op->name, shape_text(s).c_str(), static_cast<unsigned long long>(seed), max_err / max_ref,
          std::sqrt(err2 / ref2), max_vs_abs, max_vs_abs > 0 ? std::log2(max_vs_abs) : -999.0,
          max_elem, v_rn.outside, s.m * s.n,
          static_cast<double>(v_rn.outside) / static_cast<double>(s.m * s.n), kAccumBitsKept - 1,
          kAccumChunk, v_meas.outside);
      EXPECT_EQ(nonfinite, 0u) << op->name << " " << shape_text(s);
      EXPECT_TRUE(r.guards_ok) << op->name;
      EXPECT_TRUE(v_meas.ok()) << op->name << " " << shape_text(s) << ": " << v_meas.summary()
                               << "\nreproduce: MXGATE_SEED=" << base_seed()
                               << " test_gpu_plugins --gtest_filter=*GemmGeneralData*";
    }
  }
}

// ---- Scale-layout fingerprint ------------------------------------------------------------------

// Every A scale 2^(i - oa) (i = its row-major grid index) and every B scale 2^(SA j - ob) (SA = the
// A grid's size); with the data one-hot in one K block (all ones there, zero elsewhere) each
// output is w * 2^(i + SA j - oa - ob), which names exactly the two scales the kernel applied.
// Returns "" when every output used the scales the contract's layouts say, else the first misplaced
// element.
std::string fingerprint(const mxgate_op& op, const GemmShape& s, size_t* checked) {
  const GemmOpInfo info = info_of(op);
  GemmCase c = make_case(op, s);
  const Grid ga{c.problem.a_scale_rows(), c.problem.a_scale_cols()};
  const Grid gb{c.problem.b_scale_rows(), c.problem.b_scale_cols()};
  const long sa_count = static_cast<long>(ga.rows * ga.cols);
  const long total = sa_count * static_cast<long>(gb.rows * gb.cols);
  const long offset = total / 2;  // centres every scale and product in the fp32 range
  const long offset_a = sa_count / 2, offset_b = offset - offset_a;
  for (size_t i = 0; i < c.problem.a_scale.size(); ++i) {
    c.problem.a_scale[i] = std::ldexp(1.0f, static_cast<int>(static_cast<long>(i) - offset_a));
  }
  for (size_t j = 0; j < c.problem.b_scale.size(); ++j) {
    c.problem.b_scale[j] =
        std::ldexp(1.0f, static_cast<int>(sa_count * static_cast<long>(j) - offset_b));
  }
  const BlockSizes bs = c.problem.blocks;
  const size_t kblocks = ceil_div(s.k, kBlockK);
  for (size_t kb = 0; kb < kblocks; ++kb) {
    GemmCase one = c;
    const size_t k0 = kb * 128, k1 = std::min(s.k, k0 + 128);
    for (size_t r = 0; r < s.m; ++r) {
      for (size_t kk = k0; kk < k1; ++kk) set_a(one, info.fa, r, kk, 1.0f);
    }
    for (size_t r = 0; r < s.n; ++r) {
      for (size_t kk = k0; kk < k1; ++kk) set_b(one, info.fb, r, kk, 1.0f);
    }
    const GemmRun r = run_gemm(op, one);
    if (r.status != MXGATE_DONE) return "call failed: " + r.message;
    if (!r.guards_ok) return "guard band damaged";
    const double w = static_cast<double>(k1 - k0);
    for (size_t i = 0; i < s.m; ++i) {
      for (size_t j = 0; j < s.n; ++j) {
        ++*checked;
        const size_t want_a = (i / bs.a_m) * ga.cols + k0 / bs.a_k;
        const size_t want_b = (j / bs.b_n) * gb.cols + k0 / bs.b_k;
        const double v = value_at(r.out, i, j) / w;
        int e = 0;
        const double frac = std::frexp(v, &e);
        char buf[320];
        if (!(v > 0) || frac != 0.5) {
          std::snprintf(buf, sizeof buf,
                        "C[%zu][%zu], K block %zu: %.9g is not w * a power of two (w = %g): "
                        "expected A scale #%zu, B scale #%zu",
                        i, j, kb, value_at(r.out, i, j), w, want_a, want_b);
          return buf;
        }
        const long code = (e - 1) + offset;
        const long got_b = code / sa_count, got_a = code % sa_count;
        if (code < 0 || got_a != static_cast<long>(want_a) || got_b != static_cast<long>(want_b)) {
          std::snprintf(buf, sizeof buf,
                        "C[%zu][%zu], K block %zu: applied A scale (%ld, %ld) and B scale "
                        "(%ld, %ld) of the logical grids; the layouts say A (%zu, %zu), B "
                        "(%zu, %zu)",
                        i, j, kb, got_a / static_cast<long>(ga.cols),
                        got_a % static_cast<long>(ga.cols), got_b / static_cast<long>(gb.cols),
                        got_b % static_cast<long>(gb.cols), want_a / ga.cols, want_a % ga.cols,
                        want_b / gb.cols, want_b % gb.cols);
          return buf;
        }
      }
    }
  }
  return "";
}

// Every scaled op reads its scales where its contract's layouts put them: M > 1 and K > 128 (a
// column- vs row-major confusion moves a scale), more than one 128-row weight block, and
// ceil(K/128) not a multiple of 4 (the BLK128x128 row stride padding).
TEST_F(GpuPlugins, GemmScaleLayoutFingerprint) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  const std::vector<GemmShape> candidates = {{8, 256, 384}, {4, 264, 272}, {8, 136, 272},
                                             {4, 8, 384},   {8, 8, 272},   {4, 16, 272},
                                             {4, 8, 144},   {4, 4, 272}};
  for (const mxgate_op* op : ops_of(p)) {
    size_t tried = 0;
    for (const GemmShape& s : candidates) {
      if (!in_contract(op->contract, s) || tried == 2) continue;
      const Grid ga = scale_grid(op->contract.a_block_rows, op->contract.a_block_cols, s.m, s.k);
      const Grid gb = scale_grid(op->contract.b_block_rows, op->contract.b_block_cols, s.n, s.k);
      if (ga.rows * ga.cols * gb.rows * gb.cols > 200) continue;  // exponents must fit fp32
      ++tried;
      size_t checked = 0;
      const std::string bad = fingerprint(*op, s, &checked);
      std::printf(
          "FINGERPRINT %-24s %-20s A grid %zux%zu B grid %zux%zu: %s\n", op->name,
          shape_text(s).c_str(), ga.rows, ga.cols, gb.rows, gb.cols,
          bad.empty() ? ("ok, " + std::to_string(checked) + " outputs").c_str() : bad.c_str());
      EXPECT_EQ(bad, "") << op->name << " " << shape_text(s);
    }
    EXPECT_GT(tried, 0u) << op->name << ": no fingerprint shape fits its contract";
  }
}

// ---- The accumulator probe ---------------------------------------------------------------------

struct Term {
  size_t k;
  float a, b;
};

// C[0][0] of a 4 x 8 x K product whose only nonzero entries are `terms` in row 0 of A and B,
// every scale 1. Also returns cuBLASLt's note on the algorithm it ran.
double probe(const mxgate_op& op, size_t k, const std::vector<Term>& terms, std::string* note) {
  const GemmOpInfo info = info_of(op);
  GemmCase c = make_case(op, {4, 8, k});
  for (const Term& t : terms) {
    set_a(c, info.fa, 0, t.k, t.a);
    set_b(c, info.fb, 0, t.k, t.b);
  }
  const GemmRun r = run_gemm(op, c);
  if (note) *note = r.message;
  if (r.status != MXGATE_DONE) return std::nan("");
  return value_at(r.out, 0, 0);
}

// A product of value s * 2^e (s in {1, 1.25, 1.5, 1.75}, sign included) as two e4m3 factors.
Term small_term(size_t k, double s, int e) {
  int ea = std::clamp(e, -6, 7);
  int eb = e - ea;
  if (eb < -9) {
    ea = e + 9;
    eb = -9;
  }
  return {k, static_cast<float>(s * std::ldexp(1.0, ea)), std::ldexp(1.0f, eb)};
}

// The Hopper FP8 tensor-core accumulation as cuBLASLt runs it (Fasi, Higham, Mikaitis, Pranesh,
// "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021): 256*256 at k = 0 plus crafted
// small products. Prints every probe; the derived parameters must equal docs/nvidia.md §4.
TEST_F(GpuPlugins, AccumulatorProbe) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  for (const char* name : {"tensor_e4m3_e4m3_f32", "block_e4m3_e4m3_f32"}) {
    const mxgate_op* op = nullptr;
    for (const mxgate_op* o : ops_of(p)) {
      if (std::string(o->name) == name) op = o;
    }
    ASSERT_NE(op, nullptr) << name;
    const size_t K = 1024;
    const Term big{0, 256.0f, 256.0f};
    std::string note;
    const double base = probe(*op, K, {big}, &note);
    std::printf("PROBE %s K=%zu: 256*256 alone = %.10g [%s]\n", name, K, base, note.c_str());
    if (base != 65536.0) {
      ADD_FAILURE() << name << ": 256*256 alone gave " << base << " [" << note << "]";
      continue;
    }

    // 1. Precision relative to the largest term: 2^16 + 2^e in the same k-group.
    int lowest_kept = 16;  // the lowest e with every 2^e' (e' >= e) kept whole
    bool contiguous = true;
    for (int e = 15; e >= -18; --e) {
      const double got = probe(*op, K, {big, small_term(1, 1.0, e)}, nullptr) - 65536.0;
      const double t = std::ldexp(1.0, e);
      std::printf("PROBE %s precision: 2^16 + 2^%d (k=1) -> 2^16 + %.10g (%s)\n", name, e, got,
                  got == t   ? "kept"
                  : got == 0 ? "lost"
                             : "partial");
      if (got == t && contiguous) {
        lowest_kept = e;
      } else {
        contiguous = false;
      }
    }
    const int bits = 16 - lowest_kept + 1;
    std::printf("PROBE %s: lowest kept 2^%d: %d significant bits relative to the largest term\n",
                name, lowest_kept, bits);

    // 2. What happens to the dropped bits: s * 2^e0 with e0 the lowest kept bit.
    const int e0 = lowest_kept;
    const double u = std::ldexp(1.0, e0);
    std::map<double, double> units;
    for (double s : {1.25, 1.5, 1.75, -0.25, -0.75, -1.25}) {
      const Term t = std::fabs(s) < 1 ? small_term(1, s * 4, e0 - 2) : small_term(1, s, e0);
      const double got = (probe(*op, K, {big, t}, nullptr) - 65536.0) / u;
      units[s] = got;
      std::printf("PROBE %s rounding: 2^16 + %g * 2^%d -> 2^16 + %g * 2^%d\n", name, s, e0, got,
                  e0);
    }
    const bool rz = units[1.25] == 1 && units[1.5] == 1 && units[1.75] == 1 && units[-0.25] == 0 &&
                    units[-0.75] == 0 && units[-1.25] == -1;
    const bool rn = units[1.25] == 1 && units[1.5] == 2 && units[1.75] == 2 && units[-0.25] == 0 &&
                    units[-0.75] == -1 && units[-1.25] == -1;
    const bool rd = units[1.25] == 1 && units[1.5] == 1 && units[1.75] == 1 && units[-0.25] == -1 &&
                    units[-0.75] == -1 && units[-1.25] == -2;
    const std::string rounding = rz ? "truncate" : rn ? "nearest_even" : rd ? "floor" : "other";
    std::printf("PROBE %s: dropped bits: %s\n", name, rounding.c_str());

    // 3. The promotion chunk: 2^-2 at position p after the big term (and pairs across chunks).
    int chunk = 0;
    for (size_t pos : {1,  2,  4,  8,   15,  16,  17,  31,  32,  33,  63,
                       64, 65, 95, 127, 128, 129, 191, 255, 256, 384, 512}) {
      const double got = probe(*op, K, {big, small_term(pos, 1.0, -2)}, nullptr);
      std::printf("PROBE %s chunk: 2^16 (k=0) + 2^-2 (k=%zu) -> %.10g\n", name, pos, got);
      if (chunk == 0 && got != 65536.0) chunk = static_cast<int>(pos);
    }
    for (auto [kb, ks] : std::vector<std::pair<size_t, size_t>>{
             {100, 127}, {127, 128}, {64, 130}, {130, 250}, {255, 256}, {200, 383}}) {
      const double got =
          probe(*op, K, {Term{kb, 256.0f, 256.0f}, small_term(ks, 1.0, -2)}, nullptr);
      std::printf("PROBE %s chunk: 2^16 (k=%zu) + 2^-2 (k=%zu) -> %.10g\n", name, kb, ks, got);
    }
    // 4. Many dropped terms: summed before alignment, or each dropped?
    for (auto [from, count] : std::vector<std::pair<size_t, size_t>>{{1, 31}, {32, 32}, {1, 64}}) {
      std::vector<Term> ts{big};
      for (size_t q = 0; q < count; ++q) ts.push_back(small_term(from + q, 1.0, -2));
      const double got = probe(*op, K, ts, nullptr);
      std::printf("PROBE %s group: 2^16 + %zu x 2^-2 at k=%zu..%zu -> 2^16 + %.10g\n", name, count,
                  from, from + count - 1, got - 65536.0);
    }
    std::printf("ACCUMULATOR %s: bits_kept=%d rounding=%s chunk=%d\n", name, bits, rounding.c_str(),
                chunk);
    EXPECT_EQ(bits, kAccumBitsKept) << name;
    EXPECT_EQ(rounding, kAccumRounding) << name;
    EXPECT_EQ(chunk, kAccumChunk) << name;
  }
}

// M = 1..5, N not a multiple of 128, K not a multiple of 128: inside the contract every case is
// computed bit-exactly; outside it, what cuBLASLt does is printed (a DONE with wrong numbers out
// there is a finding, a refusal is the documented behaviour).
TEST_F(GpuPlugins, GemmShapeResidues) {
  const mxgate_plugin* p = plugin("cublaslt");
  ASSERT_NE(p, nullptr);
  std::vector<GemmShape> shapes;
  for (size_t m = 1; m <= 5; ++m) shapes.push_back({m, 136, 144});
  for (size_t n : {4, 8, 12, 136, 264}) shapes.push_back({4, n, 272});
  for (size_t k : {16, 48, 144, 400, 1040}) shapes.push_back({8, 136, k});
  shapes.push_back({6, 200, 96});
  for (const mxgate_op* op : ops_of(p)) {
    for (const GemmShape& s : shapes) {
      const bool inside = in_contract(op->contract, s);
      const uint64_t seed = base_seed() * 31u + s.m * 1000 + s.n * 10 + s.k;
      GemmCase c = exact_case(*op, s, seed);
      const GemmRun r = run_gemm(*op, c);
      std::string verdict;
      bool exact = false;
      if (r.status == MXGATE_DONE) {
        const BitExactVerdict v = compare_exact(exact_gemm(c.problem, info_of(*op).out), r.out);
        exact = v.ok() && r.guards_ok;
        verdict = v.summary() + (r.guards_ok ? "" : " GUARD DAMAGED");
      } else {
        verdict = std::string(r.status == MXGATE_UNSUPPORTED ? "UNSUPPORTED: " : "ERROR: ") +
                  r.message.substr(0, 300);
      }
      std::printf("RESIDUE %-24s %-20s %s seed=%llu %s\n", op->name, shape_text(s).c_str(),
                  inside ? "in-contract " : "out-contract", static_cast<unsigned long long>(seed),
                  verdict.c_str());
      if (inside) {
        EXPECT_EQ(r.status, MXGATE_DONE)
            << op->name << " " << shape_text(s) << " declined inside its contract: " << r.message;
        EXPECT_TRUE(r.status != MXGATE_DONE || exact)
            << op->name << " " << shape_text(s) << ": " << verdict;
      }
    }
  }
}

// ---- The sweep's compare logic on the CPU (no GPU needed) --------------------------------------

std::vector<sweep::MismatchRange> brute_ranges(const std::vector<uint32_t>& codes, uint64_t base,
                                               const sweep::RunTable& t, uint64_t* count) {
  std::vector<sweep::MismatchRange> out;
  *count = 0;
  size_t r = 0;
  for (uint64_t i = 0; i < codes.size(); ++i) {
    const uint64_t x = base + i;
    while (r + 1 < t.begin.size() && t.begin[r + 1] <= x) ++r;
    const uint32_t want = t.code[r];
    if (codes[i] == want) continue;
    ++*count;
    if (!out.empty() && out.back().last + 1 == x && out.back().expected == want &&
        out.back().actual == codes[i]) {
      out.back().last = static_cast<uint32_t>(x);
    } else {
      out.push_back({static_cast<uint32_t>(x), static_cast<uint32_t>(x), want, codes[i]});
    }
  }
  return out;
}

// The device compare's per-thread code (run here on the CPU) finds every planted mismatch range
// exactly: single elements, ranges crossing 16-element thread and 4096-element block boundaries,
// ranges split where the expected code changes, the first and last element, 1- and 2-byte codes.
TEST(CastSweepLogic, HostCompareLocatesPlantedRanges) {
  for (uint32_t bytes : {1u, 2u}) {
    const uint64_t base = 0x7F7FB000u, count = 20000;
    sweep::RunTable t;
    t.begin = {0,
               static_cast<uint32_t>(base + 100),
               static_cast<uint32_t>(base + 5000),
               static_cast<uint32_t>(base + 5001),
               static_cast<uint32_t>(base + 12345),
               0x7F800000u,
               0x80000000u};
    t.code = {3, 4, 5, 6, 7, 8, 9};
    std::vector<uint32_t> codes(count);
    for (uint64_t i = 0; i < count; ++i) {
      size_t r = 0;
      while (r + 1 < t.begin.size() && t.begin[r + 1] <= base + i) ++r;
      codes[i] = t.code[r];
    }
    const uint32_t bad = bytes == 1 ? 0xEE : 0xBEEF;
    for (auto [from, to] : std::vector<std::pair<uint64_t, uint64_t>>{{0, 0},
                                                                      {16, 16},
                                                                      {30, 47},
                                                                      {99, 102},
                                                                      {200, 203},
                                                                      {4090, 4105},
                                                                      {4999, 5002},
                                                                      {8191, 8192},
                                                                      {12340, 12350},
                                                                      {19999, 19999}}) {
      for (uint64_t i = from; i <= to; ++i) codes[i] = bad;
    }
    for (uint64_t i = 204; i <= 207; ++i) codes[i] = 1;  // adjacent range, other actual code
    std::vector<uint8_t> raw(count * bytes);
    for (uint64_t i = 0; i < count; ++i) std::memcpy(&raw[i * bytes], &codes[i], bytes);
    uint64_t want_count = 0;
    const auto want = brute_ranges(codes, base, t, &want_count);
    const sweep::SweepResult got = sweep::compare_on_host(raw.data(), count, base, t, bytes);
    EXPECT_EQ(got.mismatches, want_count) << bytes << "-byte codes";
    ASSERT_TRUE(got.first.has_value());
    EXPECT_EQ(got.first->first, base) << bytes << "-byte codes";
    ASSERT_EQ(got.ranges.size(), want.size()) << bytes << "-byte codes";
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got.ranges[i].first, want[i].first) << "range " << i;
      EXPECT_EQ(got.ranges[i].last, want[i].last) << "range " << i;
      EXPECT_EQ(got.ranges[i].expected, want[i].expected) << "range " << i;
      EXPECT_EQ(got.ranges[i].actual, want[i].actual) << "range " << i;
    }
  }
}

// ---- Descriptors (no GPU needed) ---------------------------------------------------------------

// Both libraries load through dlopen and describe themselves validly: ABI version, unique op
// names, the family and memory of each op, contract struct sizes, an accumulator model on every
// GEMM and a resolvable claim on every cast (a typo in a claim would silently test nothing).
TEST(PluginDescriptors, LoadAndValidate) {
  const std::regex op_name("[a-z0-9_.]+");
  for (const char* name : {"cuda_fp8", "cublaslt"}) {
    Loaded& l = load(name);
    ASSERT_EQ(l.error, "") << l.path;
    const mxgate_plugin& p = *l.plugin;
    EXPECT_EQ(p.abi_version, MXGATE_PLUGIN_ABI_VERSION) << name;
    EXPECT_EQ(p.struct_size, sizeof(mxgate_plugin)) << name;
    EXPECT_STREQ(p.name, name);
    ASSERT_EQ(p.impl_count, 1u) << name;
    EXPECT_STREQ(p.impls[0].name, name);
    std::set<std::string> seen;
    for (const mxgate_op* op : ops_of(&p)) {
      EXPECT_TRUE(std::regex_match(op->name, op_name)) << op->name;
      EXPECT_TRUE(seen.insert(op->name).second) << "duplicate op " << op->name;
      EXPECT_EQ(op->memory, MXGATE_MEMORY_CUDA) << op->name;
      EXPECT_EQ(op->contract.struct_size, sizeof(mxgate_contract)) << op->name;
      EXPECT_NE(op->run, nullptr) << op->name;
      if (std::string(name) == "cuda_fp8") {
        EXPECT_EQ(op->family, MXGATE_OP_CAST) << op->name;
        ASSERT_NE(op->contract.convention, nullptr) << op->name;
        std::string why;
        EXPECT_TRUE(sweep::expected_runs(op->contract.convention, cast_target(*op), &why))
            << op->name << ": " << why;
      } else {
        EXPECT_EQ(op->family, MXGATE_OP_GEMM_BLOCK) << op->name;
        ASSERT_NE(op->contract.accumulator, nullptr) << op->name;
        EXPECT_STREQ(op->contract.accumulator, "sm90_fp8_mma") << op->name;
        EXPECT_EQ(op->contract.scale_dtype, MXGATE_DTYPE_F32) << op->name;
        EXPECT_EQ(op->contract.k_align % 16, 0u) << op->name;
      }
      std::printf(
          "OP %-9s %-24s align m%llu n%llu k%llu  blocks A %ux%u B %ux%u  scale "
          "layouts A 0x%x B 0x%x ld %u/%u  claim %s  acc %s\n",
          name, op->name, static_cast<unsigned long long>(op->contract.m_align),
          static_cast<unsigned long long>(op->contract.n_align),
          static_cast<unsigned long long>(op->contract.k_align), op->contract.a_block_rows,
          op->contract.a_block_cols, op->contract.b_block_rows, op->contract.b_block_cols,
          op->contract.a_scale_layouts, op->contract.b_scale_layouts, op->contract.a_scale_ld_align,
          op->contract.b_scale_ld_align, op->contract.convention ? op->contract.convention : "-",
          op->contract.accumulator ? op->contract.accumulator : "-");
    }
    EXPECT_EQ(seen.size(), std::string(name) == "cuda_fp8" ? 8u : 24u) << name;
  }
}

}  // namespace
}  // namespace mxgate
