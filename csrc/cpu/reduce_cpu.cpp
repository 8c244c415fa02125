// CPU loops of the reduction operators (engine/reduce_ops.h). A reduced run of N values is cut
// into lanes of G = 64 / sizeof(element) values, each reduced in index order (or by the
// operator's lane function), and the lane results are combined by a perfect pairwise tree built
// with a binary-counter stack: the CUDA kernels' order. Rows are spread over threads; a long row
// is cut into chunks of kChunkLanes lanes (aligned subtrees) reduced in parallel and combined in
// index order; columns are walked a tile of columns at a time (kTileBytes of a row), a lane of rows
// at a time, a column of many lanes in chunks of kChunkLanes as a long row.
#include "cpu/reduce_cpu.h"
#include "cpu/dims_cpu.h"
#include "cpu/dispatch_cpu.h"
#include "cpu/parallel_cpu.h"
#include "engine/op_impl.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RK_OPS_AVX2_LANES 1
// AVX2, F16C and FMA (cpu_avx2() requires all three): FMA for the explicit fused steps only (the
// float64 exponentials, the 2-norm's x * x + a that nvcc fuses: vfold, the batched lanes'
// std::fma); the build passes -ffp-contract=off, so no product is contracted into an add unless
// the code asks for it. (Until session 45 a second macro, RK_OPS_FMA, added FMA to this target for
// those steps alone.)
#define RK_OPS_AVX2 __attribute__((target("avx2,f16c,fma")))
// The same with AVX-512F (cpu_avx512()): the sum-like operators' and logsumexp's 16 lanes at a time.
#define RK_OPS_AVX512 __attribute__((target("avx512f,avx2,f16c,fma")))
#endif

namespace rk {

// The types the two backends share (engine/op_impl.h's TypesOf), pinned to literal types here and
// in the other backend: Welford's runs in the value type, narrow integers compared as int32.
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Var, red::NormOrd::Two, float, false>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::VarMean, red::NormOrd::Two, c10::Half, true>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Std, red::NormOrd::Two, c10::BFloat16, true>::Op, red::Welford<float, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Var, red::NormOrd::Two, double, false>::Op, red::Welford<double, double>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::Amax, red::NormOrd::Two, int8_t, false>::Op, red::MapReduce<int, int, red::MaxM>>);
static_assert(std::is_same_v<red::OpImpl<red::OpKind::AMinMax, red::NormOrd::Two, bool, false>::Op, red::MinMax<int>>);

namespace {

constexpr int64_t kChunkLanes = 4096;
constexpr int64_t kTile = 64;           // columns of a tile at least
constexpr int64_t kTileBytes = 4096;    // bytes of a row a tile spans, where the matrix is that wide
constexpr int64_t kIntColumnsTileBytes = 256 << 10;  // a tile of integer amax/amin columns, all its rows (int_columns_whole)
constexpr int64_t kColTreeBytes = 32 << 10;  // a narrow tile's 16 lanes read at once (joint_columns16), at most
constexpr int kMaxLevels = 64;

template <class In>
inline constexpr bool kHalfLike = std::is_same_v<In, c10::Half> || std::is_same_v<In, c10::BFloat16>;
template <class In>
using Wide = red::SumAccOf<kHalfLike<In>>;  // the `wide` output (dtype= widening): the sum accumulator

template <class T, class In>
inline T cvt(In v) {
  if constexpr (kHalfLike<In>) {
    return static_cast<T>(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// A float result that is NaN leaves as one NaN of Out, the one CUDA writes for an accumulator of
// type R (cuda_nan, cpu/dispatch_cpu.h), as dims_cpu's from_acc does for sums.
template <class Out, class R>
inline Out out_cvt(R v) {
  if constexpr (std::is_floating_point_v<R> && !std::is_integral_v<Out>) {
    if (v != v) return cuda_nan<Out, R>();
  }
  if constexpr (kHalfLike<Out>) {
    return Out(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);
  }
}

// CUDA's float64 exp (libdevice's __nv_exp), as nvcc 13's PTX for exp(double) spells it: n =
// round(x log2 e) by the 1.5 x 2^52 shifter in one fused multiply-add, r = x - n ln 2 in two fused
// steps, e^r by a degree-11 polynomial in fused steps, 2^n added to the exponent field (n's low
// 12 bits: a 32-bit add to the high word). |x| at or above 708.39 (the high word against
// 0x4086232B) takes the edges: 0 for x < 0, x + inf else (inf, NaN), except that below 745.13
// (0x40874800) 2^n is applied as two factors (subnormal and overflowing results). Every step is
// an IEEE operation, so std::fma reproduces it bit for bit; FMA instructions where the CPU has them.
namespace nvexp {
inline double from_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
inline uint64_t bits_of(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
inline double from_words(uint32_t lo, uint32_t hi) { return from_bits((uint64_t{hi} << 32) | lo); }
constexpr uint64_t kLog2e = 0x3FF71547652B82FEull, kShift = 0x4338000000000000ull, kNegShift = 0xC338000000000000ull;
constexpr uint64_t kNegLn2Hi = 0xBFE62E42FEFA39EFull, kNegLn2Lo = 0xBC7ABC9E3B39803Full;
constexpr uint64_t kP[10] = {0x3E5ADE1569CE2BDFull, 0x3E928AF3FCA213EAull, 0x3EC71DEE62401315ull, 0x3EFA01997C89EB71ull,
                             0x3F2A01A014761F65ull, 0x3F56C16C1852B7AFull, 0x3F81111111122322ull, 0x3FA55555555502A1ull,
                             0x3FC5555555555511ull, 0x3FE000000000000Bull};
constexpr uint32_t kFastBelow = 0x4086232Bu, kScaledBelow = 0x40874800u;  // |x|'s high word
__attribute__((always_inline)) inline double body(double x) {
  const double t = std::fma(x, from_bits(kLog2e), from_bits(kShift));
  const uint32_t i = static_cast<uint32_t>(bits_of(t));  // n, two's complement in the low word
  const double n = t + from_bits(kNegShift);
  double r = std::fma(n, from_bits(kNegLn2Hi), x);
  r = std::fma(n, from_bits(kNegLn2Lo), r);
  double p = from_bits(kP[0]);
  for (int k = 1; k < 10; ++k) p = std::fma(p, r, from_bits(kP[k]));
  p = std::fma(p, r, 1.0);
  p = std::fma(p, r, 1.0);
  const uint64_t pb = bits_of(p);
  const uint32_t plo = static_cast<uint32_t>(pb), phi = static_cast<uint32_t>(pb >> 32);
  const uint32_t ahi = static_cast<uint32_t>(bits_of(x) >> 32) & 0x7FFFFFFFu;
  if (ahi < kFastBelow) return from_words(plo, phi + (i << 20));
  if (ahi >= kScaledBelow) return x < 0 ? 0.0 : x + std::numeric_limits<double>::infinity();
  const int32_t ni = static_cast<int32_t>(i);
  const int32_t h = (ni + static_cast<int32_t>(i >> 31)) >> 1;  // n / 2, toward zero
  const double a = from_words(plo, phi + (static_cast<uint32_t>(h) << 20));
  const double b = from_words(0u, (static_cast<uint32_t>(ni - h) << 20) + 0x3FF00000u);
  return a * b;
}
#if RK_OPS_AVX2_LANES
RK_OPS_AVX2 double hw(double x) { return body(x); }
#endif
double soft(double x) { return body(x); }
}  // namespace nvexp

// Pairwise tree over a stream of subtrees of equal size: push(v) in index order, result() at the
// end (the missing right siblings are the identity).
template <class Op>
struct TreeStack {
  using Acc = typename Op::Acc;
  Acc st[kMaxLevels];
  int64_t count = 0;
  void push(Acc v) { push(v, 0); }
  // The root of 2^level subtrees (their own perfect tree), pushed where count is a multiple of
  // 2^level: the same tree as pushing them one by one.
  void push(Acc v, int level) {
    int k = level;
    for (; (count >> k) & 1; ++k) v = Op::combine(st[k], v);
    st[k] = v;
    count += int64_t{1} << level;
  }
  // The root of the perfect tree over the next power of two of subtrees: the last pending
  // subtree (the lowest set bit k0 of count) is a left child padded with the identity; above it,
  // the block is a right child of the pending subtree at level k when bit k of count is set.
  Acc result() const {
    if (count == 0) return Op::identity();
    int top = 0, k0 = 0;
    while ((int64_t{1} << top) < count) ++top;
    while (!((count >> k0) & 1)) ++k0;
    Acc acc = st[k0];
    for (int k = k0; k < top; ++k) acc = k > k0 && ((count >> k) & 1) ? Op::combine(st[k], acc) : Op::combine(acc, Op::identity());
    return acc;
  }
};

// argmax and argmin (their lanes take the values' indices).
template <class Op>
inline constexpr bool kArgOp = false;
template <class C, bool kMax>
inline constexpr bool kArgOp<red::ArgExt<C, kMax>> = true;

// a[c] = Op::combine(s[c], a[c]) for c < nc (defined below: logsumexp's in vectors).
template <class Op>
void tile_combine(const typename Op::Acc* s, typename Op::Acc* a, int64_t nc);

// kTile columns' trees at once (the columns loop below): TreeStack's pushes and root, level by
// level across the tile's columns (level-major storage), since every column of a tile has the same
// lanes and so the same stack shape. One TreeStack a column (520 bytes for a float64 accumulator,
// reset and walked column by column) held mean and amax columns at 0.35-0.5x torch after their lanes
// were vectors.
template <class Op>
struct TileTree {
  using Acc = typename Op::Acc;
  std::vector<Acc> st;  // st[k * w + c]; empty where every column is one lane (no tree)
  int64_t count = 0;
  int64_t w;  // columns a tile
  // levels: the most a tree of this many lanes needs
  TileTree(bool used, int64_t width, int64_t lanes) : w(width) {
    int levels = 1;
    while ((int64_t{1} << (levels - 1)) < lanes) ++levels;
    if (used) st.resize(static_cast<size_t>(levels * w));
  }
  // One lane result a column (a[0, nc)), in lane order, or (level > 0) the roots of the next
  // 2^level lanes' trees, where count is a multiple of 2^level; a[] is clobbered.
  void push(Acc* a, int64_t nc, int level = 0) {
    int k = level;
    for (; (count >> k) & 1; ++k) tile_combine<Op>(&st[k * w], a, nc);
    std::copy(a, a + nc, &st[(RK_FAULT_IS(CpuTileTreeLevel) ? 0 : k) * w]);  // planted: always level 0
    count += int64_t{1} << level;
  }
  void result(Acc* out, int64_t nc) const {
    if (count == 0) {
      std::fill(out, out + nc, Op::identity());
      return;
    }
    int top = 0, k0 = 0;
    while ((int64_t{1} << top) < count) ++top;
    while (!((count >> k0) & 1)) ++k0;
    std::copy(&st[k0 * w], &st[k0 * w] + nc, out);
    for (int k = k0; k < top; ++k) {
      const Acc* s = &st[k * w];
      if (k > k0 && ((count >> k) & 1)) {
        for (int64_t c = 0; c < nc; ++c) out[c] = Op::combine(s[c], out[c]);
      } else {
        for (int64_t c = 0; c < nc; ++c) out[c] = Op::combine(out[c], Op::identity());
      }
    }
  }
};

// The lane of cnt (<= G) values at x (stride s), whose first has index i0.
template <class In, class Op>
__attribute__((always_inline)) inline typename Op::Acc lane(const In* x, int64_t s, int cnt, int64_t i0, const red::Params& p) {
  constexpr int G = 64 / sizeof(In);
  using T = typename Op::T;
  if constexpr (Op::kBatched) {
    T v[G];
    for (int k = 0; k < G; ++k) v[k] = k < cnt ? cvt<T>(x[k * s]) : T(0);
    return Op::lane(v, cnt, i0, p);
  } else {
    auto acc = Op::identity();
    for (int k = 0; k < cnt; ++k) acc = Op::enter(acc, cvt<T>(x[k * s]), i0 + k, p);
    return acc;
  }
}

// Whole lanes reduced together by a non-batched operator (kJoint chains of G dependent operations).
constexpr int64_t kJoint = 8;
#ifndef RK_JOINT_PREFETCH
#define RK_JOINT_PREFETCH 2048
#endif
constexpr int64_t kJointPrefetch = RK_JOINT_PREFETCH;

#if RK_OPS_AVX2_LANES

// The AVX2 build of the joint lanes (lanes() below), for the map-reduce operators of float32,
// float64, bfloat16 and float16 rows with a sum, max or min and the identity, |v|, v^2 or NaN-to-0
// map: sum, nansum, mean, amax, amin and vector_norm's 1, 2, inf and -inf (the operators' rows at 0.15-0.3x torch on this machine's
// sweep, NOTES.md issue 21). kJoint lanes of G values are loaded as rows and transposed in
// registers, so that vector k holds value k of every lane: each lane still takes its values in
// index order, one vector operation doing the same addition or comparison in all of them, so the
// bits are the scalar loop's (the CPU corpus pins them). The max and min keep the scalar rule: a
// NaN makes the result NaN, else the larger (smaller) value, ties kept (+0 and -0 too).
namespace vec {
template <class Op, class = void>
struct Form {
  static constexpr bool kOk = false;
  static constexpr bool kMaxMin = false;
  static constexpr bool kSum = false;
};
template <class Op>
struct Form<Op, std::void_t<typename Op::MapOf>> {
  using M = typename Op::Monoid;
  using Map = typename Op::MapOf;
  using T = typename Op::T;
  using A = typename Op::Acc;
  static constexpr bool kOk = (std::is_same_v<M, red::SumM> || std::is_same_v<M, red::MaxM> || std::is_same_v<M, red::MinM>) &&
                              (std::is_same_v<Map, red::MapId> || std::is_same_v<Map, red::MapAbs> || std::is_same_v<Map, red::MapSq> ||
                               (std::is_same_v<Map, red::MapNanZero> && std::is_same_v<M, red::SumM>)) &&
                              std::is_same_v<T, A> && std::is_floating_point_v<A>;
  static constexpr bool kMaxMin = kOk && (std::is_same_v<M, red::MaxM> || std::is_same_v<M, red::MinM>);
  static constexpr bool kSum = kOk && std::is_same_v<M, red::SumM>;
};
template <class In, class Op>
inline constexpr bool kVecLanes = (std::is_same_v<In, float> || std::is_same_v<In, double> || kHalfLike<In>) && Form<Op>::kOk &&
                                  sizeof(typename Op::T) >= sizeof(In);

// 8 bfloat16 or float16 values at p as float32 (exact: a bfloat16 is the top half of its float32).
RK_OPS_AVX2 inline __m256 load8(const c10::BFloat16* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}
RK_OPS_AVX2 inline __m256 load8(const c10::Half* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

RK_OPS_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }

// One vector of float32 or float64: loads, broadcasts, NaN lanes, plain max/min, stores.
template <class T>
using Vec256 = std::conditional_t<std::is_same_v<T, float>, __m256, __m256d>;
RK_OPS_AVX2 inline __m256 vload(const float* p) { return _mm256_loadu_ps(p); }
RK_OPS_AVX2 inline __m256d vload(const double* p) { return _mm256_loadu_pd(p); }
RK_OPS_AVX2 inline void vstore(float* p, __m256 v) { _mm256_store_ps(p, v); }
RK_OPS_AVX2 inline void vstore(double* p, __m256d v) { _mm256_store_pd(p, v); }
RK_OPS_AVX2 inline __m256 vset(float v) { return _mm256_set1_ps(v); }
RK_OPS_AVX2 inline __m256d vset(double v) { return _mm256_set1_pd(v); }
RK_OPS_AVX2 inline __m256 vnan_or(__m256 acc, __m256 v) { return _mm256_or_ps(acc, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }
RK_OPS_AVX2 inline __m256d vnan_or(__m256d acc, __m256d v) { return _mm256_or_pd(acc, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)); }
RK_OPS_AVX2 inline __m256 vmaxmin(__m256 a, __m256 b, bool max) { return max ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b); }
RK_OPS_AVX2 inline __m256d vmaxmin(__m256d a, __m256d b, bool max) { return max ? _mm256_max_pd(a, b) : _mm256_min_pd(a, b); }
RK_OPS_AVX2 inline bool vany(__m256 v) { return _mm256_movemask_ps(v) != 0; }
RK_OPS_AVX2 inline bool vany(__m256d v) { return _mm256_movemask_pd(v) != 0; }

RK_OPS_AVX2 inline __m256 vmap(__m256 v, red::MapId) { return v; }
RK_OPS_AVX2 inline __m256 vmap(__m256 v, red::MapAbs) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
RK_OPS_AVX2 inline __m256 vmap(__m256 v, red::MapSq) { return _mm256_mul_ps(v, v); }
RK_OPS_AVX2 inline __m256d vmap(__m256d v, red::MapId) { return v; }
RK_OPS_AVX2 inline __m256d vmap(__m256d v, red::MapAbs) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v); }
RK_OPS_AVX2 inline __m256d vmap(__m256d v, red::MapSq) { return _mm256_mul_pd(v, v); }
// nansum's map: a NaN lane becomes +0 (all bits clear), as MapNanZero's A(0).
RK_OPS_AVX2 inline __m256 vmap(__m256 v, red::MapNanZero) { return _mm256_andnot_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), v); }
RK_OPS_AVX2 inline __m256d vmap(__m256d v, red::MapNanZero) { return _mm256_andnot_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q), v); }
RK_OPS_AVX2 inline __m256 vcombine(__m256 a, __m256 b, red::SumM) { return _mm256_add_ps(a, b); }
RK_OPS_AVX2 inline __m256d vcombine(__m256d a, __m256d b, red::SumM) { return _mm256_add_pd(a, b); }
// is_nan(a) ? a : (is_nan(b) ? b : (b > a ? b : a)), and the same with b < a for the min, up to which
// NaN: x86's max(b, a) is b > a ? b : a, a when either is NaN or on ties (+0 and -0 included), and
// a NaN b is then taken. Which NaN a result holds does not matter: every float result that is NaN
// leaves as one NaN, CUDA's (out_cvt).
RK_OPS_AVX2 inline __m256 vcombine(__m256 a, __m256 b, red::MaxM) { return _mm256_blendv_ps(_mm256_max_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q)); }
RK_OPS_AVX2 inline __m256d vcombine(__m256d a, __m256d b, red::MaxM) { return _mm256_blendv_pd(_mm256_max_pd(b, a), b, _mm256_cmp_pd(b, b, _CMP_UNORD_Q)); }
RK_OPS_AVX2 inline __m256 vcombine(__m256 a, __m256 b, red::MinM) { return _mm256_blendv_ps(_mm256_min_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q)); }
RK_OPS_AVX2 inline __m256d vcombine(__m256d a, __m256d b, red::MinM) { return _mm256_blendv_pd(_mm256_min_pd(b, a), b, _mm256_cmp_pd(b, b, _CMP_UNORD_Q)); }
// acc combined with map(v): Op::enter's vector twin. The 2-norm's sum of squares is one fused
// multiply-add a value, as Op::enter (m_fused) and the GPU do.
template <class V, class Map, class Mon>
RK_OPS_AVX2 inline V vfold(V acc, V v, Map map, Mon mon) { return vcombine(acc, vmap(v, map), mon); }
RK_OPS_AVX2 inline __m256 vfold(__m256 acc, __m256 v, red::MapSq, red::SumM) { return _mm256_fmadd_ps(v, v, acc); }
RK_OPS_AVX2 inline __m256d vfold(__m256d acc, __m256d v, red::MapSq, red::SumM) { return _mm256_fmadd_pd(v, v, acc); }

