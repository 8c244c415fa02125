// Bounded-grid reductions finished by a second pass over per-block partials (Kepler post, 000):
// one wave of blocks walks the input with a grid-sized stride, so the number of partials is set
// by the GPU, not by n. The fixed grid and the fixed-order finish make float results
// deterministic run to run.
#include "cuda/block/common.cuh"

namespace rk {
namespace {

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 2048 / kBlock;

// two_pass: grid-stride loop, then warp shuffles and a block reduce, one partial per block; the
// second launch (finish_partials) reduces the partials with one block.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) two_pass_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc scratch[32];
  Acc v = block_reduce<Acc, Op>(grid_stride_sum<In, Acc, Op>(x, n), scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// vectorized: two_pass reading 16 bytes per load (4 floats, 16 int8s...): a quarter to a
// sixteenth of the load instructions, and fewer, wider memory transactions in flight. The body
// starts at the first 16-byte boundary; a scalar head and tail cover views at odd offsets and
// sizes that are not a multiple of the vector.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) vectorized_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc scratch[32];
  const VecSplit<In> sp(x, n);
  const uint4* body = reinterpret_cast<const uint4*>(x + sp.head);
  const int64_t gtid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  Acc v = identity<Acc, Op>();
  for (int64_t i = gtid; i < sp.nvec; i += stride) v = accumulate_vec<In, Acc, Op>(v, __ldg(body + i));
  v = accumulate_head_tail<In, Acc, Op>(v, x, n, sp, gtid);
  v = block_reduce<Acc, Op>(v, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// One wave of blocks; vectorized counts its work in 16-byte vectors.
int64_t grid_for(Method m, const ReduceArgs& a) {
  const int64_t work = m == Method::Vectorized ? ceil_div(a.n, 16 / static_cast<int64_t>(dtype_bytes(a.dtype))) : a.n;
  return bounded_grid(work, kBlock, a.num_sms, kBlocksPerSm);
}

template <class In, class Acc, class Op>
cudaError_t run(Method m, const ReduceArgs& a) {
  const auto* x = static_cast<const In*>(a.in);
  auto* out = static_cast<Acc*>(a.out);
  const int64_t g = grid_for(m, a);
  // host_final always reads partials from the workspace; the others let a single block write the
  // result directly.
  const bool direct = g == 1 && m != Method::HostFinal;
  Acc* partials = direct ? out : static_cast<Acc*>(a.workspace);
  if (m == Method::Vectorized)
    vectorized_kernel<In, Acc, Op><<<static_cast<unsigned>(g), kBlock, 0, a.stream>>>(x, a.n, partials);
  else
    two_pass_kernel<In, Acc, Op><<<static_cast<unsigned>(g), kBlock, 0, a.stream>>>(x, a.n, partials);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || direct) return e;
  if (m != Method::HostFinal) return finish_partials<Acc, Op>(partials, g, out, a.stream);

  // host_final (003): copy the partials to pinned host memory, wait, and finish on the CPU in
  // index order. The wait is the cost this method teaches; it cannot be captured in a graph.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if ((e = cudaStreamIsCapturing(a.stream, &capture)) != cudaSuccess) return e;
  if (capture != cudaStreamCaptureStatusNone) return cudaErrorStreamCaptureUnsupported;
  if constexpr (!std::is_same_v<Op, SumOp>) return cudaErrorInvalidValue;  // host_final serves sum only
  auto* host = static_cast<Acc*>(a.host_workspace);
  if ((e = cudaMemcpyAsync(host, partials, g * sizeof(Acc), cudaMemcpyDeviceToHost, a.stream)) != cudaSuccess) return e;
  if ((e = cudaStreamSynchronize(a.stream)) != cudaSuccess) return e;
  Acc total = Acc(0);  // SumOp's identity; host code has no device Op
  for (int64_t i = 0; i < g; ++i) total += host[i];
  // From pageable memory the copy returns once `total` is staged, so the local may go.
  return cudaMemcpyAsync(out, &total, sizeof(Acc), cudaMemcpyHostToDevice, a.stream);
}

}  // namespace

size_t grid_stride_workspace(Method m, const ReduceArgs& a) {
  return align256(grid_for(m, a) * acc_bytes(a.dtype));
}

size_t grid_stride_host_workspace(Method m, const ReduceArgs& a) {
  return m == Method::HostFinal ? grid_stride_workspace(m, a) : 0;
}

cudaError_t grid_stride_launch(Method m, const ReduceArgs& a) {
  return dispatch_gallery<false>(a.dtype, a.op, [&](auto t, auto op) {
    using T = decltype(t);
    return run<typename T::In, typename T::Acc, decltype(op)>(m, a);
  });
}

}  // namespace rk
