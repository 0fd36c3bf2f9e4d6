// The exhaustive device cast sweep (cast_sweep.h): input generation, poison, the on-device
// compare against run tables, and the host driver that feeds an op chunk by chunk. One source
// for nvcc (MXGATE_USE_CUDA, through sweep_runtime.h) and hipcc.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/kernels/cast_sweep/cast_sweep.h"
#include "gpu/kernels/cast_sweep/sweep_runtime.h"

namespace mxgate::sweep {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kPerThread = 16;  // one 16-byte load of 1-byte codes per thread
constexpr uint64_t kPerBlock = uint64_t{kThreads} * kPerThread;
constexpr unsigned kEdgeCapacity = 16384;
constexpr uint64_t kGuardBytes = 256;  // keeps the output 16-byte aligned
constexpr unsigned kMaxBlocks = 1u << 20;

// A mismatch range's first or last input with its (expected, actual) codes.
struct Edge {
  uint32_t input;
  uint32_t expected;
  uint32_t actual;
};

struct DeviceStats {
  unsigned long long mismatches;
  unsigned long long first;  // (input << 32) | (expected << 16) | actual; all ones when none
  unsigned int starts;
  unsigned int ends;
  Edge start[kEdgeCapacity];
  Edge end[kEdgeCapacity];
};

struct CompareArgs {
  const uint8_t* out;
  uint64_t count;
  uint64_t base;  // input bits of element 0; base + count <= 2^32
  const uint32_t* run_begin;
  const uint16_t* run_code;
  uint32_t nruns;
  uint32_t code_bytes;
  DeviceStats* stats;
};

unsigned blocks_for(uint64_t items, uint64_t per_block) {
  const uint64_t b = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(b, kMaxBlocks)));
}

__global__ void fill_inputs_kernel(uint32_t* in, uint64_t base, uint64_t count) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x * 4;
  for (uint64_t i = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) * 4; i < count; i += stride) {
    const uint32_t x = static_cast<uint32_t>(base + i);
    if (i + 4 <= count) {
      *reinterpret_cast<uint4*>(in + i) = make_uint4(x, x + 1, x + 2, x + 3);
    } else {
      for (uint64_t j = i; j < count; ++j) in[j] = static_cast<uint32_t>(base + j);
    }
  }
}

__global__ void poison16_kernel(uint16_t* out, uint64_t count, uint16_t value) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    out[i] = value;
  }
}

