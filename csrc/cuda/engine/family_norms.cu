// The Norms family of core/op_table.h on the engine (reduce.cuh): vector_norm (every ord) and
// logsumexp, float inputs, with engine/op_impl.h's structs.
#include "cuda/engine/family.cuh"

namespace rk {

cudaError_t family_norms(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Norms>(a, ws); }

}  // namespace rk
