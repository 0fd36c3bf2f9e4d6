// Covers the one element-type table (common/dtypes.h) against what restates it: the ABI's codes
// (include/mxgate/plugin.h mxgate_dtype), contract/'s dtype names and storage, the reference's
// formats (reference/format.h: bits, exponent and mantissa widths, names), the kernels' dtype
// parameters (gpu/kernels/params.h, valued by the codes) and the vocabulary the C API hands to
// Python (capi/vocabulary.cpp, checked against the table here and against plugin.h in
// python/tests/test_vocabulary.py).
// Does not cover: what each format's values are (test_formats.cpp and the exhaustive tests).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/dtypes.h"
#include "contract/contract.h"
#include "gpu/kernels/params.h"
#include "mxgate/plugin.h"
#include "reference/format.h"

namespace mxgate {
namespace {

// Guards against the table and the C ABI numbering an element type differently (a plugin's
// e2m1 read as another format).
TEST(Dtypes, CodesAreTheAbis) {
  const std::pair<const char*, unsigned> abi[] = {
      {"f32", MXGATE_DTYPE_F32},           {"bf16", MXGATE_DTYPE_BF16},
      {"fp16", MXGATE_DTYPE_FP16},         {"e4m3fn", MXGATE_DTYPE_E4M3FN},
      {"e5m2", MXGATE_DTYPE_E5M2},         {"e4m3fnuz", MXGATE_DTYPE_E4M3FNUZ},
      {"e5m2fnuz", MXGATE_DTYPE_E5M2FNUZ}, {"e8m0", MXGATE_DTYPE_E8M0},
      {"e2m1", MXGATE_DTYPE_E2M1},         {"e2m3", MXGATE_DTYPE_E2M3},
      {"e3m2", MXGATE_DTYPE_E3M2},         {"e3m4", MXGATE_DTYPE_E3M4},
      {"e4m3ieee", MXGATE_DTYPE_E4M3IEEE}, {"e4m3b11fnuz", MXGATE_DTYPE_E4M3B11FNUZ},
      {"mxint8", MXGATE_DTYPE_MXINT8}};
  EXPECT_EQ(dtypes::kElementTypeCount, std::size(abi));
  for (auto [name, code] : abi) {
    const dtypes::ElementType* t = dtypes::element_type(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->code, code) << name;
    EXPECT_EQ(dtypes::element_type(code), t) << name;
  }
  EXPECT_EQ(dtypes::element_type(0u), nullptr);
  EXPECT_EQ(dtypes::element_type(dtypes::kElementTypeCount + 1), nullptr);
}

// Guards against contract/ spelling or sizing a dtype unlike the table (a call's tensor_bytes
// disagreeing with what the reference packs).
TEST(Dtypes, ContractReadsTheTable) {
  ASSERT_EQ(contract::all_dtypes().size(), dtypes::kElementTypeCount);
  for (const dtypes::ElementType& t : dtypes::kElementTypes) {
    const auto d = contract::parse_dtype(t.name);
    ASSERT_TRUE(d.has_value()) << t.name;
    EXPECT_EQ(static_cast<unsigned>(*d), t.code) << t.name;
    EXPECT_EQ(contract::to_string(*d), t.name);
    EXPECT_EQ(contract::dtype_bytes(*d), t.storage_bytes) << t.name;
  }
  EXPECT_EQ(contract::tensor_bytes(contract::Dtype::kE2m1, 3, 5), 9u);  // 3 rows of 3 bytes
  EXPECT_EQ(contract::tensor_bytes(contract::Dtype::kBf16, 3, 5), 30u);
}

// Guards against the reference's format table drifting from the vocabulary: every element type
// is a reference format of the same widths and name (f32 is spelled "fp32" on the CLI).
TEST(Dtypes, ReferenceFormatsAgreeWithTheTable) {
  for (const dtypes::ElementType& t : dtypes::kElementTypes) {
    const std::string_view name = t.code == dtypes::kF32 ? "fp32" : t.name;
    const auto f = parse_format(name);
    ASSERT_TRUE(f.has_value()) << name;
    const FormatInfo& fi = info(*f);
    EXPECT_EQ(static_cast<unsigned>(fi.bits), t.bits) << name;
    EXPECT_EQ(static_cast<unsigned>(fi.exp_bits), t.exponent_bits) << name;
    EXPECT_EQ(static_cast<unsigned>(fi.man_bits), t.mantissa_bits) << name;
  }
  EXPECT_EQ(all_formats().size(), dtypes::kElementTypeCount);
}

// Guards against a kernel's dtype parameter meaning another format than the call's dtype it is
// cast from (impl/builtin.cpp kernel_dtype).
TEST(Dtypes, KernelParametersCarryTheCodes) {
  EXPECT_EQ(static_cast<unsigned>(gpu::InputDtype::kBf16), MXGATE_DTYPE_BF16);
  EXPECT_EQ(static_cast<unsigned>(gpu::OutDtype::kFp32), MXGATE_DTYPE_F32);
  EXPECT_EQ(static_cast<unsigned>(gpu::GlobalDtype::kBf16), MXGATE_DTYPE_BF16);
  EXPECT_EQ(static_cast<unsigned>(gpu::Fp8Format::kE5m2fnuz), MXGATE_DTYPE_E5M2FNUZ);
  EXPECT_EQ(static_cast<unsigned>(gpu::Fp4Operand::kE2m1), MXGATE_DTYPE_E2M1);
  EXPECT_EQ(static_cast<unsigned>(gpu::Fp4Operand::kE4m3fn), MXGATE_DTYPE_E4M3FN);
}

// Guards against a scaled format listing elements or scales of the wrong width (MXFP4's
// elements are the 4-bit E2M1, NVFP4's scales E4M3).
TEST(Dtypes, ScaledFormatMembership) {
  for (const dtypes::ScaledFormat& f : dtypes::kScaledFormats) {
    unsigned elements = 0, scales = 0;
    for (const dtypes::ElementType& t : dtypes::kElementTypes) {
      if (t.element_of & f.bit) {
        ++elements;
        const std::string_view n = f.name;
        const unsigned want = n == "mxfp8" || n == "mxint8" ? 8 : n == "mxfp6" ? 6 : 4;
        EXPECT_EQ(t.bits, want) << f.name << " " << t.name;
      }
      if (t.scale_of & f.bit) {
        ++scales;
        EXPECT_EQ(t.name, std::string_view(f.bit == dtypes::kNvfp4 ? "e4m3fn" : "e8m0"));
      }
    }
    EXPECT_GE(elements, 1u) << f.name;
    EXPECT_EQ(scales, 1u) << f.name;
  }
}

}  // namespace
}  // namespace mxgate
