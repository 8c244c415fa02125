// The Sums family's kernels on uint8 and int8 input (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Sums, Byte)
