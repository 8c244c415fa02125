// The operators of every torch reduction reducekit serves: one struct per operator, torch-free and
// CUDA-free (host and device), that the row, column and full kernels (cuda/engine/reduce.cuh) and the
// CPU loops (cpu/reduce_cpu.cpp) are templated on. Modeled on PyTorch's Reduce.cuh ops. Each has
//   T, Acc          the value type an element is converted to, and the accumulator;
//   identity()      the accumulator of no values (pads idle lanes and threads);
//   enter(a, v, i, p)  value v, at index i of its reduced run, entering accumulator a;
//   combine(a, b)   two accumulators; a covers values before b's (argmax's tie rule relies on the
//                   index, not on this, so the order is a convenience, never a correctness need);
//   project(a, p)   the result(s): r.a, and r.b when kOutputs == 2 (var_mean, aminmax).
// Batched operators (kBatched: Welford, logsumexp) also take lane(v, cnt, i0, p): the
// accumulator of a run of cnt values held in registers, computed in two passes (the run's mean,
// then the squared deviations; the run's max, then the scaled exponentials), so that the
// per-element cost is a few flops and a division or exp rescale is paid once per run.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/faults.h"
#include "core/op_table.h"

#ifndef RK_HD
#if defined(__CUDACC__)
#define RK_HD __host__ __device__ __forceinline__
#else
#define RK_HD inline
#endif
#endif
#ifndef RK_NOINLINE
#if defined(__CUDACC__)
#define RK_NOINLINE __host__ __device__ __noinline__
#else
#define RK_NOINLINE __attribute__((noinline))
#endif
#endif

namespace rk {
namespace red {

// |x|^p for an integer p up to this multiplies (p - 1 products) rather than calling pow.
inline constexpr int kMaxIntPow = 8;

// Per-call constants of the finish (and of |x|^p).
struct Params {
  int64_t n = 1;            // values reduced into each output
  double correction = 1.0;  // var/std: divide by max(0, n - correction)
  double p = 2.0;           // NormOrd::P
  int ip = 0;               // p when it is an integer 3..kMaxIntPow (multiplied out, no pow), else 0
  bool sqrt = false;        // Welford: std (and std_mean) rather than var
  // CUDA engine rows: a row's short last lane whose 16-byte granules lie inside the tensor takes a
  // whole lane's vector loads (reduce.cuh, lane_reduce); false: element loads (family.cuh's rule,
  // rows_short_vectors, and the hook _rows_short_lanes). The same bits either way.
  bool short_vectors = true;
};

template <class A, class B = A>
struct Pair {
  A a;
  B b;
};

template <class T>
RK_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// Finite (not NaN, not +-inf) without isfinite, which differs between host and device headers.
template <class T>
RK_HD bool is_finite(T v) {
  return v - v == T(0);
}

RK_HD float m_sqrt(float v) { return sqrtf(v); }
RK_HD double m_sqrt(double v) { return sqrt(v); }
RK_HD float m_log(float v) { return logf(v); }
// e^v of a float32 v <= 0 on the CPU, the same bits in plain C++ and in AVX2 (reduce_cpu.cpp's
// vec::exp_scaled8 does these operations in this order, lane by lane; no fused multiply-add, which
// the baseline build cannot do): Cephes' expf. n = round(v log2 e) by the 1.5 x 2^23 trick (ties to
// even, |v log2 e| < 2^22 here), r = v - n ln 2 in two pieces (n x 0.693359375 is exact), e^r by a
// degree-5 polynomial on |r| <= ln(2)/2, then times 2^(n + 64) and 2^-64 (exact for a normal
// result; a subnormal one rounds once). Below -104 the result rounds to +0 (e^-104 is under half
// the least subnormal). About 1 ulp, against glibc's expf's 0.5: glibc's has no vector twin, and
// one scalar call per value held logsumexp's CPU rows at 0.15x torch (issue 21's CPU sweep).
// exp(0) is 1 and exp(-inf) is +0 exactly.
// Its constants, which vec::exp_scaled8 reads too (one table: the two cannot drift apart).
struct ExpCephes {
  static constexpr float kFloor = -104.0f;                // at or below: +0
  static constexpr float kLog2e = 1.44269504088896341f;
  static constexpr float kRound = 12582912.0f;            // 1.5 x 2^23: (t + kRound) - kRound rounds t
  static constexpr float kLn2Hi = 0.693359375f;           // 9 bits: n x kLn2Hi is exact
  static constexpr float kLn2Lo = -2.12194440e-4f;
  static constexpr float kP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                  4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  static constexpr int kBias = 64 + 127;                  // 2^(n + 64) as a biased exponent
  static constexpr float kTwoM64 = 5.42101086242752217e-20f;  // 2^-64
};
inline float exp_scaled_cpu(float v) {
  using C = ExpCephes;
  if (!(v > C::kFloor)) return 0.0f;
  const float t = v * C::kLog2e;
  const float n = (t + C::kRound) - C::kRound;
  float r = v - n * C::kLn2Hi;
  r = r - n * C::kLn2Lo;
  float p = C::kP[0];
  for (int i = 1; i < 6; ++i) p = p * r + C::kP[i];
  const float z = r * r;
  float y = p * z;
  y = y + r;
  y = y + 1.0f;
  const int e = static_cast<int>(n) + C::kBias;  // in [41, 191]
  float scale;
  const uint32_t bits = static_cast<uint32_t>(e) << 23;
  std::memcpy(&scale, &bits, sizeof scale);
  return (y * scale) * C::kTwoM64;
}

// e^v, v <= 0, for logsumexp's scaled sums: on the GPU a float32 takes the hardware 2^x of
// v * log2(e) (ex2.approx: two instructions instead of expf's ten; relative error about 2^-22
// plus |v| * 2^-24 from the product, and every term is at most 1 while the sum is at least 1, so
// the sum's relative error stays about 2^-22). exp(0) is 1 and exp(-inf) is +0 exactly, as the
// identity needs. The CPU takes exp_scaled_cpu, float64 exp.
RK_HD float exp_scaled(float v) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v * 1.4426950408889634f));
  return r;
