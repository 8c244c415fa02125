// method="exact": the pieces shared by the CUDA kernel (cuda/engine/exact.cu), the CPU kernel
// (cpu/exact_cpu.cpp) and the shard API. Torch-free; host and device.
//
// The guarantee: the result is the value of the output dtype nearest to the exact sum of the
// input values, ties to even. So it is the same on every device, grid, order and split.
//
// How (ExSUM's shape, Collange et al. 2015, with xsum's integer accumulator, Neal 2015):
//  - Fast path. Each thread keeps its running sum in float64 and checks that each addition is
//    EXACT: t = a + v is exact iff t - a == v and t - v == a (if it is not, then for the larger
//    operand, say a, t - a is computed exactly (Fast2Sum) and differs from v). float32 and
//    bfloat16 values sit on the grid 2^-149 and a float64 holds 53 bits, so additions of ordinary
//    data are almost always exact: the check costs three adds and two compares. A rare inexact
//    one keeps its exact error (TwoSum) in a second float64.
//    float64 input keeps two float64 (hi + lo, TwoSum into hi, the rounding error added exactly
//    into lo). float16 values are multiples of 2^-24 below 2^16, so 2^13 of them always sum
//    exactly in a float64: no check at all, a flush every 2^13 values.
//  - Spill. An addition that would round is not made: the value goes instead into a fixed-point
//    superaccumulator of int64 limbs, limb i weighing 2^(32 i + base). A value splits into three
//    32-bit pieces added into three limbs; each limb has 31 bits of headroom for carries, so
//    carries are only propagated at the end (normalize). NaN and infinities are counted.
//  - The same exact add combines threads, warps, blocks and shards; the end is one normalize
//    and one correct rounding of the limbs into the output format (round_limbs).
//
// The shard format (exact_partial / exact_round): kExactWords int64 words, the universal limbs
// (base kUnivBase, kUnivLimbs of them, normalized: each in [0, 2^32) but the top one, which is
// signed) then the NaN, +inf and -inf counts. Partials of any float dtype combine by adding them
// as integers (torch.sum over the shard dim, or an all-reduce with SUM): up to 2^31 partials
// cannot overflow a word.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/faults.h"

#if defined(__CUDACC__)
#define RK_HD __host__ __device__ __forceinline__
// The cold paths (spills, the final rounding): out of line on the GPU, so that the hot loop's
// register allocation does not pay for them.
#define RK_HD_COLD inline __host__ __device__ __noinline__
#else
#define RK_HD inline
#define RK_HD_COLD inline
#endif

namespace rk {
namespace exact {

// The fixed-point formats. An input format's base is a multiple of 32 at or below the lsb of its
// smallest subnormal; its limbs reach 64 bits above its largest finite value (2^64 values).
struct Format {
  int base;   // weight of limb 0's lowest bit: 2^base
  int limbs;  // number of int64 limbs
};
inline constexpr Format kHalfFmt{-32, 6};        // float16: lsb 2^-24, max < 2^16
inline constexpr Format kSingleFmt{-160, 14};    // float32 and bfloat16: lsb 2^-149, max < 2^128
inline constexpr Format kDoubleFmt{-1088, 71};   // float64: lsb 2^-1074, max < 2^1024
inline constexpr int kUnivBase = kDoubleFmt.base;
inline constexpr int kUnivLimbs = kDoubleFmt.limbs;
inline constexpr int kSpecials = 3;  // NaN, +inf, -inf counts
inline constexpr int kExactWords = kUnivLimbs + kSpecials;
inline constexpr int kMaxLimbs = kUnivLimbs;
// Universal limb index of an input format's limb 0.
RK_HD int univ_offset(Format f) { return (f.base - kUnivBase) / 32; }

// Output formats of the final rounding.
enum class OutFmt : int { Half = 0, BFloat16 = 1, Single = 2, Double = 3 };
struct FloatSpec {
  int p;     // precision in bits, the implicit bit included
  int emin;  // exponent of the smallest normal
  int emax;  // exponent of the largest finite
  int bits;  // storage width
};
RK_HD FloatSpec spec(OutFmt o) {
  switch (o) {
    case OutFmt::Half: return {11, -14, 15, 16};
    case OutFmt::BFloat16: return {8, -126, 127, 16};
    case OutFmt::Single: return {24, -126, 127, 32};
    default: return {53, -1022, 1023, 64};
  }
}

RK_HD uint64_t dbits(double v) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(v));
#else
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
#endif
}

// a += v if that addition is exact; false (a unchanged) if it would round, overflow, or v is not
// finite.
RK_HD bool try_add(double& a, double v) {
  const double t = a + v;
  if (t - a == v && t - v == a) {
    a = t;
    return true;
  }
  return false;
}

