// reducekit's torch op: the schema, argument checks, the CPU implementation, and the Python
// bridge to the method registry. The CUDA implementation is in ops_cuda.cpp (CUDA builds only).
#include "ops.h"

#include "kernels/faults.h"
#include "tuning.h"

#ifdef RK_WITH_CUDA
#include "kernels/launchers.h"
#endif

#include <ATen/Parallel.h>
#include <c10/util/irange.h>
#include <torch/extension.h>
#include <torch/library.h>

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

DType to_rk_dtype(const at::Tensor& self) {
  TORCH_CHECK_TYPE(self.layout() == at::kStrided, "reducekit.sum: input layout ", self.layout(),
                   " is not supported; only strided (dense) tensors are. Convert with input.to_dense().");
  switch (self.scalar_type()) {
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
      TORCH_CHECK_TYPE(false, "reducekit.sum: input dtype ", self.scalar_type(), " is not supported. Supported dtypes: ",
                       supported_dtypes(), ". Convert first (for example input.to(torch.float32)); for complex ",
                       "input, reduce input.real and input.imag separately.");
  }
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

void check_device(Method m, const at::Tensor& self) {
  const auto& info = method_info(m);
  if (self.is_cpu()) {
    TORCH_CHECK_NOT_IMPLEMENTED(runs_on_cpu(m), "reducekit.sum: method '", info.name, "' runs on CUDA only, but the input is on ",
                                self.device(), ". Move the input to a GPU (input.cuda()) or use method='auto', which runs on CPU and CUDA.");
  }
}

namespace {

// Sum of x[lo, hi) with 16 independent accumulators (the compiler vectorizes them; one
// accumulator would be a latency-bound chain of dependent adds), combined in a fixed order.
template <class In, class Acc>
Acc cpu_chunk_sum(const In* x, int64_t lo, int64_t hi) {
  constexpr int kLanes = 16;
  Acc lane[kLanes] = {};
  int64_t i = lo;
  for (; i + kLanes <= hi; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<Acc>(x[i + k]);
  if constexpr (!RK_FAULT_IS(CpuDropTail))  // planted: the last hi-lo mod 16 elements are dropped
    for (; i < hi; ++i) lane[0] += static_cast<Acc>(x[i]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) lane[k] += lane[k + w];
  return lane[0];
}

// CPU sum: fixed-size chunks summed in parallel, chunk partials combined in index order, so the
// result does not depend on the thread count. Wide accumulators as on CUDA (float32 in float64);
// integers in uint64, whose wrap-around is defined and equals torch.sum's int64 wrap-around.
template <class In, class Acc>
Acc cpu_sum(const In* x, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks <= 1) return cpu_chunk_sum<In, Acc>(x, 0, n);
  std::vector<Acc> partial(chunks, Acc(0));
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) partial[c] = cpu_chunk_sum<In, Acc>(x, c * kChunk, std::min(n, (c + 1) * kChunk));
  });
  Acc total = Acc(0);
  for (const Acc& p : partial) total += p;
  return total;
}