// r[j] (8 floats of row j) -> r[k] (value k of rows 0..7).
RK_OPS_AVX2 inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
// r[j] (4 doubles of row j) -> r[k] (value k of rows 0..3).
RK_OPS_AVX2 inline void transpose4(__m256d r[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// NB blocks of kJoint whole lanes at b (NB * kJoint lanes of G values, lane i at b + i * ls) into
// out[NB * kJoint]: the blocks' chains of dependent steps are independent, so their latencies can
// overlap. ls is G for a row's adjacent lanes, or a row's length for the same lane of kJoint rows.
// The lane results as vectors: float32 accumulators res[q] = lanes 8q .. 8q + 7; float64
// res[2q] = lanes 8q .. 8q + 3 and res[2q + 1] = lanes 8q + 4 .. 8q + 7.
template <class Op>
using LaneVec = Vec256<typename Op::Acc>;
template <int NB, class In, class Op>
RK_OPS_AVX2 inline void blocks_v(const In* b, LaneVec<Op>* res, int64_t ls = 64 / sizeof(In)) {
  constexpr int64_t G = 64 / sizeof(In);
  using A = typename Op::Acc;
  using F = Form<Op>;
  const typename F::M mon{};
  const typename F::Map map{};
  if constexpr (std::is_same_v<A, float>) {  // float32 accumulators: float32 (16 values a lane) or 16-bit values (32)
    static_assert(std::is_same_v<In, float> || kHalfLike<In>, "float32 accumulators take float32 or 16-bit values");
    constexpr int H = static_cast<int>(G / 8);  // vectors of 8 values a lane
    __m256 acc[NB];
    for (int q = 0; q < NB; ++q) acc[q] = _mm256_set1_ps(F::M::template identity<float>());
    for (int h = 0; h < H; ++h) {
      for (int q = 0; q < NB; ++q) {  // one block's 8 x 8 piece at a time (fewer live vectors)
        __m256 r[8];
        for (int j = 0; j < 8; ++j) r[j] = load8(b + (q * 8 + j) * ls + 8 * h);
        transpose8(r);
        for (int k = 0; k < 8; ++k) acc[q] = vfold(acc[q], r[k], map, mon);
      }
      if (RK_FAULT_IS(CpuOpsJointHalf) && h == H / 2 - 1) break;  // planted: each lane's second half not entered
    }
    for (int q = 0; q < NB; ++q) res[q] = acc[q];
  } else if constexpr (std::is_same_v<In, float>) {  // float32 values, float64 accumulators
    __m256d lo[NB], hi[NB];
    for (int q = 0; q < NB; ++q) lo[q] = hi[q] = _mm256_set1_pd(F::M::template identity<double>());
    for (int h = 0; h < 2; ++h) {
      for (int q = 0; q < NB; ++q) {  // one block's 8 x 8 piece at a time (fewer live vectors)
        __m256 r[8];
        for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(reinterpret_cast<const float*>(b) + (q * 8 + j) * ls + 8 * h);
        transpose8(r);
        for (int k = 0; k < 8; ++k) {
          lo[q] = vfold(lo[q], _mm256_cvtps_pd(_mm256_castps256_ps128(r[k])), map, mon);
          hi[q] = vfold(hi[q], _mm256_cvtps_pd(_mm256_extractf128_ps(r[k], 1)), map, mon);
        }
      }
      if (RK_FAULT_IS(CpuOpsJointHalf)) break;  // planted
    }
    for (int q = 0; q < NB; ++q) {
      res[2 * q] = lo[q];
      res[2 * q + 1] = hi[q];
    }
  } else {  // float64: 8 values a lane, lanes 0-3 and 4-7 of a block in two vectors
    // Chain v holds lanes 4v .. 4v + 3; each 4 x 4 piece is loaded, transposed and entered before
    // the next (all of them loaded first kept 20 vectors live: spills, float64 rows at 0.5x the
    // sum kernels' speed in cache, session 46).
    constexpr int NC = 2 * NB;
    __m256d acc[NC];
    for (int v = 0; v < NC; ++v) acc[v] = _mm256_set1_pd(F::M::template identity<double>());
    for (int h = 0; h < 2; ++h) {  // values 4h .. 4h + 3
      for (int v = 0; v < NC; ++v) {
        __m256d r[4];
        for (int j = 0; j < 4; ++j) r[j] = _mm256_loadu_pd(reinterpret_cast<const double*>(b) + (4 * v + j) * ls + 4 * h);
        transpose4(r);
        for (int k = 0; k < 4; ++k) acc[v] = vfold(acc[v], r[k], map, mon);
      }
      if (RK_FAULT_IS(CpuOpsJointHalf)) break;  // planted
    }
    for (int v = 0; v < NC; ++v) res[v] = acc[v];
  }
}

// NB blocks' lane results into out[NB * kJoint], lane order.
template <int NB, class In, class Op>
RK_OPS_AVX2 inline void blocks(const In* b, typename Op::Acc* out, int64_t ls = 64 / sizeof(In)) {
  constexpr int NV = std::is_same_v<typename Op::Acc, float> ? NB : 2 * NB;
  LaneVec<Op> res[NV];
  blocks_v<NB, In, Op>(b, res, ls);
  for (int j = 0; j < NV; ++j) {
    if constexpr (std::is_same_v<typename Op::Acc, float>) {
      _mm256_storeu_ps(out + 8 * j, res[j]);
    } else {
      _mm256_storeu_pd(out + 4 * j, res[j]);
    }
  }
}

// The root of 16 lanes' perfect tree (two blocks' results, blocks_v's layout): TreeStack's combines
// (left operand the lower lanes), two levels in vectors, two in scalars. Pushed whole at level 4,
// in place of 16 pushes whose data-dependent loops held float64 mean rows at half the sum
// kernel's speed (session 46).
template <class Op, class Mon>
RK_OPS_AVX2 inline float tree16(const __m256* v, Mon mon) {
  // level 1: (P0 P1 P4 P5 | P2 P3 P6 P7), P_k = lanes 2k, 2k + 1
  const __m256 p = RK_FAULT_IS(CpuOpsTree16) ? vcombine(v[0], v[1], mon)  // planted: lane j paired with lane j + 8
                                             : vcombine(_mm256_shuffle_ps(v[0], v[1], 0x88), _mm256_shuffle_ps(v[0], v[1], 0xDD), mon);
  // level 2: (Q0 Q2 Q0 Q2 | Q1 Q3 Q1 Q3), Q_k = P_2k, P_2k+1
  const __m256 q = vcombine(_mm256_shuffle_ps(p, p, 0x88), _mm256_shuffle_ps(p, p, 0xDD), mon);
  alignas(32) float f[8];
  _mm256_store_ps(f, q);
  return Op::combine(Op::combine(f[0], f[4]), Op::combine(f[1], f[5]));
}
template <class Op, class Mon>
RK_OPS_AVX2 inline double tree16(const __m256d* v, Mon mon) {
  // level 1: (P0 P2 P1 P3) and (P4 P6 P5 P7)
  const __m256d h0 = RK_FAULT_IS(CpuOpsTree16) ? vcombine(v[0], v[1], mon)  // planted: lane j paired with lane j + 4
                                              : vcombine(_mm256_unpacklo_pd(v[0], v[1]), _mm256_unpackhi_pd(v[0], v[1]), mon);
  const __m256d h1 = RK_FAULT_IS(CpuOpsTree16) ? vcombine(v[2], v[3], mon)
                                              : vcombine(_mm256_unpacklo_pd(v[2], v[3]), _mm256_unpackhi_pd(v[2], v[3]), mon);
  // level 2: (Q0 Q1 Q2 Q3)
  const __m256d q = vcombine(_mm256_permute2f128_pd(h0, h1, 0x20), _mm256_permute2f128_pd(h0, h1, 0x31), mon);
  alignas(32) double f[4];
  _mm256_store_pd(f, q);
  return Op::combine(Op::combine(f[0], f[1]), Op::combine(f[2], f[3]));
}

// The root of TreeStack's tree over n leaves L[0, n) (a perfect tree padded with the identity,
// combine(x, identity) where a right subtree is all padding), for the subtree of `size` (a power of
// two) leaves from l0 < n: vectors of several rows' lanes, one row a position.
template <class V, class Mon>
RK_OPS_AVX2 V vec_tree(const V* L, int64_t l0, int64_t size, int64_t n, V id, Mon mon) {
  if (size == 1) return L[l0];
  const int64_t h = size / 2;
  const V left = vec_tree(L, l0, h, n, id, mon);
  return vcombine(left, l0 + h < n ? vec_tree(L, l0 + h, h, n, id, mon) : id, mon);
}

// The 16 lanes (64 bytes each) kJointPrefetch bytes past p into L1: a block of 16 whole lanes
// asks for its successor's lines (vec::joint_lanes, v512::joint16).
inline void prefetch16(const void* p) {
  if (kJointPrefetch > 0) {
    const char* ahead = static_cast<const char*>(p) + kJointPrefetch;
    for (int c = 0; c < 16; ++c) _mm_prefetch(ahead + 64 * c, _MM_HINT_T0);
  }
}

// 16 whole lanes of float32 or 16-bit values of a sum-like operator in AVX-512 (cpu_avx512():
// vec::joint_lanes takes it where a block of 16 lanes starts its own subtree). Why it exists: the
// AVX2 lanes spend most of their instructions on the transposes (a float32 mean row: 24 shuffles,
// 8 extracts and 16 conversions an 8 x 8 piece beside its 16 additions), so rows in cache ran at
// 0.4-0.6x torch's float32 sums there (the CPU sweep, session 62's code), and on a CPU whose vector
// units are 512 bits wide a zmm instruction does twice a ymm's work in the same time (same run:
// float32 mean rows 0.66-0.76x the AVX2 time, bfloat16 0.79-0.83x, NOTES.md session 67). The order
// is the AVX2 loop's: lane i (G values at b + i * G) enters its values in index order into its own
// accumulator, from the monoid's identity, and the 16 lane results meet in their perfect tree, the
// left operand the lower lanes (tree16 and TreeStack's combines). Only the registers differ: one
// zmm holds value k of all 16 lanes (float32 accumulators) or two hold them as float64 (lanes 0-7,
// 8-15), so the bits are the AVX2 build's (tests/test_invariants.py:
// test_baseline_and_avx2_kernels_same_bits compares the three builds).
namespace v512 {
RK_OPS_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
RK_OPS_AVX512 inline __m512 load16(const c10::BFloat16* p) {  // exact: a bfloat16 is the top half of its float32
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}
RK_OPS_AVX512 inline __m512 load16(const c10::Half* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

// The maps of vec::vmap (AVX2), bit for bit: |v| clears the sign, NaN becomes +0 (no bit set).
RK_OPS_AVX512 inline __m512 vmap(__m512 v, red::MapId) { return v; }
RK_OPS_AVX512 inline __m512d vmap(__m512d v, red::MapId) { return v; }
RK_OPS_AVX512 inline __m512 vmap(__m512 v, red::MapAbs) { return _mm512_abs_ps(v); }
RK_OPS_AVX512 inline __m512d vmap(__m512d v, red::MapAbs) { return _mm512_abs_pd(v); }
RK_OPS_AVX512 inline __m512 vmap(__m512 v, red::MapNanZero) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v); }
RK_OPS_AVX512 inline __m512d vmap(__m512d v, red::MapNanZero) { return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v); }
// acc + map(v); the 2-norm's square and add one fused multiply-add, as vec::vfold and the GPU.
template <class Map>
RK_OPS_AVX512 inline __m512 vfold(__m512 acc, __m512 v, Map map) { return _mm512_add_ps(acc, vmap(v, map)); }
template <class Map>
RK_OPS_AVX512 inline __m512d vfold(__m512d acc, __m512d v, Map map) { return _mm512_add_pd(acc, vmap(v, map)); }
RK_OPS_AVX512 inline __m512 vfold(__m512 acc, __m512 v, red::MapSq) { return _mm512_fmadd_ps(v, v, acc); }
RK_OPS_AVX512 inline __m512d vfold(__m512d acc, __m512d v, red::MapSq) { return _mm512_fmadd_pd(v, v, acc); }

// r[i] (16 floats of lane i) -> r[k] (value k of lanes 0..15): pairs within 128-bit blocks, then
// the 4 x 4 grid of blocks.
RK_OPS_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // u[g + m], block k: lanes g .. g + 3, value 4k + m
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x44), v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xEE);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x44), v3 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xEE);
    r[m] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[8 + m] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}
// r[i] (8 doubles of lane i) -> r[k] (value k of lanes 0..7).
RK_OPS_AVX512 inline void transpose8(__m512d r[8]) {
  __m512d t[8];
  for (int i = 0; i < 8; i += 2) {  // t[i + m], block k: lanes i, i + 1, value 2k + m
    t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  for (int m = 0; m < 2; ++m) {
    const __m512d v0 = _mm512_shuffle_f64x2(t[m], t[2 + m], 0x44), v1 = _mm512_shuffle_f64x2(t[m], t[2 + m], 0xEE);
    const __m512d v2 = _mm512_shuffle_f64x2(t[4 + m], t[6 + m], 0x44), v3 = _mm512_shuffle_f64x2(t[4 + m], t[6 + m], 0xEE);
    r[m] = _mm512_shuffle_f64x2(v0, v2, 0x88);
    r[2 + m] = _mm512_shuffle_f64x2(v0, v2, 0xDD);
    r[4 + m] = _mm512_shuffle_f64x2(v1, v3, 0x88);
    r[6 + m] = _mm512_shuffle_f64x2(v1, v3, 0xDD);
  }
}

// The root of 16 lane results (float32: lane i at position i; float64: lanes 0-7 in lo, 8-15 in
// hi), a tree level a step: node k of a level is the sum of nodes 2k and 2k + 1 below it, the
// lower one on the left.
RK_OPS_AVX512 inline float tree16(__m512 v) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15);
  for (int level = 0; level < 4; ++level) {
    const bool planted = RK_FAULT_IS(CpuAvx512Tree) && level == 0;  // planted: lane k paired with lane k + 8
    v = planted ? _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E)) : _mm512_add_ps(_mm512_permutexvar_ps(even, v), _mm512_permutexvar_ps(odd, v));
  }
  return _mm512_cvtss_f32(v);
}
RK_OPS_AVX512 inline double tree16(__m512d lo, __m512d hi) {
  const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  __m512d v = RK_FAULT_IS(CpuAvx512Tree) ? _mm512_add_pd(lo, hi)  // planted: lane k paired with lane k + 8
                                         : _mm512_add_pd(_mm512_permutex2var_pd(lo, even, hi), _mm512_permutex2var_pd(lo, odd, hi));
  for (int level = 1; level < 4; ++level) v = _mm512_add_pd(_mm512_permutexvar_pd(even, v), _mm512_permutexvar_pd(odd, v));
  return _mm512_cvtsd_f64(v);
}