// The largest r in [lo, hi] with begin[r] <= x (begin[lo] <= x holds).
__host__ __device__ uint32_t find_run(const uint32_t* begin, uint32_t lo, uint32_t hi, uint32_t x) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (begin[mid] <= x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

__host__ __device__ uint32_t load_code(const CompareArgs& a, uint64_t i) {
  return a.code_bytes == 1 ? uint32_t{a.out[i]}
                           : uint32_t{reinterpret_cast<const uint16_t*>(a.out)[i]};
}

// Whether element i mismatches with exactly this (expected, actual) pair: the rare path that
// decides whether a range continues across a thread's boundary.
__host__ __device__ bool same_mismatch(const CompareArgs& a, uint64_t i, uint32_t want,
                                       uint32_t got) {
  const uint32_t x = static_cast<uint32_t>(a.base + i);
  const uint32_t w = a.run_code[find_run(a.run_begin, 0, a.nruns - 1, x)];
  const uint32_t g = load_code(a, i);
  return g != w && w == want && g == got;
}

// One thread's n (<= 16) consecutive elements from t0, expected codes from runs [lo, hi]: counts
// mismatches and reports the lowest one and every range start / end to `sink`. The same code runs
// on the device (DeviceSink, atomics) and on the host (compare_on_host, for the unit test).
#if defined(MXGATE_USE_CUDA)
#pragma nv_exec_check_disable  // the Sink decides: device atomics or host vectors
#endif
template <class Sink>
__host__ __device__ unsigned int compare_span(const CompareArgs& a, uint64_t t0, int n,
                                              const uint32_t* codes, uint32_t lo, uint32_t hi,
                                              Sink& sink) {
  const uint32_t x0 = static_cast<uint32_t>(a.base + t0);
  uint32_t r = find_run(a.run_begin, lo, hi, x0);
  uint64_t next = r < hi ? uint64_t{a.run_begin[r + 1]} : (uint64_t{1} << 32);
  bool prev_bad = false;
  uint32_t prev_want = 0;
  uint32_t prev_got = 0;
  unsigned int local = 0;
  for (int e = 0; e < n; ++e) {
    const uint32_t x = x0 + static_cast<uint32_t>(e);
    while (uint64_t{x} >= next) {
      ++r;
      next = r < hi ? uint64_t{a.run_begin[r + 1]} : (uint64_t{1} << 32);
    }
    const uint32_t want = a.run_code[r];
    const uint32_t got = codes[e];
    const bool bad = got != want;
    const bool continues = bad && prev_bad && prev_want == want && prev_got == got;
    if (e > 0 && prev_bad && !continues) sink.end(Edge{x - 1, prev_want, prev_got});
    if (bad) {
      if (local++ == 0) {
        sink.first((static_cast<unsigned long long>(x) << 32) |
                   (static_cast<unsigned long long>(want) << 16) | got);
      }
      const bool start = e > 0 ? !continues : (t0 == 0 || !same_mismatch(a, t0 - 1, want, got));
      if (start) sink.start(Edge{x, want, got});
    }
    prev_bad = bad;
    prev_want = want;
    prev_got = got;
  }
  if (prev_bad) {
    const uint64_t after = t0 + static_cast<uint64_t>(n);
    if (after >= a.count || !same_mismatch(a, after, prev_want, prev_got)) {
      sink.end(Edge{x0 + static_cast<uint32_t>(n - 1), prev_want, prev_got});
    }
  }
  return local;
}

// Once a counter is past the capacity the ranges are truncated (the host reads counter >
// capacity) and no slot is written: later edges skip the atomic, so a table that differs from
// the output in millions of ranges does not serialize the sweep on one address.
__device__ void push_edge(unsigned int* counter, Edge* edges, Edge e) {
  if (*static_cast<volatile unsigned int*>(counter) > kEdgeCapacity) return;
  const unsigned int slot = atomicAdd(counter, 1u);
  if (slot < kEdgeCapacity) edges[slot] = e;
}

// The lowest mismatch goes to the block's shared minimum; compare_kernel folds it into the
// table's DeviceStats once per block (a global atomic per mismatching thread on one address
// was the sweep's cost when most inputs mismatch: 1.3 s of a 2^32 e8m0 sweep on the H200).
struct DeviceSink {
  DeviceStats* s;
  unsigned long long* block_first;
  __device__ void first(unsigned long long packed) { atomicMin(block_first, packed); }
  __device__ void start(Edge e) { push_edge(&s->starts, s->start, e); }
  __device__ void end(Edge e) { push_edge(&s->ends, s->end, e); }
};

__global__ void compare_kernel(CompareArgs a) {
  __shared__ uint32_t s_lo;
  __shared__ uint32_t s_hi;
  __shared__ unsigned int s_count;
  __shared__ unsigned long long s_first;
  if (threadIdx.x == 0) s_first = ~0ull;
  DeviceSink sink{a.stats, &s_first};
  const uint64_t grid_span = uint64_t{gridDim.x} * kPerBlock;
  for (uint64_t block_start = uint64_t{blockIdx.x} * kPerBlock; block_start < a.count;
       block_start += grid_span) {
    const uint64_t block_end =
        block_start + kPerBlock < a.count ? block_start + kPerBlock : a.count;
    if (threadIdx.x == 0) {
      const uint32_t lo =
          find_run(a.run_begin, 0, a.nruns - 1, static_cast<uint32_t>(a.base + block_start));
      s_lo = lo;
      s_hi = find_run(a.run_begin, lo, a.nruns - 1, static_cast<uint32_t>(a.base + block_end - 1));
      s_count = 0;
    }
    __syncthreads();
    const uint64_t t0 = block_start + uint64_t{threadIdx.x} * kPerThread;
    unsigned int local = 0;
    if (t0 < block_end) {
      const int n = static_cast<int>(block_end - t0 < kPerThread ? block_end - t0 : kPerThread);
      uint32_t codes[kPerThread];
      if (a.code_bytes == 1 && n == static_cast<int>(kPerThread)) {
        const uint4 v = *reinterpret_cast<const uint4*>(a.out + t0);
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 16; ++e) codes[e] = (w[e / 4] >> (8 * (e % 4))) & 0xFFu;
      } else {
        for (int e = 0; e < n; ++e) codes[e] = load_code(a, t0 + e);
      }
      local = compare_span(a, t0, n, codes, s_lo, s_hi, sink);
    }
    if (local != 0) atomicAdd(&s_count, local);
    __syncthreads();
    if (threadIdx.x == 0 && s_count != 0) {
      atomicAdd(&a.stats->mismatches, static_cast<unsigned long long>(s_count));
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && s_first != ~0ull &&
      s_first < *static_cast<volatile unsigned long long*>(&a.stats->first)) {
    atomicMin(&a.stats->first, s_first);
  }
}

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) throw std::runtime_error(std::string(what) + ": " + hipGetErrorString(e));
}

