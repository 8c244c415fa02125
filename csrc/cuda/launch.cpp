// Routes a method to its strategy family (one .cu file each). Torch-free host code. Its switches
// list every enumerator, and -Wswitch is an error here: a method added to RK_METHODS (or a dtype to
// RK_DTYPES) without its case below does not compile.
#include "cuda/launchers.h"

#pragma GCC diagnostic error "-Wswitch"

namespace rk {

DType acc_dtype(DType in) {
  switch (in) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return DType::Float32;
    case DType::Float64: return DType::Float64;
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::Count: return DType::Int64;
  }
  return DType::Int64;
}

DType out_dtype(Method m, DType in) {
  if (m != Method::SinglePass) return acc_dtype(in);
  return is_floating(in) ? in : DType::Int64;
}

namespace {
enum class Family { Atomics, Trees, Warp, GridStride, Cub, SinglePass, None };

Family family(Method m) {
  switch (m) {
    case Method::AtomicGlobal:
    case Method::AtomicBlock:
    case Method::WarpAtomic:
    case Method::BlockAtomic:
    case Method::Lock:
    case Method::CubBlock: return Family::Atomics;
    case Method::TreeInterleaved:
    case Method::TreeStrided:
    case Method::TreeSequential:
    case Method::FirstAdd:
    case Method::WarpUnroll:
    case Method::FullUnroll: return Family::Trees;
    case Method::Shuffle:
    case Method::Butterfly:
    case Method::Cg:
    case Method::CgUnroll2:
    case Method::Coarsened: return Family::Warp;
    case Method::TwoPass:
    case Method::Vectorized:
    case Method::HostFinal: return Family::GridStride;
    case Method::CubDevice: return Family::Cub;
    case Method::SinglePass: return Family::SinglePass;
    case Method::Auto:   // resolved by the caller (the tuning table)
    case Method::Exact:  // its own launch (cuda/engine/exact.cu)
    case Method::Count: return Family::None;
  }
  return Family::None;
}
}  // namespace

size_t workspace_bytes(Method m, ReduceArgs& a) {
  switch (family(m)) {
    case Family::Atomics: return atomics_workspace(m, a);
    case Family::Trees: return trees_workspace(m, a);
    case Family::Warp: return warp_workspace(m, a);
    case Family::GridStride: return grid_stride_workspace(m, a);
    case Family::Cub: return cub_workspace(m, a);
    case Family::SinglePass: return single_pass_workspace(a);
    case Family::None: return 0;
  }
  return 0;
}

size_t host_workspace_bytes(Method m, const ReduceArgs& a) {
  return family(m) == Family::GridStride ? grid_stride_host_workspace(m, a) : 0;
}

cudaError_t launch(Method m, const ReduceArgs& a) {
  if (a.n <= 0 || a.in == nullptr || a.out == nullptr) return cudaErrorInvalidValue;
  if (!method_serves(m, kGalleryOpNames[static_cast<int>(a.op)], !is_floating(a.dtype))) return cudaErrorInvalidValue;
  switch (family(m)) {
    case Family::Atomics: return atomics_launch(m, a);
    case Family::Trees: return trees_launch(m, a);
    case Family::Warp: return warp_launch(m, a);
    case Family::GridStride: return grid_stride_launch(m, a);
    case Family::Cub: return cub_launch(m, a);
    case Family::SinglePass: return single_pass_launch(a);
    case Family::None: return cudaErrorInvalidValue;
  }
  return cudaErrorInvalidValue;
}

namespace {
using OpFamily = cudaError_t (*)(const OpStep&, size_t*);
// One entry per red::Family, in its order (core/op_table.h's family column routes each op).
constexpr OpFamily kOpFamilies[] = {&family_sums, &family_moments, &family_norms, &family_extrema, &family_logic};
static_assert(sizeof(kOpFamilies) / sizeof(kOpFamilies[0]) == static_cast<int>(red::Family::Count), "one entry per family");

OpFamily op_family(red::OpKind op) { return kOpFamilies[static_cast<int>(red::op_traits(op).family)]; }
}  // namespace

size_t op_step_workspace(const OpStep& a) {
  size_t bytes = 0;
  if (op_supported(a.op, a.in_dtype)) op_family(a.op)(a, &bytes);
  return bytes;
}

cudaError_t op_step_launch(const OpStep& a) {
  if (a.outer <= 0 || a.extent <= 0 || a.inner <= 0 || !a.in || !a.out0) return cudaErrorInvalidValue;
  if (!op_supported(a.op, a.in_dtype)) return cudaErrorInvalidValue;  // (partials: cuda/engine/family.cuh checks)
  return op_family(a.op)(a, nullptr);
}

}  // namespace rk
