// CUB's reproducible sum (RFA: cub::DeviceReduce::Reduce with cuda::std::plus and
// cuda::execution::determinism::gpu_to_gpu), as a small shared library that bench_exact.py
// calls through ctypes on torch's tensors and current stream, so that RFA is timed in the same
// run, on the same data and with the same timers as method="exact" (issue 22).
//
// It needs CCCL's main branch (the CCCL 3.0 that ships with CUDA 13.0 has no RFA). Built by
// benchmarks/rfa/build.sh against the headers in CCCL_DIR (cub/, libcudacxx/include, thrust/).
// RFA takes float and double (16-bit input is widened to float32 on the fly); its temporary storage comes from CUB's default stream-ordered
// memory resource on each call (as a user who calls it this way pays).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/execution.determinism.h>
#include <cuda/execution.require.h>
#include <cuda/std/functional>
#include <cuda/stream_ref>

namespace {
template <class T>
int rfa_sum(const void* in, void* out, long long n, void* stream) {
  const auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                             cuda::stream_ref{static_cast<cudaStream_t>(stream)}};
  const cudaError_t e = cub::DeviceReduce::Reduce(static_cast<const T*>(in), static_cast<T*>(out), n,
                                                  cuda::std::plus<T>{}, T{}, env);
  return static_cast<int>(e != cudaSuccess ? e : cudaGetLastError());
}

// 16-bit input: each value widened to float32 (exact), then RFA over float (TransformReduce).
template <class T>
struct widen {
  __host__ __device__ float operator()(const T& v) const { return static_cast<float>(v); }
};
template <class T>
int rfa_sum16(const void* in, void* out, long long n, void* stream) {
  const auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                             cuda::stream_ref{static_cast<cudaStream_t>(stream)}};
  const cudaError_t e = cub::DeviceReduce::TransformReduce(static_cast<const T*>(in), static_cast<float*>(out), n,
                                                           cuda::std::plus<float>{}, widen<T>{}, 0.0f, env);
  return static_cast<int>(e != cudaSuccess ? e : cudaGetLastError());
}
}  // namespace

extern "C" {
// dtype: 0 float32, 1 float64 (out of the same type), 2 bfloat16, 3 float16 (out float32).
// Returns a cudaError_t (0: launched).
int rk_rfa_sum(const void* in, void* out, long long n, int dtype, void* stream) {
  if (dtype == 0) return rfa_sum<float>(in, out, n, stream);
  if (dtype == 1) return rfa_sum<double>(in, out, n, stream);
  if (dtype == 2) return rfa_sum16<__nv_bfloat16>(in, out, n, stream);
  if (dtype == 3) return rfa_sum16<__half>(in, out, n, stream);
  return static_cast<int>(cudaErrorInvalidValue);
}
int rk_rfa_cub_version() { return CUB_VERSION; }
}