// t = RN(x + y) and its exact rounding error e (x + y = t + e), Knuth's TwoSum; e is NaN if t
// overflows or an operand is not finite.
RK_HD void two_sum(double x, double y, double& t, double& e) {
  t = x + y;
  const double bb = t - x;
  e = (x - (t - bb)) + (y - bb);
}

// The superaccumulator's sink: `add(limb, piece)` adds one signed piece (|piece| < 2^32) to a limb
// (a shared-memory atomic on the GPU, a plain add on the CPU); `special(k)` counts a NaN (0),
// +inf (1) or -inf (2).
//
// Adds the finite double v, which lies on format f's grid (a multiple of 2^f.base), exactly.
template <class Sink>
RK_HD_COLD void spill(double v, Format f, Sink& sink) {
  const uint64_t b = dbits(v);
  int e = static_cast<int>((b >> 52) & 0x7ff);
  uint64_t m = b & ((uint64_t(1) << 52) - 1);
  if (e) {
    m |= uint64_t(1) << 52;
  } else {
    e = 1;
  }
  if (m == 0) return;
  int q = e - 1075 - f.base;  // v = m * 2^(q + base)
  if (q < 0) {                // only zero bits below the grid: drop them
    m >>= -q;
    q = 0;
  }
  const int k = q >> 5, s = q & 31;
  const uint64_t lo = m << s;
  const uint64_t hi = s ? (m >> (64 - s)) : 0;
  const bool neg = b >> 63;
  const int64_t p0 = static_cast<int64_t>(lo & 0xffffffffu), p1 = static_cast<int64_t>(lo >> 32),
                p2 = static_cast<int64_t>(hi);
  if (p0 && !RK_FAULT_IS(ExactSpillLow)) sink.add(k, neg ? -p0 : p0);  // planted: the low piece is lost
  if (p1) sink.add(k + 1, neg ? -p1 : p1);
  if (p2) sink.add(k + 2, neg ? -p2 : p2);
}

// acc += v if exact, else v (finite, on f's grid) goes to the limbs.
template <class Sink>
RK_HD void add_or_spill(double& acc, double v, Format f, Sink& sink) {
  if (!try_add(acc, v)) spill(v, f, sink);
}

// A value the fast path could not take: NaN and infinities are counted, finite values spilled.
template <class Sink>
RK_HD_COLD void spill_or_special(double v, Format f, Sink& sink) {
  if (v != v) {
    sink.special(0);
  } else if (v - v != 0) {  // +-inf (finite v gives exactly 0)
    sink.special(v > 0 ? 1 : 2);
  } else {
    spill(v, f, sink);
  }
}

// Per-thread accumulators. `add` takes one input value (already a double), `merge` another
// accumulator of the same kind, `drain` spills what is left into the sink.
//
// bfloat16 (and float16's flushed runs): a float64 sum s, every addition checked; an addition
// that would round spills the value. Sixteen-bit values arrive as exact float32 sums of 8 (the
// kernel's pre-sum), so inexact additions are rare and the accumulator stays small.
struct AccSpill {
  double s = 0;
  template <class Sink>
  RK_HD void add(double v, Format f, Sink& sink, int = 1) {
    if (!try_add(s, v)) spill_or_special(v, f, sink);
  }
  template <class Sink>
  RK_HD void merge(const AccSpill& o, Format f, Sink& sink) { add(o.s, f, sink); }
  template <class Sink>
  RK_HD void drain(Format f, Sink& sink) {
    spill(s, f, sink);
    s = 0;
  }
};

// float32: a float64 sum s, every addition checked. An addition that would round is
// made anyway (TwoSum: s takes the rounded sum, its exact error e goes to lo, checked too): so s
// never keeps bits finer than its own last place, and later additions of ordinary values stay
// exact. Only an error that lo cannot take exactly is spilled.
struct Acc1 {
  double s = 0, lo = 0;
  template <class Sink>
  RK_HD void add(double v, Format f, Sink& sink, int = 1) {
    if (!try_add(s, v)) slow(v, f, sink);
  }
  template <class Sink>
  RK_HD void slow(double v, Format f, Sink& sink) {
    double t, e;
    two_sum(s, v, t, e);  // exact: s + v = t + e, e on f's grid
    if (t - t != 0) {  // v is inf or NaN, or the sum overflows: keep v out of s
      spill_or_special(v, f, sink);
      return;
    }
    s = t;
    add_or_spill(lo, e, f, sink);
  }
  template <class Sink>
  RK_HD void merge(const Acc1& o, Format f, Sink& sink) {
    add(o.s, f, sink);
    add_or_spill(lo, o.lo, f, sink);
  }
  template <class Sink>
  RK_HD void drain(Format f, Sink& sink) {
    spill(s, f, sink);
    spill(lo, f, sink);
    s = lo = 0;
  }
};

