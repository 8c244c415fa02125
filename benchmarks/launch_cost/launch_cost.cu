// Host cost of one kernel launch, by how it is launched (issue 21: an eager call of a small case is
// host-bound, and the profiler showed our cudaLaunchKernelExC at about twice torch's cudaLaunchKernel).
//
//   bash build.sh   (nvcc -I../../csrc; bin/launch_cost)
//   ./launch_cost            # one line a variant: host us per launch (median of batches)
//
// Variants: the triple-chevron launch; cudaLaunchKernelEx without attributes; cudaLaunchKernelEx
// with programmatic stream serialization (PDL, as launch_maybe_pdl sets it on sm_90); each with a
// small (24-byte) and a large (512-byte) parameter block, as the engine's kernels take. One block
// of one warp, empty but for griddepcontrol.wait, so the GPU never holds the host back: the time per
// launch is the host's.
#include <cuda_runtime.h>

#include "cuda/block/common.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

struct Big {
  long long w[64];  // 512 bytes, about the engine's Outs + Params + shape arguments
};

__global__ void small_kernel(const float* x, long long n, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) out[0] = x[0];
}

__global__ void big_kernel(const float* x, Big b, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  if (threadIdx.x == 0 && blockIdx.x == 0 && b.w[0] < 0) out[0] = x[0];
}

// The engine's own launcher (cuda/block/common.cuh): cudaLaunchKernelEx, the PDL attribute when asked.
template <class K, class... A>
cudaError_t launch_ex(K k, cudaStream_t s, bool pdl, A... a) {
  return rk::launch_maybe_pdl(k, dim3(1), dim3(32), s, pdl, a...);
}

template <class F>
double per_launch_us(F f, cudaStream_t s) {
  const int n = 2000, batches = 9;
  for (int i = 0; i < 200; ++i) f();
  cudaStreamSynchronize(s);
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    cudaStreamSynchronize(s);
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(t.begin(), t.end());
  return t[batches / 2];
}

int main() {
  float *x, *out;
  cudaMalloc(&x, 4096);
  cudaMalloc(&out, 4096);
  cudaStream_t made;
  cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking);
  Big big = {};
  struct V {
    const char* name;
    double us;
  };
  std::vector<V> v;
  // The legacy default stream (torch's current stream unless one is set) and a created stream; each
  // twice, the second pass showing the spread.
  for (int rep = 0; rep < 4; ++rep) {
    cudaStream_t s = rep % 2 ? made : static_cast<cudaStream_t>(0);
    v.push_back({"chevron, 24-byte params", per_launch_us([&] { small_kernel<<<1, 32, 0, s>>>(x, 1, out); }, s)});
    v.push_back({"chevron, 528-byte params", per_launch_us([&] { big_kernel<<<1, 32, 0, s>>>(x, big, out); }, s)});
    v.push_back({"cudaLaunchKernelEx, no attribute, 24-byte", per_launch_us([&] { launch_ex(small_kernel, s, false, (const float*)x, 1LL, out); }, s)});
    v.push_back({"cudaLaunchKernelEx, no attribute, 528-byte", per_launch_us([&] { launch_ex(big_kernel, s, false, (const float*)x, big, out); }, s)});
    v.push_back({"cudaLaunchKernelEx, PDL, 24-byte", per_launch_us([&] { launch_ex(small_kernel, s, true, (const float*)x, 1LL, out); }, s)});
    v.push_back({"cudaLaunchKernelEx, PDL, 528-byte", per_launch_us([&] { launch_ex(big_kernel, s, true, (const float*)x, big, out); }, s)});
  }
  const cudaError_t e = cudaDeviceSynchronize();
  for (size_t i = 0; i < v.size(); ++i)
    std::printf("%s%-46s %7.2f us\n", i % 6 == 0 ? (i / 6 % 2 ? "-- created non-blocking stream\n" : "-- legacy default stream\n") : "", v[i].name, v[i].us);
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
