// Verbs on tensors held in .npy files: quantize, dequantize, gemm, check-gemm. They are how users
// reach the reference from the shell (np.save the operands, run the verb, np.load the result) and
// how a GEMM dumped from any kernel is checked against the exact oracle. The verbs themselves
// (options, validation, error texts) are verbs/tensor_ops.h, shared with the C API and Python; this
// file adds the files: each input option names a .npy to read, --out names what to write.
//
// Every input is read and validated, and every result computed, before the first output file is
// written, so a bad input (exit 2) never leaves a partial output behind.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "reference/npy.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"
#include "verbs/tensor_ops.h"

namespace mxgate::cli {
namespace {

using verbs::check_output_path;

void no_positionals(const Args& a) {
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
}

// The inputs are the files the options name; NpyError (missing file, malformed header) becomes a
// usage error that names the option.
verbs::ArrayReader file_reader(const Args& a) {
  return [&a](const std::string& option) {
    const std::string path = a.require(option);
    try {
      return read_npy(path);
    } catch (const NpyError& e) {
      throw UsageError("--" + option + ": " + e.what());
    }
  };
}

void write_output(const std::string& option, const std::string& path, const NpyArray& array) {
  try {
    write_npy(path, array);
  } catch (const NpyError& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

// The verb's options plus --out.
std::set<std::string> with_out(const std::set<std::string>& options) {
  std::set<std::string> o = options;
  o.insert("out");
  return o;
}

}  // namespace

int cmd_quantize(const Argv& argv) {
  const Args a(argv, with_out(verbs::quantize_options()), verbs::quantize_flags());
  no_positionals(a);
  const verbs::QuantizeSpec spec = verbs::quantize_spec(a);
  const std::string prefix = a.require("out");
  const std::string data_path = prefix + ".data.npy";
  const std::string scales_path = prefix + ".scales.npy";
  const std::string global_path = prefix + ".global.npy";  // nvfp4: the global decode scale
  check_output_path("out", data_path);
  const verbs::QuantizeResult q = verbs::quantize(spec, file_reader(a));
  write_output("out", data_path, q.data);
  try {
    write_output("out", scales_path, q.scales);
    if (q.global) write_output("out", global_path, *q.global);
  } catch (const UsageError&) {
    std::error_code ignored;  // no data file without its scales (and global scale)
    std::filesystem::remove(data_path, ignored);
    std::filesystem::remove(scales_path, ignored);
    throw;
  }
  return 0;
}

int cmd_dequantize(const Argv& argv) {
  const Args a(argv, with_out(verbs::dequantize_options()), verbs::dequantize_flags());
  no_positionals(a);
  const verbs::DequantizeSpec spec = verbs::dequantize_spec(a);
  const std::string out = a.require("out");
  check_output_path("out", out);
  write_output("out", out, verbs::dequantize(spec, file_reader(a)));
  return 0;
}

int cmd_gemm(const Argv& argv) {
  const Args a(argv, with_out(verbs::gemm_options()));
  no_positionals(a);
  const OutputFormat dtype = verbs::output_dtype(a);
  const std::string out = a.require("out");
  check_output_path("out", out);
  const verbs::GemmSpec spec = verbs::gemm_spec(a);
  const verbs::LoadedGemm loaded = verbs::load_gemm(spec, file_reader(a));
  write_output("out", out, verbs::exact_gemm_array(loaded.problem, dtype));
  return 0;
}

int cmd_check_gemm(const Argv& argv) {
  const Args a(argv, verbs::check_gemm_options());
  no_positionals(a);
  const verbs::CheckGemmSpec spec = verbs::check_gemm_spec(a);
  const verbs::CheckGemmResult r = verbs::check_gemm(spec, file_reader(a));
  std::fputs(r.text.c_str(), stdout);
  return r.ok() ? 0 : 1;
}

}  // namespace mxgate::cli
