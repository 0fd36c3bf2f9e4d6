#include "impl/python_description.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace mxgate::impl {
namespace {

// An op's run: one request to its worker.
mxgate_status worker_run(void* state, const mxgate_call* call, char* message, size_t size) {
  const auto* s = static_cast<const OpState*>(state);
  std::string text;
  const mxgate_status status = s->worker->call(s->index, s->name, *call, text);
  std::snprintf(message, size, "%s", text.c_str());
  return status;
}

// A mask of names ("e4m3fn,bf16") through `parse`.
template <class Parse>
uint64_t mask_of(const std::string& list, Parse parse, const std::string& what) {
  uint64_t mask = 0;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    const auto v = parse(item);
    if (!v) throw std::invalid_argument("unknown " + what + " '" + item + "'");
    mask |= uint64_t{1} << static_cast<uint32_t>(*v);
  }
  return mask;
}

}  // namespace

void parse_python_description(const std::string& body, PythonWorker& worker, PythonDescription& d) {
  std::stringstream in(body);
  mxgate_op* op = nullptr;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    const std::size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    const auto nums = [&](std::size_t count) {
      std::vector<uint64_t> v;
      std::stringstream ss(value);
      for (uint64_t x; ss >> x;) v.push_back(x);
      if (v.size() != count) {
        throw std::invalid_argument("line " + std::to_string(line_no) + " '" + line +
                                    "': " + std::to_string(count) + " numbers expected");
      }
      return v;
    };
    if (key == "impl") {
      d.name = value;
    } else if (key == "description") {
      d.text = value;
    } else if (key == "op") {
      mxgate_op o{};
      o.name = d.keep(value);
      o.memory = MXGATE_MEMORY_HOST;
      o.contract.struct_size = sizeof(mxgate_contract);
      o.run = &worker_run;
      d.states.push_back({&worker, static_cast<uint32_t>(d.ops.size()), value});
      o.state = &d.states.back();
      d.ops.push_back(o);
      op = &d.ops.back();
    } else if (op == nullptr) {
      throw std::invalid_argument("line " + std::to_string(line_no) + ": '" + key +
                                  "' before the first op");
    } else if (key == "family") {
      const auto f = parse_family(value);
      if (!f) throw std::invalid_argument("op " + std::string(op->name) + ": unknown family");
      op->family = static_cast<uint32_t>(*f);
    } else if (key == "m" || key == "n" || key == "k") {
      const auto v = nums(3);
      mxgate_contract& c = op->contract;
      uint64_t* dims[3][3] = {{&c.m_align, &c.m_min, &c.m_max},
                              {&c.n_align, &c.n_min, &c.n_max},
                              {&c.k_align, &c.k_min, &c.k_max}};
      const int i = key == "m" ? 0 : key == "n" ? 1 : 2;
      for (int j = 0; j < 3; ++j) *dims[i][j] = v[j];
    } else if (key == "a_dtypes" || key == "b_dtypes" || key == "out_dtypes" ||
               key == "global_dtypes") {
      const uint64_t m = mask_of(value, parse_dtype, "dtype");
      (key == "a_dtypes"        ? op->contract.a_dtypes
       : key == "b_dtypes"      ? op->contract.b_dtypes
       : key == "global_dtypes" ? op->contract.global_dtypes
                                : op->contract.out_dtypes) = m;
    } else if (key == "a_scale_layouts" || key == "b_scale_layouts" || key == "b_layouts") {
      const auto m = static_cast<uint32_t>(mask_of(value, parse_layout, "layout"));
      (key == "a_scale_layouts"   ? op->contract.a_scale_layouts
       : key == "b_scale_layouts" ? op->contract.b_scale_layouts
                                  : op->contract.b_layouts) = m;
    } else if (key == "scale_dtype") {
      const auto dt = value == "none" ? std::optional<Dtype>(Dtype::kNone) : parse_dtype(value);
      if (!dt) throw std::invalid_argument("unknown scale_dtype '" + value + "'");
      op->contract.scale_dtype = static_cast<uint32_t>(*dt);
    } else if (key == "a_block" || key == "b_block") {
      const auto v = nums(2);
      (key == "a_block" ? op->contract.a_block_rows : op->contract.b_block_rows) =
          static_cast<uint32_t>(v[0]);
      (key == "a_block" ? op->contract.a_block_cols : op->contract.b_block_cols) =
          static_cast<uint32_t>(v[1]);
    } else if (key == "a_scale_ld_align" || key == "b_scale_ld_align") {
      (key == "a_scale_ld_align" ? op->contract.a_scale_ld_align : op->contract.b_scale_ld_align) =
          static_cast<uint32_t>(nums(1)[0]);
    } else if (key == "packed_scales") {
      op->contract.flags = nums(1)[0] != 0 ? MXGATE_CONTRACT_PACKED_SCALES : 0;
    } else if (key == "convention") {
      op->contract.convention = d.keep(value);
    } else if (key == "accumulator") {
      op->contract.accumulator = d.keep(value);
    } else if (key == "notes") {
      op->contract.notes = d.keep(value);
    } else if (key == "tactic") {
      // One tactic of the op (docs/python.md §11.9): its name and, for a GEMM, its accumulator.
      const std::size_t sp2 = value.find(' ');
      std::vector<mxgate_tactic>* list = nullptr;
      if (op->contract.tactic_count == 0) {
        list = &d.tactics.emplace_back();
      } else {
        list = &d.tactics.back();
      }
      mxgate_tactic t{};
      t.name = d.keep(value.substr(0, sp2));
      if (sp2 != std::string::npos) t.accumulator = d.keep(value.substr(sp2 + 1));
      list->push_back(t);
      op->contract.tactics = list->data();
      op->contract.tactic_count = static_cast<uint32_t>(list->size());
    } else {
      throw std::invalid_argument("line " + std::to_string(line_no) + ": unknown field '" + key +
                                  "'");
    }
  }
  // FP8 GEMM output (plugin.h revision 4) passes scale_result in out_scale, which the worker
  // protocol carries as an output only: not offered to Python GEMMs (docs/plugins.md §3.7).
  for (const mxgate_op& o : d.ops) {
    const auto f = static_cast<Family>(o.family);
    if (is_gemm(f) && (o.contract.out_dtypes & kFp8OutDtypes) != 0) {
      throw std::invalid_argument(
          "op " + std::string(o.name) +
          ": FP8 GEMM output (out_scale) is not offered to Python adapters");
    }
  }
}

}  // namespace mxgate::impl
