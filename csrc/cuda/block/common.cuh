// Device-side building blocks shared by every strategy family: input/accumulator types, the
// generic reduction operator with its identity, tail-safe warp and block reductions, 16-byte
// vector accumulation, and the fixed-order finish over per-block partials.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cuda/atomic>

#include <cstdint>
#include <type_traits>

#include "engine/reduce_ops.h"
#include "core/faults.h"
#include "cuda/launchers.h"

namespace rk {

// ---------------------------------------------------------------------------------------------
// Types. Bool is read as one byte holding 0 or 1 (torch's storage).
template <class I, class A>
struct Types {
  using In = I;
  using Acc = A;
};

// core/dtype.h's dispatch with the GPU's 16-bit types: f(TypeTag<In>{}); cudaErrorInvalidValue for a
// bad dtype.
template <class F>
inline cudaError_t dispatch_cuda(DType dt, F&& f) {
  return dispatch_dtype<__half, __nv_bfloat16>(dt, f, [] { return cudaErrorInvalidValue; });
}

// The gallery's accumulator: int64 for bool and integers, float32 for 16-bit floats and float32,
// float64 for float64 (launchers.h acc_dtype).
template <class In>
using GalleryAcc = std::conditional_t<std::is_integral_v<In>, int64_t, std::conditional_t<std::is_same_v<In, double>, double, float>>;

// f(Types<In, GalleryAcc<In>>{}) for the gallery's dtype dt.
template <class F>
inline cudaError_t dispatch_gallery_types(DType dt, F&& f) {
  return dispatch_cuda(dt, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    return f(Types<In, GalleryAcc<In>>{});
  });
}

template <class Acc, class In>
__device__ __forceinline__ Acc to_acc(In v) {
  if constexpr (std::is_same_v<In, __half>) {
    return static_cast<Acc>(__half2float(v));
  } else if constexpr (std::is_same_v<In, __nv_bfloat16>) {
    return static_cast<Acc>(__bfloat162float(v));
  } else {
    return static_cast<Acc>(v);
  }
}

