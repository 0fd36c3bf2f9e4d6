#include "dispatch/registry.h"

namespace mxgate::dispatch {
namespace {

const DotScaledMxfp8 kDotScaled;
const EmulationMxfp8 kEmulation;
const BlockScaledFp8 kBlock;
const PreshuffledBlockScaledFp8 kPreshuffled;
const Bf16 kBf16Kernel;

}  // namespace

std::vector<const LinearKernel*> priority_list(Platform platform, Scheme scheme) {
  const bool rocm = platform != Platform::kSm90;
  switch (scheme) {
    case Scheme::kMxfp8:
      if (rocm) return {&kDotScaled, &kEmulation};
      return {&kEmulation};
    case Scheme::kFp8Block:
      if (rocm) return {&kPreshuffled, &kBlock};
      return {&kBlock};
    case Scheme::kBf16:
      return {&kBf16Kernel};
  }
  return {};
}

std::vector<const LinearKernel*> all_linear_kernels() {
  return {&kDotScaled, &kEmulation, &kBlock, &kPreshuffled, &kBf16Kernel};
}

const LinearKernel* find_linear_kernel(std::string_view name) {
  for (const LinearKernel* k : all_linear_kernels()) {
    if (k->name() == name) return k;
  }
  return nullptr;
}

Selection choose_linear_kernel(const LinearConfig& config, const std::set<std::string>& disabled) {
  Selection s;
  for (const LinearKernel* k : priority_list(config.platform, config.scheme)) {
    const std::string name(k->name());
    if (disabled.count(name) != 0) {
      s.rejected.push_back(name + ": disabled");
    } else if (!k->supported(config.platform)) {
      s.rejected.push_back(name + ": not supported on " + std::string(to_string(config.platform)));
    } else if (auto why = k->can_implement(config)) {
      s.rejected.push_back(name + ": " + *why);
    } else {
      s.linear_kernel = k;
      return s;
    }
  }
  return s;
}

Plan plan(const LinearConfig& config, const std::set<std::string>& disabled) {
  const Selection s = choose_linear_kernel(config, disabled);
  if (s.linear_kernel == nullptr) {
    std::string msg = "no linear kernel can run " + describe(config);
    for (const std::string& r : s.rejected) msg += "; " + r;
    throw DispatchError(msg);
  }
  return {std::string(s.linear_kernel->name()), s.linear_kernel->planned_load(config),
          s.linear_kernel->planned_apply(config)};
}

std::string plan_json(const Plan& p) {
  std::string out = "{\"linear_kernel\": \"" + p.linear_kernel + "\", \"load\": [";
  for (std::size_t i = 0; i < p.load.size(); ++i) {
    out += (i ? ", \"" : "\"") + std::string(to_string(p.load[i])) + "\"";
  }
  return out + "], \"apply\": \"" + std::string(to_string(p.apply)) + "\"}";
}

}  // namespace mxgate::dispatch
