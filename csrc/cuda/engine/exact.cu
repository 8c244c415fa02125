// exact: correctly rounded sums (method="exact"), for whole tensors and for rows.
//
// Why it exists: `auto` is deterministic, but its last bits depend on its grid, so another GPU,
// the CPU or a sharded sum give other bits. The correctly rounded sum has one right answer.
// What it improves on: CUB's gpu_to_gpu mode (RFA) is reproducible but not exact and costs up
// to 2x a plain reduce; this kernel is exact and, on ordinary data, within 3-7% of `auto` from
// 2^28 values up, because such data rarely leaves the fast path (engine/exact.h). A fixed cost of
// some microseconds per call (its end: merges and the final rounding) remains, and data spread
// over the whole exponent range spills nearly every value: NOTES.md has the figures. Longer rows
// (exact_binned_min_values: 2^14 values of 2- and 4-byte dtypes, 2^22 of float64) take a path
// further down whose cost does not depend on the values: binned (float32, bfloat16), chunked
// (float64), counted runs (float16). This kernel keeps short rows and the forced configurations.
//  - single_pass's shape: 16-byte loads, UNROLL in flight, one wave of blocks, grid-stride,
//    the last block to arrive finishes (a per-stream counter for whole tensors, so one launch);
//  - per thread, float64 sums whose additions are checked exact (three adds, two compares); a
//    rare inexact one keeps its exact error in a second float64, and what that cannot take
//    exactly is spilled into the block's superaccumulator (int64 limbs in shared memory, three
//    atomics);
//  - threads, warps and blocks combine with the same exact additions; a block posts its float64
//    sum, and its limbs only if it spilled, so the last block usually reads one or two doubles per
//    block; then one normalize and one correct rounding.
#include <cuda/atomic>

#include <atomic>

#include "engine/exact.h"
#include "cuda/block/common.cuh"

namespace rk {
namespace {

using exact::Format;

// The streams' accumulator words (exact_stream_acc): zero-initialized when the module loads, and
// zeroed again by the last block of every launch that uses them.
constexpr int kExactAccSlots = 128;
__device__ long long g_exact_acc[kExactAccSlots * kExactAccWords];

// The lab's timeline (benchmarks/exact_lab, built with -DRK_EXACT_TRACE; compiled out otherwise):
// thread 0 of each of the first kTraceBlocks blocks records %globaltimer (ns, common to all SMs)
// and clock64 (its SM's cycles) at a kernel's numbered points, so that the lab can say where a
// row's time goes: the start, the values, the block's end, the row's end; and its SM (the last
// point's first word, plus one) and the units it walked (point 6's), so that the lab can say which
// blocks end their values late.
#ifdef RK_EXACT_TRACE
constexpr int kTraceBlocks = 4096, kTracePoints = 8;
__device__ unsigned long long g_exact_trace[kTraceBlocks * kTracePoints * 2];
#define RK_TRACE(k)                                                                                       \
  do {                                                                                                    \
    if (threadIdx.x == 0 && blockIdx.x < kTraceBlocks) {                                                  \
      unsigned long long g_;                                                                              \
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_));                                              \
      g_exact_trace[(blockIdx.x * kTracePoints + (k)) * 2] = g_;                                          \
      g_exact_trace[(blockIdx.x * kTracePoints + (k)) * 2 + 1] = static_cast<unsigned long long>(clock64()); \
      if ((k) == 0) {                                                                                     \
        unsigned sm_;                                                                                     \
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm_));                                                  \
        g_exact_trace[(blockIdx.x * kTracePoints + kTracePoints - 1) * 2] = sm_ + 1;                       \
      }                                                                                                   \
    }                                                                                                     \
  } while (0)
// The lab's timeline: a block's number of units (point 6's first word).
#define RK_TRACE_UNITS(n)                                                                                     \
  do {                                                                                                        \
    if (threadIdx.x == 0 && blockIdx.x < kTraceBlocks) g_exact_trace[(blockIdx.x * kTracePoints + 6) * 2] = (n); \
  } while (0)
#else
#define RK_TRACE_UNITS(n) \
  do {                    \
  } while (0)
#define RK_TRACE(k) \
  do {              \
  } while (0)
#endif

// float16 without a conversion instruction. A float16's exponent and significand fields, put in a
// float64's high word at the same positions from the top (sign at bit 63, the 5-bit exponent at
// the low end of the 11-bit field), make a float64 of exactly the value times 2^-1008: normal and
// subnormal alike, since both formats' subnormals continue their normal ranges. Three integer
// operations per value instead of a conversion to float32, then to float64. Every float16 is a
// multiple of 2^-24 below 2^16, so a float64 run of 2^13 of them (below 2^29) is exact, whatever
// they are: the cost per value does not depend on the data (the checked pairwise float32 sums
// this replaces took 1.8-2.4x `auto` on gradient-like and cancelling data, NOTES.md, issue 22).
// Exponent 31 (inf, NaN) would read as a finite float64: a vector holding one (one test per
// vector) has it counted in registers and replaced by zero, and goes on through the same additions.
// A full run goes into the checked float64 sum s (kUnits false: the checked path), or becomes an
// exact int64 count of 2^-24 units (kUnits true: the float16 path of long rows, whose end is
// integer adds, whatever the data).
template <bool kUnits>
struct HalfRunT {
  static constexpr int kFlush = 1 << 13;  // values per run: |run| < 2^13 * 2^16 = 2^29 (53 bits of 2^-24)
  double run = 0;                         // scaled by 2^-1008
  int count = 0;
  int nan = 0, pinf = 0, ninf = 0;  // specials met (counts in registers, not an indexed array)
  exact::AccSpill s;
  long long units = 0;              // kUnits: the flushed runs, in units of 2^-24
  static __device__ __forceinline__ double lo_half(unsigned w) {
    return __hiloint2double(static_cast<int>(((w << 16) & 0x80000000u) | ((w << 10) & 0x01fffc00u)), 0);
  }
  static __device__ __forceinline__ double hi_half(unsigned w) {
    const int sh = RK_FAULT_IS(ExactHalfField) ? 7 : 6;  // planted: the field one place too low
    return __hiloint2double(static_cast<int>((w & 0x80000000u) | ((w >> sh) & 0x01fffc00u)), 0);
  }
  // Nonzero if either half of w has exponent 31 (inf or NaN): 0x7c00 + 0x0400 carries into bit 15.
  static __device__ __forceinline__ unsigned special_bits(unsigned w) {
    return ((w & 0x7c007c00u) + 0x04000400u) & 0x80008000u;
  }
  template <class Sink>
  __device__ __forceinline__ void flush(Format f, Sink& sink) {
    if constexpr (kUnits) units += __double2ll_rn(run * 0x1p1008 * 0x1p24);  // exact: powers of two, below 2^53
    else s.add(run * 0x1p1008, f, sink);                                       // exact: a power of two
    run = 0;
    count = 0;
  }
  template <class Sink>
  __device__ __forceinline__ void counted(int n, Format f, Sink& sink) {
    count += n;
    if (count > kFlush - 8) flush(f, sink);
  }
  // Counts the special h (exponent 31) and returns true, or returns false.
  __device__ __forceinline__ bool special(unsigned h) {
    if ((h & 0x7c00u) != 0x7c00u) return false;
    const bool is_nan = (h & 0x3ffu) != 0, neg = (h & 0x8000u) != 0;
    nan += is_nan;
    pinf += !is_nan && !neg;
    ninf += !is_nan && neg;
    return true;
  }
  // One float16 (its bits in the low half of h).
  template <class Sink>
  __device__ __forceinline__ void add_bits(unsigned h, Format f, Sink& sink) {
    if (special(h)) return;
    run += lo_half(h);
    counted(1, f, sink);
  }
  // The 8 values of one 16-byte vector: a tree of exact additions, then one into the run.
  template <class Sink>
  __device__ __forceinline__ void add_vec(const uint4& v, Format f, Sink& sink) {
    unsigned w[4] = {v.x, v.y, v.z, v.w};
    if ((special_bits(w[0]) | special_bits(w[1]) | special_bits(w[2]) | special_bits(w[3])) && !RK_FAULT_IS(ExactHalfSpecial)) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {  // rare: counted, then read as zero
        if (special(w[k] & 0xffffu)) w[k] &= 0xffff0000u;
        if (special(w[k] >> 16)) w[k] &= 0x0000ffffu;
      }
    }
    double d[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) d[k] = lo_half(w[k]) + hi_half(w[k]);
    run += (d[0] + d[1]) + (d[2] + d[3]);
    counted(8, f, sink);
  }
  // The thread's last run into s, and its specials' counts to the sink.
  template <class Sink>
  __device__ __forceinline__ void finish(Format f, Sink& sink) {
    flush(f, sink);
    if (nan) sink.special(0, nan);  // exact::AccHalf's order: NaN, +inf, -inf
    if (pinf) sink.special(1, pinf);
    if (ninf) sink.special(2, ninf);
  }
};
using HalfRun = HalfRunT<false>;

template <class In> struct ExactTraits;
template <> struct ExactTraits<__half> { using Acc = HalfRun; using Red = exact::AccSpill; static constexpr Format kFmt = exact::kHalfFmt; };
template <> struct ExactTraits<__nv_bfloat16> { using Acc = exact::AccSpill; using Red = exact::AccSpill; static constexpr Format kFmt = exact::kSingleFmt; };
template <> struct ExactTraits<float> { using Acc = exact::Acc1; using Red = exact::Acc1; static constexpr Format kFmt = exact::kSingleFmt; };
template <> struct ExactTraits<double> { using Acc = exact::Acc2; using Red = exact::Acc2; static constexpr Format kFmt = exact::kDoubleFmt; };

// The block's superaccumulator in shared memory.
struct SmemSink {
  long long* limbs;
  int* specials;
  int* spilled;
  __device__ __forceinline__ void add(int k, int64_t p) {
    atomicAdd(reinterpret_cast<unsigned long long*>(limbs + k), static_cast<unsigned long long>(p));
    *spilled = 1;
  }
  __device__ __forceinline__ void special(int k, int n = 1) {
    atomicAdd(specials + k, n);
    *spilled = 1;
  }
};

// The accumulator that threads, warps and blocks combine (float16's run flushed into its sum).
__device__ __forceinline__ exact::AccSpill reduced(HalfRun& a, Format f, SmemSink& s) {
  a.finish(f, s);
  return a.s;
}
__device__ __forceinline__ exact::AccSpill reduced(exact::AccSpill& a, Format, SmemSink&) { return a; }
__device__ __forceinline__ exact::Acc1 reduced(exact::Acc1& a, Format, SmemSink&) { return a; }
__device__ __forceinline__ exact::Acc2 reduced(exact::Acc2& a, Format, SmemSink&) { return a; }

__device__ __forceinline__ exact::Acc1 shfl_down(const exact::Acc1& a, int off) {
  exact::Acc1 r;
  r.s = __shfl_down_sync(0xffffffffu, a.s, off);
  r.lo = __shfl_down_sync(0xffffffffu, a.lo, off);
  return r;
}
__device__ __forceinline__ exact::AccSpill shfl_down(const exact::AccSpill& a, int off) {
  exact::AccSpill r;
  r.s = __shfl_down_sync(0xffffffffu, a.s, off);
  return r;
}
__device__ __forceinline__ exact::Acc2 shfl_down(const exact::Acc2& a, int off) {
  exact::Acc2 r;
  r.hi = __shfl_down_sync(0xffffffffu, a.hi, off);
  r.lo = __shfl_down_sync(0xffffffffu, a.lo, off);
  return r;
}
__device__ __forceinline__ void store(double* p, const exact::Acc1& a) { p[0] = a.s; p[1] = a.lo; }
__device__ __forceinline__ void store(double* p, const exact::AccSpill& a) { p[0] = a.s; p[1] = 0; }
__device__ __forceinline__ void load(const double* p, exact::AccSpill& a) { a.s = __ldcg(p); }
__device__ __forceinline__ void store(double* p, const exact::Acc2& a) { p[0] = a.hi; p[1] = a.lo; }
__device__ __forceinline__ void load(const double* p, exact::Acc1& a) { a.s = __ldcg(p); a.lo = __ldcg(p + 1); }
__device__ __forceinline__ void load(const double* p, exact::Acc2& a) { a.hi = __ldcg(p); a.lo = __ldcg(p + 1); }

// Exact merge of `a` over the block (BLOCK a multiple of 32); valid in thread 0. Spills go to s.
template <class Red, int BLOCK>
__device__ __forceinline__ Red block_merge(Red a, Format f, SmemSink& s, Red* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // Only the receivers (lanes below `off`) merge: a merge can spill, and the tree's other lanes
  // would spill values whose sum is not used (counted twice).
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const Red o = shfl_down(a, off);
    if (lane < off) a.merge(o, f, s);
  }
  if (lane == 0) scratch[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < BLOCK / 32 ? scratch[lane] : Red{};
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const Red o = shfl_down(a, off);
      if (lane < off) a.merge(o, f, s);
    }
  }
  __syncthreads();
  return a;
}

// The exact float32 sum of 8 values, if every addition of the pairwise tree is exact (each checked
// on the float32 pipe): bfloat16 values close in magnitude almost always are, and then the float64
// accumulator takes one addition per 8 values. False (out unusable) otherwise, or for inf/NaN.
__device__ __forceinline__ bool sum8_exact(const float (&f)[8], float& out) {
  bool ok = true;
  float p[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    p[k] = f[2 * k] + f[2 * k + 1];
    ok &= (p[k] - f[2 * k] == f[2 * k + 1]) & (p[k] - f[2 * k + 1] == f[2 * k]);
  }
  const float q0 = p[0] + p[1], q1 = p[2] + p[3];
  ok &= (q0 - p[0] == p[1]) & (q0 - p[1] == p[0]) & (q1 - p[2] == p[3]) & (q1 - p[3] == p[2]);
  out = q0 + q1;
  ok &= (out - q0 == q1) & (out - q1 == q0);
  return ok;
}

// Adds the kVec values of one 16-byte vector.
template <class In, class Acc>
__device__ __forceinline__ void add_vec(Acc& acc, const uint4& v, Format fmt, SmemSink& s) {
  if constexpr (std::is_same_v<In, float>) {
    acc.add(static_cast<double>(__uint_as_float(v.x)), fmt, s);
    acc.add(static_cast<double>(__uint_as_float(v.y)), fmt, s);
    acc.add(static_cast<double>(__uint_as_float(v.z)), fmt, s);
    acc.add(static_cast<double>(__uint_as_float(v.w)), fmt, s);
  } else if constexpr (std::is_same_v<In, __half>) {
    acc.add_vec(v, fmt, s);
  } else if constexpr (std::is_same_v<In, __nv_bfloat16>) {
    float f[8];
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // a bfloat16 is the top half of a float32
      f[2 * k] = __uint_as_float(w[k] << 16);
      f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    }
    float sum;
    if (sum8_exact(f, sum)) {
      acc.add(static_cast<double>(sum), fmt, s, 8);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) acc.add(static_cast<double>(f[k]), fmt, s);
    }
  } else {
    acc.add(__longlong_as_double(static_cast<long long>((static_cast<uint64_t>(v.y) << 32) | v.x)), fmt, s);
    acc.add(__longlong_as_double(static_cast<long long>((static_cast<uint64_t>(v.w) << 32) | v.z)), fmt, s);
  }
}

template <class In>
__device__ __forceinline__ double scalar(const In* p) {
  return static_cast<double>(to_acc<float>(*p));
}
template <>
__device__ __forceinline__ double scalar<double>(const double* p) { return *p; }

// Adds one value outside the vectors (a row's head or tail).
template <class In, class Acc>
__device__ __forceinline__ void add_one(Acc& acc, const In* p, Format f, SmemSink& s) {
  if constexpr (std::is_same_v<In, __half>) acc.add_bits(__half_as_ushort(*p), f, s);
  else acc.add(scalar(p), f, s);
}

// The exact sum held by an accumulator as an unevaluated pair t + e with t = RN64(t + e).
__device__ __forceinline__ void as_pair(const exact::AccSpill& a, double& t, double& e) { t = a.s; e = 0; }
__device__ __forceinline__ void as_pair(const exact::Acc1& a, double& t, double& e) { exact::two_sum(a.s, a.lo, t, e); }
__device__ __forceinline__ void as_pair(const exact::Acc2& a, double& t, double& e) { exact::two_sum(a.hi, a.lo, t, e); }

