// The `auto` dispatcher's tuning table: which kernel and configuration reduce a given dtype and
// size fastest on a given architecture. Torch-free. Each entry carries the measurement that chose
// it (benchmarks/results/h200/, NOTES.md); an entry without one is a default awaiting measurement.
#pragma once

#include <cstdint>

#include "registry.h"

namespace rk {

struct AutoChoice {
  Method method;
  int block, unroll, grid;  // single_pass configuration; 0 = the kernel's default / one wave
};

struct TuningEntry {
  int min_cc;            // compute capability (major*10+minor) this row applies from
  int elem_bytes;        // input element size in bytes (1, 2, 4, 8); 0 = any
  int64_t max_bytes;     // rows apply to inputs of at most this many bytes (in order)
  AutoChoice choice;
};

// First matching row wins. Rows for sm_90 are measured on the H200 (132 SMs, 4.8 TB/s HBM3e).
inline constexpr TuningEntry kTuningTable[] = {
    // Default for every architecture and size: one launch, 512 threads, 4 x 16-byte loads in
    // flight per thread, one wave of blocks.
    {0, 0, INT64_MAX, {Method::SinglePass, 512, 4, 0}},
};

inline AutoChoice choose_auto(DType dt, int64_t n, int cc) {
  const int eb = dtype_bytes(dt);
  const int64_t bytes = n * eb;
  for (const auto& row : kTuningTable) {
    if (cc < row.min_cc) continue;
    if (row.elem_bytes != 0 && row.elem_bytes != eb) continue;
    if (bytes > row.max_bytes) continue;
    return row.choice;
  }
  return {Method::SinglePass, 0, 0, 0};
}

}  // namespace rk
