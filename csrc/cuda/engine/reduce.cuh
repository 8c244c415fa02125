// The engine's kernels, templated on an operator (engine/reduce_ops.h): the same row, column and
// pairwise-finish kernels serve every reduction, sum included (family_*.cu, one per op family, its
// kernels compiled by input-dtype parts in parts/*.cu).
//
// Why these kernels: torch's reductions over dims reach 12-66% of the H200's read ceiling on
// common shapes (a block per row for short rows, no 16-byte loads for bfloat16, columns read with
// too few bytes in flight), and their bits depend on the grid. Three kernels serve every step:
//  - rows_kernel: the reduced extent is contiguous. A row of N values is cut into lanes of
//    G = 64 bytes (four 16-byte loads per thread, issued before any is used). Short rows get a
//    group of W = pow2ceil(lanes) threads, several rows per 256-thread block (W = 4 for 64 float32
//    values: 64 rows per block); rows of up to 256 lanes get a block; longer rows (a full
//    reduction is one long row) are split into segments of 256 lanes, one block each, whose
//    partials pairwise_finish_kernel combines (or, for an operator's single row of at most 2048
//    segments, the kernel's last block: FusedFinish). An operator may give a thread LPT
//    consecutive lanes (tuning/tuning.h's kOpsRowsTable; a single row of up to 2^14 float32 takes one
//    block), and the batched operators run their block tree in shared memory (tree_smem).
//  - columns_kernel: the reduced extent R is strided, the kept extent C contiguous. Threads run
//    across C with 16-byte vectors (8 threads read 128 contiguous bytes of a row), or one column a
//    thread where vectors would leave too few threads or need realigning (ColumnLoads), each
//    reducing a lane of G rows; a block stacks TY lanes and combines them in shared memory. When R
//    is long the lanes spread over many blocks (so a few columns still fill the GPU), and
//    pairwise_finish_kernel combines the block partials.
//  - pairwise_finish_kernel: the fixed-order second phase, continuing the same pairwise tree.
// A reduction over several dims that do not merge (plan.h's multi-dim order, one run through the
// dims) takes gather_rows_kernel, the rows kernel's one-lane form with its lanes mapped through
// the reduced dims' digits (gather_staged_kernel where the innermost reduced run is shorter than
// two lanes: the block's values staged through shared memory), or the columns kernel's gather form
// (kGather) where the innermost dim is kept.
// Every thread-to-data mapping computes exactly the order of plan.h: a lane is reduced
// sequentially (or, for a batched operator, by its lane function), lanes combine in a perfect
// pairwise tree, and a block only ever reduces an aligned power-of-two group of lanes, which is a
// subtree of that tree. So the grid, the block shape, the number of rows or columns and how a
// thread reads them never change a bit. Misaligned rows, and column vectors in rows of a stride
// that is not a multiple of 16 bytes, take aligned 16-byte loads realigned in registers, and short
// lanes and column tails scalar loads, of the same values reduced in the same order.
#pragma once

#include <cuda/atomic>

#include <cstring>

#include "engine/plan.h"
#include "engine/reduce_ops.h"
#include "tuning/tuning.h"
#include "cuda/block/common.cuh"