// Writes the correctly rounded t + e (t = RN64(t + e), so |e| <= half an ulp of t) in format o
// and returns true; false (the limbs do it) for a 16-bit result with e != 0.
// float64: t itself. float32: RN32(t) is RN32(t + e) unless t is exactly halfway between two
// floats (no float32 midpoint can lie strictly between t and t + e: it would be a float64
// nearer to t + e than t); then e's sign decides.
template <class Red>
__device__ __forceinline__ bool round_pair(const Red& a, exact::OutFmt o, void* out, int64_t row) {
  double t, e;
  as_pair(a, t, e);
  if (t == 0) t = 0.0;  // an exact zero is +0
  if (o == exact::OutFmt::Double) {
    static_cast<double*>(out)[row] = t;
    return true;
  }
  if (o == exact::OutFmt::Half || o == exact::OutFmt::BFloat16) {
    if (e != 0) return false;  // only the one-double accumulators (16-bit inputs): e is 0 there
    unsigned short h;
    if (o == exact::OutFmt::Half) {
      asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(t));  // one rounding, to nearest even
    } else {
      asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(t));
    }
    static_cast<unsigned short*>(out)[row] = h;
    return true;
  }
  float r = __double2float_rn(t);
  if (!RK_FAULT_IS(ExactPairMidpoint) && e != 0 && static_cast<double>(r) != t) {  // planted: e ignored
    const float inf = __int_as_float(0x7f800000);
    const float nb = nextafterf(r, t > static_cast<double>(r) ? inf : -inf);  // the float on t's other side
    // Halfway between r and nb; past the largest float, between it and 2^128 (where RN32 overflows).
    const double mid = isinf(r) ? copysign(0x1.fffffep127 + 0x1p103, t) : (static_cast<double>(r) + static_cast<double>(nb)) * 0.5;
    if (mid == t && (e > 0) == (nb > r)) r = nb;
  }
  static_cast<float*>(out)[row] = r;
  return true;
}

struct ExactParams {
  int64_t rows, len;   // rows x len contiguous values
  int bpr;             // blocks per row
  double* part_d;      // [rows * bpr][2]: each block's float64 sum
  int* part_flag;      // [rows * bpr]: whether the block spilled
  long long* part_l;   // [rows * bpr][limbs + 3]: a spilled block's limbs and special counts
  unsigned* counters;  // [rows] (or the stream's counter when rows == 1): arrival tickets, reset by the last block
  unsigned* pools;     // value-independent rows: [rows] pool counters (RowUnits), reset by the last block
  void* out;           // rows values of format `o`, or rows x kExactWords int64 (words)
  exact::OutFmt o;
  bool words;
};

// Writes `bits`, a value of format o, as output r.
__device__ __forceinline__ void store_bits(void* out, exact::OutFmt o, int64_t r, uint64_t bits) {
  switch (exact::spec(o).bits) {
    case 16: static_cast<uint16_t*>(out)[r] = static_cast<uint16_t>(bits); break;
    case 32: static_cast<uint32_t*>(out)[r] = static_cast<uint32_t>(bits); break;
    default: static_cast<uint64_t*>(out)[r] = bits; break;
  }
}

// The end of a row whose exact sum is held as limbs of format f (clobbered) and special counts:
// exact_partial's words, or the one correct rounding into the output.
__device__ __forceinline__ void finish_limbs(int64_t* limbs, Format f, const int64_t* specials, const ExactParams& p, int64_t row) {
  if (p.words) {
    exact::to_universal(limbs, f, specials, static_cast<int64_t*>(p.out) + row * exact::kExactWords);
    return;
  }
  store_bits(p.out, p.o, row, exact::round_limbs(limbs, f.limbs, f.base, specials, p.o));
}

template <class In, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK) exact_kernel(const In* __restrict__ x, ExactParams p) {
  using T = ExactTraits<In>;
  using Red = typename T::Red;
  constexpr Format f = T::kFmt;
  constexpr int L = f.limbs;
  __shared__ long long s_limbs[L];
  __shared__ int s_specials[exact::kSpecials];
  __shared__ int s_spilled;
  __shared__ Red scratch[BLOCK / 32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  for (int i = tid; i < L; i += BLOCK) s_limbs[i] = 0;
  if (tid < exact::kSpecials) s_specials[tid] = 0;
  if (tid == 0) s_spilled = 0;
  __syncthreads();
  SmemSink sink{s_limbs, s_specials, &s_spilled};

  const int64_t row = blockIdx.x / p.bpr;
  const int part = static_cast<int>(blockIdx.x % p.bpr);
  grid_dependency_wait();
  const In* xr = x + row * p.len;
  const VecSplit<In> sp(xr, p.len);
  const uint4* __restrict__ body = reinterpret_cast<const uint4*>(xr + sp.head);
  constexpr int64_t kStep = static_cast<int64_t>(BLOCK) * UNROLL;
  const int64_t sweep = static_cast<int64_t>(p.bpr) * kStep;
  const int64_t full_end = sp.nvec / sweep * sweep;
  typename T::Acc acc;
  for (int64_t i = part * kStep + tid; i < full_end; i += sweep) {
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = __ldg(body + i + u * BLOCK);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) add_vec<In>(acc, r[u], f, sink);
  }
  for (int64_t i = full_end + part * kStep + tid; i < sp.nvec; i += sweep) {
    uint4 r[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      ok[u] = i + u * BLOCK < sp.nvec;
      if (ok[u]) r[u] = __ldg(body + i + u * BLOCK);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (ok[u]) add_vec<In>(acc, r[u], f, sink);
  }
  const int64_t gtid = static_cast<int64_t>(part) * BLOCK + tid;
  if (gtid < sp.head) add_one(acc, xr + gtid, f, sink);
  if (gtid < sp.tail) add_one(acc, xr + p.len - sp.tail + gtid, f, sink);
  allow_dependent_launch();

  Red a = block_merge<Red, BLOCK>(reduced(acc, f, sink), f, sink, scratch);
  if (p.bpr > 1) {
    const int64_t blk = blockIdx.x;
    __syncthreads();  // every spill of this block has landed in s_limbs
    const bool spilled = s_spilled != 0;
    if (tid == 0) {
      store(p.part_d + 2 * blk, a);
      p.part_flag[blk] = spilled;
    }
    if (spilled) {  // block-uniform
      long long* dst = p.part_l + blk * (L + exact::kSpecials);
      for (int i = tid; i < L; i += BLOCK) dst[i] = s_limbs[i];
      if (tid < exact::kSpecials) dst[L + tid] = s_specials[tid];
    }
    __syncthreads();  // these threads' limb words, before thread 0's ticket (arrive_last releases them)
    if (tid == 0) {
      is_last = arrive_last(p.counters + (p.rows == 1 ? 0 : row), static_cast<unsigned>(p.bpr));
    }
    __syncthreads();
    if (!is_last) return;  // thread 0's acquire and the barrier order the reads below
    // The last block of the row: start over from every block's posted sum and limbs.
    for (int i = tid; i < L; i += BLOCK) s_limbs[i] = 0;
    if (tid < exact::kSpecials) s_specials[tid] = 0;
    __syncthreads();
    a = Red{};
    const int64_t first = row * p.bpr;
    const int nparts = p.bpr - (RK_FAULT_IS(ExactDropBlock) ? 1 : 0);  // planted: the last block's sum is lost
    for (int b = tid; b < nparts; b += BLOCK) {
      Red o;
      load(p.part_d + 2 * (first + b), o);
      a.merge(o, f, sink);
      if (__ldcg(p.part_flag + first + b)) {
        s_spilled = 1;
        const long long* src = p.part_l + (first + b) * (L + exact::kSpecials);
        for (int i = 0; i < L; ++i)
          if (const long long v = __ldcg(src + i)) atomicAdd(reinterpret_cast<unsigned long long*>(s_limbs + i), static_cast<unsigned long long>(v));
        for (int k = 0; k < exact::kSpecials; ++k)
          if (const long long v = __ldcg(src + L + k)) atomicAdd(s_specials + k, static_cast<int>(v));
      }
    }
    a = block_merge<Red, BLOCK>(a, f, sink, scratch);
    if (tid == 0) p.counters[p.rows == 1 ? 0 : row] = 0;  // ready for the next launch
  }
  if (tid != 0) return;
  // Nothing was spilled anywhere (block_merge's barrier has passed): the exact sum is thread 0's
  // float64 pair, and one rounding of it is the answer, without the limbs.
  if (!p.words && !s_spilled && round_pair(a, p.o, p.out, row)) return;
  a.drain(f, sink);  // thread 0's own atomics: visible to it below
  auto* limbs = reinterpret_cast<int64_t*>(s_limbs);  // rounded in place: the block is done with them
  const int64_t sp3[exact::kSpecials] = {s_specials[0], s_specials[1], s_specials[2]};
  finish_limbs(limbs, f, sp3, p, row);
}

// The short rows' walk over a row's body of nvec 16-byte vectors by a warp (BLOCK = 32 lanes; lane
// `first`; `sweep` = 32 UNROLL vectors): full sweeps of UNROLL vectors a lane (first + s sweep +
// u BLOCK) go to on_group(r), each loaded one sweep ahead, so that loads stay in flight while the
// lane adds; the vectors of the last, partial sweep (the same layout) are loaded with the last
// full sweep and go to on_vec(v) one by one. first_sweep loads the first full sweep, or the
// partial one if there is none, into `next` (the short rows' warps issue it before the previous
// row's end); sweeps_from walks from there. The block kernels of long rows take units instead
// (RowUnits, below).
template <int BLOCK, int UNROLL>
__device__ __forceinline__ void load_partial(const uint4* __restrict__ body, int64_t nvec, int64_t j, uint4 (&next)[UNROLL]) {
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (j + u * BLOCK < nvec) next[u] = __ldg(body + j + u * BLOCK);
}
template <int BLOCK, int UNROLL>
__device__ __forceinline__ void first_sweep(const uint4* __restrict__ body, int64_t nvec, int64_t first, int64_t sweep, uint4 (&next)[UNROLL]) {
  const int64_t full_end = nvec / sweep * sweep;
  if (first < full_end) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) next[u] = __ldg(body + first + u * BLOCK);
  } else {
    load_partial<BLOCK, UNROLL>(body, nvec, full_end + first, next);
  }
}
template <int BLOCK, int UNROLL, class Group, class Vec>
__device__ __forceinline__ void sweeps_from(const uint4* __restrict__ body, int64_t nvec, int64_t first, int64_t sweep, uint4 (&next)[UNROLL],
                                            Group&& on_group, Vec&& on_vec) {
  const int64_t full_end = nvec / sweep * sweep;
  for (int64_t i = first; i < full_end; i += sweep) {
    uint4 r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = next[u];
    if (i + sweep < full_end) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) next[u] = __ldg(body + i + sweep + u * BLOCK);
    } else {
      load_partial<BLOCK, UNROLL>(body, nvec, full_end + first, next);
    }
    on_group(r);
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    if (full_end + first + u * BLOCK < nvec) on_vec(next[u]);
}

// The long rows' schedule (binned, chunked and float16 block kernels): a row's body of nvec 16-byte
// vectors in units of a block's sweep (kStep = BLOCK * UNROLL vectors, UNROLL a thread, BLOCK
// apart); the last unit may be partial, its missing vectors read as zeros (they add nothing to an
// exact sum, in bins, chunks or runs). Block `part` of the row's bpr takes units part + bpr s for
// s < fixed (as every block did), then, if the row has a pool, runs of kPoolRun consecutive
// units from the pool [bpr fixed, units), one atomic a run, until the pool is empty or the block
// would pass `cap` units (the value caps: plan_bpr gives every row bpr x cap >= units).
// Why the pool: with a static split the row waits on its slowest block, and blocks run at
// different speeds (SMs see different bandwidth): on the H200 the last block's values ended 1.5-3
// us after the median block's at 2^24 values and 4.6-13.5 us at 2^26 (NOTES.md, issue 22 part 6).
// The pool holds the last 1/kExactPoolShare of the units, so that the fast blocks take them.
// Each unit is loaded one unit ahead (loads stay in flight while the thread adds: these kernels run
// few warps an SM). Thread 0 asks for a run kPoolRun units before the block needs it, so that
// its atomic's latency hides behind the adds of the units between (a unit is only 0.2-0.5 us of
// adds: asking one unit ahead for one unit stalled every block at every pool unit), and every
// thread reads the run's first unit after one barrier a run.
// A pool run's units for units of UNROLL vectors a thread: kExactPoolRun units of kExactBinnedUnroll
// vectors (16 vectors a thread), and at least two units (tuning.h).
template <int UNROLL>
inline constexpr int kPoolRun = std::max(2, kExactPoolRun * kExactBinnedUnroll / UNROLL);

struct RowUnits {
  int64_t nvec;   // the row's 16-byte vectors
  int64_t units;  // ceil(nvec / kStep)
  int64_t fixed;  // static units of every block (all of them without a pool)
  int64_t cap;    // units a block may take
  int part, bpr;
  unsigned* pool;  // the row's pool counter (zero before the launch, zeroed by its last block), or nullptr
};

// The units a block of BLOCK x UNROLL may take under In's value caps (ExactBinCap plants none).
template <class In, int BLOCK, int UNROLL>
constexpr int64_t unit_cap();

template <class In, int BLOCK, int UNROLL>
__device__ __forceinline__ RowUnits row_units(const ExactParams& p, int64_t nvec, int part, unsigned* pool) {
  constexpr int64_t kStep = static_cast<int64_t>(BLOCK) * UNROLL;
  RowUnits ru;
  ru.nvec = nvec;
  ru.units = (nvec + kStep - 1) / kStep;
  ru.cap = RK_FAULT_IS(ExactBinCap) ? ru.units : unit_cap<In, BLOCK, UNROLL>();
  ru.part = part;
  ru.bpr = p.bpr;
  const int64_t fixed = ru.units * (kExactPoolShare - 1) / (static_cast<int64_t>(kExactPoolShare) * p.bpr);
  // A pool only where every block's static units cover the first run's request (it is made
  // kPoolRun units before the pool's first unit): shorter rows keep the static split.
  ru.pool = (pool && fixed >= kPoolRun<UNROLL>) ? pool : nullptr;
  ru.fixed = ru.pool ? fixed : (ru.units + p.bpr - 1) / p.bpr;
  return ru;
}

