// Planted faults: the bugs the test suite must catch. A build compiles at most one of them, chosen
// by REDUCEKIT_FAULT=<name> at build time (setup.py turns it into -DRK_FAULT=<index>); a normal
// build has none. benchmarks/faults.py builds each fault and runs the ordinary suite against it,
// reporting caught or missed (benchmarks/results/h200/faults.md).
//
// Keep the list open: each new kernel adds the faults its tests must catch. Torch-free, CUDA-free:
// included by device code, by the host launchers and by the torch op (which reports the compiled
// fault as reducekit._C.fault).
#pragma once

namespace rk {

// X(id, name, what it plants)
#define RK_FAULTS(X)                                                                                     \
  X(None, "none", "no fault: the normal build")                                                          \
  X(DropLastPartial, "drop_last_partial", "single_pass: the last block's combine skips block gridDim-1's partial") \
  X(FinishDropLast, "finish_drop_last", "finish_partials (two-launch methods): the last partial is not combined") \
  X(DropVecTail, "drop_vec_tail", "vector kernels: the scalar tail after the 16-byte body is not read")  \
  X(SkipCounterReset, "skip_counter_reset", "single_pass: the last block does not reset its stream's counter") \
  X(ReadPastEnd, "read_past_end", "vector kernels: one element past the end of the input is summed")     \
  X(Float32Acc, "float32_acc", "single_pass (auto): float32 input accumulates in float32, not float64") \
  X(ArrivalOrder, "arrival_order", "single_pass: partials combined in the order blocks arrive, not by index") \
  X(WriteInput, "write_input", "single_pass: each block writes its partial into the input")              \
  X(WarpPostPrecedence, "warp_post_precedence",                                                          \
    "block_reduce: `tid & 31 == 0` (seed 000's precedence bug) decides which lane posts a warp sum")      \
  X(Index32, "index32", "grid-stride loops index with 32-bit int")                                       \
  X(SkipInit, "skip_init", "atomic methods: the result is not set to the identity before the atomics")   \
  X(WrongIdentity, "wrong_identity", "sum's monoid (red::SumM, the gallery's SumOp) has identity 1, not 0 (tree padding and empty slots add 1)") \
  X(CpuDropTail, "cpu_drop_tail", "CPU auto: the elements after the last 16-lane group are dropped")   \
  X(DimsDropLaneTail, "dims_drop_lane_tail", "dims rows/columns: a lane shorter than 64 bytes loses its last value") \
  X(DimsColumnTail, "dims_column_tail", "dims columns: the last C % V columns (past the last 16-byte vector) are not read") \
  X(DimsFinishDropLast, "dims_finish_drop_last", "dims second phase: the last block partial of a split row or column is lost") \
  X(OutMapSwap, "out_map_swap", "CUDA outputs of permuted layouts: written in the kernels' order (the kept dims' memory order) into the contiguous result") \
  X(FusedFinishDropLast, "fused_finish_drop_last", "one-launch finish of split rows and columns (the group's last block): the last partial is lost") \
  X(CpuDimsLastChunk, "cpu_dims_last_chunk", "CPU dims columns: the last chunk of rows is not added") \
  X(ExactDropCarry, "exact_drop_carry", "exact: normalizing the limbs loses every negative carry (borrow)") \
  X(ExactTruncate, "exact_truncate", "exact: the final rounding truncates instead of rounding to nearest even") \
  X(ExactSpillLow, "exact_spill_low", "exact: a value spilled into the limbs loses its low 32-bit piece") \
  X(ExactDropBlock, "exact_drop_block", "exact CUDA: the row's last block's partial is lost (its float64 sum; on the binned path its counts)") \
  X(ExactPairMidpoint, "exact_pair_midpoint", "exact CUDA: a spill-free float32 result ignores the pair's error at a midpoint") \
  X(ExactBinShift, "exact_bin_shift", "exact CUDA binned path: values whose float32 bit 16 (bfloat16's last significand bit) is set go one bin up (a wrong unit)") \
  X(ExactNoRecount, "exact_no_recount", "exact CUDA binned path: a block holding inf or NaN neither flags it (sums) nor recounts (partial words): the last bin stays non-finite") \
  X(OpsWrongIdentity, "ops_wrong_identity", "reduction ops: max's identity is 0, not the lowest value (amax pads idle lanes with 0)") \
  X(ArgmaxLastTie, "argmax_last_tie", "argmax/argmin: a tie goes to the later index, not the first") \
  X(WelfordRunProduct, "welford_run_product", "var/std: a whole run's shifted mean (cnt == N, s * 2^-log2(N) in place of s / N) takes 1 / 2N") \
  X(WelfordNoCorrection, "welford_no_correction", "var/std: Chan's combine drops the mean-difference term d^2*na*nb/n") \
  X(RowsLanesDropLast, "rows_lanes_drop_last", "operators' rows kernel, several lanes per thread: a thread's last lane is the identity") \
  X(TreeSmemOddSlot, "tree_smem_odd_slot", "shared-memory block tree (costly operators): the last level takes slot 0 twice, dropping slot 1") \
  X(RowsMisalignedVectors, "rows_misaligned_vectors", "rows kernel: a whole lane that is not 16-byte aligned is read from the granule below it (the realignment skipped)") \
  X(ExactChunkShift, "exact_chunk_shift", "exact CUDA chunked path (float64): values with an odd last significand bit go one chunk up (a wrong unit)") \
  X(ExactNoCarry, "exact_no_carry", "exact CUDA chunked path (float64): a thread never carries its chunks inside its loop (they may overflow)") \
  X(ExactHalfField, "exact_half_field", "exact CUDA float16: the odd half of a word lands one place too low in the float64 (a wrong scale)") \
  X(ColumnsMisalignedVectors, "columns_misaligned_vectors", "columns kernel: a row of a column vector that is not 16-byte aligned is read from the granule below it (the realignment skipped)") \
  X(ExactHalfSpecial, "exact_half_special", "exact CUDA float16: a vector's inf/NaN test is skipped (a special reads as a finite value)") \
  X(ColumnsPackedBatch, "columns_packed_batch", "columns kernel, several batches per block: each pair of packed batches reads the other's rows") \
  X(ExactChunkSpecial, "exact_chunk_special", "exact CUDA chunked path (float64): a sweep's inf/NaN test is skipped (a special reads as a finite value)") \
  X(ExactBinCap, "exact_bin_cap", "exact CUDA value-independent paths: the grid (rows: blocks per row; columns: splits of the extent) ignores the per-thread (bfloat16 bins) and per-block (float16 counts) value caps") \
  X(ExactKeepWords, "exact_keep_words", "exact CUDA value-independent paths: the row's last block leaves the accumulator words it read (not zeroed for the next launch)") \
  X(CpuOpsJointHalf, "cpu_ops_joint_half", "CPU operators' AVX2 joint lanes (mean, amax, amin, vector_norm of float rows): each lane's second half of values is not entered") \
  X(CpuOpsTree16, "cpu_ops_tree16", "CPU operators' AVX2 joint lanes: the 16-lane tree pairs lane j with lane j + 8 (float64 accumulators: j + 4) at its first level") \
  X(CpuAvx512Tree, "cpu_avx512_tree", "CPU operators' AVX-512 16 lanes (rows of sum-like operators): the lanes' tree pairs lane k with lane k + 8 at its first level") \
  X(CpuAvx512LseTree, "cpu_avx512_lse_tree", "CPU logsumexp float32 and 16-bit rows in AVX-512 (16 lanes at once): the lanes' tree pairs lane k with lane k + 8 at its first level") \
  X(CpuAvx512LseColumns, "cpu_avx512_lse_columns", "CPU logsumexp columns in AVX-512 (16 adjacent float32 or 8 float64 columns at once): each column's max and sum leave out its last row") \
  X(CpuLseTileCombine, "cpu_lse_tile_combine", "CPU logsumexp columns, the tile's trees combined in AVX-512 vectors (16 float32 or 8 float64 columns at once): the combined max is the later subtree's, the earlier one's dropped") \
  X(CpuGatherCarry, "cpu_gather_carry", "CPU gather over several reduced dims: the odometer over a run's outer reduced digits counts the outermost first (pieces of a slice with three or more reduced runs read out of order)") \
  X(CpuColTree16, "cpu_col_tree16", "CPU operators' columns of a sum-like op, 16 lanes at once (joint_columns16): each lane's last row is not entered") \
  X(CpuShortRowsPad, "cpu_short_rows_pad", "CPU operators' short rows of a sum-like op (short_rows): the partial last lane is padded with 1.0, not +0.0") \
  X(CpuOpsExtremumNan, "cpu_ops_extremum_nan", "CPU amax/amin/vector_norm(+-inf) rows of float32/float64 in AVX2: a NaN met in the vector loop is forgotten") \
  X(CpuOpsExtremumZero, "cpu_ops_extremum_zero", "CPU amax/amin rows of float32/float64 in AVX2: a zero result keeps the vector max's zero, not the first zero's sign") \
  X(ColumnsCutBatch, "columns_cut_batch", "columns kernel, lanes read 8 rows at a time (misaligned, or wide accumulators): a whole batch of 8 loses its last row") \
  X(ColumnsScalarRow, "columns_scalar_row", "columns kernel, one column a thread: a batch's last row is read as its first row again") \
  X(ColumnsShortBatch, "columns_short_batch", "columns kernel, one column a thread: a last batch of 9 rows is read as a batch of 8 (its last row lost)") \
  X(ColumnsTileDivider, "columns_tile_divider", "columns kernel, the block's place: its batch is divided out of the tile index by the column tiles' divider, not the lane tiles'") \
  X(CpuExpLibm, "cpu_exp_libm", "CPU logsumexp: the scalar exponential is glibc's expf, not the polynomial the AVX2 lanes compute") \
  X(GatherCarry, "gather_carry", "CUDA gather step, rows form (several reduced dims, no copy): a lane that crosses into the next run of the innermost reduced dim reads one value past its run first") \
  X(GatherCarryColumns, "gather_carry_columns", "CUDA gather step, columns form (kept innermost dim, several reduced dims): a lane's piece runs one row past its run of the innermost reduced dim") \
  X(GatherStagedRun, "gather_staged_run", "CUDA gather step, staged form (innermost reduced runs under kGatherDirectMinLanes lanes, a block's values through shared memory): each run's last value is read from the place before it") \
  X(CpuLseTreePairs, "cpu_lse_tree_pairs", "CPU logsumexp float32 rows in AVX2: the vector tree of 16 lanes pairs lane j with lane j + 8 first, not with its neighbour") \
  X(CpuExpNoEdge, "cpu_exp_no_edge", "CPU float64 logsumexp in AVX2: CUDA's exp of 4 values keeps the fast formula at its edges (-inf, subnormal and overflowing results) instead of the scalar copy") \
  X(CpuLsePadZero, "cpu_lse_pad_zero", "CPU logsumexp rows in AVX2: a row's last, short block of lanes is padded with 0, not -inf") \
  X(CpuColumnsFirstRow, "cpu_columns_first_row", "CPU columns of mean/amax/vector_norm and the like in AVX2 (8 or 4 columns a vector): each lane's first row is not entered") \
  X(CpuIntExtremumTail, "cpu_int_extremum_tail", "CPU amax/amin rows of bool and integers in AVX2: the values after the last whole block of 4 vectors are not read") \
  X(CpuArgRunNan, "cpu_arg_run_nan", "CPU argmax/argmin rows in AVX2 (one run, two passes): a NaN met by the vectors of the first pass is forgotten") \
  X(CpuTileTreeLevel, "cpu_tile_tree_level", "CPU columns loop (TileTree, a tile's column trees level by level): a pushed lane result is stored at level 0 whatever its level") \
  X(ExactColumnsTail, "exact_columns_tail", "exact CUDA columns paths (float32, bfloat16, float16 over a strided run, read in place): a thread's rows after its last whole group of loads (8 or 16 rows) are not read") \
  X(ExactWarpRowsLane, "exact_warp_rows_lane", "exact CUDA short rows (a warp a row, float32 and bfloat16): the warp's bin sums leave one lane's bins out") \
  X(ExactWarpSticky, "exact_warp_sticky", "exact CUDA warp ends (warp_round_digits: a warp normalizing and rounding the digits of binned rows and of float64's chunk sums): the sticky bit of the digits below the top three is lost") \
  X(CpuJointTailPad, "cpu_joint_tail_pad", "CPU operators' contiguous lanes of a sum-like op in AVX2 (joint_lanes): the partial last lane of a run is padded with a 1.0 first") \
  X(CpuRowsJointLane, "cpu_rows_joint_lane", "CPU operators' rows of fewer than 8 whole lanes in AVX2 (lane l of 8 rows as one block): each row's last whole lane is lost") \
  X(RowsLogicalOrder, "rows_logical_order", "the copy with the reduced dims last (as_rows: CPU, and CUDA layouts the gather step does not take) puts them in their logical order, not by stride") \
  X(ExactPoolUnit, "exact_pool_unit", "exact CUDA value-independent rows (binned, chunked, float16 counts): a unit taken from the row's pool is read one unit low (the last static unit twice, the row's last unit never)") \
  X(FusedTicketEarly, "fused_ticket_early", "one-launch finish of split rows and columns: the group's second-to-last ticket, not its last, finishes the group (a partial may not be posted yet)") \
  X(ExactColumnsPairs, "exact_columns_pairs", "exact CUDA bfloat16 columns read as 4-byte words by pairs of threads (walk_pairs): the odd thread takes its partner's low half (the even column's value) of the even row's word in place of its own column's") \
  X(RowsShortLaneWhole, "rows_short_lane_whole", "engine rows, a short last lane read by a whole lane's 16-byte loads: every value of the loaded lane enters, the bytes past the row (the next row's values) included") \
  X(RowsStripeRoot, "rows_stripe_root", "engine rows on two stripes (lanes t and t + W a thread): the row's second half is dropped at the root combine") \
  X(RowsSelectPair, "rows_select_pair", "engine rows of argmax / argmin by the strided warp form: the second lane of each pair is lost") \
  X(CpuIntColumnsRow1, "cpu_int_columns_row1", "CPU amax/amin columns of bool and integers in AVX2 (whole columns, four vectors of a row at a time): the second row is not read") \
  X(CpuLseShortRows, "cpu_lse_short_rows", "CPU logsumexp rows of at most 8 lanes in AVX2 (several rows as the lanes of a block a lane, lse_short_rows): each row's last value is not read") \
  X(CpuFewRowsLane, "cpu_few_rows_lane", "CPU sum's columns of at most 16 rows in AVX2 (each column vector's lanes read from the rows and its tree built in registers, the empty lanes skipped: few_rows_chunk): row 1 is not read (its lane stays +0.0)") \
  X(ColumnsWideLastRow, "columns_wide_last_row", "engine columns, Welford's one-column build held to 3 blocks an SM (kWide): each lane of more than one row loses its last row") \
  X(ColumnsLaneHalves, "columns_lane_halves", "engine columns, one column a thread: Welford's and logsumexp's lane of 32 16-bit rows entered as two runs of 16, merged (session 62's order, not the rows kernel's and the CPU's one run)") \
  X(ColumnsReloadRow, "columns_reload_row", "engine columns, one column a thread: Welford's slow path (a run that overflows, underflows or holds inf or NaN, whose rows are read again from memory) reads the batch's first row in place of its last") \
  X(CpuArgColumnsTie, "cpu_arg_columns_tie", "CPU argmax/argmin columns in AVX2 (whole columns, rows in index order: arg_columns_whole): a value equal to the column's extreme so far takes its row (the last tie wins)")

enum class Fault : int {
#define RK_FAULT_ENUM(id, name, what) id,
  RK_FAULTS(RK_FAULT_ENUM)
#undef RK_FAULT_ENUM
      Count
};

struct FaultInfo {
  const char* name;
  const char* what;
};

inline constexpr FaultInfo kFaults[] = {
#define RK_FAULT_INFO(id, name, what) {name, what},
    RK_FAULTS(RK_FAULT_INFO)
#undef RK_FAULT_INFO
};

#ifndef RK_FAULT
#define RK_FAULT 0
#endif
static_assert(RK_FAULT >= 0 && RK_FAULT < static_cast<int>(Fault::Count), "RK_FAULT: no such planted fault");

inline constexpr Fault kFault = static_cast<Fault>(RK_FAULT);

// True in the build that plants fault `id` (a constant expression: `if constexpr (RK_FAULT_IS(X))`).
#define RK_FAULT_IS(id) (::rk::kFault == ::rk::Fault::id)

}  // namespace rk