#else
  return RK_FAULT_IS(CpuExpLibm) ? expf(v) : exp_scaled_cpu(v);  // planted: glibc's expf, which the vectors do not match
#endif
}
#if !defined(__CUDA_ARCH__)
// CUDA's float64 exp (libdevice's __nv_exp) operation for operation on the CPU, in
// cpu/reduce_cpu.cpp (FMA instructions where the CPU has them, else std::fma): the CPU's float64
// logsumexp then sums the GPU's exponentials, and its vector lanes compute the same bits.
double exp_nv_cpu(double v);
#endif
// e^v of a float64: CUDA's exp on both backends (the CPU's copy above; glibc's exp, one scalar call
// a value, held the CPU's float64 logsumexp at 0.12-0.2x torch: issue 21's CPU sweep).
RK_HD double exp_scaled(double v) {
#if defined(__CUDA_ARCH__)
  return exp(v);
#else
  return exp_nv_cpu(v);
#endif
}
RK_HD double m_log(double v) { return log(v); }
// a * b + c where nvcc fuses it into one fma (its default contraction; which products it fuses is
// read from the PTX, benchmarks/ptx_compare.py), rounded once on the CPU too, which is built with
// -ffp-contract=off: the operator then gives the same bits on both backends (issue 21). The GPU
// keeps the plain expression, so its instructions do not change (0 kernels differ).
template <class T>
RK_HD T m_fused(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
  return c + a * b;
#else
  return std::fma(a, b, c);
#endif
}
// a * b rounded on its own on both backends: nvcc never fuses __fmul_rn / __dmul_rn (mul.rn in
// the PTX) into an fma with a later add, as it may a plain product; the CPU contracts nothing.
template <class T>
RK_HD T m_mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    return __fmul_rn(a, b);
  } else {
    return __dmul_rn(a, b);
  }
#else
  return a * b;