namespace rk {
namespace eng {

constexpr int kThreads = 256;
// The columns kernel issues up to 16 row loads per thread before using any, at 128 registers
// (2 blocks of 256 per SM): benchmarks/tune_dims.py measured this against 4 or 8 loads at 64 or
// 85 registers, 1.16-1.26x the full sum against 1.22-1.36x for float32 (NOTES.md, issue 9).
constexpr int kColumnBatch = 16;
// Whether a lane may be reduced as consecutive sub-runs combined in order with the same result: the
// operators that enter values one by one (the same order whatever the cut), and argmax/argmin,
// whose rule compares indices. Not Welford or logsumexp: their lane function sees the whole run.
template <class Op>
struct LaneCutFree : std::bool_constant<!Op::kBatched> {};
template <class T, bool kMax>
struct LaneCutFree<red::ArgExt<T, kMax>> : std::true_type {};
// argmax and argmin: the batched operators whose merge is a compare and select (the rows' stripes
// rule, tuning.h's rows_stripes_pay, tells them from Welford and logsumexp).
template <class Op>
inline constexpr bool kSelectOp = Op::kBatched && LaneCutFree<Op>::value;
// Welford and logsumexp: a lane of G = 64 / sizeof(In) values is one run of their lane function, on
// every kernel and on the CPU (the documented order: lanes of 64 bytes, then the pairwise tree).
template <class Op>
inline constexpr bool kWholeLaneOp = Op::kBatched && !LaneCutFree<Op>::value;
// var, std and their _mean forms (Welford's state).
template <class Op>
struct IsWelford : std::false_type {};
template <class T, class A>
struct IsWelford<red::Welford<T, A>> : std::true_type {};

// How a columns-kernel thread reads its columns (a property of the launch, one kernel each):
//  - Vectors: 16/sizeof(In) columns a thread, 16-byte loads; every row's vector is aligned (x
//    aligned and C x element a multiple of 16 bytes).
//  - Realigned: the same columns a thread, each row's vector read as the two aligned granules
//    holding it and shifted into place in registers.
//  - Scalar: one column a thread, one element load a row. Where the vector threads are too few to
//    fill the GPU (a short R with a narrow or medium C: var_mean bfloat16 (34, 51306) over dim 0
//    had 12,828 threads, about 100 an SM, 0.24x torch) a thread per column gives V times more
//    threads; and its loads need no realignment, so a misaligned row stride costs nothing (the
//    realigned lane keeps 32 registers of granules a batch in flight). The same lanes of G rows in
//    the same order: the same bits as the vector forms.
enum class ColumnLoads { Vectors, Realigned, Scalar };
template <class In, ColumnLoads L>
inline constexpr int kColumnWidth = L == ColumnLoads::Scalar ? 1 : static_cast<int>(16 / sizeof(In));

// Rows a column lane loads at once. A misaligned lane loads two granules a row, so 16 rows took 128
// registers of loads alone (ncu: sum bfloat16 (426, 35939) over dim 0 made 13,488 local-memory spill
// requests, 44.8 us against 18.7 us for its aligned twin); argmax's 16-byte accumulators of 16 int8
// columns are 64 registers more. Those take 8 rows where the lane may be cut (LaneCutFree: the same
// bits). A scalar lane holds one register a row: the cut-free operators load up to 32 rows at once
// (a whole lane of 16-bit values), Welford and logsumexp their whole lane of G rows in one run
// (kWholeLaneOp; until session 63 16 rows, so that a 16-bit lane was two runs of 16 merged, not the
// rows kernel's and the CPU's one run of 32: var_mean bfloat16 (33, 70000) over dim 0 differed from
// the CPU in 4 columns). The vector forms hold 16 rows of 16-byte vectors: a whole lane of 4- and
// 8-byte values, not of 1- and 2-byte ones (kColumnFormHoldsLane: those read one column a thread).
template <class In, class Op, ColumnLoads L>
inline constexpr int kColumnBatchOf =
    L == ColumnLoads::Scalar ? (LaneCutFree<Op>::value ? 2 * kColumnBatch : static_cast<int>(64 / sizeof(In)))  // not cut-free: kWholeLaneOp
    : LaneCutFree<Op>::value && (L == ColumnLoads::Realigned || sizeof(typename Op::Acc) * (16 / sizeof(In)) >= 128) ? 8
                                                                                                         : kColumnBatch;
// Whether the columns step of an operator (whole_lane: kWholeLaneOp) on elem-byte values may read
// vectors of columns: their kColumnBatch rows hold its whole lane (columns_shape reads one column a
// thread otherwise, and the vector kernels are not built).
constexpr bool columns_vectors_hold_lane(bool whole_lane, int elem) { return !whole_lane || 64 / elem <= kColumnBatch; }
template <class In, class Op, ColumnLoads L>
inline constexpr bool kColumnFormHoldsLane = L == ColumnLoads::Scalar || columns_vectors_hold_lane(kWholeLaneOp<Op>, static_cast<int>(sizeof(In)));
// The finish of one output with more than kSplitFinishPartials partials runs in two passes (run_step).
constexpr int64_t kSplitFinishPartials = 2048;
// Lanes per thread of the rows kernel: at most 2^(kMaxRowsLevels - 1).
constexpr int kMaxRowsLevels = 5;
constexpr int kMaxRowsLanes = 1 << (kMaxRowsLevels - 1);

// sum's operator (engine/op_impl.h, OpImpl<Sum>): values converted straight to the accumulator and
// added. Its rows take one lane per thread (rows_shape), and its integer lanes the dp4a path.
template <class Op>
struct IsPlainSum : std::false_type {};
template <class Acc>
struct IsPlainSum<red::MapReduce<Acc, Acc, red::SumM>> : std::true_type {};

// Where each output goes: out0 (and out1 for two-output operators), converted from the result.
template <class Out0, class Out1>
struct Outs {
  Out0* a;
  Out1* b;
  OutMap map;  // engine/plan.h: output i's place in torch's contiguous layout (nd == 0: i)
};

// Output i's element offset under the map: its digits over map.size (i < 2^31), innermost first.
__device__ __forceinline__ int64_t out_offset(const OutMap& m, int64_t i) {
  uint32_t q = static_cast<uint32_t>(i);
  int64_t off = 0;
#pragma unroll
  for (int d = kOutMapDims - 1; d >= 0; --d) {
    if (d < m.nd) {
      const uint32_t n = q;
      q = (__umulhi(n, m.size[d].magic) + n) >> m.size[d].shift;
      off += static_cast<int64_t>(n - q * m.size[d].d) * m.stride[d];
    }
  }
  if constexpr (RK_FAULT_IS(OutMapSwap)) off = m.nd > 1 ? i : off;  // planted: the kernels' order written as is
  return off;
}

template <class Op, class Out0, class Out1>
__device__ __forceinline__ void store(const Outs<Out0, Out1>& o, int64_t i, const typename Op::Acc& acc, const red::Params& p) {
  const auto r = Op::project(acc, p);
  const int64_t j = o.map.nd ? out_offset(o.map, i) : i;
  o.a[j] = from_acc<Out0>(r.a);
  if constexpr (Op::kOutputs == 2) {
    if (o.b) o.b[j] = from_acc<Out1>(r.b);  // var and std have no second output
  }
}

// A struct accumulator as the 32-bit words it is moved in (shuffles, loads and stores of partials),
// padding bytes included: f(k, w) gives word k its new value.
template <class Acc, class F>
__device__ __forceinline__ Acc map_words(const Acc& v, F&& f) {
  static_assert(sizeof(Acc) % 4 == 0, "accumulator must be whole 32-bit words");
  constexpr int W = sizeof(Acc) / 4;
  unsigned w[W];
  memcpy(w, &v, sizeof(Acc));
#pragma unroll
  for (int k = 0; k < W; ++k) w[k] = f(k, w[k]);
  Acc r;
  memcpy(&r, w, sizeof(Acc));
  return r;
}

// __shfl_down_sync for any trivially copyable accumulator: word by word.
template <class Acc>
__device__ __forceinline__ Acc shfl_down(const Acc& v, int s) {
  if constexpr (std::is_arithmetic_v<Acc>) {
    return __shfl_down_sync(0xffffffffu, v, s);
  } else {
    return map_words(v, [&](int, unsigned w) { return __shfl_down_sync(0xffffffffu, w, s); });
  }
}

// An accumulator written by another block of the same kernel: loaded from L2 (ld.global.cg), word
// by word for a struct, so that no stale L1 line is read.
template <class Acc>
__device__ __forceinline__ Acc ldcg_acc(const Acc* p) {
  if constexpr (std::is_arithmetic_v<Acc>) {
    return __ldcg(p);
  } else {
    return map_words(Acc{}, [&](int k, unsigned) { return __ldcg(reinterpret_cast<const unsigned*>(p) + k); });
  }
}

// An accumulator stored for another block or kernel to read with ldcg_acc: whole, word by word for
// a struct, padding included. A struct assignment stores only the fields, and ldcg_acc's word loads
// then read padding bytes that nothing wrote (compute-sanitizer initcheck: argmax's ArgExt<float>
// accumulator, a float and an int64, has 4 of them).
template <class Acc>
__device__ __forceinline__ void st_acc(Acc* p, const Acc& v) {
  if constexpr (std::is_arithmetic_v<Acc>) {
    *p = v;
  } else {
    map_words(v, [&](int k, unsigned w) { return reinterpret_cast<unsigned*>(p)[k] = w; });
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

// The bytes [lo, hi) of the tensor a kernel reads. A misaligned run is read as the aligned 16-byte
// granules that hold it; at the tensor's first or last bytes a granule reaches outside them, into
// bytes of the same allocation that may never have been written (compute-sanitizer initcheck
// flagged them; the values were discarded, so no result moved). Such a run takes scalar loads.
struct Bounds {
  uintptr_t lo, hi;
  // Whether the `granules` aligned granules from the one holding p lie within [lo, hi).
  __device__ __forceinline__ bool holds(const void* p, int granules) const {
    const uintptr_t g = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{15};
    return g >= lo && g + 16 * static_cast<uintptr_t>(granules) <= hi;
  }
  // Whether `vectors` 16-byte vectors at p may be read by 16-byte loads (load_vectors): p aligned,
  // or the vectors + 1 granules holding them within [lo, hi).
  __device__ __forceinline__ bool loadable(const void* p, int vectors) const {
    return aligned16(p) || holds(p, vectors + 1);
  }
};

template <class In>
__device__ __forceinline__ Bounds bounds_of(const In* x, int64_t n) {
  return Bounds{reinterpret_cast<uintptr_t>(x), reinterpret_cast<uintptr_t>(x + n)};
}

// log2 of a power of two. Thread and block indices are split with shifts, masks and 32-bit
// divisions: a `%` by a runtime int was a 30-instruction sequence, and the int64 division of the
// block index 62 instructions, together a third of the Welford rows kernel's instructions (ncu,
// issue 10).
__device__ __forceinline__ int log2_pow2(int w) { return __ffs(w) - 1; }

// Pairwise tree over aligned groups of W consecutive threads of the block (W a power of two, at
// most kThreads): at level s thread t combines thread t+s's value when t % 2s == 0. The group's
// result is valid in its first thread. Every thread of the block must call it (it has barriers
// when W > 32).
template <class Op>
__device__ __forceinline__ typename Op::Acc group_tree(typename Op::Acc v, int W, typename Op::Acc* smem) {
  const int tid = threadIdx.x, lane = tid & 31;
  const int w1 = W < 32 ? W : 32;
  for (int s = 1; s < w1; s <<= 1) {
    const auto o = shfl_down(v, s);
    if ((lane & (2 * s - 1)) == 0) v = Op::combine(v, o);
  }
  if (W <= 32) return v;
  const int nw = W >> 5;  // warps per group: 2, 4 or 8
  if (lane == 0) smem[tid >> 5] = v;
  __syncthreads();
  if (tid < 32) {
    auto w = tid < kThreads / 32 ? smem[tid] : Op::identity();
    for (int s = 1; s < nw; s <<= 1) {
      const auto o = shfl_down(w, s);
      if ((tid & (2 * s - 1)) == 0) w = Op::combine(w, o);
    }
    if (tid < kThreads / 32) smem[tid] = w;
  }
  __syncthreads();
  return smem[tid >> 5];
}

// Operators whose combine is costly (the batched ones: Welford's float64 state and division,
// logsumexp's two exponentials, argmax's index rule): in a shuffle tree every level costs the
// whole warp (the idle half is predicated off, not skipped), so their block trees run in shared
// memory with the active threads packed instead (tree_smem). Measured on the H200, full 2^26
// float32: var_mean 96.2 -> 92.7 us; nanmean (a 16-byte sum and count, cheap to combine) went
// the other way, 70.8 -> 75.4, and keeps the shuffles.
template <class Op>
inline constexpr bool kHeavyCombine = Op::kBatched;

// Shared memory of a block tree: 2 x kThreads accumulators for tree_smem, a slot per warp otherwise.
template <class Op>
inline constexpr int kTreeSlots = kHeavyCombine<Op> ? 2 * kThreads : kThreads / 32;

// The same pairwise tree as group_tree over aligned groups of W >= 64 threads, with the active
// threads packed: at each level thread i < n of a group combines slots 2i and 2i+1 of the previous
// level (ping-pong buffers), so a level of n combines costs n / 32 warps, not W / 32. Levels of more
// than 16 combines synchronise the block; the last five run in the group's first warp. The
// group's result is returned in its first thread (the others get v back). Every thread of the
// block must call it.
template <class Op>
__device__ __forceinline__ typename Op::Acc tree_smem(typename Op::Acc v, int W, typename Op::Acc* smem) {
  using Acc = typename Op::Acc;
  const int tid = threadIdx.x, i = tid & (W - 1), g0 = tid - i;
  Acc* a = smem;
  Acc* b = smem + kThreads;
  a[tid] = v;
  __syncthreads();
  int n = W / 2;
  for (; n > 16; n >>= 1) {
    if (i < n) b[g0 + i] = Op::combine(a[g0 + 2 * i], a[g0 + 2 * i + 1]);
    __syncthreads();
    Acc* t = a;
    a = b;
    b = t;
  }
  if (i < 32) {
    for (; n >= 1; n >>= 1) {
      const int odd = RK_FAULT_IS(TreeSmemOddSlot) && n == 1 ? 0 : 1;  // planted: the root drops its right half
      if (i < n) b[g0 + i] = Op::combine(a[g0 + 2 * i], a[g0 + 2 * i + odd]);
      __syncwarp();
      Acc* t = a;
      a = b;
      b = t;
    }
  }
  return i == 0 ? a[g0] : v;  // only the first thread's is the group's
}

// A block tree over groups of W threads: tree_smem for costly operators in groups of 64 or more,
// group_tree otherwise. The same tree either way, so the same bits.
template <class Op>
__device__ __forceinline__ typename Op::Acc block_tree(typename Op::Acc v, int W, typename Op::Acc* smem) {
  if constexpr (kHeavyCombine<Op>) {
    if (W >= 64) return tree_smem<Op>(v, W, smem);
  }
  return group_tree<Op>(v, W, smem);
}

// The V elements of a 16-byte vector entering acc in index order (i0: the first one's index).
// Integer sums are exact in any order, so bytes take the dp4a path of the full-reduction kernels.
template <class In, class Op>
__device__ __forceinline__ typename Op::Acc enter_vec(typename Op::Acc acc, const uint4& v, int64_t i0, const red::Params& p) {
  if constexpr (IsPlainSum<Op>::value && std::is_integral_v<In>) {
    return accumulate_vec<In, typename Op::Acc, SumOp>(acc, v);
  } else {
    constexpr int V = 16 / sizeof(In);
    const In* e = reinterpret_cast<const In*>(&v);
#pragma unroll
    for (int k = 0; k < V; ++k) acc = Op::enter(acc, to_acc<typename Op::T>(e[k]), i0 + k, p);
    return acc;
  }
}

// One whole lane already in registers (four 16-byte loads), whose first value has index i0.
template <class In, class Op>
__device__ __forceinline__ typename Op::Acc lane_from_regs(const uint4 (&r)[4], int64_t i0, const red::Params& prm) {
  constexpr int G = 64 / sizeof(In);
  using T = typename Op::T;
  const In* e = reinterpret_cast<const In*>(r);
  if constexpr (Op::kBatched) {
    T v[G];
#pragma unroll
    for (int k = 0; k < G; ++k) v[k] = to_acc<T>(e[k]);
    return Op::lane(v, G, i0, prm);
  } else {
    auto acc = Op::identity();
#pragma unroll
    for (int u = 0; u < 4; ++u) acc = enter_vec<In, Op>(acc, r[u], i0 + u * (16 / sizeof(In)), prm);
    return acc;
  }
}

// The 16 NV bytes of values at p (element-aligned, any 16-byte misalignment) as NV vectors. An
// aligned p takes NV 16-byte loads; any other p takes the NV + 1 aligned 16-byte granules that
// hold those bytes (a granule with one byte of the run lies wholly inside its allocation) and
// shifts them down in place, word by word (a word select, and a funnel shift for 16-bit types):
// the same values, in the same order, as scalar loads, for one more load instead of 4 to 16 times
// as many (issue 21: misaligned rows ran at 0.35x torch).
template <class In, int NV>
__device__ __forceinline__ void load_vectors(const In* __restrict__ p, uint4 (&r)[NV]) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const int off = static_cast<int>(a & 15);
  if (off == 0 || RK_FAULT_IS(RowsMisalignedVectors)) {  // planted: misaligned runs read as if aligned
#pragma unroll
    for (int u = 0; u < NV; ++u) r[u] = __ldg(reinterpret_cast<const uint4*>(a - (RK_FAULT_IS(RowsMisalignedVectors) ? off : 0)) + u);
    return;
  }
  const uint4* base = reinterpret_cast<const uint4*>(a - off);
  uint32_t w[4 * NV + 4];
#pragma unroll
  for (int u = 0; u <= NV; ++u) {
    const uint4 v = __ldg(base + u);
    w[4 * u] = v.x, w[4 * u + 1] = v.y, w[4 * u + 2] = v.z, w[4 * u + 3] = v.w;
  }
  // Word j becomes bytes [off + 4j, off + 4j + 4): ascending j reads only words not yet replaced.
  const int q = off >> 2, sh = 8 * (off & 3);
#pragma unroll
  for (int j = 0; j < 4 * NV; ++j) {
    const uint32_t lo = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
    if constexpr (sizeof(In) >= 4) {  // whole words: no byte shift
      w[j] = lo;
    } else {
      const uint32_t hi = q == 0 ? w[j + 1] : q == 1 ? w[j + 2] : q == 2 ? w[j + 3] : w[j + 4];
      w[j] = __funnelshift_r(lo, hi, sh);
    }
  }
#pragma unroll
  for (int u = 0; u < NV; ++u) r[u] = make_uint4(w[4 * u], w[4 * u + 1], w[4 * u + 2], w[4 * u + 3]);
}

// The 16 bytes that start `off` bytes into the 32 of lo, hi (off a multiple of the element size):
// a word select, and a funnel shift for types narrower than a word. No branch.
template <class In>
__device__ __forceinline__ uint4 realign16(const uint4& lo, const uint4& hi, int off) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = off >> 2, sh = 8 * (off & 3);
  uint32_t r[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (sizeof(In) == 8) {
      r[j] = q == 0 ? w[j] : w[j + 2];
    } else {
      const uint32_t a = q == 0 ? w[j] : q == 1 ? w[j + 1] : q == 2 ? w[j + 2] : w[j + 3];
      if constexpr (sizeof(In) == 4) {
        r[j] = a;
      } else {
        const uint32_t b = q == 0 ? w[j + 1] : q == 1 ? w[j + 2] : q == 2 ? w[j + 3] : w[j + 4];
        r[j] = __funnelshift_r(a, b, sh);
      }
    }
  }
  return make_uint4(r[0], r[1], r[2], r[3]);
}

// One lane of cnt (<= G) values, value k given by load(k) (element loads: a short lane; shared
// memory: the staged gather): the same values in the same order as the whole-lane path.
template <class In, class Op, class Load>
__device__ __forceinline__ typename Op::Acc lane_values(int cnt, int64_t i0, const red::Params& prm, const Load& load) {
  constexpr int G = 64 / sizeof(In);
  using T = typename Op::T;
  if constexpr (RK_FAULT_IS(DimsDropLaneTail)) cnt -= cnt < G ? 1 : 0;  // planted: a short lane loses its last value
  if constexpr (Op::kBatched) {
    T v[G];
#pragma unroll
    for (int k = 0; k < G; ++k) v[k] = k < cnt ? to_acc<T>(load(k)) : T(0);
    return Op::lane(v, cnt, i0, prm);
  } else {
    auto acc = Op::identity();
    for (int k = 0; k < cnt; ++k) acc = Op::enter(acc, to_acc<T>(load(k)), i0 + k, prm);
    return acc;
  }
}

// The first cnt (< G) values of a lane already in registers (a short lane read by a whole lane's
// vectors; the values after them are not the lane's), whose first value has index i0: the same
// values in the same order as lane_values.
template <class In, class Op>
__device__ __forceinline__ typename Op::Acc short_lane_from_regs(const uint4 (&r)[4], int cnt, int64_t i0, const red::Params& prm) {
  constexpr int G = 64 / sizeof(In);
  using T = typename Op::T;
  const In* e = reinterpret_cast<const In*>(r);
  if constexpr (RK_FAULT_IS(DimsDropLaneTail)) cnt -= cnt < G ? 1 : 0;  // planted: a short lane loses its last value
  if constexpr (RK_FAULT_IS(RowsShortLaneWhole)) cnt = G;  // planted: the bytes past the row enter too
  if constexpr (Op::kBatched) {
    T v[G];
#pragma unroll
    for (int k = 0; k < G; ++k) v[k] = k < cnt ? to_acc<T>(e[k]) : T(0);
    return Op::lane(v, cnt, i0, prm);
  } else {
    auto acc = Op::identity();
#pragma unroll
    for (int k = 0; k < G; ++k)
      if (k < cnt) acc = Op::enter(acc, to_acc<T>(e[k]), i0 + k, prm);
    return acc;
  }
}

// One lane of cnt (<= G) values at p by scalar loads (a short lane).
template <class In, class Op>
__device__ __forceinline__ typename Op::Acc lane_scalar(const In* __restrict__ p, int cnt, int64_t i0, const red::Params& prm) {
  return lane_values<In, Op>(cnt, i0, prm, [&](int k) { return ld1(p + k); });
}

// One lane: cnt (<= G) consecutive values at p, whose first has index i0. A whole lane's 16-byte
// loads (four, or five when p is misaligned) are issued before any is used. kShort (the rows
// kernel's lanes): a row's short last lane takes the same loads where their granules lie inside
// the tensor's bytes `bx` and prm.short_vectors allows (family.cuh's rule), and enters only its own
// cnt values; whole and short lanes share one load site, so that a warp holding a row's end issues
// all its lanes' loads together and branches only after them. A lane whose granules reach outside
// `bx` (the tensor's last) takes element loads. Measured (benchmarks/rows_fill.py, H100, NOTES.md
// session 54, the same build with short lanes by elements): rows 16 bytes short of 16, 17, 75 and
// 136 lanes 0.75-0.98 of the time for sum float32, mean float16, amax bfloat16 and count_nonzero
// float64 (0.75-0.91 for the first two), and 1.02-1.07x whole-lane rows of the same bytes at 16, 75 and 136 lanes for the first
// three; session 53's form (the short lane's vectors on a branch of their own, 4- and 8-byte values
// only) gained 0-11%: the warp ran its whole lanes' and its short lane's loads one after the other.
// The gather step's lanes (kShort false) keep one branch for whole lanes and element loads for
// short ones (not measured there).
template <class In, class Op, bool kShort = false>
__device__ __forceinline__ typename Op::Acc lane_reduce(const In* __restrict__ p, int cnt, int64_t i0, const red::Params& prm,
                                                        const Bounds& bx) {
  constexpr int G = 64 / sizeof(In);
  if constexpr (kShort) {
    const bool vec = cnt == G ? bx.loadable(p, 4) : prm.short_vectors && bx.holds(p, aligned16(p) ? 4 : 5);
    if (vec) {
      uint4 r[4];
      load_vectors<In, 4>(p, r);
      return cnt == G ? lane_from_regs<In, Op>(r, i0, prm) : short_lane_from_regs<In, Op>(r, cnt, i0, prm);
    }
  } else if (cnt == G && bx.loadable(p, 4)) {
    uint4 r[4];
    load_vectors<In, 4>(p, r);
    return lane_from_regs<In, Op>(r, i0, prm);
  }
  return lane_scalar<In, Op>(p, cnt, i0, prm);
}

// How a thread of the rows kernel walks its LPT lanes (each mode its own instantiation, so that
// one mode's registers never cut another's occupancy):
//   kUp = 1       one lane (LPT == 1); with kStriped, two lanes t and t + W (the shape's stripes == 2);
//   kUp = 2 or 4  LPT == kUp lanes whose 16-byte loads are all issued before any is used (8 or 16
//                 loads: the bytes in flight of a longer lane), merged pairwise in registers;
//   kUp = 0       any LPT, one lane at a time through a register stack (held to 85 registers).
// One lane of a batched operator on 4-byte input is held to 5 blocks per SM (48 registers): the
// float32 Welford kernel took 54 (4 blocks) and is latency-bound (ncu), so occupancy pays more
// than registers. Other widths keep their registers (a byte lane of 64 values would spill). The
// fused instantiation (kFused) takes the same bounds: with none it took 92 registers for that
// kernel (2 blocks per SM) where the plain one holds 48; no time measured moved either way
// (NOTES.md, sessions 49-50).
template <class In, class Op, int kUp>
inline constexpr int kRowsMinBlocks =
    kUp == 1 ? (Op::kBatched && sizeof(In) == 4 ? 5 : 1) : (kUp == 2 ? 4 : (kUp == 4 ? 2 : 3));

// Lanes lane0 .. lane0 + K - 1 of a row of L values at xr (K = 2 or 4) merged pairwise: all 4K
// loads first (4K + 1 when misaligned) when every lane is whole; otherwise lane by lane, lanes
// past the row being the identity, as the perfect tree pads them.
template <class In, class Op, int K>
__device__ __forceinline__ typename Op::Acc lanes_up_front(const In* __restrict__ xr, int64_t L, int64_t lanes, int64_t lane0,
                                                           const red::Params& prm, const Bounds& bx) {
  using Acc = typename Op::Acc;
  constexpr int G = 64 / sizeof(In);
  const int64_t start = lane0 * G;
  Acc a[K];
  if (start + K * G <= L && bx.loadable(xr + start, 4 * K)) {
    uint4 r[4 * K];
    load_vectors<In, 4 * K>(xr + start, r);
#pragma unroll
    for (int j = 0; j < K; ++j) a[j] = lane_from_regs<In, Op>(reinterpret_cast<const uint4(&)[4]>(r[4 * j]), start + j * G, prm);
  } else {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int64_t s = start + j * G;
      a[j] = lane0 + j < lanes ? lane_reduce<In, Op, true>(xr + s, static_cast<int>(L - s < G ? L - s : G), s, prm, bx) : Op::identity();
    }
  }
  if constexpr (RK_FAULT_IS(RowsLanesDropLast)) a[K - 1] = Op::identity();  // planted: the thread's last lane is lost
#pragma unroll
  for (int w = 1; w < K; w <<= 1)
#pragma unroll
    for (int j = 0; j < K; j += 2 * w) a[j] = Op::combine(a[j], a[j + w]);
  return a[0];
}

// Pairwise tree over the P partials p[0, P) of one output, restricted to the aligned chunk
// [begin, begin + g) (g a power of two): partials past P are the identity.
template <class Op>
__device__ __forceinline__ typename Op::Acc pairwise_chunk(const typename Op::Acc* __restrict__ p, int64_t begin, int64_t g, int64_t P) {
  using Acc = typename Op::Acc;
  auto ld = [&](int64_t i) { return i < P ? ldcg_acc(p + i) : Op::identity(); };
  if (begin >= P) return Op::identity();
  if (g == 1) return ld(begin);
  if (g == 2) return Op::combine(ld(begin), ld(begin + 1));
  if (g == 4) return Op::combine(Op::combine(ld(begin), ld(begin + 1)), Op::combine(ld(begin + 2), ld(begin + 3)));
  // Octets reduced in registers, then a binary-counter stack over them: octet i merges with the
  // pending left siblings at every level where i has a 1 bit, which builds the perfect tree.
  Acc stack[40];
  const int64_t octets = g / 8;
  for (int64_t i = 0; i < octets; ++i) {
    const int64_t j = begin + 8 * i;
    Acc a[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) a[u] = ld(j + u);
    Acc v = Op::combine(Op::combine(Op::combine(a[0], a[1]), Op::combine(a[2], a[3])),
                        Op::combine(Op::combine(a[4], a[5]), Op::combine(a[6], a[7])));
    int k = 0;
    while ((i >> k) & 1) {
      v = Op::combine(stack[k], v);
      ++k;
    }
    stack[k] = v;
  }
  int top = 0;
  while ((int64_t{1} << top) < octets) ++top;
  return stack[top];
}

// A split row's or split columns' finish inside the step's own kernel (one launch instead of two,
// which is what a small eager call pays for): the blocks that share outputs (a row's segments, the
// row tiles of one column tile and batch group) form a group; every block posts its partials and
// takes a ticket from the group's counter (the stream's kGroupCounters counters, zero between
// kernels); the last to arrive combines the group's partials by the pairwise finish's own tree, so
// the bits are the two-launch path's, and sets the counter back to 0. run_step fuses small steps
// only (kFusedFinishBytes): a large one keeps pairwise_finish_kernel's parallel finish.
struct FusedFinish {
  unsigned int* counters = nullptr;  // null: the partials go to pairwise_finish_kernel
  int W = 1;                         // a row: its finish's threads and chunks (finish_shape(1, P))
  int64_t g = 1;
};

// The inputs of steps run_step fuses, at most (larger ones take two launches); a fused column
// tile's last block waits on at most kFusedColumnsRounds dependent rounds of partials' loads (about
// a second launch's cost; the finish kernel spreads a larger finish over many blocks).
constexpr int64_t kFusedFinishBytes = int64_t{64} << 20;
constexpr int64_t kFusedColumnsRounds = 2;
// The most blocks of a rows step that finish in their last block. Past it the one launch took
// longer than two in every case measured (H100, graph; benchmarks/fused_pair.py --cases waves and
// bound): one row of float64 sum at 1024 blocks 1.17x, at 2048 1.22x; 4 rows of 512 blocks, amax
// float32 1.19x and var_mean float32 1.38x. Up to it the one launch saves about 3.4 us of host time
// in eager. NOTES.md, sessions 49-50, has the runs and which part of the kernel the time goes to.
constexpr int64_t kFusedRowBlocks = 512;

// The block's ticket on the group's counter after its partials: true in the group's last block
// (block-uniform). The barrier orders the block's partial stores before thread 0's ticket
// (arrive_last: one release a block, one acquire a group; common.cuh says why that suffices); the
// second barrier orders the last block's partials' reads after thread 0's acquire. Contention on
// one counter cost nothing measurable (H100, graph; run 7 of session 50, NOTES.md).
__device__ __forceinline__ bool last_of_group(unsigned int* counter, unsigned int blocks) {
  __shared__ bool is_last;
  __syncthreads();
  // planted: the second-to-last ticket finishes the group
  if (threadIdx.x == 0) is_last = arrive_last(counter, blocks - (RK_FAULT_IS(FusedTicketEarly) ? 1u : 0u));
  __syncthreads();
  return is_last;
}

// Row `row`'s P partials, from the row's last block: W threads take chunks of g and the block tree
// combines them, as pairwise_finish_kernel does for one output. Its own instantiation of the
// one-lane rows kernel (kFused): compiled into every rows kernel it cost registers on the main
// path (ptxas: the float32 Welford kernel spilled 188 bytes inline, 212 as a call), where long
// rows and full reductions of large tensors run.
template <class Op, class Out0, class Out1>
__device__ __forceinline__ void finish_row(const typename Op::Acc* partials, int64_t row, int64_t P, const FusedFinish& f,
                                           const Outs<Out0, Out1>& out, const red::Params& prm, typename Op::Acc* smem) {
  const int tid = threadIdx.x;
  const int t = tid & (f.W - 1);
  const typename Op::Acc* p = partials + row * P;
  // planted (either fault): the last partial is lost
  const int64_t used = RK_FAULT_IS(DimsFinishDropLast) || RK_FAULT_IS(FusedFinishDropLast) ? P - 1 : P;
  auto v = tid < f.W ? pairwise_chunk<Op>(p, t * f.g, f.g, used) : Op::identity();
  v = block_tree<Op>(v, f.W, smem);
  if (tid == 0) {
    store<Op>(out, row, v, prm);
    f.counters[row] = 0;  // ready for the next launch on this stream
  }
}

template <class Op, class Out0, class Out1>
__device__ __forceinline__ void finish_row_in_last_block(const typename Op::Acc* partials, int64_t row, int64_t P, const FusedFinish& f,
                                                         const Outs<Out0, Out1>& out, const red::Params& prm, typename Op::Acc* smem) {
  if (last_of_group(f.counters + row, static_cast<unsigned>(P))) finish_row<Op>(partials, row, P, f, out, prm, smem);
}

// The gather kernels' finish: a call, not inlined (its registers stay off their main path), made by
// the row's last block only (its by-value arguments are copied to local memory by the callers).
template <class Op, class Out0, class Out1>
__device__ __noinline__ void finish_row_call(const typename Op::Acc* partials, int64_t row, int64_t P, FusedFinish f,
                                             Outs<Out0, Out1> out, red::Params prm, typename Op::Acc* smem) {
  finish_row<Op>(partials, row, P, f, out, prm, smem);
}

// A column tile's outputs (batches b0 .. b0 + nb - 1, columns c0 .. c0 + nc - 1 of C), from the
// last of the P row-tile blocks that wrote them: f.W threads an output (a power of two up to 32, 1
// in a block of under a warp) take chunks of f.g partials and combine them by shuffles. That is
// the perfect pairwise tree over pow2ceil(P) leaves which pairwise_finish_kernel builds with its
// own W and g (chunks are aligned subtrees, the group tree combines them in index order): the
// same combines, the same bits. The caller took the group's ticket (last_of_group, inline: a
// call's by-value arguments, Outs with its map among them, are copied to local memory in every
// thread that makes it, so only the last block calls).
template <class Op, class Out0, class Out1>
__device__ __noinline__ void finish_columns_call(const typename Op::Acc* partials, int64_t P, FusedFinish f, unsigned int* counter,
                                                 int64_t b0, int nb, int64_t c0, int nc, int64_t C, Outs<Out0, Out1> out, red::Params prm) {
  const int64_t used = RK_FAULT_IS(FusedFinishDropLast) ? P - 1 : P;  // planted: the last row tile's partial is lost
  const int lw = log2_pow2(f.W), per = static_cast<int>(blockDim.x) >> lw, n = nb * nc;
  const int t = threadIdx.x & (f.W - 1);
  for (int base = 0; base < n; base += per) {  // the same trip count in every thread (the shuffles)
    const int i = base + (static_cast<int>(threadIdx.x) >> lw);
    const int64_t o = i < n ? (b0 + i / nc) * C + c0 + i % nc : 0;
    auto v = i < n ? pairwise_chunk<Op>(partials + o * P, t * f.g, f.g, used) : Op::identity();
    if (f.W > 1) v = group_tree<Op>(v, f.W, nullptr);  // f.W <= 32: shuffles only, no shared memory
    if (t == 0 && i < n) store<Op>(out, o, v, prm);
  }
  if (threadIdx.x == 0) *counter = 0;  // ready for the next launch on this stream
}

// The rows kernels' thread map (rows_kernel writes it out, gather_rows_kernel calls it): nseg == 1:
// block b holds rows b*(256/W) ..., W threads a row; nseg > 1 (W == 256): block b holds segment
// b % nseg of row b / nseg. t: the thread's index in its row (its first lane's group).
struct RowsPos {
  int64_t row, t, seg;
};
__device__ __forceinline__ RowsPos rows_pos(int64_t K, int W, int64_t nseg) {
  const int tid = threadIdx.x;
  if (nseg > 1) {  // nseg < 2^31: the grid is at most INT32_MAX blocks
    const unsigned ns = static_cast<unsigned>(nseg), r = K == 1 ? 0u : blockIdx.x / ns;
    const int64_t seg = blockIdx.x - r * ns;
    return {r, seg * kThreads + tid, seg};
  }
  const int lw = log2_pow2(W);
  return {static_cast<int64_t>(blockIdx.x) * (kThreads >> lw) + (tid >> lw), tid & (W - 1), 0};
}

// A row's result, from its first thread after the block tree: the output, or its segment's partial.
template <class Op, class Out0, class Out1>
__device__ __forceinline__ void rows_store(const RowsPos& p, int64_t K, int W, int64_t nseg, const typename Op::Acc& acc,
                                           const Outs<Out0, Out1>& out, typename Op::Acc* partials, const red::Params& prm) {
  if ((threadIdx.x & (W - 1)) == 0 && p.row < K) {
    if (nseg > 1) {
      st_acc(partials + p.row * nseg + p.seg, acc);
    } else {
      store<Op>(out, p.row, acc, prm);
    }
  }
}

// K rows of L contiguous values (row stride L); each thread reduces LPT consecutive lanes (a
// power of two: an aligned subtree, merged in registers; kUp above). nseg == 1: block b holds rows
// b*(256/W) ..., W threads per row, and writes out[row]. nseg > 1 (W == 256): block b holds
// segment b % nseg of row b / nseg (256 * LPT lanes) and writes partials[row * nseg + segment].
// kStriped (kUp == 1, nseg == 1, the shape's stripes == 2): two stripes, below. Its own instantiation: compiled
// into the one-lane kernel, the second stripe's state and tree cost that kernel registers on the
// path of long and split rows (ptxas: the float32 Welford kernel's spill stack 88 -> 152 bytes at
// its 48 registers; the H200 sweep's var_mean float32 (104, 1255, 1473) over (1, 2) 260 -> 455 us).
template <class In, class Op, class Out0, class Out1, int kUp, bool kFused = false, bool kStriped = false>
__global__ void __launch_bounds__(kThreads, kRowsMinBlocks<In, Op, kUp>)
    rows_kernel(const In* __restrict__ x, int64_t K, int64_t L, int W, int LPT, int64_t nseg, Outs<Out0, Out1> out,
                typename Op::Acc* __restrict__ partials, red::Params prm, FusedFinish fused) {
  static_assert(!kStriped || (kUp == 1 && !kFused), "two stripes are a form of the unfused one-lane kernel");
  using Acc = typename Op::Acc;
  constexpr int G = 64 / sizeof(In);
  __shared__ Acc smem[kTreeSlots<Op>];
  grid_dependency_wait();
  // rows_pos's map, written out: factored into it, ptxas spilled the Welford rows kernels
  // differently (bfloat16: 392/516 -> 376/536 bytes), which no run has timed.
  const int tid = threadIdx.x;
  int64_t row, t, seg = 0;
  if (nseg > 1) {  // nseg < 2^31: the grid is at most INT32_MAX blocks
    const unsigned ns = static_cast<unsigned>(nseg), r = K == 1 ? 0u : blockIdx.x / ns;
    row = r;
    seg = blockIdx.x - r * ns;
    t = seg * kThreads + tid;
  } else {
    const int lw = log2_pow2(W);
    row = static_cast<int64_t>(blockIdx.x) * (kThreads >> lw) + (tid >> lw);
    t = tid & (W - 1);
  }
  const int64_t lanes = (L + G - 1) / G;
  Acc acc = Op::identity();
  // kStriped (nseg == 1): the row's lanes are pow2ceil(lanes) / 2 = W threads' two
  // halves, thread t holding lane t and lane t + W (acc2), so that no thread of a row of just over
  // a power of two lanes idles. Each half's tree runs over the W threads, and the root combines the
  // two halves in the row's first thread: the perfect tree's own combines, so the same bits.
  // Where: rows_step_shape (shapes.cu) by rows_stripes_pay (tuning.h).
  Acc acc2 = Op::identity();
  if (row < K) {
    const In* xr = x + row * L;
    const Bounds bx = bounds_of(x, K * L);
    if constexpr (kUp == 1) {
      // One copy of the lane's code for both stripes (inlined twice, the sum float32 kernel took 56
      // registers against 48, 4 blocks an SM against 5).
      constexpr int kStripes = kStriped ? 2 : 1;
#pragma unroll 1
      for (int h = 0; h < kStripes; ++h) {
        const int64_t l = t + h * W;
        const Acc a = l < lanes ? lane_reduce<In, Op, true>(xr + l * G, static_cast<int>(L - l * G < G ? L - l * G : G), l * G, prm, bx)
                                : Op::identity();
        if (h == 0) {
          acc = a;
        } else {
          acc2 = a;
        }
      }
    } else if constexpr (kUp > 1) {
      if (t * kUp < lanes) acc = lanes_up_front<In, Op, kUp>(xr, L, lanes, t * kUp, prm, bx);
    } else {
      // LPT consecutive lanes merged by a binary-counter stack of pending left subtrees (level k
      // holds 2^k lanes): lane j merges with the pending subtree at every level where j has a 1
      // bit, which builds the perfect tree. The stack is indexed by unrolled constants only, so it
      // stays in registers; after the last lane the thread's subtree is in acc. Lanes past the
      // row are the identity. (Prefetching the next lane was measured slower: its registers cost
      // more occupancy than its overlap gained.)
      Acc st[kMaxRowsLevels];
#pragma unroll 1
      for (int j = 0; j < LPT; ++j) {
        const int64_t lane = t * LPT + j, start = lane * G;
        acc = lane < lanes ? lane_reduce<In, Op, true>(xr + start, static_cast<int>(L - start < G ? L - start : G), start, prm, bx)
                           : Op::identity();
        if constexpr (RK_FAULT_IS(RowsLanesDropLast)) {
          if (j == LPT - 1) acc = Op::identity();  // planted: the thread's last lane is lost
        }
        bool placed = false;
#pragma unroll
        for (int k = 0; k < kMaxRowsLevels; ++k) {
          if (!placed) {
            if ((j >> k) & 1) {
              acc = Op::combine(st[k], acc);
            } else {
              st[k] = acc;
              placed = true;
            }
          }
        }
      }
    }
  }
  allow_dependent_launch();
  acc = block_tree<Op>(acc, W, smem);
  if constexpr (kStriped) {
    __syncthreads();  // block_tree's shared memory, read by the first tree, is written by the second
    acc2 = block_tree<Op>(acc2, W, smem);
    if constexpr (!RK_FAULT_IS(RowsStripeRoot)) acc = Op::combine(acc, acc2);  // planted: the second half dropped
  }
  rows_store<Op>(RowsPos{row, t, seg}, K, W, nseg, acc, out, partials, prm);
  if constexpr (kFused) finish_row_in_last_block<Op>(partials, row, nseg, fused, out, prm, smem);  // nseg > 1, fused.counters set
}

// argmax and argmin over rows (kSelectOp operators on 2-, 4- and 8-byte values). Their result, the
// first index of the extreme (NaN first), does not depend on the order in which the values meet
// (ArgExt::better is a strict order on (value, index)), so a row needs no perfect tree and is read
// as a sum over a warp: W threads a row (W <= 32, several rows a block, no block barrier), thread t
// visiting lanes t, t + W, t + 2W, ... two whole lanes at a time with their eight 16-byte loads
// issued first, each lane merged as it comes; then the row's shuffles. Why: the tree kernels gave
// such a row one lane a thread on up to 256 threads, whose warps waited at the block's barriers
// (ncu, H200, argmax float64 rows of 146 lanes: DRAM 31% busy), or 8 consecutive lanes a thread,
// walked one at a time on a warp whose threads mostly idled. Where: rows_select_pays (tuning.h).
template <class In, class Op, class Out0, class Out1>
__global__ void __launch_bounds__(kThreads, sizeof(In) == 2 ? 3 : 4)
    select_rows_kernel(const In* __restrict__ x, int64_t K, int64_t L, int W, Outs<Out0, Out1> out, red::Params prm) {
  static_assert(kSelectOp<Op> && sizeof(In) >= 2, "an order-free operator on 2-, 4- or 8-byte values");
  using Acc = typename Op::Acc;
  constexpr int G = 64 / sizeof(In);
  grid_dependency_wait();
  const int tid = threadIdx.x, lw = log2_pow2(W);
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads >> lw) + (tid >> lw);
  const int t = tid & (W - 1);
  Acc acc = Op::identity();
  if (row < K) {
    const In* xr = x + row * L;
    const Bounds bx = bounds_of(x, K * L);
    const int64_t whole = L / G, lanes = (L + G - 1) / G, step = int64_t{W} * G;
    int64_t l = t;
    for (; l + W < whole; l += 2 * W) {  // lanes l and l + W, both whole
      const In* p0 = xr + l * G;
      const In* p1 = p0 + step;
      Acc a0, a1;
      if (bx.loadable(p0, 4) && bx.loadable(p1, 4)) {
        uint4 r0[4], r1[4];
        load_vectors<In, 4>(p0, r0);
        load_vectors<In, 4>(p1, r1);
        a0 = lane_from_regs<In, Op>(r0, l * G, prm);
        a1 = lane_from_regs<In, Op>(r1, l * G + step, prm);
      } else {
        a0 = lane_scalar<In, Op>(p0, G, l * G, prm);
        a1 = lane_scalar<In, Op>(p1, G, l * G + step, prm);
      }
      acc = Op::combine(acc, a0);
      if constexpr (!RK_FAULT_IS(RowsSelectPair)) acc = Op::combine(acc, a1);  // planted: a pair's second lane is lost
    }
    for (; l < lanes; l += W)  // at most one whole lane, then the short one
      acc = Op::combine(acc, lane_reduce<In, Op, true>(xr + l * G, static_cast<int>(L - l * G < G ? L - l * G : G), l * G, prm, bx));
  }
  allow_dependent_launch();
  acc = group_tree<Op>(acc, W, nullptr);  // W <= 32: shuffles alone, no shared memory
  if (t == 0 && row < K) store<Op>(out, row, acc, prm);
}

