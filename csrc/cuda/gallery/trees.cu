// Shared-memory tree reductions: the Harris/PMPP progression, one element (or two, or eight) per
// thread, each block writing a partial that finish_partials reduces in a fixed order. Every
// kernel keeps its defining trait; all of them are correct for any n (threads past the end load
// the identity), never write their input, and index with 64 bits.
#include "cuda/block/common.cuh"

namespace rk {
namespace {

constexpr int kBlock = 256;     // power of two, >= 64 (the warp-synchronous tails need 64)

// tree_interleaved: the first tree anyone writes. Stride doubles each step and the threads that
// work are those with tid % (2*s) == 0: within a warp the active threads thin out, so most of
// each warp idles in a divergent branch, and the modulo is slow.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) tree_interleaved_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + tid, n);
  __syncthreads();
  for (unsigned st = 1; st < kBlock; st *= 2) {
    if (tid % (2 * st) == 0) s[tid] = combine<Acc, Op>(s[tid], s[tid + st]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// tree_strided: same data flow, but thread tid works on index 2*s*tid, so the working threads are
// contiguous and whole warps retire together: no divergence. The price: the strided shared-memory
// accesses of a warp fall into the same banks (2-way, 4-way, ... conflicts).
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) tree_strided_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + tid, n);
  __syncthreads();
  for (unsigned st = 1; st < kBlock; st *= 2) {
    const unsigned idx = 2 * st * tid;
    if (idx < kBlock) s[idx] = combine<Acc, Op>(s[idx], s[idx + st]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// Sequential-addressing tree over s[0..kBlock): stride halves each step, thread tid combines
// tid and tid+s. Contiguous threads, contiguous addresses: no divergence, no bank conflicts.
// Stops when `stop` values remain.
template <class Acc, class Op>
__device__ __forceinline__ void sequential_tree(Acc* s, unsigned tid, unsigned stop) {
  for (unsigned st = kBlock / 2; st >= stop && st > 0; st >>= 1) {
    if (tid < st) s[tid] = combine<Acc, Op>(s[tid], s[tid + st]);
    __syncthreads();
  }
}

// tree_sequential: sequential addressing (see sequential_tree). Half the threads idle from the
// first step on, which first_add fixes.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) tree_sequential_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + tid, n);
  __syncthreads();
  sequential_tree<Acc, Op>(s, tid, 1);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// Each thread loads two elements a block apart and adds them: every thread does useful work
// before the tree, and the grid halves.
template <class In, class Acc, class Op>
__device__ __forceinline__ Acc first_add_load(const In* __restrict__ x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlock) + threadIdx.x;
  return combine<Acc, Op>(load_or_identity<Acc, Op>(x, i, n), load_or_identity<Acc, Op>(x, i + kBlock, n));
}

// first_add: tree_sequential with two elements added while loading.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) first_add_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = first_add_load<In, Acc, Op>(x, n);
  __syncthreads();
  sequential_tree<Acc, Op>(s, tid, 1);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// The last 64 -> 1 steps by the first warp alone, with no block barrier. Harris relied on
// implicit warp lockstep and `volatile`; since Volta that is a race, so each step reads, then
// __syncwarp, then writes, then __syncwarp. Requires s[0..64) valid.
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_synchronous_tail(Acc* s, unsigned tid) {
  volatile Acc* vs = s;
  Acc v = vs[tid];
#pragma unroll
  for (unsigned off = 32; off > 0; off >>= 1) {
    v = combine<Acc, Op>(v, static_cast<Acc>(vs[tid + off]));
    __syncwarp();
    vs[tid] = v;
    __syncwarp();
  }
  return v;
}

// warp_unroll: first_add, then the tree stops at 64 values and the last warp finishes without
// __syncthreads: six fewer block barriers, and 31/32 of the block can retire early.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) warp_unroll_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  __shared__ Acc s[kBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = first_add_load<In, Acc, Op>(x, n);
  __syncthreads();
  sequential_tree<Acc, Op>(s, tid, 64);
  if (tid < 32) {
    Acc v = warp_synchronous_tail<Acc, Op>(s, tid);
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

// full_unroll: the block size is a template parameter, so every tree step is an if-constexpr:
// no loop counter, no loop branch, and dead steps vanish at compile time.
template <class In, class Acc, class Op, int B>
__global__ void __launch_bounds__(B) full_unroll_kernel(const In* __restrict__ x, int64_t n, Acc* __restrict__ partials) {
  static_assert(B >= 64 && (B & (B - 1)) == 0, "block size must be a power of two >= 64");
  __shared__ Acc s[B];
  const unsigned tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * B) + tid;
  s[tid] = combine<Acc, Op>(load_or_identity<Acc, Op>(x, i, n), load_or_identity<Acc, Op>(x, i + B, n));
  __syncthreads();
  if constexpr (B >= 1024) { if (tid < 512) s[tid] = combine<Acc, Op>(s[tid], s[tid + 512]); __syncthreads(); }
  if constexpr (B >= 512) { if (tid < 256) s[tid] = combine<Acc, Op>(s[tid], s[tid + 256]); __syncthreads(); }
  if constexpr (B >= 256) { if (tid < 128) s[tid] = combine<Acc, Op>(s[tid], s[tid + 128]); __syncthreads(); }
  if constexpr (B >= 128) { if (tid < 64) s[tid] = combine<Acc, Op>(s[tid], s[tid + 64]); __syncthreads(); }
  if (tid < 32) {
    Acc v = warp_synchronous_tail<Acc, Op>(s, tid);
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

// Blocks: one per kBlock elements, or per 2*kBlock for the kernels that add two while loading.
int64_t tree_grid(Method m, int64_t n) {
  const int64_t per_block = (m == Method::FirstAdd || m == Method::WarpUnroll || m == Method::FullUnroll) ? 2 * kBlock : kBlock;
  return ceil_div(n, per_block);
}

template <class In, class Acc, class Op>
cudaError_t run(Method m, const ReduceArgs& a) {
  const auto* x = static_cast<const In*>(a.in);
  return launch_then_finish<Acc, Op>(tree_grid(m, a.n), a, [&](dim3 grid, Acc* partials) {
    switch (m) {
      case Method::TreeInterleaved: tree_interleaved_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::TreeStrided: tree_strided_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::TreeSequential: tree_sequential_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::FirstAdd: first_add_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::WarpUnroll: warp_unroll_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      case Method::FullUnroll: full_unroll_kernel<In, Acc, Op, kBlock><<<grid, kBlock, 0, a.stream>>>(x, a.n, partials); break;
      default: break;  // not this family's: trees_launch refused it
    }
  });
}

}  // namespace

size_t trees_workspace(Method m, const ReduceArgs& a) { return partials_workspace(tree_grid(m, a.n), a.dtype); }

cudaError_t trees_launch(Method m, const ReduceArgs& a) {
  const bool mine = m == Method::TreeInterleaved || m == Method::TreeStrided || m == Method::TreeSequential ||
                    m == Method::FirstAdd || m == Method::WarpUnroll || m == Method::FullUnroll;
  if (!mine) return cudaErrorInvalidValue;  // another family's method (launch.cpp routes none here)
  if (tree_grid(m, a.n) > 0x7fffffff) return cudaErrorInvalidConfiguration;
  return dispatch_gallery<false>(a.dtype, a.op, [&](auto t, auto op) {
    using T = decltype(t);
    return run<typename T::In, typename T::Acc, decltype(op)>(m, a);
  });
}

}  // namespace rk
