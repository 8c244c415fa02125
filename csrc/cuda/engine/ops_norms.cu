// The Norms family of core/op_table.h on the engine (reduce.cuh): vector_norm (every ord) and
// logsumexp, float inputs, with engine/op_impl.h's structs.
#include "cuda/engine/ops_common.cuh"

namespace rk {

cudaError_t ops_norms(const OpStep& a, size_t* ws) { return ops::run_family<red::Family::Norms>(a, ws); }

}  // namespace rk
