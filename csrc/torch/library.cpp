// reducekit's torch op: the schema, argument checks, the CPU implementation, and the Python
// bridge to the method registry. The CUDA implementation is in torch/cuda_backend.cpp (CUDA builds only).
#include "torch/frontend.h"

#include "cpu/dims_cpu.h"
#include "cpu/exact_cpu.h"
#include "cpu/reduce_cpu.h"
#include "core/faults.h"
#include "tuning/tuning.h"

#ifdef RK_WITH_CUDA
#include "cuda/launchers.h"
#endif

#include <ATen/Parallel.h>
#include <torch/csrc/Size.h>
#include <c10/util/irange.h>
#include <torch/extension.h>
#include <torch/library.h>

#include <memory>
#include <sstream>
#include <vector>

namespace rk {

namespace {
std::string supported_dtypes() {
  std::string s;
  for (int i = 0; i < static_cast<int>(DType::Count); ++i) s += std::string(i ? ", " : "") + kDTypeNames[i];
  return s;
}

std::string method_names() {
  std::string s;
  for (const auto& m : kMethods) s += std::string(s.empty() ? "" : ", ") + m.name;
  return s;
}
}  // namespace

DType to_rk_dtype(at::ScalarType t) {
  switch (t) {
    case at::kBool: return DType::Bool;
    case at::kByte: return DType::UInt8;
    case at::kChar: return DType::Int8;
    case at::kShort: return DType::Int16;
    case at::kInt: return DType::Int32;
    case at::kLong: return DType::Int64;
    case at::kHalf: return DType::Float16;
    case at::kBFloat16: return DType::BFloat16;
    case at::kFloat: return DType::Float32;
    case at::kDouble: return DType::Float64;
    default:
      TORCH_CHECK_TYPE(false, "reducekit.sum: dtype ", t, " is not supported. Supported dtypes: ", supported_dtypes(),
                       ". Convert first (for example input.to(torch.float32)).");
  }
}

DType to_rk_dtype(const at::Tensor& self) {
  TORCH_CHECK_TYPE(self.layout() == at::kStrided, "reducekit.sum: input layout ", self.layout(),
                   " is not supported; only strided (dense) tensors are. Convert with input.to_dense().");
  return to_rk_dtype(self.scalar_type());
}

at::ScalarType to_scalar_type(DType d) {
  switch (d) {
    case DType::Bool: return at::kBool;
    case DType::UInt8: return at::kByte;
    case DType::Int8: return at::kChar;
    case DType::Int16: return at::kShort;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
    default: TORCH_CHECK(false, "reducekit: internal error: bad dtype id " + std::to_string(static_cast<int>(d)));
  }
}

at::ScalarType result_dtype(at::ScalarType in) { return at::isFloatingType(in) ? in : at::kLong; }

Method parse_method(c10::string_view name) {
  const Method m = method_from_name(std::string_view(name.data(), name.size()));
  TORCH_CHECK_VALUE(m != Method::Count, "reducekit.sum: unknown method '", std::string(name.data(), name.size()),
                    "'. Valid methods: ", method_names(), ". reducekit.methods() describes each.");
  return m;
}

void check_device(Method m, const at::Tensor& self, const char* fn) {
  const auto& info = method_info(m);
  if (self.is_cpu()) {
    TORCH_CHECK_NOT_IMPLEMENTED(runs_on_cpu(m), fn, ": method '", info.name, "' runs on CUDA only, but the input is on ",
                                self.device(), ". Move the input to a GPU (input.cuda()) or use method='auto', which runs on CPU and CUDA.");
  }
}

namespace {

// The whole-tensor CPU sum (dim=None): 0-dim result of result_dtype(self).
at::Tensor full_cpu(const at::Tensor& self, Method) {
  const at::Tensor x = self.contiguous();
  at::Tensor out = OutLoan::result_buffer(0, {}, {}, self.options().dtype(result_dtype(self.scalar_type())));
  cpu_full_sum(x.const_data_ptr(), x.numel(), to_rk_dtype(self), out.mutable_data_ptr());
  return out;
}

void exact_rows_cpu(const at::Tensor& x2d, at::Tensor& out, bool words) {
  cpu_exact_rows(x2d.const_data_ptr(), to_rk_dtype(x2d), x2d.size(0), x2d.size(1), out.mutable_data_ptr(),
                 words ? exact::OutFmt::Double : out_fmt(out.scalar_type()), words);
}

void exact_round_cpu(const at::Tensor& w2d, at::Tensor& out) {
  cpu_exact_round(w2d.const_data_ptr<int64_t>(), w2d.size(0), out.mutable_data_ptr(), out_fmt(out.scalar_type()));
}

void op_step_cpu(const at::Tensor&, const OpDesc& d) { cpu_op_step(d); }

// The gallery strategies run on CUDA only (check_device rejects them on CPU before this).
at::Tensor full_op_cpu(const at::Tensor&, Method m, GalleryOp) {
  TORCH_CHECK(false, "reducekit: internal error: method '", method_info(m).name, "' has no CPU implementation");
}

const Backend& cpu_backend() {
  static const Backend cpu{&full_cpu, &exact_rows_cpu, &exact_round_cpu, /*exact_columns=*/nullptr, &op_step_cpu, &full_op_cpu, /*gathers=*/false, /*gathers_rows=*/true};
  return cpu;
}

at::Tensor sum_cpu(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                   c10::string_view method) {
  return sum_impl(self, dim, keepdim, dtype, method, cpu_backend());
}

at::Tensor exact_partial_cpu(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return exact_partial_impl(self, dim, keepdim, cpu_backend());
}

std::vector<at::Tensor> reduce_cpu(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef dim, bool keepdim,
                                   std::optional<at::ScalarType> dtype, double ord, double correction, c10::string_view method) {
  return reduce_impl(self, op, dim, keepdim, dtype, ord, correction, method, cpu_backend());
}

at::Tensor exact_round_cpu_op(const at::Tensor& words, at::ScalarType dtype) { return exact_round_impl(words, dtype, cpu_backend()); }

// Sparse and quantized tensors reach these dispatch keys; give them the clear error, not the
// dispatcher's "could not run with arguments from the SparseCPU backend".
at::Tensor sum_reject(const at::Tensor& self, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>,
                      c10::string_view method) {
  parse_method(method);
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_quantized(), "reducekit.sum: quantized tensors (", c10::toString(self.scalar_type()),
                              ") are not supported; dequantize first (input.dequantize()).");
  to_rk_dtype(self);  // throws for non-strided layouts
  TORCH_CHECK(false, "reducekit.sum: unsupported input");
}

std::vector<at::Tensor> reduce_reject(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef, bool,
                                      std::optional<at::ScalarType>, double, double, c10::string_view) {
  reduce_reject_quantized(self, op);
}

using SumFn = at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>, c10::string_view);

