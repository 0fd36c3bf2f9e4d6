// Work splitting for the reference's O(M N K) engines (exact GEMM, bounds, accumulator
// simulations). Every caller computes each output element on exactly one worker with an
// algorithm that does not depend on which worker or how many there are, so results are
// identical for every thread count; only the schedule changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace mxgate {

// The worker count for `requested` threads: `requested` when positive, else the MXGATE_THREADS
// environment variable when it holds a positive integer, else std::thread::hardware_concurrency
// (at least 1), or 1 for `work` (the caller's count of inner steps, e.g. M N K) below
// kSerialWork, where starting threads would cost more than they save.
inline constexpr std::size_t kSerialWork = std::size_t{1} << 18;
unsigned thread_count(unsigned requested = 0, std::size_t work = SIZE_MAX);

// Calls fn(item, worker) once for every item in [0, items), on min(threads, items) workers
// (worker in [0, workers)); items are handed out in increasing order as workers become free. The
// first exception thrown by fn is rethrown after every worker has stopped; the remaining items
// are then skipped. threads == 1 runs everything on the calling thread.
void parallel_for(std::size_t items, unsigned threads,
                  const std::function<void(std::size_t item, unsigned worker)>& fn);

// The number of workers parallel_for uses for `items` items on `threads` threads.
unsigned worker_count(std::size_t items, unsigned threads);

}  // namespace mxgate
