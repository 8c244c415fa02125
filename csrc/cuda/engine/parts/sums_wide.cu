// The Sums family's kernels on int16, int32 and int64 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Sums, Wide)
