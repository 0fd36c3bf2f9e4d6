// libmxgate.so, part one: mxgate_api_run (include/mxgate/api.h), each verb through the verbs
// library (verbs/). A call builds the CLI's Args from the option pairs and the names of the input
// arrays, runs the same verbs/ function the CLI verb runs, and keeps the outputs in a result the
// caller frees (call_result.h). Part two, mxgate_api_check, is property_check.cpp.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/call_result.h"
#include "capi/shapes.h"
#include "mxgate/api.h"
#include "reference/convention.h"
#include "reference/npy.h"
#include "verbs/accumulator_ops.h"
#include "verbs/args.h"
#include "verbs/tensor_ops.h"
#include "verbs/value_ops.h"

namespace mxgate::capi {
namespace {

using verbs::Args;
using verbs::UsageError;

constexpr uint32_t kMaxRank = 32;  // NumPy's limit is 64; no verb takes more than 2

// The verb's inputs as the C caller passed them; converted to NpyArray when the verb reads one.
class Inputs {
 public:
  Inputs(std::size_t count, const mxgate_api_array* arrays) {
    if (count > 0 && !arrays)
      throw UsageError("array_count is " + std::to_string(count) + " but arrays is NULL");
    for (std::size_t i = 0; i < count; ++i) {
      if (!arrays[i].name) throw UsageError("array " + std::to_string(i) + " has no name");
      const std::string name = arrays[i].name;
      if (!by_name_.emplace(name, &arrays[i]).second) {
        throw UsageError("--" + name + " given twice");
      }
    }
  }

  // Each input array stands for the option of its name, present as far as Args is concerned.
  void add_options(std::vector<Args::Named>& named) const {
    for (const auto& [name, array] : by_name_) named.emplace_back(name, name);
  }

  verbs::ArrayReader reader(const Args& a) const {
    return [this, &a](const std::string& option) { return read(a, option); };
  }

 private:
  NpyArray read(const Args& a, const std::string& option) const {
    a.require(option);
    const auto it = by_name_.find(option);
    if (it == by_name_.end())
      throw UsageError("--" + option + ": expected an array, got an option");
    try {
      return convert(*it->second);
    } catch (const NpyError& e) {
      throw UsageError("--" + option + ": " + e.what());
    }
  }

  // Validates the description before touching the data: dtype, rank, shape against nbytes.
  static NpyArray convert(const mxgate_api_array& in) {
    const NpyDtype dtype = npy_dtype_from_descr(in.descr ? in.descr : "(null)");
    if (in.rank > kMaxRank) {
      throw NpyError("rank " + std::to_string(in.rank) + " is larger than " +
                     std::to_string(kMaxRank));
    }
    if (in.rank > 0 && !in.shape) throw NpyError("rank " + std::to_string(in.rank) + ", no shape");
    std::vector<size_t> shape(in.shape, in.shape + in.rank);
    const size_t count = npy_element_count(shape);  // throws on overflow
    const size_t itemsize = npy_dtype_size(dtype);
    if (count > SIZE_MAX / itemsize || in.nbytes != count * itemsize) {
      throw NpyError("shape " + npy_shape_string(shape) + " of " +
                     std::string(npy_dtype_name(dtype)) + " needs " +
                     std::to_string(count * itemsize) + " bytes, nbytes is " +
                     std::to_string(in.nbytes));
    }
    if (in.nbytes > 0 && !in.data) throw NpyError("data is NULL");
    const auto* bytes = static_cast<const uint8_t*>(in.data);
    return NpyArray::from_bytes(dtype, std::move(shape),
                                std::vector<uint8_t>(bytes, bytes + in.nbytes));
  }