// The root of 16 whole lanes at b (lane i at b + i * G), G = 64 / sizeof(In): float32 or 16-bit
// values into float32 accumulators, float32 values into float64 ones.
template <class In, class Op>
RK_OPS_AVX512 typename Op::Acc root16(const In* b) {
  using A = typename Op::Acc;
  using F = Form<Op>;
  static_assert(F::kSum, "the sum-like operators only");
  constexpr int G = 64 / sizeof(In);
  const typename F::Map map{};
  if constexpr (std::is_same_v<A, float>) {  // float32 (one piece of 16 values a lane) or 16-bit values (two)
    static_assert(std::is_same_v<In, float> || kHalfLike<In>, "float32 accumulators take float32 or 16-bit values");
    __m512 acc = _mm512_set1_ps(F::M::template identity<float>());
    for (int h = 0; h < G / 16; ++h) {
      __m512 r[16];
      for (int i = 0; i < 16; ++i) r[i] = load16(b + i * G + 16 * h);
      transpose16(r);
      for (int k = 0; k < 16; ++k) acc = vfold(acc, r[k], map);
    }
    return tree16(acc);
  } else if constexpr (std::is_same_v<In, float>) {  // float32 values, float64 accumulators
    __m512d lo = _mm512_set1_pd(F::M::template identity<double>()), hi = lo;
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(b + i * G);
    transpose16(r);
    for (int k = 0; k < 16; ++k) {
      lo = vfold(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(r[k])), map);
      hi = vfold(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r[k]), 1))), map);
    }
    return tree16(lo, hi);
  } else {
    // float64 values stay on the AVX2 loop: this path (two 8 x 8 transposes, 80 zmm instructions
    // a block where AVX2 takes 128 ymm ones) took float64 sum, mean and 2-norm rows 0.93-1.25x the
    // AVX2 time on the CPU sweep's cases (session 67, same build and run), not faster.
    static_assert(!std::is_same_v<In, In>, "float32 and 16-bit values only");
  }
}

// vec::joint_lanes's blocks of 16 lanes (st.count a multiple of 16): each block's root pushed at
// level 4. Returns the first lane not done.
template <class In, class Op>
RK_OPS_AVX512 int64_t joint16(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  constexpr int64_t G = 64 / sizeof(In);
  for (; l + 16 <= l1 && (l + 16) * G <= n; l += 16) {
    prefetch16(x + l * G);
    st.push(root16<In, Op>(x + l * G), 4);
  }
  return l;
}
}  // namespace v512

// Short rows of a sum-like operator (kVecLanes with a sum: sum, nansum, mean, vector_norm 1 and 2):
// kJoint rows of R values (at most kShortLanes lanes), row q at x + q * R, reduced together: lane l
// of the kJoint rows as one block (blocks_v, the rows R apart), the partial last lane from a copy
// padded with +0.0 (a lane plus +0.0 is the lane: a lane starts from +0.0, so it is never -0.0,
// and every map here sends 0 to 0), then each row's tree over its lanes with the rows side by side
// in vectors (vec_tree: TreeStack's tree). One TreeStack a row, pushed lane by lane, held float64
// sums of (2^17, 32) at 0.44x torch (session 46). Up to 64 lanes (4 KiB of lane results for float64
// accumulators): at 16, rows of 17-64 lanes went through joint_lanes one row at a time, a tree pushed
// lane by lane and a padded copy of each row's tail (vector_norm bfloat16 (973, 740) at 0.57-0.60x
// torch; 0.82-0.84x here, 2 threads, NOTES.md session 52). The same trees, so the same bits.
constexpr int64_t kShortLanes = 64;
template <class In, class Op>
RK_OPS_AVX2 void short_rows(const In* x, int64_t R, typename Op::Acc* out) {
  constexpr int64_t G = 64 / sizeof(In);
  using A = typename Op::Acc;
  using V = LaneVec<Op>;
  constexpr int NV = std::is_same_v<A, float> ? 1 : 2;  // vectors of kJoint rows
  constexpr int W = 8 / NV;
  const int64_t whole = R / G, lanes_n = (R + G - 1) / G;
  V L[NV][kShortLanes];
  int64_t l = 0;
  for (; l < whole; ++l) {
    V res[NV];
    blocks_v<1, In, Op>(x + l * G, res, R);
    for (int h = 0; h < NV; ++h) L[h][l] = RK_FAULT_IS(CpuRowsJointLane) && l == whole - 1 ? vset(A(0)) : res[h];  // planted: each row's last whole lane lost
  }
  if (l < lanes_n) {
    const int64_t cnt = R - l * G;
    In buf[kJoint * G];
    for (int64_t q = 0; q < kJoint; ++q)
      for (int64_t k = 0; k < G; ++k) buf[q * G + k] = k < cnt ? x[q * R + l * G + k] : In(RK_FAULT_IS(CpuShortRowsPad) ? 1.0f : 0.0f);  // planted: 1.0
    V res[NV];
    blocks_v<1, In, Op>(buf, res, G);
    for (int h = 0; h < NV; ++h) L[h][l] = res[h];
  }
  const V id = vset(Form<Op>::M::template identity<A>());
  for (int h = 0; h < NV; ++h) {
    const V root = vec_tree(L[h], 0, ceil_pow2(lanes_n), lanes_n, id, typename Form<Op>::M{});
    std::memcpy(out + h * W, &root, sizeof root);
  }
}

// Blocks of kJoint whole lanes of a contiguous run, from lane l while a block ends by lane l1 and by
// value n, two blocks at a time where there are two: each lane's result pushed into st in lane
// order (two blocks whose first lane is a multiple of 16 in the stack: their tree's root, pushed at
// level 4). Returns the first lane not done.
template <class In, class Op>
RK_OPS_AVX2 int64_t joint_lanes(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  static_assert(kJoint == 8, "two vectors of four doubles, or one of eight floats, hold a block's lanes");
  constexpr int64_t G = 64 / sizeof(In);
  alignas(32) typename Op::Acc out[2 * kJoint];
  if ((st.count & 15) == 0) {
    if constexpr (Form<Op>::kSum && !std::is_same_v<In, double>) {  // (float64 rows: see v512::root16)
      if (cpu_avx512()) l = v512::joint16<In, Op>(x, n, l, l1, st);
    }
    for (; l + 2 * kJoint <= l1 && (l + 2 * kJoint) * G <= n; l += 2 * kJoint) {
      LaneVec<Op> res[std::is_same_v<typename Op::Acc, float> ? 2 : 4];
      prefetch16(x + l * G);
      blocks_v<2, In, Op>(x + l * G, res);
      st.push(tree16<Op>(res, typename Form<Op>::M{}), 4);
    }
  }
  for (; l + 2 * kJoint <= l1 && (l + 2 * kJoint) * G <= n; l += 2 * kJoint) {
    blocks<2, In, Op>(x + l * G, out);
    for (int64_t j = 0; j < 2 * kJoint; ++j) st.push(out[j]);
  }
  for (; l + kJoint <= l1 && (l + kJoint) * G <= n; l += kJoint) {
    blocks<1, In, Op>(x + l * G, out);
    for (int64_t j = 0; j < kJoint; ++j) st.push(out[j]);
  }
  // What is left of [l, l1) (fewer than kJoint whole lanes, and the run's partial last lane where
  // the range reaches it) for a sum-like operator: one block from a copy padded with +0.0, only its
  // real lanes pushed. A lane plus +0.0 is the lane (it starts from +0.0, so it is never -0.0, and
  // every map here sends 0 to 0). Scalar lanes there (with libm's fma for the 2-norm) held
  // vector_norm of bfloat16 (973, 740) rows at 0.17x torch, 13x our sum of the same rows (the CPU
  // sweep, session 48).
  if constexpr (Form<Op>::kSum) {
    const int64_t rest = std::min(l1 * G, n) - l * G, nl = (rest + G - 1) / G;
    // Where one or two lanes are left, their scalar chains cost less than the copy and a block's
    // transposes (float64 rows of 133 values, 16 lanes and a partial one: the padded block took
    // 1.4x the time, benchmarks/results/cpu/ab_s48_tail_v1), but for the 2-norm, whose scalar
    // lanes call libm's fma for every value.
    if (rest > 0 && (nl >= 3 || std::is_same_v<typename Form<Op>::Map, red::MapSq>)) {
      In buf[kJoint * G];
      std::memcpy(buf, x + l * G, static_cast<size_t>(rest) * sizeof(In));
      std::memset(static_cast<void*>(buf + rest), 0, static_cast<size_t>(kJoint * G - rest) * sizeof(In));  // +0.0 in every float type
      if (RK_FAULT_IS(CpuJointTailPad)) buf[rest] = In(1.0f);  // planted: a pad that is not +0.0 (in the partial lane, if any)
      blocks<1, In, Op>(buf, out, G);
      for (int64_t j = 0; j < nl; ++j) st.push(out[j]);
      l += nl;
    }
  }
  return l;
}
// logsumexp's lanes in AVX2. float32 (float32 or 16-bit values): kJoint whole lanes transposed as
// in blocks() above, each lane's max and then its sum of exponentials in index order, the
// exponential exp_scaled_cpu's operations on 8 lanes at once (exp_scaled8): the scalar lane()'s
// bits. float64: 4 lanes a vector, the exponential CUDA's (exp_nv4, nvexp::body's operations).
// A lane whose max is not finite is {max, 0}, as LogSumExp::lane. The lanes' tree is built in
// vectors too, 16 (float32) or 8 (float64) lanes at a time, LogSumExp::combine's rule lane by lane
// (lse_combine): one scalar combine a lane, a chain of dependent exponentials, had held float32
// rows at 0.3-0.4x torch after their lanes were vectors.
template <class In, class Op>
inline constexpr bool kLseLanes = ((std::is_same_v<In, float> || kHalfLike<In>) && std::is_same_v<Op, red::LogSumExp<float, float>>) ||
                                  (std::is_same_v<In, double> && std::is_same_v<Op, red::LogSumExp<double, double>>);

RK_OPS_AVX2 inline __m256 exp_scaled8(__m256 v) {
  using C = red::ExpCephes;
  const __m256 live = _mm256_cmp_ps(v, _mm256_set1_ps(C::kFloor), _CMP_GT_OQ);  // else +0 (-inf and NaN too)
  // Dead lanes compute e^0, masked below: at the floor their subnormal e^-104 cost a microcode assist
  // a vector (rows padded with -inf, masked logits: 1.6x the row's time).
  v = _mm256_and_ps(v, live);
  const __m256 t = _mm256_mul_ps(v, _mm256_set1_ps(C::kLog2e));
  const __m256 n = _mm256_sub_ps(_mm256_add_ps(t, _mm256_set1_ps(C::kRound)), _mm256_set1_ps(C::kRound));
  __m256 r = _mm256_sub_ps(v, _mm256_mul_ps(n, _mm256_set1_ps(C::kLn2Hi)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(C::kLn2Lo)));
  __m256 p = _mm256_set1_ps(C::kP[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(C::kP[i]));
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_mul_ps(p, z);
  y = _mm256_add_ps(y, r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(C::kBias));
  const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  y = _mm256_mul_ps(_mm256_mul_ps(y, scale), _mm256_set1_ps(C::kTwoM64));
  return _mm256_and_ps(y, live);
}

// CUDA's exp of 4 float64 values (nvexp::body, each fused step an FMA instruction); lanes whose
// |x| reaches the edges (708.39: -inf, NaN, subnormal and overflowing results) go through the scalar
// copy.
RK_OPS_AVX2 inline __m256d exp_nv4(__m256d x) {
  using namespace nvexp;
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(from_bits(kLog2e)), _mm256_set1_pd(from_bits(kShift)));
  const __m256d n = _mm256_add_pd(t, _mm256_set1_pd(from_bits(kNegShift)));
  __m256d r = _mm256_fmadd_pd(n, _mm256_set1_pd(from_bits(kNegLn2Hi)), x);
  r = _mm256_fmadd_pd(n, _mm256_set1_pd(from_bits(kNegLn2Lo)), r);
  __m256d p = _mm256_set1_pd(from_bits(kP[0]));
  for (int k = 1; k < 10; ++k) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(from_bits(kP[k])));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  // n's low 12 bits into the exponent field: the high word plus n << 20, modulo 2^32.
  const __m256i e = _mm256_slli_epi64(_mm256_castpd_si256(t), 52);
  __m256d y = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(p), e));
  // |x|'s high word under kFastBelow <=> |x| under the double whose high word it is (NaN: not).
  const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  int fast = _mm256_movemask_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(from_bits(uint64_t{kFastBelow} << 32)), _CMP_LT_OQ));
  if (fast != 0xF && !RK_FAULT_IS(CpuExpNoEdge)) {  // planted: the edges keep the fast formula
    // x <= -(the double whose high word is kScaledBelow), -inf included: +0 (body's x < 0 edge),
    // in the vector; only NaN, large x and the two-factor range go through the scalar copy (a row
    // padded with -inf took one scalar call a padded value: short float64 rows at 0.16x torch).
    const __m256d zero = _mm256_cmp_pd(x, _mm256_set1_pd(-from_bits(uint64_t{kScaledBelow} << 32)), _CMP_LE_OQ);
    y = _mm256_andnot_pd(zero, y);
    fast |= _mm256_movemask_pd(zero);
  }
  if (fast != 0xF && !RK_FAULT_IS(CpuExpNoEdge)) {
    alignas(32) double v[4], o[4];
    _mm256_store_pd(v, x);
    _mm256_store_pd(o, y);
    for (int j = 0; j < 4; ++j)
      if (!((fast >> j) & 1)) o[j] = hw(v[j]);
    y = _mm256_load_pd(o);
  }
  return y;
}

// LogSumExp::combine of the lanes' pairs (a left, b right) lane by lane: the max; where it is not
// finite {max, 0}; else the larger side's sum plus the smaller's times e^(smaller - larger), the
// left side on ties.
RK_OPS_AVX2 inline void lse_combine(__m256 am, __m256 as, __m256 bm, __m256 bs, __m256& m, __m256& s) {
  const __m256 mx = vcombine(am, bm, red::MaxM{});
  const __m256 finite = _mm256_cmp_ps(_mm256_sub_ps(mx, mx), _mm256_setzero_ps(), _CMP_EQ_OQ);
  const __m256 ge = _mm256_cmp_ps(am, bm, _CMP_GE_OQ);
  const __m256 big_m = _mm256_blendv_ps(bm, am, ge), small_m = _mm256_blendv_ps(am, bm, ge);
  const __m256 big_s = _mm256_blendv_ps(bs, as, ge), small_s = _mm256_blendv_ps(as, bs, ge);
  const __m256 sum = _mm256_fmadd_ps(small_s, exp_scaled8(_mm256_sub_ps(small_m, big_m)), big_s);  // LogSumExp::combine's m_fused
  m = _mm256_blendv_ps(mx, big_m, finite);
  s = _mm256_and_ps(sum, finite);
}
RK_OPS_AVX2 inline void lse_combine(__m256d am, __m256d as, __m256d bm, __m256d bs, __m256d& m, __m256d& s) {
  const __m256d mx = vcombine(am, bm, red::MaxM{});
  const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(mx, mx), _mm256_setzero_pd(), _CMP_EQ_OQ);
  const __m256d ge = _mm256_cmp_pd(am, bm, _CMP_GE_OQ);
  const __m256d big_m = _mm256_blendv_pd(bm, am, ge), small_m = _mm256_blendv_pd(am, bm, ge);
  const __m256d big_s = _mm256_blendv_pd(bs, as, ge), small_s = _mm256_blendv_pd(as, bs, ge);
  const __m256d sum = _mm256_fmadd_pd(small_s, exp_nv4(_mm256_and_pd(_mm256_sub_pd(small_m, big_m), finite)), big_s);  // m_fused
  m = _mm256_blendv_pd(mx, big_m, finite);
  s = _mm256_and_pd(sum, finite);
}

