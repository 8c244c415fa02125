// The dims engine's plan: maps any (shape, strides, reduced dims) of a dense tensor to a short
// sequence of steps, each one of two kernel shapes. Torch-free and CUDA-free: the CPU and CUDA
// implementations both execute it, and tests read it through reducekit._C.dims_plan.
//
//  1. Dims of size 1 are dropped; the rest are put in memory order (largest stride first) and
//     adjacent dims are merged when both are reduced or both kept and they are contiguous with
//     each other. (2^20, 64) along dim 1 becomes one "rows" step; (64, 256, 1024) over (0, 2)
//     stays [reduced 64, kept 256, reduced 1024].
//  2. One step per merged reduced run, the innermost first:
//       rows     the reduced extent L is innermost (contiguous): K rows of L elements;
//       columns  the reduced extent R has a contiguous kept extent C inside it: B batches of an
//                R x C matrix reduced over R.
//     The engine runs a plan of one step as that step. A plan of several steps is not run step by
//     step (until session 40 sum's was, each step writing accumulators for the next: an order that
//     depended on which dims merged, so a slice's bits could differ from its batch's): its reduced
//     dims are read as one run (the multi-dim order below), by the Gather step on CUDA (below: the
//     rows kernel, or the columns kernel where the innermost dim is kept, reading through the dims,
//     no copy; torch/sum.cpp's one_step says which plans take it) or, on the CPU and for the plans it
//     does not take, by a rows step over a copy with the reduced dims last in that order.
//  A sum with dim=None and its natural result dtype does not come here: it stays single_pass (CUDA)
//  or the whole-tensor CPU sum. Everything else over all dims does: a dim=None sum with a dtype=
//  that changes the result (16-bit -> float32, float32 -> float64), an explicit dim list that
//  covers every dim (so that its bits follow the same rule as every other explicit-dim call), and
//  the operators' full reductions (torch/reduce.cpp), whose one step is a single row.
//
// The accumulation order (the engine's promise; both kernel shapes implement it exactly): a run of
// N values along a reduced extent is cut into lanes of G = 64 / sizeof(element) consecutive values
// (16 for float32, 32 for 16-bit floats, 8 for float64, 64 for bytes); each lane is summed
// sequentially, and the lane sums are combined by a perfect pairwise (binary) tree, padded with
// the identity. The order depends only on N and the element type: never on how many other rows or
// columns there are, the kept dims, the grid, the stream, or the GPU. That is what makes
// sum(x, dim=-1)[i] bitwise equal to sum(x[i:i+1], dim=-1)[0], and a row sum equal to the column
// sum of the same values.
//
// Several reduced dims (the multi-dim order): a slice's values are taken as ONE run, in the memory
// order of its reduced dims: the reduced dims of size > 1, sorted by the input's strides, largest
// first, and flattened row-major (a broadcast dim, of stride 0, counts as outermost: torch/sum.cpp,
// dense_in_order). In terms of the slice's logical reduced index
// (i_1 .. i_m over the reduced dims d_1 < ... < d_m, sizes n_1 .. n_m) and pi, that sort: the value
// at i has position
// k = sum_j i_pi(j) * prod_{l > j} n_pi(l) in the run, and the run of N = n_1 ... n_m values is
// reduced as a row is (lanes of G, each in position order, a perfect pairwise tree over the lanes;
// the CPU's sum and nansum reduce a row in their own kernels' order, cpu/dims_cpu.cpp, but the run
// is the same).
// The strides decide only the order of the reduced dims among themselves, so a slice of a batch
// (which keeps the batch's strides) has its batch's bits whatever the kept dims are, and whether or
// not the reduced dims merge with each other; a non-dense input is copied keeping its dims' memory
// order (torch/sum.cpp, dense_in_order). A single run in memory order (rows, columns, a whole
// dense tensor) is the case m = 1 after merging: the same order, so their bits did not move.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