void check_launch(const char* what) { check(hipGetLastError(), what); }

// The smallest code the expected output never holds in [base, base + count): unwritten elements
// then always mismatch. Returns `none` when every code occurs.
uint32_t absent_code(const RunTable& t, uint64_t base, uint64_t count, uint32_t code_bytes,
                     uint32_t none) {
  std::vector<bool> seen(code_bytes == 1 ? 256 : 65536, false);
  auto it = std::upper_bound(t.begin.begin(), t.begin.end(), static_cast<uint32_t>(base));
  size_t r = static_cast<size_t>(it - t.begin.begin()) - 1;
  for (; r < t.begin.size() && uint64_t{t.begin[r]} < base + count; ++r) {
    if (t.code[r] < seen.size()) seen[t.code[r]] = true;
  }
  for (uint32_t c = 0; c < seen.size(); ++c) {
    if (!seen[c]) return c;
  }
  return none;
}

uint32_t code_bytes_of(mxgate_dtype d) {
  return (d == MXGATE_DTYPE_BF16 || d == MXGATE_DTYPE_FP16) ? 2u : 1u;
}

uint8_t guard_byte(uint64_t j) { return static_cast<uint8_t>(0xA5u ^ (j * 7u)); }

}  // namespace

struct CastSweeper::Impl {
  hipStream_t stream = nullptr;
  hipEvent_t start = nullptr;
  hipEvent_t stop = nullptr;
  uint32_t* inputs = nullptr;    // 2^32 resident, or one chunk
  uint8_t* out_alloc = nullptr;  // guard | chunk * 2 bytes | guard
  DeviceStats* stats = nullptr;
  uint32_t* run_begin = nullptr;
  uint16_t* run_code = nullptr;
  size_t run_capacity = 0;
  size_t stats_capacity = 1;  // DeviceStats held by `stats`

  uint8_t* out() const { return out_alloc + kGuardBytes; }

  void fill(uint32_t* dst, uint64_t base, uint64_t count) {
    hipLaunchKernelGGL(fill_inputs_kernel, dim3(blocks_for(count, kThreads * 4)), dim3(kThreads), 0,
                       stream, dst, base, count);
    check_launch("fill_inputs_kernel");
  }

  void upload_runs(const RunTable& t) {
    if (t.begin.size() > run_capacity) {
      if (run_begin) check(hipFree(run_begin), "hipFree");
      if (run_code) check(hipFree(run_code), "hipFree");
      run_begin = nullptr;
      run_code = nullptr;
      check(hipMalloc(&run_begin, t.begin.size() * sizeof(uint32_t)), "hipMalloc(run_begin)");
      check(hipMalloc(&run_code, t.code.size() * sizeof(uint16_t)), "hipMalloc(run_code)");
      run_capacity = t.begin.size();
    }
    check(hipMemcpy(run_begin, t.begin.data(), t.begin.size() * sizeof(uint32_t),
                    hipMemcpyHostToDevice),
          "hipMemcpy(run_begin)");
    check(
        hipMemcpy(run_code, t.code.data(), t.code.size() * sizeof(uint16_t), hipMemcpyHostToDevice),
        "hipMemcpy(run_code)");
  }
};