// n / d.d by the Divider's multiply-high (engine/plan.h): n < 2^31.
__device__ __forceinline__ uint32_t div_by(const Divider& d, uint32_t n) { return (__umulhi(n, d.magic) + n) >> d.shift; }

// Gather (engine/plan.h): the element offset of index i (< 2^31) of a row-major box of n dims
// (sizes as Dividers, strides; the innermost last), and (inner) i's digit in the innermost dim.
__device__ __forceinline__ int64_t gather_offset(const Divider* size, const int64_t* stride, int n, uint32_t i, uint32_t* inner) {
  int64_t off = 0;
#pragma unroll
  for (int d = kGatherDims - 1; d >= 0; --d) {
    if (d < n) {
      const uint32_t q = div_by(size[d], i);
      const uint32_t r = i - q * size[d].d;
      off += static_cast<int64_t>(r) * stride[d];
      if (d == n - 1) *inner = r;
      i = q;
    }
  }
  return off;
}

// A lane that crosses from one run of the innermost reduced dim into the next: its two contiguous
// pieces, p1[0, len1) and then p2[len1, cnt), every element load issued before any is used. Not
// inlined: its G values' registers, inlined, cost the whole kernel occupancy (16-bit sums over
// runs of 2-300 lanes ran 1.1-1.6x slower, H100, session 40), and few lanes cross.
template <class In, class Op>
__device__ __noinline__ typename Op::Acc crossing_lane(const In* __restrict__ p1, const In* __restrict__ p2, int len1, int cnt, uint32_t k0,
                                                       red::Params prm) {
  constexpr int G = 64 / sizeof(In);
  using T = typename Op::T;
  In e[G];
#pragma unroll
  for (int k = 0; k < G; ++k) e[k] = k < cnt ? ld1((k < len1 ? p1 : p2) + k) : In{};
  if constexpr (Op::kBatched) {
    T v[G];
#pragma unroll
    for (int k = 0; k < G; ++k) v[k] = k < cnt ? to_acc<T>(e[k]) : T(0);
    return Op::lane(v, cnt, k0, prm);
  } else {
    auto acc = Op::identity();
#pragma unroll
    for (int k = 0; k < G; ++k)
      if (k < cnt) acc = Op::enter(acc, to_acc<T>(e[k]), k0 + k, prm);
    return acc;
  }
}

