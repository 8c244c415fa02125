// The dims engine's CUDA kernels: reductions over dims, at the read ceiling for every shape, with
// bits that depend only on each output's own slice (csrc/engine/plan.h states the order).
//
// Why these kernels: torch's reductions over dims reach 12-66% of the H200's read ceiling on
// common shapes (a block per row for short rows, no 16-byte loads for bfloat16, columns read with
// too few bytes in flight), and their bits depend on the grid. Three kernels serve every plan step:
//  - rows_kernel: the reduced extent is contiguous. A row of N values is cut into lanes of
//    G = 64 bytes (four 16-byte loads per thread, issued before any is used). Short rows get a
//    group of W = pow2ceil(lanes) threads, several rows per 256-thread block (W = 4 for 64 float32
//    values: 64 rows per block); rows of up to 256 lanes get a block; longer rows are split into
//    segments of 256 lanes, one block each, whose partials pairwise_finish_kernel combines.
//  - columns_kernel: the reduced extent R is strided, the kept extent C contiguous. Threads run
//    across C with 16-byte vectors (8 threads read 128 contiguous bytes of a row), each summing a
//    lane of G rows; a block stacks TY lanes and combines them in shared memory. When R is long the
//    lanes spread over many blocks (so a few columns still fill the GPU), and pairwise_finish_kernel
//    combines the block partials.
//  - pairwise_finish_kernel: the fixed-order second phase, continuing the same pairwise tree.
// Every thread-to-data mapping computes exactly the order of plan.h: a lane is summed
// sequentially, lanes combine in a perfect pairwise tree, and a block only ever reduces an aligned
// power-of-two group of lanes, which is a subtree of that tree. So the grid, the block shape and
// the number of rows or columns never change a bit. Misaligned rows and column tails take scalar
// loads that add the same values in the same order.
#include "../engine/plan.h"
#include "../tuning.h"
#include "common.cuh"

