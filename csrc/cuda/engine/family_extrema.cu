// The Extrema family of core/op_table.h on the engine (reduce.cuh): amax, amin, aminmax, argmax
// and argmin, every real dtype, with engine/op_impl.h's structs (values compared as float32 for
// 16-bit floats, int32 for bool and integers up to 32 bits, themselves otherwise; argmax/argmin
// reduce runs of 64 bytes batched: the run's extreme, then its first offset).
#include "cuda/engine/family.cuh"

namespace rk {

cudaError_t family_extrema(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Extrema>(a, ws); }

}  // namespace rk