// The root of 16 float32 lanes' tree (lanes 0-7 in a, 8-15 in b), as 15 pairwise combines in 4
// vector steps; P, Q, R name the subtrees of 2, 4 and 8 lanes.
RK_OPS_AVX2 inline void lse_tree16(__m256 am, __m256 as, __m256 bm, __m256 bs, float* m, float* s) {
  __m256 cm, cs;  // [P0 P1 P4 P5 | P2 P3 P6 P7]: even lanes (a0 a2 b0 b2 | a4 a6 b4 b6) with the odd ones
  if (RK_FAULT_IS(CpuLseTreePairs)) {  // planted: lane j paired with lane j + 8
    lse_combine(am, as, bm, bs, cm, cs);
  } else {
    lse_combine(_mm256_shuffle_ps(am, bm, 0x88), _mm256_shuffle_ps(as, bs, 0x88), _mm256_shuffle_ps(am, bm, 0xDD),
                _mm256_shuffle_ps(as, bs, 0xDD), cm, cs);
  }
  __m256 qm, qs;  // [Q0 Q2 Q0 Q2 | Q1 Q3 Q1 Q3]
  lse_combine(_mm256_shuffle_ps(cm, cm, 0x88), _mm256_shuffle_ps(cs, cs, 0x88), _mm256_shuffle_ps(cm, cm, 0xDD),
              _mm256_shuffle_ps(cs, cs, 0xDD), qm, qs);
  __m256 rm, rs;  // [R0 R1 ...]: Q0 with Q1, Q2 with Q3
  lse_combine(qm, qs, _mm256_permute2f128_ps(qm, qm, 0x01), _mm256_permute2f128_ps(qs, qs, 0x01), rm, rs);
  __m256 tm, ts;  // R0 with R1
  lse_combine(rm, rs, _mm256_permute_ps(rm, 0x01), _mm256_permute_ps(rs, 0x01), tm, ts);
  *m = _mm256_cvtss_f32(tm);
  *s = _mm256_cvtss_f32(ts);
}
// The root of 8 float64 lanes' tree (lanes 0-3 in a, 4-7 in b) in 3 vector steps.
RK_OPS_AVX2 inline void lse_tree8(__m256d am, __m256d as, __m256d bm, __m256d bs, double* m, double* s) {
  __m256d cm, cs;  // [P0 P2 | P1 P3]: (a0 b0 | a2 b2) with (a1 b1 | a3 b3)
  lse_combine(_mm256_unpacklo_pd(am, bm), _mm256_unpacklo_pd(as, bs), _mm256_unpackhi_pd(am, bm), _mm256_unpackhi_pd(as, bs), cm, cs);
  __m256d qm, qs;  // [Q0 Q1 | ...]: P0 with P1, P2 with P3
  lse_combine(cm, cs, _mm256_permute2f128_pd(cm, cm, 0x01), _mm256_permute2f128_pd(cs, cs, 0x01), qm, qs);
  __m256d tm, ts;  // Q0 with Q1
  lse_combine(qm, qs, _mm256_permute_pd(qm, 0x5), _mm256_permute_pd(qs, 0x5), tm, ts);
  *m = _mm256_cvtsd_f64(tm);
  *s = _mm256_cvtsd_f64(ts);
}

// LogSumExp::lane of 8 (4) lanes at once: v[k] holds value k of each lane (k < cnt); the lanes'
// max and sums of exponentials (the sum +0 where the max is not finite, as the lane's).
RK_OPS_AVX2 inline void lse8(const __m256* v, int cnt, __m256& m, __m256& s) {
  m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (int k = 0; k < cnt; ++k) m = vcombine(m, v[k], red::MaxM{});
  const __m256 finite = _mm256_cmp_ps(_mm256_sub_ps(m, m), _mm256_setzero_ps(), _CMP_EQ_OQ);
  s = _mm256_setzero_ps();
  for (int k = 0; k < cnt; ++k) s = _mm256_add_ps(s, exp_scaled8(_mm256_sub_ps(v[k], m)));
  s = _mm256_and_ps(s, finite);
}
RK_OPS_AVX2 inline void lse4(const __m256d* v, int cnt, __m256d& m, __m256d& s) {
  m = _mm256_set1_pd(-std::numeric_limits<double>::infinity());
  for (int k = 0; k < cnt; ++k) m = vcombine(m, v[k], red::MaxM{});
  const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(m, m), _mm256_setzero_pd(), _CMP_EQ_OQ);
  s = _mm256_setzero_pd();
  // Lanes whose max is not finite (all -inf: the padding past a row's last lane) take e^0, masked
  // below: their NaN differences would each go through the scalar exponential.
  for (int k = 0; k < cnt; ++k) s = _mm256_add_pd(s, exp_nv4(_mm256_and_pd(_mm256_sub_pd(v[k], m), finite)));
  s = _mm256_and_pd(s, finite);
}

// 8 float32 lanes of a contiguous run at b (G values each): value k of each lane in r[k].
template <class In>
RK_OPS_AVX2 inline void lse_block8(const In* b, __m256& m, __m256& s) {
  constexpr int64_t G = 64 / sizeof(In);
  constexpr int H = static_cast<int>(G / 8);
  __m256 r[H][8];  // r[h][k], value 8h + k of each lane: in index order as one array of G vectors
  for (int h = 0; h < H; ++h) {
    for (int j = 0; j < 8; ++j) r[h][j] = load8(b + j * G + 8 * h);
    transpose8(r[h]);
  }
  lse8(&r[0][0], static_cast<int>(G), m, s);
}
// 4 float64 lanes of 8 values at b, transposed as blocks() does.
RK_OPS_AVX2 inline void lse_block4(const double* b, __m256d& m, __m256d& s) {
  __m256d r[2][4];  // r[h][k]: value 4h + k of each lane
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) r[h][j] = _mm256_loadu_pd(b + j * 8 + 4 * h);
    transpose4(r[h]);
  }
  lse4(&r[0][0], 8, m, s);
}

// n values of src, then `pad` up to len, into dst. With pad -inf a logsumexp lane's max and sum are
// what they were (the padding's exponentials are +0): the short lanes below are read from such copies.
template <class In>
inline void copy_padded(In* dst, const In* src, int64_t n, int64_t len, In pad = In(-std::numeric_limits<float>::infinity())) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(In));
  for (int64_t i = n; i < len; ++i) dst[i] = pad;
}

// The lanes of a run left after the subtrees, W at a time, each pushed alone; the last, short,
// block read from a copy padded with -inf, which leaves a lane's max and sum as they were (its
// exponentials are +0): no lane of a row goes value by value through the scalar exponential (a
// row of 462 float32 values had 5 of its 29 lanes there, 0.3x torch).
template <class Op, int W, class In, class Block>
inline int64_t lse_rest(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st, Block block) {
  constexpr int64_t G = 64 / sizeof(In);
  using V = std::conditional_t<W == 8, __m256, __m256d>;
  using A = typename Op::Acc;
  const int64_t lend = std::min(l1, (n + G - 1) / G);
  for (; l < lend;) {
    const int64_t nl = std::min<int64_t>(W, lend - l), avail = std::min(n, (l + nl) * G) - l * G;
    V m, s;
    if (avail == W * G) {
      block(x + l * G, m, s);
    } else {
      In buf[W * G];
      copy_padded(buf, x + l * G, avail, W * G, In(RK_FAULT_IS(CpuLsePadZero) ? 0.0f : -std::numeric_limits<float>::infinity()));  // planted: 0
      block(buf, m, s);
    }
    alignas(32) decltype(A::m) mv[W], sv[W];
    std::memcpy(mv, &m, sizeof m);
    std::memcpy(sv, &s, sizeof s);
    for (int64_t j = 0; j < nl; ++j) st.push(A{mv[j], sv[j]});
    l += nl;
  }
  return l;
}

// logsumexp in AVX-512: 16 whole float32 lanes (float32 or 16-bit values) where lse_lanes takes a
// block of 16 starting its own subtree, and 16 adjacent columns where lse_columns takes 8, with
// the AVX2 block's operations (lse_block8, lse8, exp_scaled8, lse_tree16) on 16 lanes at once, in
// the same order: the same bits; float64 likewise, 8 lanes or columns a vector (lse_block4, lse4,
// exp_nv4, lse_tree8). The exponential is most of the time (logsumexp of float16 rows at
// 0.65-0.79x torch, float64 columns at 0.41-0.87x, in the CPU sweep of session 62's code).
namespace v512 {
RK_OPS_AVX512 inline __m512 vmax(__m512 a, __m512 b) {  // vec::vcombine's max: b if NaN, else max(b, a), a on ties
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), _mm512_max_ps(b, a), b);
}
RK_OPS_AVX512 inline __m512 exp_scaled16(__m512 v) {
  using C = red::ExpCephes;
  const __mmask16 live = _mm512_cmp_ps_mask(v, _mm512_set1_ps(C::kFloor), _CMP_GT_OQ);  // else +0 (-inf and NaN too)
  v = _mm512_maskz_mov_ps(live, v);
  const __m512 t = _mm512_mul_ps(v, _mm512_set1_ps(C::kLog2e));
  const __m512 n = _mm512_sub_ps(_mm512_add_ps(t, _mm512_set1_ps(C::kRound)), _mm512_set1_ps(C::kRound));
  __m512 r = _mm512_sub_ps(v, _mm512_mul_ps(n, _mm512_set1_ps(C::kLn2Hi)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(C::kLn2Lo)));
  __m512 p = _mm512_set1_ps(C::kP[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(C::kP[i]));
  const __m512 z = _mm512_mul_ps(r, r);
  __m512 y = _mm512_mul_ps(p, z);
  y = _mm512_add_ps(y, r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(C::kBias));
  const __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  y = _mm512_mul_ps(_mm512_mul_ps(y, scale), _mm512_set1_ps(C::kTwoM64));
  return _mm512_maskz_mov_ps(live, y);
}
// LogSumExp::combine lane by lane (a left, b right), as vec::lse_combine.
RK_OPS_AVX512 inline void lse_combine(__m512 am, __m512 as, __m512 bm, __m512 bs, __m512& m, __m512& s) {
  const __m512 mx = vmax(am, bm);
  const __mmask16 finite = _mm512_cmp_ps_mask(_mm512_sub_ps(mx, mx), _mm512_setzero_ps(), _CMP_EQ_OQ);
  const __mmask16 ge = _mm512_cmp_ps_mask(am, bm, _CMP_GE_OQ);
  const __m512 big_m = _mm512_mask_blend_ps(ge, bm, am), small_m = _mm512_mask_blend_ps(ge, am, bm);
  const __m512 big_s = _mm512_mask_blend_ps(ge, bs, as), small_s = _mm512_mask_blend_ps(ge, as, bs);
  const __m512 sum = _mm512_fmadd_ps(small_s, exp_scaled16(_mm512_sub_ps(small_m, big_m)), big_s);  // LogSumExp::combine's m_fused
  m = _mm512_mask_blend_ps(finite, mx, big_m);
  s = _mm512_maskz_mov_ps(finite, sum);
}
// The root of 16 lanes' tree (lane i at position i), a level a step, node 2k on the left of 2k + 1.
RK_OPS_AVX512 inline void lse_tree16(__m512 m, __m512 s, float* rm, float* rs) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 1, 3, 5, 7, 9, 11, 13, 15);
  for (int level = 0; level < 4; ++level) {
    if (RK_FAULT_IS(CpuAvx512LseTree) && level == 0) {  // planted: lane k paired with lane k + 8
      lse_combine(m, s, _mm512_shuffle_f32x4(m, m, 0x4E), _mm512_shuffle_f32x4(s, s, 0x4E), m, s);
    } else {
      lse_combine(_mm512_permutexvar_ps(even, m), _mm512_permutexvar_ps(even, s), _mm512_permutexvar_ps(odd, m),
                  _mm512_permutexvar_ps(odd, s), m, s);
    }
  }
  *rm = _mm512_cvtss_f32(m);
  *rs = _mm512_cvtss_f32(s);
}
// LogSumExp::lane of 16 lanes at once, as vec::lse8: v[k] holds value k of each lane (k < cnt);
// the lanes' max, then their sums of exponentials in index order (+0 where the max is not finite).
RK_OPS_AVX512 inline void lse16(const __m512* v, int cnt, __m512& m, __m512& s) {
  m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int k = 0; k < cnt; ++k) m = vmax(m, v[k]);
  const __mmask16 finite = _mm512_cmp_ps_mask(_mm512_sub_ps(m, m), _mm512_setzero_ps(), _CMP_EQ_OQ);
  s = _mm512_setzero_ps();
  for (int k = 0; k < cnt; ++k) s = _mm512_add_ps(s, exp_scaled16(_mm512_sub_ps(v[k], m)));
  s = _mm512_maskz_mov_ps(finite, s);
}
// 16 lanes at b (G values each), transposed as lse_block8 does: value k of every lane in r[k].
template <class In>
RK_OPS_AVX512 inline void lse_block16(const In* b, __m512& m, __m512& s) {
  constexpr int G = 64 / sizeof(In);
  constexpr int H = G / 16;
  __m512 r[H][16];
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < 16; ++i) r[h][i] = load16(b + i * G + 16 * h);
    transpose16(r[h]);
  }
  lse16(&r[0][0], G, m, s);
}
// 16 adjacent columns of a columns tile (cnt <= G rows, row stride ld) at a time, as
// vec::lse_columns: the columns are the lanes (no transpose); writes acc[0, c) and returns c.
template <class In, class Op>
RK_OPS_AVX512 int64_t lse_columns16(const In* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  constexpr int G = 64 / sizeof(In);
  int64_t c = 0;
  alignas(64) float m16[16], s16[16];
  for (; c + 16 <= nc; c += 16) {
    __m512 v[G], m, s;
    for (int k = 0; k < cnt; ++k) v[k] = load16(x + k * ld + c);
    lse16(v, cnt - (RK_FAULT_IS(CpuAvx512LseColumns) ? 1 : 0), m, s);  // planted: the last row left out
    _mm512_store_ps(m16, m);
    _mm512_store_ps(s16, s);
    for (int j = 0; j < 16; ++j) acc[c + j] = typename Op::Acc{m16[j], s16[j]};
  }
  return c;
}
// float64: 8 lanes (or columns) a vector, CUDA's exponential (vec::exp_nv4's operations on 8
// values; lanes at its edges through the same scalar copy).
RK_OPS_AVX512 inline __m512d vmax(__m512d a, __m512d b) {
  return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q), _mm512_max_pd(b, a), b);
}
RK_OPS_AVX512 inline __m512d exp_nv8(__m512d x) {
  using namespace nvexp;
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(from_bits(kLog2e)), _mm512_set1_pd(from_bits(kShift)));
  const __m512d n = _mm512_add_pd(t, _mm512_set1_pd(from_bits(kNegShift)));
  __m512d r = _mm512_fmadd_pd(n, _mm512_set1_pd(from_bits(kNegLn2Hi)), x);
  r = _mm512_fmadd_pd(n, _mm512_set1_pd(from_bits(kNegLn2Lo)), r);
  __m512d p = _mm512_set1_pd(from_bits(kP[0]));
  for (int k = 1; k < 10; ++k) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(from_bits(kP[k])));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0));
  const __m512i e = _mm512_slli_epi64(_mm512_castpd_si512(t), 52);
  __m512d y = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(p), e));
  const __m512d ax = _mm512_abs_pd(x);
  __mmask8 fast = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(from_bits(uint64_t{kFastBelow} << 32)), _CMP_LT_OQ);
  if (fast != 0xFF && !RK_FAULT_IS(CpuExpNoEdge)) {  // x at or below the scaled range's floor (-inf included): +0 in the vector
    const __mmask8 zero = _mm512_cmp_pd_mask(x, _mm512_set1_pd(-from_bits(uint64_t{kScaledBelow} << 32)), _CMP_LE_OQ);
    y = _mm512_mask_mov_pd(y, zero, _mm512_setzero_pd());
    fast |= zero;
  }
  if (fast != 0xFF && !RK_FAULT_IS(CpuExpNoEdge)) {  // (planted: the edges keep the fast formula, as exp_nv4)
    alignas(64) double v[8], o[8];
    _mm512_store_pd(v, x);
    _mm512_store_pd(o, y);
    for (int j = 0; j < 8; ++j)
      if (!((fast >> j) & 1)) o[j] = hw(v[j]);
    y = _mm512_load_pd(o);
  }
  return y;
}
RK_OPS_AVX512 inline void lse_combine(__m512d am, __m512d as, __m512d bm, __m512d bs, __m512d& m, __m512d& s) {
  const __m512d mx = vmax(am, bm);
  const __mmask8 finite = _mm512_cmp_pd_mask(_mm512_sub_pd(mx, mx), _mm512_setzero_pd(), _CMP_EQ_OQ);
  const __mmask8 ge = _mm512_cmp_pd_mask(am, bm, _CMP_GE_OQ);
  const __m512d big_m = _mm512_mask_blend_pd(ge, bm, am), small_m = _mm512_mask_blend_pd(ge, am, bm);
  const __m512d big_s = _mm512_mask_blend_pd(ge, bs, as), small_s = _mm512_mask_blend_pd(ge, as, bs);
  const __m512d sum = _mm512_fmadd_pd(small_s, exp_nv8(_mm512_maskz_mov_pd(finite, _mm512_sub_pd(small_m, big_m))), big_s);  // m_fused
  m = _mm512_mask_blend_pd(finite, mx, big_m);
  s = _mm512_maskz_mov_pd(finite, sum);
}
// v[k] holds value k of 8 lanes (k < cnt): their max and sums of exponentials, as vec::lse4.
RK_OPS_AVX512 inline void lse8(const __m512d* v, int cnt, __m512d& m, __m512d& s) {
  m = _mm512_set1_pd(-std::numeric_limits<double>::infinity());
  for (int k = 0; k < cnt; ++k) m = vmax(m, v[k]);
  const __mmask8 finite = _mm512_cmp_pd_mask(_mm512_sub_pd(m, m), _mm512_setzero_pd(), _CMP_EQ_OQ);
  s = _mm512_setzero_pd();
  for (int k = 0; k < cnt; ++k) s = _mm512_add_pd(s, exp_nv8(_mm512_maskz_mov_pd(finite, _mm512_sub_pd(v[k], m))));
  s = _mm512_maskz_mov_pd(finite, s);
}
// 8 float64 lanes of 8 values at b: the root of their tree (3 levels, node 2k on the left).
RK_OPS_AVX512 inline void lse_root8(const double* b, double* rm, double* rs) {
  __m512d r[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_pd(b + 8 * i);
  transpose8(r);
  __m512d m, s;
  lse8(r, 8, m, s);
  const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 0, 2, 4, 6), odd = _mm512_setr_epi64(1, 3, 5, 7, 1, 3, 5, 7);
  for (int level = 0; level < 3; ++level)
    lse_combine(_mm512_permutexvar_pd(even, m), _mm512_permutexvar_pd(even, s), _mm512_permutexvar_pd(odd, m), _mm512_permutexvar_pd(odd, s), m, s);
  *rm = _mm512_cvtsd_f64(m);
  *rs = _mm512_cvtsd_f64(s);
}
template <class Op>
RK_OPS_AVX512 int64_t lse_joint8(const double* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  for (; (st.count & 7) == 0 && l + 8 <= l1 && (l + 8) * 8 <= n; l += 8) {
    double m, s;
    lse_root8(x + l * 8, &m, &s);
    st.push(typename Op::Acc{m, s}, 3);
  }
  return l;
}
template <class Op>
RK_OPS_AVX512 int64_t lse_columns8(const double* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  int64_t c = 0;
  alignas(64) double m8[8], s8[8];
  for (; c + 8 <= nc; c += 8) {
    __m512d v[8], m, s;
    for (int k = 0; k < cnt; ++k) v[k] = _mm512_loadu_pd(x + k * ld + c);
    lse8(v, cnt - (RK_FAULT_IS(CpuAvx512LseColumns) ? 1 : 0), m, s);  // planted: the last row left out
    _mm512_store_pd(m8, m);
    _mm512_store_pd(s8, s);
    for (int j = 0; j < 8; ++j) acc[c + j] = typename Op::Acc{m8[j], s8[j]};
  }
  return c;
}
template <class In, class Op>
RK_OPS_AVX512 int64_t lse_joint16(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  constexpr int64_t G = 64 / sizeof(In);
  for (; l + 16 <= l1 && (l + 16) * G <= n; l += 16) {
    __m512 m, s;
    lse_block16(x + l * G, m, s);
    float rm, rs;
    lse_tree16(m, s, &rm, &rs);
    st.push(typename Op::Acc{rm, rs}, 4);
  }
  return l;
}
}  // namespace v512