namespace rk {
namespace {

constexpr int kThreads = 256;
// The columns kernel issues up to 16 row loads per thread before using any, at 128 registers
// (2 blocks of 256 per SM): benchmarks/tune_dims.py measured this against 4 or 8 loads at 64 or
// 85 registers, 1.16-1.26x the full sum against 1.22-1.36x for float32 (NOTES.md, issue 9).
constexpr int kColumnBatch = 16;

template <class Acc>
__device__ __forceinline__ Acc add(Acc a, Acc b) {
  return SumOp::combine<Acc>(a, b);
}

template <class Acc>
__device__ __forceinline__ Acc ident() {
  return SumOp::identity<Acc>();
}

// The V elements of a 16-byte vector, added to acc in index order. Integer sums are exact in any
// order, so bytes take the dp4a path of the full-reduction kernels.
template <class In, class Acc>
__device__ __forceinline__ Acc add_vec(Acc acc, const uint4& v) {
  if constexpr (std::is_integral_v<In>) {
    return accumulate_vec<In, Acc, SumOp>(acc, v);
  } else {
    constexpr int V = 16 / sizeof(In);
    const In* e = reinterpret_cast<const In*>(&v);
#pragma unroll
    for (int k = 0; k < V; ++k) acc = add(acc, to_acc<Acc>(e[k]));
    return acc;
  }
}

// One element through the read-only path (bool as its byte).
template <class In>
__device__ __forceinline__ In ld1(const In* p) {
  if constexpr (std::is_same_v<In, bool>) {
    return __ldg(reinterpret_cast<const unsigned char*>(p)) != 0;
  } else {
    return __ldg(p);
  }
}

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// Pairwise tree over aligned groups of W consecutive threads of the block (W a power of two, at
// most kThreads): at level s thread t adds thread t+s's value when t % 2s == 0. The group's result
// is valid in its first thread. Every thread of the block must call it (it has barriers when W > 32).
template <class Acc>
__device__ __forceinline__ Acc group_tree(Acc v, int W, Acc* smem) {
  const int tid = threadIdx.x, lane = tid & 31;
  const int w1 = W < 32 ? W : 32;
  for (int s = 1; s < w1; s <<= 1) {
    const Acc o = __shfl_down_sync(0xffffffffu, v, s);
    if ((lane & (2 * s - 1)) == 0) v = add(v, o);
  }
  if (W <= 32) return v;
  const int nw = W >> 5;  // warps per group: 2, 4 or 8
  if (lane == 0) smem[tid >> 5] = v;
  __syncthreads();
  if (tid < 32) {
    Acc w = tid < kThreads / 32 ? smem[tid] : ident<Acc>();
    for (int s = 1; s < nw; s <<= 1) {
      const Acc o = __shfl_down_sync(0xffffffffu, w, s);
      if ((tid & (2 * s - 1)) == 0) w = add(w, o);
    }
    if (tid < kThreads / 32) smem[tid] = w;
  }
  __syncthreads();
  return smem[tid >> 5];
}

// Sum of one lane: cnt (<= G) consecutive values at p, in order. Four 16-byte loads are issued
// before any is used when the lane is whole and aligned; otherwise scalar loads, same order.
template <class In, class Acc>
__device__ __forceinline__ Acc lane_sum(const In* __restrict__ p, int cnt) {
  constexpr int G = 64 / sizeof(In), NV = 4;
  Acc acc = ident<Acc>();
  if constexpr (RK_FAULT_IS(DimsDropLaneTail)) cnt -= cnt < G ? 1 : 0;  // planted: a short lane loses its last value
  if (cnt == G && aligned16(p)) {
    uint4 r[NV];
#pragma unroll
    for (int u = 0; u < NV; ++u) r[u] = __ldg(reinterpret_cast<const uint4*>(p) + u);
#pragma unroll
    for (int u = 0; u < NV; ++u) acc = add_vec<In, Acc>(acc, r[u]);
  } else {
    for (int k = 0; k < cnt; ++k) acc = add(acc, to_acc<Acc>(ld1(p + k)));
  }
  return acc;
}

// K rows of L contiguous values (row stride L). nseg == 1: block b holds rows b*(256/W) ...,
// W threads (lanes) per row, and writes out[row]. nseg > 1 (W == 256): block b holds segment
// b % nseg of row b / nseg and writes partials[row * nseg + segment].
template <class In, class Acc, class Out>
__global__ void __launch_bounds__(kThreads)
    rows_kernel(const In* __restrict__ x, int64_t K, int64_t L, int W, int64_t nseg, Out* __restrict__ out,
                Acc* __restrict__ partials) {
  constexpr int G = 64 / sizeof(In);
  __shared__ Acc smem[kThreads / 32];
  grid_dependency_wait();
  const int tid = threadIdx.x;
  int64_t row, lane, seg = 0;
  if (nseg > 1) {
    row = blockIdx.x / nseg;
    seg = blockIdx.x % nseg;
    lane = seg * kThreads + tid;
  } else {
    row = static_cast<int64_t>(blockIdx.x) * (kThreads / W) + tid / W;
    lane = tid % W;
  }
  const int64_t lanes = (L + G - 1) / G;
  Acc acc = ident<Acc>();
  if (row < K && lane < lanes) {
    const int64_t start = lane * G;
    acc = lane_sum<In, Acc>(x + row * L + start, static_cast<int>(L - start < G ? L - start : G));
  }
  allow_dependent_launch();
  acc = group_tree<Acc>(acc, W, smem);
  if (tid % W == 0 && row < K) {
    if (nseg > 1) {
      partials[row * nseg + seg] = acc;
    } else {
      out[row] = from_acc<Out>(acc);
    }
  }
}

// Adds one lane of `rows` (<= G) rows of V columns at p (row stride C) into acc, row by row.
// Whole aligned vectors: up to 16 rows' 16-byte loads issued before any is used.
template <class In, class Acc, int BATCH>
__device__ __forceinline__ void column_lane(Acc (&acc)[16 / sizeof(In)], const In* __restrict__ p, int64_t C, int rows, int cols,
                                            bool vec) {
  constexpr int G = 64 / sizeof(In), V = 16 / sizeof(In), kBatch = G < BATCH ? G : BATCH;
#pragma unroll
  for (int k = 0; k < V; ++k) acc[k] = ident<Acc>();
  if (vec && cols == V) {
#pragma unroll 1
    for (int r0 = 0; r0 < rows; r0 += kBatch) {
      uint4 v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (r0 + u < rows) v[u] = __ldg(reinterpret_cast<const uint4*>(p + (r0 + u) * C));
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (r0 + u < rows) {
          const In* e = reinterpret_cast<const In*>(&v[u]);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = add(acc[k], to_acc<Acc>(e[k]));
        }
      }
    }
  } else {
    for (int r = 0; r < rows; ++r) {
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (k < cols) acc[k] = add(acc[k], to_acc<Acc>(ld1(p + r * C + k)));
    }
  }
}

// B batches of an R x C matrix (row stride C), reduced over R. Block = TX x TY threads: TX
// threads across C (V columns each, 16 bytes), TY threads down R, each summing LPT consecutive
// lanes of G rows (lane sums combined pairwise in registers: an aligned subtree). The block then
// combines its TY threads pairwise in shared memory. Grid: tiles_x column tiles x tiles_y lane
// tiles x B. Writes out[b*C + c] (tiles_y == 1) or partials[(b*C + c) * tiles_y + tile_y].
template <class In, class Acc, class Out>
__global__ void __launch_bounds__(kThreads, 2)
    columns_kernel(const In* __restrict__ x, int64_t R, int64_t C, int TX, int TY, int LPT, int64_t tiles_x,
                   int64_t tiles_y, Out* __restrict__ out, Acc* __restrict__ partials) {
  constexpr int G = 64 / sizeof(In), V = 16 / sizeof(In), kMaxLpt = 8;
  __shared__ Acc smem[kThreads * V];
  grid_dependency_wait();
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  int64_t bid = blockIdx.x;
  const int64_t tile_x = bid % tiles_x;
  bid /= tiles_x;
  const int64_t tile_y = bid % tiles_y;
  const int64_t b = bid / tiles_y;
  const int64_t c0 = (tile_x * TX + tx) * V;
  const int64_t lane0 = (tile_y * TY + ty) * LPT;
  int cols = c0 < C ? static_cast<int>(C - c0 < V ? C - c0 : V) : 0;
  if constexpr (RK_FAULT_IS(DimsColumnTail)) cols = cols < V ? 0 : cols;  // planted: the last C % V columns read nothing
  const In* base = x + b * R * C + c0;
  const bool vec = aligned16(base) && (C * sizeof(In)) % 16 == 0;
  // Binary-counter stack of pending left subtrees (level k holds 2^k lanes): lane j merges with
  // the pending subtree at every level where j has a 1 bit. The stack lives in local memory; it
  // is touched twice per lane of G rows, next to G loads.
  Acc st[4][V];
  Acc acc[V];
#pragma unroll 1
  for (int j = 0; j < LPT; ++j) {
    const int64_t r0 = (lane0 + j) * G;
    const int rows = r0 < R ? static_cast<int>(R - r0 < G ? R - r0 : G) : 0;
    column_lane<In, Acc, kColumnBatch>(acc, base + r0 * C, C, cols > 0 ? rows : 0, cols, vec);
    int k = 0;
    for (; (j >> k) & 1; ++k) {
#pragma unroll
      for (int q = 0; q < V; ++q) acc[q] = add(st[k][q], acc[q]);
    }
#pragma unroll
    for (int q = 0; q < V; ++q) st[k][q] = acc[q];
  }
  // The thread's subtree of LPT lanes is at level log2(LPT): the last lane's merge left it in acc.
  allow_dependent_launch();
  // Pairwise over the block's TY threads, per column (readers read slots = s mod 2s, writers 0 mod 2s).
  Acc* mine = smem + (ty * TX + tx) * V;
  if (TY > 1) {
#pragma unroll
    for (int k = 0; k < V; ++k) mine[k] = acc[k];
  }
  for (int s = 1; s < TY; s <<= 1) {
    __syncthreads();
    if ((ty & (2 * s - 1)) == 0 && ty + s < TY) {
      const Acc* other = smem + ((ty + s) * TX + tx) * V;
#pragma unroll
      for (int k = 0; k < V; ++k) mine[k] = acc[k] = add(acc[k], other[k]);
    }
  }
  if (ty == 0 && c0 < C) {
    const int n = static_cast<int>(C - c0 < V ? C - c0 : V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (k < n) {
        if (tiles_y == 1) {
          out[b * C + c0 + k] = from_acc<Out>(acc[k]);
        } else {
          partials[(b * C + c0 + k) * tiles_y + tile_y] = acc[k];
        }
      }
    }
  }
}

// Pairwise tree over the P partials p[0, P) of one output, restricted to the aligned chunk
// [begin, begin + g) (g a power of two): partials past P are the identity.
template <class Acc>
__device__ __forceinline__ Acc pairwise_chunk(const Acc* __restrict__ p, int64_t begin, int64_t g, int64_t P) {
  auto ld = [&](int64_t i) { return i < P ? __ldcg(p + i) : ident<Acc>(); };
  if (begin >= P) return ident<Acc>();
  if (g == 1) return ld(begin);
  if (g == 2) return add(ld(begin), ld(begin + 1));
  if (g == 4) return add(add(ld(begin), ld(begin + 1)), add(ld(begin + 2), ld(begin + 3)));
  // Octets reduced in registers, then a binary-counter stack over them: octet i merges with the
  // pending left siblings at every level where i has a 1 bit, which builds the perfect tree.
  Acc stack[40];
  const int64_t octets = g / 8;
  for (int64_t i = 0; i < octets; ++i) {
    const int64_t j = begin + 8 * i;
    Acc a[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) a[u] = ld(j + u);
    Acc v = add(add(add(a[0], a[1]), add(a[2], a[3])), add(add(a[4], a[5]), add(a[6], a[7])));
    int k = 0;
    while ((i >> k) & 1) {
      v = add(stack[k], v);
      ++k;
    }
    stack[k] = v;
  }
  int top = 0;
  while ((int64_t{1} << top) < octets) ++top;
  return stack[top];
}

// Combines P partials per output (layout [nout][P]; partial j covers an aligned power-of-two group
// of lanes, the same size for every j) by the pairwise tree: W threads per output (several
// outputs per block when P is small), thread t takes the aligned chunk [t*g, t*g+g).
template <class Acc, class Out>
__global__ void __launch_bounds__(kThreads)
    pairwise_finish_kernel(const Acc* __restrict__ partials, int64_t nout, int64_t P, int W, int64_t g,
                           Out* __restrict__ out) {
  __shared__ Acc smem[kThreads / 32];
  grid_dependency_wait();
  const int tid = threadIdx.x;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads / W) + tid / W;
  const int t = tid % W;
  int64_t P_used = P;
  if constexpr (RK_FAULT_IS(DimsFinishDropLast)) P_used = P - 1;  // planted: the last partial is lost
  Acc v = ident<Acc>();
  if (o < nout) v = pairwise_chunk<Acc>(partials + o * P, t * g, g, P_used);
  v = group_tree<Acc>(v, W, smem);
  if (t == 0 && o < nout) out[o] = from_acc<Out>(v);
}

