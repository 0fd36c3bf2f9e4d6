// The invocation harness: one call of one op on guarded buffers, and the verdict kinds beside
// pass / fail. The harness allocates every buffer on the backend of the op's memory (the
// backend under test for built-in ops and ops whose memory it is; a host backend for host-memory
// ops), so each has Backend's guard bands, and outputs start as 0xFF poison. Then it checks the
// call against the op's contract, names the op to the gate's watchdog, runs it (device ops on
// the backend's stream), synchronizes and checks every guard.
//
// Outcomes other than DONE are exceptions:
//   Unsupported      the case is outside the op's contract, or the op cannot run on this
//                    backend: counted and listed by the caller, never a failure
//   InvocationError  kContractMismatch: the op declined (MXGATE_UNSUPPORTED) a case inside its
//                    declared contract; kError: the op returned an error, threw, or damaged a
//                    guard band. Both are failures.
// A crash or hang inside an op is the gate's watchdog's (tools/mxgate/watchdog.h).
// docs/plugins.md §4.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/backend.h"
#include "impl/op.h"

namespace mxgate::impl {

class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvocationError : public std::runtime_error {
 public:
  enum class Kind { kContractMismatch, kError };
  InvocationError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// The backend whose memory `op` uses when `under_test` is the backend under test; throws
// Unsupported when there is none (a CUDA op without --backend cuda) or the op is unavailable.
gpu::Backend& backend_for(const Op& op, gpu::Backend& under_test);

// A process-wide host backend for host-memory ops when the backend under test is a device.
gpu::Backend& host_backend();

// What the calls of one run share: the backend under test and the zoo faults planted in the
// built-in kernels (gpu::kernel_fault bits). The harness hands the faults to the op as
// Call::kernel_faults, which only the built-in ops read (impl/builtin.h); a plugin's or an
// adapter's op never sees them. Callers build no fault bits into their calls.
struct RunContext {
  gpu::Backend& under_test;
  uint64_t kernel_faults = 0;
};

class Invocation {
 public:
  // Throws Unsupported (backend_for).
  Invocation(const Op& op, const RunContext& run);
  Invocation(const Op& op, gpu::Backend& under_test) : Invocation(op, RunContext{under_test}) {}
  ~Invocation();
  Invocation(const Invocation&) = delete;
  Invocation& operator=(const Invocation&) = delete;

  // An input: `bytes` are its stored bytes (layout and padding already applied).
  void input(Tensor Call::*slot, std::span<const uint8_t> bytes, uint64_t rows, uint64_t cols,
             uint64_t ld, Dtype dtype, Layout layout);
  // An input of `bytes` bytes that the caller writes before run(): in place (host_data) or with
  // refill(). Until then it holds the poison every allocation starts with.
  void input(Tensor Call::*slot, uint64_t bytes, uint64_t rows, uint64_t cols, uint64_t ld,
             Dtype dtype, Layout layout);
  // An input in storage the caller owns and keeps unchanged while the op may run (host-memory
  // ops only; throws std::logic_error otherwise): handed to the op as is, no copy, no guard bands
  // of the harness's (the caller guards it; Backend::adopt). Given again for the same slot with
  // the same size, the tensor moves to the new storage (a sweep's next chunk of resident inputs).
  void input_view(Tensor Call::*slot, const uint8_t* storage, uint64_t bytes, uint64_t rows,
                  uint64_t cols, uint64_t ld, Dtype dtype, Layout layout);
  // An output of `bytes` bytes (poisoned).
  void output(Tensor Call::*slot, uint64_t bytes, uint64_t rows, uint64_t cols, uint64_t ld,
              Dtype dtype, Layout layout);
  // Runs the call: `call` gives m, n, k and the built-in extensions (the run context's kernel
  // faults are applied here); its tensors are the ones given above. Throws Unsupported or
  // InvocationError.
  void run(Call call);
  // The bytes of a tensor after the run.
  std::vector<uint8_t> read(Tensor Call::*slot);
  // run(call), then read(slot): the tail of a call with one output.
  std::vector<uint8_t> run_and_read(Call call, Tensor Call::*slot);

  // Running again on the same buffers (a sweep's calls of one shape: no allocation per call).
  // run() checks the contract, the op's status and every guard band on each call, and a guard is
  // never rewritten, so damage from any call is seen; an output must be poisoned again before
  // the next call (repoison, or the caller through host_data), so an element the op leaves
  // unwritten reads as poison, never as the previous call's value.
  //
  // The tensor's storage when the op's memory is the host's (the caller reads an output or
  // writes an input in place, without a copy); nullptr for device memory.
  uint8_t* host_data(Tensor Call::*slot);
  // An input's new bytes (exactly its size), uploaded.
  void refill(Tensor Call::*slot, std::span<const uint8_t> bytes);
  // An output poisoned again (gpu::kPoisonByte), as output() left it.
  void repoison(Tensor Call::*slot);

  gpu::Backend& backend() { return *be_; }

 private:
  const Tensor& given(Tensor Call::*slot) const;

  const Op& op_;
  gpu::Backend* be_;
  uint64_t kernel_faults_ = 0;
  std::unique_ptr<gpu::ScopedBuffers> buffers_;
  Call tensors_;
};

}  // namespace mxgate::impl
