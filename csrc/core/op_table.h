// The operator table: one row per reduction (sum and every other torch reduction), with every trait
// the code asks of an op. reducekit::reduce serves every row; sum also has its own schema,
// reducekit::sum (torch.sum's signature, and the whole-tensor gallery strategies). The CPU and CUDA
// dispatches, the torch front end (validation, result dtypes, empty slices, autograd), the gallery
// routing and, through reducekit._C.op_table(), the Python wrappers' list, the fake kernel and the
// benchmark's op list all read it. Adding an operator is one row here, its struct in
// engine/op_impl.h and its tests; every switch over these enums is generated from the rows or
// lists every enumerator, so a forgotten case does not compile. Torch-free and CUDA-free.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/methods.h"

namespace rk {
namespace red {

// What an empty slice (no values) gives: an identity value, or torch's error (no identity).
enum class Empty : int { Zero, One, NaN, NegInf, Error };
// The natural result dtype, before dtype= (torch's promotion):
//   Input: the input's; LongIfIntegral: int64 for bool and integers, else the input's; Truth: bool
//   (uint8 for uint8); Long: int64; DefaultIfIntegral: torch's default float dtype for bool and
//   integers, else the input's; RealValue: the real dtype of a complex input, else the input's.
enum class Result : int { Input, LongIfIntegral, Truth, Long, DefaultIfIntegral, RealValue };
// The gradient: None (not differentiable), or which formula of torch/library.cpp's backward.
enum class Grad : int { None, Sum, Mean, NanSum, NanMean, Extreme, Moments, LogSumExp, ViaTorch };
// The CUDA files that compile the op's kernels: cuda/engine/family_<family>.cu dispatches, and
// cuda/engine/parts/<family>_<part>.cu compile one part of the input dtypes each, in parallel
// (cuda/engine/family.cuh).
#define RK_FAMILIES(X) X(Sums) X(Moments) X(Norms) X(Extrema) X(Logic)
enum class Family : int {
#define RK_FAMILY_ENUM(f) f,
  RK_FAMILIES(RK_FAMILY_ENUM)
#undef RK_FAMILY_ENUM
      Count
};

// X(id, name, public name, outputs, float_only, takes_dtype, empty, result, grad, family, gallery)
//   outputs      1, or 2 (var_mean/std_mean: (var or std, mean); aminmax: (min, max))
//   float_only   the engine reads float inputs only; integer inputs are cast first (torch's
//                promotion) or refused with torch's error
//   takes_dtype  accepts dtype= (16-bit floats -> float32 and float32 -> float64 read in place)
//   gallery      the gallery's name for the op (core/methods.h GalleryOp), None where no strategy serves it
#define RK_OPS(X)                                                                                                         \
  X(Sum, "sum", "sum", 1, false, true, Zero, LongIfIntegral, Sum, Sums, Sum)                                 \
  X(Mean, "mean", "mean", 1, true, true, NaN, Input, Mean, Moments, None)                                    \
  X(Prod, "prod", "prod", 1, false, true, One, LongIfIntegral, ViaTorch, Logic, Prod)                        \
  X(Amax, "amax", "amax", 1, false, false, Error, Input, Extreme, Extrema, Max)                              \
  X(Amin, "amin", "amin", 1, false, false, Error, Input, Extreme, Extrema, Min)                              \
  X(AMinMax, "aminmax", "aminmax", 2, false, false, Error, Input, Extreme, Extrema, None)                    \
  X(NanSum, "nansum", "nansum", 1, true, true, Zero, LongIfIntegral, NanSum, Moments, None)                  \
  X(NanMean, "nanmean", "nanmean", 1, true, true, NaN, Input, NanMean, Moments, None)                        \
  X(All, "all", "all", 1, false, false, One, Truth, None, Logic, All)                                        \
  X(Any, "any", "any", 1, false, false, Zero, Truth, None, Logic, Any)                                       \
  X(CountNonzero, "count_nonzero", "count_nonzero", 1, false, false, Zero, Long, None, Logic, None)          \
  X(Var, "var", "var", 1, true, false, NaN, RealValue, Moments, Moments, None)                               \
  X(Std, "std", "std", 1, true, false, NaN, RealValue, Moments, Moments, None)                               \
  X(VarMean, "var_mean", "var_mean", 2, true, false, NaN, Input, Moments, Moments, None)                     \
  X(StdMean, "std_mean", "std_mean", 2, true, false, NaN, Input, Moments, Moments, None)                     \
  X(LogSumExp, "logsumexp", "logsumexp", 1, true, false, NegInf, DefaultIfIntegral, LogSumExp, Norms, None)  \
  X(ArgMax, "argmax", "argmax", 1, false, false, Error, Long, None, Extrema, None)                           \
  X(ArgMin, "argmin", "argmin", 1, false, false, Error, Long, None, Extrema, None)                           \
  X(Norm, "vector_norm", "linalg.vector_norm", 1, true, true, Zero, RealValue, ViaTorch, Norms, None)

enum class OpKind : int {
#define RK_OP_ENUM(id, ...) id,
  RK_OPS(RK_OP_ENUM)
#undef RK_OP_ENUM
      Count
};

struct OpTraits {
  OpKind op;
  const char* name;    // reducekit::reduce's `op` argument
  const char* public_name;  // reducekit's function (reducekit.linalg.vector_norm for vector_norm)
  int outputs;
  bool float_only;
  bool takes_dtype;
  Empty empty;
  Result result;
  Grad grad;
  Family family;
  GalleryOp gallery;
};

inline constexpr OpTraits kOps[] = {
#define RK_OP_ROW(id, name, pub, outputs, float_only, takes_dtype, empty, result, grad, family, gallery) \
  {OpKind::id, name, pub, outputs, float_only, takes_dtype, Empty::empty, Result::result, Grad::grad, Family::family, GalleryOp::gallery},
    RK_OPS(RK_OP_ROW)
#undef RK_OP_ROW
};
inline constexpr int kNumOps = static_cast<int>(OpKind::Count);
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOps, "op table out of sync");

constexpr const OpTraits& op_traits(OpKind op) { return kOps[static_cast<int>(op)]; }
inline const char* op_name(OpKind op) { return op_traits(op).name; }

// The op named `name`, or OpKind::Count.
inline OpKind op_from_name(std::string_view name) {
  for (const auto& t : kOps)
    if (name == t.name) return t.op;
  return OpKind::Count;
}

// vector_norm's ord, by kernel: 0 (count of nonzeros), 1, 2, inf, -inf, any other p.
enum class NormOrd : int { Zero, One, Two, Inf, NegInf, P };

}  // namespace red

// Which ops are float-only on the engine (their integer inputs are cast or summed first).
inline bool op_float_only(red::OpKind op) { return red::op_traits(op).float_only; }

}  // namespace rk