struct Shape {
  int W = 1;          // rows: threads per row; finish: threads per output
  int64_t nseg = 1;   // rows: segments per row (blocks per row when > 1)
  int TX = 1, TY = 1, LPT = 1;  // columns block and lanes per thread
  int64_t tiles_x = 1, tiles_y = 1;
  int64_t blocks = 1;
  int64_t partials = 0;  // partials per output (0: written directly)
};

Shape rows_shape(int64_t K, int64_t L, int elem) {
  Shape s;
  const int64_t lanes = (L + lane_elems(elem) - 1) / lane_elems(elem);
  if (lanes <= kThreads) {
    s.W = static_cast<int>(ceil_pow2(lanes));
    s.blocks = (K + kThreads / s.W - 1) / (kThreads / s.W);
  } else {
    s.W = kThreads;
    s.nseg = (lanes + kThreads - 1) / kThreads;
    s.blocks = K * s.nseg;
    s.partials = s.nseg;
  }
  return s;
}

// Tuning harness override of the columns shape (benchmarks/tune_dims.py): 0 = the rule below.
int g_columns_tx0 = 0, g_columns_lpt = 0;

Shape columns_shape(int64_t B, int64_t R, int64_t C, int elem, int num_sms) {
  Shape s;
  const int V = 16 / elem;
  const int64_t cv = (C + V - 1) / V, lanes = (R + lane_elems(elem) - 1) / lane_elems(elem);
  // 8 threads read 128 contiguous bytes of a row and the rest of the block stacks lane groups (up
  // to 32; when there are fewer the block widens across columns). A thread takes the tuning
  // table's lanes (csrc/tuning.h, by element size), capped so that there is still about a wave of
  // resident threads (512 per SM) of work.
  {
    const int64_t wave = static_cast<int64_t>(num_sms > 0 ? num_sms : 132) * 512;
    const int64_t cap = ceil_pow2(std::max<int64_t>(1, cv * lanes * B / wave));
    s.LPT = static_cast<int>(std::min<int64_t>(dims_columns_lanes_per_thread(elem), cap));
    if (g_columns_lpt > 0) s.LPT = g_columns_lpt;
    const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
    const int tx0 = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), g_columns_tx0 > 0 ? g_columns_tx0 : 8));
    s.TY = static_cast<int>(std::min<int64_t>(ceil_pow2(groups), kThreads / tx0));
    s.TX = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), kThreads / s.TY));
  }
  const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
  s.tiles_x = (cv + s.TX - 1) / s.TX;
  s.tiles_y = (groups + s.TY - 1) / s.TY;
  s.blocks = s.tiles_x * s.tiles_y * B;
  s.partials = s.tiles_y > 1 ? s.tiles_y : 0;
  return s;
}

