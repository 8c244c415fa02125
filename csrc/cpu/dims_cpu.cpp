// CPU kernels: the whole-tensor sum and the dims engine's rows and columns steps.
//
// The CPU accumulation order, one for every kernel (the bits of a result follow from it alone):
// a run of N values along a reduced extent (a row, a column, or the whole tensor for dim=None) is
// cut into chunks of kChunk = 2^16 values; inside a chunk, value i (counted from the chunk's
// start) is added to lane i % 16, each lane summing its values in index order from +0.0; the 16
// lanes are combined by a pairwise tree (lane k += lane k + w for w = 8, 4, 2, 1); chunk results
// are added in chunk order. It depends only on N and the dtypes: never on the thread count, on
// being called inside a parallel region, on how many other rows or columns there are, nor on the
// instruction set; and a column sums exactly as a row of the same values (a one-column matrix is
// a row for the engine). Integer sums wrap in uint64, where any order gives the same bits; their
// kernels group values as they like.
//
// Two builds of the hot loops, chosen once at run time (cpu_isa()):
//  - baseline: plain C++ for any CPU (x86-64 without AVX2 included; the compiler may vectorize it
//    with SSE2, across lanes or columns only, which keeps every lane's order);
//  - avx2: the same order written with AVX2 intrinsics (F16C converts float16; FMA serves as an
//    exact add, see vacc), in functions compiled for that target only (RK_AVX2), so the rest of
//    the wheel still runs on x86-64 CPUs without AVX2.
//  The two give bitwise equal results: each lane sees the same additions in the same order
//  (nothing multiplies, so no FMA contraction can apply, and nothing is reassociated: no
//  -ffast-math), and a NaN result leaves as one canonical NaN (from_acc). REDUCEKIT_CPU_ISA=baseline
//  (read once, at the first CPU sum) forces the baseline build, so that tests can compare the two
//  on an AVX2 machine.
//
// The parallel split (parallel_tasks, cpu/parallel_cpu.h, over chunks, rows, or column blocks) only
// decides who computes which chunk; partials are stored and combined in index order by one thread.
#include "cpu/dims_cpu.h"
#include "cpu/dispatch_cpu.h"
#include "cpu/parallel_cpu.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/faults.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define RK_CPU_X86 1
#include <immintrin.h>
// A function compiled for AVX2 + FMA + F16C whatever the build's flags; called only when cpu_isa()
// says the CPU has all three. FMA is used explicitly (vacc) as an exact add; these functions hold
// no floating-point multiplication that the compiler could contract into an FMA.
#define RK_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define RK_CPU_X86 0
#endif

