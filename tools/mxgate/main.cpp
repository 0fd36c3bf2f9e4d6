// mxgate: the command-line entry point. Dispatches to one verb; every error is reported with a
// message naming the problem and exit code 2, never a crash.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tools/mxgate/args.h"
#include "tools/mxgate/verbs.h"

namespace {

using mxgate::cli::Verb;

constexpr Verb kVerbs[] = {
    {"gate", "gate [--only PATTERN] [--seed S] [--cases N]",
     "Run every registered check (format checks, reference self-checks) with a progress line\n"
     "per check and a summary table. Exit 0 when all pass, 1 on a failure, 2 on bad usage.",
     mxgate::cli::cmd_gate},
    {"encode", "encode --format F --convention C VALUE...",
     "Encode fp32 values (decimal, hex-float 0x1.cp+8, inf, -inf, nan; decimal text is rounded\n"
     "to the nearest fp32 first) into format F under convention C. One hex code per line.",
     mxgate::cli::cmd_encode},
    {"decode", "decode --format F --convention C 0xHH...",
     "Decode codes of format F under convention C (the convention matters for e8m0). One line\n"
     "per code: the value as a hex-float (%a), a space, then %.9g.",
     mxgate::cli::cmd_decode},
    {"conventions", "conventions",
     "Print the convention matrix (each convention's policies and source) and a table of the\n"
     "edge inputs of research/formats.md §6 against every convention.",
     mxgate::cli::cmd_conventions},
};

void usage(FILE* out) {
  std::fprintf(out,
               "mxgate: a correctness gate for MXFP8 / e8m0 quantization and block-scaled FP8 "
               "GEMM kernels\n\nusage: mxgate VERB [options]\n\nverbs:\n");
  for (const Verb& v : kVerbs) {
    std::fprintf(out, "  %.*s\n", static_cast<int>(v.synopsis.size()), v.synopsis.data());
  }
  std::fprintf(out,
               "\nformats: e4m3fn e5m2 e4m3fnuz e5m2fnuz e8m0 bf16 fp16\n"
               "`mxgate conventions` lists the conventions. `mxgate VERB --help` for details.\n"
               "Exit codes: 0 pass, 1 a check failed, 2 usage or input error.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string verb = args[0];
  args.erase(args.begin());
  for (const Verb& v : kVerbs) {
    if (v.name != verb) continue;
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        std::printf("usage: mxgate %.*s\n\n%.*s\n", static_cast<int>(v.synopsis.size()),
                    v.synopsis.data(), static_cast<int>(v.help.size()), v.help.data());
        return 0;
      }
    }
    try {
      return v.run(args);
    } catch (const mxgate::cli::UsageError& e) {
      std::fprintf(stderr, "mxgate %s: %s\n", verb.c_str(), e.what());
      return 2;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "mxgate %s: %s\n", verb.c_str(), e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mxgate %s: error: %s\n", verb.c_str(), e.what());
      return 2;
    }
  }
  std::fprintf(stderr, "mxgate: unknown verb '%s'\n\n", verb.c_str());
  usage(stderr);
  return 2;
}
