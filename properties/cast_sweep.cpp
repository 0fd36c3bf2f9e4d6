#include "properties/cast_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "common/machinery_fault.h"
#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/worker_pool.h"
#include "reference/convention.h"
#include "reference/format.h"

namespace mxgate::properties {

std::string SweepResult::describe() const {
  if (!first_input) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "0x%08x (%a): expected 0x%02x, actual 0x%02x", *first_input,
                static_cast<double>(float_of(*first_input)), expected, actual);
  return buf;
}

std::vector<std::pair<const impl::Op*, impl::Dtype>> sweep_targets(
    const impl::Implementation& impl) {
  std::vector<std::pair<const impl::Op*, impl::Dtype>> out;
  for (const impl::Op& op : impl.ops) {
    if (op.family != impl::Family::kCast || op.memory != impl::Memory::kHost) continue;
    if (op.contract.conventions.empty()) continue;
    for (impl::Dtype d : impl::dtypes_in(op.contract.out_dtypes)) {
      const auto f = cast_format(d);
      if (f && cast_encoder(op.contract.conventions.front(), *f)) out.emplace_back(&op, d);
    }
  }
  return out;
}

SweepResult sweep_cast(gpu::Backend& be, const impl::Op& op, impl::Dtype target, uint64_t begin,
                       uint64_t end, uint64_t chunk,
                       const std::function<bool(uint64_t done)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (op.family != impl::Family::kCast) throw impl::Unsupported(op.name + " is not a cast op");
  if (op.contract.conventions.empty()) throw impl::Unsupported(op.name + " claims no convention");
  const auto format = cast_format(target);
  const auto encoder = format ? cast_encoder(op.contract.conventions.front(), *format)
                              : std::function<uint32_t(float)>();
  if (!encoder) {
    throw impl::Unsupported(op.name + ": its convention defines no encoder for " +
                            std::string(impl::to_string(target)));
  }
  const std::size_t width = impl::dtype_bytes(target);
  end = std::min<uint64_t>(end, uint64_t{1} << 32);
  chunk = std::max<uint64_t>(1, chunk);
  SweepResult out;
  // One guarded set of buffers per call size, reused: the inputs written before each call, the
  // output poisoned again (an element the op leaves unwritten reads as poison, never as the
  // previous call's code); the guards are checked after every call (impl/harness.h).
  std::unique_ptr<impl::Invocation> inv;
  uint64_t armed = 0;
  WorkerPool& pool = WorkerPool::shared();
  struct Part {
    uint64_t mismatches = 0;
    std::optional<uint32_t> first, last;
    uint32_t expected = 0, actual = 0;
    std::exception_ptr error;  // the encoder threw (a pool task must not): rethrown after
  };
  std::vector<Part> parts;
  std::vector<uint8_t> staged_in, staged_out;  // device memory only
  for (uint64_t lo = begin; lo < end; lo += chunk) {
    const uint64_t count = std::min(chunk, end - lo);
    if (armed != count) {
      inv = std::make_unique<impl::Invocation>(op, be);
      inv->input(&impl::Call::a, count * 4, 1, count, count, impl::Dtype::kF32,
                 impl::Layout::kRowMajor);
      inv->output(&impl::Call::out, count * width, 1, count, count, target,
                  impl::Layout::kRowMajor);
      armed = count;
    } else {
      inv->repoison(&impl::Call::out);
    }
    // Host memory (every op sweep_targets lists) is written and read in place; device memory
    // through a staging copy each way.
    uint8_t* in = inv->host_data(&impl::Call::a);
    const bool staged = in == nullptr;
    if (staged) {
      staged_in.resize(count * 4);
      in = staged_in.data();
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint32_t bits = static_cast<uint32_t>(lo + i);
      std::memcpy(in + i * 4, &bits, 4);
    }
    if (staged) inv->refill(&impl::Call::a, staged_in);
    impl::Call call;
    call.m = 1;
    call.k = count;
    inv->run(call);
    const uint8_t* got = inv->host_data(&impl::Call::out);
    if (got == nullptr) {
      staged_out = inv->read(&impl::Call::out);
      got = staged_out.data();
    }
    // The encoder per input on every core, a slice per task; the lowest slice's first mismatch
    // is the call's (inputs ascend).
    const std::size_t slices =
        std::max<std::size_t>(1, std::min<uint64_t>(pool.size() * 4, count >> 12));
    parts.assign(slices, Part{});
    pool.run(slices, [&](std::size_t s) {
      Part& p = parts[s];
      try {
        for (uint64_t i = count * s / slices; i < count * (s + 1) / slices; ++i) {
          const uint32_t bits = static_cast<uint32_t>(lo + i);
          const uint32_t want = encoder(float_of(bits));
          uint32_t actual = 0;
          std::memcpy(&actual, got + i * width, width);
          if (actual == want) continue;
          p.last = bits;
          if (p.mismatches++ == 0) {
            p.first = bits;
            p.expected = want;
            p.actual = actual;
          }
        }
      } catch (...) {
        p.error = std::current_exception();
      }
    });
    for (const Part& p : parts) {
      if (p.error) std::rethrow_exception(p.error);
    }
    // Test plant (common/machinery_fault.h): the chunks after the first are never compared.
    const bool compared = lo == begin || !machinery_fault_is(MachineryFault::kSweepFirstChunkOnly);
    for (const Part& p : parts) {
      if (!compared) break;
      if (p.last) out.last_input = p.last;
      if (p.first && !out.first_input) {
        out.first_input = p.first;
        out.expected = p.expected;
        out.actual = p.actual;
      }
      out.mismatches += p.mismatches;
    }
    out.inputs += count;
    if (progress && !progress(out.inputs) && out.inputs < end - begin) {
      out.stopped = true;
      break;
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace mxgate::properties