namespace rk {
namespace {

constexpr int64_t kChunk = 1 << 16;  // values per chunk of a run
constexpr int kLanes = 16;           // lanes of a chunk (the order above)

template <class Acc>
constexpr bool kIntAcc = std::is_same_v<Acc, uint64_t>;

// Columns step: a task's accumulators, one per lane and column (one per integer column, whose
// order is free), take at most kLaneBytes (L2-resident). Wide blocks matter more than L1: each
// task reads every row of its block as one contiguous stretch (kColBlock columns), which the
// prefetchers stream far better than short pieces (1.8x on (4096, 4096) float32 over 32 KiB).
constexpr int64_t kLaneBytes = 256 << 10;
// A block also spans at least kMinRowBytes of a row, even when that leaves a thread without a
// task: two threads reading alternate short pieces of each row measured slower than one thread
// reading whole rows ((65536, 256) float32: 0.9x torch in two 512-byte halves, 1.2-1.5x whole).
constexpr int64_t kMinRowBytes = 4096;
template <class Acc>
constexpr int64_t kLaneRows = kIntAcc<Acc> ? 1 : kLanes;
template <class Acc>
constexpr int64_t kColBlock = kLaneBytes / (kLaneRows<Acc> * static_cast<int64_t>(sizeof(Acc)));
// Float columns of at most kFewRowsMax rows take blocks whose lanes hold at most kFewRowsLaneBytes
// (L1). These kernels sum float32 in float64 and 16-bit floats in float32 (float64 sums take the
// operators' loops: engine/op_desc.h, cpu_sum_kernels), so the lane array is twice a block's row or
// more, and in L2 it bounded the step (5 alternating runs, 4 MiB a case, new / old time: float32 of
// 17-64 rows 0.56-0.78, bfloat16 of 17-25 rows 0.64-0.74; benchmarks/results/cpu/s59_small_columns/).
constexpr int64_t kFewRowsMax = 64;
constexpr int64_t kFewRowsLaneBytes = 16 << 10;

// ---------------------------------------------------------------------------------------------
// Conversions between the element, accumulator and output types.

// Integers add as uint64 (wrap-around defined, equal to torch's int64 wrap-around).
template <class Acc, class In>
inline Acc to_acc(In v) {
  if constexpr (kIntAcc<Acc>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<Acc>(v);
  }
}

// A float result that is NaN leaves as one NaN of Out, CUDA's for an accumulator of type Acc
// (cuda_nan, cpu/dispatch_cpu.h: 16-bit floats' float32 sums 0x7fff, float64 sums the quiet
// NaN): when two NaNs meet, which one an addition returns (sign and payload) depends on the
// operand order the compiler picked for a commutative add, so without this the two builds (or two
// compilers) could differ in NaN bits.
template <class Out, class Acc>
inline Out from_acc(Acc v) {
  if constexpr (kIntAcc<Acc>) {
    return static_cast<Out>(static_cast<int64_t>(v));
  } else {
    return v != v ? cuda_nan<Out, Acc>() : static_cast<Out>(v);
  }
}

// ---------------------------------------------------------------------------------------------
// Baseline kernels: plain C++, any CPU. Each is the reference for its AVX2 twin below.

// The lane tree of one chunk: lane k += lane k + w for w = 8, 4, 2, 1; the chunk sum is left in
// lane[0]. Every scalar form (the baseline, and the AVX2 kernels' last columns) runs this one.
template <class Acc>
inline Acc lane_tree(Acc (&lane)[kLanes]) {
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) lane[k] += lane[k + w];
  return lane[0];
}

// Lane sum of one chunk x[0, n), n <= kChunk: value i into lane i % 16, then the lane tree. The
// values after the last whole group of 16 are the tail.
template <class In, class Acc>
Acc chunk_sum_base(const In* x, int64_t n) {
  constexpr int L = kLanes;
  Acc lane[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int k = 0; k < L; ++k) lane[k] += to_acc<Acc>(x[i + k]);
  if constexpr (!RK_FAULT_IS(CpuDropTail))  // planted: the tail (the last n mod 16 values) is dropped
    for (int k = 0; i + k < n; ++k) lane[k] += to_acc<Acc>(x[i + k]);
  return lane_tree(lane);
}

// out[r] = chunk sum of x[r * n, r * n + n) for r < rows (a batch of short rows, or of equal chunks).
template <class In, class Acc>
void chunk_sums_base(const In* x, int64_t rows, int64_t n, Acc* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = chunk_sum_base<In, Acc>(x + r * n, n);
}

// One chunk of nc columns at once: the column values x[r * ld + c] for r < rows (<= kChunk).
// Row r goes to lane r % 16 of its column (lanes[(r % 16) * nc + c], zeroed first), then the lane
// tree leaves each column's chunk sum in lanes[c]: the additions chunk_sum makes on the same
// values as a row. Integer columns skip the lanes (any order): every row adds into lanes[c].
template <class In, class Acc>
void column_chunk_base(const In* x, int64_t rows, int64_t ld, int64_t nc, Acc* lanes) {
  constexpr int64_t L = kLaneRows<Acc>;
  std::fill(lanes, lanes + L * nc, Acc(0));
  for (int64_t r = 0; r < rows; ++r) {
    Acc* acc = lanes + (r % L) * nc;
    const In* row = x + r * ld;
    for (int64_t c = 0; c < nc; ++c) acc[c] += to_acc<Acc>(row[c]);
  }
  for (int64_t w = L / 2; w > 0; w /= 2)
    for (int64_t k = 0; k < w; ++k)
      for (int64_t c = 0; c < nc; ++c) lanes[k * nc + c] += lanes[(k + w) * nc + c];
}

// ---------------------------------------------------------------------------------------------
// AVX2 kernels. The 16 lanes of a float chunk live in NV = 16 / W vectors of the accumulator type
// (W = 4 doubles or 8 floats; lane k at vector k / W, position k % W); cvt_w converts W values to
// a vector, lanes_tree is the baseline's lane tree.
#if RK_CPU_X86

template <class Acc>
struct Vec;  // Acc's 256-bit vector of W lanes
template <>
struct Vec<double> {
  using T = __m256d;
  static constexpr int W = 4;
};
template <>
struct Vec<float> {
  using T = __m256;
  static constexpr int W = 8;
};
template <>
struct Vec<uint64_t> {  // integer accumulators (the columns step only)
  using T = __m256i;
  static constexpr int W = 4;
};

template <class Acc>
using VecT = typename Vec<Acc>::T;
template <class Acc>
constexpr VecT<Acc>* kTag = nullptr;  // selects cvt_w's accumulator type

RK_AVX2 inline __m256d vadd(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
RK_AVX2 inline __m256 vadd(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
RK_AVX2 inline __m256i vadd(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }
RK_AVX2 inline __m256d vload(const double* p) { return _mm256_loadu_pd(p); }
RK_AVX2 inline __m256 vload(const float* p) { return _mm256_loadu_ps(p); }
RK_AVX2 inline __m256i vload(const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
RK_AVX2 inline void vstore(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
RK_AVX2 inline void vstore(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
RK_AVX2 inline void vstore(uint64_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
RK_AVX2 inline void vzero(__m256d& v) { v = _mm256_setzero_pd(); }
RK_AVX2 inline void vzero(__m256& v) { v = _mm256_setzero_ps(); }

// acc + v, for values of type In. float32 -> float64 sums add with fmadd(v, 1.0, acc): v * 1.0 is
// exact, so the one rounding of the FMA gives the add's bits, and the FMA units do the additions
// while the add units do the conversions (about 1.3x the throughput of plain adds on Zen 3, with
// the 8 independent accumulators of two runs).
template <class In>
RK_AVX2 inline __m256d vacc(__m256d acc, __m256d v) {
  if constexpr (std::is_same_v<In, float>) {
    return _mm256_fmadd_pd(v, _mm256_set1_pd(1.0), acc);
  } else {
    return _mm256_add_pd(acc, v);
  }
}
template <class In>
RK_AVX2 inline __m256 vacc(__m256 acc, __m256 v) { return _mm256_add_ps(acc, v); }
template <class In>
RK_AVX2 inline __m256i vacc(__m256i acc, __m256i v) { return _mm256_add_epi64(acc, v); }

// W values at p converted exactly to one accumulator vector (value j at position j); the second
// argument only selects the accumulator type.
RK_AVX2 inline __m256d cvt_w(const float* p, __m256d*) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
RK_AVX2 inline __m256d cvt_w(const double* p, __m256d*) { return _mm256_loadu_pd(p); }
RK_AVX2 inline __m256 cvt_w(const float* p, __m256*) { return _mm256_loadu_ps(p); }
RK_AVX2 inline __m256 cvt_w(const c10::Half* p, __m256*) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
RK_AVX2 inline __m256 cvt_w(const c10::BFloat16* p, __m256*) {  // bfloat16 is the top half of a float
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
RK_AVX2 inline __m256i load4_bytes(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_castsi128_si256(_mm_cvtsi32_si128(v));
}
RK_AVX2 inline __m256i cvt_w(const int64_t* p, __m256i*) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
RK_AVX2 inline __m256i cvt_w(const int32_t* p, __m256i*) { return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
RK_AVX2 inline __m256i cvt_w(const int16_t* p, __m256i*) { return _mm256_cvtepi16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
RK_AVX2 inline __m256i cvt_w(const int8_t* p, __m256i*) { return _mm256_cvtepi8_epi64(_mm256_castsi256_si128(load4_bytes(p))); }
RK_AVX2 inline __m256i cvt_w(const uint8_t* p, __m256i*) { return _mm256_cvtepu8_epi64(_mm256_castsi256_si128(load4_bytes(p))); }
RK_AVX2 inline __m256i cvt_w(const bool* p, __m256i*) { return _mm256_cvtepu8_epi64(_mm256_castsi256_si128(load4_bytes(p))); }

// The lane tree: lane k += lane k + w for w = 8, 4, 2, 1 (exactly the baseline's additions):
// whole vectors while w >= W, then inside the first vector.
RK_AVX2 inline double vector_tree(__m256d a) {
  const __m128d b = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));  // w = 2
  return _mm_cvtsd_f64(_mm_add_sd(b, _mm_unpackhi_pd(b, b)));                            // w = 1
}
RK_AVX2 inline float vector_tree(__m256 a) {
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));  // w = 4
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));                                          // w = 2
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));                         // w = 1
}
RK_AVX2 inline double lanes_tree(const __m256d* v) {  // 4 vectors
  return vector_tree(vadd(vadd(v[0], v[2]), vadd(v[1], v[3])));  // w = 8, then 4
}
RK_AVX2 inline float lanes_tree(const __m256* v) {  // 2 vectors
  return vector_tree(vadd(v[0], v[1]));  // w = 8
}

// Float chunk sums of R (1 or 2) runs of n values, x + r * stride, interleaved: the lanes of two
// runs are independent chains, so two runs give 8 accumulator vectors for float32 and float64 (4
// for 16-bit floats), enough to keep the add (or FMA) units busy, and two memory streams, which
// the 2-core Zen 3 machine reads 10-20% faster from DRAM than one. Each run's additions are the
// baseline's. The tail (n mod 16 values) is read through a zero-padded 16-value buffer: lane
// k < n mod 16 adds its value, the others add +0.0, which changes no lane (a lane starts at +0.0
// and a sum is -0.0 only if both addends are, so a lane is never -0.0).
template <int R, class In, class Acc>
RK_AVX2 inline void chunk_sums_r(const In* x, int64_t stride, int64_t n, Acc* out) {
  constexpr int W = Vec<Acc>::W, NV = kLanes / W;
  VecT<Acc> acc[R][NV];
#pragma GCC unroll 8
  for (int j = 0; j < R * NV; ++j) vzero(acc[j / NV][j % NV]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = vacc<In>(acc[r][j], cvt_w(x + r * stride + i + j * W, kTag<Acc>));
    }
  }
  if constexpr (!RK_FAULT_IS(CpuDropTail)) {  // planted: the tail (the last n mod 16 values) is dropped
    if (i < n) {
#pragma GCC unroll 2
      for (int r = 0; r < R; ++r) {
        In tail[kLanes];
        for (int k = 0; k < kLanes; ++k) tail[k] = i + k < n ? x[r * stride + i + k] : In();
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[r][j] = vacc<In>(acc[r][j], cvt_w(tail + j * W, kTag<Acc>));
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) out[r] = lanes_tree(acc[r]);
}

// Integer chunk sums: wrapping uint64, so the grouping is free; only the planted tail fault must
// match the baseline (the values after the last group of 16 are the tail). hsum: the 4 lanes.
RK_AVX2 inline uint64_t hsum_u64(__m256i v) {
  const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(s)) + static_cast<uint64_t>(_mm_extract_epi64(s, 1));
}

template <class In>
RK_AVX2 uint64_t int_tail(const In* x, int64_t body, int64_t n) {
  uint64_t s = 0;
  if constexpr (!RK_FAULT_IS(CpuDropTail))  // planted: the last n mod 16 values are dropped
    for (int64_t i = body; i < n; ++i) s += to_acc<uint64_t>(x[i]);
  return s;
}

// Bytes (bool, uint8, int8): _mm256_sad_epu8 adds 8 unsigned bytes into each 64-bit lane. int8 is
// biased to unsigned (x ^ 0x80 = x + 128) and the bias taken off at the end.
template <class In>
RK_AVX2 uint64_t byte_sum_avx2(const In* x, int64_t n) {
  constexpr bool kSigned = std::is_same_v<In, int8_t>;
  const auto* p = reinterpret_cast<const uint8_t*>(x);
  const __m256i zero = _mm256_setzero_si256(), bias = _mm256_set1_epi8(kSigned ? -128 : 0);
  const int64_t body = n / 16 * 16;
  __m256i a0 = zero, a1 = zero;
  __m128i a2 = _mm_setzero_si128();
  int64_t i = 0;
  for (; i + 64 <= body; i += 64) {
    a0 = _mm256_add_epi64(a0, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), bias), zero));
    a1 = _mm256_add_epi64(a1, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)), bias), zero));
  }
  for (; i < body; i += 16) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), _mm256_castsi256_si128(bias));
    a2 = _mm_add_epi64(a2, _mm_sad_epu8(v, _mm_setzero_si128()));
  }
  uint64_t s = hsum_u64(_mm256_add_epi64(a0, a1)) + static_cast<uint64_t>(_mm_cvtsi128_si64(a2)) +
               static_cast<uint64_t>(_mm_extract_epi64(a2, 1));
  if constexpr (kSigned) s -= 128 * static_cast<uint64_t>(body);
  return s + int_tail(x, body, n);
}