template <class Out, class Acc>
__device__ __forceinline__ Out from_acc(Acc v) {
  if constexpr (std::is_same_v<Out, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// The generic operator (004's `op` with its identity). Every kernel is templated on it, so
// min/max/prod need a new Op struct, not new kernels. sum's is the engine's monoid (red::SumM:
// signed integers add as unsigned, so that overflow wraps around as torch.sum's does) with the
// atomics.
struct SumOp : red::SumM {
  template <class T>
  __device__ __forceinline__ static void atomic_combine(T* addr, T v) {
    if constexpr (std::is_same_v<T, int64_t>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
    } else {
      atomicAdd(addr, v);
    }
  }
};

// The other gallery operators (engine/reduce_ops.h's monoids). max and min have the integer
// atomics (the accumulator of integer inputs is int64); prod, all and any have none.
struct ProdOp : red::ProdM {};
struct AllOp : red::AndM {};
struct AnyOp : red::OrM {};
struct MaxOp : red::MaxM {
  template <class T>
  __device__ __forceinline__ static void atomic_combine(T* addr, T v) {
    static_assert(std::is_same_v<T, int64_t>, "atomicMax: integer accumulators only");
    atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  }
};
struct MinOp : red::MinM {
  template <class T>
  __device__ __forceinline__ static void atomic_combine(T* addr, T v) {
    static_assert(std::is_same_v<T, int64_t>, "atomicMin: integer accumulators only");
    atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
  }
};

// Calls f(Types, Op) for the dtype and the gallery operator: with_atomics says whether the
// family's kernels need Op::atomic_combine (then only sum, and integer max and min, exist).
template <bool with_atomics, class F>
inline cudaError_t dispatch_gallery(DType dt, GalleryOp op, F&& f) {
  return dispatch_gallery_types(dt, [&](auto t) -> cudaError_t {
    using T = decltype(t);
    constexpr bool integral = std::is_integral_v<typename T::In>;
    switch (op) {
      case GalleryOp::Sum: return f(t, SumOp{});
      case GalleryOp::Max:
        if constexpr (!with_atomics || integral) return f(t, MaxOp{});
        break;
      case GalleryOp::Min:
        if constexpr (!with_atomics || integral) return f(t, MinOp{});
        break;
      case GalleryOp::Prod:
        if constexpr (!with_atomics) return f(t, ProdOp{});
        break;
      case GalleryOp::All:
        if constexpr (!with_atomics) return f(t, AllOp{});
        break;
      case GalleryOp::Any:
        if constexpr (!with_atomics) return f(t, AnyOp{});
        break;
      case GalleryOp::None: break;
    }
    return cudaErrorInvalidValue;
  });
}

template <class Acc, class Op>
struct OpFunctor {
  __device__ __forceinline__ Acc operator()(const Acc& a, const Acc& b) const { return Op::template combine<Acc>(a, b); }
};

template <class Acc, class Op>
__device__ __forceinline__ Acc identity() { return Op::template identity<Acc>(); }

template <class Acc, class Op>
__device__ __forceinline__ Acc combine(Acc a, Acc b) { return Op::template combine<Acc>(a, b); }

// Element i of x converted to Acc, or the identity past the end.
template <class Acc, class Op, class In>
__device__ __forceinline__ Acc load_or_identity(const In* __restrict__ x, int64_t i, int64_t n) {
  return i < n ? to_acc<Acc>(x[i]) : identity<Acc, Op>();
}

// ---------------------------------------------------------------------------------------------
// Warp and block reductions that are safe for any blockDim.x (not only multiples of 32): a
// shuffle only names lanes that exist, and values from lanes past the end are never combined.
template <class Acc, class Op>
__device__ __forceinline__ Acc warp_reduce(Acc v, int width) {
  const unsigned mask = width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    Acc other = __shfl_down_sync(mask, v, off);
    if (lane + off < width) v = combine<Acc, Op>(v, other);
  }
  return v;
}

// Sum of v over the block, valid in thread 0. `scratch` holds at least 32 Acc. Fixed order:
// deterministic for a fixed blockDim. Ends with a barrier, so scratch may be reused after.
template <class Acc, class Op>
__device__ __forceinline__ Acc block_reduce(Acc v, Acc* scratch) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nthreads = blockDim.x, nwarps = (nthreads + 31) >> 5;
  const int width = min(32, nthreads - warp * 32);
  v = warp_reduce<Acc, Op>(v, width);
  bool post = lane == 0;
  if constexpr (RK_FAULT_IS(WarpPostPrecedence)) post = tid & 31 == 0;  // planted: parses as tid & (31 == 0)
  if (post) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < nwarps ? scratch[lane] : identity<Acc, Op>();
    v = warp_reduce<Acc, Op>(v, min(32, nthreads));
  }
  __syncthreads();
  return v;
}

// ---------------------------------------------------------------------------------------------
// 16-byte vectors. An input run starting at an arbitrary element-aligned address is split into a
// scalar head (up to the first 16-byte boundary), an aligned body of whole vectors and a scalar
// tail.
template <class In>
struct VecSplit {
  static constexpr int kVec = 16 / sizeof(In);
  int64_t head;   // scalar elements before the body
  int64_t nvec;   // whole 16-byte vectors in the body
  int64_t tail;   // scalar elements after the body
  __host__ __device__ VecSplit(const In* x, int64_t n) {
    const auto addr = reinterpret_cast<uintptr_t>(x);
    int64_t h = static_cast<int64_t>(((16 - (addr & 15)) & 15) / sizeof(In));
    head = h < n ? h : n;
    nvec = (n - head) / kVec;
    tail = n - head - nvec * kVec;
  }
};

