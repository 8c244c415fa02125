// The Moments family's kernels on bfloat16 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Moments, BFloat16)
