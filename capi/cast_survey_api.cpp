// libmxgate.so, part three: mxgate_api_survey_cast, the cast survey of one op of an in-memory
// implementation in the caller's process (a Python worker's or mxgate.survey_cast's), and the
// device-memory helpers Python device ops use (include/mxgate/api.h). A host op goes through
// properties::survey_cast on a host backend; a device op (CUDA builds, MXGATE_CAPI_CUDA) through
// the device cast sweep of gpu/kernels/cast_sweep, the machinery the cuda_fp8 plugin's sweep
// uses: its inputs made on the device, its output compared there with each claim's run table
// (expected_runs, from the reference's oracles), only counts and first mismatches coming back.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "capi/call_result.h"
#include "capi/heap_policy.h"
#include "capi/in_memory_impl.h"
#include "contract/contract.h"
#include "gpu/host/host_backend.h"
#include "mxgate/api.h"
#include "mxgate/plugin.h"
#include "properties/cast_survey.h"
#include "properties/cast_values.h"
#include "verbs/args.h"

#ifdef MXGATE_CAPI_CUDA
#include <cuda_runtime.h>

#include "gpu/kernels/cast_sweep/cast_sweep.h"
#endif

namespace mxgate::capi {
namespace {

using verbs::UsageError;

#ifdef MXGATE_CAPI_CUDA
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// One sweeper per process (its 2^32 resident inputs are made once).
sweep::CastSweeper& sweeper() {
  static sweep::CastSweeper s(uint64_t{1} << 28);
  return s;
}

// sweep::expected_runs, built once per (claim, format) in a process (a worker surveys each op
// and target in turn: ops of one format share the tables).
std::optional<sweep::RunTable> cached_expected_runs(const std::string& claim, mxgate_dtype dtype) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::optional<sweep::RunTable>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(claim, static_cast<int>(dtype));
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, sweep::expected_runs(claim, dtype)).first;
  return it->second;
}

// Every claim of the target's format, equal tables merged, each distinct table swept once.
properties::CastSurvey device_survey(const mxgate_op& mo, const impl::Op& op, impl::Dtype target,
                                     const properties::SurveyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  properties::CastSurvey out;
  out.op = op.name;
  out.target = target;
  out.claimed = op.contract.conventions.empty() ? "" : op.contract.conventions.front();
  const auto dtype = static_cast<mxgate_dtype>(target);
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  std::vector<sweep::RunTable> tables;
  for (const std::string& claim : properties::claims_for(*properties::cast_format(target))) {
    auto t = cached_expected_runs(claim, dtype);
    if (!t) continue;
    bool merged = false;
    for (std::size_t i = 0; i < tables.size() && !merged; ++i) {
      if (tables[i].begin == t->begin && tables[i].code == t->code) {
        out.results[i].claims.push_back(claim);
        merged = true;
      }
    }
    if (!merged) {
      tables.push_back(std::move(*t));
      out.results.push_back({{claim}, 0, std::nullopt, 0, 0});
    }
  }
  // Setup, timed apart from the sweep: the sweeper (its 2^32 resident inputs made once per
  // process), the tables above, and one warm-up pass of the op over the sweep's first chunk (the
  // same count as every chunk, so a kernel compile or a jit per shape happens here). A warm-up
  // the op declines or fails is the row's error, as the sweep's would be.
  constexpr uint64_t kAll = uint64_t{1} << 32;
  sweep::CastSweeper& sw = sweeper();
  std::vector<const sweep::RunTable*> pointers;
  for (const sweep::RunTable& t : tables) pointers.push_back(&t);
  const auto stopped = [&](const std::vector<sweep::SweepResult>& rs) -> std::string {
    for (const sweep::SweepResult& r : rs) {
      if (r.status != MXGATE_DONE) {
        return (r.status == MXGATE_UNSUPPORTED ? "declined: " : "") + r.message;
      }
      if (r.guard_damaged)
        return op.name + " wrote outside its output buffer (guard bands damaged)";
    }
    return "";
  };
  out.error =
      stopped(sw.sweep_tables(mo, dtype, pointers, 0, std::min<uint64_t>(kAll, sw.chunk())));
  out.setup_seconds = since(t0);
  if (!out.error.empty()) return out;
  const auto t1 = std::chrono::steady_clock::now();
  // One pass: the op runs once per chunk, every distinct table compared with its output.
  const auto heard = [&](uint64_t done) {
    if (progress) progress(done, kAll);
  };
  const std::vector<sweep::SweepResult> rs = sw.sweep_tables(mo, dtype, pointers, 0, kAll, heard);
  for (std::size_t i = 0; i < rs.size() && i < tables.size(); ++i) {
    const sweep::SweepResult& r = rs[i];
    if (r.status != MXGATE_DONE) {
      out.error = (r.status == MXGATE_UNSUPPORTED ? "declined: " : "") + r.message;
      break;
    }
    if (r.guard_damaged) {
      out.error = op.name + " wrote outside its output buffer (guard bands damaged)";
      break;
    }
    out.inputs = r.checked;
    out.results[i].mismatches = r.mismatches;
    if (r.first) {
      out.results[i].first_input = r.first->first;
      out.results[i].expected = r.first->expected;
      out.results[i].actual = r.first->actual;
    }
  }
  out.seconds = since(t1);
  return out;
}
#endif

