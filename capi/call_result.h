// What both parts of libmxgate.so share (include/mxgate/api.h): the result object a call hands
// back and the caller frees, the option pairs as verbs::Args reads them, and the guard that turns
// any exception into a status and this thread's message. The parts: verb_calls.cpp
// (mxgate_api_run, each verb through verbs/) and property_check.cpp (mxgate_api_check, a property
// through properties/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mxgate/api.h"
#include "reference/npy.h"
#include "verbs/args.h"

struct mxgate_api_result {
  struct Output {
    std::string name;
    std::string descr;
    std::vector<uint64_t> shape;
    mxgate::NpyArray array;
  };
  std::vector<Output> arrays;
  std::string text;
  std::optional<mxgate_api_verdict> verdict;
};

namespace mxgate::capi {

// This thread's message of the last call that failed ("" after one that succeeded).
extern thread_local std::string last_error;

// Calls f; any exception becomes a status (MXGATE_API_ERROR_*) and this thread's message.
int guarded(const std::function<void()>& f);

// The (name, value) pairs of a call; a NULL value is a flag. Throws verbs::UsageError when
// names or values is NULL for a positive count, or a name is NULL.
std::vector<verbs::Args::Named> named_options(std::size_t count, const char* const* names,
                                              const char* const* values);

}  // namespace mxgate::capi
