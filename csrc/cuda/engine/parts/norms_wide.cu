// The Norms family on int16, int32 and int64 input: no kernels (the family reads float inputs only;
// integers are cast first), only the part's dispatch, which answers cudaErrorInvalidValue
// (family.cuh: the parts).
#include "cuda/engine/family.cuh"

RK_FAMILY_PART(Norms, Wide)