template <int BLOCK, int UNROLL>
struct UnitWalk {
  static constexpr int64_t kStep = static_cast<int64_t>(BLOCK) * UNROLL;
  static constexpr int kRun = kPoolRun<UNROLL>;
  RowUnits ru;
  const uint4* __restrict__ body;
  long long* s_grab;  // shared [2]: the runs thread 0 was given, by parity
  uint4 next[UNROLL];
  int64_t cur, nxt;
#ifdef RK_EXACT_TRACE
  int taken = 0;  // the lab's timeline: units this block walked
#endif
  __device__ __forceinline__ int64_t fixed_unit(int64_t s) const {
    const int64_t u = ru.part + static_cast<int64_t>(ru.bpr) * s;
    return s < ru.fixed && u < ru.units ? u : ru.units;  // ru.units: none
  }
  __device__ __forceinline__ void load(int64_t unit) {
    const uint4* __restrict__ q = body + unit * kStep + threadIdx.x;
    if ((unit + 1) * kStep <= ru.nvec) {  // a whole unit (all but the row's last)
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) next[u] = __ldg(q + u * BLOCK);
    } else {
      const int64_t v0 = unit * kStep + threadIdx.x;
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) next[u] = v0 + u * BLOCK < ru.nvec ? __ldg(q + u * BLOCK) : make_uint4(0u, 0u, 0u, 0u);
    }
  }
  // The first unit's loads (a kernel issues them before clearing its shared memory).
  __device__ __forceinline__ void begin() {
    cur = fixed_unit(0);
    nxt = fixed_unit(1);
    if (cur < ru.units) load(cur);
  }
  // on_group(r) for every unit of this block, its UNROLL vectors in r. Every thread of the block
  // calls it (the pool's barriers).
  template <class Group>
  __device__ __forceinline__ void run(Group&& on_group) {
    const int64_t none = ru.units, first_pool = static_cast<int64_t>(ru.bpr) * ru.fixed;
    bool dry = false;       // the pool gave `none` (block-uniform)
    unsigned asked = 0;     // thread 0: the pool's answer to its last request
    int64_t run_first = 0;  // the current run's first unit (block-uniform)
    for (int64_t s = 0; cur < none; ++s) {
      // Unit s of the pool's runs: s - fixed = j kRun + o. Run j is asked for at the start of unit
      // fixed + (j - 1) kRun and read at the end of unit fixed + j kRun - 2 (then the next unit's
      // loads go out for its first unit).
      const int64_t q = s - ru.fixed + kRun;  // >= 0 from the first request
      if (ru.pool && q >= 0 && q % kRun == 0 && threadIdx.x == 0)
        asked = !dry && ru.fixed + (q / kRun + 1) * kRun <= ru.cap ? atomicAdd(ru.pool, static_cast<unsigned>(kRun)) : 0xffffffffu;
      uint4 r[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) r[u] = next[u];
      if (nxt < none) load(nxt);
      on_group(r);
#ifdef RK_EXACT_TRACE
      ++taken;
#endif
      const int64_t s2 = s + 2, o2 = s2 - ru.fixed;
      int64_t after;
      if (!ru.pool || o2 < 0) {
        after = fixed_unit(s2);
      } else {
        if (o2 % kRun == 0) {  // a run begins: its first unit, after one barrier (two slots: run j + 2
                               // rewrites run j's after every thread has passed run j + 1's barrier)
          long long* const slot = s_grab + ((o2 / kRun) & 1);
          if (threadIdx.x == 0) {
            const int64_t u = first_pool + asked - (RK_FAULT_IS(ExactPoolUnit) ? 1 : 0);  // planted: one unit low
            *slot = asked == 0xffffffffu || u >= none ? none : u;
          }
          __syncthreads();
          run_first = *slot;
          dry = run_first >= none;
        }
        after = dry ? none : run_first + o2 % kRun;
        if (after >= none) after = none;
      }
      cur = nxt;
      nxt = after;
    }
  }
};

// Adds the int64 count `cnt` of units 2^e into the limbs of format f (shared memory, atomics);
// e - f.base >= 0.
__device__ __forceinline__ void count_to_limbs(long long cnt, int e, Format f, long long* limbs) {
  const int q = e - f.base;
  const int k = q >> 5, s = q & 31;
  const uint64_t lo = static_cast<uint64_t>(cnt) << s;
  const long long hi = s ? (cnt >> (64 - s)) : (cnt < 0 ? -1 : 0);  // cnt * 2^s = hi * 2^64 + lo
  auto* l = reinterpret_cast<unsigned long long*>(limbs);
  if (lo & 0xffffffffu) atomicAdd(l + k, lo & 0xffffffffu);
  if (lo >> 32) atomicAdd(l + k + 1, lo >> 32);
  if (hi) atomicAdd(l + k + 2, static_cast<unsigned long long>(hi));
}

// The binned and chunked paths' row accumulators: kAccCopies copies of a row's words, which
// kExactAccWords bounds.
constexpr int kAccCopies = 8;

// Adds a block's kWords int64 counts (s_acc) into its row's accumulators, which are zero before
// the launch (a memset, or the stream's words that the last block of the previous launch zeroed),
// by global atomics: integer adds, so the order does not matter, and no block merges the others.
// Block `part` takes copy part % kAccCopies: one L2 line per word took every block's atomic, which
// serialized them on data that fills every bin (about 5 us at 2^24 values, NOTES.md, issue 22).
// Returns true in the row's last block only, which then holds the row's counts in s_acc and has
// zeroed the accumulators and the row's counter for the next launch.
template <int kWords, int BLOCK>
__device__ __forceinline__ bool gather_row(const ExactParams& p, int64_t row, int part, long long* s_acc, bool* is_last) {
  static_assert(kWords * kAccCopies + 1 <= kExactAccWords, "the stream's accumulator holds a row's words and its pool");
  const int tid = threadIdx.x;
  long long* const racc = p.part_l + row * (kWords * kAccCopies);
  long long* const mine = racc + (part % kAccCopies) * kWords;
  const bool drop = RK_FAULT_IS(ExactDropBlock) && part == p.bpr - 1;  // planted: the last block's partial is lost
  for (int i = tid; i < kWords; i += BLOCK)
    if (s_acc[i] && !drop) atomicAdd(reinterpret_cast<unsigned long long*>(mine + i), static_cast<unsigned long long>(s_acc[i]));
  __syncthreads();  // these threads' words, before thread 0's ticket (arrive_last releases them)
  if (tid == 0) *is_last = arrive_last(p.counters + (p.rows == 1 ? 0 : row), static_cast<unsigned>(p.bpr));
  __syncthreads();
  if (!*is_last) return false;  // thread 0's acquire and the barrier order the reads below
  for (int i = tid; i < kWords; i += BLOCK) {
    long long v = 0;
#pragma unroll
    for (int c = 0; c < kAccCopies; ++c) {
      v += __ldcg(racc + c * kWords + i);
      if (!RK_FAULT_IS(ExactKeepWords)) racc[c * kWords + i] = 0;  // every block has added: zero for the next launch (planted: kept)
    }
    s_acc[i] = v;
  }
  __syncthreads();
  if (tid == 0) {  // ready for the next launch
    p.counters[p.rows == 1 ? 0 : row] = 0;
    if (p.pools) p.pools[row] = 0;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The binned path: float32 and bfloat16 rows at a cost that does not depend on the values.
//
// Why it exists: the checked float64 sum above is cheap while its additions stay exact, but data
// over many exponents (gradients, the whole range) makes nearly every addition inexact and every
// spill a contended shared-memory atomic: 2x to 63x `auto` (NOTES.md, issue 22). Here every value
// takes the same few instructions, whatever it is (the budget: NOTES.md, issue 22).
//  - Bins by exponent (the exponent-indexed bins of the issue's anchors). A value is read as
//    float32 bits (a bfloat16 is the top half of its float32); bin b takes the biased exponents
//    [W b, W b + W), whose values are multiples of the bin's unit and below 2^U units:
//      float32:  W = 8, 32 float64 bins, unit 2^(8b - 150), U = 31 (24-bit significands, 7 more
//                exponents): a bin adds 2^22 of them exactly, in any order;
//      bfloat16: W = 4, 64 float32 bins, each value scaled by 2^(127 - 4b) (unit 2^(4b - 134),
//                U = 11: 8-bit significands, 3 more exponents): a bin adds 2^13 of them exactly.
//  - Each thread owns a column of bins in shared memory ([bin][thread]: no bank conflict, no
//    atomic, no branch): per value one index, one shared load, add (float32: after a conversion;
//    bfloat16: a multiply-add by the scale) and store. The grid caps the values a thread (bfloat16)
//    and a block (float32) may take, so every sum stays exact (plan_bpr).
//  - The block's column sums become int64 counts of units, which every block adds into the row's
//    int64 accumulators with global atomics (gather_row: integers, so the order does not matter;
//    below 2^(U + 31) for rows under 2^31 values). The last block of the row reads the exact sum as
//    integers and rounds it once: from a float64 pair when the bins' sum fits one (round_pair),
//    else through the limbs.
//  - bfloat16 was first tried with float32 sub-bins of 8 exponents flushed every 512 values (half
//    its memory speed on every data), then with 16 float64 bins of 16 exponents (6 values per
//    SM-clock: 16 bytes of shared memory per value); its 64 float32 bins read and write 8 bytes
//    (NOTES.md, issue 22).
//  - inf and NaN (exponent 255) land in the last bin and make it non-finite, which then says which
//    special the sum is (no second read). Only exact_partial's words, which carry the specials'
//    counts, make a block that holds an inf or a NaN read its values again: the one cost that
//    depends on the data.
namespace binned {
template <class In> struct Bins;
// float32: float64 bins of 8 exponents. A bin's values are multiples of its unit below 2^31
// units, so a float64 bin adds 2^22 of them exactly; the block's column sums likewise.
template <> struct Bins<float> {
  using Bin = double;
  static constexpr int kWidth = 8, kBins = 32, kUnit0 = -150, kUnitBits = 31;
  static constexpr int64_t kMaxThreadValues = int64_t(1) << (53 - kUnitBits);
  static constexpr int64_t kMaxBlockValues = int64_t(1) << (53 - kUnitBits);
  static __device__ __forceinline__ int bin_of(uint32_t w) { return static_cast<int>(w >> 26); }
  static __device__ __forceinline__ Bin value(uint32_t w) { return static_cast<double>(__uint_as_float(w)); }
  // The column sum s of bin b (a float64 of the value) as a count of the bin's units.
  static __device__ __forceinline__ double count_scale(int b) {
    return __longlong_as_double(static_cast<long long>(1023 - kWidth * b - kUnit0) << 52);
  }
};
// bfloat16: float32 bins of 4 exponents, each value scaled by 2^(127 - 4b) into [1, 16) (one
// multiply by a power of two: exact, subnormals included, and inf/NaN stay what they are). Scaled
// values are multiples of 2^-7 below 2^11 such units, so a float32 bin adds 2^13 of them exactly,
// in any order: 4 bytes of shared memory read and 4 written per value, no conversion to float64
// (the float64 bins of 16 exponents this replaces read and wrote 16 bytes, the bound of shared
// memory at 6 values per SM-clock: NOTES.md, issue 22). A thread takes at most 2^13 values
// (plan_bpr), so its bins never need a flush.
template <> struct Bins<__nv_bfloat16> {
  using Bin = float;
  static constexpr int kWidth = 4, kBins = 64, kUnit0 = -134, kUnitBits = 11;
  static constexpr int64_t kMaxThreadValues = int64_t(1) << (24 - kUnitBits);
  static constexpr int64_t kMaxBlockValues = int64_t(1) << 40;  // column sums: 2^24 units a thread, in float64
  static __device__ __forceinline__ int bin_of(uint32_t w) { return static_cast<int>(w >> 25); }
  // x 2^(127 - 4b), the scale's bits (254 - 4b) << 23 read off w's bits 25-30 (b << 25) as one
  // logical operation: 252 - 4b is 252 ^ 4b (4b's bits lie within 252's), and 2 is bit 1.
  static __device__ __forceinline__ Bin value(uint32_t w) {
    uint32_t scale;  // (~w & 0x7e000000) | 0x01000000: one LOP3 (the compiler's own form took two)
    asm("lop3.b32 %0, %1, %2, %3, 0xae;" : "=r"(scale) : "r"(w), "r"(0x7e000000u), "r"(0x01000000u));
    return __uint_as_float(w) * __uint_as_float(scale);
  }
  static __device__ __forceinline__ double count_scale(int) { return 0x1p7; }  // units of 2^-7
};
template <class In>
struct Layout : Bins<In> {
  using B = Bins<In>;
  using Bin = typename B::Bin;
  static_assert(B::kWidth * B::kBins == 256, "the bins cover the 8-bit exponent");
  static constexpr int kWords = B::kBins + exact::kSpecials;  // unit counts, then NaN/+inf/-inf counts
  // A value's bin, from its float32 bits (the sign bit is masked off).
  static __device__ __forceinline__ int bin(uint32_t w) {
    const int b = B::bin_of(w) & (B::kBins - 1);
    return RK_FAULT_IS(ExactBinShift) ? (b + (w >> 16 & 1)) & (B::kBins - 1) : b;  // planted: odd low significands one bin up
  }
  // The byte offset of w's bin in the [kBins][BLOCK] array, for the thread whose column starts tb
  // bytes in (tb = tid * sizeof(Bin) < BLOCK * sizeof(Bin), a power of two): bin(w) * BLOCK *
  // sizeof(Bin) has no bit below it, so the sum is an OR, which the compiler merges with bin's mask
  // (bfloat16's low half: one LOP3, w & 0x7e00 | tb, and an address with no add).
  template <int BLOCK>
  static __device__ __forceinline__ uint32_t offset(uint32_t w, uint32_t tb) {
    static_assert((BLOCK & (BLOCK - 1)) == 0, "a power-of-two block");
    return static_cast<uint32_t>(bin(w)) * static_cast<uint32_t>(BLOCK * sizeof(Bin)) | tb;
  }
  // Adds the value of float32 bits w into its bin of the thread's column (base: the bins' array).
  template <int BLOCK>
  static __device__ __forceinline__ void add(unsigned char* base, uint32_t tb, uint32_t w) {
    Bin* const p = reinterpret_cast<Bin*>(base + offset<BLOCK>(w, tb));
    *p += B::value(w);
  }
};
constexpr int64_t kMaxRowValues = int64_t(1) << 31;  // x 2^31 units < 2^62: row sums exact in int64
constexpr Format kFmt = exact::kSingleFmt;

// Shared memory of a block: its threads' bins.
template <class In, int BLOCK>
constexpr size_t smem_bytes() { return size_t(Bins<In>::kBins) * BLOCK * sizeof(typename Bins<In>::Bin); }

// The sink of accumulators that never spill (float16's counted runs: a flush adds into an int64).
struct NoSink {
  template <class... A>
  __device__ __forceinline__ void add(A...) {}
  template <class... A>
  __device__ __forceinline__ void special(A...) {}
};
}  // namespace binned

// Carry-in masks of a lookahead over 32 S positions (bit `lane` of word s: position 32 s + lane):
// g marks the positions that generate a carry (into the next one), pr those that pass one on. The
// positions a carry enters are ((g << 1) + pr) ^ pr: the addition runs each generated carry
// through its run of passing positions and stops one past it.
template <int S>
__device__ __forceinline__ void carries_in(const uint32_t (&g)[S], const uint32_t (&pr)[S], uint32_t (&in)[S]) {
  uint64_t carry = 0;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const uint32_t g1 = (g[s] << 1) | (s > 0 ? g[s > 0 ? s - 1 : 0] >> 31 : 0u);
    const uint64_t sum = static_cast<uint64_t>(pr[s]) + g1 + carry;
    carry = sum >> 32;
    in[s] = static_cast<uint32_t>(sum) ^ pr[s];
  }
}

// The correctly rounded sum_k digits[k] * 2^(32 k + base) (k < n: int64 in shared memory; L >= n
// positions, the last of which holds only the sign once carried: 0 or -1), written by lane 0 of the
// calling warp as output `row`. No specials, no words (exact::finish_limbs does those).
// Why it exists: finish_limbs's one thread normalizes and rounds every limb in a serial loop with
// local arrays; data over many exponents took it at the end of every row: 1.2-2.6x gradient data's
// time on rows of 4096 values (NOTES.md, issue 22 part 5), and 4 us at the end of every float64
// row of the chunked path (68 limbs, part 6). Here a warp holds the digits, position k = 32 s +
// lane in slot s (S slots: L <= 32 S), and its cost does not depend on the values:
//  - two carry-save rounds (each digit keeps its low 32 bits and passes the rest up a position)
//    leave digits in [0, 2^32) and carries of -1, 0 or +1 into the next position;
//  - the +1 carries, then the -1 borrows, are resolved by lookahead over the warp's ballots
//    (carries_in), not by rounds that move a carry one position each (a borrow through the zero
//    digits above a negative sum's digits took one round per digit);
//  - a negative sum is negated with one ballot (its lowest nonzero digit), and only the top three
//    32-bit digits and a sticky bit for everything below are rounded (the rounding position lies
//    inside those digits for any output format): to odd at 53 bits and then once to nearest by a
//    conversion, or, for a float64 result, by exact::round_limbs on them.
template <int S>
__device__ __forceinline__ void warp_round_digits(const long long* digits, int n, int L, int base, const ExactParams& p, int64_t row) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr long long kLow = 0xffffffffll;
  const int lane = threadIdx.x & 31, top = L - 1;
  long long v[S];
#pragma unroll
  for (int s = 0; s < S; ++s) v[s] = lane + 32 * s < n ? digits[lane + 32 * s] : 0;
  // What each position receives from the one below: c[s] of lane - 1 (lane 0: lane 31 of slot s - 1).
  auto from_below = [&](const long long (&c)[S], long long (&r)[S]) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const long long up = __shfl_up_sync(kAll, c[s], 1);
      const long long wrap = __shfl_sync(kAll, c[s > 0 ? s - 1 : 0], 31);
      r[s] = lane > 0 ? up : (s > 0 ? wrap : 0);
    }
  };
  long long c[S], r[S];