RK_AVX2 inline __m256i add_widened(__m256i total, __m256i a) {  // total (4 x 64) += the 8 int32 lanes of a
  total = _mm256_add_epi64(total, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(a)));
  return _mm256_add_epi64(total, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(a, 1)));
}

// int16: _mm256_madd_epi16 by 1 adds pairs into int32 lanes (|pair| <= 2^16). Blocks of 2^17
// values (at most 2^13 + 2 values per int32 lane, |lane| < 2^29) are widened to 64 bits, long
// before an int32 lane could overflow.
RK_AVX2 uint64_t int16_sum_avx2(const int16_t* x, int64_t n) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t body = n / 16 * 16;
  __m256i total = _mm256_setzero_si256();
  for (int64_t i = 0; i < body;) {
    const int64_t end = std::min(body, i + (int64_t{1} << 17));
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    for (; i + 32 <= end; i += 32) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), ones));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 16)), ones));
    }
    if (i < end) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), ones));
      i += 16;
    }
    total = add_widened(add_widened(total, a0), a1);
  }
  return hsum_u64(total) + int_tail(x, body, n);
}

// int32 and int64: sign-extended to 64-bit lanes (int32) and added, two accumulators per run; R
// runs x + r * stride at once (two memory streams, as in chunk_sums_r).
template <int R, class In>
RK_AVX2 inline void wide_int_sums_r(const In* x, int64_t stride, int64_t n, uint64_t* out) {
  const int64_t body = n / 16 * 16;
  __m256i acc[R][2];
#pragma GCC unroll 4
  for (int j = 0; j < 2 * R; ++j) acc[j / 2][j % 2] = _mm256_setzero_si256();
  for (int64_t i = 0; i < body; i += 16) {
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int j = 0; j < 16; j += 8) {
        acc[r][0] = _mm256_add_epi64(acc[r][0], cvt_w(x + r * stride + i + j, kTag<uint64_t>));
        acc[r][1] = _mm256_add_epi64(acc[r][1], cvt_w(x + r * stride + i + j + 4, kTag<uint64_t>));
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) out[r] = hsum_u64(_mm256_add_epi64(acc[r][0], acc[r][1])) + int_tail(x + r * stride, body, n);
}

