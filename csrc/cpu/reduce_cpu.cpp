// CPU loops of the reduction operators (engine/reduce_ops.h). A reduced run of N values is cut
// into lanes of G = 64 / sizeof(element) values, each reduced in index order (or by the
// operator's lane function), and the lane results are combined by a perfect pairwise tree built
// with a binary-counter stack: the CUDA kernels' order. Rows are spread over threads; a long row
// is cut into chunks of kChunkLanes lanes (aligned subtrees) reduced in parallel and combined in
// index order; columns are walked a tile of kTile columns at a time, a lane of rows at a time.
#include "cpu/reduce_cpu.h"
#include "cpu/dims_cpu.h"
#include "cpu/dispatch_cpu.h"
#include "cpu/parallel_cpu.h"
#include "engine/op_impl.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <limits>
#include <type_traits>
#include <vector>

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
constexpr int64_t kTile = 64;
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

// A float result that is NaN leaves as the one quiet NaN of Out, as dims_cpu's from_acc: which NaN
// an operation on two NaNs returns (sign and payload) follows the operand order the compiler
// picked, so without this a rebuild can move var's NaN from +NaN to -NaN (it did: the corpus's
// var of float32 data with inf and NaN, after an unrelated edit of this file's loops).
template <class Out, class R>
inline Out out_cvt(R v) {
  if constexpr (std::is_floating_point_v<R> && !std::is_integral_v<Out>) {
    if (v != v) return std::numeric_limits<Out>::quiet_NaN();
  }
  if constexpr (kHalfLike<Out>) {
    return Out(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);
  }
}

