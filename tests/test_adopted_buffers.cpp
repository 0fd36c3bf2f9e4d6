// Covers storage the caller owns handed to an op as a buffer (gpu/backend.h Backend::adopt,
// rebase; impl/harness.h Invocation::input_view), the path of the host cast survey's resident
// inputs: the op gets the caller's address (no copy), a view moved to other storage is what the
// next call gets, the harness's guard check skips the caller's storage without hiding damage to
// the buffers it did allocate, releasing it leaves the storage alone, and a buffer the backend
// allocated is refused a rebase. Does not cover: the survey's write protection of its views
// (test_cast_survey.cpp), device backends (input_view is for host-memory ops).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/harness.h"
#include "impl/registry.h"

namespace mxgate {
namespace {

using impl::Call;
using impl::Dtype;
using impl::Layout;
using impl::Op;

// The example's cast_satfinite, recording the input address of each call.
Op recording_cast(std::vector<const void*>& seen) {
  Op op = *impl::resolve("example").front()->find_op("cast_satfinite");
  const Op inner = op;
  op.impl = "test";
  op.run = [inner, &seen](gpu::Backend& be, const Call& call, std::string& message) {
    seen.push_back(be.address(call.a.buffer));
    return inner.run(be, call, message);
  };
  return op;
}

// Guards against a view that is a copy after all (the survey would write 16 GiB per sweep) or
// one that does not move: each call's op gets exactly the storage given for it, and casts it.
TEST(AdoptedBuffers, TheOpGetsTheCallersStorageAndItsMoves) {
  const std::vector<float> inputs = {1.0f, 2.0f, 448.0f, 0.5f};  // e4m3fn 0x38 0x40 0x7E 0x30
  std::vector<const void*> seen;
  const Op op = recording_cast(seen);
  gpu::HostBackend be;
  impl::Invocation inv(op, be);
  const auto* bytes = reinterpret_cast<const uint8_t*>(inputs.data());
  inv.input_view(&Call::a, bytes, 8, 1, 2, 2, Dtype::kF32, Layout::kRowMajor);
  inv.output(&Call::out, 2, 1, 2, 2, Dtype::kE4m3fn, Layout::kRowMajor);
  Call call;
  call.m = 1;
  call.k = 2;
  EXPECT_EQ(inv.run_and_read(call, &Call::out), (std::vector<uint8_t>{0x38, 0x40}));
  inv.repoison(&Call::out);
  inv.input_view(&Call::a, bytes + 8, 8, 1, 2, 2, Dtype::kF32, Layout::kRowMajor);
  EXPECT_EQ(inv.run_and_read(call, &Call::out), (std::vector<uint8_t>{0x7E, 0x30}));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], static_cast<const void*>(bytes));
  EXPECT_EQ(seen[1], static_cast<const void*>(bytes + 8));
}

// Guards against the guard check reading bands around the caller's storage (bytes it does not
// own) or, skipping them, skipping the harness's own: a write past the output is still named.
TEST(AdoptedBuffers, GuardsAreCheckedOnTheHarnessBuffersOnly) {
  const std::vector<float> inputs = {1.0f, 2.0f};
  Op op = *impl::resolve("example").front()->find_op("cast_satfinite");
  const Op inner = op;
  op.run = [inner](gpu::Backend& be, const Call& call, std::string& message) {
    const impl::Status s = inner.run(be, call, message);
    static_cast<uint8_t*>(be.address(call.out.buffer))[call.k] = 0;  // one byte past the output
    return s;
  };
  gpu::HostBackend be;
  impl::Invocation inv(op, be);
  inv.input_view(&Call::a, reinterpret_cast<const uint8_t*>(inputs.data()), 8, 1, 2, 2, Dtype::kF32,
                 Layout::kRowMajor);
  inv.output(&Call::out, 2, 1, 2, 2, Dtype::kE4m3fn, Layout::kRowMajor);
  Call call;
  call.m = 1;
  call.k = 2;
  try {
    inv.run(call);
    FAIL() << "a write past the output passed";
  } catch (const impl::InvocationError& e) {
    EXPECT_NE(std::string(e.what()).find("'out'"), std::string::npos) << e.what();
  }
}

// Guards against the backend freeing or poisoning storage it was only lent: after release the
// caller's bytes are intact, and rebase refuses a buffer the backend allocated (its address is
// past a guard band, not the caller's).
TEST(AdoptedBuffers, ReleaseLeavesTheStorageAndRebaseTakesAdoptedOnly) {
  std::vector<uint8_t> storage = {1, 2, 3, 4};
  gpu::HostBackend be;
  const gpu::BufferId id = be.adopt(storage.data(), storage.size(), "lent");
  EXPECT_EQ(be.address(id), storage.data());
  EXPECT_TRUE(be.check_guards().empty());
  be.release(id);
  EXPECT_EQ(storage, (std::vector<uint8_t>{1, 2, 3, 4}));
  const gpu::BufferId own = be.allocate(4, "own");
  EXPECT_THROW(be.rebase(own, storage.data()), gpu::GpuError);
  be.release(own);
}

}  // namespace
}  // namespace mxgate