// float16: values on the grid 2^-24 below 2^16, so kFlush of them sum exactly in `run` (|run| <
// 2^29, 53 bits; `count` counts input values, also when one add brings the exact sum of several).
// inf and NaN are counted per value, as every other dtype's are (exact_partial's words carry the
// counts; until issue 22's part 3 they reached the run and counted once per run of 2^13 values).
// Every kFlush values, `run` is added (checked) into `s`. The CPU's; CUDA's HalfRun (exact.cu)
// gives the same sums and counts.
struct AccHalf {
  static constexpr int kFlush = 1 << 13;
  double run = 0;
  int count = 0;
  AccSpill s;
  template <class Sink>
  RK_HD void flush(Format f, Sink& sink) {
    s.add(run, f, sink);
    run = 0;
    count = 0;
  }
  // v: the exact sum of n input values (|v| < n * 2^16).
  template <class Sink>
  RK_HD void add(double v, Format f, Sink& sink, int n = 1) {
    if (v - v != 0) {  // inf or NaN: counted, not added
      sink.special(v != v ? 0 : (v > 0 ? 1 : 2));
      return;
    }
    run += v;
    count += n;
    if (count > kFlush - 8) flush(f, sink);
  }
  template <class Sink>
  RK_HD void drain(Format f, Sink& sink) { flush(f, sink); s.drain(f, sink); }
};

// float64: hi + lo. TwoSum puts v into hi and its rounding error, exactly, into e; e joins lo
// only if that addition is exact, else e is spilled. A sum that overflows hi keeps v out (spilled).
struct Acc2 {
  double hi = 0, lo = 0;
  template <class Sink>
  RK_HD void add(double v, Format f, Sink& sink) {
    double t, e;
    two_sum(hi, v, t, e);
    double l = lo;
    if (try_add(l, e)) {  // the common case: both exact (and t finite: else e is NaN)
      hi = t;
      lo = l;
      return;
    }
    if (t - t == 0) {  // t finite: hi takes t, and e (exact) goes to the limbs
      hi = t;
      spill(e, f, sink);
    } else {
      spill_or_special(v, f, sink);
    }
  }
  template <class Sink>
  RK_HD void merge(const Acc2& o, Format f, Sink& sink) {
    add(o.hi, f, sink);
    add_or_spill(lo, o.lo, f, sink);
  }
  template <class Sink>
  RK_HD void drain(Format f, Sink& sink) {
    spill(hi, f, sink);
    spill(lo, f, sink);
    hi = lo = 0;
  }
};

// Normalizes limbs in place: carries moved up, every limb but the top in [0, 2^32), the top
// signed. The value is unchanged (barring overflow of the top limb, impossible for real sums).
RK_HD void normalize(int64_t* l, int n) {
  int64_t carry = 0;
  for (int i = 0; i + 1 < n; ++i) {
    const int64_t v = l[i] + carry;
    l[i] = v & 0xffffffff;
    carry = v >> 32;  // arithmetic shift: floor division by 2^32
    if (RK_FAULT_IS(ExactDropCarry) && carry < 0) carry = 0;  // planted: borrows (negative carries) are lost
  }
  l[n - 1] += carry;
}

// Bits [lo, lo + count) (lo >= 0, count <= 60) of the magnitude held in 32-bit digits d[0..nd).
RK_HD uint64_t get_bits(const uint32_t* d, int nd, int lo, int count) {
  const int w = lo >> 5, sh = lo & 31;
  const uint64_t d0 = w < nd ? d[w] : 0, d1 = w + 1 < nd ? d[w + 1] : 0, d2 = w + 2 < nd ? d[w + 2] : 0;
  uint64_t r = ((d1 << 32) | d0) >> sh;
  if (sh) r |= d2 << (64 - sh);
  return r & ((uint64_t(1) << count) - 1);
}

// Whether any bit below `pos` is set.
RK_HD bool any_below(const uint32_t* d, int nd, int pos) {
  if (pos <= 0) return false;
  const int full = pos >> 5;
  for (int i = 0; i < full && i < nd; ++i)
    if (d[i]) return true;
  const int r = pos & 31;
  return r && full < nd && (d[full] & ((uint32_t(1) << r) - 1));
}