#endif
}
RK_HD float m_pow(float a, float b) { return powf(a, b); }
RK_HD double m_pow(double a, double b) { return pow(a, b); }
template <class T>
RK_HD T m_abs(T v) {
  // Floats: the sign bit cleared (one instruction; -0 -> +0, NaN stays NaN), not compares and
  // selects, which took vector_norm(1) of float32 (float64 accumulation) to 1.18x the sum.
  if constexpr (std::is_same_v<T, float>) {
    return fabsf(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return fabs(v);
  } else {
    return v < T(0) ? static_cast<T>(T(0) - v) : v;
  }
}

// ---------------------------------------------------------------------------------------------
// Monoids: the binary operators (with their identity) of the simple reductions. The gallery's
// whole-tensor strategies (cuda/block/common.cuh) take these too.
struct SumM {
  template <class A>
  RK_HD static A identity() { return A(RK_FAULT_IS(WrongIdentity) ? 1 : 0); }  // planted: padding adds 1
  template <class A>
  RK_HD static A combine(A a, A b) {
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
      using U = std::make_unsigned_t<A>;  // wraps like torch's integer sums
      return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdM {
  template <class A>
  RK_HD static A identity() { return A(1); }
  template <class A>
  RK_HD static A combine(A a, A b) {
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
      using U = std::make_unsigned_t<A>;
      return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};

// max and min propagate NaN, as torch's amax/amin do.
struct MaxM {
  template <class A>
  RK_HD static A identity() {
    if constexpr (RK_FAULT_IS(OpsWrongIdentity)) return A(0);  // planted: max pads with 0, not the lowest value
    if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
    return std::numeric_limits<A>::lowest();
  }
  template <class A>
  RK_HD static A combine(A a, A b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<A, float>) {  // one instruction with the same NaN rule (sm_80+)
      float r;
      asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
      return r;
    }
#endif
    return is_nan(a) ? a : (is_nan(b) ? b : (b > a ? b : a));
  }
};

struct MinM {
  template <class A>
  RK_HD static A identity() {
    if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
    return std::numeric_limits<A>::max();
  }
  template <class A>
  RK_HD static A combine(A a, A b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<A, float>) {
      float r;
      asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
      return r;
    }
#endif
    return is_nan(a) ? a : (is_nan(b) ? b : (b < a ? b : a));
  }
};

// all/any: a value is true when it is nonzero (NaN included), as in torch.
struct AndM {
  template <class A>
  RK_HD static A identity() { return A(1); }
  template <class A>
  RK_HD static A combine(A a, A b) { return A(a != A(0) && b != A(0)); }
};

struct OrM {
  template <class A>
  RK_HD static A identity() { return A(0); }
  template <class A>
  RK_HD static A combine(A a, A b) { return A(a != A(0) || b != A(0)); }
};

// ---------------------------------------------------------------------------------------------
// Element maps and finishes of MapReduce.
struct MapId {
  template <class A, class T>
  RK_HD static A apply(T v, const Params&) { return static_cast<A>(v); }
};
struct MapNanZero {  // nansum, nanmean's sum
  template <class A, class T>
  RK_HD static A apply(T v, const Params&) { return is_nan(v) ? A(0) : static_cast<A>(v); }
};
struct MapAbs {
  template <class A, class T>
  RK_HD static A apply(T v, const Params&) { return m_abs(static_cast<A>(v)); }
};
struct MapSq {
  template <class A, class T>
  RK_HD static A apply(T v, const Params&) { return static_cast<A>(v) * static_cast<A>(v); }
};
struct MapPowAbs {
  template <class A, class T>
  RK_HD static A apply(T v, const Params& p) {
    const A a = m_abs(static_cast<A>(v));
    if (p.ip > 0) {  // integer p: p - 1 products, left to right (a uniform branch; unrolled, predicated)
      A r = a;
#pragma unroll
      for (int k = 1; k < kMaxIntPow; ++k)
        if (k < p.ip) r *= a;
      return r;
    }
    return m_pow(a, static_cast<A>(p.p));
  }
};
struct MapNonzero {  // count_nonzero, all, any, the 0-"norm"
  template <class A, class T>
  RK_HD static A apply(T v, const Params&) { return A(v != T(0)); }
};

struct FinId {
  template <class A>
  RK_HD static A apply(A a, const Params&) { return a; }
};
struct FinMean {
  template <class A>
  RK_HD static A apply(A a, const Params& p) { return a / static_cast<A>(p.n); }
};
struct FinSqrt {
  template <class A>
  RK_HD static A apply(A a, const Params&) { return m_sqrt(a); }
};
struct FinPowInv {
  template <class A>
  RK_HD static A apply(A a, const Params& p) { return m_pow(a, static_cast<A>(1.0 / p.p)); }
};

// value -> Map -> combined by the monoid M in A -> Fin. Serves mean, nansum, prod, amax, amin,
// all, any, count_nonzero and every ord of vector_norm (engine/op_impl.h picks the map, monoid
// and finish of each).
template <class T_, class A, class M, class Map = MapId, class Fin = FinId>
struct MapReduce {
  using T = T_;
  using Acc = A;
  using Monoid = M;
  using MapOf = Map;  // the CPU's vector rows loop reads the map and monoid (cpu/reduce_cpu.cpp)
  static constexpr bool kBatched = false;
  static constexpr int kOutputs = 1;
  RK_HD static Acc identity() { return M::template identity<A>(); }
  RK_HD static Acc enter(Acc a, T v, int64_t, const Params& p) {
    if constexpr (std::is_same_v<M, SumM> && std::is_same_v<Map, MapSq> && std::is_floating_point_v<A>) {
      // a + x * x, which nvcc fuses into one fma in every kernel (the Norms family's PTX: no mul.f64
      // in a kernel of vector_norm's ord 2, session 45); the CPU fuses it too (m_fused), or
      // float64's 2-norms differ in their last bits (issue 21, item 2).
      const A x = static_cast<A>(v);
      return m_fused(x, x, a);
    } else {
      return M::template combine<A>(a, Map::template apply<A>(v, p));
    }
  }
  RK_HD static Acc combine(Acc a, Acc b) { return M::template combine<A>(a, b); }
  RK_HD static Pair<A> project(Acc a, const Params& p) { return {Fin::apply(a, p), A(0)}; }
};

// nanmean: the sum and the count of the non-NaN values.
template <class T_, class A>
struct NanMean {
  using T = T_;
  struct Acc {
    A s;
    int64_t n;
  };
  static constexpr bool kBatched = false;
  static constexpr int kOutputs = 1;
  RK_HD static Acc identity() { return {A(0), 0}; }
  RK_HD static Acc enter(Acc a, T v, int64_t, const Params&) {
    return is_nan(v) ? a : Acc{a.s + static_cast<A>(v), a.n + 1};
  }
  RK_HD static Acc combine(Acc a, Acc b) { return {a.s + b.s, a.n + b.n}; }
  RK_HD static Pair<A> project(Acc a, const Params&) { return {a.s / static_cast<A>(a.n), A(0)}; }
};

// var, std, var_mean, std_mean: Welford's state (mean, M2 = sum of squared deviations, n), runs
// of values reduced in two passes in registers, runs and partials merged by Chan et al.'s
// formula. Never a sum of squares minus a squared sum: no cancellation on data with a large mean.
template <class T_, class A>
struct Welford {
  using T = T_;
  struct Acc {
    A mean;
    A m2;
    int64_t n;
  };
  static constexpr bool kBatched = true;
  static constexpr int kOutputs = 2;  // (var or std, mean)
  RK_HD static Acc identity() { return {A(0), A(0), 0}; }
  RK_HD static Acc enter(Acc a, T v, int64_t, const Params&) {
    const int64_t n = a.n + 1;
    const A x = static_cast<A>(v), d = x - a.mean;
    const A mean = a.mean + d / static_cast<A>(n);
    return {mean, m_fused(d, x - mean, a.m2), n};
  }
  template <int N>
  RK_HD static Acc lane(const T (&v)[N], int cnt, int64_t i0, const Params& p) {
    return lane(v, cnt, i0, p, [&] {
      Run<N> r;
#pragma unroll
      for (int k = 0; k < N; ++k) r.v[k] = v[k];
      return r;
    });
  }
  // reload(): the run's values again (a Run<N>), for the rare slow path alone. The CUDA columns
  // kernel reads them again from memory there, so that its 32 values are dead once shifted.
  template <int N, class Reload>
  RK_HD static Acc lane(const T (&v)[N], int cnt, int64_t, const Params&, Reload&& reload) {
    // The run (at most 32 values) in the value type, shifted by its first value c (the shifted-data
    // algorithm: the sums see x - c, of the data's spread, not its mean, so a float32 run keeps
    // its accuracy on data with a large mean); its mean c + ms and its M2 then merge in A. Per
    // element a few value-type flops; per run one conversion and one A division.
    if (cnt <= 0) return identity();
    const T c = v[0];
    T s = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k < cnt) s += v[k] - c;
    // A whole run (cnt == N, a power of two) takes s * 2^-log2(N): the same real value as s / N,
    // so the same correctly rounded result (subnormals included), without the division (in
    // float64, MUFU.RCP64H, a chain of DFMA and a checked slow-path call, for 8 values). The
    // product is rounded alone (m_mul_rn): fused into the subtraction below, a subnormal ms
    // would round differently.
    static_assert((N & (N - 1)) == 0, "a run's length is a power of two");
    const T ms = cnt == N ? m_mul_rn(s, T(1) / static_cast<T>(RK_FAULT_IS(WelfordRunProduct) ? 2 * N : N))  // planted: 1 / 2N
                          : s / static_cast<T>(cnt);
    T m2 = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (k < cnt) {
        const T d = (v[k] - c) - ms;
        m2 = m_fused(d, d, m2);
      }
    }
    // A run whose differences or squares overflow the value type (finite values near its largest,
    // of both signs: bfloat16's range is float32's), or whose squares may have underflowed (an M2
    // below 2^-96: subnormal data, and runs of equal values, whose exact 0 goes the slow way too),
    // goes again on the slow path; a run holding inf or NaN takes it too and keeps its NaN/inf.
    // One predicted branch per run.
    if (!is_finite(m2) || m2 < T(0x1p-96)) return lane_wide<N>(reload(), cnt);
    return {static_cast<A>(c) + static_cast<A>(ms), static_cast<A>(m2), cnt};
  }
  // The run in A, scaled by 2^-512 (2^512) when A is the value type itself (float64 input) and the
  // values are huge (tiny): no intermediate overflows or underflows, and M2 = 2^1024 * the scaled
  // M2 is inf only when the run's true M2 is past A's range. Out of line, the run passed by value:
  // inlined, it cost the fast path up to 900 bytes of spills (ptxas, the 16-bit rows kernels).
  template <int N>
  struct Run {
    T v[N];
  };
  template <int N>
  RK_NOINLINE static Acc lane_wide(const Run<N> r, int cnt) {
    const T* v = r.v;
    A big = A(0);  // the largest finite |value|: which way to scale
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k < cnt && is_finite(v[k]) && m_abs(static_cast<A>(v[k])) > big) big = m_abs(static_cast<A>(v[k]));
    constexpr bool kScale = std::is_same_v<A, T>;
    const bool huge = kScale && big > A(0x1p500), tiny = kScale && big < A(0x1p-500);
    const A down = huge ? A(0x1p-512) : tiny ? A(0x1p512) : A(1), up = huge ? A(0x1p512) : tiny ? A(0x1p-512) : A(1);
    // The mean unshifted (an infinite first value would make every shifted value NaN), M2 shifted.
    const A c = static_cast<A>(v[0]) * down;
    A s = A(0), t = A(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (k < cnt) {
        s += static_cast<A>(v[k]) * down - c;
        t += static_cast<A>(v[k]) * down;
      }
    }
    const A ms = s / static_cast<A>(cnt);
    A m2 = A(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (k < cnt) {
        const A d = (static_cast<A>(v[k]) * down - c) - ms;
        m2 = m_fused(d, d, m2);
      }
    }
    return {t / static_cast<A>(cnt) * up, m2 * up * up, cnt};
  }
  RK_HD static Acc combine(Acc a, Acc b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    // Equal counts (every inner node of the perfect tree but its ragged edge): nb / n is exactly
    // one half, so the float64 division is skipped without changing a bit.
    const A d = b.mean - a.mean, fb = a.n == b.n ? A(0.5) : static_cast<A>(b.n) / static_cast<A>(n);
    // Chan's correction term d^2 * na * nb / n: the spread between the two parts' means.
    const A corr = RK_FAULT_IS(WelfordNoCorrection) ? A(0) : d * d * static_cast<A>(a.n) * fb;  // planted: dropped
    // Means of opposite signs near A's largest value overflow their difference: the mean is then
    // the weighted average of the two (finite), and M2 is past the range (inf). Infinite means
    // (inf inputs) give inf or NaN there, as torch's mean does.
    // nvcc fused these two (the PTX), not the sums of M2.
    if (!is_finite(d)) return {m_fused(b.mean, fb, a.mean * (A(1) - fb)), a.m2 + b.m2 + corr, n};
    return {m_fused(d, fb, a.mean), a.m2 + b.m2 + corr, n};
  }
  RK_HD static Pair<A> project(Acc a, const Params& p) {
    const double dof = static_cast<double>(a.n) - p.correction;
    A var = a.m2 / static_cast<A>(dof > 0 ? dof : 0.0);
    if (p.sqrt) var = m_sqrt(var);
    return {var, a.n > 0 ? a.mean : A(NAN)};
  }
};

