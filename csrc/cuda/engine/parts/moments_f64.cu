// The Moments family's kernels on float64 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Moments, F64)