// Whole lanes of a contiguous run from lane l (the stack's count 0 there), 8 (float64) or 16 lanes
// a step, each step's subtree pushed whole, then the rest (lse_rest); returns the first lane not done.
template <class Op>
RK_OPS_AVX2 int64_t lse_lanes(const double* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  constexpr int64_t G = 8;
  if (cpu_avx512()) l = v512::lse_joint8<Op>(x, n, l, l1, st);
  for (; (st.count & 7) == 0 && l + 8 <= l1 && (l + 8) * G <= n; l += 8) {
    __m256d am, as, bm, bs;
    lse_block4(x + l * G, am, as);
    lse_block4(x + (l + 4) * G, bm, bs);
    double m, s;
    lse_tree8(am, as, bm, bs, &m, &s);
    st.push(typename Op::Acc{m, s}, 3);
  }
  return lse_rest<Op, 4>(x, n, l, l1, st, lse_block4);
}
template <class In, class Op>
RK_OPS_AVX2 int64_t lse_lanes(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  static_assert(kJoint == 8, "one vector of eight floats holds a block's lanes");
  constexpr int64_t G = 64 / sizeof(In);
  using Acc = typename Op::Acc;
  if ((st.count & 15) == 0) {
    if (cpu_avx512()) l = v512::lse_joint16<In, Op>(x, n, l, l1, st);
    for (; l + 16 <= l1 && (l + 16) * G <= n; l += 16) {
      __m256 am, as, bm, bs;
      lse_block8(x + l * G, am, as);
      lse_block8(x + (l + 8) * G, bm, bs);
      float m, s;
      lse_tree16(am, as, bm, bs, &m, &s);
      st.push(Acc{m, s}, 4);
    }
  }
  return lse_rest<Op, 8>(x, n, l, l1, st, lse_block8<In>);
}

// The same for adjacent columns of a columns tile (cnt <= G rows, row stride ld), 8 (float64: 4)
// at a time: the columns are the lanes, so no transpose. Writes acc[0, c) for the first whole
// vectors' columns and returns c.
template <class Op>
RK_OPS_AVX2 int64_t lse_columns(const double* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  int64_t c = cpu_avx512() ? v512::lse_columns8<Op>(x, ld, nc, cnt, acc) : 0;
  alignas(32) double m4[4], s4[4];
  for (; c + 4 <= nc; c += 4) {
    __m256d v[8], m, s;
    for (int k = 0; k < cnt; ++k) v[k] = _mm256_loadu_pd(x + k * ld + c);
    lse4(v, cnt, m, s);
    _mm256_store_pd(m4, m);
    _mm256_store_pd(s4, s);
    for (int j = 0; j < 4; ++j) acc[c + j] = typename Op::Acc{m4[j], s4[j]};
  }
  return c;
}
template <class In, class Op>
RK_OPS_AVX2 int64_t lse_columns(const In* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  constexpr int G = 64 / sizeof(In);
  int64_t c = 0;
  if (cpu_avx512()) c = v512::lse_columns16<In, Op>(x, ld, nc, cnt, acc);
  {
    alignas(32) float m8[8], s8[8];
    for (; c + 8 <= nc; c += 8) {
      __m256 v[G], m, s;
      for (int k = 0; k < cnt; ++k) v[k] = load8(x + k * ld + c);
      lse8(v, cnt, m, s);
      _mm256_store_ps(m8, m);
      _mm256_store_ps(s8, s);
      for (int j = 0; j < 8; ++j) acc[c + j] = typename Op::Acc{m8[j], s8[j]};
    }
  }
  return c;
}

// A vector of accumulators from W adjacent values at p: 8 float32 (float32 or 16-bit values) or 4
// float64 (float32 or float64 values).
template <class A, class In>
RK_OPS_AVX2 inline Vec256<A> load_acc(const In* p) {
  if constexpr (std::is_same_v<A, float>) {
    return load8(p);
  } else if constexpr (std::is_same_v<In, float>) {
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
  } else {
    return _mm256_loadu_pd(p);
  }
}

// Columns of a map-reduce operator (kVecLanes: mean, amax, amin, vector_norm 1, 2, inf, -inf,
// nansum's and the like of float and 16-bit values): W adjacent columns a vector (8 float32 or 4
// float64 accumulators), each column's cnt values entered in row order, as the scalar loop in
// column_lanes() enters them: the same bits. The scalar loop held aligned float32 columns at 0.15x
// torch (issue 21's CPU sweep). Writes acc[0, c) for the first whole vectors' columns; returns c.
//
// Four vectors of adjacent columns first (32 float32 or 16 float64 accumulators: each row read as
// one piece of 128 bytes of float32 or float64 values, 64 bytes of 16-bit values or of float32 ones
// summed in float64, and four independent chains in flight), then one vector at a time. One vector
// a column group walked the rows with a single dependent chain and 16 or 32 bytes a row: float64
// amax of (96, 40, 112) over dim 1 at 0.5x torch, 66% of its samples on the loads (perf, session 55).
template <class In, class Op>
RK_OPS_AVX2 int64_t joint_columns(const In* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  using A = typename Op::Acc;
  using F = Form<Op>;
  using V = Vec256<A>;
  constexpr int64_t W = std::is_same_v<A, float> ? 8 : 4;
  static_assert(std::is_same_v<A, float> ? (std::is_same_v<In, float> || kHalfLike<In>)
                                          : (std::is_same_v<A, double> && (std::is_same_v<In, float> || std::is_same_v<In, double>)),
                "float32 accumulators take float32 or 16-bit values, float64 ones float32 or float64 values");
  const typename F::M mon{};
  const typename F::Map map{};
  int64_t c = 0;
  for (; c + 4 * W <= nc; c += 4 * W) {
    V a[4];
    for (int j = 0; j < 4; ++j) a[j] = vset(F::M::template identity<A>());
    for (int k = RK_FAULT_IS(CpuColumnsFirstRow) ? 1 : 0; k < cnt; ++k) {  // planted: from 1
      const In* p = x + k * ld + c;
      for (int j = 0; j < 4; ++j) a[j] = vfold(a[j], load_acc<A>(p + j * W), map, mon);
    }
    for (int j = 0; j < 4; ++j) std::memcpy(acc + c + j * W, &a[j], sizeof(V));
  }
  for (; c + W <= nc; c += W) {
    V a = vset(F::M::template identity<A>());
    for (int k = RK_FAULT_IS(CpuColumnsFirstRow) ? 1 : 0; k < cnt; ++k) a = vfold(a, load_acc<A>(x + k * ld + c), map, mon);  // planted: from 1
    std::memcpy(acc + c, &a, sizeof(V));
  }
  return c;
}

// 16 whole lanes (16 G rows) of the columns of a tile of a sum-like operator, W adjacent columns a
// vector: each lane entered as joint_columns enters it, and the 16 lanes' perfect tree built as
// they come (a binary counter of 4 levels in registers), so that the tile's tree takes one push of
// 16 lanes' roots (TileTree::push at level 4) where it took 16 pushes through memory: (2^17, 32)
// float64 mean at 0.49x torch (session 46). Writes acc[0, c) and returns c.
template <class In, class Op>
inline constexpr bool kColTree = kVecLanes<In, Op> && !Op::kBatched && Form<Op>::kSum;
template <int kLevel, class V, class In, class Op>
RK_OPS_AVX2 inline V col_subtree(const In* x, int64_t ld, int64_t& lane) {
  constexpr int64_t G = 64 / sizeof(In);
  using F = Form<Op>;
  if constexpr (kLevel == 0) {
    V a = vset(F::M::template identity<typename Op::Acc>());
    const In* p = x + lane * G * ld;
    for (int64_t k = 0; k < G - (RK_FAULT_IS(CpuColTree16) ? 1 : 0); ++k) {  // planted: each lane's last row lost
      V v;
      if constexpr (std::is_same_v<V, __m256d> && std::is_same_v<In, float>) {
        v = _mm256_cvtps_pd(_mm_loadu_ps(p + k * ld));
      } else if constexpr (std::is_same_v<V, __m256d>) {
        v = _mm256_loadu_pd(p + k * ld);
      } else {
        v = load8(p + k * ld);
      }
      a = vfold(a, v, typename F::Map{}, typename F::M{});
    }
    ++lane;
    return a;
  } else {
    const V left = col_subtree<kLevel - 1, V, In, Op>(x, ld, lane);
    const V right = col_subtree<kLevel - 1, V, In, Op>(x, ld, lane);
    return vcombine(left, right, typename F::M{});
  }
}
template <class In, class Op>
RK_OPS_AVX2 int64_t joint_columns16(const In* x, int64_t ld, int64_t nc, typename Op::Acc* acc) {
  using V = LaneVec<Op>;
  constexpr int64_t W = std::is_same_v<typename Op::Acc, float> ? 8 : 4;
  int64_t c = 0;
  for (; c + W <= nc; c += W) {
    int64_t lane = 0;
    const V root = col_subtree<4, V, In, Op>(x + c, ld, lane);
    std::memcpy(acc + c, &root, sizeof root);
  }
  return c;
}

// amax and amin of bool and integers up to 32 bits (MapReduce of int32 with a max or min and the
// identity map): the max of a run is the same in any order, so rows are read with vertical vector
// max (min) instructions in the input's own width (32 int8 values an instruction), columns 8 at a
// time widened to int32. The scalar lanes held int8 rows at 0.15x torch (issue 21's CPU sweep).
template <class Op, class = void>
struct IntForm {
  static constexpr bool kOk = false;
};
template <class Op>
struct IntForm<Op, std::void_t<typename Op::MapOf>> {
  static constexpr bool kMax = std::is_same_v<typename Op::Monoid, red::MaxM>;
  static constexpr bool kOk = (kMax || std::is_same_v<typename Op::Monoid, red::MinM>) && std::is_same_v<typename Op::MapOf, red::MapId> &&
                              std::is_same_v<typename Op::Acc, int> && std::is_same_v<typename Op::T, int>;
};
template <class In, class Op>
inline constexpr bool kIntExtremum = std::is_integral_v<In> && sizeof(In) <= 4 && IntForm<Op>::kOk;

// The vector max (min) in In's own width, In's signedness (bool as uint8).
template <class In, bool kMax>
RK_OPS_AVX2 inline __m256i imaxmin(__m256i a, __m256i b) {
  constexpr bool kSigned = std::is_signed_v<In>;
  if constexpr (sizeof(In) == 1) {
    return kSigned ? (kMax ? _mm256_max_epi8(a, b) : _mm256_min_epi8(a, b)) : (kMax ? _mm256_max_epu8(a, b) : _mm256_min_epu8(a, b));
  } else if constexpr (sizeof(In) == 2) {
    return kSigned ? (kMax ? _mm256_max_epi16(a, b) : _mm256_min_epi16(a, b)) : (kMax ? _mm256_max_epu16(a, b) : _mm256_min_epu16(a, b));
  } else {
    return kSigned ? (kMax ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b)) : (kMax ? _mm256_max_epu32(a, b) : _mm256_min_epu32(a, b));
  }
}
template <class In>
RK_OPS_AVX2 inline __m256i iset(In v) {
  if constexpr (sizeof(In) == 1) {
    return _mm256_set1_epi8(static_cast<char>(v));
  } else if constexpr (sizeof(In) == 2) {
    return _mm256_set1_epi16(static_cast<short>(v));
  } else {
    return _mm256_set1_epi32(static_cast<int>(v));
  }
}
// 8 values at p widened to int32 (sign- or zero-extended as In).
template <class In>
RK_OPS_AVX2 inline __m256i iload8(const In* p) {
  if constexpr (sizeof(In) == 1) {
    const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<In> ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
  } else if constexpr (sizeof(In) == 2) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<In> ? _mm256_cvtepi16_epi32(v) : _mm256_cvtepu16_epi32(v);
  } else {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
}

template <class In, class Op>
RK_OPS_AVX2 int int_extremum(const In* x, int64_t i0, int64_t i1) {
  constexpr bool kMax = IntForm<Op>::kMax;
  constexpr int W = 32 / sizeof(In);
  if (i1 <= i0) return Op::identity();  // (an empty run: int32's extreme, not In's)
  const In kId = kMax ? std::numeric_limits<In>::lowest() : std::numeric_limits<In>::max();
  In m = kId;
  int64_t i = i0;
  if (i1 - i0 >= 4 * W) {
    __m256i acc[4] = {iset(kId), iset(kId), iset(kId), iset(kId)};
    for (; i + 4 * W <= i1; i += 4 * W)
      for (int u = 0; u < 4; ++u) acc[u] = imaxmin<In, kMax>(acc[u], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + u * W)));
    const __m256i a = imaxmin<In, kMax>(imaxmin<In, kMax>(acc[0], acc[1]), imaxmin<In, kMax>(acc[2], acc[3]));
    alignas(32) In part[W];
    _mm256_store_si256(reinterpret_cast<__m256i*>(part), a);
    for (In v : part) m = kMax ? (v > m ? v : m) : (v < m ? v : m);
  }
  if (RK_FAULT_IS(CpuIntExtremumTail) && i > i0) return static_cast<int>(m);  // planted: the tail not read
  for (; i < i1; ++i) m = kMax ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  return static_cast<int>(m);
}