// The typed dispatcher handle of reducekit::sum, looked up once.
const c10::TypedOperatorHandle<SumFn>& sum_op() {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("reducekit::sum", "").typed<SumFn>();
  return op;
}

// reducekit::sum with the Autograd key already handled: straight to the CPU/CUDA kernel.
at::Tensor sum_below_autograd(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<at::ScalarType> dtype, c10::string_view method) {
  at::AutoDispatchBelowADInplaceOrView below;
  return sum_op().call(self, dim, keepdim, dtype, method);
}

// d(sum x)/dx_i = 1: the incoming gradient, with the reduced dims put back (size 1) when keepdim
// is false, expanded to the input's shape and cast to its dtype. In C++ so that a call that needs
// no gradient pays no Python round trip on the Autograd key.
class SumBackward : public torch::autograd::Function<SumBackward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, at::OptionalIntArrayRef dim,
                            bool keepdim, std::optional<at::ScalarType> dtype, const std::string& method) {
    ctx->saved_data["sizes"] = self.sym_sizes().vec();
    ctx->saved_data["dtype"] = self.scalar_type();
    std::vector<int64_t> unsq;  // dims to unsqueeze in the gradient (ascending)
    if (!keepdim && dim.has_value() && self.dim() > 0) {
      const std::vector<bool> red = reduced_dims(*dim, self.dim());
      for (int64_t i = 0; i < self.dim(); ++i)
        if (red[i]) unsq.push_back(i);
    }
    ctx->saved_data["unsqueeze"] = unsq;
    return sum_below_autograd(self, dim, keepdim, dtype, method);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
    at::Tensor g = grads[0];
    for (int64_t d : ctx->saved_data["unsqueeze"].toIntVector()) g = g.unsqueeze(d);
    g = g.expand_symint(sizes);
    if (g.scalar_type() != dtype) g = g.to(dtype);
    return {g, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor sum_autograd(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                        c10::string_view method) {
  if (!(at::GradMode::is_enabled() && self.requires_grad())) {
    // No graph to record: skip the autograd Function (a heap node and a saved-data map per call).
    return sum_below_autograd(self, dim, keepdim, dtype, method);
  }
  return SumBackward::apply(self, dim, keepdim, dtype, std::string(method.data(), method.size()));
}

using ReduceFn = std::vector<at::Tensor>(const at::Tensor&, c10::string_view, at::OptionalIntArrayRef, bool,
                                         std::optional<at::ScalarType>, double, double, c10::string_view);

const c10::TypedOperatorHandle<ReduceFn>& reduce_op() {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("reducekit::reduce", "").typed<ReduceFn>();
  return op;
}

std::vector<at::Tensor> reduce_below_autograd(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef dim, bool keepdim,
                                              std::optional<at::ScalarType> dtype, double ord, double correction,
                                              c10::string_view method) {
  at::AutoDispatchBelowADInplaceOrView below;
  return reduce_op().call(self, op, dim, keepdim, dtype, ord, correction, method);
}

// The gradients of the reductions, torch's formulas in terms of torch ops. prod and vector_norm
// (whose subgradients at zeros torch defines case by case) differentiate torch's own op.
class ReduceBackward : public torch::autograd::Function<ReduceBackward> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const std::string& op,
                                                at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                                                double ord, double correction, const std::string& method) {
    std::vector<int64_t> dims;  // reduced dims, ascending (every dim when dim is None)
    const std::vector<bool> red = dim.has_value() ? reduced_dims(*dim, self.dim()) : std::vector<bool>(self.dim(), true);
    for (int64_t i = 0; i < self.dim(); ++i)
      if (red[i]) dims.push_back(i);
    auto outs = reduce_below_autograd(self, op, dim, keepdim, dtype, ord, correction, method);
    ctx->saved_data["op"] = static_cast<int64_t>(red::op_from_name(op));
    ctx->saved_data["dims"] = dims;
    ctx->saved_data["full"] = !dim.has_value();
    ctx->saved_data["keepdim"] = keepdim;
    ctx->saved_data["ord"] = ord;
    ctx->saved_data["correction"] = correction;
    if (dtype.has_value()) ctx->saved_data["dtype"] = static_cast<int64_t>(*dtype);
    std::vector<at::Tensor> saved{self};
    for (const auto& o : outs) saved.push_back(o);
    ctx->save_for_backward(saved);
    return outs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const red::OpKind op = static_cast<red::OpKind>(ctx->saved_data["op"].toInt());
    const std::vector<int64_t> dims = ctx->saved_data["dims"].toIntVector();
    const bool keepdim = ctx->saved_data["keepdim"].toBool();
    const double ord = ctx->saved_data["ord"].toDouble(), correction = ctx->saved_data["correction"].toDouble();
    int64_t n = 1;
    for (int64_t d : dims) n *= x.size(d);
    // An output (or its gradient) with the reduced dims put back, broadcastable against x.
    auto keep = [&](at::Tensor t) {
      if (!keepdim)
        for (int64_t d : dims) t = t.unsqueeze(d);
      return t;
    };
    auto undefined_or = [](const at::Tensor& g, auto f) { return g.defined() ? f(g) : at::Tensor(); };
    at::Tensor gx;
    auto add = [&](const at::Tensor& t) {
      if (t.defined()) gx = gx.defined() ? gx + t : t;
    };
    const at::IntArrayRef d(dims);
    // The op's formula (core/op_table.h's grad column); every Grad is a case.
    switch (red::op_traits(op).grad) {
      case red::Grad::None: break;  // reduce_autograd records no graph for these
      case red::Grad::Sum:  // reducekit::reduce(op="sum"): reducekit::sum's own schema has SumBackward
        add(undefined_or(grads[0], [&](const at::Tensor& g) { return keep(g).expand(x.sizes()); }));
        break;
      case red::Grad::Mean:
        add(undefined_or(grads[0], [&](const at::Tensor& g) { return keep(g).expand(x.sizes()) / static_cast<double>(n); }));
        break;
      case red::Grad::NanSum:
        add(undefined_or(grads[0], [&](const at::Tensor& g) { return keep(g).expand(x.sizes()) * x.isnan().logical_not(); }));
        break;
      case red::Grad::NanMean:
        add(undefined_or(grads[0], [&](const at::Tensor& g) {
          const at::Tensor ok = x.isnan().logical_not();
          return keep(g) * ok / ok.sum(d, /*keepdim=*/true);
        }));
        break;
      case red::Grad::Extreme:  // amax, amin; aminmax's two outputs. Ties share the gradient evenly (NaN: no tie).
        for (int k = 0; k < red::op_traits(op).outputs; ++k) {
          add(undefined_or(grads[k], [&](const at::Tensor& g) {
            const at::Tensor mask = x == keep(saved[1 + k]);
            return keep(g) * mask / mask.sum(d, /*keepdim=*/true);
          }));
        }
        break;
      case red::Grad::Moments: {
        const bool is_std = op == red::OpKind::Std || op == red::OpKind::StdMean;
        add(undefined_or(grads[0], [&](at::Tensor g) {
          if (is_std) g = (g / (saved[1] * 2)).masked_fill(saved[1] == 0, 0);
          const at::Tensor mean = x.mean(d, /*keepdim=*/true);
          return (2.0 / (static_cast<double>(n) - correction)) * keep(g) * (x - mean);
        }));
        if (grads.size() > 1)
          add(undefined_or(grads[1], [&](const at::Tensor& g) { return keep(g).expand(x.sizes()) / static_cast<double>(n); }));
        break;
      }
      case red::Grad::LogSumExp:
        add(undefined_or(grads[0], [&](const at::Tensor& g) { return keep(g) * (x - keep(saved[1])).exp(); }));
        break;
      case red::Grad::ViaTorch:  // prod, vector_norm: torch's own op differentiated (its subgradients at zeros)
        add(undefined_or(grads[0], [&](const at::Tensor& g) {
          at::AutoGradMode enable(true);
          const at::Tensor xd = x.detach().requires_grad_(true);
          std::optional<at::ScalarType> dt;
          if (ctx->saved_data.count("dtype")) dt = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
          at::Tensor y;
          if (op == red::OpKind::Prod) {
            y = ctx->saved_data["full"].toBool() || dims.empty() ? at::prod(xd, dt) : at::prod(xd, dims[0], keepdim, dt);
            if (ctx->saved_data["full"].toBool() && keepdim) y = y.reshape(saved[1].sizes());
          } else {
            TORCH_CHECK(op == red::OpKind::Norm, "reducekit: internal error: no torch op to differentiate for ", red::op_name(op));
            y = at::linalg_vector_norm(xd, ord, ctx->saved_data["full"].toBool() ? at::OptionalIntArrayRef() : d, keepdim, dt);
          }
          return torch::autograd::grad({y}, {xd}, {g}, /*retain_graph=*/false, /*create_graph=*/at::GradMode::is_enabled())[0];
        }));
        break;
    }
    if (gx.defined() && gx.scalar_type() != x.scalar_type()) gx = at::isComplexType(x.scalar_type()) || !gx.is_complex() ? gx.to(x.scalar_type()) : at::real(gx).to(x.scalar_type());
    if (gx.defined() && gx.sizes() != x.sizes()) gx = gx.expand(x.sizes()).contiguous();
    return {gx, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::vector<at::Tensor> reduce_autograd(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef dim, bool keepdim,
                                        std::optional<at::ScalarType> dtype, double ord, double correction, c10::string_view method) {
  const red::OpKind k = red::op_from_name(std::string_view(op.data(), op.size()));
  const bool differentiable = k != red::OpKind::Count && red::op_traits(k).grad != red::Grad::None;
  if (!(differentiable && at::GradMode::is_enabled() && self.requires_grad()))
    return reduce_below_autograd(self, op, dim, keepdim, dtype, ord, correction, method);
  return ReduceBackward::apply(self, std::string(op.data(), op.size()), dim, keepdim, dtype, ord, correction,
                               std::string(method.data(), method.size()));
}

}  // namespace
}  // namespace rk

TORCH_LIBRARY(reducekit, m) {
  m.def("sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, str method='auto') -> Tensor");
  // method="exact"'s intermediate: exact_partial gives each output's exact sum as kExactWords
  // int64 words (engine/exact.h); words of shards add as integers; exact_round rounds them.
  m.def("exact_partial(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor");
  m.def("exact_round(Tensor words, ScalarType dtype) -> Tensor");
  // Every other torch reduction (reducekit.mean, amax, var_mean, ... in Python): `op` names it
  // (engine/reduce_ops.h); ord is vector_norm's, correction var's and std's. One output, or two
  // for var_mean, std_mean and aminmax.
  m.def("reduce(Tensor self, str op, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, float ord=2., "
        "float correction=1., str method='auto') -> Tensor[]");
  // Tuning harness for single_pass (benchmarks/tune.py): fixed block, unroll and grid.
  m.def("_single_pass(Tensor self, int block, int unroll, int grid, bool pdl=True) -> Tensor");
  // Read-bandwidth probe (benchmark ceiling): reads every byte of self, returns a 0-dim int64.
  m.def("_read_probe(Tensor self, int block, int unroll, int waves) -> Tensor");
}

TORCH_LIBRARY_IMPL(reducekit, CPU, m) {
  m.impl("sum", &rk::sum_cpu);
  m.impl("exact_partial", &rk::exact_partial_cpu);
  m.impl("reduce", &rk::reduce_cpu);
  m.impl("exact_round", &rk::exact_round_cpu_op);
}
TORCH_LIBRARY_IMPL(reducekit, Autograd, m) {
  m.impl("sum", &rk::sum_autograd);
  m.impl("reduce", &rk::reduce_autograd);
}
TORCH_LIBRARY_IMPL(reducekit, SparseCPU, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, SparseCsrCPU, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, QuantizedCPU, m) {
  m.impl("sum", &rk::sum_reject);
  m.impl("reduce", &rk::reduce_reject);
}
TORCH_LIBRARY_IMPL(reducekit, SparseCUDA, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, SparseCsrCUDA, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, QuantizedCUDA, m) {
  m.impl("sum", &rk::sum_reject);
  m.impl("reduce", &rk::reduce_reject);
}

namespace {
// The fast Python entry: torch.sum's signature parsed here in C++, then a typed dispatcher call
// (autograd, fake tensors and every other dispatch key still apply) without the boxed torch.ops
// Python path, which costs microseconds.
at::Tensor sum_entry(const at::Tensor& self, const pybind11::handle& dim, bool keepdim, std::optional<at::ScalarType> dtype,
                     const std::string& method) {
  if (dim.is_none()) return rk::sum_op().call(self, std::nullopt, keepdim, dtype, method);
  c10::SmallVector<int64_t, 8> dims;
  if (PyLong_Check(dim.ptr()) && !PyBool_Check(dim.ptr())) {
    dims.push_back(dim.cast<int64_t>());
  } else if (PyTuple_Check(dim.ptr()) || PyList_Check(dim.ptr()) || THPSize_Check(dim.ptr())) {
    for (const auto& d : dim) {
      TORCH_CHECK_TYPE(PyLong_Check(d.ptr()) && !PyBool_Check(d.ptr()), "reducekit.sum: dim must be an int or a tuple/list of ints, got an element of type ",
                       Py_TYPE(d.ptr())->tp_name);
      dims.push_back(d.cast<int64_t>());
    }
  } else {
    TORCH_CHECK_TYPE(false, "reducekit.sum: dim must be None, an int, or a tuple/list of ints; got ", Py_TYPE(dim.ptr())->tp_name);
  }
  return rk::sum_op().call(self, at::IntArrayRef(dims), keepdim, dtype, method);
}
}  // namespace

namespace {
// The fast Python entry of reducekit::reduce (as sum_entry): dim None, an int, or a sequence.
std::vector<at::Tensor> reduce_entry(const std::string& op, const at::Tensor& self, const pybind11::handle& dim, bool keepdim,
                                     std::optional<at::ScalarType> dtype, double ord, double correction, const std::string& method) {
  if (dim.is_none()) return rk::reduce_op().call(self, op, std::nullopt, keepdim, dtype, ord, correction, method);
  c10::SmallVector<int64_t, 8> dims;
  if (PyLong_Check(dim.ptr()) && !PyBool_Check(dim.ptr())) {
    dims.push_back(dim.cast<int64_t>());
  } else if (PyTuple_Check(dim.ptr()) || PyList_Check(dim.ptr()) || THPSize_Check(dim.ptr())) {
    for (const auto& d : dim) {
      TORCH_CHECK_TYPE(PyLong_Check(d.ptr()) && !PyBool_Check(d.ptr()), "reducekit.", op,
                       ": dim must be an int or a tuple/list of ints, got an element of type ", Py_TYPE(d.ptr())->tp_name);
      dims.push_back(d.cast<int64_t>());
    }
  } else {
    TORCH_CHECK_TYPE(false, "reducekit.", op, ": dim must be None, an int, or a tuple/list of ints; got ", Py_TYPE(dim.ptr())->tp_name);
  }
  return rk::reduce_op().call(self, op, at::IntArrayRef(dims), keepdim, dtype, ord, correction, method);
}

// Python's side of OutLoan (reducekit/_dropin.py lends out= tensors around one eager call and
// ends the loan in a `finally`): loans nest as a stack per thread.
thread_local std::vector<std::unique_ptr<rk::OutLoan>> t_py_loans;

void lend_out_entry(std::vector<at::Tensor> outs, const at::Tensor& input) {
  t_py_loans.push_back(std::make_unique<rk::OutLoan>(std::move(outs), input));
}

void end_loan_entry() {
  TORCH_CHECK(!t_py_loans.empty(), "reducekit: internal error: _end_loan without a loan");
  t_py_loans.pop_back();
}

at::Tensor reduce1_entry(const std::string& op, const at::Tensor& self, const pybind11::handle& dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, double ord, double correction, const std::string& method) {
  return reduce_entry(op, self, dim, keepdim, dtype, ord, correction, method)[0];
}
}  // namespace

namespace rk {
// reducekit._C's fast calls (torch/module.cpp assembles the module).
void bind_calls(pybind11::module_& m) {
  // wrap_pybind_function: torch's error and warning handling, so that C++ warnings (for example
  // use_deterministic_algorithms(True, warn_only=True)) reach Python's warnings module.
  m.def("sum", torch::wrap_pybind_function(sum_entry), "Dispatcher call of reducekit::sum", pybind11::arg("input"),
        pybind11::arg("dim") = pybind11::none(), pybind11::arg("keepdim") = false, pybind11::kw_only(),
        pybind11::arg("dtype") = pybind11::none(), pybind11::arg("method") = "auto");
  // reduce and reduce1 (the first output alone, no list) take every argument by position too:
  // reducekit/reductions.py passes them so, as pybind11's keyword matching cost about 0.8 us a
  // call and the list another step, on calls whose whole host budget is torch's 6.4 us.
  m.def("reduce", torch::wrap_pybind_function(reduce_entry), "Dispatcher call of reducekit::reduce", pybind11::arg("op"),
        pybind11::arg("input"), pybind11::arg("dim") = pybind11::none(), pybind11::arg("keepdim") = false,
        pybind11::arg("dtype") = pybind11::none(), pybind11::arg("ord") = 2.0, pybind11::arg("correction") = 1.0,
        pybind11::arg("method") = "auto");
  m.def("reduce1", torch::wrap_pybind_function(reduce1_entry), "Dispatcher call of reducekit::reduce, its first output",
        pybind11::arg("op"), pybind11::arg("input"), pybind11::arg("dim") = pybind11::none(), pybind11::arg("keepdim") = false,
        pybind11::arg("dtype") = pybind11::none(), pybind11::arg("ord") = 2.0, pybind11::arg("correction") = 1.0,
        pybind11::arg("method") = "auto");
  // out= without a copy (torch/frontend.h OutLoan): lend out's tensors to the next call's result
  // allocation, and end the loan.
  m.def("_lend_out", &lend_out_entry, "Lends out= tensors to this thread's next reduction", pybind11::arg("outs"),
        pybind11::arg("input"));
  m.def("_end_loan", &end_loan_entry, "Ends the innermost loan of _lend_out");
}
}  // namespace rk