// logsumexp in one pass: the running max m and the sum s of exp(x - m), rescaled when m grows.
// A non-finite max decides the result alone: NaN if any value is NaN, +inf if any is +inf, -inf
// when every value is -inf (or there are none).
template <class T_, class A>
struct LogSumExp {
  using T = T_;
  struct Acc {
    A m;
    A s;
  };
  static constexpr bool kBatched = true;
  static constexpr int kOutputs = 1;
  RK_HD static Acc identity() { return {-std::numeric_limits<A>::infinity(), A(0)}; }
  RK_HD static Acc enter(Acc a, T v, int64_t, const Params&) { return combine(a, Acc{static_cast<A>(v), A(1)}); }
  template <int N>
  RK_HD static Acc lane(const T (&v)[N], int cnt, int64_t, const Params&) {
    A m = -std::numeric_limits<A>::infinity();
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k < cnt) m = MaxM::combine<A>(m, static_cast<A>(v[k]));
    if (!is_finite(m)) return {m, A(0)};
    A s = A(0);
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k < cnt) s += exp_scaled(static_cast<A>(v[k]) - m);
    return {m, s};
  }
  // The smaller max's sum is rescaled (one exponential): the identity's {-inf, 0} adds +0. The
  // rescale and add are one fused multiply-add, as nvcc contracts `s + s' * e` (m_fused: the
  // GPU's expression is unchanged, the CPU rounds once too; until session 46 the CPU rounded the
  // product and the sum apart, and 6 float64 results of the corpus differed from CUDA's).
  RK_HD static Acc combine(Acc a, Acc b) {
    const A m = MaxM::combine<A>(a.m, b.m);
    if (!is_finite(m)) return {m, A(0)};
    return a.m >= b.m ? Acc{a.m, m_fused(b.s, exp_scaled(b.m - a.m), a.s)} : Acc{b.m, m_fused(a.s, exp_scaled(a.m - b.m), b.s)};
  }
  RK_HD static Pair<A> project(Acc a, const Params&) { return {is_finite(a.m) ? a.m + m_log(a.s) : a.m, A(0)}; }
};