at::Tensor sum_cpu(const at::Tensor& self, c10::string_view method) {
  const Method m = parse_method(method);
  to_rk_dtype(self);
  check_device(m, self);
  const at::Tensor x = self.contiguous();
  const int64_t n = x.numel();
  at::Tensor out = at::empty({}, self.options().dtype(result_dtype(self.scalar_type())));
  // The result is written in place (a fill_ would be one more dispatcher call).
  auto put = [&](auto v) { *out.mutable_data_ptr<decltype(v)>() = v; };
  switch (self.scalar_type()) {
    case at::kBool: put(static_cast<int64_t>(cpu_sum<bool, uint64_t>(x.const_data_ptr<bool>(), n))); break;
    case at::kByte: put(static_cast<int64_t>(cpu_sum<uint8_t, uint64_t>(x.const_data_ptr<uint8_t>(), n))); break;
    case at::kChar: put(static_cast<int64_t>(cpu_sum<int8_t, uint64_t>(x.const_data_ptr<int8_t>(), n))); break;
    case at::kShort: put(static_cast<int64_t>(cpu_sum<int16_t, uint64_t>(x.const_data_ptr<int16_t>(), n))); break;
    case at::kInt: put(static_cast<int64_t>(cpu_sum<int32_t, uint64_t>(x.const_data_ptr<int32_t>(), n))); break;
    case at::kLong: put(static_cast<int64_t>(cpu_sum<int64_t, uint64_t>(x.const_data_ptr<int64_t>(), n))); break;
    case at::kHalf: put(static_cast<at::Half>(cpu_sum<at::Half, float>(x.const_data_ptr<at::Half>(), n))); break;
    case at::kBFloat16: put(static_cast<at::BFloat16>(cpu_sum<at::BFloat16, float>(x.const_data_ptr<at::BFloat16>(), n))); break;
    case at::kFloat: put(static_cast<float>(cpu_sum<float, double>(x.const_data_ptr<float>(), n))); break;
    case at::kDouble: put(cpu_sum<double, double>(x.const_data_ptr<double>(), n)); break;
    default: TORCH_CHECK(false, "reducekit: internal error: unchecked dtype");
  }
  return out;
}

// Sparse and quantized tensors reach these dispatch keys; give them the clear error, not the
// dispatcher's "could not run with arguments from the SparseCPU backend".
at::Tensor sum_reject(const at::Tensor& self, c10::string_view method) {
  parse_method(method);
  TORCH_CHECK_TYPE(!self.is_quantized(), "reducekit.sum: quantized tensors are not supported; dequantize first (input.dequantize()).");
  to_rk_dtype(self);  // throws for non-strided layouts
  TORCH_CHECK(false, "reducekit.sum: unsupported input");
}

// The typed dispatcher handle of reducekit::sum, looked up once.
const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, c10::string_view)>& sum_op() {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("reducekit::sum", "").typed<at::Tensor(const at::Tensor&, c10::string_view)>();
  return op;
}

// reducekit::sum with the Autograd key already handled: straight to the CPU/CUDA kernel.
at::Tensor sum_below_autograd(const at::Tensor& self, c10::string_view method) {
  at::AutoDispatchBelowADInplaceOrView below;
  return sum_op().call(self, method);
}

// d(sum x)/dx_i = 1: the incoming scalar gradient broadcast to the input's shape. In C++ so that
// a call that needs no gradient pays no Python round trip on the Autograd key.
class SumBackward : public torch::autograd::Function<SumBackward> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const std::string& method) {
    ctx->saved_data["sizes"] = self.sym_sizes().vec();
    return sum_below_autograd(self, method);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toSymIntVector();
    return {grads[0].expand_symint(sizes), at::Tensor()};
  }
};

at::Tensor sum_autograd(const at::Tensor& self, c10::string_view method) {
  if (!(at::GradMode::is_enabled() && self.requires_grad())) {
    // No graph to record: skip the autograd Function (a heap node and a saved-data map per call).
    return sum_below_autograd(self, method);
  }
  return SumBackward::apply(self, std::string(method.data(), method.size()));
}

}  // namespace
}  // namespace rk

TORCH_LIBRARY(reducekit, m) {
  m.def("sum(Tensor self, str method='auto') -> Tensor");
  // Tuning harness for single_pass (benchmarks/tune.py): fixed block, unroll and grid.
  m.def("_single_pass(Tensor self, int block, int unroll, int grid, bool pdl=True) -> Tensor");
  // Read-bandwidth probe (benchmark ceiling): reads every byte of self, returns a 0-dim int64.
  m.def("_read_probe(Tensor self, int block, int unroll, int waves) -> Tensor");
}

TORCH_LIBRARY_IMPL(reducekit, CPU, m) { m.impl("sum", &rk::sum_cpu); }
TORCH_LIBRARY_IMPL(reducekit, Autograd, m) { m.impl("sum", &rk::sum_autograd); }
TORCH_LIBRARY_IMPL(reducekit, SparseCPU, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, SparseCsrCPU, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, QuantizedCPU, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, SparseCUDA, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, SparseCsrCUDA, m) { m.impl("sum", &rk::sum_reject); }
TORCH_LIBRARY_IMPL(reducekit, QuantizedCUDA, m) { m.impl("sum", &rk::sum_reject); }

