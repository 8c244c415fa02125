// The Extrema family's kernels on float16 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Extrema, Half)
