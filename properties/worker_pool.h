// A persistent pool of threads for the host cast survey's per-chunk passes (the inputs' fill, the
// outputs' comparison and re-poisoning, properties/cast_survey.cpp): one thread per core, started
// once per process, asleep between passes (never spinning, so the op under test has the cores
// while it runs). Scheduling only: a task's result never depends on which thread runs it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mxgate::properties {

class WorkerPool {
 public:
  // `threads` workers in all, the caller's thread counted (0: std::thread::hardware_concurrency).
  explicit WorkerPool(std::size_t threads = 0);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The threads a pass runs on, the caller's included.
  std::size_t size() const { return threads_.size() + 1; }
  // Calls task(0) .. task(tasks - 1), each once, on the pool and the calling thread; returns when
  // every one has returned. `task` must not throw. One pass at a time (the caller's thread waits).
  void run(std::size_t tasks, const std::function<void(std::size_t)>& task);

  // The process's pool (hardware_concurrency threads), started on first use.
  static WorkerPool& shared();

 private:
  void work();
  void loop();

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, finished_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t tasks_ = 0, next_ = 0, done_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace mxgate::properties
