// What check-gemm reports about an element and an accumulator (check_gemm_verdict.h): the
// located elements of both modes and the exactness line of exact mode with --accumulator.
#include "verbs/check_gemm_verdict.h"

#include <limits>
#include <stdexcept>

#include "reference/accumulator_exact.h"
#include "reference/fp_encode.h"

namespace mxgate::verbs {
namespace {

double value_of(uint32_t bits, OutputFormat format) {
  return format == OutputFormat::kFp32 ? float_of(bits)
                                       : float_of_bf16(static_cast<uint16_t>(bits));
}

uint32_t output_bits(const GemmOutput& c, std::size_t i) {
  return c.format == OutputFormat::kFp32 ? bits_of(c.fp32[i]) : c.bf16[i];
}

}  // namespace

LocatedElement located_bits(const BitMismatch& m, OutputFormat format) {
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  return {m.row,
          m.col,
          m.expected_bits,
          m.actual_bits,
          m.ulp_distance,
          value_of(m.expected_bits, format),
          value_of(m.actual_bits, format),
          kNan,
          kNan,
          kNan,
          std::nullopt,
          0};
}

LocatedElement located_bound(const BoundViolation& v, const GemmOutput& rounded,
                             const GemmOutput& actual) {
  const std::size_t i = v.row * actual.cols + v.col;
  const uint32_t e = output_bits(rounded, i), a = output_bits(actual, i);
  const uint64_t ulp = actual.format == OutputFormat::kFp32
                           ? ulp_distance_fp32(e, a)
                           : ulp_distance_bf16(static_cast<uint16_t>(e), static_cast<uint16_t>(a));
  return {v.row,
          v.col,
          e,
          a,
          ulp,
          value_of(e, actual.format),
          value_of(a, actual.format),
          v.exact,
          v.bound,
          v.excess,
          std::nullopt,
          0};
}

std::string exactness_line(const GemmProblem& problem, const AccumulatorModel& model) {
  // The condition is checked term by term on one core: O(M N K).
  constexpr double kMaxTerms = 0x1p28;
  const double terms = static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                       static_cast<double>(problem.k);
  std::string answer, why;
  if (terms > kMaxTerms) {
    answer = "not checked (M*N*K above 2^28 terms)";
  } else {
    try {
      answer = is_exact_mode(problem, model, &why)
                   ? "yes (every summation order it allows is exact)"
                   : "no (" + why +
                         "): a correct kernel may differ from the correctly rounded result; use "
                         "--mode bound";
    } catch (const std::invalid_argument& e) {
      answer = std::string("not modelled (") + e.what() + ")";
    }
  }
  return "operands exact in accumulator " + model.name + ": " + answer + "\n";
}

}  // namespace mxgate::verbs