Shape finish_shape(int64_t nout, int64_t P, int64_t* g) {
  Shape s;
  s.W = static_cast<int>(std::min<int64_t>(ceil_pow2(P), kThreads));
  *g = ceil_pow2((P + s.W - 1) / s.W);
  s.blocks = (nout + kThreads / s.W - 1) / (kThreads / s.W);
  return s;
}

Shape step_shape(const DimsStep& a) {
  const int elem = static_cast<int>(dtype_bytes(a.in_dtype));
  return a.kind == StepKind::Rows ? rows_shape(a.outer, a.extent, elem)
                                  : columns_shape(a.outer, a.extent, a.inner, elem, a.num_sms);
}

template <class In, class Acc, class Out>
cudaError_t run_step(const DimsStep& a) {
  const Shape s = step_shape(a);
  const int64_t nout = a.kind == StepKind::Rows ? a.outer : a.outer * a.inner;
  Acc* partials = s.partials ? static_cast<Acc*>(a.workspace) : nullptr;
  if (s.partials && !partials) return cudaErrorInvalidValue;
  const auto* x = static_cast<const In*>(a.in);
  auto* out = static_cast<Out*>(a.out);
  if (s.blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(s.blocks)), block(kThreads);
  const bool pdl = a.pdl && a.cc >= 90;
  cudaError_t e;
  if (a.kind == StepKind::Rows) {
    e = launch_maybe_pdl(rows_kernel<In, Acc, Out>, grid, block, a.stream, pdl, x, a.outer, a.extent, s.W, s.nseg, out,
                         partials);
  } else {
    e = launch_maybe_pdl(columns_kernel<In, Acc, Out>, grid, block, a.stream, pdl, x, a.extent, a.inner, s.TX, s.TY,
                         s.LPT, s.tiles_x, s.tiles_y, out, partials);
  }
  if (e != cudaSuccess || !s.partials) return e;
  int64_t g = 1;
  const Shape f = finish_shape(nout, s.partials, &g);
  if (f.blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
  // The finish always follows our own kernel: programmatic dependent launch hides its launch.
  return launch_maybe_pdl(pairwise_finish_kernel<Acc, Out>, dim3(static_cast<unsigned>(f.blocks)), block, a.stream,
                          a.cc >= 90, static_cast<const Acc*>(partials), nout, s.partials, f.W, g, out);
}

template <class In>
struct InType {
  using T = In;
};

template <class F>
cudaError_t dispatch_in(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(InType<bool>{});
    case DType::UInt8: return f(InType<uint8_t>{});
    case DType::Int8: return f(InType<int8_t>{});
    case DType::Int16: return f(InType<int16_t>{});
    case DType::Int32: return f(InType<int32_t>{});
    case DType::Int64: return f(InType<int64_t>{});
    case DType::Float16: return f(InType<__half>{});
    case DType::BFloat16: return f(InType<__nv_bfloat16>{});
    case DType::Float32: return f(InType<float>{});
    case DType::Float64: return f(InType<double>{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

void dims_set_columns_config(int tx0, int lpt, int* old_tx0, int* old_lpt) {
  *old_tx0 = g_columns_tx0;
  *old_lpt = g_columns_lpt;
  g_columns_tx0 = tx0;
  g_columns_lpt = lpt;
}

bool dims_types_supported(DType in, DType acc, DType out) {
  if (in == DType::Count || acc == DType::Count || out == DType::Count) return false;
  if (!is_floating(in)) return acc == DType::Int64 && out == DType::Int64;
  switch (in) {
    case DType::Float16:
      return acc == DType::Float32 && (out == DType::Float16 || out == DType::Float32);
    case DType::BFloat16:
      return acc == DType::Float32 && (out == DType::BFloat16 || out == DType::Float32);
    case DType::Float32:
      return (acc == DType::Float64 && (out == DType::Float32 || out == DType::Float64)) ||
             (acc == DType::Float32 && (out == DType::Float32 || out == DType::Float16 || out == DType::BFloat16));
    case DType::Float64:
      return acc == DType::Float64 && (out == DType::Float64 || out == DType::Float32);
    default: return false;
  }
}

size_t dims_step_workspace(const DimsStep& a) {
  const Shape s = step_shape(a);
  if (!s.partials) return 0;
  const int64_t nout = a.kind == StepKind::Rows ? a.outer : a.outer * a.inner;
  return align256(static_cast<size_t>(nout * s.partials) * dtype_bytes(a.acc_dtype));
}

cudaError_t dims_step_launch(const DimsStep& a) {
  if (a.outer <= 0 || a.extent <= 0 || a.inner <= 0 || !a.in || !a.out) return cudaErrorInvalidValue;
  if (!dims_types_supported(a.in_dtype, a.acc_dtype, a.out_dtype)) return cudaErrorInvalidValue;
  return dispatch_in(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (std::is_integral_v<In>) {
      return run_step<In, int64_t, int64_t>(a);
    } else if constexpr (std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>) {
      return a.out_dtype == DType::Float32 ? run_step<In, float, float>(a) : run_step<In, float, In>(a);
    } else if constexpr (std::is_same_v<In, float>) {
      if (a.acc_dtype == DType::Float64)
        return a.out_dtype == DType::Float64 ? run_step<float, double, double>(a) : run_step<float, double, float>(a);
      switch (a.out_dtype) {  // a float32 intermediate of a 16-bit float input
        case DType::Float16: return run_step<float, float, __half>(a);
        case DType::BFloat16: return run_step<float, float, __nv_bfloat16>(a);
        default: return run_step<float, float, float>(a);
      }
    } else {
      return a.out_dtype == DType::Float32 ? run_step<double, double, float>(a) : run_step<double, double, double>(a);
    }
  });
}

}  // namespace rk