// Adds the kVec elements packed in v to acc. Narrow integers are summed in int32 first (at most
// 16 values of magnitude <= 65535 per vector: no overflow), with dp4a for bytes.
template <class In, class Acc, class Op>
__device__ __forceinline__ Acc accumulate_vec(Acc acc, const uint4& v) {
  if constexpr (std::is_same_v<Op, SumOp> && (std::is_same_v<In, int8_t>)) {
    int s = __dp4a(static_cast<int>(v.x), 0x01010101, 0);
    s = __dp4a(static_cast<int>(v.y), 0x01010101, s);
    s = __dp4a(static_cast<int>(v.z), 0x01010101, s);
    s = __dp4a(static_cast<int>(v.w), 0x01010101, s);
    return acc + static_cast<Acc>(s);
  } else if constexpr (std::is_same_v<Op, SumOp> && (std::is_same_v<In, uint8_t> || std::is_same_v<In, bool>)) {
    unsigned s = __dp4a(v.x, 0x01010101u, 0u);
    s = __dp4a(v.y, 0x01010101u, s);
    s = __dp4a(v.z, 0x01010101u, s);
    s = __dp4a(v.w, 0x01010101u, s);
    return acc + static_cast<Acc>(s);
  } else if constexpr (std::is_same_v<Op, SumOp> && std::is_same_v<In, int16_t>) {
    const int16_t* e = reinterpret_cast<const int16_t*>(&v);
    int s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += e[k];
    return acc + static_cast<Acc>(s);
  } else if constexpr (std::is_same_v<In, __half> && std::is_same_v<Acc, float>) {
    const __half2* e = reinterpret_cast<const __half2*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 f = __half22float2(e[k]);
      acc = combine<Acc, Op>(acc, combine<Acc, Op>(f.x, f.y));
    }
    return acc;
  } else if constexpr (std::is_same_v<In, __nv_bfloat16> && std::is_same_v<Acc, float>) {
    const __nv_bfloat162* e = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 f = __bfloat1622float2(e[k]);
      acc = combine<Acc, Op>(acc, combine<Acc, Op>(f.x, f.y));
    }
    return acc;
  } else {
    constexpr int kVec = 16 / sizeof(In);
    const In* e = reinterpret_cast<const In*>(&v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) acc = combine<Acc, Op>(acc, to_acc<Acc>(e[k]));
    return acc;
  }
}

// Head and tail elements of a VecSplit, handled by the first threads of the grid.
template <class In, class Acc, class Op>
__device__ __forceinline__ Acc accumulate_head_tail(Acc acc, const In* __restrict__ x, int64_t n,
                                                    const VecSplit<In>& sp, int64_t gtid) {
  if (gtid < sp.head) acc = combine<Acc, Op>(acc, to_acc<Acc>(x[gtid]));
  if constexpr (RK_FAULT_IS(DropVecTail)) return acc;  // planted: the tail is never read
  const int64_t tail = RK_FAULT_IS(ReadPastEnd) ? sp.tail + 1 : sp.tail;  // planted: x[n] is summed
  if (gtid < tail) acc = combine<Acc, Op>(acc, to_acc<Acc>(x[n - sp.tail + gtid]));
  return acc;
}

// Per-thread sum of a grid-stride loop: a bounded grid, each thread walks the input with a stride
// of the whole grid, so any n is covered by one wave of blocks and loads stay coalesced.
template <class In, class Acc, class Op>
__device__ __forceinline__ Acc grid_stride_sum(const In* __restrict__ x, int64_t n) {
  Acc v = identity<Acc, Op>();
  using Index = std::conditional_t<RK_FAULT_IS(Index32), int, int64_t>;  // planted: 32-bit indices
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    v = combine<Acc, Op>(v, to_acc<Acc>(x[i]));
  return v;
}

// The last-block ticket of the one-launch finishes (single_pass, the engine's fused finishes through
// last_of_group, exact): thread 0 of each of `blocks` blocks calls it once, after its block's
// results are visible to it: written by thread 0 itself, or by the block's other threads before a
// __syncthreads() that thread 0 has passed. The release RMW is cumulative over what that barrier
// ordered before it (as in cooperative groups' grid sync: a barrier, then one thread's release), so
// no thread needs a __threadfence() of its own. The last block to arrive then takes an acquire fence,
// which orders its reads after every other block's release; true there only. The caller broadcasts
// the answer through shared memory and a barrier (which orders the other threads' reads after thread
// 0's acquire), and the last block resets *counter to 0 when done (kernel boundaries order that for
// the next launch). Every thread's __threadfence() and an acq_rel ticket in every block cost 0.7-1
// us up to 512 blocks and 3.6-4 us at 2048 (H100, NOTES.md session 50).
__device__ __forceinline__ bool arrive_last(unsigned int* counter, unsigned int blocks) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> ticket(*counter);
  const bool last = ticket.fetch_add(1u, cuda::memory_order_release) == blocks - 1;
  if (last) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  return last;
}