std::string survey_text(const mxgate_impl* mi, uint32_t op_index, const char* target_name,
                        const char* inputs_name, uint64_t call_inputs, mxgate_api_progress progress,
                        void* context) {
  if (mi == nullptr) throw UsageError("impl is NULL");
  if (op_index >= mi->op_count) {
    throw UsageError("op_index " + std::to_string(op_index) + " is past the implementation's " +
                     std::to_string(mi->op_count) + " ops");
  }
  const std::string which = inputs_name ? inputs_name : "all";
  if (which != "all" && which != "sample") throw UsageError("inputs must be all or sample");
  const auto target = contract::parse_dtype(target_name ? target_name : "");
  if (!target || !properties::element_cast_format(*target)) {
    throw UsageError("target '" + std::string(target_name ? target_name : "") +
                     "' is no cast target format");
  }
  const impl::Implementation im = in_memory_implementation(mi);
  const impl::Op* op = im.find_op(mi->ops[op_index].name);
  if (op == nullptr || op->family != impl::Family::kCast) {
    throw UsageError("op " + std::to_string(op_index) + " is not a cast op");
  }
  if ((op->contract.out_dtypes & impl::dtype_bit(*target)) == 0) {
    throw UsageError("op " + op->name + " does not declare target " + target_name);
  }
  const properties::SurveyProgress heard = [&](uint64_t done, uint64_t total) {
    if (progress != nullptr) progress(context, done, total);
    return true;
  };
  if (op->memory == impl::Memory::kHost) {
    // Calls of 2^22 inputs by default (16 MiB of them, their outputs 4 MiB): what the op
    // allocates per call (a returned array, a 4-byte temporary per input) stays below the heap
    // policy's mmap threshold, so the 1024 calls of a format reuse mapped pages. An op that
    // allocates nothing per call (a Python op writing mxgate's output in place) is better served
    // by fewer, larger calls (call_inputs): each call's fixed costs (the Python call, the op's
    // thread pool stopping, the survey's pass waking its threads) are then paid fewer times
    // (docs/python.md §14.8). The inputs are views of the resident copy either way.
    keep_freed_heap();
    gpu::HostBackend be;
    const uint64_t chunk = call_inputs != 0 ? call_inputs : uint64_t{1} << 22;
    return properties::survey_lines(properties::survey_cast(
        be, *op, *target,
        which == "all" ? properties::CastInputs::kAll : properties::CastInputs::kSample, chunk,
        heard));
  }
#ifdef MXGATE_CAPI_CUDA
  if (op->memory == impl::Memory::kCuda) {
    if (!properties::cast_format(*target)) {
      throw UsageError(std::string("target ") + target_name +
                       ": the device sweep compares one code per byte or word; FP4 / FP6 targets "
                       "are surveyed on host ops");
    }
    return properties::survey_lines(device_survey(mi->ops[op_index], *op, *target, heard));
  }
#endif
  throw std::runtime_error("op " + op->name +
                           " takes device memory; this libmxgate.so has no device sweep for it "
                           "(build it with the cuda preset)");
}

