// Each operator's struct (engine/reduce_ops.h) and output types per input type: the one table the
// CPU loops (cpu/reduce_cpu.cpp) and the CUDA kernels (cuda/engine/ops_*.cu) both instantiate, so
// the two backends cannot drift apart. Torch-free and CUDA-free: `In` is the backend's input type
// (its 16-bit floats c10::Half/__half, c10::BFloat16/__nv_bfloat16, flagged by kHalf).
//
//   OpImpl<K, O, In, kHalf>::Op          the operator struct
//   OpImpl<K, O, In, kHalf>::Out0, Out1  the output types (Out1: var_mean/std_mean's mean, aminmax's max)
//   OpImpl<K, O, In, kHalf>::kWide       the first output may be the `wide` type (dtype= widening)
//
// O (vector_norm's ord) matters to Norm only. for_op() calls a visitor with the OpImpl of
// an (op, ord) pair from a switch generated from core/op_table.h: an op without an OpImpl is a
// compile error.
#pragma once

#include <type_traits>

#include "core/op_table.h"
#include "engine/reduce_ops.h"

namespace rk {
namespace red {

// The types of one input type: values V (float32 for 16-bit floats, int64 for bool and integers,
// the input's otherwise), sums A (float32 for 16-bit floats, float64 otherwise), compares C
// (int32 for bool and integers up to 32 bits: exact, and a run of them fits registers; else V),
// and W, the type Welford's runs are reduced in.
//
// One set of types for both backends: the CPU instantiates exactly the structs the GPU does
// (Welford's runs in the value type W = V on both: a float64 run ran at a third of the read
// ceiling on the H200, NOTES.md issue 10). A static_assert in each backend (cpu/reduce_cpu.cpp,
// cuda/engine/family_moments.cu) pins the var family's and the extrema's structs to literal types,
// so a backend that grows types of its own fails to compile. What this costs the CPU's var against
// torch's float64 CPU var has a derived bound (tests/test_ops_machinery.py, _var_bound).
template <class In, bool kHalf>
struct TypesOf {
  using V = ValueOf<In, kHalf>;
  using A = SumAccOf<kHalf>;
  using C = std::conditional_t<std::is_integral_v<In> && sizeof(In) < 8, int, V>;
  using W = V;
};

template <class Op_, class Out0_, class Out1_ = Out0_, bool kWide_ = false>
struct Impl {
  using Op = Op_;
  using Out0 = Out0_;
  using Out1 = Out1_;
  static constexpr bool kWide = kWide_;
};

template <OpKind K, NormOrd O, class In, bool kHalf, class Ty = TypesOf<In, kHalf>>
struct OpImpl;

// sum: the value converted to the accumulator (a wrapping int64 for bool and integers, A for
// floats) and added; output int64 for bool and integers, else the input's dtype or (dtype=) the
// wide one.
template <class In, class Ty>
using SumAcc = std::conditional_t<std::is_integral_v<In>, int64_t, typename Ty::A>;
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Sum, O, In, H, Ty>
    : Impl<MapReduce<SumAcc<In, Ty>, SumAcc<In, Ty>, SumM>, std::conditional_t<std::is_integral_v<In>, int64_t, In>,
           std::conditional_t<std::is_integral_v<In>, int64_t, In>, !std::is_integral_v<In>> {};
// Sums of the value: accumulated as sum's, output the input's dtype or (dtype=) the wide one.
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Mean, O, In, H, Ty> : Impl<MapReduce<typename Ty::A, typename Ty::A, SumM, MapId, FinMean>, In, In, true> {};
// nansum: sum's accumulator, NaN entered as 0.
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::NanSum, O, In, H, Ty> : Impl<MapReduce<typename Ty::A, typename Ty::A, SumM, MapNanZero>, In, In, true> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::NanMean, O, In, H, Ty> : Impl<NanMean<typename Ty::A, typename Ty::A>, In, In, true> {};
// Products multiply in the value type (integers wrap in int64, as torch's).
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Prod, O, In, H, Ty>
    : Impl<MapReduce<typename Ty::V, typename Ty::V, ProdM>, std::conditional_t<std::is_integral_v<In>, int64_t, In>,
           std::conditional_t<std::is_integral_v<In>, int64_t, In>, !std::is_integral_v<In>> {};
// Extremes compare in C.
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Amax, O, In, H, Ty> : Impl<MapReduce<typename Ty::C, typename Ty::C, MaxM>, In> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Amin, O, In, H, Ty> : Impl<MapReduce<typename Ty::C, typename Ty::C, MinM>, In> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::AMinMax, O, In, H, Ty> : Impl<MinMax<typename Ty::C>, In> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::ArgMax, O, In, H, Ty> : Impl<ArgExt<typename Ty::C, true>, int64_t> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::ArgMin, O, In, H, Ty> : Impl<ArgExt<typename Ty::C, false>, int64_t> {};
// Truth and counts.
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::All, O, In, H, Ty> : Impl<MapReduce<typename Ty::V, int, AndM, MapNonzero>, bool> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Any, O, In, H, Ty> : Impl<MapReduce<typename Ty::V, int, OrM, MapNonzero>, bool> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::CountNonzero, O, In, H, Ty> : Impl<MapReduce<typename Ty::V, int64_t, SumM, MapNonzero>, int64_t> {};
// The var family: Welford's runs in W, its state and merges in float64 (WelfordAcc).
template <class In, class Ty>
using WelfordImpl = Impl<Welford<typename Ty::W, WelfordAcc>, In>;
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Var, O, In, H, Ty> : WelfordImpl<In, Ty> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Std, O, In, H, Ty> : WelfordImpl<In, Ty> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::VarMean, O, In, H, Ty> : WelfordImpl<In, Ty> {};
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::StdMean, O, In, H, Ty> : WelfordImpl<In, Ty> {};
// logsumexp in the value type (float32 for 16-bit floats and float32: expf, as torch).
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::LogSumExp, O, In, H, Ty> : Impl<LogSumExp<typename Ty::V, typename Ty::V>, In> {};
// vector_norm by ord: 0, 1 and 2 accumulate as sum does; inf and -inf are max/min of |x|; other p
// in the value type (powf, as torch).
template <NormOrd O, class Ty>
struct NormOp;
template <class Ty>
struct NormOp<NormOrd::Zero, Ty> { using T = MapReduce<typename Ty::V, typename Ty::A, SumM, MapNonzero>; };
template <class Ty>
struct NormOp<NormOrd::One, Ty> { using T = MapReduce<typename Ty::A, typename Ty::A, SumM, MapAbs>; };
template <class Ty>
struct NormOp<NormOrd::Two, Ty> { using T = MapReduce<typename Ty::A, typename Ty::A, SumM, MapSq, FinSqrt>; };
template <class Ty>
struct NormOp<NormOrd::Inf, Ty> { using T = MapReduce<typename Ty::V, typename Ty::V, MaxM, MapAbs>; };
template <class Ty>
struct NormOp<NormOrd::NegInf, Ty> { using T = MapReduce<typename Ty::V, typename Ty::V, MinM, MapAbs>; };
template <class Ty>
struct NormOp<NormOrd::P, Ty> { using T = MapReduce<typename Ty::V, typename Ty::V, SumM, MapPowAbs, FinPowInv>; };
template <NormOrd O, class In, bool H, class Ty>
struct OpImpl<OpKind::Norm, O, In, H, Ty> : Impl<typename NormOp<O, Ty>::T, In, In, true> {};

template <OpKind K>
using OpTag = std::integral_constant<OpKind, K>;
template <NormOrd O>
using OrdTag = std::integral_constant<NormOrd, O>;

// f(OpTag<K>{}, OrdTag<O>{}) for op K and the runtime ord (vector_norm's; Two for every other op).
template <OpKind K, class F, class Bad>
decltype(auto) call_op(NormOrd ord, F& f, Bad& bad) {
  if constexpr (K == OpKind::Norm) {
    switch (ord) {
      case NormOrd::Zero: return f(OpTag<K>{}, OrdTag<NormOrd::Zero>{});
      case NormOrd::One: return f(OpTag<K>{}, OrdTag<NormOrd::One>{});
      case NormOrd::Two: return f(OpTag<K>{}, OrdTag<NormOrd::Two>{});
      case NormOrd::Inf: return f(OpTag<K>{}, OrdTag<NormOrd::Inf>{});
      case NormOrd::NegInf: return f(OpTag<K>{}, OrdTag<NormOrd::NegInf>{});
      case NormOrd::P: return f(OpTag<K>{}, OrdTag<NormOrd::P>{});
    }
    return bad();
  } else {
    (void)ord;
    return f(OpTag<K>{}, OrdTag<NormOrd::Two>{});
  }
}

// Calls f(OpTag<K>{}, OrdTag<O>{}) for the runtime (op, ord), or bad() for OpKind::Count. The
// cases are generated from RK_OPS: a row without an OpImpl above does not compile.
template <class F, class Bad>
decltype(auto) for_op(OpKind op, NormOrd ord, F&& f, Bad&& bad) {
  switch (op) {
#define RK_OP_CASE(id, ...) \
  case OpKind::id: return call_op<OpKind::id>(ord, f, bad);
    RK_OPS(RK_OP_CASE)
#undef RK_OP_CASE
    case OpKind::Count: break;
  }
  return bad();
}

// Whether op enters a lane's values one by one (its operator is not Op::kBatched): such a lane may
// be read in pieces that continue one accumulator, as the CUDA gather step's columns form reads a
// lane that crosses from one run of its innermost reduced dim into the next.
inline bool enters_values(OpKind op, NormOrd ord) {
  return for_op(
      op, ord,
      [](auto k, auto o) { return !OpImpl<decltype(k)::value, decltype(o)::value, float, false>::Op::kBatched; },
      [] { return false; });
}

}  // namespace red
}  // namespace rk
