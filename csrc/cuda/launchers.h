// Launchers of the reduction kernels: the only interface between the torch-facing op and the
// torch-free CUDA code in csrc/cuda/**/*.cu. Host-only header (no CUDA device code, no torch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact.h"
#include "engine/plan.h"
#include "engine/op_desc.h"
#include "core/methods.h"
#include "tuning/tuning.h"

namespace rk {

// One reduction of a contiguous run of `n` elements of `dtype` at `in` (any element-aligned
// address: views at odd offsets are fine).
struct ReduceArgs {
  const void* in = nullptr;
  int64_t n = 0;            // > 0; empty inputs are handled by the caller without a launch
  DType dtype = DType::Float32;
  GalleryOp op = GalleryOp::Sum;  // the operator (methods that serve it: core/methods.h)
  void* out = nullptr;      // device pointer to one element, of out_dtype(method, dtype)
  void* workspace = nullptr;  // device memory of workspace_bytes(...) bytes, 256-byte aligned
  void* host_workspace = nullptr;  // pinned host memory of host_workspace_bytes(...) (host_final)
  cudaStream_t stream = nullptr;
  int device = 0;
  int num_sms = 1;
  int cc = 0;               // compute capability, major*10+minor
  bool pdl = true;          // single_pass: programmatic dependent launch where cc >= 90
  int slot = -1;            // single_pass: per-stream counter/partials slot, set by workspace_bytes
  // single_pass tuning; 0 picks the tuning-table value. Used by auto and the tuning harness.
  int block = 0, unroll = 0, grid = 0;
};

// The accumulator type of the gallery methods: int64 for bool and integers, float32 for 16-bit
// floats, the input type for float32 and float64.
DType acc_dtype(DType in);
// The dtype `ReduceArgs::out` points to for this method: the result dtype of torch.sum for
// single_pass (and auto), the accumulator dtype for every other method.
DType out_dtype(Method m, DType in);
// For single_pass this also claims the stream's counter slot (recorded in a.slot): call it
// before launch(), with the stream the launch will use.
size_t workspace_bytes(Method m, ReduceArgs& a);
size_t host_workspace_bytes(Method m, const ReduceArgs& a);
// Enqueues the reduction on a.stream. Never synchronizes, except for Method::HostFinal.
// Method::Auto must be resolved by the caller (see tuning/tuning.h) before calling.
cudaError_t launch(Method m, const ReduceArgs& a);

// single_pass configurations compiled in, as (block, unroll) pairs; others are an error.
bool single_pass_config_supported(int block, int unroll);
int single_pass_config_count();
void single_pass_config(int i, int* block, int* unroll);

// Test hooks of single_pass's per-stream counter slots: the number of slots counter_slot hands
// out per device (limit < 0 only queries; returns the previous limit), and how many are taken.
int single_pass_set_slot_limit(int limit);
int single_pass_slots_used(int device);

// The read-bandwidth probe (read_probe.cu): reads nvec 16-byte vectors at the 16-byte aligned v;
// `sink` (one zeroed device word) keeps the loads live. unroll in {4, 8, 16}.
cudaError_t read_probe_launch(const void* v, int64_t nvec, unsigned long long* sink, int block, int unroll, int waves,
                              int num_sms, cudaStream_t stream);


// One step of any reduction, sum included, on the engine (cuda/engine/reduce.cuh); engine/op_desc.h
// says what a step computes and writes.
struct OpStep : OpDesc {
  void* workspace = nullptr;  // op_step_workspace(...) bytes
  // kGroupCounters zeroed counters of the stream (stream_scratch), for a one-launch finish
  // of split rows and columns (eng::FusedFinish), or nullptr: two launches.
  unsigned int* counters = nullptr;
  cudaStream_t stream = nullptr;
  int cc = 0, num_sms = 0;
  bool pdl = false;
  TuningOverrides tuning;  // the tuning harness's (all zero: the rules)
};
size_t op_step_workspace(const OpStep& a);
cudaError_t op_step_launch(const OpStep& a);
// One family of operators (core/op_table.h's family column) per .cu file (compiled in parallel);
// op_step_launch routes to them. With `ws` non-null they only write the step's workspace bytes there.
cudaError_t family_sums(const OpStep& a, size_t* ws);
cudaError_t family_moments(const OpStep& a, size_t* ws);
cudaError_t family_norms(const OpStep& a, size_t* ws);
cudaError_t family_extrema(const OpStep& a, size_t* ws);
cudaError_t family_logic(const OpStep& a, size_t* ws);

// method="exact" (exact.cu): correctly rounded sums of `rows` contiguous rows of `len` values of
// a float dtype, each written as one value of out_fmt, or (words) as exact::kExactWords int64.
struct ExactArgs {
  const void* in = nullptr;
  int64_t rows = 1, len = 0;
  DType dtype = DType::Float32;
  void* out = nullptr;
  exact::OutFmt out_fmt = exact::OutFmt::Single;
  bool words = false;
  void* workspace = nullptr;    // exact_workspace(...) bytes
  unsigned int* counter = nullptr;  // rows == 1: the stream's counter (stream_counter_at); else a memset one
  long long* acc = nullptr;         // rows == 1: the stream's accumulator words (exact_stream_acc); else a memset workspace
  cudaStream_t stream = nullptr;
  int num_sms = 1, cc = 0;
  bool pdl = true;
  TuningOverrides tuning;  // tests: exact_block, exact_unroll, exact_bpr (all zero: the rule)
};
// kExactAccWords int64 words of stream_slot's slot on a device (owned by a stream as its counter
// is), zero between launches (the binned and chunked paths' last block zeroes them); nullptr for a
// slot beyond the static ones (then a row's words come from the workspace and a memset).
inline constexpr int kExactAccWords = 8 * 72;
long long* exact_stream_acc(int device, int slot);
size_t exact_workspace(const ExactArgs& a);
cudaError_t exact_launch(const ExactArgs& a);
// Rounds `rows` rows of shard words into out_fmt values.
cudaError_t exact_round_launch(const int64_t* words, int64_t rows, void* out, exact::OutFmt o, cudaStream_t stream);
// method="exact" over the middle dim of a contiguous (outer, extent, inner) tensor, read in place
// (exact.cu's columns paths): outer * inner values of out_fmt, dense in (outer, inner) order. A
// memset of the workspace's words, the blocks' counts added into them, a rounding of each output.
struct ExactColumnsArgs {
  const void* in = nullptr;
  int64_t outer = 1, extent = 1, inner = 1;
  DType dtype = DType::Float32;
  void* out = nullptr;
  exact::OutFmt out_fmt = exact::OutFmt::Single;
  void* workspace = nullptr;  // exact_columns_workspace(...) bytes
  cudaStream_t stream = nullptr;
  int num_sms = 1, cc = 0;
  bool pdl = true;
  TuningOverrides tuning;  // tests: exact_bpr forces the splits of the extent (raised to the exactness caps)
};
// Whether the columns paths take this dtype (float32, bfloat16, float16) and extent.
bool exact_columns_supported(DType dtype, int64_t extent);
size_t exact_columns_workspace(const ExactColumnsArgs& a);
cudaError_t exact_columns_launch(const ExactColumnsArgs& a);
// Whether (block, unroll) is a compiled configuration of exact's kernel (or 0, 0: the rule).
bool exact_config_supported(int block, int unroll);
// The slot of a stream (device, s), or -1 when every slot is taken; the slot's counter, which
// single_pass's last-block finish uses (zero between kernels; a kernel that takes it resets it when
// done), nullptr for -1.
int stream_slot(int device, cudaStream_t s);
unsigned int* stream_counter_at(int device, int slot);
// A stream's static scratch for the engine's steps (one slot lookup): the counters of one-launch
// finishes (eng::FusedFinish: kGroupCounters of them, zero between kernels, each group's last
// block resetting its own; nullptr past the first kGroupSlots slots) and the slot's static
// partials (single_pass's, partial_bytes; nullptr past its first 128 slots), which a step whose
// partials fit takes instead of a caching-allocator workspace (host time of an eager call). The
// stream's kernels run one after another (under PDL a kernel touches global memory only after its
// grid dependency wait), so they never use either at the same time.
constexpr int kGroupSlots = 64;
constexpr int kGroupCounters = 4096;
struct StreamScratch {
  unsigned int* counters = nullptr;
  void* partials = nullptr;
  size_t partial_bytes = 0;
};
StreamScratch stream_scratch(int device, cudaStream_t s);

// Per-family entry points (one .cu file each; launch() routes to them).
size_t atomics_workspace(Method m, const ReduceArgs& a);
cudaError_t atomics_launch(Method m, const ReduceArgs& a);
size_t trees_workspace(Method m, const ReduceArgs& a);
cudaError_t trees_launch(Method m, const ReduceArgs& a);
size_t warp_workspace(Method m, const ReduceArgs& a);
cudaError_t warp_launch(Method m, const ReduceArgs& a);
size_t grid_stride_workspace(Method m, const ReduceArgs& a);
size_t grid_stride_host_workspace(Method m, const ReduceArgs& a);
cudaError_t grid_stride_launch(Method m, const ReduceArgs& a);
size_t cub_workspace(Method m, const ReduceArgs& a);
cudaError_t cub_launch(Method m, const ReduceArgs& a);
size_t single_pass_workspace(ReduceArgs& a);
cudaError_t single_pass_launch(const ReduceArgs& a);

}  // namespace rk
