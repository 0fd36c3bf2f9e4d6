// `mxgate plan`: the kernel the dispatch registry picks for one linear layer, the load-time
// actions its process_weights_after_loading runs and the path apply then takes.
#include <cstdio>
#include <set>
#include <string>

#include "dispatch/registry.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

int cmd_plan(const Argv& argv) {
  using namespace mxgate::dispatch;
  const Args a(argv, {"platform", "scheme", "n", "k", "flags", "weight-scale", "disable"},
               {"json"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  LinearConfig c;
  const std::string platform = a.require("platform");
  const auto p = parse_platform(platform);
  if (!p) throw UsageError("--platform '" + platform + "' is not one of gfx950 gfx942 sm90 host");
  c.platform = *p;
  const std::string scheme = a.require("scheme");
  const auto s = parse_scheme(scheme);
  if (!s) throw UsageError("--scheme '" + scheme + "' is not one of mxfp8 fp8_block bf16");
  c.scheme = *s;
  a.require("n");
  a.require("k");
  c.n = static_cast<std::size_t>(a.integer("n", 0, 1, 1LL << 30));
  c.k = static_cast<std::size_t>(a.integer("k", 0, 1, 1LL << 30));
  if (auto ws = a.get("weight-scale")) {
    const auto d = parse_weight_scale_dtype(*ws);
    if (!d) throw UsageError("--weight-scale '" + *ws + "' is not one of e8m0 fp32");
    if (c.scheme == Scheme::kBf16) throw UsageError("--weight-scale does not apply to bf16");
    c.weight_scale = *d;
  } else {
    c.weight_scale =
        c.scheme == Scheme::kFp8Block ? WeightScaleDtype::kFp32 : WeightScaleDtype::kE8m0;
  }
  auto split = [](const std::string& list) {
    std::set<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      if (end > start) out.insert(list.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  for (const std::string& f : split(a.get("flags").value_or(""))) {
    if (f == "is_bmm") {
      c.is_bmm = true;
    } else if (f == "skip_weight_relayout") {
      c.skip_weight_relayout = true;
    } else {
      throw UsageError("--flags: unknown flag '" + f + "' (is_bmm, skip_weight_relayout)");
    }
  }
  const std::set<std::string> disabled = split(a.get("disable").value_or(""));
  for (const std::string& d : disabled) {
    if (find_kernel(d) == nullptr) throw UsageError("--disable: unknown kernel '" + d + "'");
  }
  Plan pl;
  try {
    pl = plan(c, disabled);
  } catch (const DispatchError& e) {
    throw UsageError(e.what());
  }
  if (a.flag("json")) {
    std::printf("%s\n", plan_json(pl).c_str());
    return 0;
  }
  std::printf("layer:  %s\nkernel: %s\nload:  ", describe(c).c_str(), pl.kernel.c_str());
  if (pl.load.empty()) std::printf(" (none)");
  for (LoadAction l : pl.load) std::printf(" %s", std::string(to_string(l)).c_str());
  std::printf("\napply:  %s\n", std::string(to_string(pl.apply)).c_str());
  return 0;
}

}  // namespace mxgate::cli