#pragma unroll
  for (int round = 0; round < 2; ++round) {  // carry-save: below the top, digits keep 32 bits
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const bool low = lane + 32 * s < top;
      c[s] = low ? (v[s] >> 32) : 0;  // arithmetic: floor division
      if (low) v[s] &= kLow;
    }
    from_below(c, r);
    if (round == 0) {
#pragma unroll
      for (int s = 0; s < S; ++s) v[s] += r[s];
    }
  }
  // Now v is a digit in [0, 2^32) below the top, and r (-1, 0 or +1) what the position receives;
  // the top takes its share at once.
  uint32_t g[S], pr[S], in[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int k = lane + 32 * s;
    if (k == top) v[s] += r[s];
    const bool low = k < top;
    g[s] = __ballot_sync(kAll, low && r[s] == 1 && v[s] == kLow);
    pr[s] = __ballot_sync(kAll, low && v[s] + (r[s] == 1) == kLow);
  }
  carries_in<S>(g, pr, in);
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int k = lane + 32 * s;
    const long long ci = (in[s] >> lane) & 1;
    if (k < top) v[s] = (v[s] + (r[s] == 1) + ci) & kLow;
    else if (k == top) v[s] += ci;
    g[s] = __ballot_sync(kAll, k < top && r[s] == -1 && v[s] == 0);
    pr[s] = __ballot_sync(kAll, k < top && v[s] - (r[s] == -1) == 0);
  }
  carries_in<S>(g, pr, in);  // borrows
  long long tv = 0;          // the top: 0 or -1 for any real sum (the formats reach 64 bits above their largest value)
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int k = lane + 32 * s;
    const long long bi = (in[s] >> lane) & 1;
    if (k < top) v[s] = (v[s] - (r[s] == -1) - bi) & kLow;
    else if (k == top) v[s] -= bi;
    const long long t = __shfl_sync(kAll, v[s], top & 31);
    if ((top >> 5) == s) tv = t;
  }
  // The magnitude's 32-bit digits: a negative sum's is the two's complement, zero below the lowest
  // nonzero digit j, 2^32 - v at j, ~v above.
  const bool neg = tv < 0;
  uint32_t d[S], nz[S];
  int j = -1;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const unsigned m = __ballot_sync(kAll, lane + 32 * s < L && v[s] != 0);
    if (j < 0 && m) j = 32 * s + __ffs(static_cast<int>(m)) - 1;
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int k = lane + 32 * s;
    const uint32_t w = static_cast<uint32_t>(v[s]);
    d[s] = k < L ? w : 0u;
    if (neg) d[s] = (k >= L || k < j) ? 0u : k == j ? 0u - w : ~w;
    nz[s] = __ballot_sync(kAll, d[s] != 0);
  }
  int t = -1;  // the top nonzero digit
#pragma unroll
  for (int s = S - 1; s >= 0; --s)
    if (t < 0 && nz[s]) t = 32 * s + 31 - __clz(static_cast<int>(nz[s]));
  auto digit = [&](int q) {  // digit q (uniform), 0 below position 0
    uint32_t x = 0;
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const uint32_t y = __shfl_sync(kAll, d[s], q & 31);
      if (q >= 0 && (q >> 5) == s) x = y;
    }
    return x;
  };
  const uint32_t d0 = digit(t), e1 = digit(t - 1), e2 = digit(t - 2);
  if (lane != 0) return;
  uint64_t bits = 0;  // an exact zero is +0
  if (t >= 0) {
    // Digits t, t - 1, t - 2 (96 bits from the leading one's digit down: a float64's 53 bits and its
    // round bit lie inside them) and a sticky bit for every lower digit.
    bool sticky = false;
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int lim = t - 2 - 32 * s;  // the positions of slot s below t - 2
      if (lim > 0) sticky |= (lim >= 32 ? nz[s] : nz[s] & ((1u << lim) - 1)) != 0;
    }
    if (RK_FAULT_IS(ExactWarpSticky)) sticky = false;  // planted: lost
    if (p.o != exact::OutFmt::Double) {
      // Round to odd at 53 bits (the top 53 bits from the leading one, the last one set if any bit
      // below them is), exact as a float64, then one rounding to nearest into the output: correct for
      // any output of at most 51 bits (round to odd keeps the information of the discarded bits).
      const uint64_t hi = (static_cast<uint64_t>(d0) << 32) | e1;
      const int lz = __clzll(static_cast<long long>(hi));  // below 32: d0 is not zero
      const uint64_t topb = lz ? (hi << lz) | (static_cast<uint64_t>(e2) >> (32 - lz)) : hi;
      const bool rest = static_cast<uint32_t>(e2 << lz) != 0 || sticky;  // e2's bits not in topb (lz < 32)
      uint64_t m = topb >> 11;
      if ((topb & 0x7ff) || rest) m |= 1;
      double x = ldexp(static_cast<double>(m), base + 32 * t - 21 - lz);  // exact: a normal float64
      if (neg) x = -x;
      if (p.o == exact::OutFmt::Single) {
        bits = __float_as_uint(__double2float_rn(x));
      } else {
        unsigned short h;
        if (p.o == exact::OutFmt::Half) asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
        else asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(x));
        bits = h;
      }
    } else {
      // float64: the limbs' rounding on the three digits, with one limb below them that is 1 if
      // any lower digit is not zero (its weight is under the round bit: only the sticky bit).
      int64_t l[5] = {sticky ? 1 : 0, static_cast<int64_t>(e2), static_cast<int64_t>(e1), static_cast<int64_t>(d0), 0};
      const int64_t none[exact::kSpecials] = {0, 0, 0};
      bits = exact::round_limbs(l, 5, base + 32 * (t - 3), none, p.o);
      if (neg) bits |= uint64_t(1) << 63;
    }
  }
  store_bits(p.out, p.o, row, bits);
}

// The end of a row held as limbs of format f in shared memory (s_limbs: sums of count_to_limbs's
// pieces, each limb below 2^62 in magnitude), by a warp, lane 0 writing: the correctly rounded sum
// (warp_round_digits), or (words, specials) exact::finish_limbs on lane 0.
__device__ __forceinline__ void warp_round_limbs(long long* s_limbs, Format f, const int64_t (&sp3)[exact::kSpecials], const ExactParams& p,
                                                 int64_t row) {
  if (p.words || (sp3[0] | sp3[1] | sp3[2])) {  // every limb (words), or no value to round (a special)
    if ((threadIdx.x & 31) == 0) finish_limbs(reinterpret_cast<int64_t*>(s_limbs), f, sp3, p, row);
    return;
  }
  static_assert(exact::kSingleFmt.limbs <= 32 && exact::kHalfFmt.limbs <= 32, "one slot");
  warp_round_digits<1>(s_limbs, f.limbs, f.limbs, f.base, p, row);
}

// The end of a binned row (a warp, lane 0 writing): its exact sum is sum_b s_acc[b] * 2^(W b + kUnit0) or a
// special (s_acc: kWords counts; s_limbs: kSingleFmt's limbs, zero, in shared memory). Lane l adds
// bins l and l + 32 into the limbs, and the warp rounds them (warp_round_limbs): the same work
// whatever the data. (Until session 42 the counts were first merged as float64 pairs with Acc1's
// checked additions, rounded from the pair when none spilled; on data that spilled, the usual case
// beyond a few exponents, every failed merge called the out-of-line spill, and then the limbs were
// rounded by one thread: NOTES.md, issue 22 part 5.)
template <class In>
__device__ __forceinline__ void finish_binned(const long long* s_acc, long long* s_limbs, const ExactParams& p, int64_t row) {
  using Lay = binned::Layout<In>;
  constexpr int kBins = Lay::kBins;
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  // Lane l's count (bin l + 32 j) times its unit is three signed pieces, for limbs k, k + 1 and
  // k + 2 of kSingleFmt; k does not decrease with the lane, so the lanes of one limb are a run: a
  // segmented sum over each run (shuffles), and the run's last lane adds it into the limb, one
  // writer per limb and pass. (count_to_limbs's shared-memory atomics, 64-bit and on a few
  // words, cost more than the rest of a short row's end: NOTES.md, issue 22 part 5.)
#pragma unroll
  for (int j = 0; j < (kBins + 31) / 32; ++j) {
    const int b = lane + 32 * j;
    const long long cnt = b < kBins ? s_acc[b] : 0;
    const int q = Lay::kWidth * (b < kBins ? b : kBins - 1) + Lay::kUnit0 - binned::kFmt.base;
    const int k = q >> 5, sh = q & 31;
    const uint64_t lo = static_cast<uint64_t>(cnt) << sh;
    const long long piece[3] = {static_cast<long long>(lo & 0xffffffffu), static_cast<long long>(lo >> 32),
                                sh ? (cnt >> (64 - sh)) : (cnt < 0 ? -1 : 0)};  // cnt * 2^sh = piece[2] * 2^64 + lo
    const int kp = __shfl_up_sync(kAll, k, 1), kn = __shfl_down_sync(kAll, k, 1);
    const unsigned heads = __ballot_sync(kAll, lane == 0 || kp != k);
    const int start = 31 - __clz(static_cast<int>(heads & (0xffffffffu >> (31 - lane))));  // this run's first lane
    const bool last = lane == 31 || kn != k;
#pragma unroll
    for (int t = 0; t < 3; ++t) {
      long long v = piece[t];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const long long u = __shfl_up_sync(kAll, v, d);
        if (lane - d >= start) v += u;
      }
      if (last) s_limbs[k + t] += v;
      __syncwarp();
    }
  }
  const int64_t sp3[exact::kSpecials] = {s_acc[kBins], s_acc[kBins + 1], s_acc[kBins + 2]};
  warp_round_limbs(s_limbs, binned::kFmt, sp3, p, row);
}

template <class In, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK, 768 / BLOCK) binned_kernel(const In* __restrict__ x, ExactParams p) {
  using Lay = binned::Layout<In>;
  using Bin = typename Lay::Bin;
  constexpr int kBins = Lay::kBins, kWords = Lay::kWords, kLast = kBins - 1;
  constexpr Format kFmt = binned::kFmt;
  static_assert(BLOCK % kBins == 0 && kBins <= 64, "whole threads per bin at the end; two bins a lane at most");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ long long s_acc[kWords];  // the block's, then the row's, unit counts and special counts
  __shared__ long long s_limbs[kFmt.limbs];
  __shared__ long long s_grab[2];
  __shared__ bool is_last;
  RK_TRACE(0);
  const int tid = threadIdx.x, warp = tid >> 5;
  const int64_t row = blockIdx.x / p.bpr;
  const int part = static_cast<int>(blockIdx.x % p.bpr);
  grid_dependency_wait();
  const In* xr = x + row * p.len;
  const VecSplit<In> sp(xr, p.len);
  const int64_t gtid = static_cast<int64_t>(part) * BLOCK + tid;
  // The row's units; exact_partial's words keep the static split, which a block holding inf or NaN
  // walks again below. The first loads go out before the bins are cleared, so that clearing them
  // (kBins stores a thread) hides in the loads' latency (0.5 us before the first load without
  // programmatic dependent launch; under it, the clearing no longer overlaps the previous kernel's
  // end: NOTES.md, issue 22 part 6).
  UnitWalk<BLOCK, UNROLL> units;
  units.ru = row_units<In, BLOCK, UNROLL>(p, sp.nvec, part, p.pools && !p.words ? p.pools + row : nullptr);
  units.body = reinterpret_cast<const uint4*>(xr + sp.head);
  units.s_grab = s_grab;
  units.begin();

  Bin* const all_bins = reinterpret_cast<Bin*>(smem);  // [kBins][BLOCK]
  Bin* const bins = all_bins + tid;                     // this thread's column: bins[b * BLOCK]
#pragma unroll
  for (int b = 0; b < kBins; ++b) bins[b * BLOCK] = 0;
  for (int i = tid; i < kWords; i += BLOCK) s_acc[i] = 0;
  for (int i = tid; i < kFmt.limbs; i += BLOCK) s_limbs[i] = 0;

  // This thread's values, once each, as float32 bits: on_bits(w) for each (the first walk takes the
  // loads begin() issued).
  bool loaded = true;
  auto walk = [&](auto&& on_bits) {
    auto on_word = [&](uint32_t w) {
      if constexpr (std::is_same_v<In, float>) {
        on_bits(w);
      } else {  // two bfloat16, the lower first: each the top half of a float32
        on_bits(w << 16);
        on_bits(w & 0xffff0000u);
      }
    };
    auto on_vec = [&](const uint4& v) { on_word(v.x), on_word(v.y), on_word(v.z), on_word(v.w); };
    auto scalar_bits = [&](int64_t i) -> uint32_t {
      if constexpr (std::is_same_v<In, float>) return __float_as_uint(xr[i]);
      else return static_cast<uint32_t>(__bfloat16_as_ushort(xr[i])) << 16;
    };
    if (!loaded) units.begin();
    loaded = false;
    units.run([&](uint4 (&r)[UNROLL]) {
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) on_vec(r[u]);
    });
    if (gtid < sp.head) on_bits(scalar_bits(gtid));
    if (gtid < sp.tail) on_bits(scalar_bits(p.len - sp.tail + gtid));
  };

  RK_TRACE(1);
  const uint32_t tb = static_cast<uint32_t>(tid * sizeof(Bin));  // this thread's column, in bytes
  walk([&](uint32_t w) { Lay::template add<BLOCK>(smem, tb, w); });
  RK_TRACE(2);
  RK_TRACE_UNITS(units.taken);
  allow_dependent_launch();

  // inf or NaN made the last bin non-finite somewhere in the block. A sum: the bin alone says which
  // special the result is, since a bin of finite values cannot overflow (float32: at most 2^22
  // values below 2^128 in float64; bfloat16: at most 2^13 scaled values below 16 in float32):
  // +inf (only +inf met), -inf, or NaN (a NaN, or both infinities). A flag per thread is enough to
  // round (exact::round_limbs reads counts as present or not), at no second read. Partial words
  // (exact_partial) carry the specials' true counts, so there the block reads its values again, to
  // count them and to redo that bin without them.
  if (__syncthreads_or(!isfinite(bins[kLast * BLOCK])) && !RK_FAULT_IS(ExactNoRecount)) {  // planted: neither
    if (!p.words) {
      const Bin v = bins[kLast * BLOCK];
      if (!isfinite(v)) {
        atomicAdd(reinterpret_cast<unsigned long long*>(s_acc + kBins + (v != v ? 0 : v > 0 ? 1 : 2)), 1ull);
        bins[kLast * BLOCK] = 0;
      }
      __syncthreads();
    } else {
      bins[kLast * BLOCK] = 0;
      walk([&](uint32_t w) {
        const uint32_t e = (w >> 23) & 0xff;
        if (e == 0xff) {
          atomicAdd(reinterpret_cast<unsigned long long*>(s_acc + kBins + ((w & 0x7fffff) ? 0 : (w >> 31) ? 2 : 1)), 1ull);
        } else if (Lay::bin(w) == kLast) {
          bins[kLast * BLOCK] += Lay::value(w);
        }
      });
      __syncthreads();
    }
  }
  // The block's column sums as counts of units (exact: a thread's bins are, and the block's
  // float64 sums stay below 2^53 units). BLOCK / kBins threads per bin, each over kBins values,
  // every thread's loads in flight at once; a thread starts at its own offset in the column, so a
  // warp's loads fall in 32 different banks. (A warp per bin, one load and a shuffle tree at a
  // time, was a chain of dependent steps at the end of every block.)
  {
    constexpr int kPer = BLOCK / kBins, kSeg = kBins;
    const int b = tid / kPer, q = tid % kPer;
    const Bin* col = all_bins + b * BLOCK + q * kSeg;
    double s = 0;
#pragma unroll 16
    for (int k = 0; k < kSeg; ++k) s += static_cast<double>(col[(k + tid) & (kSeg - 1)]);
#pragma unroll
    for (int off = 1; off < kPer; off <<= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (q == 0) s_acc[b] = __double2ll_rn(s * Lay::count_scale(b));
  }
  __syncthreads();
  RK_TRACE(3);

  const bool last = p.bpr == 1 || gather_row<kWords, BLOCK>(p, row, part, s_acc, &is_last);
  RK_TRACE(4);
  if (!last) return;
  if (warp == 0) finish_binned<In>(s_acc, s_limbs, p, row);
  RK_TRACE(5);
}