// Writes the identity into out (the accumulator of the atomic finishes) and clears a lock word.
template <class Acc, class Op>
__global__ void init_result_kernel(Acc* out, int* lock) {
  if (out) *out = identity<Acc, Op>();
  if (lock) *lock = 0;
}

// Second pass over `count` per-block partials, by one block in a fixed order: thread t sums
// partials t, t+B, t+2B, ... then the block reduces. Any count works (the reference code's
// "at most 1024 partials" assumption is not made). Writes the result converted to Out.
template <class Acc, class Op, class Out>
__global__ void finish_partials_kernel(const Acc* __restrict__ partials, int64_t count, Out* __restrict__ out) {
  __shared__ Acc scratch[32];
  Acc v = identity<Acc, Op>();
  if constexpr (RK_FAULT_IS(FinishDropLast)) --count;  // planted: the last partial is lost
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) v = combine<Acc, Op>(v, partials[i]);
  v = block_reduce<Acc, Op>(v, scratch);
  if (threadIdx.x == 0) *out = from_acc<Out>(v);
}

inline constexpr int kFinishThreads = 1024;

template <class Acc, class Op, class Out = Acc>
inline cudaError_t finish_partials(const Acc* partials, int64_t count, Out* out, cudaStream_t s) {
  finish_partials_kernel<Acc, Op, Out><<<1, kFinishThreads, 0, s>>>(partials, count, out);
  return cudaGetLastError();
}

// The per-block kernels' epilogue: `launch(grid, partials)` enqueues a kernel that writes one
// partial per block; with a single block the partial is the result itself, otherwise
// finish_partials combines them. Workspace: partials_workspace(grid, dtype).
template <class Acc, class Op, class Launch>
inline cudaError_t launch_then_finish(int64_t grid, const ReduceArgs& a, Launch&& launch) {
  auto* out = static_cast<Acc*>(a.out);
  Acc* partials = grid == 1 ? out : static_cast<Acc*>(a.workspace);
  launch(dim3(static_cast<unsigned>(grid)), partials);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || grid == 1) return e;
  return finish_partials<Acc, Op>(partials, grid, out, a.stream);
}

template <class Acc, class Op>
inline cudaError_t init_result(Acc* out, int* lock, cudaStream_t s) {
  init_result_kernel<Acc, Op><<<1, 1, 0, s>>>(out, lock);
  return cudaGetLastError();
}

// Bytes of acc_dtype(d): the gallery's accumulator.
inline size_t acc_bytes(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 ? 4 : 8;
}

// Programmatic dependent launch (sm_90+): a kernel launched with launch_maybe_pdl(pdl=true)
// calls grid_dependency_wait() before touching global memory, and may call
// allow_dependent_launch() once the next kernel can start launching. No-ops before sm_90.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// launch_maybe_pdl with `smem` bytes of dynamic shared memory (the kernel's attribute raised
// beforehand where that is over 48 KiB).
template <class Kernel, class... Args>
inline cudaError_t launch_maybe_pdl_smem(Kernel kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream, bool pdl, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

template <class Kernel, class... Args>
inline cudaError_t launch_maybe_pdl(Kernel kernel, dim3 grid, dim3 block, cudaStream_t stream, bool pdl, Args... args) {
  return launch_maybe_pdl_smem(kernel, grid, block, 0, stream, pdl, args...);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

// Workspace of launch_then_finish: none for one block, else one accumulator per block.
inline size_t partials_workspace(int64_t grid, DType d) { return grid == 1 ? 0 : align256(grid * acc_bytes(d)); }

// Blocks for a bounded grid-stride kernel: enough to fill every SM, never more than the work.
inline int64_t bounded_grid(int64_t n, int block, int num_sms, int blocks_per_sm) {
  int64_t g = ceil_div(n, block);
  int64_t cap = static_cast<int64_t>(num_sms) * blocks_per_sm;
  return g < cap ? (g > 0 ? g : 1) : cap;
}

}  // namespace rk
