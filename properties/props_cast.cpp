// cast.bit_exact over the cast ops (family cast: fp32 -> FP8 / e8m0 / bf16 / fp16 codes, and
// FP4 / FP6 codes: E2M1 packed two per byte, E2M3 / E3M2 one per byte; elementwise) of the
// implementation under test: every code equals the encoder of the convention the op claims
// (reference/convention.h encode_with), on random inputs and on the edges of the target format (the
// exact value of every code and its fp32 neighbours, the midpoints between neighbouring codes, the
// overflow boundary, subnormals, signed zeros, infinities, NaNs with several payloads). The
// exhaustive 2^32 sweep of a host cast op is a separate, explicitly requested check
// (properties/cast_sweep.h).
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "impl/calls.h"
#include "impl/harness.h"
#include "properties/cast_values.h"
#include "properties/props.h"
#include "reference/convention.h"
#include "reference/format.h"
#include "reference/fp4_pack.h"

namespace mxgate::properties {

namespace {

// The cast targets of `op` the reference can check: formats its claim has an encoder for.
std::vector<Dtype> cast_targets(const Op& op) {
  std::vector<Dtype> out;
  if (op.contract.conventions.empty()) return out;
  for (Dtype d : impl::dtypes_in(op.contract.out_dtypes)) {
    const auto f = element_cast_format(d);
    if (f && cast_encoder(op.contract.conventions.front(), *f)) out.push_back(d);
  }
  return out;
}

bool cast_accepts(const Op& op) {
  return (op.contract.a_dtypes & impl::dtype_bit(Dtype::kF32)) != 0 && !cast_targets(op).empty();
}

rc::Gen<Case> gen_cast(const Context&, const Ops& ops) {
  return gen_over_ops(ops, [](const Op* op) {
    std::vector<std::string> formats;
    for (Dtype d : cast_targets(*op)) formats.emplace_back(impl::to_string(d));
    std::vector<std::string> classes;
    for (CastClass c : all_cast_classes()) classes.emplace_back(to_string(c));
    return rc::gen::apply(
        [op](const std::string& format, const std::string& values, std::size_t count,
             uint64_t seed) {
          Case c("cast.bit_exact");
          c.set("op", op->name).set("format", format).set("values", values);
          c.set("count", fit_dim(count, op->contract.k)).set("seed", seed);
          return c;
        },
        pick(formats), pick(classes), pick<std::size_t>({1, 2, 7, 32, 100, 256, 1000}), gen_seed());
  });
}

std::optional<Failure> check_cast(const Context& ctx, const Case& c) {
  const Op& op = case_op(ctx, c);
  const auto dtype = impl::parse_dtype(c.text("format"));
  const auto format = dtype ? element_cast_format(*dtype) : std::nullopt;
  if (!format) throw CaseError("case field 'format' has unknown value '" + c.text("format") + "'");
  const auto cls = parse_cast_class(c.text("values"));
  if (!cls) throw CaseError("case field 'values' has unknown value '" + c.text("values") + "'");
  if (op.contract.conventions.empty()) throw impl::Unsupported(op.name + " claims no convention");
  const std::string& conv_name = op.contract.conventions.front();
  const auto encoder = cast_encoder(conv_name, *format);
  if (!encoder) {
    throw impl::Unsupported(op.name + ": " + conv_name + " defines no encoder for " +
                            c.text("format"));
  }
  const std::size_t count = c.num("count");
  const std::vector<float> x = cast_values(*cls, *format, count, c.num("seed"));
  const bool packed = *dtype == Dtype::kE2m1;  // compared unpacked, the padding nibble ignored
  const std::size_t width = packed ? 1 : impl::dtype_bytes(*dtype);
  std::vector<uint8_t> want(count * width);
  for (std::size_t i = 0; i < count; ++i) {
    const uint32_t code = encoder(x[i]);
    std::memcpy(want.data() + i * width, &code, width);  // little endian: the low bytes
  }
  ctx.tag("op:" + op.name);
  ctx.tag("cast:" + c.text("format"));
  impl::Invocation inv(op, ctx.run());
  std::vector<uint8_t> in(count * 4);
  std::memcpy(in.data(), x.data(), in.size());
  inv.input(&impl::Call::a, in, 1, count, count, Dtype::kF32, impl::Layout::kRowMajor);
  std::vector<uint8_t> got =
      inv.run_and_read(impl::rows_call(inv, 1, count, *dtype), &impl::Call::out);
  if (packed) got = unpack_fp4(got, 1, count, NibbleOrder::kLowFirst);
  return compare_codes(std::string(impl::to_string(*dtype)) + " codes (" + conv_name + ")", x,
                       width, want, got);
}

}  // namespace

void add_cast_properties(std::vector<Property>& out) {
  out.push_back({"cast.bit_exact",
                 "an fp32 cast whose code differs from its claimed convention's encoder: wrong "
                 "rounding of ties, overflow to Inf instead of max (or the reverse), a NaN with "
                 "the wrong sign, subnormals flushed",
                 impl::family_bit(impl::Family::kCast), cast_accepts, gen_cast, check_cast});
}

}  // namespace mxgate::properties