// ---------------------------------------------------------------------------------------------
// The chunked path: float64 rows at a cost that does not depend on the values.
//
// Why it exists: a float64 value has 53 significant bits, more than a float64 bin can take twice,
// so the binned path above cannot serve it; the checked path spills nearly every value of wide or
// cancelling data (12-14x `auto` on the H200, NOTES.md, issue 22). Here each thread owns a small
// superaccumulator (Neal's xsum, its 32-bit chunks): int64 chunks in shared memory, chunk c of unit
// 2^(32c - 1075). A value's significand M (53 bits) shifted by its exponent's low 5 bits spans at
// most 84 bits: its low 32 go into chunk c (unsigned) and the rest, signed (at most 2^52 in
// magnitude), into chunk c + 1. Per value: about 24 instructions, no branch, and two shared
// read-modify-writes, whatever the value. A chunk below 2^33 takes 2047 such adds before it could
// overflow, so every thread carries its chunks one step (back below 2^33) every kCarryValues values;
// the block's column sums take the last carry. inf and NaN are counted in registers, one test per
// sweep of UNROLL vectors (exact counts: exact_partial's words need no second read). The blocks add their column
// sums into the row's int64 accumulators with global atomics, and the last block's first warp
// rounds them once (warp_round_digits; specials and words: the limbs and one thread).
namespace chunked {
constexpr int kChunks = 66;          // units 2^-1075 .. 2^1005: the largest value and 2^31 of them
constexpr int kCarryValues = 2040;   // values per thread between two carries: 2^33 + 2047 * 2^52 < 2^63 leaves room
                                     // for the tail's UNROLL vectors and the head and tail values after the last
constexpr int kWords = kChunks + exact::kSpecials;
constexpr int kSpecialVecs = 4;      // vectors (8 values) a test for inf/NaN covers
constexpr Format kFmt = exact::kDoubleFmt;
template <int BLOCK>
constexpr size_t smem_bytes() { return size_t(kChunks) * BLOCK * 8; }

constexpr int kUnitExp = -1075;    // chunk c's unit: 2^(32c + kUnitExp)

// The biased exponent field of the float64 whose high word is h (0x7ff: inf or NaN).
__device__ __forceinline__ uint32_t exponent_field(uint32_t h) { return (h >> 20) & 0x7ff; }

// Adds one finite float64 (its bits lo32, hi32, and e = exponent_field(hi32)) into the thread's
// chunks (col[c * BLOCK]), without a branch. Its significand mh:lo32 (the implicit bit set for a
// normal value) counts units of 2^(q - 1075) with q = max(e, 1), so a subnormal needs no other
// case. The signed significand sv (|sv| < 2^53) shifted by sh = q mod 32 is lo + hi * 2^32 with lo
// its low 32 bits (in [0, 2^32): unsigned, chunk c = q / 32) and hi = sv >> (32 - sh) (arithmetic,
// |hi| <= 2^52, chunk c + 1): the sign is applied once, to the 53-bit significand, with a borrow
// (sub.cc / subc: the sign word is its own high word). Chunk c's address is q's bits above the
// low five scaled to bytes. In the SASS of chunked_kernel<128, 16> (sm_90), a sweep's adds take 683
// instructions for 32 values (21 a value, the two shared loads and two stores included; the exponent
// fields and the sweep's inf/NaN test about 3 more), against 32 a value in session 56's version
// (units of 2^-1074: q = e - (e != 0) and the implicit bit by selects, the chunk's index multiplied,
// the sign extended twice), and 45 in the first version (a 64-bit shift and a branch on inf/NaN per
// value: 1.7-1.9x `auto`). The whole kernel is near its issue limit on the H200: it runs at 1.02-1.04x
// a plain read of the same bytes at 2^28 values at full clock, 1.11-1.14x while the card's power cap
// pulls the clock down (session 57, NOTES.md).
template <int BLOCK>
__device__ __forceinline__ void add_bits(long long* col, uint32_t lo32, uint32_t hi32, uint32_t e) {
  uint32_t b = hi32 & 0xfffffu;
  if (e != 0) b |= 0x100000u;
  const uint32_t q = e > 1u ? e : 1u;
  const uint32_t qc = RK_FAULT_IS(ExactChunkShift) ? ((q & ~31u) + ((lo32 & 1) << 5)) % (32u * (kChunks - 1)) : (q & ~31u);  // planted
  long long* const pc = reinterpret_cast<long long*>(reinterpret_cast<char*>(col) + qc * (BLOCK * 8 / 32));
  const uint32_t sh = q & 31;
  // With the sign s (0 or -1): +-v = (v ^ s) - s, as one 64-bit subtraction of s (its high word is s).
  const uint32_t s = static_cast<uint32_t>(static_cast<int>(hi32) >> 31);
  uint32_t a = lo32 ^ s;
  b ^= s;
  asm("sub.cc.u32 %0, %0, %2;\n\tsubc.u32 %1, %1, %2;" : "+r"(a), "+r"(b) : "r"(s));
  const long long sv = static_cast<long long>((static_cast<unsigned long long>(b) << 32) | a);
  pc[0] += static_cast<long long>(a << sh);
  pc[BLOCK] += sv >> (32 - sh);
}

// Counts the float64 (lo32, hi32, its exponent field e) if it is inf or NaN and then zeroes it (it
// adds nothing).
__device__ __forceinline__ void take_special(uint32_t& lo32, uint32_t& hi32, uint32_t& e, int& nan, int& pinf, int& ninf) {
  if (e != 0x7ff) return;
  const bool is_nan = ((hi32 & 0xfffffu) | lo32) != 0, neg = (hi32 >> 31) != 0;
  nan += is_nan;
  pinf += !is_nan && !neg;
  ninf += !is_nan && neg;
  lo32 = 0;
  hi32 = 0;
  e = 0;
}

// Carries the thread's chunks one step: chunk c keeps its low 32 bits plus the bits above 2^32 of
// chunk c - 1 (the top chunk keeps all of its own). The value is unchanged and every chunk is then
// below 2^33 in magnitude, room for another kCarryValues adds. Each chunk's new value depends only
// on two loads, not on a carry rippling up from chunk 0: the loads go out together (a rippling
// carry was a chain of 66 dependent shared-memory round trips at the end of every thread).
template <int BLOCK>
__device__ __forceinline__ void carry(long long* col) {
  long long up = 0;  // chunk c - 1's bits above 2^32 (arithmetic shift: floor(v / 2^32))
#pragma unroll 13
  for (int c = 0; c < kChunks - 1; ++c) {
    const long long v = col[c * BLOCK];
    col[c * BLOCK] = (v & 0xffffffffll) + up;
    up = v >> 32;
  }
  col[(kChunks - 1) * BLOCK] += up;
}

}  // namespace chunked

template <int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK) chunked_kernel(const double* __restrict__ x, ExactParams p) {
  using namespace chunked;
  static_assert(UNROLL % kSpecialVecs == 0, "whole tests a sweep");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ long long s_acc[kWords];  // the block's, then the row's, chunk sums and special counts
  __shared__ long long s_limbs[kFmt.limbs];
  __shared__ long long s_grab[2];
  __shared__ bool is_last;
  RK_TRACE(0);
  const int tid = threadIdx.x;
  const int64_t row = blockIdx.x / p.bpr;
  const int part = static_cast<int>(blockIdx.x % p.bpr);
  grid_dependency_wait();
  const double* xr = x + row * p.len;
  const VecSplit<double> sp(xr, p.len);
  const int64_t gtid = static_cast<int64_t>(part) * BLOCK + tid;
  UnitWalk<BLOCK, UNROLL> units;  // the row's units; the first loads go out before the chunks are cleared
  units.ru = row_units<double, BLOCK, UNROLL>(p, sp.nvec, part, p.pools ? p.pools + row : nullptr);
  units.body = reinterpret_cast<const uint4*>(xr + sp.head);
  units.s_grab = s_grab;
  units.begin();
  long long* const all = reinterpret_cast<long long*>(smem);  // [kChunks][BLOCK]
  long long* const col = all + tid;                             // this thread's chunks: col[c * BLOCK]
#pragma unroll 6
  for (int c = 0; c < kChunks; ++c) col[c * BLOCK] = 0;
  for (int i = tid; i < kWords; i += BLOCK) s_acc[i] = 0;
  for (int i = tid; i < kFmt.limbs; i += BLOCK) s_limbs[i] = 0;
  int nan = 0, pinf = 0, ninf = 0;  // inf and NaN met (exact counts: exact_partial's words carry them)
  // A sweep's UNROLL vectors: their exponent fields, one test for inf/NaN over all of them (their
  // largest exponent: one instruction a value), then two adds per vector. The rare branch tests each
  // kSpecialVecs vectors again and counts and zeroes the specials of those that have one: with a NaN
  // every 4096 values a warp takes it every fourth sweep of 16 vectors, and handling all 32 values
  // there cost 20% (lab, session 57); a test per kSpecialVecs outside the branch cost 5% on all data.
  auto on_group = [&](uint4 (&r)[UNROLL]) {
    uint32_t e[2 * UNROLL], top = 0;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      e[2 * u] = exponent_field(r[u].y);
      e[2 * u + 1] = exponent_field(r[u].w);
      top = max(top, max(e[2 * u], e[2 * u + 1]));
    }
    if (top == 0x7ff && !RK_FAULT_IS(ExactChunkSpecial)) {  // planted: the test skipped
#pragma unroll
      for (int g = 0; g < UNROLL; g += kSpecialVecs) {
        uint32_t t = 0;
#pragma unroll
        for (int k = 2 * g; k < 2 * (g + kSpecialVecs); ++k) t = max(t, e[k]);
        if (t == 0x7ff) {
#pragma unroll
          for (int u = g; u < g + kSpecialVecs; ++u) {
            take_special(r[u].x, r[u].y, e[2 * u], nan, pinf, ninf);
            take_special(r[u].z, r[u].w, e[2 * u + 1], nan, pinf, ninf);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      add_bits<BLOCK>(col, r[u].x, r[u].y, e[2 * u]);
      add_bits<BLOCK>(col, r[u].z, r[u].w, e[2 * u + 1]);
    }
  };
  auto on_scalar = [&](double v) {
    uint32_t lo32 = static_cast<uint32_t>(__double_as_longlong(v)), hi32 = static_cast<uint32_t>(__double_as_longlong(v) >> 32);
    uint32_t e = exponent_field(hi32);
    take_special(lo32, hi32, e, nan, pinf, ninf);
    add_bits<BLOCK>(col, lo32, hi32, e);
  };
  constexpr int kIterPerCarry = kCarryValues / (2 * UNROLL);
  int since = 0;
  RK_TRACE(1);
  units.run([&](uint4 (&r)[UNROLL]) {
    on_group(r);
    if (++since == kIterPerCarry && !RK_FAULT_IS(ExactNoCarry)) {  // planted: chunks never carried
      carry<BLOCK>(col);
      since = 0;
    }
  });
  if (gtid < sp.head) on_scalar(xr[gtid]);
  if (gtid < sp.tail) on_scalar(xr[p.len - sp.tail + gtid]);
  RK_TRACE(2);
  RK_TRACE_UNITS(units.taken);
  allow_dependent_launch();
  carry<BLOCK>(col);
  const int sp3[exact::kSpecials] = {nan, pinf, ninf};  // exact::AccHalf's order: NaN, +inf, -inf
#pragma unroll
  for (int k = 0; k < exact::kSpecials; ++k)
    if (sp3[k]) atomicAdd(reinterpret_cast<unsigned long long*>(s_acc + kChunks + k), static_cast<unsigned long long>(sp3[k]));
  __syncthreads();
  // The block's column sums (a thread per chunk, each starting at its own offset in the column, so
  // a warp's loads fall in different banks): chunks below 2^33 each, so BLOCK of them fit an int64.
  // (Folding the last carry into these sums, a low and a high part a chunk, was 0.4 us slower on
  // the H200: this loop runs on 66 threads, and its instructions a value doubled. NOTES.md, issue
  // 22 part 6.)
  for (int c = tid; c < kChunks; c += BLOCK) {
    const long long* colc = all + c * BLOCK;
    long long v = 0;
#pragma unroll 16
    for (int k = 0; k < BLOCK; ++k) v += colc[(k + c) & (BLOCK - 1)];
    s_acc[c] = v;
  }
  __syncthreads();
  RK_TRACE(3);

  const bool last = p.bpr == 1 || gather_row<kWords, BLOCK>(p, row, part, s_acc, &is_last);
  RK_TRACE(4);
  if (!last) return;
  // The row's exact sum is sum_c s_acc[c] * 2^(32c - 1074). A sum: a warp rounds the chunk sums as
  // digits (two zero positions above them take the carries and the sign: a row's sum is below
  // 2^1055, under the 2^1070 of position 67). Specials and exact_partial's words: into the limbs of
  // kFmt, then exact::finish_limbs on one thread.
  if (!p.words && !(s_acc[kChunks] | s_acc[kChunks + 1] | s_acc[kChunks + 2])) {
    static_assert(kChunks + 2 <= 96, "three slots a lane");
    if (tid < 32) warp_round_digits<3>(s_acc, kChunks, kChunks + 2, kUnitExp, p, row);
    RK_TRACE(5);
    return;
  }
  for (int c = tid; c < kChunks; c += BLOCK)
    if (s_acc[c]) count_to_limbs(s_acc[c], 32 * c + kUnitExp, kFmt, s_limbs);
  __syncthreads();
  if (tid != 0) return;
  auto* limbs = reinterpret_cast<int64_t*>(s_limbs);
  const int64_t spc[exact::kSpecials] = {s_acc[kChunks], s_acc[kChunks + 1], s_acc[kChunks + 2]};
  finish_limbs(limbs, kFmt, spc, p, row);
  RK_TRACE(5);
}

// ---------------------------------------------------------------------------------------------
// The float16 path of long rows: the checked path's HalfRun, whose runs end as integers.
//
// Why it exists: float16's float64 runs (HalfRun, above) cost the same whatever the values, but the
// checked path ends them in checked float64 sums merged across threads, warps and blocks, which
// spill into the limbs on gradient-like and cancelling data and read every block's partial in the
// last one: 1.2x `auto` at 2^26 and 1.4x at 2^24 (NOTES.md, issue 22). Every float16 is a multiple
// of 2^-24, so a run becomes an exact int64 count of 2^-24 units (below 2^53), a thread's and a
// block's counts are int64 sums (below 2^62 for at most kMaxBlockValues values a block), and the
// blocks add them, split into a low 32-bit word and the rest, into the row's words with global
// atomics, as the binned path does. The last block rounds once: from one float64 when the count is
// below 2^53 (exact), else through the limbs. inf and NaN are counted as HalfRun counts them.
namespace half {
constexpr int kWords = 2 + exact::kSpecials;                // the count's low 32 bits and the rest; NaN/+inf/-inf
constexpr int64_t kMaxBlockValues = int64_t(1) << 22;      // x 2^40 units a value: a block's count below 2^62
constexpr Format kFmt = exact::kHalfFmt;
}  // namespace half

// A block's units under In's value caps (RowUnits), counting one head and one tail value a thread:
//  - bfloat16 (and float32): a thread's bins take kMaxThreadValues values (UNROLL vectors a unit);
//  - float32: a block's column sums take kMaxBlockValues;
//  - float16: a block's count takes half::kMaxBlockValues;
//  - float64: none (the chunks carry).
template <class In, int BLOCK, int UNROLL>
constexpr int64_t unit_cap() {
  constexpr int64_t kPerVec = 16 / static_cast<int64_t>(sizeof(In)), kUnitValues = static_cast<int64_t>(BLOCK) * UNROLL * kPerVec;
  if constexpr (std::is_same_v<In, double>) {
    return int64_t(1) << 40;
  } else if constexpr (std::is_same_v<In, __half>) {
    return (half::kMaxBlockValues - 2 * BLOCK) / kUnitValues;
  } else {
    using Lay = binned::Layout<In>;
    constexpr int64_t thread = (Lay::kMaxThreadValues - 2) / (UNROLL * kPerVec), block = (Lay::kMaxBlockValues - 2 * BLOCK) / kUnitValues;
    static_assert(thread >= 1 && block >= 1, "a block takes a whole unit");
    return thread < block ? thread : block;
  }
}


// The end of a float16 row (one thread): its exact sum is (s_acc[1] * 2^32 + s_acc[0]) * 2^-24, or a
// special (s_limbs: kHalfFmt's limbs, zero, in shared memory).
__device__ __forceinline__ void finish_half(const long long* s_acc, long long* s_limbs, const ExactParams& p, int64_t row) {
  constexpr Format kFmt = half::kFmt;
  const int64_t spc[exact::kSpecials] = {s_acc[2], s_acc[3], s_acc[4]};
  const long long lo = s_acc[0], hi = s_acc[1];  // lo: a sum of 32-bit words, below 2^52; |hi| below 2^41
  if (!p.words && !(spc[0] | spc[1] | spc[2]) && hi > -(1ll << 20) && hi < (1ll << 20)) {
    exact::Acc1 a;  // |count| < 2^52 + 2^52: one float64, exact
    a.s = static_cast<double>((hi << 32) + lo) * 0x1p-24;
    if (round_pair(a, p.o, p.out, row)) return;
  }
  count_to_limbs(lo, -24, kFmt, s_limbs);
  count_to_limbs(hi, 8, kFmt, s_limbs);
  auto* limbs = reinterpret_cast<int64_t*>(s_limbs);
  finish_limbs(limbs, kFmt, spc, p, row);
}

template <int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK) half_kernel(const __half* __restrict__ x, ExactParams p) {
  using namespace half;
  __shared__ long long s_acc[kWords];  // the block's, then the row's, count words and special counts
  __shared__ long long s_limbs[kFmt.limbs];
  __shared__ long long s_warp[BLOCK / 32];
  __shared__ long long s_grab[2];
  __shared__ bool is_last;
  RK_TRACE(0);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < kWords; i += BLOCK) s_acc[i] = 0;
  for (int i = tid; i < kFmt.limbs; i += BLOCK) s_limbs[i] = 0;

  const int64_t row = blockIdx.x / p.bpr;
  const int part = static_cast<int>(blockIdx.x % p.bpr);
  grid_dependency_wait();
  const __half* xr = x + row * p.len;
  const VecSplit<__half> sp(xr, p.len);
  const int64_t gtid = static_cast<int64_t>(part) * BLOCK + tid;
  UnitWalk<BLOCK, UNROLL> units;  // the row's units
  units.ru = row_units<__half, BLOCK, UNROLL>(p, sp.nvec, part, p.pools ? p.pools + row : nullptr);
  units.body = reinterpret_cast<const uint4*>(xr + sp.head);
  units.s_grab = s_grab;
  units.begin();
  HalfRunT<true> acc;
  binned::NoSink none;  // a count flush has no sink
  RK_TRACE(1);
  units.run([&](uint4 (&r)[UNROLL]) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc.add_vec(r[u], kFmt, none);
  });
  if (gtid < sp.head) acc.add_bits(__half_as_ushort(xr[gtid]), kFmt, none);
  if (gtid < sp.tail) acc.add_bits(__half_as_ushort(xr[p.len - sp.tail + gtid]), kFmt, none);
  RK_TRACE(2);
  RK_TRACE_UNITS(units.taken);
  allow_dependent_launch();
  acc.flush(kFmt, none);

  // The block's count: int64 sums (no value is lost or rounded), then its two words.
  long long u = acc.units;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) u += __shfl_xor_sync(0xffffffffu, u, off);
  if (lane == 0) s_warp[warp] = u;
  const int sp3[exact::kSpecials] = {acc.nan, acc.pinf, acc.ninf};  // exact::AccHalf's order: NaN, +inf, -inf