// chunk_sums_base in the AVX2 build: float, int32 and int64 runs two at a time, run r with run
// r + rows / 2 (two memory streams far apart, even for short rows), the narrow integers (already
// many times torch's speed) one by one.
template <class In, class Acc>
RK_AVX2 void chunk_sums_avx2(const In* x, int64_t rows, int64_t n, Acc* out) {
  const int64_t half = rows / 2;
  int64_t r = 0;
  if constexpr (!kIntAcc<Acc>) {
    for (; r < half; ++r) {
      Acc pair[2];
      chunk_sums_r<2>(x + r * n, half * n, n, pair);
      out[r] = pair[0];
      out[r + half] = pair[1];
    }
    if (rows % 2) chunk_sums_r<1>(x + (rows - 1) * n, 0, n, out + rows - 1);
  } else if constexpr (sizeof(In) >= 4) {
    for (; r < half; ++r) {
      uint64_t pair[2];
      wide_int_sums_r<2>(x + r * n, half * n, n, pair);
      out[r] = pair[0];
      out[r + half] = pair[1];
    }
    if (rows % 2) wide_int_sums_r<1>(x + (rows - 1) * n, 0, n, out + rows - 1);
  } else {
    for (; r < rows; ++r) {
      if constexpr (sizeof(In) == 1) {
        out[r] = byte_sum_avx2(x + r * n, n);
      } else {
        out[r] = int16_sum_avx2(x + r * n, n);
      }
    }
  }
}