// Values k0 .. k0 + cnt - 1 (cnt <= G) of a gathered run whose row starts at xr: the same lane as
// a row's (lane_reduce) of the same values. The innermost reduced dim has stride 1 and at least G
// values (run_step checks), so a lane lies in one run, contiguous memory, and takes lane_reduce
// itself (16-byte loads, realigned where misaligned), or crosses once into the next run.
template <class In, class Op>
__device__ __forceinline__ typename Op::Acc gather_lane(const In* __restrict__ xr, const Gather& g, uint32_t k0, int cnt,
                                                        const red::Params& prm, const Bounds& bx) {
  uint32_t j = 0, unused;
  const int64_t off = gather_offset(g.rsize, g.rstride, g.nr, k0, &j);
  const uint32_t n0 = g.rsize[g.nr - 1].d;
  if (j + cnt <= n0) return lane_reduce<In, Op>(xr + off, cnt, k0, prm, bx);
  // planted: a crossing lane reads one value past its run
  const int len1 = static_cast<int>(n0 - j) + (RK_FAULT_IS(GatherCarry) ? 1 : 0);
  const In* p2 = xr + gather_offset(g.rsize, g.rstride, g.nr, k0 + (n0 - j), &unused) - len1;
  return crossing_lane<In, Op>(xr + off, p2, len1, cnt, k0, prm);
}

