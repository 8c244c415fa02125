// The columns kernel's lab (benchmarks/columns_lab/build.sh builds it against two revisions of
// csrc, run.sh runs it on the device): times reduce.cuh's columns step (run_step, StepKind::Columns,
// the shape rule of csrc/cuda/engine/shapes.cu) for a list of (op, dtype, B, R, C) cases with CUDA
// events around each call (inputs rotated over at least 512 MiB, medians), beside a plain read of
// the same bytes, and prints an FNV hash of each case's output bits: two builds must print the same
// hashes (the kernel's order does not depend on how a thread reads its rows). Not the benchmark of
// record (benchmarks/sweep.py is, against torch): a quick A/B of two builds of the columns kernel,
// without building the extension (build.sh compiles it here: minutes, not the extension's build).
//   lab CASEFILE REPS [LPT LOADS [TX0 [SCALAR_LANES]]]   CASEFILE lines: op dtype B R C   (the sweep's ops; dtypes bf16 f16 f32 f64 i32 i8)
// LAB_KIND=rows: the rows step instead (lines op dtype K L 1: K rows of L values), shaped by the
// extension's rules unless LAB_ROWS_LANES / LAB_ROWS_STRIPES / LAB_ROWS_SELECT force it.
#include "cuda/engine/family.cuh"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

using namespace rk;

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
template <class T> __device__ T from_double(double v) { return static_cast<T>(v); }
template <> __device__ __half from_double<__half>(double v) { return __float2half_rn(static_cast<float>(v)); }
template <> __device__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __float2bfloat16_rn(static_cast<float>(v)); }

// Normal-ish data with a nonzero mean (integers: -100..99), seeded by the case.
template <class T>
__global__ void gen(T* x, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const uint64_t r = mix(seed * 0x100000001b3ull + i);
    double v;
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<double>(static_cast<int>(r % 200) - 100);
    } else {
      const double u = ((r >> 11) * 0x1p-53), w = ((mix(r) >> 11) * 0x1p-53);
      v = 0.5 + (u + w - 1.0) * 2.4;
    }
    x[i] = from_double<T>(v);
  }
}

__global__ void read_kernel(const uint4* __restrict__ v, int64_t nvec, unsigned* sink) {
  unsigned a = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nvec; i += (int64_t)gridDim.x * blockDim.x) {
    const uint4 q = __ldg(v + i);
    a ^= q.x ^ q.y ^ q.z ^ q.w;
  }
  if (a == 0x12345679u) *sink = a;
}