// argmax (kMax) and argmin: the value and its index. The first occurrence wins a tie, and a NaN
// is more extreme than any number (torch's rules); the rule compares indices, so it holds
// whatever order partial results meet in. Index -1 marks the identity (no value yet).
template <class T_, bool kMax>
struct ArgExt {
  using T = T_;
  struct Acc {
    T v;
    int64_t i;
  };
  static constexpr bool kBatched = true;
  static constexpr int kOutputs = 1;
  RK_HD static Acc identity() { return {T(0), -1}; }
  // Whether b replaces a.
  RK_HD static bool better(const Acc& b, const Acc& a) {
    if (b.i < 0) return false;
    if (a.i < 0) return true;
    const bool earlier = RK_FAULT_IS(ArgmaxLastTie) ? b.i > a.i : b.i < a.i;  // planted: the last tie wins
    if (is_nan(a.v)) return is_nan(b.v) && earlier;
    if (is_nan(b.v)) return true;
    if (kMax ? b.v > a.v : b.v < a.v) return true;
    return b.v == a.v && earlier;
  }
  RK_HD static Acc enter(Acc a, T v, int64_t i, const Params&) {
    const Acc b{v, i};
    return better(b, a) ? b : a;
  }
  // A run of cnt values whose first has index i0: its extreme (a NaN if any), then the first
  // offset holding it. Per element a compare-select each pass and a 32-bit offset; the run's
  // single index is formed once.
  template <int N>
  RK_HD static Acc lane(const T (&v)[N], int cnt, int64_t i0, const Params&) {
    if (cnt <= 0) return identity();
    T m = v[0];
#pragma unroll
    for (int k = 1; k < N; ++k)
      if (k < cnt) m = kMax ? MaxM::combine<T>(m, v[k]) : MinM::combine<T>(m, v[k]);
    int f = 0;
    if constexpr (RK_FAULT_IS(ArgmaxLastTie)) {  // planted: the last tie wins
#pragma unroll
      for (int k = 0; k < N; ++k)
        if (k < cnt && (is_nan(m) ? is_nan(v[k]) : v[k] == m)) f = k;
    } else if (!is_nan(m)) {  // the common case apart: one compare-select per element
#pragma unroll
      for (int k = N - 1; k >= 0; --k)
        if (k < cnt && v[k] == m) f = k;
    } else {
#pragma unroll
      for (int k = N - 1; k >= 0; --k)
        if (k < cnt && is_nan(v[k])) f = k;
    }
    return {m, i0 + f};
  }
  RK_HD static Acc combine(Acc a, Acc b) { return better(b, a) ? b : a; }
  RK_HD static Pair<int64_t> project(Acc a, const Params&) { return {a.i, 0}; }
};

