// The Extrema family's kernels on bool input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Extrema, Bool)
