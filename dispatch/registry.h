// Linear kernel selection (vLLM choose_scaled_mm_linear_kernel, docs/layouts.md §3.3): a
// priority list per platform and scheme; the first linear kernel that is not disabled by name (a
// set, like VLLM_DISABLED_KERNELS), is supported on the platform and can implement the config
// wins. Also the plan of a config: the linear kernel, its load-time actions and its apply path.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "dispatch/linear_kernels.h"

namespace mxgate::dispatch {

// ROCm (gfx950, gfx942, host): mxfp8 [DotScaledMxfp8, EmulationMxfp8];
// fp8_block [PreshuffledBlockScaledFp8, BlockScaledFp8] (docs/architecture.md §1.1, item 3: the
// preshuffled linear kernel first); bf16 [Bf16]. sm90: [EmulationMxfp8], [BlockScaledFp8], [Bf16].
std::vector<const LinearKernel*> priority_list(Platform platform, Scheme scheme);
// Every linear kernel, once (for lookups by name).
std::vector<const LinearKernel*> all_linear_kernels();
const LinearKernel* find_linear_kernel(std::string_view name);

struct Selection {
  const LinearKernel* linear_kernel = nullptr;  // nullptr when none fits
  // One line per linear kernel passed over: "NAME: disabled" / "NAME: not supported on P" /
  // "NAME: why".
  std::vector<std::string> rejected;
};

Selection choose_linear_kernel(const LinearConfig& config,
                               const std::set<std::string>& disabled = {});

struct Plan {
  std::string linear_kernel;
  std::vector<LoadAction> load;
  ApplyPath apply = ApplyPath::kBf16Gemm;
};

// Throws DispatchError naming every rejection when no linear kernel fits.
Plan plan(const LinearConfig& config, const std::set<std::string>& disabled = {});
// {"linear_kernel": "...", "load": [...], "apply": "..."}
std::string plan_json(const Plan& p);

}  // namespace mxgate::dispatch