namespace {
// The fast Python entry: a typed dispatcher call (autograd, fake tensors and every other
// dispatch key still apply) without the boxed torch.ops Python path, which costs microseconds.
at::Tensor sum_entry(const at::Tensor& self, const std::string& method) { return rk::sum_op().call(self, method); }
}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "reducekit native extension: registers torch.ops.reducekit and exposes the method registry";
  // wrap_pybind_function: torch's error and warning handling, so that C++ warnings (for example
  // use_deterministic_algorithms(True, warn_only=True)) reach Python's warnings module.
  m.def("sum", torch::wrap_pybind_function(sum_entry), "Dispatcher call of reducekit::sum", pybind11::arg("input"),
        pybind11::arg("method") = "auto");
  m.def("methods", [] {
    pybind11::list out;
    for (const auto& i : rk::kMethods) {
      pybind11::dict d;
      d["name"] = i.name;
      d["devices"] = i.devices;
      d["deterministic_int"] = i.deterministic_int;
      d["deterministic_float"] = i.deterministic_float;
      d["launches"] = i.launches;
      d["host_sync"] = i.host_sync;
      d["source"] = i.source;
      d["idea"] = i.idea;
      out.append(d);
    }
    return out;
  });
  m.def("faults", [] {
    pybind11::list out;
    for (const auto& f : rk::kFaults) out.append(pybind11::make_tuple(f.name, f.what));
    return out;
  }, "(name, what it plants) of every planted fault a build can compile in (csrc/kernels/faults.h)");
  m.attr("fault") = rk::kFaults[static_cast<int>(rk::kFault)].name;
  m.def("auto_choice", [](const std::string& dtype, int64_t n, int cc, bool captured) {
    int d = 0;
    while (d < static_cast<int>(rk::DType::Count) && dtype != rk::kDTypeNames[d]) ++d;
    TORCH_CHECK_VALUE(d < static_cast<int>(rk::DType::Count), "reducekit._C.auto_choice: unknown dtype '" + dtype + "'");
    const rk::AutoChoice c = rk::choose_auto(static_cast<rk::DType>(d), n, cc, captured);
    return pybind11::make_tuple(rk::method_info(c.method).name, c.block, c.unroll, c.grid);
  }, "(method, block, unroll, grid) that auto picks on CUDA for this dtype name, size and compute capability, in an eager call "
     "or (captured=True) inside CUDA graph capture", pybind11::arg("dtype"), pybind11::arg("n"), pybind11::arg("cc"),
     pybind11::arg("captured") = false);
#ifdef RK_WITH_CUDA
  m.def("_single_pass_slots", [](int device, int limit) {
    const int old = rk::single_pass_set_slot_limit(limit);
    return pybind11::make_tuple(rk::single_pass_slots_used(device), old);
  }, "Test hook: (slots used on device, previous limit); limit >= 0 sets how many counter slots single_pass hands out");
#endif
  m.def("dtypes", [] {
    pybind11::list out;
    for (int i = 0; i < static_cast<int>(rk::DType::Count); ++i) out.append(rk::kDTypeNames[i]);
    return out;
  });
  m.def("single_pass_configs", [] {
    pybind11::list out;
#ifdef RK_WITH_CUDA
    for (int i = 0; i < rk::single_pass_config_count(); ++i) {
      int block = 0, unroll = 0;
      rk::single_pass_config(i, &block, &unroll);
      out.append(pybind11::make_tuple(block, unroll));
    }
#endif
    return out;
  }, "(block, unroll) pairs compiled for single_pass (empty in a CPU-only build)");
#ifdef RK_WITH_CUDA
  m.attr("cuda_built") = true;
#else
  m.attr("cuda_built") = false;
#endif
}