static double median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static uint64_t fnv(const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

template <class In, class I>
static void run_case(const char* op, const char* dt, int64_t B, int64_t R, int64_t C, int reps, const TuningOverrides& o,
                     int sms, int cc) {
  using Op = typename I::Op;
  using Out0 = typename I::Out0;
  using Out1 = typename I::Out1;
  using Acc = typename Op::Acc;
  const int64_t n = B * R * C, nout = B * C;
  const size_t bytes = n * sizeof(In);
  const int copies = static_cast<int>(std::max<size_t>(1, std::min<size_t>(64, (512ull << 20) / std::max<size_t>(bytes, 1) + 1)));
  std::vector<In*> bufs(copies);
  for (int k = 0; k < copies; ++k) {
    CK(cudaMalloc(&bufs[k], bytes + 16));
    gen<In><<<1024, 256>>>(bufs[k], n, 12345);  // every copy the same values: one hash
  }
  Out0* o0;
  Out1* o1;
  CK(cudaMalloc(&o0, nout * sizeof(Out0)));
  CK(cudaMalloc(&o1, nout * sizeof(Out1)));
  const Gather g{};
  // LAB_KIND=rows: B rows of R values (C must be 1), the rows step with the extension's lanes rule
  // (family.cuh's run), in place of the columns step.
  const bool rows = getenv("LAB_KIND") && !strcmp(getenv("LAB_KIND"), "rows");
  const StepKind kind = rows ? StepKind::Rows : StepKind::Columns;
  const int rows_lpt = !rows ? 1
                       : eng::IsPlainSum<Op>::value ? 0
                       : Op::kBatched ? ops_rows_lanes_per_thread(static_cast<int>(sizeof(In)), fam::IsSelect<Op>::value, fam::IsWelford<Op>::value,
                                                                  lanes_of(R, static_cast<int>(sizeof(In))))
                                      : 1;
  const size_t ws = eng::step_workspace<Op>(kind, B, R, C, sizeof(In), bufs[0], sms, rows_lpt, o, g);
  void* w = nullptr;
  if (ws) CK(cudaMalloc(&w, ws));
  unsigned* sink;
  CK(cudaMalloc(&sink, 4));
  red::Params prm;
  prm.n = R;
  if (rows) prm.short_vectors = fam::rows_short_vectors<In, Op>(o, R);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  const eng::Shape s = eng::step_shape<Op>(kind, B, R, C, sizeof(In), bufs[0], sms, rows_lpt, o, g);
  auto call = [&](int k) {
    CK((eng::run_step<In, Op, Out0, Out1>(kind, B, R, C, g, bufs[k], eng::Outs<Out0, Out1>{o0, o1}, w, prm, st,
                                          cc, sms, false, rows_lpt, nullptr, o)));
  };
  CK(cudaMemset(o0, 0xA5, nout * sizeof(Out0)));
  call(0);
  CK(cudaStreamSynchronize(st));
  std::vector<unsigned char> h(nout * sizeof(Out0));
  CK(cudaMemcpy(h.data(), o0, h.size(), cudaMemcpyDeviceToHost));
  uint64_t hash = fnv(h.data(), h.size());
  if (Op::kOutputs == 2) {
    std::vector<unsigned char> h1(nout * sizeof(Out1));
    CK(cudaMemcpy(h1.data(), o1, h1.size(), cudaMemcpyDeviceToHost));
    hash ^= fnv(h1.data(), h1.size()) * 31;
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> tk, tr;
  for (int r = 0; r < reps + 3; ++r) {
    const int k = r % copies;
    float ms;
    CK(cudaEventRecord(e0, st));
    read_kernel<<<sms * 8, 256, 0, st>>>(reinterpret_cast<const uint4*>(bufs[k]), bytes / 16, sink);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) tr.push_back(ms);
    const int k2 = (r + copies / 2) % copies;
    CK(cudaEventRecord(e0, st));
    call(k2);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= 3) tk.push_back(ms);
  }
  const double km = median(tk) * 1e3, rm = median(tr) * 1e3;
  if (rows)  // the rows shape: W threads a row, LPT lanes a thread, stripes, nseg blocks a row
    printf("%-13s %-5s B=%-7lld R=%-7lld C=%-7lld rows W=%-3d LPT=%-2d stripes=%d nseg=%-5lld%s blocks=%-7lld  %9.1f us  read %8.1f us  x%5.2f  hash %016llx\n",
           op, dt, (long long)B, (long long)R, (long long)C, s.W, s.LPT, s.stripes, (long long)s.nseg, s.select_rows ? " sel" : "", (long long)s.blocks, km, rm,
           km / rm, (unsigned long long)hash);
  else
  printf("%-13s %-5s B=%-7lld R=%-7lld C=%-7lld %s TX=%-3d TY=%-3d TB=%-3d LPT=%-2d tiles_y=%-5lld blocks=%-7lld  %9.1f us  read %8.1f us  x%5.2f  hash %016llx\n",
         op, dt, (long long)B, (long long)R, (long long)C,
         s.loads == eng::ColumnLoads::Scalar ? "scal" : s.loads == eng::ColumnLoads::Realigned ? "real" : "vec ", s.TX, s.TY, s.TB, s.LPT,
         (long long)s.tiles_y, (long long)s.blocks, km, rm, km / rm, (unsigned long long)hash);
  fflush(stdout);
  for (auto b : bufs) CK(cudaFree(b));
  CK(cudaFree(o0));
  CK(cudaFree(o1));
  if (w) CK(cudaFree(w));
  CK(cudaFree(sink));
  CK(cudaStreamDestroy(st));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

template <red::OpKind K, class In>
using ImplOf = red::OpImpl<K, red::NormOrd::Two, In, fam::kHalfLike<In>>;

template <class In>
static void by_op(const std::string& op, const char* dt, int64_t B, int64_t R, int64_t C, int reps, const TuningOverrides& o, int sms, int cc) {
  if (op == "sum") return run_case<In, ImplOf<red::OpKind::Sum, In>>("sum", dt, B, R, C, reps, o, sms, cc);
  if (op == "argmax") return run_case<In, ImplOf<red::OpKind::ArgMax, In>>("argmax", dt, B, R, C, reps, o, sms, cc);
  if (op == "amax") return run_case<In, ImplOf<red::OpKind::Amax, In>>("amax", dt, B, R, C, reps, o, sms, cc);
  if (op == "count_nonzero") return run_case<In, ImplOf<red::OpKind::CountNonzero, In>>("count_nonzero", dt, B, R, C, reps, o, sms, cc);
  if constexpr (!std::is_integral_v<In>) {
    if (op == "mean") return run_case<In, ImplOf<red::OpKind::Mean, In>>("mean", dt, B, R, C, reps, o, sms, cc);
    if (op == "var_mean") return run_case<In, ImplOf<red::OpKind::VarMean, In>>("var_mean", dt, B, R, C, reps, o, sms, cc);
    if (op == "logsumexp") return run_case<In, ImplOf<red::OpKind::LogSumExp, In>>("logsumexp", dt, B, R, C, reps, o, sms, cc);
    if (op == "vector_norm") return run_case<In, ImplOf<red::OpKind::Norm, In>>("vector_norm", dt, B, R, C, reps, o, sms, cc);
  }
  fprintf(stderr, "unknown op %s for %s\n", op.c_str(), dt);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: lab CASEFILE REPS [LPT LOADS [TX0 [SCALAR_LANES]]]\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "r");
  if (!f) return 2;
  const int reps = atoi(argv[2]);
  TuningOverrides o{};
  if (argc > 3) o.columns_lanes = atoi(argv[3]);
  if (argc > 4) o.columns_loads = atoi(argv[4]);
  if (argc > 5) o.columns_tx0 = atoi(argv[5]);  // threads of a row segment (0: the rule's 128 bytes)
  if (argc > 6) o.columns_scalar_lanes = atoi(argv[6]);  // one column a thread: lanes in place of the table's, capped
  // LAB_KIND=rows: LAB_ROWS_LANES (lanes a thread, TuningOverrides::rows_lanes) and LAB_ROWS_STRIPES
  // (-1 one lane, 1 two stripes wherever possible) force the rows shape.
  if (getenv("LAB_ROWS_LANES")) o.rows_lanes = atoi(getenv("LAB_ROWS_LANES"));
  if (getenv("LAB_ROWS_STRIPES")) o.rows_stripes = atoi(getenv("LAB_ROWS_STRIPES"));
  if (getenv("LAB_ROWS_SELECT")) o.rows_select = atoi(getenv("LAB_ROWS_SELECT"));  // argmax / argmin: -1 the tree kernels, 1 the strided warp form
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  const int cc = p.major * 10 + p.minor;
  printf("%s, %d SMs; lanes override %d, loads override %d, tx0 override %d, scalar lanes override %d\n", p.name,
         p.multiProcessorCount, o.columns_lanes, o.columns_loads, o.columns_tx0, o.columns_scalar_lanes);
  char op[32], dt[16];
  long long B, R, C;
  while (fscanf(f, "%31s %15s %lld %lld %lld", op, dt, &B, &R, &C) == 5) {
    const std::string d = dt;
    const int sms = p.multiProcessorCount;
    // LAB_4BYTE: a build of the 4-byte dtypes alone (a third of the compile time and of the binary);
    // LAB_2BYTE: of bfloat16 and float16 alone.
#if !defined(LAB_4BYTE)
    if (d == "bf16") by_op<__nv_bfloat16>(op, dt, B, R, C, reps, o, sms, cc);
    else if (d == "f16") by_op<__half>(op, dt, B, R, C, reps, o, sms, cc);
    else
#endif
#if !defined(LAB_4BYTE) && !defined(LAB_2BYTE)
    if (d == "f64") by_op<double>(op, dt, B, R, C, reps, o, sms, cc);
    else if (d == "i8") by_op<int8_t>(op, dt, B, R, C, reps, o, sms, cc);
    else
#endif
#if !defined(LAB_2BYTE)
    if (d == "f32") by_op<float>(op, dt, B, R, C, reps, o, sms, cc);
    else if (d == "i32") by_op<int32_t>(op, dt, B, R, C, reps, o, sms, cc);
    else
#endif
    fprintf(stderr, "unknown dtype %s (a LAB_4BYTE build has f32 and i32 alone, a LAB_2BYTE build bf16 and f16)\n", dt);
  }
  return 0;
}
