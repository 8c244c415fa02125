// method="exact" on the CPU. A row is cut into chunks of kChunk values (fixed, whatever the
// thread count); each chunk runs the per-thread accumulator of engine/exact.h into its own limbs,
// and the chunks' limbs are added as integers. The result is exact, so the split cannot show.
#include "cpu/exact_cpu.h"
#include "cpu/dispatch_cpu.h"
#include "cpu/parallel_cpu.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace rk {
namespace {

using exact::Format;

struct CpuSink {
  int64_t* limbs;
  int64_t specials[exact::kSpecials] = {0, 0, 0};
  void add(int k, int64_t p) { limbs[k] += p; }
  void special(int k) { ++specials[k]; }
};

template <class In>
double to_double(In v) {
  if constexpr (std::is_same_v<In, c10::Half> || std::is_same_v<In, c10::BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Accumulator and fixed-point format per input type (engine/exact.h).
template <class In> struct ExactTraits;
template <> struct ExactTraits<c10::Half> { using Acc = exact::AccHalf; static constexpr Format kFmt = exact::kHalfFmt; };
template <> struct ExactTraits<c10::BFloat16> { using Acc = exact::AccSpill; static constexpr Format kFmt = exact::kSingleFmt; };
template <> struct ExactTraits<float> { using Acc = exact::Acc1; static constexpr Format kFmt = exact::kSingleFmt; };
template <> struct ExactTraits<double> { using Acc = exact::Acc2; static constexpr Format kFmt = exact::kDoubleFmt; };

constexpr int64_t kChunk = 1 << 16;

// Adds x[0..n) into limbs (fmt's) and specials.
template <class In>
void chunk_into(const In* x, int64_t n, int64_t* limbs, int64_t* specials) {
  using T = ExactTraits<In>;
  CpuSink sink{limbs};
  typename T::Acc acc;
  for (int64_t i = 0; i < n; ++i) acc.add(to_double(x[i]), T::kFmt, sink);
  acc.drain(T::kFmt, sink);
  for (int k = 0; k < exact::kSpecials; ++k) specials[k] += sink.specials[k];
}

void write_value(void* out, int64_t i, uint64_t bits, exact::OutFmt o) {
  switch (exact::spec(o).bits) {
    case 16: static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(bits); break;
    case 32: static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(bits); break;
    default: static_cast<uint64_t*>(out)[i] = bits; break;
  }
}

template <class In>
void rows_impl(const In* x, int64_t rows, int64_t len, void* out, exact::OutFmt o, bool words) {
  constexpr Format f = ExactTraits<In>::kFmt;
  const int64_t chunks = (len + kChunk - 1) / kChunk;
  auto finish = [&](int64_t r, int64_t* limbs, int64_t* specials) {
    if (words) {
      exact::to_universal(limbs, f, specials, static_cast<int64_t*>(out) + r * exact::kExactWords);
    } else {
      write_value(out, r, exact::round_limbs(limbs, f.limbs, f.base, specials, o), o);
    }
  };
  if (chunks == 1 || rows > 1) {  // parallel over rows, each row's chunks in one thread
    parallel_tasks(rows, len, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        int64_t limbs[exact::kMaxLimbs] = {};
        int64_t specials[exact::kSpecials] = {};
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t lo = c * kChunk, n = std::min(kChunk, len - lo);
          chunk_into(x + r * len + lo, n, limbs, specials);
          if ((c & 0x3fff) == 0x3fff) exact::normalize(limbs, f.limbs);  // headroom: 2^14 chunks of < 2^31 pieces
        }
        finish(r, limbs, specials);
      }
    });
    return;
  }
  // One long row: chunks in parallel, each into its own limbs, then added.
  std::vector<int64_t> part(static_cast<size_t>(chunks) * (f.limbs + exact::kSpecials), 0);
  parallel_tasks(chunks, kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t* p = part.data() + c * (f.limbs + exact::kSpecials);
      const int64_t lo = c * kChunk, n = std::min(kChunk, len - lo);
      chunk_into(x + lo, n, p, p + f.limbs);
      exact::normalize(p, f.limbs);
    }
  });
  int64_t limbs[exact::kMaxLimbs] = {};
  int64_t specials[exact::kSpecials] = {};
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t* p = part.data() + c * (f.limbs + exact::kSpecials);
    for (int k = 0; k < f.limbs; ++k) limbs[k] += p[k];
    for (int k = 0; k < exact::kSpecials; ++k) specials[k] += p[f.limbs + k];
    if ((c & 0x3fffffff) == 0x3fffffff) exact::normalize(limbs, f.limbs);
  }
  finish(0, limbs, specials);
}

}  // namespace

void cpu_exact_rows(const void* in, DType dt, int64_t rows, int64_t len, void* out, exact::OutFmt o, bool words) {
  dispatch_cpu(dt, [&](auto t) {
    using In = typename decltype(t)::T;
    if constexpr (std::is_integral_v<In>) {
      TORCH_CHECK(false, "reducekit: internal error: exact sum of a non-float dtype");
    } else {
      rows_impl(static_cast<const In*>(in), rows, len, out, o, words);
    }
  });
}

void cpu_exact_round(const int64_t* words, int64_t rows, void* out, exact::OutFmt o) {
  // A row's rounding costs about what a sum of 512 values does (159 ns against 0.31 ns a value, one
  // thread of this 2-core CI machine): a region starts above 64 rows.
  parallel_tasks(rows, 512, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t limbs[exact::kUnivLimbs];
      std::memcpy(limbs, words + r * exact::kExactWords, sizeof(limbs));
      write_value(out, r, exact::round_limbs(limbs, exact::kUnivLimbs, exact::kUnivBase, words + r * exact::kExactWords + exact::kUnivLimbs, o), o);
    }
  });
}

}  // namespace rk
