#include "properties/worker_pool.h"

#include <algorithm>

namespace mxgate::properties {

WorkerPool::WorkerPool(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 1; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

WorkerPool& WorkerPool::shared() {
  static WorkerPool pool;
  return pool;
}

void WorkerPool::run(std::size_t tasks, const std::function<void(std::size_t)>& task) {
  if (tasks == 0) return;
  if (tasks == 1 || threads_.empty()) {
    for (std::size_t k = 0; k < tasks; ++k) task(k);
    return;
  }
  {
    const std::lock_guard<std::mutex> lock(mu_);
    task_ = &task;
    tasks_ = tasks;
    next_ = 0;
    done_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  work();
  std::unique_lock<std::mutex> lock(mu_);
  finished_.wait(lock, [&] { return done_ == tasks_; });
  task_ = nullptr;
}

// Takes tasks of the current pass until none is left.
void WorkerPool::work() {
  for (;;) {
    std::size_t k = 0;
    const std::function<void(std::size_t)>* task = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      if (task_ == nullptr || next_ >= tasks_) return;
      k = next_++;
      task = task_;
    }
    (*task)(k);
    const std::lock_guard<std::mutex> lock(mu_);
    if (++done_ == tasks_) finished_.notify_all();
  }
}

void WorkerPool::loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    work();
  }
}

}  // namespace mxgate::properties
