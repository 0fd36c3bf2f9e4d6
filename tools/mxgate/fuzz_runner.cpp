#include "tools/mxgate/fuzz_runner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "common/child_process.h"

// The fuzz targets' entry points (tools/mxgate/CMakeLists.txt renames each target's
// LLVMFuzzerTestOneInput).
extern "C" {
int mxgate_fuzz_one_fuzz_npy(const uint8_t*, std::size_t);
int mxgate_fuzz_one_fuzz_shape_catalog(const uint8_t*, std::size_t);
int mxgate_fuzz_one_fuzz_codecs(const uint8_t*, std::size_t);
int mxgate_fuzz_one_fuzz_negotiation(const uint8_t*, std::size_t);
int mxgate_fuzz_one_fuzz_regression(const uint8_t*, std::size_t);
#if MXGATE_FUZZ_DISPATCH_LINKED
int mxgate_fuzz_one_fuzz_dispatch(const uint8_t*, std::size_t);
#endif
}

namespace mxgate::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Larger than every checked-in seed and than libFuzzer's default -max_len of 4096.
constexpr std::size_t kMaxInput = 1u << 16;

// The worker's shared page: the input in flight and the counts so far.
struct Shared {
  uint64_t size;
  uint64_t replayed;
  uint64_t fuzzed;
  uint8_t data[kMaxInput];
};

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Byte-level mutations (libFuzzer's basic set): flip a bit, set a byte to a random or an edge
// value, insert, erase, copy a chunk, cross over with another input, truncate.
std::vector<uint8_t> mutate(std::vector<uint8_t> in, const std::vector<std::vector<uint8_t>>& pool,
                            uint64_t& rng) {
  static constexpr uint8_t kEdges[] = {0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF, 0x20, 0x0A};
  const int ops = 1 + static_cast<int>(splitmix(rng) % 4);
  for (int o = 0; o < ops; ++o) {
    const uint64_t r = splitmix(rng);
    const std::size_t at = in.empty() ? 0 : static_cast<std::size_t>(splitmix(rng) % in.size());
    switch (r % 8) {
      case 0:
        if (!in.empty()) in[at] ^= static_cast<uint8_t>(1u << (r >> 8) % 8);
        break;
      case 1:
        if (!in.empty()) in[at] = static_cast<uint8_t>(r >> 16);
        break;
      case 2:
        if (!in.empty()) in[at] = kEdges[(r >> 16) % std::size(kEdges)];
        break;
      case 3:
        if (in.size() < kMaxInput) {
          in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(r >> 24));
        }
        break;
      case 4:
        if (!in.empty()) in.erase(in.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 5:
        if (in.size() > 1) {
          const std::size_t from = static_cast<std::size_t>(splitmix(rng) % in.size());
          const std::size_t len = std::min<std::size_t>(1 + (r >> 32) % 16, in.size() - from);
          const std::vector<uint8_t> chunk(in.begin() + static_cast<std::ptrdiff_t>(from),
                                           in.begin() + static_cast<std::ptrdiff_t>(from + len));
          std::copy(chunk.begin(),
                    chunk.begin() + static_cast<std::ptrdiff_t>(std::min(len, in.size() - at)),
                    in.begin() + static_cast<std::ptrdiff_t>(at));
        }
        break;
      case 6:
        if (!pool.empty()) {
          const std::vector<uint8_t>& other = pool[splitmix(rng) % pool.size()];
          if (!other.empty()) {
            const std::size_t cut = static_cast<std::size_t>(splitmix(rng) % (other.size() + 1));
            in.resize(std::min(at, in.size()));
            in.insert(in.end(), other.begin() + static_cast<std::ptrdiff_t>(cut), other.end());
            if (in.size() > kMaxInput) in.resize(kMaxInput);
          }
        }
        break;
      default:
        if (in.size() > 1) in.resize(1 + static_cast<std::size_t>(r % in.size()));
        break;
    }
  }
  return in;
}

std::vector<std::vector<uint8_t>> load_inputs(const std::vector<std::string>& paths,
                                              std::string& why) {
  std::vector<std::vector<uint8_t>> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    std::vector<fs::path> files;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      why = "no such file or folder: " + p;
      return {};
    }
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
      if (bytes.size() > kMaxInput) bytes.resize(kMaxInput);
      out.push_back(std::move(bytes));
    }
  }
  return out;
}

// The worker: every input goes through `shared` before it runs.
void work(const FuzzTarget& t, const std::vector<std::vector<uint8_t>>& corpus, double seconds,
          uint64_t seed, Shared* shared) {
  const auto run = [&](const std::vector<uint8_t>& in) {
    shared->size = in.size();
    std::memcpy(shared->data, in.data(), in.size());
    t.one_input(shared->data, in.size());
  };
  for (const std::vector<uint8_t>& in : corpus) {
    run(in);
    ++shared->replayed;
  }
  uint64_t rng = seed;
  for (char c : t.name) rng = rng * 131 + static_cast<unsigned char>(c);
  // Recent mutants join the pool (a short memory instead of coverage feedback).
  std::vector<std::vector<uint8_t>> pool = corpus;
  const std::size_t base = pool.size();
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (seconds > 0 && Clock::now() < deadline) {
    for (int i = 0; i < 64; ++i) {
      const std::vector<uint8_t> start =
          pool.empty() || splitmix(rng) % 16 == 0
              ? std::vector<uint8_t>(1 + splitmix(rng) % 64, static_cast<uint8_t>(splitmix(rng)))
              : pool[splitmix(rng) % pool.size()];
      std::vector<uint8_t> in = mutate(start, pool, rng);
      run(in);
      ++shared->fuzzed;
      if (pool.size() < base + 256) {
        pool.push_back(std::move(in));
      } else {
        pool[base + splitmix(rng) % 256] = std::move(in);
      }
    }
  }
}

