// mxgate_api_vocabulary: the element types (common/dtypes.h), scaled formats, op families and
// layouts (contract/contract.h) as JSON, so the Python package numbers nothing by hand
// (python/mxgate/adapter.py reads it at import).
#include <string>

#include "common/dtypes.h"
#include "contract/contract.h"
#include "mxgate/api.h"

namespace mxgate::capi {
namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The names of the scaled formats whose bit is in `bits`, as a JSON array.
std::string formats_in(unsigned bits) {
  std::string out = "[";
  for (const dtypes::ScaledFormat& f : dtypes::kScaledFormats) {
    if ((bits & f.bit) == 0) continue;
    if (out.size() > 1) out += ",";
    out += quoted(f.name);
  }
  return out + "]";
}

std::string vocabulary_json() {
  std::string out = "{\"schema\":\"mxgate-vocabulary/1\",\"dtypes\":[";
  for (const dtypes::ElementType& t : dtypes::kElementTypes) {
    if (out.back() != '[') out += ",";
    out += "{\"name\":" + quoted(t.name) + ",\"code\":" + std::to_string(t.code) +
           ",\"bits\":" + std::to_string(t.bits) +
           ",\"exponent_bits\":" + std::to_string(t.exponent_bits) +
           ",\"mantissa_bits\":" + std::to_string(t.mantissa_bits) +
           ",\"storage_bytes\":" + std::to_string(t.storage_bytes) +
           ",\"element_of\":" + formats_in(t.element_of) +
           ",\"scale_of\":" + formats_in(t.scale_of) + "}";
  }
  out += "],\"scaled_formats\":[";
  for (const dtypes::ScaledFormat& f : dtypes::kScaledFormats) {
    if (out.back() != '[') out += ",";
    out += "{\"name\":" + quoted(f.name) + ",\"block\":" + std::to_string(f.block) + "}";
  }
  out += "],\"families\":[";
  for (contract::Family f : contract::all_families()) {
    if (out.back() != '[') out += ",";
    out += "{\"name\":" + quoted(contract::to_string(f)) +
           ",\"code\":" + std::to_string(static_cast<uint32_t>(f)) + "}";
  }
  out += "],\"layouts\":[";
  for (contract::Layout l : contract::all_layouts()) {
    if (out.back() != '[') out += ",";
    out += "{\"name\":" + quoted(contract::to_string(l)) +
           ",\"code\":" + std::to_string(static_cast<uint32_t>(l)) + "}";
  }
  return out + "]}";
}

}  // namespace
}  // namespace mxgate::capi

const char* mxgate_api_vocabulary(void) {
  static const std::string kText = mxgate::capi::vocabulary_json();
  return kText.c_str();
}
