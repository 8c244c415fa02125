// The read ceiling: how fast this GPU streams a buffer in, measured by a kernel that does nothing
// but read (16-byte loads, UNROLL in flight, XOR-folded so the loads cannot be elided). It is not
// a reduction and shares no code with single_pass, so "percent of the read ceiling" is measured
// against an independent yardstick. The benchmark takes the best of several configurations.
#include "cuda/block/common.cuh"

namespace rk {
namespace {

template <int UNROLL>
__global__ void read_probe_kernel(const uint4* __restrict__ v, int64_t nvec, unsigned long long* __restrict__ sink) {
  const int64_t sweep = static_cast<int64_t>(gridDim.x) * blockDim.x * UNROLL;
  unsigned acc = 0;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
  for (; i + (UNROLL - 1) * static_cast<int64_t>(blockDim.x) < nvec; i += sweep) {
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = __ldcs(v + i + u * static_cast<int64_t>(blockDim.x));
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= r[u].x ^ r[u].y ^ r[u].z ^ r[u].w;
  }
  for (int u = 0; u < UNROLL; ++u) {
    const int64_t j = i + u * static_cast<int64_t>(blockDim.x);
    if (j < nvec) {
      const uint4 r = __ldcs(v + j);
      acc ^= r.x ^ r.y ^ r.z ^ r.w;
    }
  }
  // Practically never true; keeps the loads live without a write per thread.
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1ull);
}

}  // namespace

// Reads the nvec 16-byte vectors at v (16-byte aligned). waves: blocks = waves x SMs x occupancy.
cudaError_t read_probe_launch(const void* v, int64_t nvec, unsigned long long* sink, int block, int unroll, int waves,
                              int num_sms, cudaStream_t stream) {
  auto go = [&](auto kernel) {
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0);
    if (e != cudaSuccess) return e;
    const int64_t grid = static_cast<int64_t>(waves) * num_sms * (per_sm > 0 ? per_sm : 1);
    kernel<<<static_cast<unsigned>(grid), block, 0, stream>>>(static_cast<const uint4*>(v), nvec, sink);
    return cudaGetLastError();
  };
  switch (unroll) {
    case 4: return go(read_probe_kernel<4>);
    case 8: return go(read_probe_kernel<8>);
    case 16: return go(read_probe_kernel<16>);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace rk