std::string tail_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > 600) s = "..." + s.substr(s.size() - 600);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::span<const FuzzTarget> fuzz_targets() {
  static const std::array<FuzzTarget, 6> kTargets = {{
      {"fuzz_npy", &mxgate_fuzz_one_fuzz_npy},
      {"fuzz_shape_catalog", &mxgate_fuzz_one_fuzz_shape_catalog},
      {"fuzz_codecs", &mxgate_fuzz_one_fuzz_codecs},
      {"fuzz_negotiation", &mxgate_fuzz_one_fuzz_negotiation},
#if MXGATE_FUZZ_DISPATCH_LINKED
      {"fuzz_dispatch", &mxgate_fuzz_one_fuzz_dispatch},
#else
      {"fuzz_dispatch", nullptr},
#endif
      {"fuzz_regression", &mxgate_fuzz_one_fuzz_regression},
  }};
  return kTargets;
}

const FuzzTarget* find_fuzz_target(std::string_view name) {
  for (const FuzzTarget& t : fuzz_targets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

FuzzResult run_fuzz_target(const FuzzTarget& t, const std::vector<std::string>& paths,
                           double seconds, uint64_t seed, const std::string& scratch) {
  FuzzResult r;
  const auto fail = [&r](const std::string& why) {
    r.ok = false;
    r.error = true;
    r.detail = why;
    return r;
  };
  if (t.one_input == nullptr) {
    return fail(std::string(t.name) +
                " is not linked into this build: clang's FuzzedDataProvider.h was not found "
                "(scripts/bootstrap installs clang-14)");
  }
  std::string why;
  const std::vector<std::vector<uint8_t>> corpus = load_inputs(paths, why);
  if (!why.empty()) return fail(why);
  if (corpus.empty() && seconds <= 0) return fail("no input to replay");
  std::error_code ec;
  fs::create_directories(scratch, ec);
  const std::string log = (fs::path(scratch) / (std::string(t.name) + ".log")).string();
  void* mem =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return fail(std::string("mmap failed: ") + std::strerror(errno));
  auto* shared = static_cast<Shared*>(mem);
  shared->size = shared->replayed = shared->fuzzed = 0;
  // The worker writes its log to a file (stdout and stderr); without one, to ours.
  ChildOptions options;
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd >= 0) {
    options.out = ChildStream::fd(log_fd);
    options.err_to_out = true;
  }
  ChildProcess child;
  try {
    child = ChildProcess::fork(
        [&]() -> int {
          work(t, corpus, seconds, seed, shared);
          return 0;
        },
        options);
  } catch (const std::runtime_error& e) {
    if (log_fd >= 0) ::close(log_fd);
    ::munmap(mem, sizeof(Shared));
    return fail(std::string("could not start the fuzz worker: ") + e.what());
  }
  if (log_fd >= 0) ::close(log_fd);
  // One input may take long under a slow machine's load, never this long.
  const std::optional<ChildExit> ended = child.wait_until(deadline_after(seconds + 120.0));
  const bool hung = !ended.has_value();
  if (hung) child.kill();
  r.replayed = shared->replayed;
  r.fuzzed = shared->fuzzed;
  const bool clean = !hung && ended->success();
  if (!clean) {
    r.ok = false;
    const std::vector<uint8_t> input(shared->data,
                                     shared->data + std::min<uint64_t>(shared->size, kMaxInput));
    uint64_t h = 1469598103934665603ull;
    for (uint8_t b : input) h = (h ^ b) * 1099511628211ull;
    char name[64];
    std::snprintf(name, sizeof name, "%s-%016llx", hung ? "timeout" : "crash",
                  static_cast<unsigned long long>(h));
    r.artifact = (fs::path(scratch) / (std::string(t.name) + "." + name)).string();
    std::ofstream(r.artifact, std::ios::binary)
        .write(reinterpret_cast<const char*>(input.data()),
               static_cast<std::streamsize>(input.size()));
    const std::string how =
        hung ? "no progress after " + std::to_string(static_cast<int>(seconds + 120)) + " s"
        : ended->kind == ChildExit::Kind::kSignaled
            ? "signal " + std::to_string(ended->signal) + " (" + ::strsignal(ended->signal) + ")"
            : "exit " + std::to_string(ended->code);
    r.detail = std::string(t.name) + " failed on " +
               (r.replayed < corpus.size() ? "corpus input " + std::to_string(r.replayed + 1)
                                           : "mutated input " + std::to_string(r.fuzzed + 1)) +
               ": " + how + "\n" + tail_of(log) + "\ninput saved to " + r.artifact;
  }
  ::munmap(mem, sizeof(Shared));
  if (clean) fs::remove(log, ec);
  return r;
}

}  // namespace mxgate::cli