// A plan of several steps as one (engine/plan.h, Gather): g.K rows of g.N values, each row's values
// read through the dims in the multi-dim order, with no copy of the input. The rows kernel's
// one-lane form otherwise (its shape, its block tree and split rows' partials): the bits of a rows
// step over a copy with the reduced dims last in that order, which is what the CPU computes.
// span: the input's elements (its bytes bound the realigned loads).
// kFused: split rows finished by each row's last block (FusedFinish); a separate instantiation, as
// the rows kernel's, since a kernel that holds the finish call takes the call's registers too.
template <class In, class Op, class Out0, class Out1, bool kFused = false>
__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const In* __restrict__ x, Gather g, int64_t span, int W, int64_t nseg, Outs<Out0, Out1> out,
                       typename Op::Acc* __restrict__ partials, red::Params prm, FusedFinish fused) {
  using Acc = typename Op::Acc;
  constexpr int G = 64 / sizeof(In);
  __shared__ Acc smem[kTreeSlots<Op>];
  grid_dependency_wait();
  const int64_t K = g.K, L = g.N;
  const RowsPos pos = rows_pos(K, W, nseg);
  const int64_t row = pos.row, t = pos.t;
  const int64_t lanes = (L + G - 1) / G;
  Acc acc = Op::identity();
  if (row < K && t < lanes) {
    uint32_t unused;
    const In* xr = x + gather_offset(g.ksize, g.kstride, g.nk, static_cast<uint32_t>(row), &unused);
    acc = gather_lane<In, Op>(xr, g, static_cast<uint32_t>(t * G), static_cast<int>(L - t * G < G ? L - t * G : G), prm, bounds_of(x, span));
  }
  allow_dependent_launch();
  acc = block_tree<Op>(acc, W, smem);
  rows_store<Op>(pos, K, W, nseg, acc, out, partials, prm);
  if constexpr (kFused) {
    if (nseg > 1 && last_of_group(fused.counters + pos.row, static_cast<unsigned>(nseg)))
      finish_row_call<Op>(partials, pos.row, nseg, fused, out, prm, smem);
  }
}

// The element types' bits, for copies that do not look at values.
template <int B> struct RawOf;
template <> struct RawOf<1> { using T = unsigned char; };
template <> struct RawOf<2> { using T = unsigned short; };
template <> struct RawOf<4> { using T = unsigned int; };
template <> struct RawOf<8> { using T = unsigned long long; };

// A lane's 64 bytes in shared memory and 16 of padding: a quarter warp's 16-byte loads of 8
// consecutive slots (80 bytes apart) fall in distinct banks.
constexpr int kStageSlotBytes = 80;
// Element loads a thread issues before it stores any into the stage: a lane's G, at most 16 (a block
// stages 256 lanes: float64 in one round of 8, float32 one of 16, 16-bit types 2, bytes 4).
template <class In>
inline constexpr int kStageLoads = 64 / sizeof(In) < 16 ? 64 / sizeof(In) : 16;

// Runs a block may stage: 256 lanes of 64 bytes in runs of kGatherStagedMinRunBytes (tuning.h) or
// more, and a partial run at either end of a segment.
inline constexpr int kStageRuns = kThreads * 64 / kGatherStagedMinRunBytes + 2;

// Why it exists: a gathered row whose innermost reduced run is shorter than kGatherDirectMinLanes
// lanes (tuning.h) has most of its lanes crossing from one run into the next, read by elements a
// thread at a time (each warp load touching 32 lines); until session 44 such plans were copied
// with the reduced dims last instead, 3x the bytes (issue 21's sweep: sum float32 (12, 6, 31, 58,
// 25) over (2, 4), a run of 25, at 0.51x torch; amax int8 over runs of 26 bytes at 12% of the read
// ceiling). Here a block first tabulates its runs (each run's offset in the input and its first
// value's place in the stage: one digit split a run), then loads its lanes' values (its rows, or
// its 256-lane segment of a row) in position order, consecutive threads on consecutive positions,
// so that a warp reads whole runs at consecutive addresses, up to 16 loads in flight a thread, and
// stores each at its lane's slot in shared memory; then every thread reduces its slot with the
// rows path's lane function (lane_from_regs, or lane_values for a row's short last lane), and the
// block tree and partials are gather_rows_kernel's. The same lanes, the same values in the same
// order: the copy's bits. Per value: one multiply-high division (its run), a table read, a load
// and a shared store (the first version split every value's digits through gather_offset: about
// 100 instructions a value, slower than the copy it replaced; NOTES.md, session 44).
// runs_div: a Divider of the runs in a row (g.N / run) when nseg == 1 (a block's rows are whole).
// kFused: as gather_rows_kernel's.
template <class In, class Op, class Out0, class Out1, bool kFused = false>
__global__ void __launch_bounds__(kThreads)
    gather_staged_kernel(const In* __restrict__ x, Gather g, Divider runs_div, int W, int64_t nseg, Outs<Out0, Out1> out,
                         typename Op::Acc* __restrict__ partials, red::Params prm, FusedFinish fused) {
  using Acc = typename Op::Acc;
  using Raw = typename RawOf<sizeof(In)>::T;
  constexpr int G = 64 / sizeof(In), kLogG = G == 8 ? 3 : G == 16 ? 4 : G == 32 ? 5 : 6;
  static_assert((1 << kLogG) == G, "a lane of 64 bytes holds a power of two of values");
  __shared__ alignas(16) unsigned char stage[kThreads * kStageSlotBytes];
  __shared__ int64_t row_base[kThreads], run_src[kStageRuns];
  __shared__ int run_q0[kStageRuns];
  __shared__ Acc smem[kTreeSlots<Op>];
  grid_dependency_wait();
  const int tid = threadIdx.x;
  const int64_t K = g.K, L = g.N;
  const RowsPos pos = rows_pos(K, W, nseg);
  const int lw = log2_pow2(W);
  // The block's values: nseg == 1, rows row0 .. row0 + nrows - 1, each whole (W lanes of G cover
  // it); else positions P0 .. P0 + VL - 1 of row pos.row (its segment's 256 lanes).
  const int64_t row0 = nseg > 1 ? pos.row : static_cast<int64_t>(blockIdx.x) * (kThreads >> lw);
  const int64_t P0 = nseg > 1 ? pos.seg * int64_t{kThreads} * G : 0;
  const int64_t VL = nseg > 1 ? (L - P0 < int64_t{kThreads} * G ? L - P0 : int64_t{kThreads} * G) : L;
  const int64_t rows_left = K - row0;
  const int nrows = nseg > 1 ? 1 : static_cast<int>(rows_left < (kThreads >> lw) ? rows_left : (kThreads >> lw));
  if (tid < nrows) {
    uint32_t unused;
    row_base[tid] = gather_offset(g.ksize, g.kstride, g.nk, static_cast<uint32_t>(row0 + tid), &unused);
  }
  __syncthreads();
  // The block's runs of the innermost reduced dim (stride 1, n0 values): run j's offset and the
  // stage place (row r's lanes from r * W * G) of its value 0. nseg == 1: the rows' runs in order
  // (a row is runs_div.d whole runs); else the segment's, from run m0 (which may begin before P0).
  const Divider run = g.rsize[g.nr - 1];
  const uint32_t n0 = run.d, vl = static_cast<uint32_t>(VL), p0 = static_cast<uint32_t>(P0);
  const uint32_t m0 = nseg > 1 ? div_by(run, p0) : 0u;
  const uint32_t nruns = nseg > 1 ? div_by(run, p0 + vl - 1) - m0 + 1 : static_cast<uint32_t>(nrows) * runs_div.d;
  for (uint32_t j = tid; j < nruns; j += kThreads) {
    const uint32_t r = nseg > 1 ? 0u : div_by(runs_div, j), m = nseg > 1 ? m0 + j : j - r * runs_div.d;
    uint32_t unused;
    run_src[j] = row_base[r] + gather_offset(g.rsize, g.rstride, g.nr - 1, m, &unused);
    run_q0[j] = static_cast<int>((r << lw) * G + m * n0) - static_cast<int>(p0);
  }
  __syncthreads();
  const uint32_t total = nseg > 1 ? vl : static_cast<uint32_t>(nrows) * vl;
  const Raw* xr = reinterpret_cast<const Raw*>(x);
  for (uint32_t s0 = 0; s0 < total; s0 += kThreads * kStageLoads<In>) {
    Raw v[kStageLoads<In>];
    int q[kStageLoads<In>];
#pragma unroll
    for (int u = 0; u < kStageLoads<In>; ++u) {
      const uint32_t s = s0 + u * kThreads + tid;
      if (s < total) {
        const uint32_t k = p0 + s, m = div_by(run, k), j = m - m0;  // value k of the block: run m, place e in it
        uint32_t e = k - m * n0;
        q[u] = run_q0[j] + static_cast<int>(e);
        if (RK_FAULT_IS(GatherStagedRun) && e + 1 == n0) --e;  // planted: a run's last value read from the place before it
        v[u] = __ldg(xr + run_src[j] + e);
      }
    }
#pragma unroll
    for (int u = 0; u < kStageLoads<In>; ++u)
      if (s0 + u * kThreads + tid < total)
        *reinterpret_cast<Raw*>(stage + (q[u] >> kLogG) * kStageSlotBytes + (q[u] & (G - 1)) * static_cast<int>(sizeof(In))) = v[u];
  }
  __syncthreads();
  const int64_t row = pos.row, t = pos.t;  // this thread's lane: slot tid of the stage
  const int64_t lanes = (L + G - 1) / G;
  Acc acc = Op::identity();
  if (row < K && t < lanes) {
    const unsigned char* slot = stage + tid * kStageSlotBytes;
    const int cnt = static_cast<int>(L - t * G < G ? L - t * G : G);
    if (cnt == G) {
      uint4 r[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) r[u] = reinterpret_cast<const uint4*>(slot)[u];
      acc = lane_from_regs<In, Op>(r, t * G, prm);
    } else {
      acc = lane_values<In, Op>(cnt, t * G, prm, [&](int k) {
        if constexpr (std::is_same_v<In, bool>) {
          return slot[k] != 0;
        } else {
          return reinterpret_cast<const In*>(slot)[k];
        }
      });
    }
  }
  allow_dependent_launch();
  acc = block_tree<Op>(acc, W, smem);
  rows_store<Op>(pos, K, W, nseg, acc, out, partials, prm);
  if constexpr (kFused) {
    if (nseg > 1 && last_of_group(fused.counters + pos.row, static_cast<unsigned>(nseg)))
      finish_row_call<Op>(partials, pos.row, nseg, fused, out, prm, smem);
  }
}

