// CUDA implementation of reducekit::sum: checks, device guard, current stream, workspace from the
// caching allocator, `auto` resolved through the tuning table, then one call of the torch-free
// launcher. Never synchronizes the host (host_final, which exists to show that cost, excepted).
#include <ATen/Context.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>

#include "cuda/launchers.h"
#include "torch/frontend.h"
#include "torch/hooks.h"
#include "tuning/tuning.h"

namespace rk {
namespace {

struct DeviceInfo {
  int num_sms = 0, cc = 0;
};

// SM count and compute capability, read once per device.
const DeviceInfo& device_info(int device) {
  static std::array<DeviceInfo, 64> cache{};
  TORCH_CHECK(device >= 0 && device < static_cast<int>(cache.size()), "reducekit: device index " + std::to_string(device) + " out of range");
  DeviceInfo& d = cache[device];
  if (d.num_sms == 0) {
    int sms = 0, major = 0, minor = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    d.cc = major * 10 + minor;
    d.num_sms = sms;
  }
  return d;
}

// `bytes` of device workspace from the caching allocator on like's device (undefined for 0).
at::Tensor workspace(size_t bytes, const at::Tensor& like) {
  return bytes ? at::empty({static_cast<int64_t>(bytes)}, like.options().dtype(at::kByte)) : at::Tensor();
}

at::Tensor reduce_cuda(const at::Tensor& self, Method m, DType dt, int block, int unroll, int grid, bool pdl = true,
                       GalleryOp op = GalleryOp::Sum) {
  const c10::cuda::CUDAGuard guard(self.device());
  const at::ScalarType res = result_dtype(self.scalar_type());
  const int64_t n = self.numel();
  if (n == 0) return at::zeros({}, self.options().dtype(res));
  // Non-contiguous views are copied; contiguous views at any offset are read in place.
  const at::Tensor x = self.is_contiguous() ? self : self.contiguous();
  const DeviceInfo& dev = device_info(self.get_device());

  ReduceArgs a;
  a.in = x.const_data_ptr();
  a.n = n;
  a.dtype = dt;
  a.op = op;
  a.stream = c10::cuda::getCurrentCUDAStream().stream();
  a.device = self.get_device();
  a.num_sms = dev.num_sms;
  a.cc = dev.cc;
  a.pdl = pdl;
  a.block = block;
  a.unroll = unroll;
  a.grid = grid;
  if (m == Method::Auto) {
    const bool captured = c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
    const AutoChoice c = choose_auto(dt, n, dev.cc, captured);
    m = c.method;
    a.block = c.block;
    a.unroll = c.unroll;
    a.grid = c.grid;
    a.pdl = pdl && c.pdl;
  }
  // (max, min, all and any give the same value in any order.)
  if (is_floating(dt) && !method_info(m).deterministic_float && (op == GalleryOp::Sum || op == GalleryOp::Prod)) {
    // Float atomics land in a different order each run: torch.use_deterministic_algorithms(True)
    // raises here (warns with warn_only=True), as it does for torch's own nondeterministic ops.
    at::globalContext().alertNotDeterministic(std::string("reducekit.sum(method='") + method_info(m).name +
                                              "') on floating-point input (its float atomics land in a varying order; "
                                              "method='auto' is deterministic)");
  }
  if (method_info(m).host_sync) {
    TORCH_CHECK(c10::cuda::currentStreamCaptureStatusMayInitCtx() == c10::cuda::CaptureStatus::None, "reducekit.sum: method '",
                method_info(m).name, "' copies partial sums to the host and waits for them, which cannot be captured in a CUDA ",
                "graph. Use another method (for example method='two_pass') inside graphs.");
    // The wait is real: torch.cuda.set_sync_debug_mode("warn"/"error") reports it like torch's own.
    if (c10::cuda::warning_state().get_sync_debug_mode() != c10::cuda::SyncDebugMode::L_DISABLED) c10::cuda::warn_or_error_on_sync();
  }

  at::Tensor out = OutLoan::result_buffer(0, {}, {}, self.options().dtype(to_scalar_type(out_dtype(m, dt))));
  a.out = out.mutable_data_ptr();
  const at::Tensor ws = workspace(workspace_bytes(m, a), self);  // also claims single_pass's counter slot
  a.workspace = ws.defined() ? ws.mutable_data_ptr() : nullptr;
  at::Tensor host_ws;
  if (const size_t b = host_workspace_bytes(m, a)) {
    host_ws = at::empty({static_cast<int64_t>(b)}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
    a.host_workspace = host_ws.mutable_data_ptr();
  }
  C10_CUDA_CHECK(launch(m, a));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out.scalar_type() == res ? out : out.to(res);
}

at::Tensor full_cuda(const at::Tensor& x, Method m) { return reduce_cuda(x, m, to_rk_dtype(x), 0, 0, 0); }

at::Tensor full_op_cuda(const at::Tensor& x, Method m, GalleryOp op) { return reduce_cuda(x, m, to_rk_dtype(x), 0, 0, 0, true, op); }

// One engine step of a reduction on the input's device and current stream; the block partials of
// split rows and columns come from the caching allocator.
void op_step_cuda(const at::Tensor& like, const OpDesc& d) {
  const c10::cuda::CUDAGuard guard(like.device());
  OpStep a;
  static_cast<OpDesc&>(a) = d;
  a.stream = c10::cuda::getCurrentCUDAStream().stream();
  a.cc = device_info(like.get_device()).cc;
  a.num_sms = device_info(like.get_device()).num_sms;
  a.tuning = tuning_overrides();
  // Split rows and columns of small steps finish in their last blocks on the stream's counters
  // (eng::FusedFinish: one launch, not two); partials that fit the stream's static ones take no
  // allocation.
  const StreamScratch sc = stream_scratch(like.get_device(), a.stream);
  a.counters = sc.counters;
  const size_t wb = op_step_workspace(a);
  at::Tensor ws;
  if (wb && wb <= sc.partial_bytes) {
    a.workspace = sc.partials;
  } else {
    ws = workspace(wb, like);
    a.workspace = ws.defined() ? ws.mutable_data_ptr() : nullptr;
  }
  C10_CUDA_CHECK(op_step_launch(a));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// method="exact" over the rows of a contiguous (rows, len) tensor: one launch for a whole tensor
// (the stream's counter), a memset and a launch for rows.
void exact_rows_cuda(const at::Tensor& x2d, at::Tensor& out, bool words) {
  const c10::cuda::CUDAGuard guard(x2d.device());
  const DeviceInfo& dev = device_info(x2d.get_device());
  ExactArgs a;
  a.in = x2d.const_data_ptr();
  a.rows = x2d.size(0);
  a.len = x2d.size(1);
  a.dtype = to_rk_dtype(x2d);
  a.out = out.mutable_data_ptr();
  a.words = words;
  a.out_fmt = words ? exact::OutFmt::Double : out_fmt(out.scalar_type());
  a.stream = c10::cuda::getCurrentCUDAStream().stream();
  a.num_sms = dev.num_sms;
  a.cc = dev.cc;
  a.tuning = tuning_overrides();
  if (a.rows == 1) {  // one slot lookup (a lock) for both
    const int slot = stream_slot(x2d.get_device(), a.stream);
    a.counter = stream_counter_at(x2d.get_device(), slot);
    a.acc = exact_stream_acc(x2d.get_device(), slot);
  }
  const at::Tensor ws = workspace(exact_workspace(a), x2d);
  a.workspace = ws.defined() ? ws.mutable_data_ptr() : nullptr;
  C10_CUDA_CHECK(exact_launch(a));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// method="exact" over a columns step of dense x, read in place (exact.cu's columns paths): two
// launches, the workspace from the caching allocator; false for a dtype those paths do not take.
bool exact_columns_cuda(const at::Tensor& x, int64_t outer, int64_t extent, int64_t inner, at::Tensor& out) {
  const DType dt = to_rk_dtype(x);
  if (!exact_columns_supported(dt, extent)) return false;
  const c10::cuda::CUDAGuard guard(x.device());
  const DeviceInfo& dev = device_info(x.get_device());
  ExactColumnsArgs a;
  a.in = x.const_data_ptr();
  a.outer = outer;
  a.extent = extent;
  a.inner = inner;
  a.dtype = dt;
  a.out = out.mutable_data_ptr();
  a.out_fmt = out_fmt(out.scalar_type());
  a.stream = c10::cuda::getCurrentCUDAStream().stream();
  a.num_sms = dev.num_sms;
  a.cc = dev.cc;
  a.tuning = tuning_overrides();
  const at::Tensor ws = workspace(exact_columns_workspace(a), x);
  a.workspace = ws.defined() ? ws.mutable_data_ptr() : nullptr;
  C10_CUDA_CHECK(exact_columns_launch(a));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

void exact_round_cuda(const at::Tensor& w2d, at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(w2d.device());
  C10_CUDA_CHECK(exact_round_launch(w2d.const_data_ptr<int64_t>(), w2d.size(0), out.mutable_data_ptr(), out_fmt(out.scalar_type()),
                                    c10::cuda::getCurrentCUDAStream().stream()));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

const Backend& cuda_backend() {
  static const Backend cuda{&full_cuda, &exact_rows_cuda, &exact_round_cuda, &exact_columns_cuda, &op_step_cuda, &full_op_cuda, /*gathers=*/true,
                                  /*gathers_rows=*/false, /*maps_outputs=*/true};
  return cuda;
}

std::vector<at::Tensor> reduce_cuda_op(const at::Tensor& self, c10::string_view op, at::OptionalIntArrayRef dim, bool keepdim,
                                       std::optional<at::ScalarType> dtype, double ord, double correction, c10::string_view method) {
  const c10::cuda::CUDAGuard guard(self.device());
  return reduce_impl(self, op, dim, keepdim, dtype, ord, correction, method, cuda_backend());
}

at::Tensor exact_partial_cuda(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  const c10::cuda::CUDAGuard guard(self.device());
  return exact_partial_impl(self, dim, keepdim, cuda_backend());
}

at::Tensor exact_round_cuda_op(const at::Tensor& words, at::ScalarType dtype) {
  const c10::cuda::CUDAGuard guard(words.device());
  return exact_round_impl(words, dtype, cuda_backend());
}

at::Tensor sum_cuda(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                    c10::string_view method) {
  const Backend& cuda = cuda_backend();
  // The common call, reducekit.sum(x) on a real dense tensor: straight to the whole-tensor path,
  // without the signature's bookkeeping (host time is what small eager calls cost).
  if (!dim.has_value() && !keepdim && !dtype.has_value() && method == "auto" && self.layout() == at::kStrided &&
      !self.is_conj() && !self.is_neg() && is_real_supported(self.scalar_type())) {
    return reduce_cuda(self, Method::Auto, to_rk_dtype(self.scalar_type()), 0, 0, 0);
  }
  // reducekit.sum(x, method="exact") on a float tensor: straight to the kernel as well.
  if (!dim.has_value() && !keepdim && !dtype.has_value() && method == "exact" && self.layout() == at::kStrided && !self.is_neg() &&
      self.numel() > 0 && (self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble ||
                           self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16)) {
    const at::Tensor x = self.is_contiguous() ? self : self.contiguous();
    at::Tensor out = at::empty({}, self.options());
    exact_rows_cuda(x.view({1, x.numel()}), out, /*words=*/false);
    return out;
  }
  const c10::cuda::CUDAGuard guard(self.device());
  return sum_impl(self, dim, keepdim, dtype, method, cuda);
}

// Integers in error messages go through std::to_string: streaming an int64 with operator<<
// segfaulted in libstdc++'s locale code on the H200 machine's toolchain (c10::str -> codecvt).
at::Tensor single_pass_cuda(const at::Tensor& self, int64_t block, int64_t unroll, int64_t grid, bool pdl) {
  const DType dt = to_rk_dtype(self);
  TORCH_CHECK_VALUE(single_pass_config_supported(static_cast<int>(block), static_cast<int>(unroll)),
                    "reducekit._single_pass: (block=" + std::to_string(block) + ", unroll=" + std::to_string(unroll) +
                        ") is not a compiled configuration; ",
                    "see kConfigs in csrc/cuda/gallery/single_pass.cu.");
  TORCH_CHECK_VALUE(grid >= 0 && grid <= (1 << 20), "reducekit._single_pass: grid=" + std::to_string(grid) +
                    " is out of range; use 0 (one wave) or 1..1048576 blocks.");
  return reduce_cuda(self, Method::SinglePass, dt, static_cast<int>(block), static_cast<int>(unroll), static_cast<int>(grid), pdl);
}

at::Tensor read_probe_cuda(const at::Tensor& self, int64_t block, int64_t unroll, int64_t waves) {
  TORCH_CHECK_VALUE(self.is_contiguous() && reinterpret_cast<uintptr_t>(self.const_data_ptr()) % 16 == 0 && self.nbytes() % 16 == 0,
                    "reducekit._read_probe: input must be contiguous, 16-byte aligned, and a multiple of 16 bytes long");
  TORCH_CHECK_VALUE((block == 256 || block == 512 || block == 1024) && waves >= 1 && waves <= 64,
                    "reducekit._read_probe: block must be 256, 512 or 1024 and waves 1..64, got block=" + std::to_string(block) +
                        ", waves=" + std::to_string(waves));
  const c10::cuda::CUDAGuard guard(self.device());
  at::Tensor sink = at::zeros({}, self.options().dtype(at::kLong));
  const cudaError_t e = read_probe_launch(self.const_data_ptr(), static_cast<int64_t>(self.nbytes() / 16),
                                          reinterpret_cast<unsigned long long*>(sink.mutable_data_ptr()), static_cast<int>(block),
                                          static_cast<int>(unroll), static_cast<int>(waves), device_info(self.get_device()).num_sms,
                                          c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK_VALUE(e != cudaErrorInvalidValue, "reducekit._read_probe: unroll must be 4, 8 or 16, got " + std::to_string(unroll));
  C10_CUDA_CHECK(e);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return sink;
}

}  // namespace
}  // namespace rk

TORCH_LIBRARY_IMPL(reducekit, CUDA, m) {
  m.impl("sum", &rk::sum_cuda);
  m.impl("exact_partial", &rk::exact_partial_cuda);
  m.impl("reduce", &rk::reduce_cuda_op);
  m.impl("exact_round", &rk::exact_round_cuda_op);
  m.impl("_single_pass", &rk::single_pass_cuda);
  m.impl("_read_probe", &rk::read_probe_cuda);
}