#pragma unroll
  for (int k = 0; k < exact::kSpecials; ++k)
    if (sp3[k]) atomicAdd(reinterpret_cast<unsigned long long*>(s_acc + 2 + k), static_cast<unsigned long long>(sp3[k]));
  __syncthreads();
  if (tid == 0) {
    long long t = 0;
#pragma unroll
    for (int w = 0; w < BLOCK / 32; ++w) t += s_warp[w];
    s_acc[0] = t & 0xffffffffll;
    s_acc[1] = t >> 32;  // arithmetic: the count is s_acc[1] * 2^32 + s_acc[0]
  }
  __syncthreads();
  RK_TRACE(3);
  const bool last = p.bpr == 1 || gather_row<kWords, BLOCK>(p, row, part, s_acc, &is_last);
  RK_TRACE(4);
  if (!last) return;
  if (tid == 0) finish_half(s_acc, s_limbs, p, row);
  RK_TRACE(5);
}

// ---------------------------------------------------------------------------------------------
// Short rows: a warp per row, at a cost that does not depend on the values.
//
// Why it exists: rows below exact_binned_min_values (2^14 values) took the checked float64 sums,
// a block of 64-256 threads per row with a block merge and, on data over many exponents, spills
// into contended shared-memory atomics: rows of 4096 gradient-like values cost 2.7-2.8x `auto`
// (NOTES.md, issue 22). A block's end (the binned path's column sums over 128 threads, a row's
// 32 counts) would cost as much as the row itself. Here a warp takes a row: its lanes read 16-byte
// vectors with UNROLL in flight and add each value as the rows paths do (float32 and bfloat16 into
// the lane's bins, float16 into its counted runs); the warp's end is 32 lanes' bins summed (each
// lane a bin, starting at its own offset: no bank conflict), or 32 int64 counts, and the rows
// paths' own rounding (finish_binned, finish_half). No workspace, no block barrier, one launch.
// Sums only: exact_partial's words of bfloat16 and float32 need the specials' true counts, which
// the binned path recounts (a block's second read); they keep the block paths.
namespace warp_rows {
constexpr int kWarps = 8;   // rows a block holds at once; two blocks an SM (launch bounds: at three, 85 registers
                            // spilled 172 bytes; at two, only the saves around the cold calls remain)
constexpr int kUnroll = 4;  // 16-byte loads in flight a lane: 32 KiB an SM at two blocks
template <class In>
constexpr size_t smem_bytes() {
  if constexpr (std::is_same_v<In, __half>) return 0;
  else return binned::smem_bytes<In, kWarps * 32>();
}
}  // namespace warp_rows

template <class In>
__global__ void __launch_bounds__(warp_rows::kWarps * 32, 2) warp_rows_kernel(const In* __restrict__ x, ExactParams p) {
  constexpr int BLOCK = warp_rows::kWarps * 32, UNROLL = warp_rows::kUnroll;
  constexpr bool kHalf = std::is_same_v<In, __half>;
  using Lay = binned::Layout<std::conditional_t<kHalf, float, In>>;  // float16: unused
  using Bin = typename Lay::Bin;
  constexpr int kBins = Lay::kBins, kLast = kBins - 1;
  constexpr int kWords = kHalf ? half::kWords : Lay::kWords;
  constexpr Format kFmt = kHalf ? half::kFmt : binned::kFmt;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ long long s_acc[warp_rows::kWarps][kWords];
  __shared__ long long s_limbs[warp_rows::kWarps][kFmt.limbs];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  Bin* const all_bins = reinterpret_cast<Bin*>(smem);  // [kBins][BLOCK] (bins only)
  Bin* const bins = all_bins + threadIdx.x;
  constexpr int64_t kSweep = 32 * UNROLL;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * warp_rows::kWarps;
  // A row's first sweep of loads, issued before the previous row's end (its warp reductions and
  // rounding), so that the warp's loads stay in flight across rows.
  uint4 next[UNROLL];
  auto prefetch = [&](int64_t r) {
    if (r >= p.rows) return;
    const In* xr = x + r * p.len;
    const VecSplit<In> sp(xr, p.len);
    first_sweep<32, UNROLL>(reinterpret_cast<const uint4*>(xr + sp.head), sp.nvec, lane, kSweep, next);
  };
  grid_dependency_wait();
  prefetch(static_cast<int64_t>(blockIdx.x) * warp_rows::kWarps + warp);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * warp_rows::kWarps + warp; row < p.rows; row += stride) {  // warp-uniform
    const In* xr = x + row * p.len;
    const VecSplit<In> sp(xr, p.len);
    const uint4* __restrict__ body = reinterpret_cast<const uint4*>(xr + sp.head);
    for (int i = lane; i < kFmt.limbs; i += 32) s_limbs[warp][i] = 0;
    if constexpr (kHalf) {
      HalfRunT<true> acc;
      binned::NoSink none;
      sweeps_from<32, UNROLL>(
          body, sp.nvec, lane, kSweep, next,
          [&](uint4 (&r)[UNROLL]) {
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc.add_vec(r[u], kFmt, none);
          },
          [&](const uint4& v) { acc.add_vec(v, kFmt, none); });
      if (lane < sp.head) acc.add_bits(__half_as_ushort(xr[lane]), kFmt, none);
      if (lane < sp.tail) acc.add_bits(__half_as_ushort(xr[p.len - sp.tail + lane]), kFmt, none);
      prefetch(row + stride);
      acc.flush(kFmt, none);
      long long u = acc.units, sp3[exact::kSpecials] = {acc.nan, acc.pinf, acc.ninf};
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        u += __shfl_xor_sync(0xffffffffu, u, off);
#pragma unroll
        for (int k = 0; k < exact::kSpecials; ++k) sp3[k] += __shfl_xor_sync(0xffffffffu, sp3[k], off);
      }
      if (lane == 0) {
        s_acc[warp][0] = u & 0xffffffffll;
        s_acc[warp][1] = u >> 32;
#pragma unroll
        for (int k = 0; k < exact::kSpecials; ++k) s_acc[warp][2 + k] = sp3[k];
      }
      __syncwarp();
      if (lane == 0) finish_half(s_acc[warp], s_limbs[warp], p, row);
    } else {
#pragma unroll
      for (int b = 0; b < kBins; ++b) bins[b * BLOCK] = 0;
      auto on_bits = [&](uint32_t w) {
        const int b = Lay::bin(w);
        bins[b * BLOCK] += Lay::value(w);
      };
      auto on_vec = [&](const uint4& v) {
        const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if constexpr (std::is_same_v<In, float>) {
            on_bits(w[k]);
          } else {  // two bfloat16, the lower first: each the top half of a float32
            on_bits(w[k] << 16);
            on_bits(w[k] & 0xffff0000u);
          }
        }
      };
      auto scalar_bits = [&](int64_t i) -> uint32_t {
        if constexpr (std::is_same_v<In, float>) return __float_as_uint(xr[i]);
        else return static_cast<uint32_t>(__bfloat16_as_ushort(xr[i])) << 16;
      };
      sweeps_from<32, UNROLL>(
          body, sp.nvec, lane, kSweep, next,
          [&](uint4 (&r)[UNROLL]) {
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) on_vec(r[u]);
          },
          on_vec);
      if (lane < sp.head) on_bits(scalar_bits(lane));
      if (lane < sp.tail) on_bits(scalar_bits(p.len - sp.tail + lane));
      prefetch(row + stride);
      __syncwarp();
      // Lane l sums bins l (and l + 32) over the warp's 32 lanes, each from its own offset, in four
      // independent sums (exact in any order: below 2^53 units).
      const Bin* wb = all_bins + warp * 32;
      constexpr int kLanes = RK_FAULT_IS(ExactWarpRowsLane) ? 31 : 32;  // planted: one lane's bins left out
#pragma unroll
      for (int j = 0; j < (kBins + 31) / 32; ++j) {
        const int b = lane + 32 * j;
        double s4[4] = {0, 0, 0, 0};
#pragma unroll
        for (int k = 0; k < kLanes; ++k) s4[k & 3] += static_cast<double>(wb[b * BLOCK + ((k + lane) & 31)]);
        double s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
        if (b == kLast) {  // inf or NaN met: the bin's class says which special the sum is
          const bool fin = isfinite(s);
          s_acc[warp][kBins] = !fin && s != s;
          s_acc[warp][kBins + 1] = !fin && s > 0;
          s_acc[warp][kBins + 2] = !fin && s < 0;
          if (!fin) s = 0;
        }
        s_acc[warp][b] = __double2ll_rn(s * Lay::count_scale(b));
      }
      __syncwarp();
      finish_binned<In>(s_acc[warp], s_limbs[warp], p, row);
    }
    __syncwarp();  // the row's shared words are read before the next row writes them
  }
  allow_dependent_launch();
}

// ---------------------------------------------------------------------------------------------
// Columns: exact sums over the middle dim of a contiguous (outer, extent, inner) tensor, read in
// place (the reduced dims merged into one run of stride inner, the kept ones into outer and inner).
//
// Why it exists: method="exact" over dims used to copy the input with the reduced dims last
// (as_rows) and then sum the rows: dim 0 of a (16384, 4096) tensor cost 7.1x `auto` in float32 and
// 11.8x in bfloat16 (NOTES.md, issue 22). Here the rows paths' value-independent accumulators read
// the columns where they lie:
//  - A block takes a tile of tw adjacent columns and tr row-groups (tw * tr <= BLOCK threads): each
//    thread one column, every tr-th row of the block's run of the extent, kUnroll loads in flight and
//    the next kUnroll issued before the current ones are added. tw spans 128 bytes of a row for wide
//    tensors (32 float32 or 64 16-bit columns: the block's warps read whole lines), or the whole
//    inner extent when a block holds whole rows of a narrow one (then the block's loads are one
//    contiguous span and no lane idles).
//  - Per value, the rows paths' work: float32 and bfloat16 add into the thread's bins (binned::),
//    float16 into its counted float64 runs (HalfRunT<true>). The same caps bound the values a thread
//    and a block may take (plan_columns raises the splits of the extent to keep every sum exact).
//  - A block's end: each column's tr threads summed exactly into count words (the words of a row's
//    block), added into the output's words with global integer atomics (a memset zeroes them; up
//    to 8 copies spread the blocks of one output): nothing depends on the order blocks end in.
//  - A second launch (a warp per output) adds each output's copies and rounds once, with the rows
//    paths' own ends (finish_binned, finish_half).
// The result is the correctly rounded sum, so the CPU's bits.
namespace columns {
struct Params {
  int64_t outer = 1, extent = 1, inner = 1;
  int tw = 1, tr = 1;      // the block's tile: tw adjacent columns x tr row-groups
  int64_t tiles = 1;       // tiles per outer index: ceil(inner / tw)
  int splits = 1;          // blocks per tile, each over split_rows of the extent (the last fewer)
  int64_t split_rows = 1;
  int copies = 1;           // copies of the outputs' words: split s adds into copy s % copies
  long long* ws = nullptr;  // [copies][outer * inner][words], zero before the launch (a memset)
  bool pairs = false;       // bfloat16 columns read as 4-byte words by pairs of threads (walk_pairs), if x is aligned
};
constexpr int kBlock = 256;
// Loads in flight a thread: 32 bytes (the binned paths run 768 threads an SM, their bins' shared
// memory: 24 KiB in flight an SM, what the read ceiling needs at about 700 ns of latency).
template <class In>
inline constexpr int kUnroll = 32 / static_cast<int>(sizeof(In));
constexpr int kFinishWarps = 4;

template <class In> struct Raw { using T = unsigned short; };
template <> struct Raw<float> { using T = unsigned int; };

// The values of one column of this thread, rows r, r + tr, ... below r1, as raw bits to on(bits):
// kUnroll loads in flight, the next group issued before the current one is added.
template <class In, class F>
__device__ __forceinline__ void walk(const In* col, int64_t r, int64_t r1, int64_t tr, int64_t inner, F&& on) {
  using T = typename Raw<In>::T;
  constexpr int kUnroll = columns::kUnroll<In>;
  const T* q = reinterpret_cast<const T*>(col) + r * inner;
  const int64_t step = tr * inner;
  const int64_t group = static_cast<int64_t>(kUnroll) * tr;
  bool more = r + group - tr < r1;
  T next[kUnroll];
  if (more) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) next[u] = __ldg(q + u * step);
  }
  while (more) {
    T cur[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) cur[u] = next[u];
    r += group;
    q += kUnroll * step;
    more = r + group - tr < r1;
    if (more) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) next[u] = __ldg(q + u * step);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) on(cur[u]);
  }
  if (RK_FAULT_IS(ExactColumnsTail)) return;  // planted: the rows after the last whole group are lost
  for (; r < r1; r += tr, q += step) on(__ldg(q));
}