bool CastSweeper::device_present() {
  int n = 0;
  return hipGetDeviceCount(&n) == hipSuccess && n > 0;
}

CastSweeper::CastSweeper(uint64_t chunk, bool resident_inputs) : impl_(new Impl), chunk_(chunk) {
  if (chunk_ == 0 || chunk_ % kPerBlock != 0) {
    delete impl_;
    throw std::invalid_argument("CastSweeper: chunk must be a positive multiple of 4096");
  }
  Impl& m = *impl_;
  try {
    check(hipStreamCreateWithFlags(&m.stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
    check(hipEventCreate(&m.start), "hipEventCreate");
    check(hipEventCreate(&m.stop), "hipEventCreate");
    check(hipMalloc(&m.out_alloc, chunk_ * 2 + 2 * kGuardBytes), "hipMalloc(outputs)");
    check(hipMalloc(&m.stats, sizeof(DeviceStats)), "hipMalloc(stats)");
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    check(hipMemGetInfo(&free_bytes, &total_bytes), "hipMemGetInfo");
    const uint64_t all_inputs = (uint64_t{1} << 32) * sizeof(uint32_t);
    if (resident_inputs && free_bytes > all_inputs + (uint64_t{4} << 30)) {
      check(hipMalloc(&m.inputs, all_inputs), "hipMalloc(resident inputs)");
      resident_ = true;
      check(hipEventRecord(m.start, m.stream), "hipEventRecord");
      m.fill(m.inputs, 0, uint64_t{1} << 32);
      check(hipEventRecord(m.stop, m.stream), "hipEventRecord");
      check(hipEventSynchronize(m.stop), "fill inputs");
      float ms = 0;
      check(hipEventElapsedTime(&ms, m.start, m.stop), "hipEventElapsedTime");
      fill_ms_ = ms;
    } else {
      check(hipMalloc(&m.inputs, chunk_ * sizeof(uint32_t)), "hipMalloc(chunk inputs)");
    }
  } catch (...) {
    release(impl_);
    throw;
  }
}

CastSweeper::~CastSweeper() { release(impl_); }

void CastSweeper::release(Impl* impl) {
  if (impl == nullptr) return;
  Impl& m = *impl;
  // Release errors are ignored: the destructor runs after failures too.
  if (m.stream) (void)hipStreamSynchronize(m.stream);
  if (m.inputs) (void)hipFree(m.inputs);
  if (m.out_alloc) (void)hipFree(m.out_alloc);
  if (m.stats) (void)hipFree(m.stats);
  if (m.run_begin) (void)hipFree(m.run_begin);
  if (m.run_code) (void)hipFree(m.run_code);
  if (m.start) (void)hipEventDestroy(m.start);
  if (m.stop) (void)hipEventDestroy(m.stop);
  if (m.stream) (void)hipStreamDestroy(m.stream);
  delete impl;
}

namespace {

mxgate_call cast_call(const uint32_t* in, uint8_t* out, uint64_t count, mxgate_dtype out_dtype,
                      hipStream_t stream) {
  mxgate_call call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof(mxgate_call);
  call.family = MXGATE_OP_CAST;
  call.m = 1;
  call.n = 1;
  call.k = count;
  call.a.data = const_cast<uint32_t*>(in);
  call.a.bytes = count * sizeof(float);
  call.a.rows = 1;
  call.a.cols = count;
  call.a.dtype = MXGATE_DTYPE_F32;
  call.a.layout = MXGATE_LAYOUT_ROW_MAJOR;
  call.out.data = out;
  call.out.bytes = count * code_bytes_of(out_dtype);
  call.out.rows = 1;
  call.out.cols = count;
  call.out.dtype = out_dtype;
  call.out.layout = MXGATE_LAYOUT_ROW_MAJOR;
  call.stream = stream;
  return call;
}

// Pairs the recorded edges into ranges and joins the pieces that chunk boundaries split.
std::vector<MismatchRange> pair_edges(std::vector<Edge> starts, std::vector<Edge> ends) {
  auto by_input = [](const Edge& x, const Edge& y) { return x.input < y.input; };
  std::sort(starts.begin(), starts.end(), by_input);
  std::sort(ends.begin(), ends.end(), by_input);
  std::vector<MismatchRange> out;
  for (size_t i = 0; i < starts.size() && i < ends.size(); ++i) {
    MismatchRange r{starts[i].input, ends[i].input, starts[i].expected, starts[i].actual};
    if (!out.empty() && uint64_t{out.back().last} + 1 == r.first &&
        out.back().expected == r.expected && out.back().actual == r.actual) {
      out.back().last = r.last;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

SweepResult CastSweeper::sweep(const mxgate_op& op, mxgate_dtype out_dtype,
                               const RunTable& expected, uint64_t begin, uint64_t end,
                               const std::function<void(uint64_t done)>& progress) {
  return sweep_tables(op, out_dtype, {&expected}, begin, end, progress).front();
}

std::vector<SweepResult> CastSweeper::sweep_tables(
    const mxgate_op& op, mxgate_dtype out_dtype, const std::vector<const RunTable*>& tables,
    uint64_t begin, uint64_t end, const std::function<void(uint64_t done)>& progress) {
  const std::size_t n = tables.size();
  std::vector<SweepResult> all(n == 0 ? 1 : n);
  Impl& m = *impl_;
  const uint32_t bytes = code_bytes_of(out_dtype);
  bool bad = n == 0 || begin >= end || end > (uint64_t{1} << 32);
  for (const RunTable* t : tables) {
    bad = bad || t == nullptr || t->begin.empty() || t->begin.front() != 0 ||
          t->begin.size() != t->code.size();
  }
  if (bad) {
    for (SweepResult& r : all) r.message = "sweep: bad range or run table";
    return all;
  }
  try {
    // Every table's runs in one upload (offsets), one DeviceStats per table.
    RunTable joined;
    std::vector<std::size_t> offset(n);
    for (std::size_t i = 0; i < n; ++i) {
      offset[i] = joined.begin.size();
      joined.begin.insert(joined.begin.end(), tables[i]->begin.begin(), tables[i]->begin.end());
      joined.code.insert(joined.code.end(), tables[i]->code.begin(), tables[i]->code.end());
    }
    m.upload_runs(joined);
    if (n > m.stats_capacity) {
      check(hipFree(m.stats), "hipFree(stats)");
      m.stats = nullptr;
      check(hipMalloc(&m.stats, n * sizeof(DeviceStats)), "hipMalloc(stats)");
      m.stats_capacity = n;
    }
    for (std::size_t i = 0; i < n; ++i) {
      check(hipMemsetAsync(m.stats + i, 0, sizeof(DeviceStats), m.stream), "hipMemsetAsync(stats)");
      check(hipMemsetAsync(&m.stats[i].first, 0xFF, sizeof(unsigned long long), m.stream),
            "hipMemsetAsync(stats.first)");
    }
    std::vector<uint8_t> guards(2 * kGuardBytes);
    for (uint64_t j = 0; j < guards.size(); ++j) guards[j] = guard_byte(j);
    const uint64_t tail_offset = kGuardBytes + chunk_ * bytes;
    check(hipMemcpyAsync(m.out_alloc, guards.data(), kGuardBytes, hipMemcpyHostToDevice, m.stream),
          "hipMemcpyAsync(guard)");
    check(hipMemcpyAsync(m.out_alloc + tail_offset, guards.data() + kGuardBytes, kGuardBytes,
                         hipMemcpyHostToDevice, m.stream),
          "hipMemcpyAsync(guard)");
    check(hipStreamSynchronize(m.stream), "hipStreamSynchronize(setup)");
    check(hipEventRecord(m.start, m.stream), "hipEventRecord");
    mxgate_status status = MXGATE_DONE;
    std::string message;
    uint64_t checked = 0;
    for (uint64_t base = begin; base < end; base += chunk_) {
      const uint64_t count = std::min(chunk_, end - base);
      const uint32_t* in = m.inputs + base;
      if (!resident_) {
        m.fill(m.inputs, base, count);
        in = m.inputs;
      }
      // A code no table expects in this chunk: an unwritten element mismatches in every table.
      const uint32_t none = bytes == 1 ? 0xA5u : 0xA5A5u;
      uint32_t poison = none;
      if (n == 1) {
        poison = absent_code(*tables[0], base, count, bytes, none);
      } else {
        std::vector<bool> seen(bytes == 1 ? 256 : 65536, false);
        for (const RunTable* t : tables) {
          auto it = std::upper_bound(t->begin.begin(), t->begin.end(), static_cast<uint32_t>(base));
          for (size_t r = static_cast<size_t>(it - t->begin.begin()) - 1;
               r < t->begin.size() && uint64_t{t->begin[r]} < base + count; ++r) {
            if (t->code[r] < seen.size()) seen[t->code[r]] = true;
          }
        }
        for (uint32_t c = 0; c < seen.size(); ++c) {
          if (!seen[c]) {
            poison = c;
            break;
          }
        }
      }
      if (bytes == 1) {
        check(hipMemsetAsync(m.out(), static_cast<int>(poison), count, m.stream),
              "hipMemsetAsync(poison)");
      } else {
        hipLaunchKernelGGL(poison16_kernel, dim3(blocks_for(count, kThreads)), dim3(kThreads), 0,
                           m.stream, reinterpret_cast<uint16_t*>(m.out()), count,
                           static_cast<uint16_t>(poison));
        check_launch("poison16_kernel");
      }
      mxgate_call call = cast_call(in, m.out(), count, out_dtype, m.stream);
      char text[512] = {0};
      const mxgate_status st = op.run(op.state, &call, text, sizeof text);
      if (st != MXGATE_DONE) {
        status = st;
        message = text;
        break;
      }
      for (std::size_t i = 0; i < n; ++i) {
        CompareArgs args{m.out(),
                         count,
                         base,
                         m.run_begin + offset[i],
                         m.run_code + offset[i],
                         static_cast<uint32_t>(tables[i]->begin.size()),
                         bytes,
                         m.stats + i};
        hipLaunchKernelGGL(compare_kernel, dim3(blocks_for(count, kPerBlock)), dim3(kThreads), 0,
                           m.stream, args);
        check_launch("compare_kernel");
      }
      checked += count;
      if (progress) progress(checked);
    }
    check(hipEventRecord(m.stop, m.stream), "hipEventRecord");
    check(hipStreamSynchronize(m.stream), "sweep (op or compare kernel)");
    float ms = 0;
    check(hipEventElapsedTime(&ms, m.start, m.stop), "hipEventElapsedTime");
    std::vector<uint8_t> after(2 * kGuardBytes);
    check(hipMemcpy(after.data(), m.out_alloc, kGuardBytes, hipMemcpyDeviceToHost),
          "hipMemcpy(guard)");
    check(hipMemcpy(after.data() + kGuardBytes, m.out_alloc + tail_offset, kGuardBytes,
                    hipMemcpyDeviceToHost),
          "hipMemcpy(guard)");
    for (std::size_t i = 0; i < n; ++i) {
      SweepResult& res = all[i];
      res.status = status;
      res.message = message;
      res.checked = checked;
      res.device_ms = ms;
      res.guard_damaged = after != guards;
      DeviceStats head;
      check(hipMemcpy(&head, m.stats + i, offsetof(DeviceStats, start), hipMemcpyDeviceToHost),
            "hipMemcpy(stats)");
      res.mismatches = head.mismatches;
      if (head.first != ~0ull) {
        const uint32_t x = static_cast<uint32_t>(head.first >> 32);
        res.first = MismatchRange{x, x, static_cast<uint32_t>((head.first >> 16) & 0xFFFFu),
                                  static_cast<uint32_t>(head.first & 0xFFFFu)};
      }
      res.ranges_truncated = head.starts > kEdgeCapacity || head.ends > kEdgeCapacity;
      if (!res.ranges_truncated && head.starts > 0) {
        std::vector<Edge> starts(head.starts);
        std::vector<Edge> ends(head.ends);
        check(hipMemcpy(starts.data(), &m.stats[i].start[0], starts.size() * sizeof(Edge),
                        hipMemcpyDeviceToHost),
              "hipMemcpy(starts)");
        check(hipMemcpy(ends.data(), &m.stats[i].end[0], ends.size() * sizeof(Edge),
                        hipMemcpyDeviceToHost),
              "hipMemcpy(ends)");
        res.ranges = pair_edges(std::move(starts), std::move(ends));
      }
    }
  } catch (const std::exception& e) {
    for (SweepResult& r : all) {
      r.status = MXGATE_ERROR;
      r.message = e.what();
    }
  }
  return all;
}

double CastSweeper::cast_only_ms(const mxgate_op& op, mxgate_dtype out_dtype, uint64_t begin,
                                 uint64_t end) {
  Impl& m = *impl_;
  check(hipEventRecord(m.start, m.stream), "hipEventRecord");
  for (uint64_t base = begin; base < end; base += chunk_) {
    const uint64_t count = std::min(chunk_, end - base);
    const uint32_t* in = m.inputs + base;
    if (!resident_) {
      m.fill(m.inputs, base, count);
      in = m.inputs;
    }
    mxgate_call call = cast_call(in, m.out(), count, out_dtype, m.stream);
    char message[512] = {0};
    if (op.run(op.state, &call, message, sizeof message) != MXGATE_DONE) {
      throw std::runtime_error(std::string("cast op declined or failed: ") + message);
    }
  }
  check(hipEventRecord(m.stop, m.stream), "hipEventRecord");
  check(hipStreamSynchronize(m.stream), "cast_only");
  float ms = 0;
  check(hipEventElapsedTime(&ms, m.start, m.stop), "hipEventElapsedTime");
  return ms;
}

namespace {

struct HostSink {
  unsigned long long lowest = ~0ull;
  std::vector<Edge> starts, ends;
  void first(unsigned long long p) { lowest = std::min(lowest, p); }
  void start(Edge e) { starts.push_back(e); }
  void end(Edge e) { ends.push_back(e); }
};

}  // namespace

SweepResult compare_on_host(const uint8_t* codes, uint64_t count, uint64_t base,
                            const RunTable& expected, uint32_t code_bytes) {
  SweepResult res;
  res.status = MXGATE_DONE;
  const CompareArgs a{codes,
                      count,
                      base,
                      expected.begin.data(),
                      expected.code.data(),
                      static_cast<uint32_t>(expected.begin.size()),
                      code_bytes,
                      nullptr};
  HostSink h;
  for (uint64_t block_start = 0; block_start < count; block_start += kPerBlock) {
    const uint64_t block_end = std::min(block_start + kPerBlock, count);
    const uint32_t lo =
        find_run(a.run_begin, 0, a.nruns - 1, static_cast<uint32_t>(base + block_start));
    const uint32_t hi =
        find_run(a.run_begin, lo, a.nruns - 1, static_cast<uint32_t>(base + block_end - 1));
    for (uint64_t t0 = block_start; t0 < block_end; t0 += kPerThread) {
      const int n = static_cast<int>(std::min<uint64_t>(kPerThread, block_end - t0));
      uint32_t local_codes[kPerThread];
      for (int e = 0; e < n; ++e) local_codes[e] = load_code(a, t0 + e);
      res.mismatches += compare_span(a, t0, n, local_codes, lo, hi, h);
    }
  }
  res.checked = count;
  if (h.lowest != ~0ull) {
    const uint32_t x = static_cast<uint32_t>(h.lowest >> 32);
    res.first = MismatchRange{x, x, static_cast<uint32_t>((h.lowest >> 16) & 0xFFFFu),
                              static_cast<uint32_t>(h.lowest & 0xFFFFu)};
  }
  res.ranges = pair_edges(std::move(h.starts), std::move(h.ends));
  return res;
}

}  // namespace mxgate::sweep
