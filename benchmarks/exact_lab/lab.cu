// method="exact"'s lab (benchmarks/exact_lab/build.sh builds it, run.sh runs it on the device):
// times exact's default path for a row (value-independent or checked, as the rule picks; LAB_FORCE:
// the value-independent one at any size) against a plain read of the same bytes, per dtype, size
// and data family, with events around each call (inputs rotated over at least 512 MiB, medians),
// and checks its bits against the checked path of the same build (configuration 256 x 4) on every
// input. Not the benchmark of record (bench_exact_families.py is: against auto and RFA, graph and
// eager): a quick A/B of two builds of exact.cu, NOTES.md issue 22 part 4.
//   lab DTYPES LOG2S FAMILIES REPS     e.g. lab f32,bf16 24,26,28 0,1,2,3,4 20
// LAB_ROWS=R: R rows of 2^LOG2 / R values a call (a many-row launch) instead of one row.
// LAB_UPB=k: the binned path's grid forced to about k units a block (several waves; see args()).
// LAB_CFG="B,U": the value-independent path forced into configuration (B, U) at any size.
// LAB_CLOCKS set: each case's line begins with its UTC time (run.sh samples nvidia-smi meanwhile).
// LAB_PDL set: launches allow programmatic dependent launch, as the extension's do on sm_90.
// LAB_FOREIGN set: as the graph timer does (reducekit/bench/timing.py), a small kernel that is not
// exact's (one block adding to one word) precedes each timed call inside the events; the foreign
// kernel alone is timed the same way and its median subtracted. Under LAB_PDL a call's work before
// its grid dependency wait then overlaps the foreign kernel's end, as in the graph benchmark.
// NEWAPI: the build's ExactArgs has the stream's accumulator words (`acc`).
#include EXACT_CU
#include <algorithm>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ double unif(uint64_t r) { return (r >> 11) * 0x1p-53; }

template <class T> __device__ T from_double(double v);
template <> __device__ float from_double<float>(double v) { return static_cast<float>(v); }
template <> __device__ double from_double<double>(double v) { return v; }
template <> __device__ __half from_double<__half>(double v) { return __float2half_rn(static_cast<float>(v)); }
template <> __device__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __float2bfloat16_rn(static_cast<float>(v)); }

template <class T> __device__ T wide_bits(uint64_t r);
template <> __device__ float wide_bits<float>(uint64_t r) {
  uint32_t e = (r >> 40) % 255;
  return __uint_as_float(((r >> 63) << 31) | (e << 23) | (r & 0x7fffff));
}
template <> __device__ double wide_bits<double>(uint64_t r) {
  uint64_t e = (r >> 52) % 2047;
  uint64_t r2 = mix(r);
  return __longlong_as_double(((r2 >> 63) << 63) | (e << 52) | (r2 & ((1ull << 52) - 1)));
}
template <> __device__ __half wide_bits<__half>(uint64_t r) {
  uint16_t e = (r >> 40) % 31;
  return __ushort_as_half(static_cast<uint16_t>(((r >> 63) << 15) | (e << 10) | (r & 0x3ff)));
}
template <> __device__ __nv_bfloat16 wide_bits<__nv_bfloat16>(uint64_t r) {
  uint16_t e = (r >> 40) % 255;
  return __ushort_as_bfloat16(static_cast<uint16_t>(((r >> 63) << 15) | (e << 7) | (r & 0x7f)));
}

