// The torch front end's shared plumbing: what the CPU and CUDA backends contribute (Backend), the
// front ends of reducekit::sum (sum.cpp), reducekit::reduce (reduce.cpp) and exact's ops, and the
// dtype, method, dims and layout helpers they share.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/exact.h"
#include "engine/op_desc.h"
#include "engine/plan.h"
#include "core/methods.h"

namespace rk {

// The supported input dtype, or a TypeError naming the dtype and what is supported.
DType to_rk_dtype(const at::Tensor& self);
DType to_rk_dtype(at::ScalarType t);
// bool, the integers and the four float dtypes: the real dtypes the kernels read.
bool is_real_supported(at::ScalarType t);
at::ScalarType to_scalar_type(DType d);
// torch.sum's result dtype: int64 for bool and integers, the input dtype for floats.
at::ScalarType result_dtype(at::ScalarType in);
// The method with this name, or a ValueError listing the valid names.
Method parse_method(c10::string_view name);
// ValueError/NotImplementedError if the method cannot run on this device.
// fn: the public function's name for the message ("reducekit.sum", "reducekit.amax", ...).
void check_device(Method m, const at::Tensor& self, const char* fn = "reducekit.sum");

// out= without a copy (reducekit/_dropin.py). An eager call with out= lends its out tensors to
// this thread (OutLoan, for one call); where the engine allocates its k-th result, result_buffer
// returns the k-th lent tensor if it is exactly what would have been allocated (sizes, strides,
// dtype, device) and does not overlap the input, so the kernels write into it and the Python side
// finds its result already in out. Anything else (another shape, a cast after the engine, an
// intermediate that takes it first) leaves out to the one copy of the result, as before.
class OutLoan {
 public:
  OutLoan(std::vector<at::Tensor> outs, const at::Tensor& input);
  ~OutLoan();
  OutLoan(const OutLoan&) = delete;
  OutLoan& operator=(const OutLoan&) = delete;
  // The engine's result allocation: a lent tensor where it fits, else a new one (strides empty:
  // contiguous).
  static at::Tensor result_buffer(size_t k, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options);

 private:
  std::vector<at::Tensor> outs_;  // undefined once given
  OutLoan* prev_;
};

// What a device contributes to reducekit::sum (torch/sum.cpp holds everything device-independent).
struct Backend {
  // Whole-tensor reduction (dim=None) of a dense real input with `method`: a 0-dim tensor of
  // result_dtype(x).
  at::Tensor (*full)(const at::Tensor& x, Method m);
  // method="exact" over the rows of a contiguous (rows, len) float tensor: `out` holds rows values
  // (its dtype, a float) or, with words, rows x exact::kExactWords int64.
  void (*exact_rows)(const at::Tensor& x2d, at::Tensor& out, bool words);
  // Rounds rows of shard words (contiguous (rows, kExactWords) int64) into out's float dtype.
  void (*exact_round)(const at::Tensor& words2d, at::Tensor& out);
  // method="exact" over the middle dim of dense x seen as (outer, extent, inner) (a columns step,
  // engine/plan.h), into out (its dtype; outer * inner values dense in that order): false, out
  // untouched, where the backend has no such path for x's dtype (then the rows path copies x).
  // Null: none at all.
  bool (*exact_columns)(const at::Tensor& x, int64_t outer, int64_t extent, int64_t inner, at::Tensor& out);
  // One engine step of any reduction, sum included (engine/op_desc.h); `like` gives the device.
  void (*op_step)(const at::Tensor& like, const OpDesc& d);
  // A gallery method's whole-tensor prod, amax, amin, all or any (CUDA methods only): a 0-dim
  // tensor of torch.sum's result dtype for x.
  at::Tensor (*full_op)(const at::Tensor& x, Method m, GalleryOp op);
  // Whether op_step takes StepKind::Gather (a plan of several steps read through the dims); a
  // backend without it gets a copy with the reduced dims last.
  bool gathers;
  // Whether it takes the rows form of the gather (the innermost dim reduced) only, for every run
  // length (the CPU: cpu/reduce_cpu.cpp run_gather), but not for the sums of the CPU's own kernels
  // (engine/op_desc.h cpu_sum_kernels); `gathers` is then false.
  bool gathers_rows = false;
  // Whether op_step writes through OpDesc::out_map (engine/plan.h): results of permuted layouts
  // are then written in torch's contiguous layout directly, with no copy after the step.
  bool maps_outputs = false;
};

// The one engine step of x over `reduced` (engine/plan.h): x itself when the reduced dims merge
// into one run (rows, columns) or the backend gathers the plan's runs, else a (rows, len) copy.
struct Plan1 {
  at::Tensor x;  // the operand the step reads (the input, a dense copy in its memory order, or a (rows, len) copy)
  at::Tensor dense;  // the input with its dims (itself, or a dense copy in its memory order): result_strides
  StepKind kind = StepKind::Rows;
  int64_t outer = 1, extent = 1, inner = 1;
  Gather gather;  // kind == Gather
  // Every form writes its outputs dense in the memory order of the kept dims (result_strides of
  // dense), or through an output map into the contiguous result (step_result_strides).
};
// enters_values: the operator's lane takes values one by one (red::enters_values), so the gather
// step's columns form may read it.
Plan1 one_step(const at::Tensor& x, const std::vector<bool>& reduced, const Backend& be, bool enters_values, bool kernel_sum = false);
// The step of s for op (its operand, shape and gather dims; the outputs, ord and params are the caller's).
OpDesc step_desc(const Plan1& s, red::OpKind op, bool wide);
// x when dense, else a dense copy that keeps the memory order of x's dims.
at::Tensor dense_in_order(const at::Tensor& x);

// reducekit::sum with torch.sum's signature and semantics, on a backend.
at::Tensor sum_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                    c10::string_view method, const Backend& be);