// Pairwise tree over a stream of subtrees of equal size: push(v) in index order, result() at the
// end (the missing right siblings are the identity).
template <class Op>
struct TreeStack {
  using Acc = typename Op::Acc;
  Acc st[kMaxLevels];
  int64_t count = 0;
  void push(Acc v) {
    int k = 0;
    for (; (count >> k) & 1; ++k) v = Op::combine(st[k], v);
    st[k] = v;
    ++count;
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

// The lane of cnt (<= G) values at x (stride s), whose first has index i0.
template <class In, class Op>
typename Op::Acc lane(const In* x, int64_t s, int cnt, int64_t i0, const red::Params& p) {
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

// Lanes [l0, l1) of a run of n values at x (stride s) into a stack. A non-batched operator on a
// contiguous run takes kJoint whole lanes at once, value k of each lane after value k - 1 of the
// same lane: the same order per lane, so the same bits, but kJoint independent chains, whose
// latencies the CPU overlaps (one lane's chain of G dependent additions or comparisons took about
// one latency per value: mean and amax rows at 0.3-0.5x torch, issue 21's CPU sweep).
template <class In, class Op>
void lanes(const In* x, int64_t s, int64_t n, int64_t l0, int64_t l1, TreeStack<Op>& st, const red::Params& p) {
  constexpr int64_t G = 64 / sizeof(In);
  int64_t l = l0;
  if constexpr (!Op::kBatched) {
    using T = typename Op::T;
    if (s == 1) {
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
  for (; l < l1; ++l) {
    const int64_t i0 = l * G;
    st.push(lane<In, Op>(x + i0 * s, s, static_cast<int>(std::min<int64_t>(G, n - i0)), i0, p));
  }
}

// The lanes of nc adjacent columns over the same cnt (<= G) rows at x (row stride ld; the first
// row has index i0) into acc[0, nc): the values of each column in index order, as lane(). Rows
// are read whole for the non-batched operators; a batched operator's lane function gets each
// column's values gathered by lane().
template <class In, class Op>
void column_lanes(const In* x, int64_t ld, int64_t nc, int cnt, int64_t i0, typename Op::Acc* acc, const red::Params& p) {
  using T = typename Op::T;
  if constexpr (Op::kBatched) {
    for (int64_t c = 0; c < nc; ++c) acc[c] = lane<In, Op>(x + c, ld, cnt, i0, p);
  } else {
    for (int64_t c = 0; c < nc; ++c) acc[c] = Op::identity();
    for (int k = 0; k < cnt; ++k) {
      const In* row = x + k * ld;
      for (int64_t c = 0; c < nc; ++c) acc[c] = Op::enter(acc[c], cvt<T>(row[c]), i0 + k, p);
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

template <class In, class Op, class Out0, class Out1 = Out0>
void run(const OpDesc& d) {
  using Acc = typename Op::Acc;
  constexpr int64_t G = 64 / sizeof(In);
  const In* x = static_cast<const In*>(d.in);
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
      for (int64_t r = r0; r < r1; ++r) {
        TreeStack<Op> st;
        lanes<In, Op>(x + r * R, 1, R, 0, lanes_n, st, d.params);
        store<Op, Out0, Out1>(d, r, st.result());
      }
    });
    return;
  }
  // Columns: batch b, columns [c0, c0 + kTile) per task, a lane (G rows) at a time across the
  // tile: each row of the lane is read as one contiguous piece of the tile, and every column's lane
  // sees its values in index order, as lane() would (issue 21: walking one column at a time, with
  // strided loads and a tree per column, made a (10, 775) amax 8x torch's time). Lane results go
  // into the columns' trees; a column of one lane needs no tree.
  const int64_t C = d.inner, tiles = (C + kTile - 1) / kTile;
  parallel_tasks(d.outer * tiles, R * std::min(C, kTile), [&](int64_t t0, int64_t t1) {
    std::vector<TreeStack<Op>> st(lanes_n > 1 ? kTile : 0);
    Acc acc[kTile];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / tiles, c0 = (t % tiles) * kTile, nc = std::min(kTile, C - c0);
      const In* xt = x + b * R * C + c0;
      for (int64_t c = 0; c < nc && lanes_n > 1; ++c) st[c] = TreeStack<Op>();
      for (int64_t l = 0; l < lanes_n; ++l) {
        const int64_t i0 = l * G;
        const int cnt = static_cast<int>(std::min<int64_t>(G, R - i0));
        column_lanes<In, Op>(xt + i0 * C, C, nc, cnt, i0, acc, d.params);
        for (int64_t c = 0; c < nc && lanes_n > 1; ++c) st[c].push(acc[c]);
      }
      for (int64_t c = 0; c < nc; ++c) store<Op, Out0, Out1>(d, b * C + c0 + c, lanes_n > 1 ? st[c].result() : acc[c]);
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
  if (d.op == red::OpKind::Sum) {
    // sum's steps run on the CPU's vector sum kernels (cpu/dims_cpu.cpp: chunks of 2^16 values in
    // 16 lanes, an order of their own that the CPU's results have always had), in the dtypes that
    // OpImpl<Sum> gives the CUDA kernels.
    const SumStepTypes t = sum_step_types(d);
    cpu_dims_step(d.kind, d.outer, d.extent, d.inner, d.in, t.in, t.acc, d.out0, t.out);
    return;
  }
  TORCH_CHECK(!d.in_partial && !d.out_partial, "reducekit: internal error: ", red::op_name(d.op), " in a plan of several steps on the CPU");
  dispatch_cpu(d.in_dtype, [&](auto t) {
    using In = typename decltype(t)::T;
    red::for_op(
        d.op, d.ord,
        [&](auto k, auto o) {
          constexpr red::OpKind K = decltype(k)::value;
          if constexpr (std::is_integral_v<In> && red::op_traits(K).float_only) {
            TORCH_CHECK(false, "reducekit: internal error: float-only op ", red::op_name(K), " on an integer input");
          } else if constexpr (K == red::OpKind::Sum) {
            TORCH_CHECK(false, "reducekit: internal error: sum reached the operators' loops");
          } else {
            run_impl<In, red::OpImpl<K, decltype(o)::value, In, kHalfLike<In>>>(d);
          }
        },
        [] { TORCH_CHECK(false, "reducekit: internal error: bad op id"); });
  });
}

}  // namespace rk