// walk's values for bfloat16 columns, read by pairs of threads as 4-byte words. Why: a 2-byte load a
// value left bfloat16's columns bound by loads and their addresses (ncu, H100: 18 instructions a
// value, half float32's bytes a second, NOTES.md session 52). The threads 2i and 2i + 1 of a warp
// own the adjacent columns c and c + 1 (c even) and the same rows r, r + tr, ... below r1; the
// thread of parity p loads the pair's word from the rows of even (p = 0) or odd (p = 1) position,
// and one shuffle gives each thread its partner's word: the even thread takes the low halves of
// both (column c), the odd thread the high halves (column c + 1). So each thread still sees every
// value of its own column once, and only those: the same values into the same bins. Needs the
// pair's words 4-byte aligned (x, and an even row length) and a warp's threads in one row group
// (a tile of a multiple of 32 columns): plan_columns and the kernel check both.
template <int kUnroll, class F>  // kUnroll: words in flight a thread
__device__ __forceinline__ void walk_pairs(const unsigned short* col, int64_t r, int64_t r1, int64_t tr, int64_t inner, F&& on) {
  const int p = static_cast<int>(threadIdx.x & 1);
  const unsigned mask = 3u << (threadIdx.x & 30);
  const int64_t n = r < r1 ? (r1 - r + tr - 1) / tr : 0;  // the pair's rows
  const int64_t full = n / 2;                             // positions where both threads have a row
  const int64_t step = tr * inner;                        // words between a thread's rows: 2 tr rows of inner / 2 words
  const uint32_t* q = reinterpret_cast<const uint32_t*>(col - p) + (r + p * tr) * (inner / 2);
  auto both = [&](uint32_t own, bool own_ok, bool other_ok) {
    const uint32_t other = __shfl_xor_sync(mask, own, 1);
    const uint32_t a = p ? other : own, b = p ? own : other;  // the words of the even and the odd row
    const bool swap = RK_FAULT_IS(ExactColumnsPairs) && p;  // planted: the even column's value of the even row
    if (other_ok || !p) on(static_cast<unsigned short>(p && !swap ? a >> 16 : a & 0xffffu));
    if (own_ok && (other_ok || p)) on(static_cast<unsigned short>(p ? b >> 16 : b & 0xffffu));
  };
  int64_t m = 0;
  if (full >= kUnroll) {
    uint32_t next[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) next[u] = __ldg(q + u * step);
    for (;;) {
      uint32_t cur[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) cur[u] = next[u];
      m += kUnroll;
      q += kUnroll * step;
      const bool more = m + kUnroll <= full;
      if (more) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) next[u] = __ldg(q + u * step);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) both(cur[u], true, true);
      if (!more) break;
    }
  }
  if (RK_FAULT_IS(ExactColumnsTail)) return;  // planted: the rows after the last whole group are lost
  for (; m < full; ++m, q += step) both(__ldg(q), true, true);
  if (n & 1) both(p ? 0u : __ldg(q), p == 0, p == 1);  // the last row, at an even position: the even thread's load
}

// This block's tile and run of the extent.
struct Tile {
  int split;
  int64_t ob, c0, r0, r1;
  int j, g;
  bool active;
  __device__ __forceinline__ explicit Tile(const Params& p) {
    split = static_cast<int>(blockIdx.x % p.splits);
    const int64_t tile = blockIdx.x / p.splits;
    ob = tile / p.tiles;
    c0 = (tile % p.tiles) * p.tw;
    r0 = static_cast<int64_t>(split) * p.split_rows;
    r1 = min(p.extent, r0 + p.split_rows);
    j = threadIdx.x % p.tw;
    g = threadIdx.x / p.tw;
    active = g < p.tr && c0 + j < p.inner;
  }
  // Adds v into word i of output (ob, c0 + jj), in this split's copy: an integer add, so the
  // order blocks end in does not matter.
  __device__ __forceinline__ void add(const Params& p, int jj, int kWords, int i, long long v) const {
    if (v == 0) return;
    long long* w = p.ws + ((split % p.copies) * p.outer * p.inner + ob * p.inner + c0 + jj) * kWords;
    atomicAdd(reinterpret_cast<unsigned long long*>(w + i), static_cast<unsigned long long>(v));
  }
};
}  // namespace columns

template <class In>
__global__ void __launch_bounds__(columns::kBlock, 768 / columns::kBlock) binned_columns_kernel(const In* __restrict__ x, columns::Params p) {
  constexpr int BLOCK = columns::kBlock;
  using Lay = binned::Layout<In>;
  using Bin = typename Lay::Bin;
  constexpr int kBins = Lay::kBins, kWords = Lay::kWords, kLast = kBins - 1;
  extern __shared__ __align__(16) unsigned char smem[];
  Bin* const all_bins = reinterpret_cast<Bin*>(smem);  // [kBins][BLOCK]
  Bin* const bins = all_bins + threadIdx.x;
#pragma unroll
  for (int b = 0; b < kBins; ++b) bins[b * BLOCK] = 0;
  const columns::Tile t(p);
  grid_dependency_wait();
  if (t.active) {
    auto on = [&](auto raw) {
      const uint32_t w = std::is_same_v<In, float> ? static_cast<uint32_t>(raw) : static_cast<uint32_t>(raw) << 16;
      const int b = Lay::bin(w);
      bins[b * BLOCK] += Lay::value(w);
    };
    const In* const col = x + t.ob * p.extent * p.inner + t.c0 + t.j;
    if constexpr (std::is_same_v<In, __nv_bfloat16>) {
      if (p.pairs && (reinterpret_cast<uintptr_t>(x) & 3) == 0) {
        columns::walk_pairs<16>(reinterpret_cast<const unsigned short*>(col), t.r0 + t.g, t.r1, p.tr, p.inner, on);  // 64 bytes in flight
      } else {
        columns::walk(col, t.r0 + t.g, t.r1, p.tr, p.inner, on);
      }
    } else {
      columns::walk(col, t.r0 + t.g, t.r1, p.tr, p.inner, on);
    }
  }
  allow_dependent_launch();
  __syncthreads();
  // Each column's tr threads, bin by bin, as counts of the bin's units (exact: the caps); the last
  // bin non-finite says which special the column met (+inf only, -inf only, or NaN: a NaN or both).
  // (Folding a column's counts into its limbs first, with shared atomics, cost more than the
  // atomics it saved: NOTES.md, issue 22 part 5.)
  for (int k = threadIdx.x; k < p.tw * kBins; k += BLOCK) {
    const int jj = k % p.tw, b = k / p.tw;
    if (t.c0 + jj >= p.inner) continue;
    const Bin* col = all_bins + b * BLOCK + jj;
    double s4[4] = {0, 0, 0, 0};  // exact in any order: below 2^53 units
    for (int gg = 0; gg < p.tr; ++gg) s4[gg & 3] += static_cast<double>(col[gg * p.tw]);
    double s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
    if (b == kLast && !isfinite(s)) {
      t.add(p, jj, kWords, kBins + (s != s ? 0 : s > 0 ? 1 : 2), 1);
      s = 0;
    }
    t.add(p, jj, kWords, b, __double2ll_rn(s * Lay::count_scale(b)));
  }
}

__global__ void __launch_bounds__(columns::kBlock) half_columns_kernel(const __half* __restrict__ x, columns::Params p) {
  constexpr int BLOCK = columns::kBlock;
  __shared__ long long s_units[BLOCK];
  __shared__ int s_special[exact::kSpecials][BLOCK];
  const columns::Tile t(p);
  HalfRunT<true> acc;
  binned::NoSink none;  // a count flush has no sink
  grid_dependency_wait();
  if (t.active) {
    columns::walk(x + t.ob * p.extent * p.inner + t.c0 + t.j, t.r0 + t.g, t.r1, p.tr, p.inner,
                  [&](unsigned short h) { acc.add_bits(h, half::kFmt, none); });
  }
  allow_dependent_launch();
  acc.flush(half::kFmt, none);
  s_units[threadIdx.x] = acc.units;
  s_special[0][threadIdx.x] = acc.nan;  // exact::AccHalf's order: NaN, +inf, -inf
  s_special[1][threadIdx.x] = acc.pinf;
  s_special[2][threadIdx.x] = acc.ninf;
  __syncthreads();
  for (int jj = threadIdx.x; jj < p.tw; jj += BLOCK) {
    if (t.c0 + jj >= p.inner) continue;
    long long u = 0, sp[exact::kSpecials] = {0, 0, 0};
    for (int gg = 0; gg < p.tr; ++gg) {
      u += s_units[gg * p.tw + jj];
#pragma unroll
      for (int k = 0; k < exact::kSpecials; ++k) sp[k] += s_special[k][gg * p.tw + jj];
    }
    t.add(p, jj, half::kWords, 0, u & 0xffffffffll);
    t.add(p, jj, half::kWords, 1, u >> 32);  // arithmetic: the count is word 1 * 2^32 + word 0
#pragma unroll
    for (int k = 0; k < exact::kSpecials; ++k) t.add(p, jj, half::kWords, 2 + k, sp[k]);
  }
}

template <class In>
constexpr int columns_words() {
  if constexpr (std::is_same_v<In, __half>) return half::kWords;
  else return binned::Layout<In>::kWords;
}

// A warp per output: its copies' words added as integers, then the rows paths' end.
template <class In>
__global__ void __launch_bounds__(columns::kFinishWarps * 32) columns_finish_kernel(const long long* __restrict__ ws, int copies, int64_t n,
                                                                                   ExactParams p) {
  constexpr int kWords = columns_words<In>();
  constexpr Format f = std::is_same_v<In, __half> ? half::kFmt : binned::kFmt;
  __shared__ long long s_acc[columns::kFinishWarps][kWords];
  __shared__ long long s_limbs[columns::kFinishWarps][f.limbs];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * columns::kFinishWarps + warp;
  grid_dependency_wait();
  if (o >= n) return;  // warp-uniform
  for (int i = lane; i < kWords; i += 32) {
    long long v = 0;
    for (int c = 0; c < copies; ++c) v += __ldcg(ws + (static_cast<int64_t>(c) * n + o) * kWords + i);
    s_acc[warp][i] = v;
  }
  for (int i = lane; i < f.limbs; i += 32) s_limbs[warp][i] = 0;
  __syncwarp();
  if constexpr (std::is_same_v<In, __half>) {
    if (lane == 0) finish_half(s_acc[warp], s_limbs[warp], p, o);
  } else {
    finish_binned<In>(s_acc[warp], s_limbs[warp], p, o);
  }
}

// Rounds rows of shard words (exact_round): one thread per row.
__global__ void exact_round_kernel(const int64_t* __restrict__ w, int64_t rows, void* out, exact::OutFmt o) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int64_t limbs[exact::kUnivLimbs];
  for (int i = 0; i < exact::kUnivLimbs; ++i) limbs[i] = w[r * exact::kExactWords + i];
  store_bits(out, o, r, exact::round_limbs(limbs, exact::kUnivLimbs, exact::kUnivBase, w + r * exact::kExactWords + exact::kUnivLimbs, o));
}

// Compiled (block, unroll) configurations; the first is the default.
#define RK_EXACT_CONFIGS(X) X(256, 4) X(512, 2) X(128, 4) X(256, 2) X(64, 4)

template <class In>
inline constexpr bool kBinnable =
    std::is_same_v<In, float> || std::is_same_v<In, __nv_bfloat16> || std::is_same_v<In, double> || std::is_same_v<In, __half>;

// The kernel of a path (false: the checked float64 sums, true: the bins) and its dynamic shared
// memory; the attribute is raised once where it is over the default 48 KiB.
template <class In, int BLOCK, int UNROLL, bool BINNED>
auto kernel_of() {
  if constexpr (BINNED && std::is_same_v<In, double>) return chunked_kernel<BLOCK, UNROLL>;
  else if constexpr (BINNED && std::is_same_v<In, __half>) return half_kernel<BLOCK, UNROLL>;
  else if constexpr (BINNED) return binned_kernel<In, BLOCK, UNROLL>;
  else return exact_kernel<In, BLOCK, UNROLL>;
}
template <class In, int BLOCK, int UNROLL, bool BINNED>
size_t smem_of() {
  if constexpr (BINNED && !std::is_same_v<In, __half>) {  // float16's path keeps registers only
    static const size_t v = [] {
      size_t b;
      if constexpr (std::is_same_v<In, double>) b = chunked::smem_bytes<BLOCK>();
      else b = binned::smem_bytes<In, BLOCK>();
      cudaFuncSetAttribute(kernel_of<In, BLOCK, UNROLL, BINNED>(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(b));
      return b;
    }();
    return v;
  } else {
    return 0;
  }
}

// The row accumulators' int64 words of the binned (chunked, float16) path.
template <class In>
constexpr int words_of() {
  if constexpr (std::is_same_v<In, double>) return chunked::kWords;
  else if constexpr (std::is_same_v<In, __half>) return half::kWords;
  else return binned::Layout<In>::kWords;
}

template <class In, int BLOCK, int UNROLL, bool BINNED>
int exact_blocks_per_sm() {
  static const int v = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel_of<In, BLOCK, UNROLL, BINNED>(), BLOCK, smem_of<In, BLOCK, UNROLL, BINNED>()) !=
            cudaSuccess || b < 1)
      b = 1;
    if constexpr (BINNED && std::is_same_v<In, __nv_bfloat16>) b = std::max(1, std::min(b, kExactBinnedBf16ThreadsPerSm / BLOCK));
    return b;
  }();
  return v;
}

template <class In, int BLOCK, int UNROLL, bool BINNED>
int plan_bpr(const ExactArgs& a) {
  const int64_t wave = static_cast<int64_t>(a.num_sms) * exact_blocks_per_sm<In, BLOCK, UNROLL, BINNED>();
  const int64_t vecs = ceil_div(a.len, 16 / static_cast<int64_t>(sizeof(In)));
  const int64_t needed = std::max<int64_t>(1, ceil_div(vecs, static_cast<int64_t>(BLOCK) * UNROLL));
  const int64_t per_row = std::max<int64_t>(1, wave / a.rows);
  int64_t bpr = a.tuning.exact_bpr > 0 ? a.tuning.exact_bpr : std::min<int64_t>({needed, per_row, 1 << 20});
  if constexpr (RK_FAULT_IS(ExactBinCap)) {  // planted: no cap
  } else if constexpr (BINNED) {  // exactness, not speed: the row's units within bpr blocks' caps (a pool's
                                   // runs may stop a block kPoolRun - 1 units short of its cap)
    constexpr int64_t cap = unit_cap<In, BLOCK, UNROLL>() - (kPoolRun<UNROLL> - 1);
    static_assert(cap >= 1, "a block takes a run");
    bpr = std::max<int64_t>(bpr, ceil_div(ceil_div(vecs, static_cast<int64_t>(BLOCK) * UNROLL), cap));
  }
  return static_cast<int>(bpr);
}

// A single row of the binned (or chunked) path adds into the stream's accumulator words and takes
// the stream's counter (both zero between launches: the last block zeroes them), so it needs no
// memset and is one launch, which programmatic dependent launch may overlap with the previous one.
inline bool stream_words(const ExactArgs& a) { return a.rows == 1 && a.acc && a.counter; }

template <class In, int BLOCK, int UNROLL, bool BINNED>
size_t workspace(const ExactArgs& a) {
  const int64_t bpr = plan_bpr<In, BLOCK, UNROLL, BINNED>(a);
  if (bpr == 1) return 0;
  if constexpr (BINNED) {
    if (stream_words(a)) return 0;
    return align256(a.rows * words_of<In>() * kAccCopies * 8 + a.rows * 8);  // the rows' accumulators, then their tickets and pools
  } else {
    const int64_t blocks = a.rows * bpr;
    const int L = ExactTraits<In>::kFmt.limbs;
    return align256(blocks * 16) + align256(blocks * 4) + align256(blocks * (L + exact::kSpecials) * 8) + align256(a.rows * 4);
  }
}

