// The Norms family's kernels on float64 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Norms, F64)
