// Covers running the suites on many GPUs and many CI jobs: scripts/ctest-gpu (turns ctest's
// resource allocation into HIP_/CUDA_VISIBLE_DEVICES, checked with fake allocations and with a
// real ctest run on a throwaway CMake project), scripts/gpu-resource-spec (a valid ctest resource
// spec), and GoogleTest sharding of our test programs (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX
// split test_format's tests into disjoint shards that together run every test).
// Does NOT cover: GPUs themselves (the gpu label), GPU detection by nvidia-smi / rocm-smi (the
// count argument is used here), or CI configuration.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/shell.h"
#include "tests/temp_dir.h"

namespace mxgate {
namespace {

using test_support::TempDir;

const std::string kSource = MXGATE_SOURCE_DIR;
const std::string kCtestGpu = kSource + "/scripts/ctest-gpu";
const std::string kResourceSpec = kSource + "/scripts/gpu-resource-spec";
const std::string kPython = "/usr/bin/python3";
// The variables ctest sets for an allocation; cleared so the tests' own environment (this test
// may itself run under ctest with a resource spec) cannot leak in.
const std::string kClearAllocation =
    "env -u CTEST_RESOURCE_GROUP_COUNT -u CTEST_RESOURCE_GROUP_0 -u CTEST_RESOURCE_GROUP_0_GPUS "
    "-u CTEST_RESOURCE_GROUP_1 -u CTEST_RESOURCE_GROUP_1_GPUS -u CUDA_VISIBLE_DEVICES "
    "-u HIP_VISIBLE_DEVICES ";
const std::string kPrintDevices = "sh -c 'echo \"$CUDA_VISIBLE_DEVICES $HIP_VISIBLE_DEVICES\"'";

using Result = test_support::ShellResult;
using test_support::shell_quote;

// stdout and stderr together.
Result run(const std::string& command) { return test_support::run_shell(command + " 2>&1"); }

// ---------------------------------------------------------------------------------------------
// scripts/ctest-gpu

// Guards against every GPU test of a parallel ctest run landing on device 0 (the allocation
// ignored), or HIP and CUDA builds seeing different devices.
TEST(ScaleoutCtestGpu, ExportsTheAllocatedGpuId) {
  Result r = run(kClearAllocation +
                 "CTEST_RESOURCE_GROUP_COUNT=1 CTEST_RESOURCE_GROUP_0=gpus "
                 "CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1 sh " +
                 kCtestGpu + " " + kPrintDevices);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "3 3\n");
  // Two groups (a test asking for "2,gpus:1"): both ids, in order, once each.
  r = run(kClearAllocation +
          "CTEST_RESOURCE_GROUP_COUNT=2 CTEST_RESOURCE_GROUP_0=gpus "
          "CTEST_RESOURCE_GROUP_0_GPUS=id:5,slots:1 CTEST_RESOURCE_GROUP_1=gpus "
          "CTEST_RESOURCE_GROUP_1_GPUS='id:1,slots:1;id:5,slots:1' sh " +
          kCtestGpu + " " + kPrintDevices);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "5,1 5,1\n");
}

// Guards against the wrapper changing a plain run (no resource spec) or eating the exit status
// and arguments of the program it wraps.
TEST(ScaleoutCtestGpu, WithoutAllocationRunsTheProgramUnchanged) {
  Result r = run(kClearAllocation + "CUDA_VISIBLE_DEVICES=7 sh " + kCtestGpu + " " +
                 "sh -c 'echo \"[$CUDA_VISIBLE_DEVICES] [${HIP_VISIBLE_DEVICES-unset}] $1\"; "
                 "exit 3' prog 'two words'");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.out, "[7] [unset] two words\n");
}