template <class T>
__global__ void gen(T* x, int64_t n, int fam, uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const uint64_t r = mix(seed * 0x100000001b3ull + i);
    const uint64_t r2 = mix(r);
    double v;
    const double big = sizeof(T) == 2 && std::is_same_v<T, __half> ? 3e4 : 1e30;
    switch (fam) {
      case 0: v = 0.5 + (unif(r) + unif(r2) + unif(mix(r2)) - 1.5) * 2.0; break;            // normal-ish, mean 0.5
      case 1: v = ((r >> 63) ? -1 : 1) * pow(10.0, -8.0 + 11.0 * unif(r2)); break;           // gradient
      case 2: x[i] = wide_bits<T>(r); continue;                                               // wide
      case 3: {                                                                                // cancel
        const uint64_t rp = mix(seed * 77 + (i >> 1));
        v = (i & 1) ? -big * (1 + unif(rp)) : big * (1 + unif(rp));
        if ((i & 15) == 5) v = unif(r2) - 0.25;
        break;
      }
      case 5: {                                                                                // tiny: zeros, subnormals, the smallest normals
        const uint64_t k = r % 4;
        if (k == 0) { v = 0.0; break; }
        if constexpr (std::is_same_v<T, double>) {
          const uint64_t e = k == 1 ? 0 : (r2 >> 60) % 3;  // subnormal, or exponent field 0-2
          x[i] = __longlong_as_double(((r2 >> 63) << 63) | (e << 52) | (mix(r2) & ((1ull << 52) - 1)));
          continue;
        }
        x[i] = wide_bits<T>(r & ~(0xffull << 40));  // exponent field 0: zero or subnormal
        continue;
      }
      case 6: v = 0.1; break;                                                                    // equal (the benchmark's)
      case 7: v = ldexp(static_cast<double>(static_cast<int64_t>(r % 2001) - 1000), sizeof(T) == 2 && std::is_same_v<T, __half> ? -4 : 20); break;  // int2e20
      default: v = (i % 4096 == 17) ? __longlong_as_double(0x7ff8000000000000ll) : unif(r) + 0.1; break;  // nan_spread
    }
    x[i] = from_double<T>(v);
  }
}

__global__ void read_kernel(const uint4* __restrict__ v, int64_t nvec, unsigned* sink) {
  unsigned acc = 0;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < nvec; i += 4 * stride) {
    uint4 a = __ldg(v + i), b = __ldg(v + i + stride), c = __ldg(v + i + 2 * stride), d = __ldg(v + i + 3 * stride);
    acc ^= a.x + b.y + c.z + d.w + a.w + b.x + c.y + d.z;
  }
  for (; i < nvec; i += stride) { uint4 a = __ldg(v + i); acc ^= a.x + a.w; }
  if (acc == 0x12345678u) *sink = acc;
}

static double median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

