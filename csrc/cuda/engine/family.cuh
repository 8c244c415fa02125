// What the operator families (family_*.cu, one per core/op_table.h family, their kernels compiled in
// parallel by parts, parts/*.cu) share: one engine step of an operator with its output types, and
// the family's dispatch.
#pragma once

#include "cuda/launchers.h"
#include "cuda/engine/reduce.cuh"
#include "engine/op_impl.h"

namespace rk {
namespace fam {

template <class In>
inline constexpr bool kHalfLike = std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>;

template <class In>
using Wide = red::SumAccOf<kHalfLike<In>>;  // the `wide` output (dtype= widening): the sum accumulator

// argmax and argmin: a compare-select merge (kOpsRowsSelectTable).
template <class Op>
struct IsSelect : std::false_type {};
template <class T, bool kMax>
struct IsSelect<red::ArgExt<T, kMax>> : std::true_type {};

using eng::IsWelford;  // var, std and their _mean forms (reduce.cuh)

// The rule for a row's short last lane in the rows kernel (red::Params::short_vectors): a whole
// lane's 16-byte loads, or element loads where those lost against them in the same build
// (NOTES.md, session 54; benchmarks/results/h100/s54, h200/s54):
//  - argmax and argmin: element loads (the sweep's 198 rows cases, H200, vectors / element loads:
//    argmax 1.03 in geometric mean, up to 1.40 on int8 rows of 24 bytes; 16-bit rows of 5-17 lanes
//    1.09-1.18 in rows_fill.py);
//  - Welford (var, std and their _mean forms) on 16-bit input: element loads (rows_fill.py, H100,
//    var_mean float16 rows one value short of 17-136 lanes: 1.02-1.07);
//  - 1-byte values: vectors on rows of at most two lanes (128 bytes), element loads on longer ones
//    (rows_fill.py, H200, amax and sum int8 rows one value short: 0.52-0.86 at 1 and 2 lanes,
//    1.05-1.45 at 5, 11 and 17 lanes);
//  - the rest: vectors (the sweep's rows cases of 4- and 8-byte values 0.99 in geometric mean; mean
//    float16 (19244, 2389) 0.84, vector_norm 0.78 and 0.85; rows_fill.py, H100, rows 16 bytes short:
//    0.75-0.98).
// A coarse rule: single cases of the classes kept on element loads gained with vectors (count_nonzero
// int8 rows of 181 values 0.81; var_mean bfloat16 rows of 2-11 lanes 0.74-0.93), argmin follows
// argmax's code unmeasured, and the 1-byte cut lies between measured lengths (127 won, 148 lost).
// TuningOverrides::short_lanes: -1 element loads everywhere, 1 vectors everywhere (tests, benchmarks).
template <class In, class Op>
inline bool rows_short_vectors(const TuningOverrides& o, int64_t row_values) {
  if (o.short_lanes != 0) return o.short_lanes > 0;
  if (IsSelect<Op>::value || (IsWelford<Op>::value && sizeof(In) == 2)) return false;
  if (sizeof(In) == 1) return row_values <= 128;
  return true;
}

// One step of Op reading In, writing Out0 (and Out1). With `ws` non-null, only the step's
// workspace bytes are written there.
template <class In, class Op, class Out0, class Out1 = Out0>
cudaError_t run(const OpStep& a, size_t* ws) {
  // sum's rows take one lane per thread (0: its shape, rows_shape). Several lanes per thread only
  // pay for batched operators (Welford, logsumexp, argmax) on 16-bit input, for Welford and
  // logsumexp on float64 (benchmarks/tune_ops.py; the others lose occupancy to the register stack
  // and gain nothing), and for Welford on float32 rows of at most 180 lanes (session 61; tuning.h,
  // kWelford4ByteTwoLanesMaxLanes). argmax and argmin rows mostly take the strided warp form
  // instead (rows_step_shape).
  const int rows_lpt = eng::IsPlainSum<Op>::value ? 0
                       : Op::kBatched ? ops_rows_lanes_per_thread(static_cast<int>(sizeof(In)), IsSelect<Op>::value, IsWelford<Op>::value,
                                                                  lanes_of(a.extent, static_cast<int>(sizeof(In))))
                                      : 1;
  if (ws) {
    *ws = eng::step_workspace<Op>(a.kind, a.outer, a.extent, a.inner, static_cast<int>(sizeof(In)), a.in,
                                                a.num_sms, rows_lpt, a.tuning, a.gather);
    return cudaSuccess;
  }
  red::Params prm = a.params;
  prm.short_vectors = rows_short_vectors<In, Op>(a.tuning, a.extent);
  return eng::run_step<In, Op, Out0, Out1>(a.kind, a.outer, a.extent, a.inner, a.gather, static_cast<const In*>(a.in),
                                           eng::Outs<Out0, Out1>{static_cast<Out0*>(a.out0), static_cast<Out1*>(a.out1), a.out_map},
                                           a.workspace, prm, a.stream, a.cc, a.num_sms, a.pdl, rows_lpt, a.counters, a.tuning);
}

// Op I's step on input In: the first output wide when dtype= widened it.
template <class In, class I>
cudaError_t run_impl(const OpStep& a, size_t* ws) {
  if constexpr (I::kWide) {
    if (a.wide) return run<In, typename I::Op, Wide<In>, typename I::Out1>(a, ws);
  }
  return run<In, typename I::Op, typename I::Out0, typename I::Out1>(a, ws);
}

// One family's operators (core/op_table.h's family column) on the input dtype: each family's parts
// compile its own rows only, with the struct and output types of engine/op_impl.h.
template <red::Family Fam, class In>
cudaError_t run_family_in(const OpStep& a, size_t* ws) {
  return red::for_op(
      a.op, a.ord,
      [&](auto k, auto o) -> cudaError_t {
        constexpr red::OpKind K = decltype(k)::value;
        if constexpr (red::op_traits(K).family != Fam || (std::is_integral_v<In> && red::op_traits(K).float_only)) {
          return cudaErrorInvalidValue;
        } else {
          return run_impl<In, red::OpImpl<K, decltype(o)::value, In, kHalfLike<In>>>(a, ws);
        }
      },
      [] { return cudaErrorInvalidValue; });
}

// The input dtypes' parts. A family's kernels compile in one file per part, parts/<family>_<part>.cu
// (one line, RK_FAMILY_PART), all in parallel, so that the build's longest file is one part of one
// family: whole families took up to 508 s of nvcc each (Extrema), and with the fused finish's own
// instantiations one device call could not build them (NOTES.md, session 49). Parts by the dtypes'
// cost (nvcc here, one core): float16 and bfloat16 apart (the Norms family on both took 422 s) as
// are bool and the bytes (Extrema on the three: 249 s). Every (family, part) is extern below;
// .ci/check_parts.py fails on a missing part file, since a missing instantiation is otherwise an
// undefined symbol found only when a GPU machine imports the library.
// X(family, part) for each part.
#define RK_FAMILY_PARTS(X, fam) X(fam, F32) X(fam, F64) X(fam, Half) X(fam, BFloat16) X(fam, Bool) X(fam, Byte) X(fam, Wide)
enum class Part : int {
#define RK_PART_ENUM(fam, part) part,
  RK_FAMILY_PARTS(RK_PART_ENUM, _)
#undef RK_PART_ENUM
};

// Each input type's part.
template <class In>
constexpr Part part_of() {
  if constexpr (std::is_same_v<In, float>) {
    return Part::F32;
  } else if constexpr (std::is_same_v<In, double>) {
    return Part::F64;
  } else if constexpr (std::is_same_v<In, __half>) {
    return Part::Half;
  } else if constexpr (std::is_same_v<In, __nv_bfloat16>) {
    return Part::BFloat16;
  } else if constexpr (std::is_same_v<In, bool>) {
    return Part::Bool;
  } else {
    static_assert(std::is_integral_v<In>, "an input type in no part");
    return sizeof(In) == 1 ? Part::Byte : Part::Wide;
  }
}

// The family's operators on the input dtypes of part P (another part's dtype: cudaErrorInvalidValue).
// (A function per input type rather than a lambda nested in the dtype lambda: g++ as nvcc's host
// compiler took the outer lambda's `decltype(t)` for a reference inside the inner one.)
template <red::Family Fam, Part P>
cudaError_t run_family_part(const OpStep& a, size_t* ws) {
  return dispatch_cuda(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (part_of<In>() == P) {
      return run_family_in<Fam, In>(a, ws);
    } else {
      return cudaErrorInvalidValue;
    }
  });
}

#define RK_PART_EXTERN(fam, part) extern template cudaError_t run_family_part<red::Family::fam, Part::part>(const OpStep&, size_t*);
#define RK_FAMILY_EXTERN(fam) RK_FAMILY_PARTS(RK_PART_EXTERN, fam)
RK_FAMILIES(RK_FAMILY_EXTERN)
#undef RK_FAMILY_EXTERN
#undef RK_PART_EXTERN

// The family's step: its input dtype's part, compiled in that part's file.
template <red::Family Fam>
cudaError_t run_family(const OpStep& a, size_t* ws) {
  return dispatch_cuda(a.in_dtype, [&](auto t) -> cudaError_t { return run_family_part<Fam, part_of<typename decltype(t)::T>()>(a, ws); });
}

}  // namespace fam
}  // namespace rk

// The body of parts/<family>_<part>.cu: that part's instantiation.
#define RK_FAMILY_PART(family, part) \
  template cudaError_t rk::fam::run_family_part<rk::red::Family::family, rk::fam::Part::part>(const rk::OpStep&, size_t*);