  std::map<std::string, const mxgate_api_array*> by_name_;
};

void add_output(mxgate_api_result& r, std::string name, NpyArray array) {
  mxgate_api_result::Output o;
  o.name = std::move(name);
  o.descr = std::string(npy_dtype_descr(array.dtype));
  o.shape.assign(array.shape.begin(), array.shape.end());
  o.array = std::move(array);
  r.arrays.push_back(std::move(o));
}

mxgate_api_element element(const verbs::LocatedElement& e) {
  mxgate_api_element out{};
  out.row = e.row;
  out.col = e.col;
  out.expected_bits = e.expected_bits;
  out.actual_bits = e.actual_bits;
  out.ulp = e.ulp;
  out.expected = e.expected;
  out.actual = e.actual;
  out.exact = e.exact;
  out.bound = e.bound;
  out.excess = e.excess;
  return out;
}

mxgate_api_verdict verdict(const verbs::CheckGemmResult& r) {
  mxgate_api_verdict v{};
  v.struct_size = sizeof v;
  v.ok = r.ok() ? 1 : 0;
  v.mode = r.mode == verbs::CheckMode::kExact ? 0 : 1;
  v.output = r.output == OutputFormat::kFp32 ? 0 : 1;
  v.rows = r.rows;
  v.cols = r.cols;
  v.mismatches = r.mismatches;
  v.has_first = r.first ? 1 : 0;
  v.has_worst = r.worst ? 1 : 0;
  if (r.first) v.first = element(*r.first);
  if (r.worst) v.worst = element(*r.worst);
  return v;
}

std::set<std::string> plus(std::set<std::string> options, const std::string& extra) {
  options.insert(extra);
  return options;
}

// One verb: its options (the CLI's, without outputs), its flags, and what it does.
struct Verb {
  std::string_view name;
  std::function<std::set<std::string>()> options;
  std::function<std::set<std::string>()> flags;
  std::function<void(const Args&, const Inputs&, mxgate_api_result&)> run;
};

std::set<std::string> none() { return {}; }

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      {"encode", [] { return plus(verbs::codec_options(), "values"); }, none,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const verbs::CodecSpec spec = verbs::codec_spec(a);
         add_output(r, "codes", verbs::encode_array(spec, in.reader(a)("values")));
       }},
      {"decode", [] { return plus(verbs::codec_options(), "codes"); }, none,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const verbs::CodecSpec spec = verbs::codec_spec(a);
         add_output(r, "values", verbs::decode_array(spec, in.reader(a)("codes")));
       }},
      {"quantize", verbs::quantize_options, verbs::quantize_flags,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const verbs::QuantizeSpec spec = verbs::quantize_spec(a);
         verbs::QuantizeResult q = verbs::quantize(spec, in.reader(a));
         add_output(r, "data", std::move(q.data));
         add_output(r, "scales", std::move(q.scales));
         if (q.global) add_output(r, "global", std::move(*q.global));  // nvfp4
       }},
      {"dequantize", verbs::dequantize_options, verbs::dequantize_flags,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const verbs::DequantizeSpec spec = verbs::dequantize_spec(a);
         add_output(r, "out", verbs::dequantize(spec, in.reader(a)));
       }},
      {"gemm", verbs::gemm_options, none,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const OutputFormat dtype = verbs::output_dtype(a);
         const verbs::GemmSpec spec = verbs::gemm_spec(a);
         const verbs::LoadedGemm loaded = verbs::load_gemm(spec, in.reader(a));
         add_output(r, "out", verbs::exact_gemm_array(loaded.problem, dtype));
       }},
      {"check-gemm", verbs::check_gemm_options, none,
       [](const Args& a, const Inputs& in, mxgate_api_result& r) {
         const verbs::CheckGemmSpec spec = verbs::check_gemm_spec(a);
         const verbs::CheckGemmResult c = verbs::check_gemm(spec, in.reader(a));
         r.text = c.text;
         r.verdict = verdict(c);
       }},
      {"formats", none, none,
       [](const Args&, const Inputs&, mxgate_api_result& r) {
         for (Format f : verbs::codec_formats()) r.text += std::string(info(f).name) + "\n";
       }},
      {"conventions", none, none,
       [](const Args&, const Inputs&, mxgate_api_result& r) {
         for (const Convention& c : all_conventions()) r.text += std::string(c.name) + "\n";
       }},
      // One name per line, as the other listings; with the flag json, `mxgate accumulators
      // --json`: every model with its parameters, description and sources.
      {"accumulators", none, verbs::accumulators_flags,
       [](const Args& a, const Inputs&, mxgate_api_result& r) {
         if (a.flag("json")) {
           r.text = verbs::accumulators_text(a);
           return;
         }
         for (const AccumulatorModel& m : all_accumulators()) r.text += m.name + "\n";
       }},
      // `mxgate shapes` as JSON (capi/shapes.h).
      {"shapes",
       [] {
         return std::set<std::string>{"model", "tp", "catalog"};
       },
       [] { return std::set<std::string>{"flagged"}; },
       [](const Args& a, const Inputs&, mxgate_api_result& r) {
         r.text = shapes_json(a.get("model"), a.integer("tp", 0, 1, 1024), a.flag("flagged"),
                              a.get("catalog"));
       }},
  };
  return table;
}

std::string verb_names() {
  std::string out;
  for (const Verb& v : verbs()) out += (out.empty() ? "" : " ") + std::string(v.name);
  return out;
}

mxgate_api_result* run(const char* verb_name, std::size_t option_count, const char* const* names,
                       const char* const* values, std::size_t array_count,
                       const mxgate_api_array* arrays) {
  if (!verb_name) throw UsageError("no verb given (verbs: " + verb_names() + ")");
  const std::string_view name = verb_name;
  const auto verb =
      std::find_if(verbs().begin(), verbs().end(), [&](const Verb& v) { return v.name == name; });
  if (verb == verbs().end()) {
    throw UsageError("unknown verb '" + std::string(name) + "' (verbs: " + verb_names() + ")");
  }
  std::vector<Args::Named> named = named_options(option_count, names, values);
  const Inputs inputs(array_count, arrays);
  inputs.add_options(named);
  const Args a(named, verb->options(), verb->flags());
  auto result = std::make_unique<mxgate_api_result>();
  verb->run(a, inputs, *result);
  return result.release();
}

}  // namespace
}  // namespace mxgate::capi

using mxgate::capi::guarded;
using mxgate::capi::last_error;

extern "C" {

int mxgate_api_run(const char* verb, size_t option_count, const char* const* names,
                   const char* const* values, size_t array_count, const mxgate_api_array* arrays,
                   mxgate_api_result** result) {
  if (!result) {
    last_error = "result is NULL";
    return MXGATE_API_ERROR_INPUT;
  }
  *result = nullptr;
  return guarded(
      [&] { *result = mxgate::capi::run(verb, option_count, names, values, array_count, arrays); });
}

}  // extern "C"
