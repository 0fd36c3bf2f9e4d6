#include "reference/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mxgate {

unsigned thread_count(unsigned requested, std::size_t work) {
  if (requested > 0) {
    return requested;
  }
  if (const char* env = std::getenv("MXGATE_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long v = std::strtoul(env, &end, 10);
    if (end != nullptr && *end == '\0' && v > 0 && v <= 4096) {
      return static_cast<unsigned>(v);
    }
  }
  if (work < kSerialWork) return 1;
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());  // reads sysfs
  return cores;
}

unsigned worker_count(std::size_t items, unsigned threads) {
  const std::size_t t = std::max<std::size_t>(1, threads);
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(items, t)));
}

void parallel_for(std::size_t items, unsigned threads,
                  const std::function<void(std::size_t item, unsigned worker)>& fn) {
  if (items == 0) {
    return;
  }
  const unsigned workers = worker_count(items, threads);
  if (workers == 1) {
    for (std::size_t i = 0; i < items; ++i) {
      fn(i, 0);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex first_mutex;
  auto body = [&](unsigned worker) {
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= items || failed.load(std::memory_order_relaxed)) {
        return;
      }
      try {
        fn(i, worker);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(first_mutex);
        if (!first) {
          first = std::current_exception();
        }
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) {
    pool.emplace_back(body, w);
  }
  body(0);
  for (std::thread& t : pool) {
    t.join();
  }
  if (first) {
    std::rethrow_exception(first);
  }
}

}  // namespace mxgate