template <class In, int BLOCK, int UNROLL, bool BINNED>
cudaError_t run(const ExactArgs& a) {
  ExactParams p{};
  bool memset_used = false;
  p.rows = a.rows;
  p.len = a.len;
  p.bpr = plan_bpr<In, BLOCK, UNROLL, BINNED>(a);
  p.out = a.out;
  p.o = a.out_fmt;
  p.words = a.words;
  if (p.bpr > 1) {
    const int64_t blocks = a.rows * p.bpr;
    char* w = static_cast<char*>(a.workspace);
    if constexpr (BINNED) {  // the rows' accumulators and tickets: the stream's, or zeroed by one memset
      constexpr int kWords = words_of<In>();
      if (stream_words(a)) {  // zero already: no memset, and the launch below may overlap the previous one
        p.part_l = a.acc;
        p.counters = a.counter;
        p.pools = reinterpret_cast<unsigned*>(a.acc + kWords * kAccCopies);  // the word after the copies
      } else {
        if (!w) return cudaErrorInvalidValue;
        p.part_l = reinterpret_cast<long long*>(w);
        p.counters = reinterpret_cast<unsigned*>(w + a.rows * kWords * kAccCopies * 8);
        p.pools = p.counters + a.rows;
        if (const cudaError_t e = cudaMemsetAsync(w, 0, a.rows * (kWords * kAccCopies * 8 + 8), a.stream); e != cudaSuccess) return e;
        memset_used = true;
      }
    } else {
      if (!w) return cudaErrorInvalidValue;
      const int L = ExactTraits<In>::kFmt.limbs;
      p.part_d = reinterpret_cast<double*>(w);
      w += align256(blocks * 16);
      p.part_flag = reinterpret_cast<int*>(w);
      w += align256(blocks * 4);
      p.part_l = reinterpret_cast<long long*>(w);
      w += align256(blocks * (L + exact::kSpecials) * 8);
      if (a.rows == 1 && a.counter) {
        p.counters = a.counter;  // the stream's self-resetting counter: no memset, one launch
      } else {
        p.counters = reinterpret_cast<unsigned*>(w);
        if (const cudaError_t e = cudaMemsetAsync(p.counters, 0, a.rows * 4, a.stream); e != cudaSuccess) return e;
        memset_used = true;
      }
    }
  }
  const int64_t grid = a.rows * p.bpr;
  if (grid > 0x7fffffff) return cudaErrorInvalidConfiguration;
  return launch_maybe_pdl_smem(kernel_of<In, BLOCK, UNROLL, BINNED>(), dim3(static_cast<unsigned>(grid)), dim3(BLOCK),
                               smem_of<In, BLOCK, UNROLL, BINNED>(), a.stream, a.pdl && a.cc >= 90 && !memset_used,
                               static_cast<const In*>(a.in), p);
}

// f(block, unroll, In{}, binned) with compile-time constants: the value-independent path of the
// dtype (binned, chunked, float16's counts) for rows of exact_binned_min_values to kMaxRowValues
// values (its compiled configurations: RK_BINNED_CONFIGS, which a forced configuration takes at
// any length), the checked float64 sums for shorter and longer rows and the other forced
// configurations.
#define RK_BINNED_CONFIGS(X) X(128, 4) X(64, 4)
// The loads in flight of a binned configuration's unroll U for In: float64's chunked path takes
// kExactChunkedUnrollScale times as many 16-byte vectors (tuning.h).
template <class In, int U>
inline constexpr int kBinnedUnroll = std::is_same_v<In, double> ? U * kExactChunkedUnrollScale : U;
template <class F>
cudaError_t with_config(const ExactArgs& a, F&& f) {
  int block = a.tuning.exact_block, unroll = a.tuning.exact_unroll;
  const bool forced = block != 0;
  auto go = [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::In;
    if constexpr (kBinnable<In>) {
      if (a.len <= binned::kMaxRowValues && (forced || a.len >= exact_binned_min_values(sizeof(In)))) {
        const int bb = forced ? block : kExactBinnedBlock, bu = forced ? unroll : kExactBinnedUnroll;
#define RK_BINNED_CASE(B, U) \
        if (bb == B && bu == U) return f(std::integral_constant<int, B>{}, std::integral_constant<int, kBinnedUnroll<In, U>>{}, In{}, std::true_type{});
        RK_BINNED_CONFIGS(RK_BINNED_CASE)
#undef RK_BINNED_CASE
      }
    }
    if (!forced) {
      // Rows shorter than a block's worth of vectors take smaller blocks.
      block = 256;
      unroll = 4;
      if (a.rows > 1) {
        const int64_t vecs = ceil_div(a.len * dtype_bytes(a.dtype), 16);
        if (vecs <= 64 * 4) block = 64; else if (vecs <= 128 * 4) block = 128;
      }
    }
#define RK_EXACT_CASE(B, U) \
    if (block == B && unroll == U) return f(std::integral_constant<int, B>{}, std::integral_constant<int, U>{}, In{}, std::false_type{});
    RK_EXACT_CONFIGS(RK_EXACT_CASE)
#undef RK_EXACT_CASE
    return cudaErrorInvalidValue;
  };
  return dispatch_cuda(a.dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (std::is_floating_point_v<In> || std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>) {
      return go(Types<In, double>{});
    } else {
      return cudaErrorInvalidValue;  // floats only
    }
  });
}

// The columns paths' kernel of In and its dynamic shared memory (the bins; float16: none).
template <class In>
auto columns_kernel_of() {
  if constexpr (std::is_same_v<In, __half>) return half_columns_kernel;
  else return binned_columns_kernel<In>;
}
template <class In>
size_t columns_smem() {
  if constexpr (std::is_same_v<In, __half>) {
    return 0;
  } else {
    static const size_t v = [] {
      const size_t b = binned::smem_bytes<In, columns::kBlock>();
      cudaFuncSetAttribute(columns_kernel_of<In>(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(b));
      return b;
    }();
    return v;
  }
}
template <class In>
int columns_blocks_per_sm() {
  static const int v = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, columns_kernel_of<In>(), columns::kBlock, columns_smem<In>()) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  return v;
}

// The columns' tile and splits (everything but ws). Speed: one wave of blocks at most, a thread at
// least kMinThreadRows rows; exactness, over any forced split count: the rows paths' caps on the
// values a block's column (float32's bins, float16's counts) and a thread (bfloat16's bins) may take.
template <class In>
columns::Params plan_columns(const ExactColumnsArgs& a) {
  constexpr int B = columns::kBlock;
  constexpr int64_t kMinThreadRows = 32;
  columns::Params p;
  p.outer = a.outer;
  p.extent = a.extent;
  p.inner = a.inner;
  // Whole rows of a narrow tensor a block, or tiles of 128 bytes of a row (32 float32 columns, 64
  // 16-bit ones: a warp or two reading one row's line together): whichever idles fewer lanes.
  constexpr int64_t kTile = 128 / sizeof(In);
  p.tw = static_cast<int>(kTile);
  if (a.inner <= B) {
    const int64_t whole = a.inner * (B / a.inner);                         // busy threads of B
    const int64_t tiled = a.inner * B / (ceil_div(a.inner, kTile) * kTile);  // the same, with tiles
    if (whole >= tiled) p.tw = static_cast<int>(a.inner);
  }
  p.tr = B / p.tw;
  p.tiles = ceil_div(a.inner, static_cast<int64_t>(p.tw));
  const int64_t tiles_all = a.outer * p.tiles;
  // At most one wave: the blocks' work is equal, so a partial last wave would leave SMs idle, and
  // more splits cost more count words (kWords int64 an output and split, written and read again).
  const int64_t wave = static_cast<int64_t>(a.num_sms) * columns_blocks_per_sm<In>();
  int64_t splits = std::min(std::max<int64_t>(1, wave / tiles_all), std::max<int64_t>(1, a.extent / (p.tr * kMinThreadRows)));
  if (a.tuning.exact_bpr > 0) splits = a.tuning.exact_bpr;
  if constexpr (!RK_FAULT_IS(ExactBinCap)) {
    if constexpr (std::is_same_v<In, __half>) {
      splits = std::max(splits, ceil_div(a.extent, half::kMaxBlockValues));
    } else {
      using Lay = binned::Layout<In>;
      splits = std::max({splits, ceil_div(a.extent, Lay::kMaxBlockValues), ceil_div(a.extent, p.tr * Lay::kMaxThreadValues)});
    }
  }
  splits = std::max<int64_t>(1, std::min(splits, a.extent));
  p.split_rows = ceil_div(a.extent, splits);
  p.splits = static_cast<int>(ceil_div(a.extent, p.split_rows));  // no empty split
  // Up to 8 copies of the words, so that at most about 16 blocks' atomics meet on one word (the
  // rows paths' kAccCopies; one L2 line taking every block's atomic serialized them).
  p.copies = static_cast<int>(std::min<int64_t>(kAccCopies, ceil_div(p.splits, 16)));
  // bfloat16 columns in 4-byte words by pairs of threads (walk_pairs): even rows (aligned words, with
  // an aligned x, which the kernel checks) and every warp in one row group. Not float16: its
  // counted runs took 2.3-3x their time on that walk (NOTES.md, session 52).
  p.pairs = std::is_same_v<In, __nv_bfloat16> && a.inner % 2 == 0 && p.tw % 32 == 0;
  return p;
}

// The dtypes of the columns paths (the others copy the input into rows: torch/sum.cpp).
template <class In>
inline constexpr bool kColumnsPath = std::is_same_v<In, float> || std::is_same_v<In, __nv_bfloat16> || std::is_same_v<In, __half>;

// f(In{}) for a dtype of the columns paths; cudaErrorInvalidValue for any other.
template <class F>
cudaError_t with_columns_dtype(DType d, F&& f) {
  return dispatch_cuda(d, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (kColumnsPath<In>) return f(In{});
    else return cudaErrorInvalidValue;
  });
}

// Short rows a warp each (warp_rows_kernel): float32, bfloat16 and float16 rows of
// kExactWarpRowsMinValues to exact_binned_min_values values, two rows or more, under the rule (a
// forced configuration or blocks per row keeps the block paths), sums (and float16's words).
template <class In>
inline constexpr bool kWarpRowsPath = std::is_same_v<In, float> || std::is_same_v<In, __nv_bfloat16> || std::is_same_v<In, __half>;

template <class In>
int warp_rows_blocks_per_sm() {
  static const int v = [] {
    const size_t smem = warp_rows::smem_bytes<In>();
    if (smem > 48 * 1024) cudaFuncSetAttribute(warp_rows_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, warp_rows_kernel<In>, warp_rows::kWarps * 32, smem) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  return v;
}

bool warp_rows_taken(const ExactArgs& a) {
  if (a.tuning.exact_block != 0 || a.tuning.exact_bpr != 0 || a.rows < 2) return false;
  return dispatch_cuda(a.dtype, [&](auto t) -> cudaError_t {
           using In = typename decltype(t)::T;
           if constexpr (kWarpRowsPath<In>) {
             const int64_t shortest = a.tuning.exact_warp_min > 0 ? a.tuning.exact_warp_min : kExactWarpRowsMinValues;
             const bool ok = a.len >= shortest && a.len < exact_binned_min_values(sizeof(In)) &&
                             (!a.words || std::is_same_v<In, __half>);
             return ok ? cudaSuccess : cudaErrorInvalidValue;
           } else {
             return cudaErrorInvalidValue;
           }
         }) == cudaSuccess;
}

cudaError_t warp_rows_launch(const ExactArgs& a) {
  return dispatch_cuda(a.dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (kWarpRowsPath<In>) {
      ExactParams p{};
      p.rows = a.rows;
      p.len = a.len;
      p.bpr = 1;
      p.out = a.out;
      p.o = a.out_fmt;
      p.words = a.words;
      const int64_t wave = static_cast<int64_t>(a.num_sms) * warp_rows_blocks_per_sm<In>();
      const int64_t grid = std::min(ceil_div(a.rows, static_cast<int64_t>(warp_rows::kWarps)), wave);
      return launch_maybe_pdl_smem(warp_rows_kernel<In>, dim3(static_cast<unsigned>(grid)), dim3(warp_rows::kWarps * 32),
                                   warp_rows::smem_bytes<In>(), a.stream, a.pdl && a.cc >= 90, static_cast<const In*>(a.in), p);
    } else {
      return cudaErrorInvalidValue;
    }
  });
}

}  // namespace

bool exact_config_supported(int block, int unroll) {
#define RK_EXACT_OK(B, U) if (block == B && unroll == U) return true;
  RK_EXACT_CONFIGS(RK_EXACT_OK)
#undef RK_EXACT_OK
  return block == 0 && unroll == 0;
}

size_t exact_workspace(const ExactArgs& a) {
  if (warp_rows_taken(a)) return 0;
  size_t bytes = 0;
  with_config(a, [&](auto B, auto U, auto in, auto binned) {
    bytes = workspace<decltype(in), decltype(B)::value, decltype(U)::value, decltype(binned)::value>(a);
    return cudaSuccess;
  });
  return bytes;
}

cudaError_t exact_launch(const ExactArgs& a) {
  if (a.rows <= 0 || a.len <= 0) return cudaErrorInvalidValue;
  if (warp_rows_taken(a)) return warp_rows_launch(a);
  return with_config(a, [&](auto B, auto U, auto in, auto binned) {
    return run<decltype(in), decltype(B)::value, decltype(U)::value, decltype(binned)::value>(a);
  });
}

long long* exact_stream_acc(int device, int slot) {
  constexpr int kDevices = 64;
  if (device < 0 || device >= kDevices || slot < 0 || slot >= kExactAccSlots) return nullptr;
  static std::atomic<long long*> bases[kDevices];  // looked up once per device (the caller's device is current)
  long long* b = bases[device].load(std::memory_order_acquire);
  if (!b) {
    void* p = nullptr;
    if (cudaGetSymbolAddress(&p, g_exact_acc) != cudaSuccess) return nullptr;
    b = static_cast<long long*>(p);
    bases[device].store(b, std::memory_order_release);
  }
  return b + static_cast<int64_t>(slot) * kExactAccWords;
}

cudaError_t exact_round_launch(const int64_t* words, int64_t rows, void* out, exact::OutFmt o, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  const int threads = 128;
  exact_round_kernel<<<static_cast<unsigned>(ceil_div(rows, threads)), threads, 0, stream>>>(words, rows, out, o);
  return cudaGetLastError();
}

}  // namespace rk

namespace rk {

bool exact_columns_supported(DType d, int64_t extent) {
  return extent > 0 && extent <= binned::kMaxRowValues && with_columns_dtype(d, [](auto) { return cudaSuccess; }) == cudaSuccess;
}

size_t exact_columns_workspace(const ExactColumnsArgs& a) {
  size_t bytes = 0;
  with_columns_dtype(a.dtype, [&](auto in) {
    using In = decltype(in);
    const columns::Params p = plan_columns<In>(a);
    bytes = align256(static_cast<size_t>(p.copies) * a.outer * a.inner * columns_words<In>() * 8);
    return cudaSuccess;
  });
  return bytes;
}

cudaError_t exact_columns_launch(const ExactColumnsArgs& a) {
  if (a.outer <= 0 || a.inner <= 0 || !exact_columns_supported(a.dtype, a.extent) || !a.workspace) return cudaErrorInvalidValue;
  return with_columns_dtype(a.dtype, [&](auto in) -> cudaError_t {
    using In = decltype(in);
    columns::Params p = plan_columns<In>(a);
    p.ws = static_cast<long long*>(a.workspace);
    const int64_t grid = a.outer * p.tiles * p.splits;
    const int64_t n = a.outer * a.inner;
    const int64_t fgrid = ceil_div(n, static_cast<int64_t>(columns::kFinishWarps));
    if (grid > 0x7fffffff || fgrid > 0x7fffffff) return cudaErrorInvalidConfiguration;
    const bool pdl = a.pdl && a.cc >= 90;
    if (const cudaError_t e = cudaMemsetAsync(p.ws, 0, static_cast<size_t>(p.copies) * n * columns_words<In>() * 8, a.stream); e != cudaSuccess)
      return e;
    // After the memset node the first kernel has no kernel of ours to overlap: no PDL for it.
    if (const cudaError_t e = launch_maybe_pdl_smem(columns_kernel_of<In>(), dim3(static_cast<unsigned>(grid)), dim3(columns::kBlock),
                                                    columns_smem<In>(), a.stream, false, static_cast<const In*>(a.in), p);
        e != cudaSuccess)
      return e;
    ExactParams fp{};
    fp.rows = n;
    fp.out = a.out;
    fp.o = a.out_fmt;
    fp.words = false;
    return launch_maybe_pdl_smem(columns_finish_kernel<In>, dim3(static_cast<unsigned>(fgrid)), dim3(columns::kFinishWarps * 32), 0,
                                 a.stream, pdl, static_cast<const long long*>(p.ws), p.copies, n, fp);
  });
}

}  // namespace rk
