// The Sums family of core/op_table.h on the engine (reduce.cuh): sum, every real dtype, with
// engine/op_impl.h's struct (16-bit floats add in float32, float32 and float64 in float64, bool
// and integers in a wrapping int64, read four bytes at a time with dp4a), in the steps of its
// plan (engine/plan.h): every step but the last writes the accumulator, which the next one reads.
#include "cuda/engine/family.cuh"

namespace rk {

cudaError_t family_sums(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Sums>(a, ws); }

}  // namespace rk