namespace rk {

inline constexpr int kMaxDims = 64;

struct Dim {
  int64_t size = 1;
  int64_t stride = 0;
  bool reduced = false;
};

// Dims of size > 1 in memory order (outermost first), merged.
struct MergedDims {
  int nd = 0;
  Dim d[kMaxDims];
};

// `reduced[i]` says whether dim i is reduced. The tensor must be non-overlapping and dense (every
// element at a distinct offset, the offsets covering a contiguous range); callers copy others.
inline MergedDims merge_dims(int ndim, const int64_t* sizes, const int64_t* strides, const bool* reduced) {
  MergedDims m;
  Dim tmp[kMaxDims];
  int n = 0;
  for (int i = 0; i < ndim; ++i)
    if (sizes[i] != 1) tmp[n++] = Dim{sizes[i], strides[i], reduced[i]};
  // Stable: equal strides only occur for size-1 dims, which are gone.
  std::stable_sort(tmp, tmp + n, [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  for (int i = 0; i < n; ++i) {
    if (m.nd > 0) {
      Dim& last = m.d[m.nd - 1];
      if (last.reduced == tmp[i].reduced && last.stride == tmp[i].stride * tmp[i].size) {
        last.size *= tmp[i].size;
        last.stride = tmp[i].stride;
        continue;
      }
    }
    m.d[m.nd++] = tmp[i];
  }
  return m;
}

// Rows and Columns are make_plan's steps over a dense operand; Gather is a plan of several steps run
// as one (the multi-dim order above), taken only by the CUDA engine (OpDesc::gather).
enum class StepKind { Rows, Columns, Gather };

// One kernel step over a dense (contiguous in memory order) operand.
struct Step {
  StepKind kind;
  int64_t outer;   // rows: K rows; columns: B batches
  int64_t extent;  // the reduced extent: L (rows) or R (columns)
  int64_t inner;   // columns: C, the contiguous kept extent; rows: 1
};

struct Plan {
  int nsteps = 0;
  Step steps[kMaxDims];
  int64_t outputs = 1;  // elements of the result
  int64_t reduced = 1;  // elements reduced into each output
};

// Steps for merged dims, one per reduced run, the innermost first (a step's result would be dense
// in the memory order of the remaining dims). The engine runs a plan of one step; a plan of
// several is the multi-dim order's one run (above), and its steps only describe the runs.
inline Plan make_plan(const MergedDims& m) {
  Plan p;
  Dim d[kMaxDims];
  int nd = m.nd;
  std::copy(m.d, m.d + nd, d);
  for (int i = 0; i < nd; ++i) (d[i].reduced ? p.reduced : p.outputs) *= d[i].size;
  for (;;) {
    int j = nd - 1;
    while (j >= 0 && !d[j].reduced) --j;
    if (j < 0) break;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < j; ++i) outer *= d[i].size;
    for (int i = j + 1; i < nd; ++i) inner *= d[i].size;
    p.steps[p.nsteps++] = inner == 1 ? Step{StepKind::Rows, outer, d[j].size, 1} : Step{StepKind::Columns, outer, d[j].size, inner};
    // Remove dim j; merge its neighbours if both kept (they are now adjacent in the dense result).
    for (int i = j; i + 1 < nd; ++i) d[i] = d[i + 1];
    --nd;
    if (j > 0 && j < nd && !d[j - 1].reduced && !d[j].reduced) {
      d[j - 1].size *= d[j].size;
      for (int i = j; i + 1 < nd; ++i) d[i] = d[i + 1];
      --nd;
    }
  }
  return p;
}

// A plan of several steps as one step of K rows of N values each, read through the dims (no copy):
// output r (the kept dims' index in their memory order, as Rows writes them) starts at element
// offset sum_i idx_i(r) * kstride[i] of the input, and value k of its run (the multi-dim order)
// lies sum_i idx_i(k) * rstride[i] further, idx the row-major digits over ksize, rsize.
// The digits are split by 32-bit multiply-high divisions (Divider: a int64 division in software was
// 3 per lane, and the first gather kernel ran slower than a copy and a rows step); so K and N, and
// every size, are below 2^31.
inline constexpr int kGatherDims = 8;

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 as (umulhi(n, magic) + n) >> shift (Granlund and Montgomery; torch's
// IntDivider): shift = ceil(log2(d)), magic = 2^32 (2^shift - d) / d + 1.
struct Divider {
  uint32_t d = 1, magic = 1;
  uint32_t shift = 0;
  static Divider of(uint32_t d) {
    Divider r;
    r.d = d;
    while ((uint64_t{1} << r.shift) < d) ++r.shift;
    r.magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << r.shift) - d)) / d + 1);
    return r;
  }
};

struct Gather {
  int nk = 0, nr = 0;
  // The innermost dim is kept (a run of C = ksize[nk - 1] contiguous outputs): the columns form,
  // B = K / C batches of N rows of C (else the rows form: K rows of N).
  bool columns = false;
  Divider ksize[kGatherDims], rsize[kGatherDims];
  int64_t kstride[kGatherDims] = {}, rstride[kGatherDims] = {};
  int64_t K = 1, N = 1;
};

