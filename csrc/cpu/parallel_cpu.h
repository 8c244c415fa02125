// The one parallel loop of the CPU backend: at::parallel_for with a grain measured in values.
//
// Why it exists: a parallel region over tiny work costs more than the work, and under load far
// more. With both cores busy in another process, a region that hands 8,000 values to a second
// thread waits for that thread to be scheduled: a whole scheduler slice, about 8 ms, for work of
// 10 us (reducekit.linalg.vector_norm of a (10, 775) float32 tensor over dim 0 took 7,993 us with two
// threads, 37 us with one). torch gives its loops a grain of at::internal::GRAIN_SIZE = 32768
// values; so does every loop here: a task of `values_per_task` values gets a grain of
// kGrainValues / values_per_task tasks, so that a region starts only when each thread it wakes has
// at least 32768 values to read. parallel_regions() counts the regions started, for
// tests/test_cpu_threads.py, which checks that small reductions start none (and large ones do) and
// that no other file of csrc calls at::parallel_for; benchmarks/cpu_under_load.py times them.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>

namespace rk {

constexpr int64_t kGrainValues = 1 << 15;  // torch's at::internal::GRAIN_SIZE

inline std::atomic<int64_t> g_parallel_regions{0};
inline int64_t parallel_regions() { return g_parallel_regions.load(std::memory_order_relaxed); }

// f(begin, end) over [0, tasks), each task reading about values_per_task values.
template <class F>
void parallel_tasks(int64_t tasks, int64_t values_per_task, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainValues / std::max<int64_t>(values_per_task, 1));
  // at::parallel_for's own test for starting a region (ATen/Parallel-inl.h)
  if (tasks > grain && tasks > 1 && !at::in_parallel_region() && at::get_num_threads() > 1) {
    g_parallel_regions.fetch_add(1, std::memory_order_relaxed);
  }
  at::parallel_for(0, tasks, grain, std::forward<F>(f));
}

}  // namespace rk
