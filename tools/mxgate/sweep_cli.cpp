// `mxgate sweep-cast`: the exhaustive check of host cast ops (properties/cast_sweep.h), every
// fp32 bit pattern (or a range) of every target format each op's claimed convention defines.
// Progress on stderr (tools/mxgate/progress.h); Ctrl-C stops at the next chunk, prints the
// interrupted sweep's partial result and exits 130.
#include <cstdio>
#include <string>
#include <vector>

#include "gpu/host/host_backend.h"
#include "impl/contract.h"
#include "properties/cast_sweep.h"
#include "tools/mxgate/args.h"
#include "tools/mxgate/impl_select.h"
#include "tools/mxgate/progress.h"
#include "tools/mxgate/verbs.h"

namespace mxgate::cli {

int cmd_sweep_cast(const Argv& argv) {
  const Args a(argv, {"impl", "op", "format", "from", "count"});
  if (!a.positionals().empty()) {
    throw UsageError("unexpected argument '" + a.positionals()[0] + "'");
  }
  if (!a.get("impl")) throw UsageError("--impl names the implementation(s) to sweep");
  const std::vector<const impl::Implementation*> impls = impls_option(a.get("impl"));
  const uint64_t from = a.get("from") ? parse_code(*a.get("from"), 32) : 0;
  const long long count = a.integer("count", 1LL << 32, 1, 1LL << 32);
  const uint64_t end = std::min<uint64_t>(from + static_cast<uint64_t>(count), uint64_t{1} << 32);
  std::optional<impl::Dtype> only_format;
  if (const auto f = a.get("format")) {
    only_format = impl::parse_dtype(*f);
    if (!only_format) throw UsageError("--format: unknown dtype '" + *f + "'");
  }
  gpu::HostBackend be;
  const InterruptScope interrupt;
  int swept = 0, failed = 0;
  for (const impl::Implementation* im : impls) {
    for (const auto& [op, target] : properties::sweep_targets(*im)) {
      if (a.get("op") && op->name != *a.get("op")) continue;
      if (only_format && target != *only_format) continue;
      if (InterruptScope::interrupted()) break;
      ++swept;
      std::printf("%s/%s -> %s (%s): inputs 0x%08llx..0x%08llx ... ", im->name.c_str(),
                  op->name.c_str(), std::string(impl::to_string(target)).c_str(),
                  op->contract.conventions.front().c_str(), static_cast<unsigned long long>(from),
                  static_cast<unsigned long long>(end - 1));
      std::fflush(stdout);
      Progress progress("sweep-cast " + op->name, end - from, "inputs");
      const properties::SweepResult r =
          properties::sweep_cast(be, *op, target, from, end, uint64_t{1} << 22, [&](uint64_t done) {
            progress.update(done);
            return !InterruptScope::interrupted();
          });
      if (r.stopped) {
        std::printf(
            "interrupted (partial): %llu of %llu inputs checked, %llu differ (%.1f s)%s%s\n",
            static_cast<unsigned long long>(r.inputs), static_cast<unsigned long long>(end - from),
            static_cast<unsigned long long>(r.mismatches), r.seconds,
            r.mismatches ? "\n    first: " : "", r.describe().c_str());
        return kInterruptedExit;
      }
      if (r.mismatches == 0) {
        std::printf("pass, %llu inputs (%.1f s)\n", static_cast<unsigned long long>(r.inputs),
                    r.seconds);
      } else {
        ++failed;
        std::printf("FAIL, %llu of %llu inputs differ (%.1f s)\n    first: %s\n",
                    static_cast<unsigned long long>(r.mismatches),
                    static_cast<unsigned long long>(r.inputs), r.seconds, r.describe().c_str());
        std::printf(
            "    reproduce: mxgate sweep-cast --impl %s --op %s --format %s --from 0x%08x "
            "--count 1\n",
            im->spec.c_str(), op->name.c_str(), std::string(impl::to_string(target)).c_str(),
            *r.first_input);
      }
    }
  }
  if (InterruptScope::interrupted()) {
    std::printf("interrupted (partial): stopped before the next op\n");
    return kInterruptedExit;
  }
  if (swept == 0) throw UsageError("no host cast op (and format) to sweep in --impl");
  return failed ? 1 : 0;
}

}  // namespace mxgate::cli
