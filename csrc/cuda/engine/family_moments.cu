// The Moments family of core/op_table.h on the engine (reduce.cuh): mean, nansum, nanmean, var,
// std, var_mean and std_mean, float inputs, with engine/op_impl.h's structs (sums as sum's;
// Welford's runs of at most 32 values two-pass in the value type, only its state and merges in
// float64: a float32 state lost accuracy on data with a large mean, and a float64 run ran at a
// third of the read ceiling, NOTES.md issue 10).
#include "cuda/engine/family.cuh"

namespace rk {

cudaError_t family_moments(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Moments>(a, ws); }

}  // namespace rk
