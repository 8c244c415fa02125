// CPU execution of one reduction-operator step (engine/op_desc.h): the same operator structs as
// the CUDA kernels, in the same accumulation order (lanes of 64 bytes reduced in index order, then
// a perfect pairwise tree over the lanes). Deterministic whatever the thread count.
#pragma once

#include "engine/op_desc.h"

namespace rk {

void cpu_op_step(const OpDesc& d);

}  // namespace rk