#ifdef RK_EXACT_TRACE
// One more launch with the kernel's timeline recorded (exact.cu's RK_TRACE points: 0 entry, 1 the
// values begin, 2 the values end, 3 the block's counts are ready, 4 its words are added, 5 the row's
// last block is done). Per point, over the blocks that reached it: the time since the first block's
// entry (globaltimer, us), median and largest; and the block's own cycles since its entry (clock64),
// median, in us at clock_ghz.
static void trace_case(rk::ExactArgs a, void* ws, cudaStream_t st, double clock_ghz) {
  using rk::kTraceBlocks;
  using rk::kTracePoints;
  const size_t n = size_t(kTraceBlocks) * kTracePoints * 2;
  std::vector<unsigned long long> zero(n, 0), t(n);
  CK(cudaMemcpyToSymbol(rk::g_exact_trace, zero.data(), n * 8));
  a.workspace = ws;
  CK(rk::exact_launch(a));
  CK(cudaStreamSynchronize(st));
  CK(cudaMemcpyFromSymbol(t.data(), rk::g_exact_trace, n * 8));
  unsigned long long t0 = ~0ull;
  int blocks = 0;
  for (int b = 0; b < kTraceBlocks; ++b)
    if (t[(b * kTracePoints) * 2]) t0 = std::min(t0, t[(b * kTracePoints) * 2]), ++blocks;
  printf("    trace: %d blocks;", blocks);
  const char* names[6] = {"entry", "values", "values_end", "block_end", "added", "row_end"};
  for (int k = 0; k < 6; ++k) {
    std::vector<float> g, c;
    for (int b = 0; b < kTraceBlocks; ++b) {
      const unsigned long long gk = t[(b * kTracePoints + k) * 2], ck = t[(b * kTracePoints + k) * 2 + 1];
      if (!gk || !t[(b * kTracePoints) * 2]) continue;
      g.push_back((gk - t0) * 1e-3f);
      c.push_back(static_cast<float>((ck - t[(b * kTracePoints) * 2 + 1]) / (clock_ghz * 1e3)));
    }
    if (g.empty()) continue;
    printf(" %s %.2f/%.2f (own %.2f)", names[k], median(g), *std::max_element(g.begin(), g.end()), median(c));
  }
  printf("\n");
  // Which blocks end their values late: by units walked (point 6), and by SM (point 7, SM + 1).
  struct Blk { float end; int sm; long long units; };
  std::vector<Blk> bl;
  for (int b = 0; b < kTraceBlocks; ++b) {
    const unsigned long long* q = &t[size_t(b) * kTracePoints * 2];
    if (!q[0] || !q[2 * 2] || !q[(kTracePoints - 1) * 2]) continue;
    bl.push_back({(q[2 * 2] - t0) * 1e-3f, int(q[(kTracePoints - 1) * 2]) - 1, (long long)q[6 * 2]});
  }
  if (bl.empty()) return;
  std::vector<float> e;
  for (auto& b : bl) e.push_back(b.end);
  std::sort(e.begin(), e.end());
  auto pct = [&](double f) { return e[std::min(e.size() - 1, size_t(f * (e.size() - 1) + 0.5))]; };
  printf("    values_end p10 %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f;", pct(0.1), pct(0.5), pct(0.9), pct(0.99), e.back());
  std::map<long long, std::vector<float>> by_units;
  for (auto& b : bl) by_units[b.units].push_back(b.end);
  printf(" by units:");
  for (auto& kv : by_units) printf(" %lld x%zu med %.2f max %.2f", kv.first, kv.second.size(), median(kv.second), *std::max_element(kv.second.begin(), kv.second.end()));
  printf("\n");
  std::map<int, std::vector<Blk>> by_sm;
  for (auto& b : bl) by_sm[b.sm].push_back(b);
  struct SmRow { int sm; size_t blocks; long long units; float last; };
  std::vector<SmRow> rows;
  for (auto& kv : by_sm) {
    SmRow r{kv.first, kv.second.size(), 0, 0.f};
    for (auto& b : kv.second) r.units += b.units, r.last = std::max(r.last, b.end);
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const SmRow& a, const SmRow& b) { return a.last < b.last; });
  std::vector<float> lasts;
  for (auto& r : rows) lasts.push_back(r.last);
  printf("    by SM (%zu SMs): last block's values_end min %.2f med %.2f max %.2f; earliest:", rows.size(), lasts.front(), median(lasts), lasts.back());
  for (size_t i = 0; i < std::min<size_t>(4, rows.size()); ++i) printf(" sm%d %zub %lldu %.2f", rows[i].sm, rows[i].blocks, rows[i].units, rows[i].last);
  printf("; latest:");
  for (size_t i = rows.size() > 6 ? rows.size() - 6 : 0; i < rows.size(); ++i) printf(" sm%d %zub %lldu %.2f", rows[i].sm, rows[i].blocks, rows[i].units, rows[i].last);
  printf("\n");
}
#endif

__global__ void foreign_kernel(float* w) {
  if (threadIdx.x == 0) w[0] += 1.0f;
}

struct DT { const char* name; rk::DType dt; int bytes; rk::exact::OutFmt o; };

static double clock_ghz = 1.98;

