// Warp-level reductions: once the data is in registers, warps combine it with shuffles instead of
// shared memory and barriers. One (or two, or eight) elements per thread, a partial per block,
// and finish_partials in a fixed order, as in trees.cu.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "cuda/block/common.cuh"

namespace cg = cooperative_groups;

namespace rk {
namespace {

constexpr int kBlock = 256;   // multiple of 32 and >= 64
constexpr int kCoarse = 8;    // coarsened: elements per thread

// shuffle: the shared-memory tree of tree_sequential down to 64 values, then the first warp adds
// the two halves and finishes with __shfl_down_sync: register exchanges, no barriers, no shared
// memory traffic for the last five steps.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) shuffle_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + tid, n);
  __syncthreads();
  for (unsigned st = kBlock / 2; st > 32; st >>= 1) {
    if (tid < st) s[tid] = combine<Acc, Op>(s[tid], s[tid + st]);
    __syncthreads();
  }
  if (tid < 32) {
    Acc v = combine<Acc, Op>(s[tid], s[tid + 32]);
    for (int off = 16; off > 0; off >>= 1) v = combine<Acc, Op>(v, __shfl_down_sync(0xffffffffu, v, off));
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

// Butterfly all-reduce within a warp: after log2(32) __shfl_xor_sync steps every lane holds the
// warp's total (no lane-0-only result, no shared memory at all inside the warp).
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_allreduce_xor(Acc v) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) v = combine<Acc, Op>(v, __shfl_xor_sync(0xffffffffu, v, mask));
  return v;
}

// butterfly: no shared-memory tree at all; each warp all-reduces its 32 values with XOR shuffles,
// lane 0 of each warp posts the warp total, and warp 0 all-reduces those.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) butterfly_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc warp_sums[kBlock / 32];
  const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  Acc v = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + tid, n);
  v = warp_allreduce_xor<Acc, Op>(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / 32 ? warp_sums[lane] : identity<Acc, Op>();
    v = warp_allreduce_xor<Acc, Op>(v);
    if (lane == 0) partials[blockIdx.x] = v;
  }
}

// The cooperative-groups block reduction: 32-thread tiles reduce with cg::reduce (which picks the
// hardware redux instruction where the type allows, shuffles otherwise), tile leaders post to
// shared memory, and the first tile reduces the posts.
template <class Acc, class Op>
__device__ __forceinline__ Acc cg_block_reduce(Acc v) {
  __shared__ Acc tile_sums[kBlock / 32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  v = cg::reduce(tile, v, OpFunctor<Acc, Op>());
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < kBlock / 32 ? tile_sums[tile.thread_rank()] : identity<Acc, Op>();
    v = cg::reduce(tile, v, OpFunctor<Acc, Op>());
  }
  return v;
}

// cg: the shuffle idea expressed with cooperative groups: same speed class, but the tile size
// and the reduction are explicit objects rather than lane arithmetic.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) cg_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  Acc v = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x, n);
  v = cg_block_reduce<Acc, Op>(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// cg_unroll2: cg with two elements per thread, a block apart (coalesced): half the blocks, twice
// the loads in flight per thread.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) cg_unroll2_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlock) + threadIdx.x;
  Acc v = combine<Acc, Op>(load_or_identity<Acc, Op>(x, i, n), load_or_identity<Acc, Op>(x, i + kBlock, n));
  v = cg_block_reduce<Acc, Op>(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// coarsened: each thread first sums kCoarse elements serially (a block apart, so each of its
// loads is coalesced across the block), then one tree per kCoarse*kBlock elements: 8x fewer
// blocks, partials and barriers per element than tree_sequential.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) coarsened_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * (kCoarse * kBlock) + tid;
  Acc v = identity<Acc, Op>();
#pragma unroll
  for (int c = 0; c < kCoarse; ++c) v = combine<Acc, Op>(v, load_or_identity<Acc, Op>(x, start + static_cast<int64_t>(c) * kBlock, n));
  s[tid] = v;
  __syncthreads();
  for (unsigned st = kBlock / 2; st > 0; st >>= 1) {
    if (tid < st) s[tid] = combine<Acc, Op>(s[tid], s[tid + st]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

int64_t warp_grid(Method m, int64_t n) {
  const int64_t per_block = m == Method::CgUnroll2 ? 2 * kBlock : m == Method::Coarsened ? kCoarse * kBlock : kBlock;
  return ceil_div(n, per_block);
}

template <class In, class Acc, class Op>
cudaError_t run(Method m, const ReduceArgs& a) {
  const auto* x = static_cast<const In*>(a.in);
  return launch_then_finish<Acc, Op>(warp_grid(m, a.n), a, [&](dim3 grid, Acc* partials) {
    switch (m) {
      case Method::Shuffle: shuffle_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::Butterfly: butterfly_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::Cg: cg_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::CgUnroll2: cg_unroll2_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::Coarsened: coarsened_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      default: break;  // not this family's: warp_launch refused it
    }
  });
}

}  // namespace

size_t warp_workspace(Method m, const ReduceArgs& a) { return partials_workspace(warp_grid(m, a.n), a.dtype); }

cudaError_t warp_launch(Method m, const ReduceArgs& a) {
  const bool mine = m == Method::Shuffle || m == Method::Butterfly || m == Method::Cg || m == Method::CgUnroll2 ||
                    m == Method::Coarsened;
  if (!mine) return cudaErrorInvalidValue;  // another family's method (launch.cpp routes none here)
  if (warp_grid(m, a.n) > 0x7fffffff) return cudaErrorInvalidConfiguration;
  return dispatch_gallery<false>(a.dtype, a.op, [&](auto t, auto op) {
    using T = decltype(t);
    return run<typename T::In, typename T::Acc, decltype(op)>(m, a);
  });
}

}  // namespace rk