#ifndef MXGATE_CAPI_CUDA
int no_device() {
  last_error = "this libmxgate.so was built without CUDA (the cuda preset builds one with it)";
  return MXGATE_API_ERROR_RUNTIME;
}
#endif

}  // namespace
}  // namespace mxgate::capi

extern "C" {

int mxgate_api_survey_cast_calls(const mxgate_impl* impl, uint32_t op_index, const char* target,
                                 const char* inputs, uint64_t call_inputs,
                                 mxgate_api_progress progress, void* context,
                                 mxgate_api_result** result) {
  if (!result) {
    mxgate::capi::last_error = "result is NULL";
    return MXGATE_API_ERROR_INPUT;
  }
  *result = nullptr;
  return mxgate::capi::guarded([&] {
    auto r = std::make_unique<mxgate_api_result>();
    r->text =
        mxgate::capi::survey_text(impl, op_index, target, inputs, call_inputs, progress, context);
    *result = r.release();
  });
}

int mxgate_api_survey_cast(const mxgate_impl* impl, uint32_t op_index, const char* target,
                           const char* inputs, mxgate_api_progress progress, void* context,
                           mxgate_api_result** result) {
  return mxgate_api_survey_cast_calls(impl, op_index, target, inputs, 0, progress, context, result);
}

#ifdef MXGATE_CAPI_CUDA
const char* mxgate_api_device_kind(void) {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? "cuda" : "";
}

int mxgate_api_device_alloc(uint64_t bytes, void** out) {
  return mxgate::capi::guarded([&] {
    if (out == nullptr) throw mxgate::verbs::UsageError("out is NULL");
    mxgate::capi::cuda_check(cudaMalloc(out, bytes == 0 ? 1 : bytes), "cudaMalloc");
  });
}

int mxgate_api_device_free(void* pointer) {
  return mxgate::capi::guarded([&] { mxgate::capi::cuda_check(cudaFree(pointer), "cudaFree"); });
}

int mxgate_api_device_copy(void* dst, const void* src, uint64_t bytes, uint32_t kind) {
  return mxgate::capi::guarded([&] {
    const cudaMemcpyKind k = kind == 0   ? cudaMemcpyHostToDevice
                             : kind == 1 ? cudaMemcpyDeviceToHost
                                         : cudaMemcpyDeviceToDevice;
    if (kind > 2) throw mxgate::verbs::UsageError("copy kind must be 0, 1 or 2");
    if (bytes > 0) mxgate::capi::cuda_check(cudaMemcpy(dst, src, bytes, k), "cudaMemcpy");
    mxgate::capi::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  });
}

int mxgate_api_device_sync(void* stream) {
  return mxgate::capi::guarded([&] {
    mxgate::capi::cuda_check(
        stream ? cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) : cudaDeviceSynchronize(),
        "synchronize");
  });
}
#else
const char* mxgate_api_device_kind(void) { return ""; }
int mxgate_api_device_alloc(uint64_t, void**) { return mxgate::capi::no_device(); }
int mxgate_api_device_free(void*) { return mxgate::capi::no_device(); }
int mxgate_api_device_copy(void*, const void*, uint64_t, uint32_t) {
  return mxgate::capi::no_device();
}
int mxgate_api_device_sync(void*) { return mxgate::capi::no_device(); }
#endif

}  // extern "C"
