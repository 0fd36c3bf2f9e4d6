#include "impl/plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "common/dtypes.h"
#include "common/machinery_fault.h"
#include "reference/convention.h"
#include "reference/e8m0.h"

namespace mxgate::impl {
namespace {

struct Loaded {
  const mxgate_plugin* plugin = nullptr;
  bool initialized = false;
};

std::mutex g_mutex;
std::map<std::string, Loaded>& loaded() {
  static std::map<std::string, Loaded> m;
  return m;
}

PluginError input_error(const std::string& who, const std::string& what) {
  return PluginError(PluginError::Kind::kInput, "plugin '" + who + "': " + what);
}

bool valid_name(const char* s, bool allow_dot) {
  if (s == nullptr || *s == '\0') return false;
  for (const char* p = s; *p != '\0'; ++p) {
    const char c = *p;
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (allow_dot && c == '.');
    if (!ok) return false;
  }
  return true;
}

std::string text(const char* s) { return s == nullptr ? std::string() : std::string(s); }

Dim dim(uint64_t align, uint64_t min, uint64_t max) {
  return {align == 0 ? 1 : align, min == 0 ? 1 : min, max};
}

// The known bits of a dtype / layout mask: every code of the one element-type table
// (common/dtypes.h; MXGATE_DTYPE_NONE is no dtype).
constexpr DtypeMask kKnownDtypes = [] {
  DtypeMask m = 0;
  for (uint32_t d = 1; d <= dtypes::kElementTypeCount; ++d) m |= uint64_t{1} << d;
  return m;
}();
constexpr LayoutMask kKnownLayouts = (1u << (MXGATE_LAYOUT_AITER_SHUFFLE_16X16 + 1)) - 1;

Contract convert_contract(const std::string& where, const mxgate_contract& in, Family family) {
  const auto dtypes = [&](uint64_t mask, const char* field) {
    if ((mask & ~kKnownDtypes) != 0) {
      throw std::invalid_argument(where + " contract." + field + " has unknown dtype bits");
    }
    return mask;
  };
  const auto layouts = [&](uint32_t mask, const char* field) {
    if ((mask & ~kKnownLayouts) != 0) {
      throw std::invalid_argument(where + " contract." + field + " has unknown layout bits");
    }
    return mask;
  };
  Contract c;
  c.m = dim(in.m_align, in.m_min, in.m_max);
  c.n = dim(in.n_align, in.n_min, in.n_max);
  c.k = dim(in.k_align, in.k_min, in.k_max);
  c.a_dtypes = dtypes(in.a_dtypes, "a_dtypes");
  c.b_dtypes = dtypes(in.b_dtypes, "b_dtypes");
  c.out_dtypes = dtypes(in.out_dtypes, "out_dtypes");
  c.a_scale_layouts = layouts(in.a_scale_layouts, "a_scale_layouts");
  c.b_scale_layouts = layouts(in.b_scale_layouts, "b_scale_layouts");
  c.b_layouts = layouts(in.b_layouts, "b_layouts");
  if (is_nvfp4(family)) {
    // NVFP4: E4M3 block scales (used as unsigned) and global scales (plugin.h, docs/fp4.md §12).
    if (in.scale_dtype != MXGATE_DTYPE_E4M3FN) {
      throw std::invalid_argument(where + " contract.scale_dtype must be E4M3FN for " +
                                  std::string(to_string(family)));
    }
  } else if (in.scale_dtype != MXGATE_DTYPE_NONE && in.scale_dtype != MXGATE_DTYPE_E8M0 &&
             in.scale_dtype != MXGATE_DTYPE_F32) {
    throw std::invalid_argument(where + " contract.scale_dtype must be NONE, E8M0 or F32");
  }
  c.scale_dtype = static_cast<Dtype>(in.scale_dtype);
  const bool scaled = family == Family::kQuantizeMx || family == Family::kQuantizeBlock ||
                      family == Family::kDequantize || family == Family::kGemmMx ||
                      family == Family::kGemmBlock;
  if (scaled && c.scale_dtype == Dtype::kNone) {
    throw std::invalid_argument(where + " contract.scale_dtype is NONE for a scaled family");
  }
  // global_dtypes exists from the header revision that added it; an older contract has none.
  const DtypeMask globals = dtypes(in.global_dtypes, "global_dtypes");
  constexpr DtypeMask kGlobalDtypes = dtype_bit(Dtype::kF32) | dtype_bit(Dtype::kBf16);
  if ((globals & ~kGlobalDtypes) != 0) {
    throw std::invalid_argument(where + " contract.global_dtypes may hold only F32 and BF16");
  }
  if (is_nvfp4(family) && globals == 0) {
    throw std::invalid_argument(where + " contract.global_dtypes is 0 for " +
                                std::string(to_string(family)) + " (its global scales)");
  }
  if (!is_nvfp4(family) && globals != 0) {
    throw std::invalid_argument(where + " contract.global_dtypes is set for " +
                                std::string(to_string(family)) + ", which takes no global scale");
  }
  c.global_dtypes = globals;
  if (c.a_dtypes == 0 || c.out_dtypes == 0 || (is_gemm(family) && c.b_dtypes == 0)) {
    throw std::invalid_argument(where + " contract accepts no input or output dtype");
  }
  c.a_block_rows = in.a_block_rows;
  c.a_block_cols = in.a_block_cols;
  c.b_block_rows = in.b_block_rows;
  c.b_block_cols = in.b_block_cols;
  c.a_scale_ld_align = in.a_scale_ld_align == 0 ? 1 : in.a_scale_ld_align;
  c.b_scale_ld_align = in.b_scale_ld_align == 0 ? 1 : in.b_scale_ld_align;
  if ((in.flags & ~MXGATE_CONTRACT_PACKED_SCALES) != 0) {
    throw std::invalid_argument(where + " contract.flags " + std::to_string(in.flags) +
                                " has bits this mxgate does not know");
  }
  c.packed_scales = (in.flags & MXGATE_CONTRACT_PACKED_SCALES) != 0;
  if (in.convention != nullptr) {
    // A convention name, or "e8m0:RULE" for an e8m0 rule no convention holds (a cast to e8m0).
    const std::string claim = in.convention;
    const bool e8m0_rule =
        claim.rfind("e8m0:", 0) == 0 && parse_e8m0_encode(claim.substr(5)).has_value();
    if (find_convention(claim) == nullptr && !e8m0_rule) {
      throw std::invalid_argument(where + " contract.convention '" + claim +
                                  "' is no convention (mxgate conventions lists them) and no "
                                  "e8m0:RULE (reference/e8m0.h rules)");
    }
    c.conventions = {claim};
  }
  // FP8 GEMM output (revision 4): only the families whose calls carry out_scale, and only in a
  // format the op's convention casts to.
  const DtypeMask fp8_out = is_gemm(family) ? c.out_dtypes & kFp8OutDtypes : 0;
  if (fp8_out != 0 && !takes_fp8_out(family)) {
    throw std::invalid_argument(where + " contract.out_dtypes lists FP8 output for " +
                                std::string(to_string(family)) +
                                " (FP8 GEMM output is for gemm_mx and gemm_block, plugin.h)");
  }
  if (fp8_out != 0) {
    const std::string conv(fp8_out_convention(c));
    const Convention* fp8_conv = find_convention(conv);
    for (Dtype d : dtypes_in(fp8_out)) {
      const Format f = d == Dtype::kE4m3fn ? Format::kE4M3FN : Format::kE5M2;
      if (fp8_conv == nullptr || !defines(*fp8_conv, f)) {
        throw std::invalid_argument(where + " contract.out_dtypes lists " +
                                    std::string(to_string(d)) + " output, which convention '" +
                                    conv + "' does not cast to");
      }
    }
  }
  if (is_gemm(family)) {
    // The model itself is looked up when a bound needs it (impl/accumulator.h): an unknown name
    // is a contract error of that check, not a plugin that cannot be loaded.
    // NAME or NAME:param=value,... (docs/plugins.md §3.4); the parameters are parsed with the
    // model.
    c.accumulator = in.accumulator == nullptr ? "fp32_rn" : in.accumulator;
    const std::size_t colon = c.accumulator.find(':');
    const std::string base = c.accumulator.substr(0, colon);
    const bool params_ok =
        colon == std::string::npos ||
        (colon + 1 < c.accumulator.size() &&
         c.accumulator.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_=,", colon + 1) ==
             std::string::npos);
    if (!valid_name(base.c_str(), false) || !params_ok) {
      throw std::invalid_argument(where + " contract.accumulator '" + c.accumulator +
                                  "' is not a model spec (NAME or NAME:param=value,...; "
                                  "[a-z0-9_])");
    }
  }
  c.notes = text(in.notes);
  return c;
}

// The tactics of an op (revision 3; zero in an older plugin's contract): empty for one.
std::vector<Tactic> convert_tactics(const std::string& where, const mxgate_contract& in,
                                    Family family) {
  std::vector<Tactic> out;
  if (in.tactic_count <= 1 && in.tactics == nullptr) return out;
  if (in.tactic_count == 0) {
    throw std::invalid_argument(where + " contract.tactics is set but tactic_count is 0");
  }
  constexpr uint32_t kMaxTactics = 4096;
  if (in.tactic_count > kMaxTactics) {
    throw std::invalid_argument(where + " contract.tactic_count " +
                                std::to_string(in.tactic_count) + " is more than " +
                                std::to_string(kMaxTactics));
  }
  std::set<std::string> names;
  for (uint32_t t = 0; t < in.tactic_count; ++t) {
    Tactic x;
    const std::string tw = where + " contract.tactics[" + std::to_string(t) + "]";
    if (in.tactics == nullptr || in.tactics[t].name == nullptr) {
      x.name = std::to_string(t);
    } else if (!valid_name(in.tactics[t].name, true)) {
      throw std::invalid_argument(tw + ".name is not [a-z0-9_.]+");
    } else {
      x.name = in.tactics[t].name;
    }
    if (!names.insert(x.name).second) throw std::invalid_argument(tw + ": second tactic " + x.name);
    if (in.tactics != nullptr && in.tactics[t].accumulator != nullptr) {
      if (!is_gemm(family)) {
        throw std::invalid_argument(tw + ".accumulator is set for " +
                                    std::string(to_string(family)) + ", which is no GEMM");
      }
      // Checked as contract.accumulator is: the name's form here, the model when a bound needs it.
      const std::string spec = in.tactics[t].accumulator;
      const std::size_t colon = spec.find(':');
      if (!valid_name(spec.substr(0, colon).c_str(), false) ||
          (colon != std::string::npos &&
           (colon + 1 == spec.size() ||
            spec.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_=,", colon + 1) !=
                std::string::npos))) {
        throw std::invalid_argument(tw + ".accumulator '" + spec +
                                    "' is not a model spec (NAME or NAME:param=value,...)");
      }
      x.accumulator = spec;
    }
    if (in.tactics != nullptr) x.notes = text(in.tactics[t].notes);
    out.push_back(std::move(x));
  }
  return out;
}

// The run function of a plugin op: its tensors as mxgate_tensor in `be`'s memory, the
// backend's stream, the tactic to run, a message buffer it may fill.
std::function<Status(gpu::Backend&, const Call&, uint32_t, std::string&)> plugin_run(
    mxgate_run_fn fn, void* state) {
  return [fn, state](gpu::Backend& be, const Call& call, uint32_t tactic, std::string& message) {
    const auto tensor = [&be](const Tensor& t) {
      mxgate_tensor out{};
      if (!t.present()) return out;
      out.data = be.address(t.buffer);
      out.bytes = be.size(t.buffer);
      out.rows = t.rows;
      out.cols = t.cols;
      out.ld = t.ld;
      out.dtype = static_cast<uint32_t>(t.dtype);
      out.layout = static_cast<uint32_t>(t.layout);
      return out;
    };
    mxgate_call c{};
    c.struct_size = sizeof(mxgate_call);
    c.family = static_cast<uint32_t>(call.family);
    c.m = call.m;
    c.n = call.n;
    // Test plant (common/machinery_fault.h): every plugin GEMM gets M and N swapped.
    if (machinery_fault_is(MachineryFault::kPluginSwapsMN)) std::swap(c.m, c.n);
    c.k = call.k;
    c.a = tensor(call.a);
    c.a_scale = tensor(call.a_scale);
    c.b = tensor(call.b);
    c.b_scale = tensor(call.b_scale);
    c.out = tensor(call.out);
    c.out_scale = tensor(call.out_scale);
    c.stream = be.stream();
    c.a_global = tensor(call.a_global);
    c.b_global = tensor(call.b_global);
    c.tactic = tactic;
    // Test plant (common/machinery_fault.h): the tactic index is lost on the way.
    if (machinery_fault_is(MachineryFault::kPluginTacticZero)) c.tactic = 0;
    char buf[1024] = {};
    const mxgate_status s = fn(state, &c, buf, sizeof buf);
    buf[sizeof buf - 1] = '\0';
    message = buf;
    switch (s) {
      case MXGATE_DONE:
        return Status::kDone;
      case MXGATE_UNSUPPORTED:
        return Status::kUnsupported;
      case MXGATE_ERROR:
        return Status::kError;
      case MXGATE_NO_TACTIC:
        return Status::kNoTactic;
    }
    message = "returned status " + std::to_string(static_cast<int>(s)) + " (not a mxgate_status)" +
              (message.empty() ? "" : ": " + message);
    return Status::kError;
  };
}

// The fields of mxgate_contract up to `notes`: what every header revision has.
constexpr std::size_t kMinContractSize = offsetof(mxgate_contract, notes) + sizeof(const char*);

// Op j of an ops array written by a plugin whose mxgate_contract is `contract_size` bytes (its
// header revision's sizeof): mxgate_op embeds the contract, so the array's stride follows from
// that size. Fields this mxgate does not know are dropped, fields the plugin does not have stay
// zero ("unset").
mxgate_op read_op(const mxgate_op* ops, uint32_t j, std::size_t contract_size) {
  constexpr std::size_t kHead = offsetof(mxgate_op, contract);
  constexpr std::size_t kAlign = alignof(mxgate_op);
  const std::size_t tail = kHead + (contract_size + kAlign - 1) / kAlign * kAlign;
  const std::size_t stride = tail + sizeof(mxgate_run_fn) + sizeof(void*);
  const char* at = reinterpret_cast<const char*>(ops) + j * stride;
  mxgate_op op{};
  std::memcpy(static_cast<void*>(&op), at, kHead);
  std::memcpy(&op.contract, at + kHead, std::min(contract_size, sizeof(mxgate_contract)));
  std::memcpy(static_cast<void*>(&op.run), at + tail, sizeof(mxgate_run_fn));
  std::memcpy(static_cast<void*>(&op.state), at + tail + sizeof(mxgate_run_fn), sizeof(void*));
  return op;
}

std::vector<Implementation> convert(const std::string& path, const mxgate_plugin& p) {
  const std::string who = path + "' (" + text(p.name) + ")";
  const auto fail = [&](const std::string& what) {
    return PluginError(PluginError::Kind::kInput, "plugin '" + who + ": " + what);
  };
  if (p.impl_count == 0 || p.impls == nullptr) {
    throw fail(std::string(MXGATE_PLUGIN_ENTRY_SYMBOL) + " lists no implementation");
  }
  std::vector<Implementation> out;
  std::set<std::string> impl_names;
  for (uint32_t i = 0; i < p.impl_count; ++i) {
    const mxgate_impl& mi = p.impls[i];
    const std::string iw = "impls[" + std::to_string(i) + "]";
    if (!valid_name(mi.name, false)) throw fail(iw + ".name is not [a-z0-9_]+");
    if (!impl_names.insert(mi.name).second) throw fail(iw + ": second implementation " + mi.name);
    if (std::string_view(mi.name) == "builtin") throw fail(iw + ".name 'builtin' is reserved");
    if (mi.op_count == 0 || mi.ops == nullptr) throw fail(iw + " (" + mi.name + ") has no op");
    Implementation impl;
    impl.name = mi.name;
    impl.description = text(mi.description);
    impl.planted_fault = is_planted_fault_description(impl.description);
    impl.origin = path;
    impl.spec = path + ":" + impl.name;
    // Every op of the array shares the plugin's sizeof(mxgate_contract); the first one's
    // struct_size says what it is.
    const std::size_t contract_size = mi.ops[0].contract.struct_size;
    if (contract_size < kMinContractSize || contract_size % alignof(mxgate_op) != 0) {
      throw fail(impl.name + ".ops[0].contract.struct_size " + std::to_string(contract_size) +
                 " is not the size of an mxgate_contract");
    }
    std::set<std::string> op_names;
    for (uint32_t j = 0; j < mi.op_count; ++j) {
      const mxgate_op mo = read_op(mi.ops, j, contract_size);
      const std::string ow = impl.name + ".ops[" + std::to_string(j) + "]";
      if (!valid_name(mo.name, true)) throw fail(ow + ".name is not [a-z0-9_.]+");
      if (!op_names.insert(mo.name).second) throw fail(ow + ": second op " + mo.name);
      const std::string where = impl.name + "/" + mo.name;
      if (mo.contract.struct_size != contract_size) {
        throw fail(where + ": contract.struct_size " + std::to_string(mo.contract.struct_size) +
                   " differs from the first op's " + std::to_string(contract_size));
      }
      if (mo.family < MXGATE_OP_CAST || mo.family > MXGATE_OP_GEMM_NVFP4) {
        throw fail(where + ": family " + std::to_string(mo.family) + " is no mxgate_op_family");
      }
      if (mo.memory != MXGATE_MEMORY_HOST && mo.memory != MXGATE_MEMORY_CUDA &&
          mo.memory != MXGATE_MEMORY_HIP) {
        throw fail(where + ": memory " + std::to_string(mo.memory) + " is no mxgate_memory");
      }
      if (mo.run == nullptr) throw fail(where + ": run is NULL");
      Op op;
      op.name = mo.name;
      op.family = static_cast<Family>(mo.family);
      op.memory = static_cast<Memory>(mo.memory);
      try {
        op.contract = convert_contract(where + ":", mo.contract, op.family);
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
      op.impl = impl.name;
      op.run_tactic = plugin_run(mo.run, mo.state);
      op.run = [run = op.run_tactic](gpu::Backend& be, const Call& call, std::string& message) {
        return run(be, call, 0, message);
      };
      try {
        op.tactics = convert_tactics(where + ":", mo.contract, op.family);
      } catch (const std::invalid_argument& e) {
        throw fail(e.what());
      }
      impl.ops.push_back(std::move(op));
    }
    out.push_back(std::move(impl));
  }
  return out;
}

}  // namespace

std::vector<Implementation> implementations_of(const std::string& origin, const mxgate_plugin& p) {
  return convert(origin, p);
}

std::vector<Implementation> load_plugin(const std::string& path, bool call_init) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  Loaded& l = loaded()[path];
  if (l.plugin == nullptr) {
    // RTLD_LOCAL: two plugins may use the same symbol names; RTLD_NOW: a missing dependency is
    // reported here, not at the first call.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      loaded().erase(path);
      throw input_error(path, std::string("cannot load: ") + ::dlerror());
    }
    void* sym = ::dlsym(handle, MXGATE_PLUGIN_ENTRY_SYMBOL);
    if (sym == nullptr) {
      loaded().erase(path);
      throw input_error(path, std::string("symbol '") + MXGATE_PLUGIN_ENTRY_SYMBOL +
                                  "' not found (not an mxgate plugin, or built for another "
                                  "ABI version)");
    }
    mxgate_plugin_entry_fn entry = nullptr;
    static_assert(sizeof(entry) == sizeof(sym));
    std::memcpy(&entry, &sym, sizeof entry);
    const mxgate_plugin* p = entry();
    if (p == nullptr) {
      loaded().erase(path);
      throw input_error(path, std::string(MXGATE_PLUGIN_ENTRY_SYMBOL) + "() returned NULL");
    }
    if (p->abi_version != MXGATE_PLUGIN_ABI_VERSION) {
      loaded().erase(path);
      throw input_error(path, "ABI version " + std::to_string(p->abi_version) + " (from " +
                                  MXGATE_PLUGIN_ENTRY_SYMBOL + "()), this mxgate speaks " +
                                  std::to_string(MXGATE_PLUGIN_ABI_VERSION));
    }
    if (p->struct_size < offsetof(mxgate_plugin, impls) + sizeof(const mxgate_impl*)) {
      loaded().erase(path);
      throw input_error(path, "mxgate_plugin.struct_size " + std::to_string(p->struct_size) +
                                  " is too small (from " + MXGATE_PLUGIN_ENTRY_SYMBOL + "())");
    }
    l.plugin = p;  // never dlclose'd: its ops may run until the process exits
  }
  std::vector<Implementation> impls = convert(path, *l.plugin);
  if (call_init && !l.initialized && l.plugin->init != nullptr) {
    if (const char* why = l.plugin->init()) {
      throw PluginError(PluginError::Kind::kEnvironment,
                        "plugin '" + path + "' (" + text(l.plugin->name) + "): init() refused: " +
                            why + " (symbol " + MXGATE_PLUGIN_ENTRY_SYMBOL + " -> init)");
    }
  }
  if (call_init) l.initialized = true;
  return impls;
}

}  // namespace mxgate::impl
