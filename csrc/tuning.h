// The `auto` dispatcher's tuning table: which kernel and configuration reduce a given dtype and
// size fastest on a given architecture. Torch-free. Each row carries the measurement that chose
// it (benchmarks/tune.py on the H200; NOTES.md has the runs), as CUB's tuning policies do.
#pragma once

#include <cstdint>

#include "registry.h"

namespace rk {

struct AutoChoice {
  Method method;
  int block, unroll, grid;  // single_pass configuration; 0 = the kernel's default / one wave
  // single_pass: launch with programmatic dependent launch. It pays when our own kernels follow
  // each other; after a foreign kernel, which never triggers it, it can cost time (tune.py times
  // both, interleaved with a foreign kernel, and keeps the faster).
  bool pdl = true;
};

struct TuningEntry {
  int min_cc;       // compute capability (major*10+minor) the row applies from
  DType dtype;      // DType::Count = any dtype
  int64_t max_n;    // the row applies to inputs of at most this many elements
  AutoChoice choice;  // inside CUDA graph capture: the fastest GPU time
  // Eager calls: host time counts too. CUB's dispatch costs about 10 us of host time per call
  // (occupancy queries, two launches, a workspace), far more than its GPU-time lead at the sizes
  // where graph timing prefers it, so eager calls take the best single_pass configuration.
  AutoChoice eager;
};

// First matching row wins: for one dtype, rows go by increasing max_n.
inline constexpr TuningEntry kTuningTable[] = {
#include "tuning_sm90.inc"
    // Every other architecture and size: one launch, 512 threads, 4 x 16-byte loads in flight per
    // thread, one wave of blocks (the H200's best configuration at 2^28 and above for most dtypes).
    {0, DType::Count, INT64_MAX, {Method::SinglePass, 512, 4, 0}, {Method::SinglePass, 512, 4, 0}},
};

// `captured`: the call is being captured into a CUDA graph (its host time is paid once).
inline AutoChoice choose_auto(DType dt, int64_t n, int cc, bool captured) {
  for (const auto& row : kTuningTable) {
    if (cc < row.min_cc) continue;
    if (row.dtype != DType::Count && row.dtype != dt) continue;
    if (n > row.max_n) continue;
    return captured ? row.choice : row.eager;
  }
  return {Method::SinglePass, 0, 0, 0};
}

}  // namespace rk