// Whole columns of amax and amin over bool and integers up to 32 bits (kIntExtremum): a column's
// max (min) is the same in any order, so its R rows need no lanes and no tree. nc columns at x
// (row stride ld), R >= 1 rows, into acc[0, nc): four vectors of 32 bytes of a row at a time in the
// input's own width (128 int8 columns a step), then one vector, then column by column. Through
// lanes of 64 rows (a vector of 8 columns widened to int32 a row, and a tree of lanes
// per column) int8 amax of (57, 504, 132) over dim 1 took 5.2x torch's time; whole columns take
// 1.1x (session 55's A/B, benchmarks/results/cpu/s55_columns/).
template <class In>
RK_OPS_AVX2 inline __m256i iload32(const In* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
template <class In, class Op>
RK_OPS_AVX2 void int_columns_whole(const In* x, int64_t R, int64_t ld, int64_t nc, int* acc) {
  constexpr bool kMax = IntForm<Op>::kMax;
  constexpr int64_t W = 32 / static_cast<int64_t>(sizeof(In));
  alignas(32) In part[4 * W];
  int64_t c = 0;
  for (; c + 4 * W <= nc; c += 4 * W) {
    __m256i a[4];
    for (int u = 0; u < 4; ++u) a[u] = iload32(x + c + u * W);
    for (int64_t k = RK_FAULT_IS(CpuIntColumnsRow1) ? 2 : 1; k < R; ++k)  // planted: row 1 not read
      for (int u = 0; u < 4; ++u) a[u] = imaxmin<In, kMax>(a[u], iload32(x + k * ld + c + u * W));
    for (int u = 0; u < 4; ++u) _mm256_store_si256(reinterpret_cast<__m256i*>(part + u * W), a[u]);
    for (int64_t j = 0; j < 4 * W; ++j) acc[c + j] = static_cast<int>(part[j]);
  }
  for (; c + W <= nc; c += W) {
    __m256i a = iload32(x + c);
    for (int64_t k = 1; k < R; ++k) a = imaxmin<In, kMax>(a, iload32(x + k * ld + c));
    _mm256_store_si256(reinterpret_cast<__m256i*>(part), a);
    for (int64_t j = 0; j < W; ++j) acc[c + j] = static_cast<int>(part[j]);
  }
  for (; c < nc; ++c) {
    In m = x[c];
    for (int64_t k = 1; k < R; ++k) {
      const In v = x[k * ld + c];
      m = kMax ? (v > m ? v : m) : (v < m ? v : m);
    }
    acc[c] = static_cast<int>(m);
  }
}

// argmax and argmin of a contiguous run (ArgExt over float32, float64, 16-bit floats and integers
// up to 32 bits): the first index of the extreme, a NaN the most extreme (the first NaN), ties to
// the first (+0 and -0 tie) is the same whatever order the values are read in, so a run is one leaf:
// a vertical vector max (min) with NaN noted on the side, then a scan for the first value equal to
// it (or the first NaN), which stops there. The lanes' scalar compare-selects held argmax rows at
// 0.3-0.7x torch (issue 21's CPU sweep).
template <class Op>
struct ArgForm {
  static constexpr bool kOk = false;
};
template <class C, bool kMax_>
struct ArgForm<red::ArgExt<C, kMax_>> {
  static constexpr bool kOk = true;
  static constexpr bool kMax = kMax_;
};
template <class In, class Op>
inline constexpr bool kArgRun = ArgForm<Op>::kOk && !RK_FAULT_IS(ArgmaxLastTie) &&
                                (((std::is_same_v<In, float> || kHalfLike<In>) && std::is_same_v<typename Op::T, float>) ||
                                 (std::is_same_v<In, double> && std::is_same_v<typename Op::T, double>) ||
                                 (std::is_integral_v<In> && sizeof(In) <= 4 && std::is_same_v<typename Op::T, int>));

// 8 values of a run as a vector of the operator's type (float32 from 16-bit floats, int32 from
// narrow integers; float64: 4).
template <class In>
RK_OPS_AVX2 inline auto arg_load(const In* p) {
  if constexpr (std::is_same_v<In, double>) {
    return _mm256_loadu_pd(p);
  } else if constexpr (std::is_integral_v<In>) {
    return iload8(p);
  } else {
    return load8(p);
  }
}

// The plain vector max (min), NaN noted apart; lanes equal to m, or the NaN lanes, as a bit mask.
RK_OPS_AVX2 inline __m256i vmaxmin(__m256i a, __m256i b, bool max) { return max ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b); }
RK_OPS_AVX2 inline int eq_mask(__m256d v, __m256d m, bool nan) {
  return _mm256_movemask_pd(nan ? _mm256_cmp_pd(v, v, _CMP_UNORD_Q) : _mm256_cmp_pd(v, m, _CMP_EQ_OQ));
}
RK_OPS_AVX2 inline int eq_mask(__m256 v, __m256 m, bool nan) {
  return _mm256_movemask_ps(nan ? _mm256_cmp_ps(v, v, _CMP_UNORD_Q) : _mm256_cmp_ps(v, m, _CMP_EQ_OQ));
}
RK_OPS_AVX2 inline int eq_mask(__m256i v, __m256i m, bool) { return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, m))); }

template <class In, class Op>
RK_OPS_AVX2 typename Op::Acc arg_run(const In* x, int64_t i0, int64_t i1) {
  using T = typename Op::T;
  constexpr bool kMax = ArgForm<Op>::kMax;
  constexpr int W = std::is_same_v<In, double> ? 4 : 8;
  const auto val = [](const In& v) -> T {
    if constexpr (kHalfLike<In>) {
      return static_cast<float>(v);
    } else {
      return static_cast<T>(v);
    }
  };
  // Pass 1: the extreme value (a NaN if any).
  T m = val(x[i0]);
  bool nan = red::is_nan(m);
  int64_t i = i0;
  if (i1 - i0 >= 4 * W) {
    using V = decltype(arg_load(x));
    V acc[4] = {arg_load(x + i0), arg_load(x + i0), arg_load(x + i0), arg_load(x + i0)};
    V nv;  // float lanes: NaN met (all ones) or not (zero)
    if constexpr (std::is_same_v<T, double>) {
      nv = _mm256_setzero_pd();
    } else if constexpr (std::is_same_v<T, float>) {
      nv = _mm256_setzero_ps();
    } else {
      nv = _mm256_setzero_si256();
    }
    for (; i + 4 * W <= i1; i += 4 * W)
      for (int u = 0; u < 4; ++u) {
        const V v = arg_load(x + i + u * W);
        if constexpr (!std::is_integral_v<T>) nv = vnan_or(nv, v);
        acc[u] = vmaxmin(acc[u], v, kMax);
      }
    alignas(32) T part[4 * W];
    std::memcpy(part, acc, sizeof acc);
    for (T v : part) m = kMax ? (v > m ? v : m) : (v < m ? v : m);
    if constexpr (!std::is_integral_v<T>) {
      alignas(32) T nn[W];
      std::memcpy(nn, &nv, sizeof nv);
      for (T v : nn) nan |= v != T(0) && !RK_FAULT_IS(CpuArgRunNan);  // all-ones lanes where a value was NaN (planted: forgotten)
    }
  }
  for (; i < i1; ++i) {
    const T v = val(x[i]);
    nan |= red::is_nan(v);
    m = kMax ? (v > m ? v : m) : (v < m ? v : m);
  }
  if (nan) m = std::numeric_limits<T>::quiet_NaN();
  // Pass 2: the first index holding it.
  int64_t j = i0;
  using V = decltype(arg_load(x));
  V mv;
  if constexpr (std::is_same_v<T, double>) {
    mv = _mm256_set1_pd(m);
  } else if constexpr (std::is_same_v<T, float>) {
    mv = _mm256_set1_ps(m);
  } else {
    mv = _mm256_set1_epi32(m);
  }
  for (; j + W <= i1; j += W) {
    const int mask = eq_mask(arg_load(x + j), mv, nan);
    if (mask) return {val(x[j + __builtin_ctz(mask)]), j + __builtin_ctz(mask)};
  }
  for (; j < i1; ++j)
    if (nan ? red::is_nan(val(x[j])) : val(x[j]) == m) return {val(x[j]), j};
  return {m, i0};  // unreachable: the extreme is one of the values
}

