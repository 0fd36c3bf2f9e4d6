#include "impl/harness.h"

#include "gpu/host/host_backend.h"

namespace mxgate::impl {

gpu::Backend& host_backend() {
  static gpu::HostBackend be;
  return be;
}

gpu::Backend& backend_for(const Op& op, gpu::Backend& under_test) {
  gpu::Backend* be = nullptr;
  switch (op.memory) {
    case Memory::kBackend:
      be = &under_test;
      break;
    case Memory::kHost:
      be = under_test.memory() == Memory::kHost ? &under_test : &host_backend();
      break;
    case Memory::kCuda:
    case Memory::kHip:
      if (under_test.memory() != op.memory) {
        throw Unsupported(op.impl + "/" + op.name + " needs " + std::string(to_string(op.memory)) +
                          " memory; the backend under test is " + std::string(under_test.name()) +
                          " (--backend " + std::string(to_string(op.memory)) + ")");
      }
      be = &under_test;
      break;
  }
  if (op.available && !op.available(*be)) {
    throw Unsupported(op.impl + "/" + op.name + " is not available on backend " +
                      std::string(be->name()));
  }
  return *be;
}

namespace {

const char* slot_name(Tensor Call::*slot) {
  if (slot == &Call::a) return "a";
  if (slot == &Call::a_scale) return "a_scale";
  if (slot == &Call::b) return "b";
  if (slot == &Call::b_scale) return "b_scale";
  if (slot == &Call::out) return "out";
  if (slot == &Call::a_global) return "a_global";
  if (slot == &Call::b_global) return "b_global";
  if (slot == &Call::group_offsets) return "group_offsets";
  return "out_scale";
}

// A tensor's description beside its buffer.
void describe(Tensor& t, uint64_t bytes, uint64_t rows, uint64_t cols, uint64_t ld, Dtype dtype,
              Layout layout) {
  t.bytes = bytes;
  t.rows = rows;
  t.cols = cols;
  t.ld = ld;
  t.dtype = dtype;
  t.layout = layout;
}

}  // namespace

Invocation::Invocation(const Op& op, const RunContext& run)
    : op_(op),
      be_(&backend_for(op, run.under_test)),
      kernel_faults_(run.kernel_faults),
      buffers_(std::make_unique<gpu::ScopedBuffers>(*be_)) {}

Invocation::~Invocation() = default;

void Invocation::input(Tensor Call::*slot, std::span<const uint8_t> bytes, uint64_t rows,
                       uint64_t cols, uint64_t ld, Dtype dtype, Layout layout) {
  input(slot, bytes.size(), rows, cols, ld, dtype, layout);
  be_->upload((tensors_.*slot).buffer, bytes);
}

// An input whose bytes the caller writes later (host_data) and an output are placed alike: a
// fresh buffer of `bytes`, 0xFF poison (Backend::allocate), and the tensor's description.
void Invocation::input(Tensor Call::*slot, uint64_t bytes, uint64_t rows, uint64_t cols,
                       uint64_t ld, Dtype dtype, Layout layout) {
  Tensor& t = tensors_.*slot;
  t.buffer = buffers_->allocate(bytes, slot_name(slot));
  describe(t, bytes, rows, cols, ld, dtype, layout);
}

void Invocation::input_view(Tensor Call::*slot, const uint8_t* storage, uint64_t bytes,
                            uint64_t rows, uint64_t cols, uint64_t ld, Dtype dtype, Layout layout) {
  if (be_->memory() != Memory::kHost) {
    throw std::logic_error("Invocation::input_view for " + op_.name +
                           ", whose memory is not the host's");
  }
  Tensor& t = tensors_.*slot;
  // The op only reads an input; the backend's buffers hold non-const storage.
  auto* p = const_cast<uint8_t*>(storage);
  if (t.present() && t.bytes == bytes) {
    be_->rebase(t.buffer, p);
  } else {
    t.buffer = buffers_->adopt(p, bytes, slot_name(slot));
  }
  describe(t, bytes, rows, cols, ld, dtype, layout);
}

void Invocation::output(Tensor Call::*slot, uint64_t bytes, uint64_t rows, uint64_t cols,
                        uint64_t ld, Dtype dtype, Layout layout) {
  input(slot, bytes, rows, cols, ld, dtype, layout);
}

void Invocation::run(Call call) {
  call.family = op_.family;
  call.kernel_faults = kernel_faults_;
  for (Tensor Call::*slot :
       {&Call::a, &Call::a_scale, &Call::b, &Call::b_scale, &Call::out, &Call::out_scale,
        &Call::a_global, &Call::b_global, &Call::group_offsets}) {
    call.*slot = tensors_.*slot;
  }
  if (auto why = check_call(op_.name, op_.contract, call)) {
    throw Unsupported("outside the contract of " + op_.impl + "/" + *why);
  }
  const std::string who = op_.impl + "/" + op_.name +
                          (op_.tactic_count() > 1 ? " tactic " + std::to_string(op_.tactic) : "");
  gpu::observe_launch(who);
  std::string message;
  Status status = Status::kError;
  try {
    status = op_.run(*be_, call, message);
  } catch (const std::exception& e) {
    throw InvocationError(InvocationError::Kind::kError, who + " threw: " + e.what());
  }
  if (status == Status::kNoTactic) {
    // A per-case tactic list shorter than the declared count (plugin.h MXGATE_NO_TACTIC).
    throw Unsupported(who + ": no such tactic for this case" +
                      (message.empty() ? "" : ": " + message));
  }
  if (status == Status::kUnsupported) {
    throw InvocationError(
        InvocationError::Kind::kContractMismatch,
        "contract mismatch: " + who + " declined a case inside its declared contract: " + message);
  }
  if (status != Status::kDone) {
    throw InvocationError(InvocationError::Kind::kError, who + " returned an error: " + message);
  }
  try {
    be_->synchronize();
  } catch (const std::exception& e) {
    throw InvocationError(InvocationError::Kind::kError,
                          who + ": synchronize after the call failed: " + e.what());
  }
  const std::vector<gpu::GuardDamage> damage = be_->check_guards();
  if (!damage.empty()) {
    throw InvocationError(InvocationError::Kind::kError,
                          who + ": " + std::to_string(damage.size()) +
                              " guard byte(s) damaged; first: " + damage.front().describe());
  }
}

std::vector<uint8_t> Invocation::run_and_read(Call call, Tensor Call::*slot) {
  run(call);
  return read(slot);
}

std::vector<uint8_t> Invocation::read(Tensor Call::*slot) {
  const Tensor& t = tensors_.*slot;
  if (!t.present()) throw std::logic_error("Invocation::read of a tensor that was not given");
  return be_->download(t.buffer);
}

const Tensor& Invocation::given(Tensor Call::*slot) const {
  const Tensor& t = tensors_.*slot;
  if (!t.present()) throw std::logic_error("Invocation: a tensor that was not given");
  return t;
}

uint8_t* Invocation::host_data(Tensor Call::*slot) {
  const Tensor& t = given(slot);
  return be_->memory() == Memory::kHost ? static_cast<uint8_t*>(be_->address(t.buffer)) : nullptr;
}

void Invocation::refill(Tensor Call::*slot, std::span<const uint8_t> bytes) {
  be_->upload(given(slot).buffer, bytes);
}

void Invocation::repoison(Tensor Call::*slot) { be_->poison(given(slot).buffer); }

}  // namespace mxgate::impl
