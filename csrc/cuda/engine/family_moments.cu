// The Moments family of core/op_table.h on the engine (reduce.cuh): mean, nansum, nanmean, var,
// std, var_mean and std_mean, float inputs, with engine/op_impl.h's structs (sums as sum's;
// Welford's runs of at most 32 values two-pass in the value type, only its state and merges in
// float64: a float32 state lost accuracy on data with a large mean, and a float64 run ran at a
// third of the read ceiling, NOTES.md issue 10).
#include "cuda/engine/family.cuh"

namespace rk {

// The types the two backends share (engine/op_impl.h's TypesOf), pinned to literal types here and
// in the other backend: Welford's runs in the value type, narrow integers compared as int32.
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Var, red::NormOrd::Two, float, false>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::VarMean, red::NormOrd::Two, __half, true>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Std, red::NormOrd::Two, __nv_bfloat16, true>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Var, red::NormOrd::Two, double, false>::Op, red::Welford<double, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Amax, red::NormOrd::Two, int8_t, false>::Op, red::MapReduce<int, int, red::MaxM>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::AMinMax, red::NormOrd::Two, bool, false>::Op, red::MinMax<int>>);


cudaError_t family_moments(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Moments>(a, ws); }

}  // namespace rk