// The Gather step of merged dims (memory order: outermost first); false when the kept or the
// reduced dims are more than kGatherDims runs, or K or N reach 2^31 (such a tensor is copied,
// torch/sum.cpp).
inline bool make_gather(const MergedDims& m, Gather* g) {
  Gather r;
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  for (int i = 0; i < m.nd; ++i) {
    const Dim& d = m.d[i];
    int& n = d.reduced ? r.nr : r.nk;
    if (n == kGatherDims) return false;
    int64_t& total = d.reduced ? r.N : r.K;
    total *= d.size;
    if (total > kMax) return false;
    (d.reduced ? r.rsize : r.ksize)[n] = Divider::of(static_cast<uint32_t>(d.size));
    (d.reduced ? r.rstride : r.kstride)[n++] = d.stride;
  }
  r.columns = m.nd > 0 && !m.d[m.nd - 1].reduced;
  *g = r;
  return true;
}

// Where a step writes its outputs. The engine's kernels number a step's outputs by the kept dims in
// the input's memory order (outermost first: what Rows, Columns and Gather write as out[i]); torch
// returns them contiguous in logical order. Where the two differ (a permuted or channels_last input
// whose kept dims lie in another order), output i goes to element offset sum_j digit_j(i) *
// stride[j] of the contiguous result, digit_j the row-major digits of i over size[] (the kept dims
// in memory order, merged where consecutive in both orders): the kernels write torch's layout
// directly, and no copy follows. nd == 0: the identity.
inline constexpr int kOutMapDims = 8;
struct OutMap {
  int nd = 0;
  Divider size[kOutMapDims];
  int64_t stride[kOutMapDims] = {};
};

// The map of a result of `nd` dims with `sizes`, which the kernels would write with strides
// `mem_strides` (dense in the kept dims' memory order), onto the contiguous result of those sizes:
// false when it needs more than kOutMapDims dims or the outputs reach 2^31 (the caller then writes
// the strided result and copies it).
inline bool make_out_map(int nd, const int64_t* sizes, const int64_t* mem_strides, OutMap* out) {
  OutMap m;
  int64_t cstride[kMaxDims], total = 1;
  if (nd > kMaxDims) return false;
  for (int i = nd - 1; i >= 0; --i) {
    cstride[i] = total;
    total *= sizes[i] > 1 ? sizes[i] : 1;
  }
  if (total >= (int64_t{1} << 31)) return false;
  int order[kMaxDims], k = 0;
  for (int i = 0; i < nd; ++i)
    if (sizes[i] > 1) order[k++] = i;
  // By memory stride, largest first (the kernels' digit order); distinct for dims of size > 1.
  for (int a = 1; a < k; ++a)
    for (int b = a; b > 0 && mem_strides[order[b]] > mem_strides[order[b - 1]]; --b) std::swap(order[b], order[b - 1]);
  int64_t sz[kMaxDims], st[kMaxDims];
  int n = 0;
  for (int a = 0; a < k; ++a) {
    const int i = order[a];
    if (n > 0 && st[n - 1] == cstride[i] * sizes[i]) {  // consecutive in both orders: one digit
      sz[n - 1] *= sizes[i];
      st[n - 1] = cstride[i];
    } else {
      sz[n] = sizes[i];
      st[n++] = cstride[i];
    }
  }
  if (n <= 1) {  // the memory order is the logical order
    *out = m;
    return true;
  }
  if (n > kOutMapDims) return false;
  m.nd = n;
  for (int a = 0; a < n; ++a) {
    m.size[a] = Divider::of(static_cast<uint32_t>(sz[a]));
    m.stride[a] = st[a];
  }
  *out = m;
  return true;
}

// Elements per lane of the accumulation order for an element of `elem_bytes` bytes.
inline constexpr int lane_elems(int elem_bytes) { return 64 / elem_bytes; }

// Lanes of the accumulation order holding n values of `elem_bytes` bytes (the last may be short).
inline constexpr int64_t lanes_of(int64_t n, int elem_bytes) { return (n + lane_elems(elem_bytes) - 1) / lane_elems(elem_bytes); }

constexpr int64_t ceil_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

inline int ceil_log2(int64_t v) {
  int k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return k;
}

// Additions on the longest path from an input value to a step's result: the lane's chain plus
// the depth of the pairwise tree over the lanes (tests derive their float bounds from it).
inline int64_t step_depth(int64_t extent, int elem_bytes) {
  return std::min<int64_t>(extent, lane_elems(elem_bytes)) + ceil_log2(lanes_of(extent, elem_bytes));
}

inline const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::Rows: return "rows";
    case StepKind::Columns: return "columns";
    case StepKind::Gather: return "gather";
  }
  return "?";
}

}  // namespace rk