// Whole columns of argmax and argmin (the types of arg_run): a column's result is the same in any
// order of its values (ArgExt::better is a strict order), so its R rows need no lanes and no tree:
// rows walked in index order, each column keeping its extreme so far and that value's row, replaced
// only by a strictly better value or by the first NaN (a tie keeps the earlier row; +0 and -0 tie).
// nc columns at x (row stride ld), 1 <= R < 2^31 rows, into acc[0, nc), kArgColumnsSpan columns at a
// time: row by row, each row's whole vectors (8 float32 or int32 columns, 4 float64) against the
// extremes and rows held in two L1-resident arrays (independent updates: no chain of dependent
// compares a column), then the last nc % W columns one at a time. Through lanes of G rows and a
// tree a column (column_lanes_fma and TileTree), argmax float64 (6635, 86) over dim 0 took 3.9x
// torch's time and (41, 183, 868) over dim 1 0.87x (the CPU sweep, session 61); walking a column
// vector down all its rows before the next, (41, 183, 868) took 1.6x torch (rows 6.9 KB apart:
// no prefetch across pages).
inline constexpr int64_t kArgColumnsSpan = 256;
template <class V>
struct ArgCols;
// The float forms, one text for both widths: V the vector, T its value, S the intrinsics' suffix
// (ps, pd), SET1 the rows' broadcast (float32's 8 rows as int32, float64's 4 as int64).
#define RK_ARG_COLS_FLOAT(V, T, S, SET1, ROW)                                                                         \
  template <>                                                                                                          \
  struct ArgCols<V> {                                                                                                  \
    RK_OPS_AVX2 static V take(V v, V m, bool max) {                                                                    \
      const V b = max ? _mm256_cmp_##S(v, m, _CMP_GT_OQ) : _mm256_cmp_##S(v, m, _CMP_LT_OQ);                          \
      return _mm256_or_##S(b, _mm256_andnot_##S(_mm256_cmp_##S(m, m, _CMP_UNORD_Q), _mm256_cmp_##S(v, v, _CMP_UNORD_Q))); \
    }                                                                                                                  \
    RK_OPS_AVX2 static V or_tie(V t, V v, V m) { return _mm256_or_##S(t, _mm256_cmp_##S(v, m, _CMP_EQ_OQ)); }         \
    RK_OPS_AVX2 static V pick(V m, V v, V t) { return _mm256_blendv_##S(m, v, t); }                                   \
    RK_OPS_AVX2 static __m256i mask(V t) { return _mm256_cast##S##_si256(t); }                                        \
    RK_OPS_AVX2 static V load(const T* p) { return _mm256_load_##S(p); }                                              \
    RK_OPS_AVX2 static void store(T* p, V v) { _mm256_store_##S(p, v); }                                              \
    RK_OPS_AVX2 static __m256i row(int64_t k) { return SET1(static_cast<ROW>(k)); }                                    \
  };
RK_ARG_COLS_FLOAT(__m256, float, ps, _mm256_set1_epi32, int)      // float32 (16-bit floats converted)
RK_ARG_COLS_FLOAT(__m256d, double, pd, _mm256_set1_epi64x, int64_t)  // float64
#undef RK_ARG_COLS_FLOAT
template <>
struct ArgCols<__m256i> {  // integers up to 32 bits, widened to int32
  RK_OPS_AVX2 static __m256i take(__m256i v, __m256i m, bool max) { return max ? _mm256_cmpgt_epi32(v, m) : _mm256_cmpgt_epi32(m, v); }
  RK_OPS_AVX2 static __m256i or_tie(__m256i t, __m256i v, __m256i m) { return _mm256_or_si256(t, _mm256_cmpeq_epi32(v, m)); }
  RK_OPS_AVX2 static __m256i pick(__m256i m, __m256i v, __m256i t) { return _mm256_blendv_epi8(m, v, t); }
  RK_OPS_AVX2 static __m256i mask(__m256i t) { return t; }
  RK_OPS_AVX2 static __m256i load(const int* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  RK_OPS_AVX2 static void store(int* p, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  RK_OPS_AVX2 static __m256i row(int64_t k) { return _mm256_set1_epi32(static_cast<int>(k)); }
};
template <class In, class Op>
RK_OPS_AVX2 void arg_columns_whole(const In* x, int64_t R, int64_t ld, int64_t nc, typename Op::Acc* acc, const red::Params& p) {
  using T = typename Op::T;
  using V = decltype(arg_load(x));
  using A = ArgCols<V>;
  using Row = std::conditional_t<std::is_same_v<In, double>, int64_t, int>;  // a vector's rows: as many as its values
  constexpr bool kMax = ArgForm<Op>::kMax;
  constexpr int64_t W = std::is_same_v<In, double> ? 4 : 8;
  alignas(32) T mv[kArgColumnsSpan];
  alignas(32) Row rv[kArgColumnsSpan];
  const auto rows_at = [](Row* q) { return reinterpret_cast<__m256i*>(q); };
  for (int64_t c0 = 0; c0 < nc; c0 += kArgColumnsSpan) {
    const int64_t n = std::min(kArgColumnsSpan, nc - c0), whole = n / W * W;
    const In* xc = x + c0;
    for (int64_t c = 0; c < whole; c += W) {
      A::store(mv + c, arg_load(xc + c));
      _mm256_store_si256(rows_at(rv + c), A::row(0));
    }
    for (int64_t k = 1; k < R; ++k) {
      const In* xr = xc + k * ld;
      const __m256i kv = A::row(k);
      for (int64_t c = 0; c < whole; c += W) {
        const V v = arg_load(xr + c), m = A::load(mv + c);
        V t = A::take(v, m, kMax);
        if constexpr (RK_FAULT_IS(CpuArgColumnsTie)) t = A::or_tie(t, v, m);  // planted: a tie takes the later row
        A::store(mv + c, A::pick(m, v, t));
        _mm256_store_si256(rows_at(rv + c), _mm256_blendv_epi8(_mm256_load_si256(rows_at(rv + c)), kv, A::mask(t)));
      }
    }
    for (int64_t c = 0; c < whole; ++c) acc[c0 + c] = typename Op::Acc{mv[c], static_cast<int64_t>(rv[c])};
    for (int64_t c = whole; c < n; ++c) {
      typename Op::Acc a = Op::identity();
      for (int64_t k = 0; k < R; ++k) a = Op::enter(a, cvt<T>(xc[k * ld + c]), k, p);
      acc[c0 + c] = a;
    }
  }
}

template <class In, class Op>
inline int64_t lse_lanes_of(const In* x, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st) {
  if constexpr (std::is_same_v<In, double>) {
    return lse_lanes<Op>(x, n, l, l1, st);
  } else {
    return lse_lanes<In, Op>(x, n, l, l1, st);
  }
}
template <class In, class Op>
inline int64_t lse_columns_of(const In* x, int64_t ld, int64_t nc, int cnt, typename Op::Acc* acc) {
  if constexpr (std::is_same_v<In, double>) {
    return lse_columns<Op>(x, ld, nc, cnt, acc);
  } else {
    return lse_columns<In, Op>(x, ld, nc, cnt, acc);
  }
}

// logsumexp rows of at most kLseShortLanes lanes (1 <= R <= 8 G values), kLseRowsAtOnce rows at a
// time (4 float64, 8 float32 or 16-bit): lane j of the rows as the lanes of block j (a copy, row q at
// lane q, a partial lane padded with -inf to G values), so that each lane sees the values, the
// padding and the operations it saw when lse_rest read the row alone in a block of padded lanes;
// then the rows' trees in vectors, lse_combine lane by lane over the blocks with identity lanes
// ({-inf, 0}) up to the next power of two: TreeStack's result for a row's lanes pushed one by one.
// The same bits, a quarter (an eighth) of the exponentials and no scalar combine. Alone, float64
// rows of 7 values took 32 exponentials a row: 0.30x torch (issue 21's CPU sweep, session 56).
// Rows of 5-8 lanes pad to 8 (lse_combine of two identities is the identity: the padded perfect
// tree is still TreeStack's result). out[q] is row q's root.
template <class In>
inline constexpr int kLseRowsAtOnce = std::is_same_v<In, double> ? 4 : 8;
constexpr int kLseShortLanes = 8;
template <int NL, class In, class Op>
RK_OPS_AVX2 void lse_short_rows(const In* x, int64_t R, typename Op::Acc* out) {
  static_assert(NL >= 1 && NL <= kLseShortLanes, "a short row's lanes");
  constexpr int64_t G = 64 / sizeof(In);
  constexpr int W = kLseRowsAtOnce<In>;
  using V = std::conditional_t<W == 8, __m256, __m256d>;
  using A = typename Op::Acc;
  const int64_t used = RK_FAULT_IS(CpuLseShortRows) ? R - 1 : R;  // planted: a row's last value not read
  alignas(32) In buf[W * G];
  V m[kLseShortLanes], s[kLseShortLanes];
  for (int j = 0; j < NL; ++j) {
    const int64_t cnt = std::max<int64_t>(0, std::min<int64_t>(G, used - j * G));
    for (int q = 0; q < W; ++q) copy_padded(buf + q * G, x + q * R + j * G, cnt, G);
    if constexpr (std::is_same_v<In, double>) {
      lse_block4(buf, m[j], s[j]);
    } else {
      lse_block8<In>(buf, m[j], s[j]);
    }
  }
  constexpr int kP = static_cast<int>(ceil_pow2(NL));  // engine/plan.h
  static_assert(kP <= kLseShortLanes, "the padded lanes fit m and s");
  for (int j = NL; j < kP; ++j) {
    m[j] = vset(-std::numeric_limits<decltype(A::m)>::infinity());
    s[j] = vset(decltype(A::s)(0));
  }
  for (int P = kP; P > 1; P >>= 1)
    for (int i = 0; i < P / 2; ++i) lse_combine(m[2 * i], s[2 * i], m[2 * i + 1], s[2 * i + 1], m[i], s[i]);
  alignas(32) decltype(A::m) mv[W], sv[W];
  std::memcpy(mv, &m[0], sizeof(V));
  std::memcpy(sv, &s[0], sizeof(V));
  for (int q = 0; q < W; ++q) out[q] = A{mv[q], sv[q]};
}
// lse_short_rows for a row's lane count nl in [1, kLseShortLanes], each count its own instance (its
// loops unrolled; rows of one lane do no more than the single-lane version measured first: session
// 56's A/Bs, benchmarks/results/cpu/s56_lse_*), from a table with one entry a count.
template <class In, class Op, size_t... I>
constexpr auto lse_short_rows_table(std::index_sequence<I...>) {
  using Fn = void (*)(const In*, int64_t, typename Op::Acc*);
  return std::array<Fn, sizeof...(I)>{&lse_short_rows<static_cast<int>(I) + 1, In, Op>...};
}
template <class In, class Op>
RK_OPS_AVX2 void lse_short_rows_n(int nl, const In* x, int64_t R, typename Op::Acc* out) {
  static constexpr auto kTable = lse_short_rows_table<In, Op>(std::make_index_sequence<kLseShortLanes>{});
  kTable[nl - 1](x, R, out);
}

// The max (min) of a contiguous run's values [i0, i1), mapped by the identity or |v|: what the lanes
// and their tree give, computed in any order. A max that keeps the held value on ties yields the
// leftmost of the largest values whatever the lanes and the tree, and equal values have equal bits
// but for +0 and -0 (and NaN, which leaves as one NaN, CUDA's: out_cvt). So the run is read
// with vertical vector max (min) instructions, as torch reads it, NaN noted on the side, and only a
// zero result looks for the first zero of the run, whose sign is the answer (the lanes' rows above
// still did 24 shuffles a 64 values for this: amax rows at 0.35-0.45x torch). 16-bit floats are
// read as float32 (exact), 8 a vector.
template <class In, class Op>
inline constexpr bool kExtremum = Form<Op>::kMaxMin && (((std::is_same_v<In, float> || std::is_same_v<In, double>) && std::is_same_v<typename Op::T, In>) ||
                                                        (kHalfLike<In> && std::is_same_v<typename Op::T, float>));

template <class In, class Op>
RK_OPS_AVX2 typename Op::T extremum(const In* x, int64_t i0, int64_t i1) {
  using T = typename Op::T;  // In, or float32 for 16-bit floats (exact)
  constexpr bool kMax = std::is_same_v<typename Form<Op>::M, red::MaxM>;
  constexpr bool kAbs = std::is_same_v<typename Form<Op>::Map, red::MapAbs>;
  static_assert(kAbs || std::is_same_v<typename Form<Op>::Map, red::MapId>, "the tail below maps by the identity or |v| only");
  const auto val = [](const In& v) -> T { return static_cast<T>(cvt<T>(v)); };
  const T kId = Form<Op>::M::template identity<T>();
  constexpr int W = 32 / sizeof(T);  // values a vector
  T m = kId;
  bool nan = false;
  int64_t i = i0;
  {
    using V = Vec256<T>;
    V acc[4] = {vset(kId), vset(kId), vset(kId), vset(kId)};
    V nv = vset(T(0));
    for (; i + 4 * W <= i1; i += 4 * W)
      for (int u = 0; u < 4; ++u) {
        V raw;
        if constexpr (kHalfLike<In>) {
          raw = load8(x + i + u * W);
        } else {
          raw = vload(x + i + u * W);
        }
        const V v = vmap(raw, typename Form<Op>::Map{});  // identity or |v|
        nv = vnan_or(nv, v);
        acc[u] = vmaxmin(acc[u], v, kMax);
      }
    alignas(32) T part[4 * W];
    for (int u = 0; u < 4; ++u) vstore(part + u * W, acc[u]);
    for (T v : part) m = kMax ? (v > m ? v : m) : (v < m ? v : m);
    nan = vany(nv) && !RK_FAULT_IS(CpuOpsExtremumNan);  // planted: the vectors' NaN forgotten
  }
  for (; i < i1; ++i) {
    const T v = kAbs ? std::fabs(val(x[i])) : val(x[i]);
    nan |= v != v;
    m = kMax ? (v > m ? v : m) : (v < m ? v : m);
  }
  if (nan) return std::numeric_limits<T>::quiet_NaN();
  if (!kAbs && m == T(0)) {  // +0 or -0: the first zero's
    for (int64_t j = i0; j < i1; ++j)
      if (val(x[j]) == T(0)) return RK_FAULT_IS(CpuOpsExtremumZero) ? m : val(x[j]);  // planted: the zero's sign not looked up
  }
  return m;
}
// logsumexp's columns combined in vectors (TileTree::push: a column's earlier subtree s[c] on the
// left of a[c]), 8 float32 or 4 float64 columns an AVX2 vector, 16 or 8 an AVX-512 one: the
// accumulators' m and s split into two vectors, lse_combine (LogSumExp::combine's rule, its
// exponential the scalar one's operations), put back together. One scalar combine (and
// exponential) a lane and column had cost more than the lanes themselves: a column of R rows takes
// R / G of them (logsumexp float64 (1941, 507) over dim 0 at 0.41x torch, the CPU sweep).
template <class Op>
inline constexpr bool kLseTile = std::is_same_v<Op, red::LogSumExp<float, float>> || std::is_same_v<Op, red::LogSumExp<double, double>>;
template <class Op>
RK_OPS_AVX2 int64_t lse_tile_combine(const typename Op::Acc* s, typename Op::Acc* a, int64_t nc) {
  using A = typename Op::Acc;
  static_assert(sizeof(A) == 2 * sizeof(A::m) && offsetof(A, s) == sizeof(A::m), "an accumulator is its m, then its s");
  int64_t c = 0;
  if constexpr (std::is_same_v<Op, red::LogSumExp<float, float>>) {
    const float* fs = &s[0].m;
    float* fa = &a[0].m;
    for (; c + 8 <= nc; c += 8) {
      const __m256 s0 = _mm256_loadu_ps(fs + 2 * c), s1 = _mm256_loadu_ps(fs + 2 * c + 8);
      const __m256 a0 = _mm256_loadu_ps(fa + 2 * c), a1 = _mm256_loadu_ps(fa + 2 * c + 8);
      __m256 m, v;  // columns in the order (0 1 4 5 | 2 3 6 7), the same for every operand
      lse_combine(_mm256_shuffle_ps(s0, s1, 0x88), _mm256_shuffle_ps(s0, s1, 0xDD), _mm256_shuffle_ps(a0, a1, 0x88),
                  _mm256_shuffle_ps(a0, a1, 0xDD), m, v);
      _mm256_storeu_ps(fa + 2 * c, _mm256_unpacklo_ps(m, v));
      _mm256_storeu_ps(fa + 2 * c + 8, _mm256_unpackhi_ps(m, v));
    }
  } else {
    const double* ds = &s[0].m;
    double* da = &a[0].m;
    for (; c + 4 <= nc; c += 4) {
      const __m256d s0 = _mm256_loadu_pd(ds + 2 * c), s1 = _mm256_loadu_pd(ds + 2 * c + 4);
      const __m256d a0 = _mm256_loadu_pd(da + 2 * c), a1 = _mm256_loadu_pd(da + 2 * c + 4);
      __m256d m, v;  // columns in the order (0 2 | 1 3)
      lse_combine(_mm256_unpacklo_pd(s0, s1), _mm256_unpackhi_pd(s0, s1), _mm256_unpacklo_pd(a0, a1), _mm256_unpackhi_pd(a0, a1), m, v);
      _mm256_storeu_pd(da + 2 * c, _mm256_unpacklo_pd(m, v));
      _mm256_storeu_pd(da + 2 * c + 4, _mm256_unpackhi_pd(m, v));
    }
  }
  return c;
}
namespace v512 {
template <class Op>
RK_OPS_AVX512 int64_t lse_tile_combine(const typename Op::Acc* s, typename Op::Acc* a, int64_t nc) {
  int64_t c = 0;
  if constexpr (std::is_same_v<Op, red::LogSumExp<float, float>>) {
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const float* fs = &s[0].m;
    float* fa = &a[0].m;
    for (; c + 16 <= nc; c += 16) {
      const __m512 s0 = _mm512_loadu_ps(fs + 2 * c), s1 = _mm512_loadu_ps(fs + 2 * c + 16);
      const __m512 a0 = _mm512_loadu_ps(fa + 2 * c), a1 = _mm512_loadu_ps(fa + 2 * c + 16);
      __m512 m, v;
      lse_combine(_mm512_permutex2var_ps(s0, ev, s1), _mm512_permutex2var_ps(s0, od, s1), _mm512_permutex2var_ps(a0, ev, a1),
                  _mm512_permutex2var_ps(a0, od, a1), m, v);
      if (RK_FAULT_IS(CpuLseTileCombine)) m = _mm512_permutex2var_ps(a0, ev, a1);  // planted: the earlier subtree's max dropped
      _mm512_storeu_ps(fa + 2 * c, _mm512_permutex2var_ps(m, lo, v));
      _mm512_storeu_ps(fa + 2 * c + 16, _mm512_permutex2var_ps(m, hi, v));
    }
  } else {
    const __m512i ev = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), od = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    const __m512i lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    const double* ds = &s[0].m;
    double* da = &a[0].m;
    for (; c + 8 <= nc; c += 8) {
      const __m512d s0 = _mm512_loadu_pd(ds + 2 * c), s1 = _mm512_loadu_pd(ds + 2 * c + 8);
      const __m512d a0 = _mm512_loadu_pd(da + 2 * c), a1 = _mm512_loadu_pd(da + 2 * c + 8);
      __m512d m, v;
      lse_combine(_mm512_permutex2var_pd(s0, ev, s1), _mm512_permutex2var_pd(s0, od, s1), _mm512_permutex2var_pd(a0, ev, a1),
                  _mm512_permutex2var_pd(a0, od, a1), m, v);
      if (RK_FAULT_IS(CpuLseTileCombine)) m = _mm512_permutex2var_pd(a0, ev, a1);  // planted: the earlier subtree's max dropped
      _mm512_storeu_pd(da + 2 * c, _mm512_permutex2var_pd(m, lo, v));
      _mm512_storeu_pd(da + 2 * c + 8, _mm512_permutex2var_pd(m, hi, v));
    }
  }
  return c;
}
}  // namespace v512
}  // namespace vec
#endif

template <class Op>
void tile_combine(const typename Op::Acc* s, typename Op::Acc* a, int64_t nc) {
  int64_t c = 0;
#if RK_OPS_AVX2_LANES
  if constexpr (vec::kLseTile<Op>) {
    if (cpu_avx512()) c = vec::v512::lse_tile_combine<Op>(s, a, nc);
    if (cpu_avx2()) c += vec::lse_tile_combine<Op>(s + c, a + c, nc - c);
  }
#endif
  for (; c < nc; ++c) a[c] = Op::combine(s[c], a[c]);
}

// Lanes l .. l1 - 1 of a run of n values at x (stride s), each pushed into st.
template <class In, class Op>
__attribute__((always_inline)) inline void lanes_body(const In* x, int64_t s, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st,
                                                      const red::Params& p) {
  constexpr int64_t G = 64 / sizeof(In);
  for (; l < l1; ++l) {
    const int64_t i0 = l * G;
    st.push(lane<In, Op>(x + i0 * s, s, static_cast<int>(std::min<int64_t>(G, n - i0)), i0, p));
  }
}

#if RK_OPS_AVX2_LANES
// The same compiled for FMA (RK_OPS_AVX2, taken where cpu_avx2(), which checks FMA too), for the
// batched operators: Welford's lane and merges fuse the products nvcc fuses (red::m_fused,
// std::fma), one instruction each here where the default build calls libm's fma, which took
// float32 var rows 1.4x and float64 1.8x their time (NOTES.md, session 44). The build's
// -ffp-contract=off still fuses nothing else.
template <class In, class Op>
RK_OPS_AVX2 void lanes_fma(const In* x, int64_t s, int64_t n, int64_t l, int64_t l1, TreeStack<Op>& st,
                           const red::Params& p) {
  lanes_body<In, Op>(x, s, n, l, l1, st, p);
}

// A batched operator's lanes of nc adjacent columns (column_lanes), compiled for FMA likewise.
template <class In, class Op>
RK_OPS_AVX2 void column_lanes_fma(const In* x, int64_t ld, int64_t c, int64_t nc, int cnt, int64_t i0,
                                  typename Op::Acc* acc, const red::Params& p) {
  for (; c < nc; ++c) acc[c] = lane<In, Op>(x + c, ld, cnt, i0, p);
}
#endif

// Lanes [l0, l1) of a run of n values at x (stride s) into a stack. A non-batched operator on a
// contiguous run takes kJoint whole lanes at once, value k of each lane after value k - 1 of the
// same lane: the same order per lane, so the same bits, but kJoint independent chains, whose
// latencies the CPU overlaps (one lane's chain of G dependent additions or comparisons took about
// one latency per value: mean and amax rows at 0.3-0.5x torch, issue 21's CPU sweep).
template <class In, class Op>
void lanes(const In* x, int64_t s, int64_t n, int64_t l0, int64_t l1, TreeStack<Op>& st, const red::Params& p) {
  constexpr int64_t G = 64 / sizeof(In);
  int64_t l = l0;
#if RK_OPS_AVX2_LANES
  if constexpr (vec::kArgRun<In, Op>) {  // argmax, argmin: one leaf for the run, any order
    if (s == 1 && cpu_avx2() && l0 < l1) {
      st.push(vec::arg_run<In, Op>(x, l0 * G, std::min(l1 * G, n)));
      return;
    }
  }
  if constexpr (vec::kLseLanes<In, Op>) {
    if (s == 1 && cpu_avx2()) l = vec::lse_lanes_of<In, Op>(x, n, l, l1, st);
  }
#endif
  if constexpr (!Op::kBatched) {
    using T = typename Op::T;
    if (s == 1) {
#if RK_OPS_AVX2_LANES
      if constexpr (vec::kExtremum<In, Op>) {  // a max or min: one leaf for the whole run, any order
        if (cpu_avx2()) {
          st.push(vec::extremum<In, Op>(x, l0 * G, std::min(l1 * G, n)));
          return;
        }
      }
      if constexpr (vec::kIntExtremum<In, Op>) {  // the same for integers
        if (cpu_avx2()) {
          st.push(vec::int_extremum<In, Op>(x, l0 * G, std::min(l1 * G, n)));
          return;
        }
      }
      if constexpr (vec::kVecLanes<In, Op>) {
        if (cpu_avx2()) l = vec::joint_lanes<In, Op>(x, n, l, l1, st);
      }
#endif
      for (; l + kJoint <= l1 && (l + kJoint) * G <= n; l += kJoint) {
        typename Op::Acc acc[kJoint];
        for (int64_t j = 0; j < kJoint; ++j) acc[j] = Op::identity();
        const In* b = x + l * G;
        for (int64_t k = 0; k < G; ++k) {
          for (int64_t j = 0; j < kJoint; ++j) acc[j] = Op::enter(acc[j], cvt<T>(b[j * G + k]), (l + j) * G + k, p);
        }
        for (int64_t j = 0; j < kJoint; ++j) st.push(acc[j]);
      }
    }
  }
#if RK_OPS_AVX2_LANES
  if constexpr (Op::kBatched) {
    if (cpu_avx2()) return lanes_fma<In, Op>(x, s, n, l, l1, st, p);
  }
#endif
  lanes_body<In, Op>(x, s, n, l, l1, st, p);
}

// The lanes of nc adjacent columns over the same cnt (<= G) rows at x (row stride ld; the first
// row has index i0) into acc[0, nc): the values of each column in index order, as lane(). Rows
// are read whole for the non-batched operators; a batched operator's lane function gets each
// column's values gathered by lane().
template <class In, class Op>
void column_lanes(const In* x, int64_t ld, int64_t nc, int cnt, int64_t i0, typename Op::Acc* acc, const red::Params& p) {
  using T = typename Op::T;
  if constexpr (Op::kBatched) {
    int64_t c = 0;
#if RK_OPS_AVX2_LANES
    if constexpr (vec::kLseLanes<In, Op>) {
      if (cpu_avx2()) c = vec::lse_columns_of<In, Op>(x, ld, nc, cnt, acc);
    }
#endif
#if RK_OPS_AVX2_LANES
    if (cpu_avx2()) return column_lanes_fma<In, Op>(x, ld, c, nc, cnt, i0, acc, p);
#endif
    for (; c < nc; ++c) acc[c] = lane<In, Op>(x + c, ld, cnt, i0, p);
  } else {
    int64_t c0 = 0;
#if RK_OPS_AVX2_LANES
    if constexpr (vec::kVecLanes<In, Op>) {
      if (cpu_avx2()) c0 = vec::joint_columns<In, Op>(x, ld, nc, cnt, acc);
    }  // (bool and integer amax and amin take whole columns in AVX2: run, vec::int_columns_whole)
#endif
    for (int64_t c = c0; c < nc; ++c) acc[c] = Op::identity();
    for (int k = 0; k < cnt; ++k) {
      const In* row = x + k * ld;
      for (int64_t c = c0; c < nc; ++c) acc[c] = Op::enter(acc[c], cvt<T>(row[c]), i0 + k, p);
    }
  }
}

template <class Op, class Out0, class Out1>
void store(const OpDesc& d, int64_t i, const typename Op::Acc& acc) {
  const auto r = Op::project(acc, d.params);
  static_cast<Out0*>(d.out0)[i] = out_cvt<Out0>(r.a);
  if constexpr (Op::kOutputs == 2) {
    if (d.out1) static_cast<Out1*>(d.out1)[i] = out_cvt<Out1>(r.b);  // var and std have no second output
  }
}

// Values [p, p + cnt) of the run of the output whose first value is at x + base (the gather's
// reduced digits over rsize, row-major, the innermost contiguous: engine/plan.h's Gather) copied
// to buf, a contiguous piece of the innermost dim at a time.
template <class In>
void gather_run(const In* x, const Gather& g, int64_t base, int64_t p, int64_t cnt, In* buf) {
  int64_t digit[kGatherDims];
  int64_t q = p;
  for (int i = g.nr - 1; i >= 0; --i) {
    digit[i] = q % g.rsize[i].d;
    q /= g.rsize[i].d;
  }
  const int64_t seg = g.rsize[g.nr - 1].d;
  int64_t off = base;
  for (int i = 0; i + 1 < g.nr; ++i) off += digit[i] * g.rstride[i];
  int64_t inner = digit[g.nr - 1];
  for (int64_t done = 0; done < cnt;) {
    const int64_t m = std::min(seg - inner, cnt - done);
    std::memcpy(buf + done, x + off + inner, static_cast<size_t>(m) * sizeof(In));
    done += m;
    inner = 0;
    for (int j = 0; j + 1 < g.nr; ++j) {  // the next piece: the odometer over the outer reduced digits
      const int i = RK_FAULT_IS(CpuGatherCarry) ? j : g.nr - 2 - j;  // planted: the outermost digit counts first
      off += g.rstride[i];
      if (++digit[i] < static_cast<int64_t>(g.rsize[i].d)) break;
      off -= digit[i] * g.rstride[i];
      digit[i] = 0;
    }
  }
}

// A plan of several steps in the rows form (engine/plan.h's Gather, innermost dim reduced): each
// output's run read through the dims, kGatherLanes lanes at a time copied into a thread's buffer
// (L2-resident) and reduced there as the rows step reduces a row of the copy (as_rows) that the
// CPU made until session 46: the same lanes, the same tree (a run of more than kChunkLanes lanes in
// chunks, their roots pushed in order), so the same bits, without writing and reading back a copy
// of the whole tensor (mean of a (64, 64, 64, 64) float64 over (1, 3): 8x torch's time).
constexpr int64_t kGatherLanes = 1024;
static_assert(kChunkLanes % kGatherLanes == 0, "a chunk is whole buffers");
template <class In, class Op, class Out0, class Out1>
void run_gather(const OpDesc& d) {
  using Acc = typename Op::Acc;
  constexpr int64_t G = 64 / sizeof(In);
  static_assert(!kArgOp<Op>, "argmax and argmin reduce one dim (their lanes' indices are the buffer's)");
  const Gather& g = d.gather;
  const In* x = static_cast<const In*>(d.in);
  const int64_t N = g.N, lanes_n = (N + G - 1) / G;
  const int64_t chunks = lanes_n > kChunkLanes ? (lanes_n + kChunkLanes - 1) / kChunkLanes : 1;
  parallel_tasks(g.K, N, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<uint64_t> buffer;  // (not std::vector<In>: In may be bool)
    buffer.resize(static_cast<size_t>((std::min(N, kGatherLanes * G) * static_cast<int64_t>(sizeof(In)) + 7) / 8));
    In* buf = reinterpret_cast<In*>(buffer.data());
    for (int64_t r = r0; r < r1; ++r) {
      int64_t base = 0, q = r;
      for (int i = g.nk - 1; i >= 0; --i) {
        base += (q % g.ksize[i].d) * g.kstride[i];
        q /= g.ksize[i].d;
      }
      TreeStack<Op> top;
      for (int64_t ch = 0; ch < chunks; ++ch) {
        TreeStack<Op> st;
        const int64_t l1 = std::min(lanes_n, (ch + 1) * kChunkLanes);
        for (int64_t l = ch * kChunkLanes; l < l1; l += kGatherLanes) {
          const int64_t p = l * G, cnt = std::min(N - p, kGatherLanes * G);
          gather_run(x, g, base, p, cnt, buf);
          lanes<In, Op>(buf, 1, cnt, 0, (cnt + G - 1) / G, st, d.params);
        }
        if (chunks == 1) {
          store<Op, Out0, Out1>(d, r, st.result());
        } else {
          top.push(st.result());
        }
      }
      if (chunks > 1) store<Op, Out0, Out1>(d, r, top.result());
    }
  });
}

template <class In, class Op, class Out0, class Out1 = Out0>
void run(const OpDesc& d) {
  using Acc = typename Op::Acc;
  constexpr int64_t G = 64 / sizeof(In);
  const In* x = static_cast<const In*>(d.in);
  if constexpr (!kArgOp<Op>) {
    if (d.kind == StepKind::Gather) return run_gather<In, Op, Out0, Out1>(d);
  }
  const int64_t R = d.extent, lanes_n = (R + G - 1) / G;
  if (d.kind == StepKind::Rows && d.outer == 1 && lanes_n > kChunkLanes) {
    // One long row: chunks of kChunkLanes lanes (aligned subtrees) in parallel, then in order.
    const int64_t chunks = (lanes_n + kChunkLanes - 1) / kChunkLanes;
    std::vector<Acc> part(chunks);
    parallel_tasks(chunks, kChunkLanes * G, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        TreeStack<Op> st;
        lanes<In, Op>(x, 1, R, c * kChunkLanes, std::min(lanes_n, (c + 1) * kChunkLanes), st, d.params);
        part[c] = st.result();
      }
    });
    TreeStack<Op> st;
    for (const Acc& a : part) st.push(a);
    store<Op, Out0, Out1>(d, 0, st.result());
    return;
  }
  if (d.kind == StepKind::Rows) {
    parallel_tasks(d.outer, R, [&](int64_t r0, int64_t r1) {
      int64_t r = r0;
#if RK_OPS_AVX2_LANES
      // Short rows (at most kShortLanes lanes) of a sum-like operator: kJoint rows at once
      // (vec::short_rows), every row's lanes and tree as its own. Scalar lanes, one dependent chain
      // at a time, held vector_norm of (5165, 69) at 0.23x torch (issue 21's CPU sweep), and one
      // tree a row pushed lane by lane float64 sums of (2^17, 32) at 0.44x (session 46).
      if constexpr (!Op::kBatched && vec::kVecLanes<In, Op> && !vec::kExtremum<In, Op> && !vec::kArgRun<In, Op> &&
                    !vec::kLseLanes<In, Op> && vec::Form<Op>::kSum) {
        if (lanes_n <= vec::kShortLanes && cpu_avx2()) {
          alignas(32) Acc out[kJoint];
          for (; r + kJoint <= r1; r += kJoint) {
            vec::short_rows<In, Op>(x + r * R, R, out);
            for (int64_t q = 0; q < kJoint; ++q) store<Op, Out0, Out1>(d, r + q, out[q]);
          }
        }
      }
      // logsumexp rows of at most 8 lanes: kLseRowsAtOnce rows as the lanes of a block a lane
      // (vec::lse_short_rows), their trees in vectors; each root stored as lanes() leaves it (a
      // TreeStack's result: the root itself). Rows of exactly 8 whole lanes keep the lanes path
      // (whole blocks of lanes read in place): there the batch's copies cost 1.28-1.54x (session
      // 57's first A/B, benchmarks/results/cpu/s57_lse_mid_run1), where rows of 5-7 lanes or a
      // partial eighth took 0.50-0.96x (s57_lse_mid).
      if constexpr (vec::kLseLanes<In, Op>) {
        const bool whole8 = R == vec::kLseShortLanes * G;
        if (R >= 1 && lanes_n <= vec::kLseShortLanes && !whole8 && cpu_avx2()) {
          constexpr int W = vec::kLseRowsAtOnce<In>;
          alignas(32) Acc out[W];
          for (; r + W <= r1; r += W) {
            vec::lse_short_rows_n<In, Op>(static_cast<int>(lanes_n), x + r * R, R, out);
            for (int q = 0; q < W; ++q) store<Op, Out0, Out1>(d, r + q, out[q]);
          }
        }
      }
#endif
      for (; r < r1; ++r) {
        TreeStack<Op> st;
        lanes<In, Op>(x + r * R, 1, R, 0, lanes_n, st, d.params);
        store<Op, Out0, Out1>(d, r, st.result());
      }
    });
    return;
  }
#if RK_OPS_AVX2_LANES
  if constexpr (vec::kIntExtremum<In, Op> || vec::kArgRun<In, Op>) {
    // Whole columns, any order of rows: amax and amin of bool and integers (vec::int_columns_whole),
    // argmax and argmin (vec::arg_columns_whole). A tile of columns a task whose R rows take at most
    // kIntColumnsTileBytes (L2-resident, so that the tile's later column blocks find its rows in
    // cache), at least 128 bytes of a row.
    if (R > 0 && (!vec::kArgRun<In, Op> || R <= INT32_MAX) && cpu_avx2()) {  // argmax's rows held as int32 lanes
      const int64_t C = d.inner, step = 128 / static_cast<int64_t>(sizeof(In));
      const int64_t fit = kIntColumnsTileBytes / (R * static_cast<int64_t>(sizeof(In)));
      const int64_t tw = std::min(C, std::max(step, fit / step * step));
      const int64_t tiles = (C + tw - 1) / tw;
      parallel_tasks(d.outer * tiles, R * tw, [&](int64_t t0, int64_t t1) {
        std::vector<Acc> acc(static_cast<size_t>(tw));
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t b = t / tiles, c0 = (t % tiles) * tw, nc = std::min(tw, C - c0);
          if constexpr (vec::kArgRun<In, Op>) {
            vec::arg_columns_whole<In, Op>(x + b * R * C + c0, R, C, nc, acc.data(), d.params);
          } else {
            vec::int_columns_whole<In, Op>(x + b * R * C + c0, R, C, nc, acc.data());
          }
          for (int64_t c = 0; c < nc; ++c) store<Op, Out0, Out1>(d, b * C + c0 + c, acc[c]);
        }
      });
      return;
    }
  }
#endif
  // Columns: batch b, a tile of tw columns and a chunk of lanes per task, a lane (G rows) at a time
  // across the tile: each row of the lane is read as one contiguous piece of the tile, and every
  // column's lane sees its values in index order, as lane() would (issue 21: walking one column at
  // a time, with strided loads and a tree per column, made a (10, 775) amax 8x torch's time). Lane
  // results go into the columns' trees; a column of one lane needs no tree. A tile spans
  // kTileBytes of a row where the matrix is that wide: 64-column tiles (512 bytes of a float64 row)
  // held mean over dim 0 of a (4096, 4096) float64 at 2x the sum kernel's time (session 46). A
  // column of more than kChunkLanes lanes is cut into chunks as a long row is (aligned subtrees,
  // their roots pushed in order: the same tree, and the same bits as a row of those values), which
  // also spreads a matrix of few tiles over the threads (a (2^18, 64) float64 was one task).
  const int64_t C = d.inner;
  const int64_t tw = std::min(C, std::max<int64_t>(kTile, kTileBytes / static_cast<int64_t>(sizeof(In))));
  const int64_t tiles = (C + tw - 1) / tw;
  const int64_t chunks = lanes_n > kChunkLanes ? (lanes_n + kChunkLanes - 1) / kChunkLanes : 1;
  std::vector<Acc> part(chunks > 1 ? static_cast<size_t>(d.outer * chunks * C) : 0);
  parallel_tasks(d.outer * tiles * chunks, std::min(R, kChunkLanes * G) * tw, [&](int64_t t0, int64_t t1) {
    TileTree<Op> tree(lanes_n > 1, tw, std::min(lanes_n, kChunkLanes));
    std::vector<Acc> acc_buffer(static_cast<size_t>(tw));
    Acc* acc = acc_buffer.data();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ch = t % chunks, b = t / (chunks * tiles), c0 = ((t / chunks) % tiles) * tw, nc = std::min(tw, C - c0);
      const int64_t l0 = ch * kChunkLanes, l1 = std::min(lanes_n, l0 + kChunkLanes);
      const In* xt = x + b * R * C + c0;
      tree.count = 0;
      for (int64_t l = l0; l < l1;) {
#if RK_OPS_AVX2_LANES
        if constexpr (vec::kColTree<In, Op>) {  // 16 whole lanes at once, where they make one subtree
          // Narrow tiles only (16 lanes of the tile's rows within kColTreeBytes): the 16 lanes are
          // read a column vector at a time, which on a wide tile walks 16 G rows column-major
          // ((256, 256) float64 over dim 0: 2.2x the lane-by-lane time).
          if (lanes_n > 1 && (tree.count & 15) == 0 && l + 16 <= l1 && (l + 16) * G <= R &&
              16 * G * nc * static_cast<int64_t>(sizeof(In)) <= kColTreeBytes && cpu_avx2()) {
            const In* xl = xt + l * G * C;
            for (int64_t c = vec::joint_columns16<In, Op>(xl, C, nc, acc); c < nc; ++c) {
              TreeStack<Op> st;
              for (int64_t j = 0; j < 16; ++j) st.push(lane<In, Op>(xl + j * G * C + c, C, static_cast<int>(G), (l + j) * G, d.params));
              acc[c] = st.result();
            }
            tree.push(acc, nc, 4);
            l += 16;
            continue;
          }
        }
#endif
        const int64_t i0 = l * G;
        const int cnt = static_cast<int>(std::min<int64_t>(G, R - i0));
        column_lanes<In, Op>(xt + i0 * C, C, nc, cnt, i0, acc, d.params);
        if (lanes_n > 1) tree.push(acc, nc);
        ++l;
      }
      if (lanes_n > 1) tree.result(acc, nc);
      if (chunks == 1) {
        for (int64_t c = 0; c < nc; ++c) store<Op, Out0, Out1>(d, b * C + c0 + c, acc[c]);
      } else {
        std::copy(acc, acc + nc, part.begin() + (b * chunks + ch) * C + c0);
      }
    }
  });
  if (chunks == 1) return;
  parallel_tasks(d.outer * C, chunks, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t b = o / C, c = o % C;
      TreeStack<Op> st;
      for (int64_t ch = 0; ch < chunks; ++ch) st.push(part[(b * chunks + ch) * C + c]);
      store<Op, Out0, Out1>(d, o, st.result());
    }
  });
}