// acc[c] += x[j * step + c] for j = 0, ..., M - 1 in that order, for c < nc: M rows of one lane
// through one load and store of its accumulators.
template <int M, class In, class Acc>
RK_AVX2 inline void add_rows(const In* x, int64_t step, int64_t nc, Acc* acc) {
  constexpr int64_t W = Vec<Acc>::W;
  int64_t c = 0;
  for (; c + W <= nc; c += W) {
    auto a = vload(acc + c);
    for (int j = 0; j < M; ++j) a = vacc<In>(a, cvt_w(x + j * step + c, kTag<Acc>));
    vstore(acc + c, a);
  }
  for (; c < nc; ++c)
    for (int j = 0; j < M; ++j) acc[c] += to_acc<Acc>(x[j * step + c]);
}

// S_w(k), the value of lane k after the tree's step w (lane k += lane k + w for w = 8, 4, 2, 1),
// for the columns [c, c + W) of a lane array: S_16(k) is lane k, S_w(k) = S_2w(k) + S_2w(k + w),
// and S_1(0) the column sum. Evaluated depth first, in registers.
template <int w, class Acc>
RK_AVX2 inline VecT<Acc> lane_tree_at(const Acc* lanes, int64_t nc, int k, int64_t c) {
  if constexpr (w == kLanes) {
    return vload(lanes + k * nc + c);
  } else {
    return vadd(lane_tree_at<2 * w>(lanes, nc, k, c), lane_tree_at<2 * w>(lanes, nc, k + w, c));
  }
}

// Columns of R <= 16 rows (float accumulators): lane k holds row k alone (+0.0 + row k), so each
// column vector's lanes are read from x and its tree is evaluated in registers, with no lane array;
// the lanes that hold no row (k >= R) are skipped. Skipping is exact: a lane starts at +0.0 and so
// is never -0.0 (+0 + -0 is +0 in round-to-nearest, the FMA's exact add included), and y + (+0.0)
// is y for every other y, NaN and infinities included, so every skipped addition is one of the full
// tree's that changes nothing: the same bits. R is a template argument (few_rows_table), so the
// tree's shape is fixed at compile time: with R a run-time value its 15 tests and the lanes' loops
// ran in every column vector and held (8, 2^17) float32 at 3.6x torch's time. Through the lane array
// (16 lanes zeroed, added into, then read by the tree, 32 / R passes over the lanes a row of input)
// it took 7x.
template <int R, int w, int k, class In, class Acc>
RK_AVX2 inline VecT<Acc> few_rows_tree(const In* x, int64_t ld, int64_t c) {
  if constexpr (w == kLanes) {
    VecT<Acc> a;
    vzero(a);
    if constexpr (RK_FAULT_IS(CpuFewRowsLane) && k == 1) return a;  // planted: row 1 is not read
    return vacc<In>(a, cvt_w(x + k * ld + c, kTag<Acc>));
  } else {
    VecT<Acc> a = few_rows_tree<R, 2 * w, k, In, Acc>(x, ld, c);
    if constexpr (k + w < R) a = vadd(a, few_rows_tree<R, 2 * w, k + w, In, Acc>(x, ld, c));
    return a;
  }
}

