// cub_device: CUB's device-wide reduction, the library baseline every kernel here is measured
// against. TransformReduce converts each element to the accumulator type on load (a plain
// DeviceReduce::Sum over float16 would accumulate in float16, and over int8 would overflow).
// CUB's own tuning policies choose the tile sizes; a first kernel reduces tiles, a second the
// tile partials, in a fixed order: deterministic run to run.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include "cuda/block/common.cuh"

namespace rk {
namespace {

template <class In, class Acc>
struct ToAcc {
  __device__ __forceinline__ Acc operator()(const In& v) const { return to_acc<Acc>(v); }
};

template <class In, class Acc>
cudaError_t cub_reduce(void* temp, size_t& temp_bytes, const ReduceArgs& a) {
  return cub::DeviceReduce::TransformReduce(temp, temp_bytes, static_cast<const In*>(a.in), static_cast<Acc*>(a.out), a.n,
                                            cuda::std::plus<Acc>(), ToAcc<In, Acc>(), Acc(0), a.stream);
}

}  // namespace

size_t cub_workspace(Method, const ReduceArgs& a) {
  size_t bytes = 0;
  dispatch_gallery_types(a.dtype, [&](auto t) {
    using T = decltype(t);
    return cub_reduce<typename T::In, typename T::Acc>(nullptr, bytes, a);
  });
  return align256(bytes);
}

cudaError_t cub_launch(Method, const ReduceArgs& a) {
  return dispatch_gallery_types(a.dtype, [&](auto t) {
    using T = decltype(t);
    size_t bytes = cub_workspace(Method::CubDevice, a);
    return cub_reduce<typename T::In, typename T::Acc>(a.workspace, bytes, a);
  });
}

}  // namespace rk
