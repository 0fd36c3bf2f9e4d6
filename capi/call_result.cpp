// The calls of include/mxgate/api.h that belong to neither part of capi/ (verb_calls.cpp,
// property_check.cpp): the version, the last error, and reading and freeing a result. Nothing may
// escape an extern "C" function: every exception becomes a status and this thread's message.
#include "capi/call_result.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

namespace mxgate::capi {

using verbs::UsageError;

thread_local std::string last_error;

int guarded(const std::function<void()>& f) {
  try {
    f();
    last_error.clear();
    return MXGATE_API_OK;
  } catch (const UsageError& e) {
    last_error = e.what();
    return MXGATE_API_ERROR_INPUT;
  } catch (const NpyError& e) {
    last_error = e.what();
    return MXGATE_API_ERROR_INPUT;
  } catch (const std::logic_error& e) {  // invalid_argument, out_of_range, length_error
    last_error = e.what();
    return MXGATE_API_ERROR_INPUT;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return MXGATE_API_ERROR_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return MXGATE_API_ERROR_RUNTIME;
  } catch (...) {
    last_error = "unknown exception (a bug in mxgate)";
    return MXGATE_API_ERROR_INTERNAL;
  }
}

std::vector<verbs::Args::Named> named_options(std::size_t count, const char* const* names,
                                              const char* const* values) {
  if (count > 0 && (!names || !values)) {
    throw UsageError("option_count is " + std::to_string(count) + " but names or values is NULL");
  }
  std::vector<verbs::Args::Named> named;
  for (std::size_t i = 0; i < count; ++i) {
    if (!names[i]) throw UsageError("option " + std::to_string(i) + " has no name");
    named.emplace_back(names[i], values[i] ? std::optional<std::string>(values[i]) : std::nullopt);
  }
  return named;
}

}  // namespace mxgate::capi

using mxgate::capi::guarded;
using mxgate::capi::last_error;
using mxgate::verbs::UsageError;

extern "C" {

uint32_t mxgate_api_version(void) { return MXGATE_API_VERSION; }

const char* mxgate_api_last_error(void) { return last_error.c_str(); }

size_t mxgate_api_result_array_count(const mxgate_api_result* result) {
  return result ? result->arrays.size() : 0;
}

int mxgate_api_result_array(const mxgate_api_result* result, size_t index, mxgate_api_array* out) {
  return guarded([&] {
    if (!result || !out) throw UsageError("result or out is NULL");
    if (index >= result->arrays.size()) {
      throw UsageError("output " + std::to_string(index) + " of " +
                       std::to_string(result->arrays.size()));
    }
    const mxgate_api_result::Output& o = result->arrays[index];
    out->name = o.name.c_str();
    out->descr = o.descr.c_str();
    out->rank = static_cast<uint32_t>(o.shape.size());
    out->reserved = 0;
    out->shape = o.shape.data();
    out->data = o.array.bytes.data();
    out->nbytes = o.array.bytes.size();
  });
}

const char* mxgate_api_result_text(const mxgate_api_result* result) {
  return result ? result->text.c_str() : "";
}

int mxgate_api_result_verdict(const mxgate_api_result* result, mxgate_api_verdict* out) {
  return guarded([&] {
    if (!result || !out) throw UsageError("result or out is NULL");
    if (!result->verdict) throw UsageError("this result has no verdict (check-gemm)");
    if (out->struct_size < 8) {
      throw UsageError("struct_size " + std::to_string(out->struct_size) + " is too small");
    }
    const uint32_t size = out->struct_size;
    std::memcpy(out, &*result->verdict, std::min<size_t>(size, sizeof(mxgate_api_verdict)));
    out->struct_size = size;
  });
}

void mxgate_api_result_free(mxgate_api_result* result) { delete result; }

}  // extern "C"
