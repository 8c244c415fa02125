// The Logic family of core/op_table.h on the engine (reduce.cuh): prod, all, any and
// count_nonzero, every real dtype, with engine/op_impl.h's structs (integer products wrap in
// int64 as torch's do; float products multiply in the value type, as torch's).
#include "cuda/engine/family.cuh"

namespace rk {

cudaError_t family_logic(const OpStep& a, size_t* ws) { return fam::run_family<red::Family::Logic>(a, ws); }

}  // namespace rk
