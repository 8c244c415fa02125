// Reductions finished by atomics: the result is an accumulator in device memory, set to the
// identity by a one-thread init kernel (generic in the operator, unlike a memset), that blocks,
// warps or threads combine into. Integer results are exact and deterministic; floating-point
// results depend on the order the atomics land in, so they vary in the last bits run to run.
#include <cub/block/block_reduce.cuh>

#include "cuda/block/common.cuh"

namespace rk {
namespace {

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 2048 / kBlock;   // bounded grids: one full wave

// atomic_global: the naive baseline. Every element is an atomic on the same address, so the
// memory system serializes all n updates: integer atomics are resolved fast in L2, float ones
// far slower. The lesson of 001's tables.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) atomic_global_kernel(const In* __restrict__ x, int64_t n, Acc* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) Op::atomic_combine(out, to_acc<Acc>(x[i]));
}

// atomic_block: the contention moves to shared memory (one accumulator per block), and only one
// global atomic per block remains: kBlock times fewer global updates.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) atomic_block_kernel(const In* __restrict__ x, int64_t n, Acc* out) {
  __shared__ Acc block_acc;
  if (threadIdx.x == 0) block_acc = identity<Acc, Op>();
  __syncthreads();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i < n) Op::atomic_combine(&block_acc, to_acc<Acc>(x[i]));
  __syncthreads();
  if (threadIdx.x == 0) Op::atomic_combine(out, block_acc);
}

// warp_atomic: grid-stride loop, warp shuffle reduce, one atomic per warp (000): no shared memory
// and no block barrier at all.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) warp_atomic_kernel(const In* __restrict__ x, int64_t n, Acc* out) {
  Acc v = grid_stride_sum<In, Acc, Op>(x, n);
  v = warp_reduce<Acc, Op>(v, min(32, static_cast<int>(blockDim.x) - static_cast<int>(threadIdx.x & ~31u)));
  if ((threadIdx.x & 31) == 0) Op::atomic_combine(out, v);
}

// block_atomic: as warp_atomic, but a block reduce first: kBlock/32 times fewer atomics.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) block_atomic_kernel(const In* __restrict__ x, int64_t n, Acc* out) {
  __shared__ Acc scratch[32];
  Acc v = block_reduce<Acc, Op>(grid_stride_sum<In, Acc, Op>(x, n), scratch);
  if (threadIdx.x == 0) Op::atomic_combine(out, v);
}

// lock: block results combined under a spin lock (003): thread 0 of each block takes the lock
// with atomicCAS, reads the running total through L2 (volatile), adds, publishes with
// __threadfence before releasing. Works for any operator, atomics or not, but blocks queue.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) lock_kernel(const In* __restrict__ x, int64_t n, Acc* out, int* lock) {
  __shared__ Acc scratch[32];
  Acc v = block_reduce<Acc, Op>(grid_stride_sum<In, Acc, Op>(x, n), scratch);
  if (threadIdx.x == 0) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();  // acquire: see the previous holder's write
    volatile Acc* vout = out;
    *vout = combine<Acc, Op>(static_cast<Acc>(*vout), v);
    __threadfence();  // release: publish before unlocking
    atomicExch(lock, 0);
  }
}

// cub_block: 001's CUB kernel, one element per thread, cub::BlockReduce (CUB picks the warp
// reduction strategy for the architecture), one atomic per block.
template <class In, class Acc, class Op>
__global__ void __launch_bounds__(kBlock) cub_block_kernel(const In* __restrict__ x, int64_t n, Acc* out) {
  using BlockReduce = cub::BlockReduce<Acc, kBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  Acc v = load_or_identity<Acc, Op>(x, static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x, n);
  v = BlockReduce(temp).Reduce(v, OpFunctor<Acc, Op>());
  if (threadIdx.x == 0) Op::atomic_combine(out, v);
}

// Whether Op has a hardware atomic for Acc: sum always, max and min for integer accumulators.
template <class Op, class Acc>
inline constexpr bool kHasAtomic =
    std::is_same_v<Op, SumOp> || ((std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>) && std::is_same_v<Acc, int64_t>);

int64_t atomics_grid(Method m, const ReduceArgs& a) {
  switch (m) {
    case Method::WarpAtomic:
    case Method::BlockAtomic:
    case Method::Lock: return bounded_grid(a.n, kBlock, a.num_sms, kBlocksPerSm);
    default: return ceil_div(a.n, kBlock);
  }
}

template <class In, class Acc, class Op>
cudaError_t run(Method m, const ReduceArgs& a) {
  const auto* x = static_cast<const In*>(a.in);
  auto* out = static_cast<Acc*>(a.out);
  int* lock = m == Method::Lock ? static_cast<int*>(a.workspace) : nullptr;
  // Planted fault skip_init: the atomics add onto whatever `out` held (the lock is still cleared,
  // so the fault is a wrong sum, not a hang).
  cudaError_t e = init_result<Acc, Op>(RK_FAULT_IS(SkipInit) ? nullptr : out, lock, a.stream);
  if (e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>(atomics_grid(m, a)));
  if constexpr (!kHasAtomic<Op, Acc>) {  // prod, all, any and float max/min: the lock only
    if (m != Method::Lock) return cudaErrorInvalidValue;
    lock_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out, lock);
    return cudaGetLastError();
  } else {
    switch (m) {
      case Method::AtomicGlobal: atomic_global_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out); break;
      case Method::AtomicBlock: atomic_block_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out); break;
      case Method::WarpAtomic: warp_atomic_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out); break;
      case Method::BlockAtomic: block_atomic_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out); break;
      case Method::Lock: lock_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out, lock); break;
      case Method::CubBlock: cub_block_kernel<In, Acc, Op><<<grid, kBlock, 0, a.stream>>>(x, a.n, out); break;
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
}

}  // namespace

size_t atomics_workspace(Method m, const ReduceArgs&) { return m == Method::Lock ? 256 : 0; }

cudaError_t atomics_launch(Method m, const ReduceArgs& a) {
  if (atomics_grid(m, a) > 0x7fffffff) return cudaErrorInvalidConfiguration;
  // lock combines under a lock (any operator); the others need the operator's atomic.
  if (m == Method::Lock) {
    return dispatch_gallery<false>(a.dtype, a.op, [&](auto t, auto op) {
      using T = decltype(t);
      return run<typename T::In, typename T::Acc, decltype(op)>(m, a);
    });
  }
  return dispatch_gallery<true>(a.dtype, a.op, [&](auto t, auto op) {
    using T = decltype(t);
    return run<typename T::In, typename T::Acc, decltype(op)>(m, a);
  });
}

}  // namespace rk
