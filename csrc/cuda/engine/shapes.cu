// The engine's launch shapes (reduce.cuh's rows, columns and finish kernels), which every operator
// shares: how many threads a row or a column takes, lanes per thread, blocks and partials.
#include "tuning/tuning.h"
#include "cuda/engine/reduce.cuh"

namespace rk {
namespace eng {

Shape rows_shape(int64_t K, int64_t L, int elem, int rows_lpt, int num_sms, const TuningOverrides& o) {
  Shape s;
  const int64_t lanes = lanes_of(L, elem);
  if (rows_lpt > 0) {  // an operator (sum passes 0: one lane per thread, no hook)
    // Lanes per thread up to rows_lpt while every SM still has kRowsCoarsenThreadsPerSm threads of work.
    // A single row of at most 256 * 4 lanes (2^14 float32) takes one block whatever the operator:
    // no partials. Longer single rows split over blocks and still take one launch (the last block
    // finishes: FusedFinish in reduce.cuh); one block of 16 lanes a thread read 2^16 float32 at
    // 1.3x torch's eager time (H200, bench_ops). o.rows_lanes (the tuning harness's) forces the count.
    const int64_t wave = static_cast<int64_t>(std::max(num_sms, 1)) * kRowsCoarsenThreadsPerSm;
    int64_t lpt = 1;
    while (2 * lpt <= rows_lpt && K * lanes >= 2 * lpt * wave) lpt *= 2;
    if (K == 1 && lanes > kThreads && lanes <= static_cast<int64_t>(kThreads) * 4) lpt = ceil_pow2((lanes + kThreads - 1) / kThreads);
    if (o.rows_lanes > 0) lpt = o.rows_lanes;
    s.LPT = static_cast<int>(std::min<int64_t>({lpt, ceil_pow2(lanes), kMaxRowsLanes}));
  }
  const int64_t groups = (lanes + s.LPT - 1) / s.LPT;  // threads per row
  if (groups <= kThreads) {
    s.W = static_cast<int>(ceil_pow2(groups));
    s.blocks = (K + kThreads / s.W - 1) / (kThreads / s.W);
  } else {
    s.W = kThreads;
    s.nseg = (groups + kThreads - 1) / kThreads;
    s.blocks = K * s.nseg;
    s.partials = s.nseg;
  }
  return s;
}

Shape rows_step_shape(int64_t K, int64_t L, int elem, int rows_lpt, bool select, int num_sms, const TuningOverrides& o) {
  // argmax and argmin (select): the strided warp form where rows_select_pays (tuning.h); forced by
  // o.rows_select (1 wherever possible: 2-, 4- and 8-byte values; -1 never).
  const int64_t lanes = lanes_of(L, elem);
  if (select && elem >= 2 && o.rows_select >= 0) {
    if (o.rows_select > 0 || rows_select_pays(K, lanes, elem, num_sms)) {
      Shape s;
      s.W = select_rows_threads(lanes);
      s.select_rows = true;
      s.blocks = (K + kThreads / s.W - 1) / (kThreads / s.W);
      return s;
    }
  }
  Shape s = rows_shape(K, L, elem, rows_lpt, num_sms, o);
  // Two stripes: a row of one lane a thread whose W threads leave some idle (lanes just over a
  // power of two) runs on W / 2 threads, thread t taking lanes t and t + W / 2 (rows_kernel's
  // kStriped form, its own instantiation; the same tree, so the same bits). Where, by rows_stripes_pay
  // (tuning.h, with its measurements). Rows steps only: the gather step's kernels take one lane a
  // thread. o.rows_stripes: -1 never, 1 wherever a row takes one lane a thread on 2 or more threads.
  if (s.nseg != 1 || s.LPT != 1 || s.W < 2 || o.rows_stripes < 0) return s;
  if (o.rows_stripes > 0 || rows_stripes_pay(K, lanes, s.W, elem, select, num_sms)) {
    s.W /= 2;
    s.stripes = 2;
    s.blocks = (K + kThreads / s.W - 1) / (kThreads / s.W);
  }
  return s;
}

Shape columns_shape(int64_t B, int64_t R, int64_t C, int elem, bool aligned, bool batched, bool vectors, int num_sms, const TuningOverrides& o) {
  Shape s;
  // How a thread reads its columns (reduce.cuh, ColumnLoads): one column a thread where 16-byte
  // vectors would leave too few threads (columns_scalar, tuning/tuning.h) or cannot hold the
  // operator's lane (vectors false: Welford and logsumexp on 1- and 2-byte values, at any override),
  // else a vector of 16 / elem columns, realigned in registers when the rows are not all aligned.
  const int64_t lanes = lanes_of(R, elem);
  const ColumnsScalarRow* row = columns_row(elem, aligned, batched);
  {
    const int64_t vector_threads = (C + 16 / elem - 1) / (16 / elem) * lanes * B;
    const bool scalar = !vectors || o.columns_loads == 2 || (o.columns_loads == 0 && columns_scalar(row, vector_threads, num_sms));
    s.loads = scalar ? ColumnLoads::Scalar : aligned ? ColumnLoads::Vectors : ColumnLoads::Realigned;
  }
  const int V = s.loads == ColumnLoads::Scalar ? 1 : 16 / elem;
  const int64_t cv = (C + V - 1) / V;
  // A row segment of 128 contiguous bytes (8 threads of vectors; a warp of scalar threads reads
  // min(32 x elem, 128) bytes) and the rest of the block stacks lane groups (up to 32; when there
  // are fewer the block widens across columns). A thread takes the tuning tables' lanes
  // (csrc/tuning/tuning.h: kDimsColumnsTable by element size for vectors, kColumnsScalarTable's
  // scalar_lanes for one column a thread), capped so that every SM still has
  // kColumnsCoarsenThreadsPerSm threads of work.
  {
    const int64_t wave = static_cast<int64_t>(std::max(num_sms, 1)) * kColumnsCoarsenThreadsPerSm;
    const int64_t cap = ceil_pow2(std::max<int64_t>(1, cv * lanes * B / wave));
    const int lpt = V == 1 && row ? (o.columns_scalar_lanes > 0 ? o.columns_scalar_lanes : row->scalar_lanes)
                                  : dims_columns_lanes_per_thread(elem);
    // Never more lanes than the column has (rounded up to a power of two): a thread looping over
    // empty lanes still walks its merge stack in local memory (one column a thread with 4 lanes on
    // a one-lane R: 1.16-1.27x the single lane's time, benchmarks/columns_lab, session 43).
    s.LPT = static_cast<int>(std::min<int64_t>({static_cast<int64_t>(lpt), cap, ceil_pow2(lanes)}));
    if (o.columns_lanes > 0) s.LPT = o.columns_lanes;
    const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
    const int seg = V == 1 ? std::min(32, 128 / elem) : 8;
    const int tx0 = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), o.columns_tx0 > 0 ? o.columns_tx0 : seg));
    s.TY = static_cast<int>(std::min<int64_t>(ceil_pow2(groups), kThreads / tx0));
    s.TX = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), kThreads / s.TY));
  }
  const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
  // A batch that needs fewer threads than the block's shares the block with others: TB batches
  // side by side.
  s.TB = static_cast<int>(std::min<int64_t>(kThreads / (s.TX * s.TY), ceil_pow2(B)));
  if (o.columns_pack > 0) s.TB = std::min(o.columns_pack, kThreads / (s.TX * s.TY));
  // Work for few threads (a short R, a narrow C, few batches) must still spread over every SM:
  // while the grid has fewer than kColumnsSpreadBlocksPerSm blocks per SM, halve the block: first
  // its packed batches, then its lanes down R (a lane tile of the tree: partials and a finish),
  // and only then its threads across C, which read a row's contiguous bytes together (TX = 1 made
  // a warp's load touch 32 rows: mean bfloat16 (5259, 520) over dim 0 at 10.7 us, 11% of DRAM
  // bandwidth, ncu). The same lanes and the same tree in any case: the same bits.
  const auto blocks = [&] {
    return ((cv + s.TX - 1) / s.TX) * ((groups + s.TY - 1) / s.TY) * ((B + s.TB - 1) / s.TB);
  };
  const int64_t target = static_cast<int64_t>(std::max(num_sms, 1)) * kColumnsSpreadBlocksPerSm;
  if (o.columns_pack == 0) {
    while (blocks() < target && (s.TB > 1 || s.TX > 1 || s.TY > 1)) {
      if (s.TB > 1) {
        s.TB /= 2;
      } else if (s.TY > 1) {
        s.TY /= 2;
      } else {
        s.TX /= 2;
      }
    }
  }
  s.tiles_x = (cv + s.TX - 1) / s.TX;
  s.tiles_y = (groups + s.TY - 1) / s.TY;
  s.blocks = blocks();
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

}  // namespace eng

}  // namespace rk