// aminmax: both extremes in one read.
template <class T_>
struct MinMax {
  using T = T_;
  struct Acc {
    T mn;
    T mx;
  };
  static constexpr bool kBatched = false;
  static constexpr int kOutputs = 2;  // (min, max)
  RK_HD static Acc identity() { return {MinM::identity<T>(), MaxM::identity<T>()}; }
  RK_HD static Acc enter(Acc a, T v, int64_t, const Params&) { return {MinM::combine<T>(a.mn, v), MaxM::combine<T>(a.mx, v)}; }
  RK_HD static Acc combine(Acc a, Acc b) { return {MinM::combine<T>(a.mn, b.mn), MaxM::combine<T>(a.mx, b.mx)}; }
  RK_HD static Pair<T> project(Acc a, const Params&) { return {a.mn, a.mx}; }
};

// The operators' value and accumulator types for an input type In (kHalf: In is a 16-bit float,
// whose type differs on host and device): values as float32 for 16-bit floats, int64 for bool
// and integers, themselves otherwise; sums (mean, nansum, nanmean, Welford's state, the 0/1/2
// norms) as float32 for 16-bit floats, float64 otherwise; the `wide` output likewise.
template <class In, bool kHalf>
using ValueOf = std::conditional_t<kHalf, float, std::conditional_t<std::is_integral_v<In>, int64_t, In>>;
template <bool kHalf>
using SumAccOf = std::conditional_t<kHalf, float, double>;
// Welford's state (mean, M2) is float64 for every input, 16-bit floats included: the M2 of
// 16-bit values near their largest (about 1e76 for bfloat16) is past float32's range, while the
// variance's square root is not. Its runs stay in the value type (Welford::lane).
using WelfordAcc = double;

}  // namespace red
}  // namespace rk