template <class T>
void run_case(const DT& d, int lg, const std::vector<int>& fams, int reps, int sms) {
  const int64_t n = int64_t(1) << lg;
  const size_t bytes = n * sizeof(T);
  // LAB_ROWS=R: R rows of n / R values a call (each output in its own 8-byte slot of the call's R)
  const int64_t R = getenv("LAB_ROWS") ? std::max(1, atoi(getenv("LAB_ROWS"))) : 1;
  const int nbuf = std::max<int>(2, (int)((512ull << 20) / bytes));
  std::vector<T*> bufs(nbuf);
  for (auto& b : bufs) CK(cudaMalloc(&b, bytes + 64));
  unsigned* sink; CK(cudaMalloc(&sink, 4));
  uint64_t* outs; CK(cudaMalloc(&outs, 8 * 2 * nbuf * R)); CK(cudaMemset(outs, 0, 8 * 2 * nbuf * R));
  unsigned* counter; CK(cudaMalloc(&counter, 4)); CK(cudaMemset(counter, 0, 4));
  long long* acc; CK(cudaMalloc(&acc, 8 * 4096)); CK(cudaMemset(acc, 0, 8 * 4096));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto args = [&](int k, bool ref) {
    rk::ExactArgs a;
    a.in = bufs[k]; a.rows = R; a.len = n / R; a.dtype = d.dt; a.out = outs + (2 * k + (ref ? 1 : 0)) * R; a.out_fmt = d.o;
    a.stream = st; a.num_sms = sms; a.cc = 90; a.pdl = getenv("LAB_PDL") != nullptr;
#ifdef NEWAPI
    a.counter = counter; a.acc = acc;
#endif
    if (ref) { a.tuning.exact_block = 256; a.tuning.exact_unroll = 4; }
    else if (getenv("LAB_FORCE")) { a.tuning.exact_block = 128; a.tuning.exact_unroll = 4; }
    // LAB_CFG="B,U": the value-independent path in configuration (B, U) (one the build compiles).
    if (!ref && getenv("LAB_CFG")) { a.tuning.exact_block = atoi(getenv("LAB_CFG")); a.tuning.exact_unroll = atoi(strchr(getenv("LAB_CFG"), ',') + 1); }
    // LAB_UPB=k: the value-independent path's grid forced to about k units (block x unroll vectors)
    // a block, where the wave of resident blocks is the default: a grid of several waves, whose
    // blocks the hardware hands to SMs as they finish.
    if (!ref && getenv("LAB_UPB")) {
      #ifdef LAB_CHUNKED_SCALE  // the build's float64 chunked path loads kExactChunkedUnrollScale times the vectors
      const int64_t scale = sizeof(T) == 8 ? rk::kExactChunkedUnrollScale : 1;
#else
      const int64_t scale = 1;
#endif
      const int64_t unit = int64_t(rk::kExactBinnedBlock) * rk::kExactBinnedUnroll * scale * (16 / int64_t(sizeof(T)));
      const int64_t units = (n / R + unit - 1) / unit, k = std::max(1, atoi(getenv("LAB_UPB")));
      a.tuning.exact_bpr = static_cast<int>((units + k - 1) / k);
    }
    return a;
  };
  void* ws = nullptr; size_t wsb = 0;
  for (int ref = 0; ref < 2; ++ref) wsb = std::max(wsb, rk::exact_workspace(args(0, ref)));
  if (wsb) CK(cudaMalloc(&ws, wsb));
  for (int fam : fams) {
    for (int k = 0; k < nbuf; ++k) gen<T><<<sms * 8, 256, 0, st>>>(bufs[k], n, fam, 1000 * fam + k + 1);
    CK(cudaStreamSynchronize(st));
    // bits: default path vs the checked path
    int mism = 0;
    for (int k = 0; k < nbuf; ++k) {
      for (int ref = 0; ref < 2; ++ref) { auto a = args(k, ref); a.workspace = ws; CK(rk::exact_launch(a)); }
    }
    CK(cudaStreamSynchronize(st));
    std::vector<uint64_t> h(2 * nbuf * R);
    CK(cudaMemcpy(h.data(), outs, 16 * nbuf * R, cudaMemcpyDeviceToHost));
    for (int k = 0; k < nbuf; ++k) mism += memcmp(&h[2 * k * R], &h[(2 * k + 1) * R], 8 * R) != 0;
    std::vector<float> tr, te, tf;
    const bool foreign = getenv("LAB_FOREIGN") != nullptr;
    float* fw = reinterpret_cast<float*>(sink);
    for (int r = 0; r < reps + 3; ++r) {
      const int k = r % nbuf;
      float ms;
      CK(cudaEventRecord(e0, st));
      read_kernel<<<sms * 8, 256, 0, st>>>(reinterpret_cast<const uint4*>(bufs[k]), bytes / 16, sink);
      CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) tr.push_back(ms);
      const int k2 = (r + 1) % nbuf;
      auto a = args(k2, false); a.workspace = ws;
      CK(cudaEventRecord(e0, st));
      if (foreign) foreign_kernel<<<1, 32, 0, st>>>(fw);
      CK(rk::exact_launch(a));
      CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) te.push_back(ms);
      if (foreign) {
        CK(cudaEventRecord(e0, st));
        foreign_kernel<<<1, 32, 0, st>>>(fw);
        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) tf.push_back(ms);
      }
    }
    const double rm = median(tr) * 1e3, em = (median(te) - (foreign ? median(tf) : 0.0)) * 1e3;
    if (getenv("LAB_CLOCKS")) { time_t t = time(nullptr); char b[32]; strftime(b, sizeof b, "%H:%M:%S", gmtime(&t)); printf("[%s] ", b); }
    printf("%-8s%s 2^%d fam%d  read %8.1f us  exact %8.1f us  ratio %5.2f  %5.1f%%ceil  mismatch %d/%d  bits %016llx\n", d.name, R > 1 ? ("_r" + std::to_string(R)).c_str() : "", lg, fam, rm, em,
           em / rm, 100.0 * bytes / (em * 1e-6) / 4.6e12, mism, nbuf, (unsigned long long)h[0]);
