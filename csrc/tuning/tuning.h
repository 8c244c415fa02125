// The `auto` dispatcher's tuning table: which kernel and configuration reduce a given dtype and
// size fastest on a given architecture. Torch-free. Each row carries the measurement that chose
// it (benchmarks/tune.py on the H200; NOTES.md has the runs), as CUB's tuning policies do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/methods.h"

namespace rk {

// Overrides of the engine's and exact's launch rules, for the tuning harnesses and tests only (0 =
// the rule). They travel in the launch arguments (OpStep::tuning, ExactArgs::tuning), so the CUDA
// code reads no mutable state; the torch layer's test hooks fill them (torch/hooks.cpp).
struct TuningOverrides {
  int rows_lanes = 0;     // operators' rows kernel: lanes per thread, a power of two up to 16 (benchmarks/tune_ops.py)
  int columns_tx0 = 0;    // columns kernel: threads across a row segment, a power of two up to 32 (benchmarks/tune_dims.py)
  int columns_lanes = 0;  // columns kernel: lanes per thread, 1, 2, 4 or 8 (benchmarks/tune_dims.py)
  int columns_pack = 0;   // columns kernel: batches per block, a power of two (tests: the bits do not depend on it)
  int columns_loads = 0;  // columns kernel: 1 vectors (realigned where rows are misaligned), 2 one column a thread (tests, benchmarks/tune_columns.py)
  int columns_scalar_lanes = 0;  // columns kernel, one column a thread: lanes a thread in place of kColumnsScalarTable's, the shape rule's cap kept (benchmarks/columns_lab)
  int no_gather = 0;      // 1: a plan of several steps is copied (as_rows) instead of gathered (tests: the same bits)
  int fused_finish = 0;   // -1: split rows and columns always finish in a second launch (tests and benchmarks: the same bits)
  int fused_row_blocks = 0;  // the most blocks of a rows step that finish in their last block (0: kFusedRowBlocks; benchmarks/fused_pair.py)
  int gather_staged = 0;  // gather step, rows form: 1 every run staged, 2 none (runs under kGatherDirectMinLanes copied, as before session 44)
  int exact_block = 0, exact_unroll = 0;  // method='exact': a compiled (block, unroll) pair (tests)
  int exact_bpr = 0;      // method='exact': blocks per row (tests)
  int exact_warp_min = 0;  // method='exact': the shortest row a warp takes (benchmarks/tune_exact_rows.py; 1 << 30: none)
  int rows_stripes = 0;   // engine rows (CUDA), one lane a thread: -1 one lane, 1 two lanes (t, t + W) a thread wherever possible (0: shapes.cu's rule)
  int short_lanes = 0;    // engine rows (CUDA), a short last lane: -1 element loads, 1 a whole lane's vectors, for every operator (0: family.cuh's rule; tests, benchmarks: the same bits)
  int rows_select = 0;    // engine rows (CUDA), argmax and argmin: -1 the tree kernels, 1 the strided warp form (select_rows_kernel) wherever possible (0: rows_select_pays; tests, benchmarks: the same bits)
  int columns_wide = 0;   // engine columns (CUDA), Welford one column a thread on 2- and 4-byte values: -1 the kernel held to 2 blocks an SM, 1 the one held to 3 wherever compiled (0: columns_wide_pays; tests, benchmarks: the same bits)
};

// The CUDA gather step (several reduced dims read through the dims, engine/plan.h) with a reduced
// innermost run of at least kGatherDirectMinLanes lanes takes that run's contiguous lanes as a
// row's (16-byte loads) and reads lanes that cross into the next run by elements
// (gather_rows_kernel). Measured with every such plan read that way (session 40, H100, the 71
// multi-step cases of the sweep's seed 21, graph, same run, gather time / copy time, geometric
// mean; benchmarks/sweep_ab.py on benchmarks/results/h100/s40_multidim/run3_every_plan_gathered/):
// runs under 1 lane 1.26x, 1-2 lanes 1.08x, 2-4 lanes 0.74x, 4-16 lanes 0.62x, 16 lanes and more
// 0.41x. Shorter runs were copied with the reduced dims last until session 44; they now take
// gather_staged_kernel (a block's values loaded coalesced into shared memory, lanes read from
// there): NOTES.md, session 44, has its measurement.
inline constexpr int kGatherDirectMinLanes = 2;
// The staged kernel tabulates a block's runs in shared memory (a 16 KB table for runs of 16 bytes
// and more); shorter runs are copied with the reduced dims last.
inline constexpr int kGatherStagedMinRunBytes = 16;

// Whether the gather step's rows form stages a run of `run` elements of `elem` bytes (the rule, or
// the hook's gather_staged: 1 every run that the table holds, 2 none).
inline bool gather_staged(int64_t run, int elem, const TuningOverrides& o) {
  if (o.gather_staged == 2 || run * elem < kGatherStagedMinRunBytes) return false;
  return o.gather_staged == 1 || run * elem < int64_t{kGatherDirectMinLanes} * 64;
}

struct AutoChoice {
  Method method;
  int block, unroll, grid;  // single_pass configuration; 0 = the kernel's default / one wave
  // single_pass: launch with programmatic dependent launch. It pays when our own kernels follow
  // each other; after a foreign kernel, which never triggers it, it can cost time (tune.py times
  // both, interleaved with a foreign kernel, and keeps the faster).
  bool pdl = true;
};

struct TuningEntry {
  int min_cc;       // compute capability (major*10+minor) the row applies from
  DType dtype;      // DType::Count = any dtype
  int64_t max_n;    // the row applies to inputs of at most this many elements
  AutoChoice choice;  // inside CUDA graph capture: the fastest GPU time
  // Eager calls: host time counts too. CUB's dispatch costs about 10 us of host time per call
  // (occupancy queries, two launches, a workspace), far more than its GPU-time lead at the sizes
  // where graph timing prefers it, so eager calls take the best single_pass configuration.
  AutoChoice eager;
};

// First matching row wins: for one dtype, rows go by increasing max_n.
inline constexpr TuningEntry kTuningTable[] = {
#include "tuning/tuning_sm90.inc"
    // Every other architecture and size: one launch, 512 threads, 4 x 16-byte loads in flight per
    // thread, one wave of blocks (the H200's best configuration at 2^28 and above for most dtypes).
    {0, DType::Count, INT64_MAX, {Method::SinglePass, 512, 4, 0}, {Method::SinglePass, 512, 4, 0}},
};

// `captured`: the call is being captured into a CUDA graph (its host time is paid once).
inline AutoChoice choose_auto(DType dt, int64_t n, int cc, bool captured) {
  for (const auto& row : kTuningTable) {
    if (cc < row.min_cc) continue;
    if (row.dtype != DType::Count && row.dtype != dt) continue;
    if (n > row.max_n) continue;
    return captured ? row.choice : row.eager;
  }
  return {Method::SinglePass, 0, 0, 0};
}

// Lanes of 64 bytes per thread of an engine kernel, by element size, each entry with its
// measurement; elements of a size not listed take one lane.
struct LanesTuning {
  int elem_bytes;
  int lanes_per_thread;
  const char* measured;
};

template <size_t N>
inline int lanes_per_thread(const LanesTuning (&table)[N], int elem_bytes) {
  for (const auto& row : table)
    if (row.elem_bytes == elem_bytes) return row.lanes_per_thread;
  return 1;
}

// The engine's columns kernel (csrc/cuda/engine/reduce.cuh; its shape rule, columns_shape, is in
// csrc/cuda/engine/shapes.cu), by shape class: element size. (The
// lane structure has no free parameter; a column's length and width set the block shape by rule.)
// `lanes_per_thread`: lanes of 64 bytes of rows one thread sums, capped by the work available, where
// a thread reads 16-byte vectors (one column a thread: kColumnsScalarTable's scalar_lanes).
// Measured with benchmarks/tune_dims.py, interleaved graph timing, cold L2, 16-load kernel
// (benchmarks/results/h200/tune_dims_3.json): us for 1 lane against 4 per thread.
inline constexpr LanesTuning kDimsColumnsTable[] = {
    {1, 1, "not swept; as 2-byte elements (64 rows per thread)"},
    {2, 1, "H200 bfloat16, 1 vs 4 lanes: (4096,4096) d0 13.3 vs 18.2; (2^22,32) 76.5 vs 79.3; (64,2^20) 36.7 vs 39.0; "
           "(1024,16384) 12.2 vs 17.2; (256,2^16) 11.9 vs 17.0"},
    {4, 4, "H200 float32, 1 vs 4 lanes: (4096,4096) d0 27.1 vs 23.9; (2^22,32) 159.3 vs 152.2; (64,2^20) 80.6 vs 74.6; "
           "(1024,16384) 27.4 vs 22.3; (256,2^16) 25.0 vs 22.2"},
    {8, 4, "not swept; as 4-byte elements (32 rows per thread)"},
};

inline int dims_columns_lanes_per_thread(int elem_bytes) { return lanes_per_thread(kDimsColumnsTable, elem_bytes); }

// The batched operators' rows kernel (Welford, logsumexp, argmax on the engine,
// csrc/cuda/engine/reduce.cuh), by element size: the most lanes of 64 bytes one thread reduces before
// its block's tree, which the shape rule lowers to keep a wave of threads busy. 2 and 4 lanes issue
// all their loads first (kUp); 8 and 16 walk a register stack, lane by lane. Measured with
// benchmarks/tune_ops.py (benchmarks/results/h200/tune_ops.json, 2026-11-22 06:49 UTC, graph, us).
inline constexpr LanesTuning kOpsRowsTable[] = {
    {1, 1, "not swept; one lane (64 values) already fills the registers: 2 would spill"},
    {2, 2, "H200 bfloat16, 2 vs 1/4/8 lanes per thread: full 2^26 var_mean 50.2 vs 89.7/59.9/69.7, logsumexp 47.1 vs "
           "46.2/53.7/54.4, argmax 49.9 vs 48.8/55.0/59.2; (8192,8192) rows var_mean 45.1 vs 86.2/53.9/62.8"},
    {4, 1, "H200 float32, 1 vs 2/4/8 lanes per thread: full 2^26 var_mean 80.1 vs 87.1/84.9/136.9, logsumexp 66.9 vs "
           "83.0/84.1/93.5, argmax 72.2 vs 89.2/84.7/98.7"},
    {8, 2, "H100 float64, 2 vs 1/4/8 lanes per thread (session 41, tune_ops.py --set float64, "
           "benchmarks/results/h100/s41_validation/run6_tune_ops_float64): var_mean full 2^25 105.5 vs 129.3/106.9/207.8, "
           "(14691,2422) 166.5 vs 229.8/205.8/255.8, (8192,4096) 98.8 vs 127.5/100.2/196.2, (65536,512) 99.4 vs 113.2/100.8/185.1; "
           "logsumexp 170.3 vs 277.3/168.8/288.1, 257.6 vs 498.4/336.2/344.9, 163.1 vs 275.2/160.9/278.0, 163.2 vs "
           "255.0/141.4/277.5 (4 wins three by 1-15%, loses the 2422 rows by 30%)"},
};
// argmax and argmin (a compare-select merge, no division or exponential), where they differ from the
// table above; elements not listed here take the table above.
inline constexpr LanesTuning kOpsRowsSelectTable[] = {
    {8, 1, "H100 float64 argmax, 1 vs 2/4 lanes per thread (same run): full 2^25 93.8 vs 100.7/102.4, (14691,2422) "
           "118.6 vs 148.1/182.7, (8192,4096) 89.6 vs 95.0/97.4, (65536,512) 88.7 vs 96.5/100.0"},
};

// Welford (var, std, var_mean, std_mean) on 4-byte values, rows of at most this many lanes: 2 lanes
// a thread, not the table's 1. Measured on the H200 (session 61, benchmarks/columns_lab with
// LAB_KIND=rows, events, 256 MiB of rows one value short of whole lanes, 2 lanes against 1, two
// repeats within 1%; benchmarks/results/h200/s61/): 2-129 lanes 0.73-0.88x the time (20 lanes 0.52x
// against the rule's two stripes), 146 and 180 lanes 0.97-0.99x, aligned rows of 8 and 16 whole lanes
// 1.01-1.05x; 256 lanes 1.08x, 300-4096 lanes 1.1-1.2x and full reductions 1.0-1.2x, which keep one
// lane (the table's full 2^26 row above).
inline constexpr int64_t kWelford4ByteTwoLanesMaxLanes = 180;

// welford: the operator is Welford; lanes: the row's lanes of 64 bytes.
inline int ops_rows_lanes_per_thread(int elem_bytes, bool select, bool welford, int64_t lanes) {
  if (select)
    for (const auto& row : kOpsRowsSelectTable)
      if (row.elem_bytes == elem_bytes) return row.lanes_per_thread;
  if (welford && elem_bytes == 4 && lanes <= kWelford4ByteTwoLanesMaxLanes) return 2;
  return lanes_per_thread(kOpsRowsTable, elem_bytes);
}

// The engine's coarsening floors (csrc/cuda/engine/shapes.cu): a thread takes more lanes only while
// the work still gives each SM at least this many threads. They are not occupancies: the engine's
// grids cover the data (one block per group of rows or per tile, each with a fixed share), so
// residency does not size them, and these floors only keep coarsening from starving the SMs. Set
// with the kernels (NOTES.md issues 10 and 14), not swept since: the lanes tables above were swept
// under them.
// method="exact", its value-independent paths (csrc/cuda/engine/exact.cu: the binned path of
// float32 and bfloat16 rows, the chunked one of float64, the counted runs of float16): block, 16-byte
// loads in flight per thread, and the shortest row they take. Their grid is one wave (occupancy, set
// by the shared memory per 128 threads: 32 KiB of bins for float32 and bfloat16, six blocks per SM;
// 66 KiB of chunks for float64, three, but two at its unroll, below; none for float16). Block and
// unroll were not swept for 2- and 4-byte values: (128, 4) is the first configuration built
// (NOTES.md, issue 22). The shortest row, by the size of a value (lab timings on the H200, session
// 38, NOTES.md issue 22 part 4): 2- and 4-byte values from 2^14, where the checked float64 path
// (exact_kernel) first needs more than one block and a workspace; from 2^14 to 2^20 values the
// value-independent paths took 9.2-11.6 us against 11.5-12.7 us on normal float32 data, the same
// within 0.7 us on bfloat16, 0.6-1.0 us less on float16, and 3-17x less on data over the whole
// exponent range. float64 from 2^22: below it the chunked path costs 2-5 us
// more than the checked one on benign data (13.5-19.4 us against 10.7-14.6), though 3-38x less on
// the whole range.
inline constexpr int kExactBinnedBlock = 128;
inline constexpr int kExactBinnedUnroll = 4;
// float64's chunked path loads this many times the configuration's vectors a sweep: 16 of 16 bytes a
// thread in (128, 4). Its occupancy is set by its chunks (66 KiB of shared memory a block of 128), so
// only the unroll raises the bytes in flight; at 4 the kernel takes 192 registers and two blocks an SM
// (forcing three spilled and lost: 1.31 at 2^28). Lab, H200, session 57 (NOTES.md), float64 exact /
// plain read of the same bytes on 6 data families, with the shorter add_bits of the same session:
// scale 1 1.30-1.33, 1.22-1.23, 1.18-1.19 at 2^24, 2^26, 2^28; scale 2 1.35-1.42, 1.23-1.26,
// 1.17-1.19; scale 4 1.28-1.38, 1.10-1.13, 1.02-1.04 (a NaN every 4096 values: 1.40, 1.18, 1.10).
// float32, bfloat16 and float16 at unroll 8 were slower than at 4 (float32 2^26 1.11 -> 1.22).
#ifndef RK_LAB_CHUNKED_UNROLL_SCALE
inline constexpr int kExactChunkedUnrollScale = 4;
#else
inline constexpr int kExactChunkedUnrollScale = RK_LAB_CHUNKED_UNROLL_SCALE;  // the exact lab's variants (LAB_VARIANTS) only
#endif
// bfloat16's binned grid: at most this many threads an SM, four blocks of 128 (its kernel's
// occupancy allows six, by its 32 KiB of bins a block). Each block clears, sums and posts 64 bins (67
// words), and six blocks an SM clear 192 KiB of shared memory before their first value (0.8 us at 128
// B a clock; the blocks that start last end last). Lab, H200, session 58 (NOTES.md;
// benchmarks/results/h200/s58/run8_lab_grid), exact's event time with the grid forced to 528 blocks
// (four an SM) against the default 792 in the same call, four pairs a size (two calls, two families):
// 2^24 0.3-1.1 us less, 2^26 0.2-2.5 us less, 2^28 1.7-3.1 us less (136.4-137.9 against
// 139.5-140.3); 400 blocks (three an SM, some four) lost at 2^26 (46.3-47.1 us). float32 (the same 32
// KiB of bins, twice the bytes a value) was unchanged at four (2^26 71.9-73.1 us either way), so it
// keeps the occupancy's six. The benchmark of record (run 10): bfloat16 1.0, 1.7 and 2.4 us less at
// 2^24, 2^26 and 2^28 (graph).
inline constexpr int kExactBinnedBf16ThreadsPerSm = 512;
inline constexpr int64_t exact_binned_min_values(int elem_bytes) { return elem_bytes == 8 ? int64_t(1) << 22 : int64_t(1) << 14; }
// The share of a long row's units that the value-independent block kernels leave to a pool (exact.cu,
// RowUnits): 1 / kExactPoolShare, taken by whichever blocks are done with their static units. The
// static split made a row wait on its slowest block: the last block's values ended 1.5-3 us after
// the median's at 2^24 values and 4.6-13.5 us at 2^26 (H200, session 45, NOTES.md issue 22 part 6).
inline constexpr int kExactPoolShare = 4;
// Units a block takes from the pool at once (one atomic, asked for this many units ahead), for units
// of kExactBinnedUnroll vectors a thread: a run is 16 vectors a thread. float64's units are
// kExactChunkedUnrollScale times larger, so its runs hold fewer units (exact.cu's kPoolRun), at least
// two (run j is asked for at the start of unit fixed + (j - 1) kRun and read at the end of unit
// fixed + j kRun - 2, which must not come first). With runs of 4 of its 16-vector units, a block
// that took the last run committed to about 7.5 us of its share of the bandwidth at 2^24 float64
// values (session 57).
inline constexpr int kExactPoolRun = 4;
// Rows below exact_binned_min_values of float32, bfloat16 and float16, several rows: a warp a row
// (exact.cu's warp_rows_kernel, sums; float16's partial words too) from this length up; shorter
// rows keep the checked path. Measured on the final code (benchmarks/tune_exact_rows.py, H200,
// session 42 run 7: benchmarks/results/h200/exact_s42/tune_exact_rows.json; 2^25 values in rows of
// 64 to 16383, graph, warp / checked path): float32 0.65-0.90 on normal data, 0.51-0.73 gradient,
// 0.03-0.15 whole range; float16 0.48-0.86 on every family; bfloat16 1.13-1.55 on normal data (the
// checked path's exact float32 pre-sums of 8 values), 0.73-1.34 gradient, 0.04-0.22 whole range.
// The warp's cost does not depend on the values (gradient and whole-range rows take the same time);
// it loses only on benign bfloat16, by at most 1.55x, where the checked path loses up to 33x on
// whole-range data: from the shortest measured length up. (H100 runs 2-6 of the same session, on
// earlier ends of the warp, gave the same ordering.)
inline constexpr int64_t kExactWarpRowsMinValues = 64;

inline constexpr int kRowsCoarsenThreadsPerSm = 1024;

// Two stripes (csrc/cuda/engine/shapes.cu, rows_step_shape): a row of `lanes` lanes of one lane a
// thread on W = pow2ceil(lanes) threads instead runs on W / 2, thread t taking lanes t and t + W / 2,
// where it pays. Measured on the H200 (session 55, NOTES.md: the sweep's 32 rows cases where stripes
// can apply, every case striped against none, and rows_fill.py on 64 MiB rows 16 bytes short; graph,
// cold L2; striped / not):
// - the grid must keep a full SM's threads on every SM after halving: below one such wave striped
//   rows lost by more than 2% in 14 of 20 cases (vector_norm rows of 5 lanes 1.09-1.10, sum int32
//   of 7 lanes 1.34, var_mean float16 of 31 lanes 1.31, sum bfloat16 of 149 lanes 1.33) and gained
//   in 4 (int8 rows of 2 and 3 lanes 0.79-0.90, var_mean float32 of 40 lanes 0.88): a thread's
//   second lane, read after its first, is latency that few warps cannot hide;
// - above it, rows of W <= 64 threads gained wherever at most 7/8 of the threads were busy: 17 lanes
//   0.65-0.86, 25-27 lanes 0.90-0.98, 33 lanes 0.91-0.99, 38 lanes 0.90, 11 lanes (int8) 0.92; rows of
//   W >= 128 gained for the batched operators (argmax 0.84-0.94 at 75, 136 and 146 lanes) and lost
//   for the others at 75 and 136 lanes (sum, mean, amax 1.07-1.09; vector_norm bfloat16 66 lanes
//   1.06, mean float64 93 lanes 1.03), gaining in others (mean float16 75 lanes 0.95, count_nonzero
//   bfloat16 180 lanes 0.96): mixed, so only the batched operators stripe there, and only below
//   3/4 busy.
// Session 59: every figure above was measured against a one-lane kernel that the stripes' own
// registers had slowed (they were compiled into it; now rows_kernel's kStriped instantiation).
// Against the mended kernel (H200, the sweep's rows cases of seed 21, rule / none, one build;
// benchmarks/results/h200/s59/run4_build_tests_stripes_ab/) the rule gives 0.998 in geometric mean;
// its W <= 64 cases still gain (count_nonzero float64 of 38 lanes 0.79, argmax float32 of 25 lanes
// 0.88), but its one W >= 128 case loses (argmax float64 of 146 lanes 1.08).
// Session 60 refit the W >= 128 branch (H200, rows_fill.py --old-stripes: 256 MiB of rows one value
// short of 65, 75, 96, 129, 136, 146 and 180 lanes, the rule, which striped all of them, against one
// lane a thread, same run; benchmarks/results/h200/s60/run_b_build_tests_sweep_rows_fill/rows_fill/):
// argmax float32 gained at every length (0.85-0.97), argmax float64 lost (1.01-1.10), var_mean
// float32 lost 1.18-1.35 and logsumexp float32 1.04-1.18 (the float64 Welford and logsumexp and the
// 16-bit operators take two lanes a thread there, so never stripe). So above 64 threads only argmax
// and argmin (`select`) on 4-byte values stripe (int32 with float32, unmeasured); 1-byte argmax,
// unmeasured, does not.
inline constexpr int kStripesThreadsPerSm = 2048;
inline bool rows_stripes_pay(int64_t rows, int64_t lanes, int W, int elem_bytes, bool select, int num_sms) {
  if (rows * (W / 2) < static_cast<int64_t>(num_sms) * kStripesThreadsPerSm) return false;
  return W <= 64 ? lanes * 8 <= int64_t{W} * 7 : select && elem_bytes == 4 && lanes * 4 <= int64_t{W} * 3;
}
// argmax and argmin rows by the strided warp form (select_rows_kernel, csrc/cuda/engine/reduce.cuh;
// their result does not depend on the order the values meet): W threads a row, the power of two at
// or above lanes / kSelectRowsLanes, at most 32; thread t visits lanes t, t + W, ... Where the rows
// give every SM kRowsCoarsenThreadsPerSm threads (fewer, longer rows keep the tree kernels, which
// split a row over blocks) and have at least kSelectRowsMinLanes lanes (2-byte values:
// kSelectRowsMinLanes2Byte). 2-, 4-
// and 8-byte values. Measured on the H200 (session 61, benchmarks/columns_lab, LAB_KIND=rows, 256 MiB
// of rows one value short of whole lanes, two repeats, against the tree kernels' rule, the same
// bits in every case; benchmarks/results/h200/s61/): float32, float64 and int32 at 12-400 lanes
// 0.51-0.83x the time (146 lanes: 1.17-1.19x a read of the bytes, was 2.1-2.3x), at 2 lanes
// 0.69-0.83; bfloat16 and float16 at 4-400 lanes 0.59-0.90x; losses: int32 at 4 and 8 lanes 1.02-1.03x,
// 16-bit at 2 lanes 1.06x (hence their 4). 1024 and 4000 lanes (the tree's split rows) untouched.
inline constexpr int kSelectRowsLanes = 4;
inline constexpr int64_t kSelectRowsMinLanes = 2, kSelectRowsMinLanes2Byte = 4;
inline int select_rows_threads(int64_t lanes) {
  int W = 1;
  while (W < 32 && int64_t{W} * kSelectRowsLanes < lanes) W *= 2;
  return W;
}
inline bool rows_select_pays(int64_t rows, int64_t lanes, int elem_bytes, int num_sms) {
  if (elem_bytes < 2 || lanes < (elem_bytes == 2 ? kSelectRowsMinLanes2Byte : kSelectRowsMinLanes)) return false;
  return rows * select_rows_threads(lanes) >= static_cast<int64_t>(num_sms) * kRowsCoarsenThreadsPerSm;
}

inline constexpr int kColumnsCoarsenThreadsPerSm = 512;
// The columns kernel's blocks per SM below which its shape rule makes smaller blocks (more of them)
// rather than leave SMs idle: a batch of short R and narrow C (argmax int8 (932, 24, 116) over dim 1)
// packed 32 batches a block into 30 blocks, 30 of 132 SMs.
inline constexpr int kColumnsSpreadBlocksPerSm = 2;

// The columns kernel reads one column a thread (reduce.cuh's ColumnLoads::Scalar) where its 16-byte
// vectors would give fewer threads an SM than the row's threshold (vector_threads: columns /
// (16 / elem) x lanes of 64 bytes x batches), and then `scalar_lanes` lanes of 64 bytes a thread
// (capped, as the vectors' lanes are, so that every SM keeps kColumnsCoarsenThreadsPerSm threads of
// work). One row per (element size, alignment, batched operator: Welford, logsumexp, argmax),
// every combination present (checked below). Measured in session 43 with benchmarks/columns_lab on
// the 487 single-columns-step cases of the sweep's draws (seeds 21-24, benchmarks/columns_lab/
// sweep_cases.txt), H100, events, inputs rotated over 512 MiB: each case with vectors (the vector
// lanes' rule) and with one column a thread at 1, 2 and 4 lanes; per row the lanes and threshold
// (0, 32, 64, ..., 32768, always) of least summed log-regret against the fastest of the four
// (benchmarks/results/h100/columns_lab_s43/sweep_cases_run4.txt). Fitted on half the cases, the
// rule's time on the other half was 0.845x the previous rule's (0.888x from the kernel change
// alone, 0.807x the best of the four each time). `measured`: the row's cases, this rule's time /
// the previous build's (session 42's kernel and table), geometric mean, the same for vectors alone,
// and the regret against the fastest of the four.
// The previous table (session 39, benchmarks/tune_columns.py, fitted with one lane a one-column
// thread) had no 1-byte aligned row and no 4- or 8-byte batched rows.
// Since session 63 the 2-byte batched rows' thresholds serve argmax alone: Welford and logsumexp on
// 2-byte values read one column a thread at every size (reduce.cuh, columns_vectors_hold_lane: a
// vector thread's 16 rows are half their lane), as these rows already sent them below 16384 vector
// threads an SM (about 1.1 GB of input on 132 SMs).
// Session 60 (H200, the same lab, `measured` after the semicolon): the 4-byte non-batched rows take 2
// lanes, not the H100's 1. On the H200 one lane of 16 rows a thread left large one-batch columns at
// 1.3-1.6x a read of their bytes (ncu, sum float32 R=1795 C=41070: about 315 warp instructions a
// warp's 16 rows of 32 columns, DRAM 65% busy): the block's place, tree, partials and finish cost
// more than its loads. Measured on the 91 float32 and int32 non-batched cases of sweep_cases.txt,
// the table at 1, 2 and 4 lanes, each twice, interleaved (benchmarks/results/h200/s60/
// lab4_scalar_lanes/, columns_lab/repeat_ab.py); 65 cases change shape (the cap keeps the rest at one
// lane): 0.957 at 2 lanes. 4 lanes gave 0.953 but lost up to 1.10 on narrow columns (mean float32
// (349, 3825, 15) over dim 1, 1.10 in both repeats).
struct ColumnsScalarRow {
  int elem_bytes;
  bool aligned;
  bool batched;                  // Op::kBatched operators (Welford, logsumexp, argmax)
  int64_t below_threads_per_sm;  // kAlways: every shape
  int scalar_lanes;              // lanes of 64 bytes a one-column thread reduces (1, 2 or 4)
  const char* measured;          // time / the previous build's, geometric mean; vectors alone / the previous build's
};
inline constexpr int64_t kAlways = INT64_MAX;
inline constexpr ColumnsScalarRow kColumnsScalarTable[] = {
    {1, false, false, 4096, 1, "25 cases: 0.68 (vectors alone 1.85), regret 1.031"},
    {1, false, true, 16384, 2, "11 cases: 0.69 (vectors alone 2.00), regret 1.041"},
    {1, true, false, 256, 1, "2 cases: 0.91 (vectors alone 0.99)"},
    {1, true, true, 4096, 2, "2 cases: 0.90 (vectors alone 1.00)"},
    {2, false, false, 16384, 4, "85 cases: 0.74 (vectors alone 1.59), regret 1.036"},
    {2, false, true, 16384, 4, "73 cases: 0.78 (vectors alone 2.14), regret 1.037"},
    {2, true, false, 128, 4, "21 cases: 0.92 (vectors alone 0.93), regret 1.042"},
    {2, true, true, 16384, 4, "19 cases: 0.75 (vectors alone 1.03), regret 1.078"},
    {4, false, false, 32768, 2, "66 cases: 0.90 (vectors alone 1.10), regret 1.031; 2 lanes / 1, H200: from 40 us 25 cases "
                                "0.932 (0.72-1.01), under 40 us 25 cases 0.983 (0.87-1.09)"},
    {4, false, true, 32768, 4, "33 cases: 0.92 (vectors alone 1.41), regret 1.039"},
    {4, true, false, 32768, 2, "25 cases: 0.91 (vectors alone 0.96), regret 1.029; 2 lanes / 1, H200: from 40 us 7 cases "
                               "0.914 (0.80-0.98), under 40 us 8 cases 0.995 (0.89-1.07)"},
    {4, true, true, 32768, 4, "21 cases: 0.90 (vectors alone 1.03), regret 1.061"},
    {8, false, false, kAlways, 1, "24 cases: 0.95 (vectors alone 1.01), regret 1.033"},
    {8, false, true, kAlways, 4, "17 cases: 0.97 (vectors alone 1.16), regret 1.027"},
    {8, true, false, kAlways, 1, "34 cases: 0.98 (vectors alone 1.09), regret 1.040"},
    {8, true, true, 32768, 4, "29 cases: 0.94 (vectors alone 1.13), regret 1.041"},
};
// Every (element size 1, 2, 4, 8; aligned; batched) has exactly one row: a row left out fails here.
constexpr bool columns_table_complete() {
  for (int e = 1; e <= 8; e *= 2)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        int n = 0;
        for (const ColumnsScalarRow& r : kColumnsScalarTable) n += r.elem_bytes == e && r.aligned == (a == 1) && r.batched == (b == 1);
        if (n != 1) return false;
      }
  return true;
}
static_assert(columns_table_complete(), "kColumnsScalarTable needs one row per (element size, aligned, batched)");
// The row of a shape class; nullptr for element sizes not in the table (complex128's 16 bytes: one
// column a vector already), which keep vectors.
inline const ColumnsScalarRow* columns_row(int elem_bytes, bool aligned, bool batched) {
  for (const ColumnsScalarRow& r : kColumnsScalarTable)
    if (r.elem_bytes == elem_bytes && r.aligned == aligned && r.batched == batched) return &r;
  return nullptr;
}
// Whether a shape of the row's class reads one column a thread (r null: vectors).
inline bool columns_scalar(const ColumnsScalarRow* r, int64_t vector_threads, int num_sms) {
  return r && (r->below_threads_per_sm == kAlways || vector_threads < r->below_threads_per_sm * num_sms);
}