// The chunk sums of nc columns of R rows into lanes[0, nc).
template <int R, class In, class Acc>
RK_AVX2 void few_rows_chunk(const In* x, int64_t ld, int64_t nc, Acc* lanes) {
  constexpr int64_t W = Vec<Acc>::W;
  int64_t c = 0;
  for (; c + 2 * W <= nc; c += 2 * W) {  // two vectors' trees: independent chains
    const VecT<Acc> a = few_rows_tree<R, 1, 0, In, Acc>(x, ld, c);
    const VecT<Acc> b = few_rows_tree<R, 1, 0, In, Acc>(x, ld, c + W);
    vstore(lanes + c, a);
    vstore(lanes + c + W, b);
  }
  for (; c + W <= nc; c += W) vstore(lanes + c, few_rows_tree<R, 1, 0, In, Acc>(x, ld, c));
  for (; c < nc; ++c) {  // the last columns: the baseline's lanes and tree
    Acc lane[kLanes] = {};
    for (int k = 0; k < R; ++k)
      if (!(RK_FAULT_IS(CpuFewRowsLane) && k == 1)) lane[k] += to_acc<Acc>(x[k * ld + c]);
    lanes[c] = lane_tree(lane);
  }
}

// few_rows_chunk<R> for R = 1 .. 16, indexed by R - 1.
template <class In, class Acc, size_t... I>
constexpr auto few_rows_table(std::index_sequence<I...>) {
  return std::array<void (*)(const In*, int64_t, int64_t, Acc*), sizeof...(I)>{&few_rows_chunk<static_cast<int>(I) + 1, In, Acc>...};
}

// column_chunk_base, vectorized across columns. Groups of 4 x 16 rows (then 2 x 16) give lane k
// its rows k, k + 16, k + 32, k + 48 in that order in one pass over the lane's accumulators
// (integers, one lane: 4 or 2 consecutive rows); the remaining rows go one by one. When the block's
// rows are short (narrow matrices such as (2^19, 32)), each pass also prefetches its rows of the
// next group: the group's rows are visited out of order, 16 rows apart, which the hardware
// prefetcher follows poorly (measured 1.9x on (2^19, 32) bfloat16, 1.1-1.3x float32). No effect
// on results.
constexpr int64_t kPrefetchRowBytes = 512;
template <class In, class Acc>
RK_AVX2 void column_chunk_avx2(const In* x, int64_t rows, int64_t ld, int64_t nc, Acc* lanes) {
  constexpr int64_t L = kLaneRows<Acc>, W = Vec<Acc>::W;
  if constexpr (!kIntAcc<Acc>) {
    if (rows >= 1 && rows <= kLanes) {
      static constexpr auto table = few_rows_table<In, Acc>(std::make_index_sequence<kLanes>{});
      return table[static_cast<size_t>(rows - 1)](x, ld, nc, lanes);
    }
  }
  std::fill(lanes, lanes + L * nc, Acc(0));
  const int64_t row_bytes = nc * static_cast<int64_t>(sizeof(In));
  const bool prefetch = row_bytes <= kPrefetchRowBytes;
  int64_t r = 0;
  for (; r + 4 * L <= rows; r += 4 * L) {
    for (int64_t k = 0; k < L; ++k) {
      if (prefetch && r + 8 * L <= rows) {
        for (int64_t j = 0; j < 4; ++j) {
          const char* next = reinterpret_cast<const char*>(x + (r + 4 * L + k + j * L) * ld);
          for (int64_t b = 0; b < row_bytes; b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
        }
      }
      add_rows<4>(x + (r + k) * ld, L * ld, nc, lanes + k * nc);
    }
  }
  if (r + 2 * L <= rows) {
    for (int64_t k = 0; k < L; ++k) add_rows<2>(x + (r + k) * ld, L * ld, nc, lanes + k * nc);
    r += 2 * L;
  }
  for (; r < rows; ++r) add_rows<1>(x + r * ld, 0, nc, lanes + (r % L) * nc);
  if constexpr (!kIntAcc<Acc>) {
    int64_t c = 0;
    for (; c + W <= nc; c += W) vstore(lanes + c, lane_tree_at<1>(lanes, nc, 0, c));
    for (; c < nc; ++c) {
      Acc lane[kLanes];
      for (int k = 0; k < kLanes; ++k) lane[k] = lanes[k * nc + c];
      lanes[c] = lane_tree(lane);
    }
  }
}

#endif  // RK_CPU_X86

// ---------------------------------------------------------------------------------------------
// Choice of build, once per process.

enum class Isa { Baseline, Avx2 };

Isa cpu_isa() {
  static const Isa isa = [] {
#if RK_CPU_X86
    const char* env = std::getenv("REDUCEKIT_CPU_ISA");
    if (env != nullptr && std::strcmp(env, "baseline") == 0) return Isa::Baseline;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) return Isa::Avx2;
#endif
    return Isa::Baseline;
  }();
  return isa;
}

// The two kernels of an (In, Acc) pair in the chosen build.
template <class In, class Acc>
struct Kernels {
  void (*chunk_sums)(const In* x, int64_t rows, int64_t n, Acc* out);
  void (*column_chunk)(const In* x, int64_t rows, int64_t ld, int64_t nc, Acc* lanes);
};

template <class In, class Acc>
Kernels<In, Acc> kernels() {
#if RK_CPU_X86
  if (cpu_isa() == Isa::Avx2) return {&chunk_sums_avx2<In, Acc>, &column_chunk_avx2<In, Acc>};
#endif
  return {&chunk_sums_base<In, Acc>, &column_chunk_base<In, Acc>};
}