// One lane of `rows` (<= G) rows of V = kColumnWidth<In, L> columns at p (row stride C, first row
// index r0) entering acc[V], row by row. Vectors and Realigned (V columns, 16 bytes): up to 16 rows'
// 16-byte loads issued before any is used; Realigned reads each row's vector as the two aligned
// granules holding it and shifts it into place in registers (realign16), not by V scalar loads
// (0.07-0.3x torch on such columns, issue 21's sweep). Columns past `cols` (the tile's last vector)
// take scalar loads of the same values (read as zero bits past `cols`; their accumulators are never
// stored), and so does a lane whose first or last granules reach outside the tensor's bytes
// (`inside` false: Bounds). Scalar (one column): the batch's element loads. Same values, same
// order: the same bits in every form.
template <class In, class Op, int BATCH, ColumnLoads L>
__device__ __forceinline__ void column_lane(typename Op::Acc (&acc)[kColumnWidth<In, L>], const In* __restrict__ p, int64_t C,
                                            int rows, int cols, int64_t r0, const red::Params& prm, bool inside, bool init = true) {
  static_assert(L == ColumnLoads::Vectors || L == ColumnLoads::Realigned || L == ColumnLoads::Scalar,
                "a new ColumnLoads form needs its loads here");
  constexpr int G = 64 / sizeof(In), V = kColumnWidth<In, L>, kBatch = G < BATCH ? G : BATCH;
  static_assert(!kWholeLaneOp<Op> || kBatch == G, "Welford's and logsumexp's column lane is one run of its G rows");
  using T = typename Op::T;
  // init false (a gathered lane's later piece, cut-free operators only): the rows continue acc.
  if (init) {
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = Op::identity();
  }
  // A batch's values entered: K rows (cnt of them read) of V columns, each row's V values (16-byte
  // vectors, or one element) in v. The same arithmetic for any K >= cnt (every lane function is
  // sequential over its first cnt values).
  // q (Scalar): the batch's first row, whose cnt rows Welford's rare slow path reads again rather
  // than hold the values past their shift (ptxas -v, sm_90, the 3-blocks build: bfloat16 and float16
  // 132 -> 72 bytes of spill stores, float32 20 -> 8; NOTES.md, session 65). The vector forms keep
  // their values (reading them again there took float32's 184 bytes of spills to 476).
  const auto consume = [&](auto& v, int cnt, int b0, const In* q) {
    constexpr int K = static_cast<int>(sizeof(v) / sizeof(v[0]));
    if constexpr (Op::kBatched) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        T t[K];
#pragma unroll
        for (int u = 0; u < K; ++u) t[u] = to_acc<T>(reinterpret_cast<const In*>(&v[u])[k]);
        if constexpr (IsWelford<Op>::value && L == ColumnLoads::Scalar) {
          const auto reload = [&] {
            typename Op::template Run<K> r;
#pragma unroll
            for (int u = 0; u < K; ++u) {
              const In* e = RK_FAULT_IS(ColumnsReloadRow) && u == cnt - 1 ? q : q + u * C;  // planted: the first row again
              r.v[u] = u < cnt ? to_acc<T>(ld1(e)) : T(0);
            }
            return r;
          };
          acc[k] = Op::combine(acc[k], Op::lane(t, cnt, r0 + b0, prm, reload));
        } else {
          acc[k] = Op::combine(acc[k], Op::lane(t, cnt, r0 + b0, prm));
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < K; ++u) {
        if (u < cnt) {
          const In* e = reinterpret_cast<const In*>(&v[u]);
#pragma unroll
          for (int k = 0; k < V; ++k) acc[k] = Op::enter(acc[k], to_acc<T>(e[k]), r0 + b0 + u, prm);
        }
      }
    }
  };
  if constexpr (L == ColumnLoads::Scalar) {
    (void)cols;
    (void)inside;
    // One element a row. Row addresses step by the row stride (a 64-bit add a row, not a 64-bit
    // multiply and shifts: 1.3-1.5x less time on 2-byte columns), a whole batch's loads take no
    // predicates, and a short last batch (the whole lane when R is short) is read and entered as
    // 8 or 16 rows rather than kBatch predicated ones (a lane of 6 rows took 32 predicated loads
    // and checks). benchmarks/columns_lab, H100, session 43.
    // planted: Welford's and logsumexp's 16-bit lanes entered as two runs of 16 (session 62's order)
    constexpr int kRun = RK_FAULT_IS(ColumnsLaneHalves) && kWholeLaneOp<Op> && kBatch > kColumnBatch ? kColumnBatch : kBatch;
#pragma unroll 1
    for (int b0 = 0; b0 < rows; b0 += kRun) {
      const int rem = rows - b0;
      const auto batch = [&](auto k_rows) {
        constexpr int K = decltype(k_rows)::value;
        In v[K];
        const In* q = p + b0 * C;
        // planted: a batch's last row is read as its first again
        const auto at = [&](int u, const In* r) { return RK_FAULT_IS(ColumnsScalarRow) && u == K - 1 ? p + b0 * C : r; };
        if (rem >= K) {
#pragma unroll
          for (int u = 0; u < K; ++u, q += C) v[u] = ld1(at(u, q));
        } else {
#pragma unroll
          for (int u = 0; u < K; ++u, q += C) v[u] = u < rem ? ld1(at(u, q)) : In{};
        }
        consume(v, rem < K ? rem : K, b0, p + b0 * C);
      };
      if (rem >= kRun || (kRun <= 8 || rem > 16)) {
        batch(std::integral_constant<int, kRun>{});
      } else if (rem <= (RK_FAULT_IS(ColumnsShortBatch) ? 9 : 8)) {  // planted: 9 rows taken as 8
        batch(std::integral_constant<int, (kRun < 8 ? kRun : 8)>{});
      } else {
        batch(std::integral_constant<int, (kRun < 16 ? kRun : 16)>{});
      }
    }
  } else {
    // 16-byte vectors of V columns a row.
    const bool whole = cols == V;
#pragma unroll 1
    for (int b0 = 0; b0 < rows; b0 += kBatch) {
      uint4 v[kBatch];
      if (whole && L == ColumnLoads::Vectors) {
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
          if (b0 + u < rows) v[u] = __ldg(reinterpret_cast<const uint4*>(p + (b0 + u) * C));
      } else if (whole && inside) {
        // Branch-free, so that ptxas can issue the batch's loads before it realigns any: every row
        // takes two granules (the second is the first again where the row's vector is aligned).
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          const uintptr_t a = reinterpret_cast<uintptr_t>(p + (b0 + u) * C);
          const int off = RK_FAULT_IS(ColumnsMisalignedVectors) ? 0 : static_cast<int>(a & 15);  // planted: the granule below
          const uint4* g = reinterpret_cast<const uint4*>(a & ~uintptr_t{15});
          uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
          if (b0 + u < rows) {
            lo = __ldg(g);
            hi = __ldg(g + (off != 0));
          }
          v[u] = realign16<In>(lo, hi, off);
        }
      } else {
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          v[u] = make_uint4(0, 0, 0, 0);
          In* e = reinterpret_cast<In*>(&v[u]);
          if (b0 + u < rows) {
#pragma unroll
            for (int k = 0; k < V; ++k)
              if (k < cols) e[k] = ld1(p + (b0 + u) * C + k);
          }
        }
      }
      int cnt = rows - b0 < kBatch ? rows - b0 : kBatch;
      if constexpr (RK_FAULT_IS(ColumnsCutBatch) && kBatch == 8) cnt -= cnt == kBatch ? 1 : 0;  // planted: a whole batch loses its last row
      consume(v, cnt, b0, nullptr);
    }
  }
}