// Guards against a malformed allocation being silently ignored (every test on GPU 0).
TEST(ScaleoutCtestGpu, MalformedAllocationIsAnError) {
  for (const std::string env : {"CTEST_RESOURCE_GROUP_COUNT=x",
                                "CTEST_RESOURCE_GROUP_COUNT=1 CTEST_RESOURCE_GROUP_0_GPUS=3",
                                "CTEST_RESOURCE_GROUP_COUNT=1 "
                                "CTEST_RESOURCE_GROUP_0_GPUS='id:a b,slots:1'"}) {
    const Result r = run(kClearAllocation + env + " sh " + kCtestGpu + " true");
    EXPECT_EQ(r.exit_code, 2) << env << ": " << r.out;
    EXPECT_NE(r.out.find("ctest-gpu:"), std::string::npos) << r.out;
  }
  EXPECT_EQ(run("sh " + kCtestGpu).exit_code, 2);  // no program
}

// Guards against the wrapper and ctest disagreeing on the allocation format (ctest's own
// variables, not our fake ones): 4 tests sharing 2 GPUs, 2 at a time, each sees one valid id.
TEST(ScaleoutCtestGpu, RealCtestAllocationReachesTheTest) {
  if (run("command -v cmake && command -v ctest").exit_code != 0) {
    GTEST_SKIP() << "cmake/ctest not on PATH";
  }
  TempDir d;
  std::ofstream(d.file("CMakeLists.txt"))
      << "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nenable_testing()\n"
      << "foreach(i RANGE 1 4)\n"
      << "  add_test(NAME t${i} COMMAND sh " << kCtestGpu
      << " sh -c \"echo DEVICES=[$CUDA_VISIBLE_DEVICES/$HIP_VISIBLE_DEVICES]\")\n"
      << "  set_tests_properties(t${i} PROPERTIES RESOURCE_GROUPS \"gpus:1\"\n"
      << "    PASS_REGULAR_EXPRESSION \"DEVICES=\\\\[0/0\\\\]|DEVICES=\\\\[1/1\\\\]\")\n"
      << "endforeach()\n";
  const Result spec = run("sh " + kResourceSpec + " 2 > " + shell_quote(d.file("gpus.json")));
  ASSERT_EQ(spec.exit_code, 0) << spec.out;
  const std::string build = shell_quote(d.file("build"));
  Result r = run(kClearAllocation + "cmake -S " + shell_quote(d.path().string()) + " -B " + build);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run(kClearAllocation + "ctest --test-dir " + build + " -j 2 -V --resource-spec-file " +
          shell_quote(d.file("gpus.json")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("100% tests passed"), std::string::npos) << r.out;
  // And without a spec file the tests see no allocation (empty ids: the regex fails them).
  r = run(kClearAllocation + "ctest --test-dir " + build + " -R t1 -V");
  EXPECT_NE(r.out.find("DEVICES=[/]"), std::string::npos) << r.out;
}

// ---------------------------------------------------------------------------------------------
// scripts/gpu-resource-spec

// Guards against a resource spec that ctest rejects (not JSON, wrong version, wrong shape).
TEST(ScaleoutResourceSpec, CountGivesValidJsonWithOneSlotPerGpu) {
  TempDir d;
  const Result r = run("sh " + kResourceSpec + " 3 > " + shell_quote(d.file("spec.json")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string check =
      "import json,sys; d=json.load(open(sys.argv[1])); "
      "assert d['version']=={'major':1,'minor':0}, d['version']; "
      "g=d['local'][0]['gpus']; "
      "assert g==[{'id':str(i),'slots':1} for i in range(3)], g; print(len(g))";
  const Result py =
      run(kPython + " -c " + shell_quote(check) + " " + shell_quote(d.file("spec.json")));
  EXPECT_EQ(py.exit_code, 0) << py.out;
  EXPECT_EQ(py.out, "3\n");
}

// Guards against a typo'd count producing an empty or nonsensical spec instead of an error.
TEST(ScaleoutResourceSpec, RejectsABadCount) {
  for (const std::string bad : {"0", "-1", "two", "3x", "1 2"}) {
    const Result r = run("sh " + kResourceSpec + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("gpu-resource-spec:"), std::string::npos) << r.out;
  }
}

// ---------------------------------------------------------------------------------------------
// GoogleTest sharding

// Full names from --gtest_list_tests ("Suite." lines, then indented test names; "# ..." comments
// give type / value parameters and are dropped). DISABLED_ tests are listed but never run.
std::vector<std::string> parse_test_list(const std::string& listing) {
  std::vector<std::string> names;
  std::istringstream in(listing);
  std::string line, suite;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string word = line.substr(0, line.find('#'));
    const std::size_t b = word.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    const std::string token = word.substr(b, word.find(' ', b) - b);
    if (b == 0) {
      suite = token;  // "Suite."
    } else if (suite.find("DISABLED_") != 0 && token.find("DISABLED_") != 0) {
      names.push_back(suite + token);
    }
  }
  return names;
}

// Full names from "[ RUN      ] Suite.Name" lines.
std::vector<std::string> parse_run_lines(const std::string& log) {
  std::vector<std::string> names;
  const std::string tag = "[ RUN      ] ";
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, tag.size(), tag) == 0) names.push_back(line.substr(tag.size()));
  }
  return names;
}