// ---------------------------------------------------------------------------------------------
// Drivers: the chunking, the parallel split and the ordered combine, shared by both builds.

// K rows of L contiguous values (the whole-tensor sum is one row). Rows of one chunk: parallel
// over rows, in batches through a small accumulator buffer. Longer rows: parallel over (row,
// chunk) tasks, each chunk's partial stored, then each row's partials added in chunk order.
template <class In, class Acc, class Out>
void rows(const In* x, int64_t K, int64_t L, Out* out) {
  const Kernels<In, Acc> k = kernels<In, Acc>();
  if (L <= kChunk) {
    parallel_tasks(K, L, [&](int64_t begin, int64_t end) {
      constexpr int64_t kBatch = 256;
      Acc part[kBatch];
      for (int64_t r = begin; r < end; r += kBatch) {
        const int64_t m = std::min(kBatch, end - r);
        k.chunk_sums(x + r * L, m, L, part);
        for (int64_t j = 0; j < m; ++j) out[r + j] = from_acc<Out>(part[j]);
      }
    });
    return;
  }
  const int64_t chunks = (L + kChunk - 1) / kChunk, full = L / kChunk;
  std::vector<Acc> part(static_cast<size_t>(K * chunks));
  parallel_tasks(K * chunks, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end;) {
      const int64_t r = t / chunks, c = t % chunks;
      const int64_t m = std::min(end - t, std::max<int64_t>(full - c, 1));  // whole chunks of row r from c on
      if (c < full) {
        k.chunk_sums(x + r * L + c * kChunk, m, kChunk, part.data() + t);
      } else {
        k.chunk_sums(x + r * L + c * kChunk, 1, L - c * kChunk, part.data() + t);
      }
      t += m;
    }
  });
  for (int64_t r = 0; r < K; ++r) {
    Acc s = part[r * chunks];
    for (int64_t c = 1; c < chunks; ++c) s += part[r * chunks + c];
    out[r] = from_acc<Out>(s);
  }
}

// B batches of an R x C matrix reduced over R: each column is a run of R values in the order
// above. Tasks are (batch, chunk of kChunk rows, block of columns); each runs column_chunk on its
// block. With one chunk the task writes the output; otherwise chunk partials are stored and each
// column's added in chunk order. Blocks are at most kColBlock wide, and narrower (down to
// kMinRowBytes of a row) when that leaves a thread without a task; no column's bits depend on the
// blocking.
template <class In, class Acc, class Out>
void columns(const In* x, int64_t B, int64_t R, int64_t C, Out* out) {
  const Kernels<In, Acc> k = kernels<In, Acc>();
  const int64_t chunks = std::max<int64_t>(1, (R + kChunk - 1) / kChunk);
  const int64_t threads = at::get_num_threads();
  const int64_t share = (C * B * chunks + threads - 1) / threads;  // columns x (batch, chunk) pairs per thread
  const int64_t narrowest = kMinRowBytes / static_cast<int64_t>(sizeof(In));
  // Float columns of few rows: blocks whose lanes fit L1 (kFewRowsLaneBytes).
  const bool narrow = !kIntAcc<Acc> && R <= kFewRowsMax;
  const int64_t lanes_used = std::min<int64_t>(kLaneRows<Acc>, R);
  const int64_t widest = narrow ? std::max<int64_t>(64, kFewRowsLaneBytes / (lanes_used * static_cast<int64_t>(sizeof(Acc))) / 8 * 8)
                                : kColBlock<Acc>;
  const int64_t block = std::min(widest, std::max(std::min(widest, narrowest), (share + 7) / 8 * 8));
  const int64_t cblocks = (C + block - 1) / block;
  std::vector<Acc> part(chunks > 1 ? static_cast<size_t>(B * chunks * C) : 0);
  const int64_t tasks = B * chunks * cblocks;
  parallel_tasks(tasks, std::min(R, kChunk) * std::min(C, block), [&](int64_t begin, int64_t end) {
    thread_local std::vector<Acc> lanes_buffer;  // reused across calls: kLaneBytes at most
    lanes_buffer.resize(static_cast<size_t>(kLaneRows<Acc> * block));
    Acc* lanes = lanes_buffer.data();
    for (int64_t t = begin; t < end; ++t) {
      const int64_t cb = t % cblocks, ch = (t / cblocks) % chunks, b = t / (cblocks * chunks);
      const int64_t c0 = cb * block, nc = std::min(block, C - c0);
      const int64_t r0 = ch * kChunk, r1 = std::min(R, r0 + kChunk);
      k.column_chunk(x + (b * R + r0) * C + c0, r1 - r0, C, nc, lanes);
      if (chunks == 1) {
        for (int64_t c = 0; c < nc; ++c) out[b * C + c0 + c] = from_acc<Out>(lanes[c]);
      } else {
        std::copy(lanes, lanes + nc, part.begin() + (b * chunks + ch) * C + c0);
      }
    }
  });
  if (chunks == 1) return;
  const int64_t used = RK_FAULT_IS(CpuDimsLastChunk) ? chunks - 1 : chunks;  // planted: last chunk lost
  parallel_tasks(B * C, chunks, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const int64_t b = o / C, c = o % C;
      Acc s = part[(b * chunks) * C + c];
      for (int64_t ch = 1; ch < used; ++ch) s += part[(b * chunks + ch) * C + c];
      out[o] = from_acc<Out>(s);
    }
  });
}