// B batches of an R x C matrix (row stride C), reduced over R. Block = TX x TY x TB threads: TX
// threads across C (V columns each, 16 bytes), TY threads down R, each reducing LPT consecutive
// lanes of G rows (lane results combined pairwise in registers: an aligned subtree), and TB
// batches side by side when one batch's TX x TY threads are fewer than the block's (a short R and
// a narrow C: a block of 256 threads held as few as 1 busy thread, 0.005x torch in the issue's
// sweep). The block then combines its TY threads pairwise in shared memory, KC columns at a time.
// Grid: tiles_x column tiles x tiles_y lane tiles x ceil(B / TB) (TB > 1 only when both tile
// counts are 1); the block has TX x TY x TB threads, fewer than 256 when the shape rule spreads a
// small grid. Writes out[b*C + c] (tiles_y == 1) or partials[(b*C + c) * tiles_y + tile_y].
// L: how a thread reads its columns (ColumnLoads, chosen by columns_shape). Each form is its own
// kernel, so that the realigned one's registers (two granules per row in flight) never cost the
// others spills or occupancy.
// kGather (engine/plan.h's Gather with a kept innermost run, operators that enter values one by
// one): batch b's kept digits and row r's reduced digits give their offsets, C is the innermost
// kept run; a lane inside one run of the innermost reduced dim is G rows at its stride, one that
// crosses into the next run is read in pieces that continue the same accumulators: the rows of a
// copy with the reduced dims last, in the same order.
// kFused: a column tile's outputs finished by the last of its row tiles (FusedFinish); its own
// instantiation, since the finish call's registers are the whole kernel's (session 47's single
// kernel took 16-23 more registers in 40 of 138 float kernels, and large columns ran 1.25-1.3x
// slower: NOTES.md, session 48).
// kWide (Welford one column a thread on 2- and 4-byte values, kColumnsWideForm): the same code held
// to 3 blocks an SM, not 2 (tuning.h's columns_wide_pays says where, with its measurement).
template <class In, class Op, ColumnLoads L>
inline constexpr bool kColumnsWideForm = IsWelford<Op>::value && L == ColumnLoads::Scalar && (sizeof(In) == 2 || sizeof(In) == 4);
template <class In, class Op, class Out0, class Out1, ColumnLoads L, bool kGather = false, bool kFused = false, bool kWide = false>
__global__ void __launch_bounds__(kThreads, kWide ? 3 : 2)
    columns_kernel(const In* __restrict__ x, int64_t B, int64_t R, int64_t C, int TX, int TY, int TB, int LPT, Divider tiles_x,
                   Divider tiles_y, Outs<Out0, Out1> out, typename Op::Acc* __restrict__ partials, red::Params prm, Gather g,
                   int64_t span, FusedFinish fused) {
  static_assert(!kGather || (LaneCutFree<Op>::value && !Op::kBatched), "a gathered column lane is read in pieces");
  static_assert(!kWide || kColumnsWideForm<In, Op, L>, "the 3-blocks build is Welford's one-column form alone");
  static_assert(kColumnFormHoldsLane<In, Op, L>, "this form cannot hold the operator's whole lane (columns_shape reads one column a thread)");
  using Acc = typename Op::Acc;
  constexpr int G = 64 / sizeof(In), V = kColumnWidth<In, L>;
  // Columns exchanged per shared-memory round: at most 32 KB of accumulators.
  constexpr int KC = V < static_cast<int>(128 / sizeof(Acc)) ? V : static_cast<int>(128 / sizeof(Acc) > 0 ? 128 / sizeof(Acc) : 1);
  __shared__ Acc smem[kThreads * KC];
  grid_dependency_wait();
  // The block's place by multiply-high divisions (Divider: the grid has fewer than 2^31 blocks).
  // Its int64 divisions, two calls of a long subroutine a thread, were much of a short lane's
  // instructions (argmax bfloat16 (69, 10, 97900) over dim 1, 10 rows a thread: about 970 issued a
  // warp, the SMs' issue 77% busy, DRAM 17%; ncu, H100, session 43), and plain 32-bit divisions
  // moved ptxas's schedule into spills (3.4x slower columns, H200, an earlier session; 3x again in
  // session 43's lab, benchmarks/columns_lab, H100). The thread's place by shifts instead of its
  // divisions cost the 4-byte scalar lanes 5-15% there (ptxas again): kept as divisions.
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX % TY, tb = threadIdx.x / (TX * TY);
  // planted: the batch divided out by the column tiles' divider
  const uint32_t bid = blockIdx.x, q1 = div_by(tiles_x, bid), q2 = div_by(RK_FAULT_IS(ColumnsTileDivider) ? tiles_x : tiles_y, q1);
  const int64_t tile_x = bid - q1 * tiles_x.d, tile_y = q1 - q2 * tiles_y.d;
  const int64_t b = static_cast<int64_t>(q2) * TB + tb;
  const int64_t c0 = (tile_x * TX + tx) * V;
  const int64_t lane0 = (tile_y * TY + ty) * LPT;
  // The thread's columns: `cols` of them (0 past C or past the last batch), read from `base`.
  int cols = c0 < C && b < B ? static_cast<int>(C - c0 < V ? C - c0 : V) : 0;
  if constexpr (RK_FAULT_IS(DimsColumnTail)) cols = cols < V ? 0 : cols;  // planted: the last C % V columns read nothing
  // planted: the second of each pair of packed batches reads its neighbour's rows
  const int64_t b_read = RK_FAULT_IS(ColumnsPackedBatch) && TB > 1 && (b ^ 1) < B ? b ^ 1 : b;
  const In* base = x + (cols > 0 ? b_read * R * C + c0 : 0);
  if constexpr (kGather) {  // the kept digits but the innermost run's
    uint32_t unused;
    base = x + (cols > 0 ? gather_offset(g.ksize, g.kstride, g.nk - 1, static_cast<uint32_t>(b_read), &unused) + c0 : 0);
  }
  // Binary-counter stack of pending left subtrees (level k holds 2^k lanes): lane j merges with
  // the pending subtree at every level where j has a 1 bit. The stack lives in local memory; it
  // is touched twice per lane of G rows, next to G loads.
  Acc st[4][V];
  Acc acc[V];
#pragma unroll 1
  for (int j = 0; j < LPT; ++j) {
    const int64_t r0 = (lane0 + j) * G;
    const int rows = r0 < R ? static_cast<int>(R - r0 < G ? R - r0 : G) : 0;
    // A misaligned lane's granules must lie within the tensor's bytes (Bounds): its first row's first
    // granule and its last row's second.
    if constexpr (kGather) {
      const Bounds bx = bounds_of(x, span);
      const int64_t s0 = g.rstride[g.nr - 1];
      const uint32_t n0 = g.rsize[g.nr - 1].d;
      uint32_t jr = 0;
      int64_t off = rows > 0 ? gather_offset(g.rsize, g.rstride, g.nr, static_cast<uint32_t>(r0), &jr) : 0;
      int done = 0;
      do {  // one piece a run of the innermost reduced dim (one piece unless the lane crosses runs)
        int piece = rows - done;
        if (RK_FAULT_IS(GatherCarryColumns) ? static_cast<int64_t>(jr) + piece > n0 + 1 : static_cast<int64_t>(jr) + piece > n0)
          piece = static_cast<int>(n0 - jr) + (RK_FAULT_IS(GatherCarryColumns) ? 1 : 0);  // planted: a piece runs one row past its run
        const In* p = base + off;
        const bool inside = L != ColumnLoads::Realigned || piece <= 0 || (bx.holds(p, 1) && bx.holds(p + (piece - 1) * s0, 2));
        column_lane<In, Op, kColumnBatchOf<In, Op, L>, L>(acc, p, s0, cols > 0 ? piece : 0, cols, r0 + done, prm, inside, done == 0);
        done += piece;
        if (done < rows) off = gather_offset(g.rsize, g.rstride, g.nr, static_cast<uint32_t>(r0 + done), &jr);
      } while (done < rows);
    } else {
      const Bounds bx = bounds_of(x, B * R * C);
      const bool inside = L != ColumnLoads::Realigned || rows == 0 || (bx.holds(base + r0 * C, 1) && bx.holds(base + (r0 + rows - 1) * C, 2));
      // planted: the 3-blocks build's lanes lose their last row
      const int read = kWide && RK_FAULT_IS(ColumnsWideLastRow) && rows > 1 ? rows - 1 : rows;
      column_lane<In, Op, kColumnBatchOf<In, Op, L>, L>(acc, base + r0 * C, C, cols > 0 ? read : 0, cols, r0, prm, inside);
    }
    int k = 0;
    for (; (j >> k) & 1; ++k) {
#pragma unroll
      for (int q = 0; q < V; ++q) acc[q] = Op::combine(st[k][q], acc[q]);
    }
#pragma unroll
    for (int q = 0; q < V; ++q) st[k][q] = acc[q];
  }
  // The thread's subtree of LPT lanes is at level log2(LPT): the last lane's merge left it in acc.
  allow_dependent_launch();
  // Pairwise over the block's TY threads, per column (readers read slots = s mod 2s, writers 0 mod 2s).
  if (TY > 1) {
#pragma unroll
    for (int k0 = 0; k0 < V; k0 += KC) {
      Acc* mine = smem + threadIdx.x * KC;  // thread (tb, ty, tx)
#pragma unroll
      for (int k = 0; k < KC; ++k)
        if (k0 + k < V) mine[k] = acc[k0 + k];
      for (int s = 1; s < TY; s <<= 1) {
        __syncthreads();
        if ((ty & (2 * s - 1)) == 0 && ty + s < TY) {
          const Acc* other = mine + s * TX * KC;  // thread (tb, ty + s, tx)
#pragma unroll
          for (int k = 0; k < KC; ++k)
            if (k0 + k < V) mine[k] = acc[k0 + k] = Op::combine(acc[k0 + k], other[k]);
        }
      }
      if (k0 + KC < V) __syncthreads();  // the next round reuses smem
    }
  }
  if (ty == 0 && c0 < C && b < B) {
    const int n = static_cast<int>(C - c0 < V ? C - c0 : V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (k < n) {
        if (tiles_y.d == 1) {
          store<Op>(out, b * C + c0 + k, acc[k], prm);
        } else {
          st_acc(partials + (b * C + c0 + k) * tiles_y.d + tile_y, acc[k]);
        }
      }
    }
  }
  // The column tile's outputs, from the last of its row tiles (group q2 * tiles_x + tile_x).
  if constexpr (kFused) {
    if (tiles_y.d > 1) {
      unsigned int* const counter = fused.counters + static_cast<int64_t>(q2) * tiles_x.d + tile_x;
      if (last_of_group(counter, tiles_y.d)) {
        const int64_t cb = tile_x * TX * V, b0 = static_cast<int64_t>(q2) * TB;
        finish_columns_call<Op>(partials, tiles_y.d, fused, counter, b0, static_cast<int>(B - b0 < TB ? B - b0 : TB), cb,
                                static_cast<int>(C - cb < TX * V ? C - cb : TX * V), C, out, prm);
      }
    }
  }
}

// Combines P partials per output (layout [nout][P]; partial j covers an aligned power-of-two group
// of lanes, the same size for every j) by the pairwise tree: W threads per output (several
// outputs per block when P is small), thread t takes the aligned chunk [t*g, t*g+g).
// With `raw` non-null the combined accumulators are written there unprojected: a first pass over
// aligned groups of a very long partials row (a full reduction's), each group a subtree.
template <class Op, class Out0, class Out1>
__global__ void __launch_bounds__(kThreads)
    pairwise_finish_kernel(const typename Op::Acc* __restrict__ partials, int64_t nout, int64_t P, int W, int64_t g,
                           Outs<Out0, Out1> out, red::Params prm, typename Op::Acc* __restrict__ raw, int64_t total) {
  using Acc = typename Op::Acc;
  __shared__ Acc smem[kTreeSlots<Op>];
  grid_dependency_wait();
  const int tid = threadIdx.x;
  const int lw = log2_pow2(W);
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads >> lw) + (tid >> lw);
  const int t = tid & (W - 1);
  // First pass (raw): output o is the group [o*P, o*P + P) of one row of `total` partials.
  int64_t P_used = raw ? std::min<int64_t>(P, total - o * P) : P;
  if constexpr (RK_FAULT_IS(DimsFinishDropLast)) {
    if (!raw) P_used = P - 1;  // planted: the last partial is lost
  }
  Acc v = Op::identity();
  if (o < nout) v = pairwise_chunk<Op>(partials + o * P, t * g, g, P_used);
  v = block_tree<Op>(v, W, smem);
  if (t == 0 && o < nout) {
    if (raw) {
      st_acc(raw + o, v);
    } else {
      store<Op>(out, o, v, prm);
    }
  }
}

struct Shape {
  int W = 1;          // rows: threads per row; finish: threads per output
  int64_t nseg = 1;   // rows: segments per row (blocks per row when > 1)
  int TX = 1, TY = 1, TB = 1;  // columns block: TB batches of TX x TY threads
  int LPT = 1;         // rows and columns: lanes per thread
  int stripes = 1;     // rows, one lane a thread: 2 lanes t and t + W a thread (rows_kernel<kUp = 1, kStriped>)
  bool select_rows = false;  // rows of argmax / argmin: W <= 32 threads a row visiting lanes t, t + W, ... (select_rows_kernel)
  int64_t tiles_x = 1, tiles_y = 1;
  int64_t blocks = 1;
  int64_t partials = 0;  // partials per output (0: written directly)
  ColumnLoads loads = ColumnLoads::Vectors;  // columns: how a thread reads its columns
};

// rows_lpt: the most lanes per thread of the rows kernel (0: sum's shape, one lane per thread;
// operators pass the tuning table's ops_rows_lanes_per_thread, or 1).
// o: the tuning harness's overrides (tuning/tuning.h; all zero outside it).
// aligned (columns): every row's 16-byte vectors are aligned (columns_aligned); batched: the
// operator reduces a lane's batches by its lane function (Op::kBatched: Welford, logsumexp,
// argmax); vectors: the vector forms may hold the operator's lane (columns_vectors_hold_lane; one
// column a thread otherwise, whatever the overrides say).
Shape rows_shape(int64_t K, int64_t L, int elem, int rows_lpt, int num_sms, const TuningOverrides& o);
// A Rows step's shape: rows_shape's, with two stripes where they pay (select: argmax and argmin,
// kSelectOp).
Shape rows_step_shape(int64_t K, int64_t L, int elem, int rows_lpt, bool select, int num_sms, const TuningOverrides& o);
Shape columns_shape(int64_t B, int64_t R, int64_t C, int elem, bool aligned, bool batched, bool vectors, int num_sms, const TuningOverrides& o);
Shape finish_shape(int64_t nout, int64_t P, int64_t* g);

// Whether a columns step's rows all start on 16-byte boundaries: x aligned and rows of whole granules.
inline bool columns_aligned(const void* x, int64_t inner, int elem) {
  return (reinterpret_cast<uintptr_t>(x) & 15) == 0 && (inner * elem) % 16 == 0;
}

// Whether a gathered columns step's rows all start on 16-byte boundaries: x aligned and every
// stride but the innermost kept run's (1) a whole number of granules.
inline bool gather_aligned(const void* x, const Gather& g, int elem) {
  bool a = (reinterpret_cast<uintptr_t>(x) & 15) == 0;
  for (int i = 0; i + 1 < g.nk; ++i) a = a && (g.kstride[i] * elem) % 16 == 0;
  for (int i = 0; i < g.nr; ++i) a = a && (g.rstride[i] * elem) % 16 == 0;
  return a;
}

// A Gather step's shape is a rows step's (K rows of N: one lane a thread) or, in its columns form
// (g.columns), a columns step's (outer = B batches of extent = N rows of inner = C columns). The
// operator's kind (batched, select) comes from Op itself.
template <class Op>
inline Shape step_shape(StepKind kind, int64_t outer, int64_t extent, int64_t inner, int elem, const void* x, int num_sms, int rows_lpt,
                        const TuningOverrides& o, const Gather& g) {
  constexpr bool batched = Op::kBatched, select = kSelectOp<Op>;
  const bool vectors = columns_vectors_hold_lane(kWholeLaneOp<Op>, elem);
  switch (kind) {  // every kind named (-Werror=switch)
    case StepKind::Rows: return rows_step_shape(outer, extent, elem, rows_lpt, select, num_sms, o);
    case StepKind::Columns: return columns_shape(outer, extent, inner, elem, columns_aligned(x, inner, elem), batched, vectors, num_sms, o);
    case StepKind::Gather:
      return g.columns ? columns_shape(outer, extent, inner, elem, gather_aligned(x, g, elem), batched, vectors, num_sms, o)
                       : rows_shape(outer, extent, elem, 0, num_sms, o);  // one lane a thread
  }
  return Shape{};
}