// op (sum, or nansum: the ops that run on the CPU's sum kernels, cpu/dims_cpu.cpp) of dense-or-not x
// over `reduced` in the engine's one step, as a contiguous result of dtype out_t (the natural or,
// with wide, the sum accumulator's dtype).
at::Tensor reduce_plan(const at::Tensor& x, const std::vector<bool>& reduced, bool keepdim, red::OpKind op, bool wide,
                       at::ScalarType out_t, const Backend& be);

// reducekit.exact_partial: the exact intermediate (shard words) of a float tensor over dims.
at::Tensor exact_partial_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, const Backend& be);
// reducekit.exact_round: shard words (..., kExactWords) rounded to a float dtype.
at::Tensor exact_round_impl(const at::Tensor& words, at::ScalarType dtype, const Backend& be);
// A gallery strategy's whole-tensor prod, amax, amin, all or any (torch/reduce.cpp).
at::Tensor reduce_gallery(const at::Tensor& self, red::OpKind op, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> dtype, Method m, const Backend& be);

// Every other torch reduction (torch/reduce.cpp): the outputs of reducekit::reduce.
std::vector<at::Tensor> reduce_impl(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef dim, bool keepdim,
                                    std::optional<at::ScalarType> dtype, double ord, double correction, c10::string_view method,
                                    const Backend& be);
// A quantized input to reducekit::reduce: torch's exception for the op (its dtype checks first
// for nanmean and logsumexp: RuntimeError; NotImplementedError otherwise). Always throws.
[[noreturn]] void reduce_reject_quantized(const at::Tensor& self, c10::string_view op);

// The final rounding's format for a float dtype.
exact::OutFmt out_fmt(at::ScalarType t);

// Which of nd dims `dims` reduces ([] = all), with torch's range and repeated-dim errors.
std::vector<bool> reduced_dims(at::IntArrayRef dims, int64_t nd);

// "(0, 2)": a dim list as torch prints it.
std::string dims_str(at::IntArrayRef dims);
// Strides of a result of out_sizes that is dense in the memory order of x's kept dims.
// The strides to allocate a step's results with: none (contiguous) where the backend writes through
// an output map (d->out_map set, engine/plan.h), else result_strides(s.dense, ...), the kept dims'
// memory order, which the caller copies contiguous after the step.
std::vector<int64_t> step_result_strides(const Plan1& s, const std::vector<bool>& reduced, bool keepdim,
                                         const std::vector<int64_t>& out_sizes, const Backend& be, OpDesc* d);
std::vector<int64_t> result_strides(const at::Tensor& x, const std::vector<bool>& reduced, bool keepdim,
                                    const std::vector<int64_t>& out_sizes);
// x with its reduced dims moved last (in the multi-dim order) and flattened: a contiguous (rows,
// len) tensor; its rows in the kept dims' logical order, or their memory order.
at::Tensor as_rows(const at::Tensor& x, const std::vector<bool>& reduced, bool kept_in_memory_order = false);
// The result's sizes: kept dims, and reduced ones as 1 with keepdim.
std::vector<int64_t> reduced_shape(at::IntArrayRef sizes, const std::vector<bool>& reduced, bool keepdim);

// The dims plan of a tensor (sizes, strides) reduced over `reduced` dims.
Plan plan_for(at::IntArrayRef sizes, at::IntArrayRef strides, const std::vector<bool>& reduced);

}  // namespace rk