template <class In, class Acc, class Out>
void step(StepKind kind, int64_t outer, int64_t extent, int64_t inner, const void* in, void* out) {
  if (kind == StepKind::Rows) {
    rows<In, Acc, Out>(static_cast<const In*>(in), outer, extent, static_cast<Out*>(out));
  } else {
    columns<In, Acc, Out>(static_cast<const In*>(in), outer, extent, inner, static_cast<Out*>(out));
  }
}

}  // namespace

namespace {
bool types_supported(DType in, DType acc, DType out) {
  if (in == DType::Count) return false;
  if (!is_floating(in)) return acc == DType::Int64 && out == DType::Int64;
  switch (in) {
    case DType::Float16: return acc == DType::Float32 && (out == DType::Float16 || out == DType::Float32);
    case DType::BFloat16: return acc == DType::Float32 && (out == DType::BFloat16 || out == DType::Float32);
    case DType::Float32:
      return (acc == DType::Float64 && (out == DType::Float32 || out == DType::Float64)) ||
             (acc == DType::Float32 && (out == DType::Float32 || out == DType::Float16 || out == DType::BFloat16));
    case DType::Float64: return acc == DType::Float64 && (out == DType::Float64 || out == DType::Float32);
    default: return false;
  }
}
}  // namespace

void cpu_dims_step(StepKind kind, int64_t outer, int64_t extent, int64_t inner, const void* in, DType in_dtype,
                   DType acc_dtype, void* out, DType out_dtype) {
  TORCH_CHECK(types_supported(in_dtype, acc_dtype, out_dtype), "reducekit: internal error: no CPU dims kernel for ",
              kDTypeNames[static_cast<int>(in_dtype)], " -> ", kDTypeNames[static_cast<int>(out_dtype)]);
  dispatch_cpu(in_dtype, [&](auto t) {
    using In = typename decltype(t)::T;
    if constexpr (std::is_integral_v<In>) {
      step<In, uint64_t, int64_t>(kind, outer, extent, inner, in, out);
    } else if constexpr (std::is_same_v<In, c10::Half> || std::is_same_v<In, c10::BFloat16>) {
      if (out_dtype == DType::Float32) {
        step<In, float, float>(kind, outer, extent, inner, in, out);
      } else {
        step<In, float, In>(kind, outer, extent, inner, in, out);
      }
    } else if constexpr (std::is_same_v<In, float>) {
      if (acc_dtype == DType::Float64) {
        if (out_dtype == DType::Float64) {
          step<float, double, double>(kind, outer, extent, inner, in, out);
        } else {
          step<float, double, float>(kind, outer, extent, inner, in, out);
        }
      } else if (out_dtype == DType::Float16) {
        step<float, float, c10::Half>(kind, outer, extent, inner, in, out);
      } else if (out_dtype == DType::BFloat16) {
        step<float, float, c10::BFloat16>(kind, outer, extent, inner, in, out);
      } else {
        step<float, float, float>(kind, outer, extent, inner, in, out);
      }
    } else {
      if (out_dtype == DType::Float32) {
        step<double, double, float>(kind, outer, extent, inner, in, out);
      } else {
        step<double, double, double>(kind, outer, extent, inner, in, out);
      }
    }
  });
}

bool cpu_avx2() { return cpu_isa() == Isa::Avx2; }

bool cpu_avx512() {
  static const bool on = [] {
#if RK_CPU_X86
    const char* env = std::getenv("REDUCEKIT_CPU_ISA");
    if (!cpu_avx2() || (env != nullptr && std::strcmp(env, "avx2") == 0)) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;  // libgcc checks the OS's ZMM state too (XGETBV)
#else
    return false;
#endif
  }();
  return on;
}

// The whole-tensor sum is one row of n values in the rows step's order.
void cpu_full_sum(const void* in, int64_t n, DType dtype, void* out) {
  dispatch_cpu(dtype, [&](auto t) {
    using In = typename decltype(t)::T;
    const auto* x = static_cast<const In*>(in);
    if constexpr (std::is_integral_v<In>) {
      rows<In, uint64_t, int64_t>(x, 1, n, static_cast<int64_t*>(out));
    } else if constexpr (std::is_same_v<In, c10::Half> || std::is_same_v<In, c10::BFloat16>) {
      rows<In, float, In>(x, 1, n, static_cast<In*>(out));
    } else {
      rows<In, double, In>(x, 1, n, static_cast<In*>(out));
    }
  });
}

}  // namespace rk