// The op's struct and output types (engine/op_impl.h, shared with the CUDA kernels), the first
// output wide when dtype= widened it.
template <class In, class I>
void run_impl(const OpDesc& d) {
  if constexpr (I::kWide) {
    if (d.wide) return run<In, typename I::Op, Wide<In>, typename I::Out1>(d);
  }
  run<In, typename I::Op, typename I::Out0, typename I::Out1>(d);
}

}  // namespace

void cpu_op_step(const OpDesc& d) {
  // The CPU backend gathers the rows form only (Backend::gathers_rows), and not for sum's own kernels.
  TORCH_CHECK(d.kind != StepKind::Gather || (!d.gather.columns && !(d.op == red::OpKind::Sum && cpu_sum_kernels(d.in_dtype, d.wide))),
              "reducekit: internal error: a gather step the CPU does not take");
  if (d.op == red::OpKind::Sum && cpu_sum_kernels(d.in_dtype, d.wide)) {
    // The CPU's vector sum kernels (cpu/dims_cpu.cpp), in the dtypes that OpImpl<Sum> gives the CUDA
    // kernels, where engine/op_desc.h's cpu_sum_kernels says so. Other sums (float64, dtype=
    // widened) take the operators' loops below, the engine's order (until session 46 every sum
    // took the kernels, so the CPU's float64 sums over dims differed from CUDA's).
    const SumStepTypes t = sum_step_types(d);
    cpu_dims_step(d.kind, d.outer, d.extent, d.inner, d.in, t.in, t.acc, d.out0, t.out);
    return;
  }
  dispatch_cpu(d.in_dtype, [&](auto t) {
    using In = typename decltype(t)::T;
    red::for_op(
        d.op, d.ord,
        [&](auto k, auto o) {
          constexpr red::OpKind K = decltype(k)::value;
          if constexpr (std::is_integral_v<In> && red::op_traits(K).float_only) {
            TORCH_CHECK(false, "reducekit: internal error: float-only op ", red::op_name(K), " on an integer input");
          } else if constexpr (K == red::OpKind::Sum && std::is_integral_v<In>) {
            TORCH_CHECK(false, "reducekit: internal error: an integer sum reached the operators' loops");
          } else {
            run_impl<In, red::OpImpl<K, decltype(o)::value, In, kHalfLike<In>>>(d);
          }
        },
        [] { TORCH_CHECK(false, "reducekit: internal error: bad op id"); });
  });
}

namespace red {
double exp_nv_cpu(double v) {
#if RK_OPS_AVX2_LANES
  if (cpu_avx2()) return nvexp::hw(v);
#endif
  return nvexp::soft(v);
}
}  // namespace red

}  // namespace rk