// The bits of the value of output format o nearest to sum(l[i] * 2^(32 i + base)), ties to even;
// specials[3] (NaN, +inf, -inf counts) win: NaN if any NaN or both infinities, else the infinity.
// A sum beyond the format's range is an infinity. Exact zero is +0. `l` is clobbered.
RK_HD_COLD uint64_t round_limbs(int64_t* l, int n, int base, const int64_t* specials, OutFmt o) {
  const FloatSpec fs = spec(o);
  const uint64_t sign_bit = uint64_t(1) << (fs.bits - 1);
  const uint64_t exp_all = ((uint64_t(1) << (fs.bits - fs.p)) - 1) << (fs.p - 1);  // all-ones exponent
  if (specials[0] > 0 || (specials[1] > 0 && specials[2] > 0)) return exp_all | (uint64_t(1) << (fs.p - 2));
  if (specials[1] > 0) return exp_all;
  if (specials[2] > 0) return sign_bit | exp_all;
  // Only limbs k0..k1 (the lowest and highest nonzero) and one above, which takes the carries,
  // matter: round the sub-array l[k0 .. k1 + 1] with its own base (all limbs above are zero).
  int k0 = 0, k1 = n - 1;
  while (k0 < n && l[k0] == 0) ++k0;
  if (k0 == n) return 0;  // exact zero: +0
  while (l[k1] == 0) --k1;
  if (k1 + 1 < n) {
    l += k0;
    base += 32 * k0;
    n = k1 - k0 + 2;
  }
  normalize(l, n);
  const bool neg = l[n - 1] < 0;
  // Magnitude as 32-bit digits: n - 1 normalized limbs and the top limb's two halves.
  uint32_t d[kMaxLimbs + 1];
  const int nd = n + 1;
  for (int i = 0; i + 1 < n; ++i) d[i] = static_cast<uint32_t>(l[i]);
  uint64_t top = static_cast<uint64_t>(l[n - 1]);
  if (neg) {  // two's complement negation over all digits
    uint64_t c = 1;
    for (int i = 0; i + 1 < n; ++i) {
      const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(~d[i])) + c;
      d[i] = static_cast<uint32_t>(v);
      c = v >> 32;
    }
    top = ~top + c;
  }
  d[n - 1] = static_cast<uint32_t>(top);
  d[n] = static_cast<uint32_t>(top >> 32);
  int j = nd - 1;
  while (j >= 0 && d[j] == 0) --j;
  if (j < 0) return 0;  // exact zero: +0
#if defined(__CUDA_ARCH__)
  const int msb = 31 - __clz(d[j]);
#else
  const int msb = 31 - __builtin_clz(d[j]);
#endif
  const int P = 32 * j + msb;   // bit index of the leading one
  const int E = P + base;       // its exponent
  int lsb_exp = (E > fs.emin ? E : fs.emin) - fs.p + 1;
  const int r = lsb_exp - base;  // bits below the result's last place
  uint64_t q;
  if (r <= 0) {
    q = get_bits(d, nd, 0, P + 1) << (-r);  // P + 1 <= p here: nothing to round
  } else {
    q = get_bits(d, nd, r, P - r + 1);
    const bool round_bit = get_bits(d, nd, r - 1, 1) != 0;
    const bool sticky = any_below(d, nd, r - 1);
    if (!RK_FAULT_IS(ExactTruncate) && round_bit && (sticky || (q & 1))) ++q;  // planted: truncation
  }
  if (q >> fs.p) {  // rounding carried into a new leading bit
    q >>= 1;
    ++lsb_exp;
  }
  uint64_t out;
  if (q >> (fs.p - 1)) {
    const int biased = lsb_exp + fs.p - 1 + fs.emax;
    if (biased >= (1 << (fs.bits - fs.p)) - 1) {
      out = exp_all;  // beyond the largest finite: inf
    } else {
      out = (static_cast<uint64_t>(biased) << (fs.p - 1)) | (q & ((uint64_t(1) << (fs.p - 1)) - 1));
    }
  } else {
    out = q;  // subnormal
  }
  return neg ? (out | sign_bit) : out;
}

// Copies the limbs of format f (and specials) into the kExactWords shard words, normalized.
RK_HD_COLD void to_universal(const int64_t* l, Format f, const int64_t* specials, int64_t* w) {
  const int off = univ_offset(f);
  for (int i = 0; i < kUnivLimbs; ++i) {
    const int k = i - off;
    w[i] = (k >= 0 && k < f.limbs) ? l[k] : 0;
  }
  normalize(w, kUnivLimbs);  // a negative top limb of f becomes all-ones digits above it
  for (int k = 0; k < kSpecials; ++k) w[kUnivLimbs + k] = specials[k];
}

}  // namespace exact
}  // namespace rk
