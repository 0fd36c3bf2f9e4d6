// Covers scripts/amd-ci, the AMD CI job of docs/amd_ci.md, as far as a machine without an AMD GPU
// can: the target it detects (from a stand-in rocm_agent_enumerator / rocminfo on PATH), the FP8
// format its probe uses per target, the commands it would run (--dry-run), and its exit codes for
// no GPU, a malformed target, an unknown argument and a target the compiler rejects (Debian's
// hipcc 5.2 rejects gfx950 and gfx942).
// Does NOT cover: a build for a ROCm >= 6 target, the GPU steps themselves (no AMD GPU is lent).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::ShellResult;
using test_support::TempDir;
const std::string kScript = std::string(MXGATE_SOURCE_DIR) + "/scripts/amd-ci";

// A folder put first on PATH whose rocm_agent_enumerator lists `agents` (one per line) and whose
// rocminfo lists nothing, so the host's own ROCm tools cannot decide the outcome.
class FakeRocm {
 public:
  explicit FakeRocm(const std::string& agents) {
    write("rocm_agent_enumerator", "printf '" + agents + "'");
    write("rocminfo", "exit 0");
  }
  ShellResult run(const std::string& args) const {
    return test_support::run_shell("PATH=" + dir_.file("") + ":$PATH sh " + kScript + " " + args +
                                   " 2>&1");
  }

 private:
  void write(const std::string& name, const std::string& body) const {
    std::ofstream(dir_.file(name)) << "#!/bin/sh\n" << body << "\n";
    ::chmod(dir_.file(name).c_str(), 0755);
  }
  TempDir dir_;
};

// Guards against the job passing green on a runner whose GPU is not visible (a CPU agent only):
// without --arch it must stop with the environment exit code, naming what it looked for.
TEST(AmdCi, NoGpuAndNoArchIsAnEnvironmentError) {
  const ShellResult r = FakeRocm("gfx000\\n").run("--dry-run");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no AMD GPU found"), std::string::npos) << r.out;
}

// Guards against MI300 runs probing with OCP E4M3FN inputs (CDNA3 is FNUZ) or building for
// another target than the GPU present: the detected gfx942 reaches the build, gate and probe.
TEST(AmdCi, DetectedMi300BuildsGatesAndProbesWithFnuz) {
  const ShellResult r = FakeRocm("gfx000\\ngfx942\\n").run("--dry-run --impl py:m:A,lib.so");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* expected :
       {"target gfx942", "cmake --preset hip -B build/amd-gfx942", "-DGPU_TARGETS=gfx942",
        "HCC_AMDGPU_TARGET=gfx942", "ctest --test-dir build/amd-gfx942 -L gpu",
        "gate --backend hip --impl py:m:A,lib.so",
        "probe-accumulator --impl 'py:m:A' --backend hip --format e4m3fnuz",
        "probe-accumulator --impl 'lib.so' --backend hip --format e4m3fnuz"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << "missing: " << expected << "\n" << r.out;
}

// Guards against MI355 (CDNA4, OCP FP8) being probed with FNUZ inputs.
TEST(AmdCi, Mi355ProbesWithOcpE4m3fn) {
  const ShellResult r = FakeRocm("gfx950\\n").run("--dry-run --impl lib.so");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--format e4m3fn "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("e4m3fnuz"), std::string::npos) << r.out;
}

// Guards against a typo in --arch or an unknown option being built or ignored.
TEST(AmdCi, BadUsageExits2) {
  const FakeRocm rocm("gfx942\\n");
  ShellResult r = rocm.run("--dry-run --arch sm_90");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("'sm_90' is not a target ID"), std::string::npos) << r.out;
  r = rocm.run("--dry-run --gpu 0");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown argument '--gpu'"), std::string::npos) << r.out;
}

// Guards against a CI job with Debian's hipcc for MI355 or MI300 failing late inside the build,
// or building for a target the compiler silently replaced: the script checks the compiler first
// (hipcc 5.2 rejects gfx950 and gfx942, docs/amd_ci.md §2).
TEST(AmdCi, CompilerThatRejectsTheTargetExits2) {
  for (const std::string arch : {"gfx950", "gfx942"}) {
    const ShellResult r = FakeRocm("gfx000\\n").run("--arch " + arch + " --hipcc hipcc");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("hipcc does not compile for " + arch), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace mxgate
