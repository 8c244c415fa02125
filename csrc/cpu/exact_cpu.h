// method="exact" on the CPU: correctly rounded sums of contiguous rows (engine/exact.h explains
// the algorithm; the CUDA kernel is cuda/engine/exact.cu). Correct rounding makes the result
// independent of the order, so the CPU and CUDA give the same bits by construction.
#pragma once

#include <cstdint>

#include "engine/exact.h"
#include "core/methods.h"

namespace rk {

// `rows` contiguous rows of `len` >= 1 values of the float dtype `in`. With words == false, writes
// one value per row in format `o` (2, 4 or 8 bytes each); with words == true, writes
// exact::kExactWords int64 per row (the shard format) and ignores `o`.
void cpu_exact_rows(const void* in, DType dt, int64_t rows, int64_t len, void* out, exact::OutFmt o, bool words);

// Rounds `rows` rows of exact::kExactWords int64 (partials summed as integers) into format `o`.
void cpu_exact_round(const int64_t* words, int64_t rows, void* out, exact::OutFmt o);

}  // namespace rk