#ifdef RK_EXACT_TRACE
    trace_case(args(0, false), ws, st, clock_ghz);
#endif
    fflush(stdout);
  }
  for (auto b : bufs) cudaFree(b);
  cudaFree(sink); cudaFree(outs); cudaFree(counter); cudaFree(acc); if (ws) cudaFree(ws);
  cudaStreamDestroy(st);
}

int main(int argc, char** argv) {
  // lab DTYPES LOG2S FAMS REPS   e.g.  lab f32,bf16 24,26,28 0,1,2,3,4 20
  std::string dts = argc > 1 ? argv[1] : "f32,bf16,f64,f16";
  std::string lgs = argc > 2 ? argv[2] : "24,26,28";
  std::string fs = argc > 3 ? argv[3] : "0,1,2,3,4";
  int reps = argc > 4 ? atoi(argv[4]) : 20;
  auto split = [](const std::string& s) { std::vector<std::string> r; size_t p = 0; while (p <= s.size()) { size_t q = s.find(',', p); if (q == std::string::npos) q = s.size(); r.push_back(s.substr(p, q - p)); p = q + 1; } return r; };
  std::vector<int> fams; for (auto& f : split(fs)) fams.push_back(atoi(f.c_str()));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  if (khz > 0) clock_ghz = khz * 1e-6;
  printf("# %s, %d SMs, %.2f GHz\n", prop.name, sms, clock_ghz);
  for (auto& ds : split(dts)) for (auto& ls : split(lgs)) {
    const int lg = atoi(ls.c_str());
    if (ds == "f32") run_case<float>({"float32", rk::DType::Float32, 4, rk::exact::OutFmt::Single}, lg, fams, reps, sms);
    if (ds == "bf16") run_case<__nv_bfloat16>({"bfloat16", rk::DType::BFloat16, 2, rk::exact::OutFmt::BFloat16}, lg, fams, reps, sms);
    if (ds == "f16") run_case<__half>({"float16", rk::DType::Float16, 2, rk::exact::OutFmt::Half}, lg, fams, reps, sms);
    if (ds == "f64") run_case<double>({"float64", rk::DType::Float64, 8, rk::exact::OutFmt::Double}, lg, fams, reps, sms);
  }
  return 0;
}