// One step: the step's kernel, then (split rows or columns) the pairwise finish. `partials`
// holds nout * s.partials accumulators when s.partials > 0.
template <class In, class Op, class Out0, class Out1>
cudaError_t run_step(StepKind kind, int64_t outer, int64_t extent, int64_t inner, const Gather& gather, const In* x, Outs<Out0, Out1> out,
                     void* workspace, const red::Params& prm, cudaStream_t stream, int cc, int num_sms, bool pdl_first,
                     int rows_lpt, unsigned int* counters, const TuningOverrides& o) {
  using Acc = typename Op::Acc;
  const Shape s = step_shape<Op>(kind, outer, extent, inner, static_cast<int>(sizeof(In)), x, num_sms, rows_lpt, o, gather);
  const int64_t nout = kind == StepKind::Rows ? outer : outer * inner;  // Gather's rows form has inner 1
  Acc* partials = s.partials ? static_cast<Acc*>(workspace) : nullptr;
  if (s.partials && !partials) return cudaErrorInvalidValue;
  if (s.blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(s.blocks)), block(kThreads);
  const bool pdl = pdl_first && cc >= 90;
  cudaError_t e;
  // A small split step finishes in its last blocks (FusedFinish) when the stream has a counter for
  // each group of blocks: a row's segments (the one-lane rows kernels), or a column tile's row
  // tiles whose finish is short (below). Larger steps keep the parallel finish kernel.
  FusedFinish fused;
  const bool rows_like = kind == StepKind::Rows || (kind == StepKind::Gather && !gather.columns);
  // (An operator's single split row is fused at any bytes, up to kFusedRowBlocks blocks.)
  const bool small = outer * extent * inner * static_cast<int64_t>(sizeof(In)) <= kFusedFinishBytes ||
                     (kind == StepKind::Rows && outer == 1 && !IsPlainSum<Op>::value);
  if (counters && s.partials > 0 && s.blocks / s.partials <= kGroupCounters && small && !(nout == 1 && s.partials > kSplitFinishPartials) &&
      o.fused_finish >= 0) {
    if (rows_like) {
      int64_t g = 1;
      const Shape f = finish_shape(1, s.partials, &g);
      const int64_t bound = o.fused_row_blocks > 0 ? o.fused_row_blocks : kFusedRowBlocks;
      if (s.LPT == 1 && s.blocks <= bound) fused = FusedFinish{counters, f.W, g};
    } else {
      // finish_columns_call's threads: W an output (the most that fit the group's outputs in one
      // round; shuffles of whole warps only), chunks of g. Fused while the last block's finish is
      // at most kFusedColumnsRounds dependent rounds of loads (8 in flight a thread: an octet).
      const int64_t bd = int64_t{s.TX} * s.TY * s.TB, leaves = ceil_pow2(s.partials);
      const int64_t outs = int64_t{s.TX} * (s.loads == ColumnLoads::Scalar ? 1 : 16 / static_cast<int64_t>(sizeof(In))) * s.TB;
      int64_t W = 1;
      while (bd >= 32 && 2 * W <= 32 && 2 * W <= leaves && outs * 2 * W <= bd) W *= 2;
      const int64_t g = leaves / W, rounds = (outs * W + bd - 1) / bd * ((g + 7) / 8);
      if (rounds <= kFusedColumnsRounds) fused = FusedFinish{counters, static_cast<int>(W), g};
    }
  }
  // The input's elements for a Gather step: its last one's offset + 1 (dense dims cover [0, span)).
  int64_t span = 1;
  for (int i = 0; i < gather.nk; ++i) span += (gather.ksize[i].d - int64_t{1}) * gather.kstride[i];
  for (int i = 0; i < gather.nr; ++i) span += (gather.rsize[i].d - int64_t{1}) * gather.rstride[i];
  auto columns = [&](auto gathered) {  // the columns kernel, gathered or not
    constexpr bool kG = decltype(gathered)::value;
    const dim3 cblock(static_cast<unsigned>(s.TX * s.TY * s.TB));
    auto go = [&](auto kernel) {
      return launch_maybe_pdl(kernel, grid, cblock, stream, pdl, x, outer, extent, inner, s.TX, s.TY, s.TB, s.LPT,
                              Divider::of(static_cast<uint32_t>(s.tiles_x)), Divider::of(static_cast<uint32_t>(s.tiles_y)), out, partials, prm, gather, span,
                              fused);
    };
    auto pick = [&](auto form) {  // the fused instantiation where the step finishes in its kernel; Welford's 3-blocks build
      constexpr ColumnLoads kL = decltype(form)::value;
      if constexpr (!kColumnFormHoldsLane<In, Op, kL>) {
        return cudaErrorInvalidConfiguration;  // not built: columns_shape never picks it (vectors false)
      } else {
        if constexpr (kColumnsWideForm<In, Op, kL>) {
          if (columns_wide_pays(static_cast<int>(sizeof(In)), s.blocks, num_sms, o))
            return fused.counters ? go(columns_kernel<In, Op, Out0, Out1, kL, kG, true, true>)
                                  : go(columns_kernel<In, Op, Out0, Out1, kL, kG, false, true>);
        }
        return fused.counters ? go(columns_kernel<In, Op, Out0, Out1, kL, kG, true>) : go(columns_kernel<In, Op, Out0, Out1, kL, kG, false>);
      }
    };
    switch (s.loads) {  // every form named: a new one fails to compile here (-Werror=switch, setup.py)
      case ColumnLoads::Vectors: return pick(std::integral_constant<ColumnLoads, ColumnLoads::Vectors>{});
      case ColumnLoads::Realigned: return pick(std::integral_constant<ColumnLoads, ColumnLoads::Realigned>{});
      case ColumnLoads::Scalar: return pick(std::integral_constant<ColumnLoads, ColumnLoads::Scalar>{});
    }
    return cudaErrorInvalidValue;
  };
  if (kind == StepKind::Gather) {
    if (gather.K != outer * inner || gather.N != extent || gather.nr < 1) return cudaErrorInvalidValue;
    if (gather.columns) {
      if constexpr (LaneCutFree<Op>::value && !Op::kBatched) {
        e = columns(std::true_type{});
      } else {
        return cudaErrorInvalidValue;  // a batched lane cannot be read in pieces (torch/sum.cpp copies those)
      }
    } else {
      // The innermost reduced run is contiguous. Runs under kGatherDirectMinLanes lanes (tuning.h;
      // every run under the hook's gather_staged = 1) of kGatherStagedMinRunBytes or more go
      // through shared memory (torch/sum.cpp copies shorter ones); longer ones lane by lane, where
      // a lane crosses into the next run at most once.
      constexpr int G = 64 / sizeof(In);
      const int64_t run = gather.rsize[gather.nr - 1].d;
      if (gather.rstride[gather.nr - 1] != 1) return cudaErrorInvalidValue;
      if (gather_staged(run, static_cast<int>(sizeof(In)), o)) {
        const Divider runs = Divider::of(static_cast<uint32_t>(s.nseg > 1 ? 1 : extent / run));
        e = fused.counters ? launch_maybe_pdl(gather_staged_kernel<In, Op, Out0, Out1, true>, grid, block, stream, pdl, x, gather, runs, s.W,
                                              s.nseg, out, partials, prm, fused)
                           : launch_maybe_pdl(gather_staged_kernel<In, Op, Out0, Out1, false>, grid, block, stream, pdl, x, gather, runs, s.W,
                                              s.nseg, out, partials, prm, fused);
      } else {
        if (run < G) return cudaErrorInvalidValue;
        e = fused.counters ? launch_maybe_pdl(gather_rows_kernel<In, Op, Out0, Out1, true>, grid, block, stream, pdl, x, gather, span, s.W,
                                              s.nseg, out, partials, prm, fused)
                           : launch_maybe_pdl(gather_rows_kernel<In, Op, Out0, Out1, false>, grid, block, stream, pdl, x, gather, span, s.W,
                                              s.nseg, out, partials, prm, fused);
      }
    }
  } else if (kind == StepKind::Rows && s.select_rows) {
    if constexpr (kSelectOp<Op> && sizeof(In) >= 2) {
      e = launch_maybe_pdl(select_rows_kernel<In, Op, Out0, Out1>, grid, block, stream, pdl, x, outer, extent, s.W, out, prm);
    } else {
      return cudaErrorInvalidValue;  // rows_step_shape gives the form to these operators alone
    }
  } else if (kind == StepKind::Rows) {
    auto go = [&](auto kernel) {
      return launch_maybe_pdl(kernel, grid, block, stream, pdl, x, outer, extent, s.W, s.LPT, s.nseg, out,
                              partials, prm, fused);
    };
    if (fused.counters) {  // split rows finished by each row's last block (s.LPT == 1)
      e = go(rows_kernel<In, Op, Out0, Out1, 1, true>);
    } else if (s.LPT == 1 && s.stripes == 2) {  // two stripes (nseg == 1)
      e = go(rows_kernel<In, Op, Out0, Out1, 1, false, true>);
    } else if constexpr (IsPlainSum<Op>::value) {  // sum's shape is one lane per thread
      e = go(rows_kernel<In, Op, Out0, Out1, 1>);
    } else if constexpr (Op::kBatched) {  // 2 or 4 lanes with their loads up front, else the stack
      e = s.LPT == 1   ? go(rows_kernel<In, Op, Out0, Out1, 1>)
          : s.LPT == 2 ? go(rows_kernel<In, Op, Out0, Out1, 2>)
          : s.LPT == 4 ? go(rows_kernel<In, Op, Out0, Out1, 4>)
                       : go(rows_kernel<In, Op, Out0, Out1, 0>);
    } else {
      e = s.LPT == 1 ? go(rows_kernel<In, Op, Out0, Out1, 1>) : go(rows_kernel<In, Op, Out0, Out1, 0>);
    }
  } else {
    // The block: TX x TY x TB threads, fewer than kThreads when the shape rule spread a small grid.
    e = columns(std::false_type{});
  }
  if (e != cudaSuccess || !s.partials) return e;
  if (fused.counters) return e;  // finished in the step's kernel
  int64_t P = s.partials;
  const Acc* src = partials;
  if (nout == 1 && P > kSplitFinishPartials) {
    // One very long partials row (a full reduction: 2^14 partials for 2^26 float32 values): one
    // block would walk it alone, so a first pass combines aligned groups of kThreads partials
    // (subtrees of the same perfect tree: the bits do not change) over many blocks, into the
    // workspace after the partials.
    Acc* groups = partials + s.partials;
    const int64_t G = (P + kThreads - 1) / kThreads;
    e = launch_maybe_pdl(pairwise_finish_kernel<Op, Out0, Out1>, dim3(static_cast<unsigned>(G)), block, stream, cc >= 90,
                         static_cast<const Acc*>(partials), G, int64_t{kThreads}, kThreads, int64_t{1}, out, prm, groups, P);
    if (e != cudaSuccess) return e;
    src = groups;
    P = G;
  }
  int64_t g = 1;
  const Shape f = finish_shape(nout, P, &g);
  if (f.blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
  // The finish always follows our own kernel: programmatic dependent launch hides its launch.
  return launch_maybe_pdl(pairwise_finish_kernel<Op, Out0, Out1>, dim3(static_cast<unsigned>(f.blocks)), block, stream,
                          cc >= 90, src, nout, P, f.W, g, out, prm, static_cast<Acc*>(nullptr), P);
}

// Bytes of the partials of one step (0 when the step writes its outputs directly).
template <class Op>
size_t step_workspace(StepKind kind, int64_t outer, int64_t extent, int64_t inner, int elem, const void* x, int num_sms,
                      int rows_lpt, const TuningOverrides& o, const Gather& gather) {
  using Acc = typename Op::Acc;
  const Shape s = step_shape<Op>(kind, outer, extent, inner, elem, x, num_sms, rows_lpt, o, gather);
  if (!s.partials) return 0;
  const int64_t nout = kind == StepKind::Rows ? outer : outer * inner;
  const int64_t groups = nout == 1 && s.partials > kSplitFinishPartials ? (s.partials + kThreads - 1) / kThreads : 0;
  return align256(static_cast<size_t>(nout * s.partials + groups) * sizeof(Acc));
}


}  // namespace eng
}  // namespace rk