// Runs `program` (built next to this test) with `args`, then as 3 shards, and checks that the
// shards are disjoint and together run exactly the program's list.
void check_shards_partition(const std::string& name, const std::string& args) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path program = self.parent_path() / name;
  ASSERT_TRUE(std::filesystem::exists(program))
      << program << " is missing: build the " << name << " target (a full build does)";
  const std::string exe = shell_quote(program.string()) + args;
  const std::string clean =
      "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_FILTER "
      "-u GTEST_SHARD_STATUS_FILE -u GTEST_BRIEF ";

  const Result list = run(clean + exe + " --gtest_list_tests");
  ASSERT_EQ(list.exit_code, 0) << list.out;
  const std::vector<std::string> all = parse_test_list(list.out);
  ASSERT_GE(all.size(), 5u) << list.out;
  const std::set<std::string> all_set(all.begin(), all.end());
  ASSERT_EQ(all_set.size(), all.size()) << "duplicate names in the listing";

  constexpr int kShards = 3;
  std::set<std::string> seen;
  for (int shard = 0; shard < kShards; ++shard) {
    const Result r = run(clean + "GTEST_TOTAL_SHARDS=" + std::to_string(kShards) +
                         " GTEST_SHARD_INDEX=" + std::to_string(shard) + " " + exe);
    ASSERT_NE(r.out.find("[==========]"), std::string::npos)
        << "shard " << shard << " did not finish:\n"
        << r.out;
    const std::vector<std::string> ran = parse_run_lines(r.out);
    EXPECT_FALSE(ran.empty()) << "shard " << shard << " ran nothing";
    for (const std::string& t : ran) {
      EXPECT_TRUE(all_set.count(t)) << "shard " << shard << " ran unlisted " << t;
      EXPECT_TRUE(seen.insert(t).second) << t << " ran in two shards (or twice)";
    }
  }
  std::vector<std::string> missing;
  std::set_difference(all_set.begin(), all_set.end(), seen.begin(), seen.end(),
                      std::back_inserter(missing));
  EXPECT_TRUE(missing.empty()) << missing.size() << " tests ran in no shard, e.g. "
                               << (missing.empty() ? "" : missing.front());
  EXPECT_EQ(seen.size(), all.size());
}

// Guards against sharded CI jobs that skip tests or run some twice: with 3 shards, the tests
// each shard runs are disjoint and together are exactly the program's full list.
TEST(ScaleoutSharding, ShardsPartitionTheTestList) {
  // test_format: many typed and value-parameterized tests.
  check_shards_partition("test_format", "");
}

// The property suites are GoogleTest tests too (one per property): sharding splits them the
// same way. The fast properties keep this quick.
TEST(ScaleoutSharding, PropertySuitesShardToo) {
  check_shards_partition(
      "property_host",
      " --gtest_filter='All/PropertyHolds.*upcast*:All/PropertyHolds.*dequantize*:"
      "All/PropertyHolds.*layouts*:All/PropertyHolds.*preshuffle*:All/PropertyHolds.*dispatch*:"
      "All/PropertyHolds.*quantize_bit*'");
}

}  // namespace
}  // namespace mxgate