// Welford's one-column columns (var, std, var_mean, std_mean over a strided R: reduce.cuh's
// columns_kernel with ColumnLoads::Scalar) have two builds: one held to 2 blocks an SM (86
// registers), one to 3 (kWide: 80 registers and 20 bytes of spill stores; ptxas -v, sm_90, float32
// and bfloat16 alike; 4 bytes in the fused-finish build). At 2, ncu gave var_mean float32 (153, 188020)
// over dim 0 25% occupancy and DRAM 31% busy (H200, session 61). Measured with benchmarks/columns_lab
// on the sweep's batched one-column cases (seeds 21-24), builds at 2 and 3 blocks side by side, two
// repeats, the same bits in every case (benchmarks/results/h200/s61/lab6_columns_min_blocks/ and
// lab7_16bit_min_blocks/; 3 / 2 blocks):
//  - bfloat16 and float16 var_mean (42 cases): 0.79-0.90 from 30 us, 0.81-1.05 under it (the losses
//    1.03-1.05 at 15-29 us): 3 blocks at every size;
//  - float32 var_mean (12 cases): 0.80-0.97 on the 7 grids of 1226-37088 blocks (153 x 188020: 0.86),
//    but 1.05-1.22 on 4 of the 5 grids of 308-508 blocks (12-19 us; R = 32, C = 78638 0.93): 3 blocks
//    from kColumnsWideBlocksPerSm4Byte blocks an SM (1056 on 132 SMs), between the two groups;
//  - argmax and logsumexp changed little (float32 and int32 geometric mean 1.00, 16-bit median 0.99):
//    they keep one build; float64 Welford is unmeasured and keeps one build (2 blocks).
inline constexpr int64_t kColumnsWideBlocksPerSm4Byte = 8;
inline bool columns_wide_pays(int elem_bytes, int64_t blocks, int num_sms, const TuningOverrides& o) {
  if (o.columns_wide != 0) return o.columns_wide > 0;
  return elem_bytes == 2 || (elem_bytes == 4 && blocks >= kColumnsWideBlocksPerSm4Byte * num_sms);
}

}  // namespace rk
