// Covers the audit of planted faults behind the properties: a table naming, for every property of
// every family (element-wise, GEMM, FP4, NVFP4, dequantize, quantize, layout, dispatch, ...), the
// plant that makes it fail, either a zoo fault planted in the built-in kernels (dispatch/faults.h)
// or an implementation with a planted fault (the example plugin, a test plugin); each plant is run
// under its property on the host and must fail it. A property missing from the table fails the
// audit; the properties with no plant yet are listed by name (kNoPlantYet) so that the list can
// only shrink: a new property without a plant fails, and so does a gap that got a plant but is
// still listed.
// Does not cover: branches finer than a property (one op family or format of a property, which
// the zoo's per-fault detections and property_plugins.cpp cover in part), device-only plants
// (Z29: listed, not run on the host), the numpy adapters' plants (python/tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/faults.h"
#include "gpu/host/host_backend.h"
#include "impl/registry.h"
#include "properties/property.h"
#include "properties/zoo.h"

namespace mxgate {
namespace {

struct Plant {
  std::string_view property;
  std::string_view fault;  // a zoo fault name ("z9_..."), or empty
  std::string_view impl;   // an --impl spec with a planted fault ("example:..."), or empty
};

// The audit table, one row per property.
constexpr Plant kPlants[] = {
    {"cast.bit_exact", "", "example:example_faulty_cast_ties_away"},
    {"quantize.bit_exact", "z8_log2_exponent_ceil", ""},
    {"dequantize.bit_exact", "z24_fnuz_nan_as_neg_zero", ""},
    {"dequantize.large_offsets", "z29_offset_32bit", ""},
    {"upcast_e8m0.bit_exact", "z23_e8m0_nan_on_value", ""},
    {"metamorphic.block_scale_shift", "z8_log2_exponent_ceil", ""},
    {"quantize_2d.bit_exact", "", "TEST_PLUGIN:quant_2d:quant_2d_faulty_column_amax"},
    {"metamorphic.quantize_2d_transpose", "",
     "TEST_PLUGIN:quant_2d:quant_2d_faulty_grid_transposed"},
    {"quantize_block.bit_exact", "z21_min_clamp_after_pow2", ""},
    {"gemm.exact", "z9_drop_trailing_k_block", ""},
    {"gemm.ordered_bound", "z20_truncate_scale_exponent", ""},
    {"gemm.default_scale", "z27_default_scale_byte_one", ""},
    {"metamorphic.tp_column_split", "z16_shard_block_index", ""},
    {"metamorphic.tp_row_split", "z9_drop_trailing_k_block", ""},
    {"metamorphic.padding_poison", "z10_read_scale_padding", ""},
    {"determinism.run_twice", "z30_launch_counter_order", ""},
    {"quantize_fp4.bit_exact", "z31_nibble_order_swapped", ""},
    {"dequantize_fp4.bit_exact", "", "TEST_PLUGIN:fp4_ops:fp4_ops_faulty_nibble"},
    {"gemm_fp4.exact", "z37_scale_tail_unmasked", ""},
    {"gemm_fp4.ordered_bound", "z33_e4m3_subnormal_as_normal", ""},
    {"dispatch.end_to_end", "z1_no_per_step_fallback", ""},
    {"layouts.round_trip", "z47_swizzle_other_arch", ""},
    {"preshuffle.bit_exact", "", "example:example_faulty_preshuffle_16x32"},
    {"grouped.exact", "z54_tile_expert_from_first_row", ""},
    {"grouped.split_equivalence", "z58_next_expert_tail_scales", ""},
    {"grouped.empty_groups", "z52_empty_group_stale_accumulator", ""},
    {"grouped.group_isolation", "z58_next_expert_tail_scales", ""},
    {"grouped.ordered_bound", "z58_next_expert_tail_scales", ""},
    {"grouped.tp_split", "z54_tile_expert_from_first_row", ""},
    {"grouped.ep_split", "z58_next_expert_tail_scales", ""},
};

// Properties with no plant yet (the gaps of this audit). grouped.determinism: the grouped
// kernels do not go through the launch counter that Z30 plants in the dense ones.
constexpr std::array<std::string_view, 1> kNoPlantYet{"grouped.determinism"};

const Plant* row(std::string_view property) {
  for (const Plant& p : kPlants) {
    if (p.property == property) return &p;
  }
  return nullptr;
}

bool listed_gap(std::string_view property) {
  return std::find(std::begin(kNoPlantYet), std::end(kNoPlantYet), property) !=
         std::end(kNoPlantYet);
}

// Guards against a property that no planted fault can make fail (a property that may be unable to
// fail): every property has a row or is a listed gap, never both, and every row names a property.
TEST(PlantAudit, EveryPropertyHasAPlantOrIsAListedGap) {
  for (const properties::Property& p : properties::all_properties()) {
    const bool planted = row(p.name) != nullptr;
    EXPECT_TRUE(planted || listed_gap(p.name)) << p.name << ": no plant in the audit table";
    EXPECT_FALSE(planted && listed_gap(p.name)) << p.name << ": has a plant, remove it from gaps";
  }
  for (const Plant& r : kPlants) {
    EXPECT_NE(properties::find_property(r.property), nullptr) << r.property;
  }
  for (std::string_view g : kNoPlantYet) {
    EXPECT_NE(properties::find_property(g), nullptr) << g;
  }
}

// Guards against an audit row that names a plant its property does not catch: each plant, run
// under its property on the host (seed 1, up to 100 cases), fails it.
TEST(PlantAudit, EachPlantFailsItsProperty) {
  gpu::HostBackend be;
  for (const Plant& r : kPlants) {
    SCOPED_TRACE(std::string(r.property));
    const properties::Property& p = *properties::find_property(r.property);
    properties::Context ctx{&be, {}, nullptr, nullptr};
    if (!r.fault.empty()) {
      const dispatch::Faults f = dispatch::parse_faults(r.fault);
      ASSERT_EQ(f.list().size(), 1u) << r.fault;
      if (properties::zoo_class(f.list().front()).device_only) continue;  // Z29: device only
      ctx.faults = f;
    } else {
      std::string spec(r.impl);
      if (spec.rfind("TEST_PLUGIN:", 0) == 0) {
        const std::string rest = spec.substr(12);
        const std::size_t colon = rest.find(':');
        spec = std::string(MXGATE_TEST_PLUGIN_DIR) + "/lib" + rest.substr(0, colon) + ".so" +
               rest.substr(colon);
      }
      const impl::Implementation& im = *impl::resolve(spec).front();
      ASSERT_TRUE(im.planted_fault || spec.find("faulty") != std::string::npos) << spec;
      ctx.impl = &im;
    }
    properties::RunOptions opts;
    opts.cases = 100;
    opts.shrink = false;
    const properties::RunResult res = properties::run_property(p, ctx, opts);
    EXPECT_FALSE(res.passed) << r.property << " passes with its plant " << r.fault << r.impl;
  }
}

}  // namespace
}  // namespace mxgate
