// reducekit method registry: the single source of truth for method names and their metadata.
//
// Torch-free and CUDA-free: included by the C++ op (which validates `method`), by the kernel
// dispatcher (which routes a method id to its launcher) and exported to Python through pybind11
// (`reducekit._C.methods()`), from which `reducekit.methods()` builds its records.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/dtype.h"

namespace rk {

// X(id, ops, name, devices, det_int, det_float, launches, host_sync, source, idea)
//   ops        the whole-tensor reductions the method serves, space-separated: sum, and for the
//              strategies that take any operator prod, amax, amin, all and any; ":int" marks an
//              op served for integer (and bool) inputs only (the hardware's atomicMax/atomicMin)
//   devices    "cpu,cuda" or "cuda"
//   det_int    integer/bool results identical run to run (always true: integer addition is associative)
//   det_float  floating-point results bitwise identical run to run for the same input
//   launches   device operations per call for a large input (kernels plus memsets/copies)
//   host_sync  the host waits for the device inside the call (unusable in CUDA graphs)
//   source     reference document(s) in shared/seeds and the technique's name there
#define RK_METHODS(X)                                                                              \
  X(Auto, "sum", "auto", "cpu,cuda", true, true, 1, false, "reducekit dispatcher (tuning table)",         \
    "picks the fastest deterministic kernel for the dtype and size from the tuning table")         \
  X(AtomicGlobal, "sum amax:int amin:int", "atomic_global", "cuda", true, false, 2, false, "001 global atomic",              \
    "every thread atomicAdds its element into the one global result")                              \
  X(AtomicBlock, "sum amax:int amin:int", "atomic_block", "cuda", true, false, 2, false, "001 block shared atomic",          \
    "shared-memory atomics per block, then one global atomic per block")                           \
  X(TreeInterleaved, "sum prod amax amin all any", "tree_interleaved", "cuda", true, true, 2, false,                             \
    "002 simple tree, 004 interleaved addressing",                                                 \
    "shared-memory tree, interleaved addressing with the divergent tid % (2*s) branch")            \
  X(TreeStrided, "sum prod amax amin all any", "tree_strided", "cuda", true, true, 2, false, "004 strided index",                 \
    "interleaved addressing with a strided index: no divergence, but bank conflicts")              \
  X(TreeSequential, "sum prod amax amin all any", "tree_sequential", "cuda", true, true, 2, false,                               \
    "001 shared, 002 convergent tree, 004 sequential addressing",                                  \
    "sequential addressing: no divergence, no bank conflicts")                                     \
  X(FirstAdd, "sum prod amax amin all any", "first_add", "cuda", true, true, 2, false, "002, 004 first add during load",          \
    "each thread adds two elements while loading: half the blocks")                                \
  X(WarpUnroll, "sum prod amax amin all any", "warp_unroll", "cuda", true, true, 2, false, "001 unroll, 004 warp-synchronous tail", \
    "last warp's tree steps unrolled without block barriers (volatile + __syncwarp)")              \
  X(FullUnroll, "sum prod amax amin all any", "full_unroll", "cuda", true, true, 2, false, "004 complete unrolling",              \
    "block size a template parameter: every tree step unrolled at compile time")                   \
  X(Shuffle, "sum prod amax amin all any", "shuffle", "cuda", true, true, 2, false, "001 shuffle",                                \
    "shared-memory tree down to 32 values, then __shfl_down_sync")                                 \
  X(Butterfly, "sum prod amax amin all any", "butterfly", "cuda", true, true, 2, false, "000 shfl_xor all-reduce, 003 shuffles",  \
    "warp all-reduce with __shfl_xor_sync, then the warp sums all-reduced by warp 0")              \
  X(Cg, "sum prod amax amin all any", "cg", "cuda", true, true, 2, false, "001 cooperative groups",                               \
    "cooperative groups: cg::reduce on 32-thread tiles")                                           \
  X(CgUnroll2, "sum prod amax amin all any", "cg_unroll2", "cuda", true, true, 2, false, "001 cooperative groups (unroll 2)",     \
    "cooperative groups with two elements per thread")                                             \
  X(Coarsened, "sum prod amax amin all any", "coarsened", "cuda", true, true, 2, false, "002, 004 thread coarsening",             \
    "each thread sums COARSE_FACTOR=8 elements before the shared-memory tree")                     \
  X(WarpAtomic, "sum amax:int amin:int", "warp_atomic", "cuda", true, false, 2, false, "000 warp-level atomics",             \
    "bounded grid-stride loop, warp shuffle reduce, one atomic per warp")                          \
  X(BlockAtomic, "sum amax:int amin:int", "block_atomic", "cuda", true, false, 2, false, "000 block-level atomics",          \
    "bounded grid-stride loop, block reduce, one atomic per block")                                \
  X(TwoPass, "sum prod amax amin all any", "two_pass", "cuda", true, true, 2, false, "000 device reduce, 003, 004 two-pass",      \
    "bounded grid-stride loop into per-block partials, a second launch reduces the partials")      \
  X(Vectorized, "sum prod amax amin all any", "vectorized", "cuda", true, true, 2, false, "000 vector loads, 004 items per thread", \
    "two_pass with 16-byte vector loads, scalar head and tail for unaligned views")                \
  X(HostFinal, "sum", "host_final", "cuda", true, true, 3, true, "003 partial sums finished on the host",   \
    "block partials copied to pinned host memory and summed by the CPU (synchronizes)")            \
  X(Lock, "sum prod amax amin all any", "lock", "cuda", true, false, 2, false, "003 lock-based finish with atomicCAS",            \
    "block results combined under an atomicCAS spin lock with __threadfence")                      \
  X(CubBlock, "sum amax:int amin:int", "cub_block", "cuda", true, false, 2, false, "001 CUB BlockReduce",                    \
    "cub::BlockReduce per block, then one atomic per block")                                       \
  X(CubDevice, "sum", "cub_device", "cuda", true, true, 2, false, "000, 001 CUB DeviceReduce",             \
    "cub::DeviceReduce::TransformReduce: CUB's tuned two-kernel device reduction")                 \
  X(SinglePass, "sum", "single_pass", "cuda", true, true, 1, false,                                       \
    "reducekit (000 vector loads + last-block-done finish)",                                       \
    "one launch: 16-byte loads, several in flight, fixed-order last-block-done combine")          \
  X(Exact, "sum", "exact", "cpu,cuda", true, true, 1, false,                                             \
    "ExSUM (Collange et al. 2015) + xsum's superaccumulator (Neal 2015)",                          \
    "correctly rounded: exact float64 partial sums, spills into int64 limbs, one final rounding; "  \
    "the same bits on any GPU, grid, CPU, order or split")

enum class Method : int {
#define RK_ENUM(id, ...) id,
  RK_METHODS(RK_ENUM)
#undef RK_ENUM
      Count
};

struct MethodInfo {
  Method id;
  const char* ops;
  const char* name;
  const char* devices;
  bool deterministic_int;
  bool deterministic_float;
  int launches;
  bool host_sync;
  const char* source;
  const char* idea;
};

inline constexpr MethodInfo kMethods[] = {
#define RK_INFO(id, ops, name, devices, di, df, launches, hs, source, idea) \
  {Method::id, ops, name, devices, di, df, launches, hs, source, idea},
    RK_METHODS(RK_INFO)
#undef RK_INFO
};

inline constexpr int kNumMethods = static_cast<int>(Method::Count);
static_assert(sizeof(kMethods) / sizeof(kMethods[0]) == kNumMethods, "registry out of sync");

inline const MethodInfo& method_info(Method m) { return kMethods[static_cast<int>(m)]; }

// Returns the method with this name, or Method::Count if there is none.
inline Method method_from_name(std::string_view name) {
  for (const auto& m : kMethods)
    if (name == m.name) return m.id;
  return Method::Count;
}

// The whole-tensor operators of the gallery strategies (the `ops` column), in kGalleryOpNames' order;
// None: an operator of core/op_table.h that no gallery strategy serves.
enum class GalleryOp : int { Sum, Prod, Max, Min, All, Any, None };
inline constexpr const char* kGalleryOpNames[] = {"sum", "prod", "amax", "amin", "all", "any"};
static_assert(sizeof(kGalleryOpNames) / sizeof(kGalleryOpNames[0]) == static_cast<int>(GalleryOp::None), "gallery ops out of sync");

// Whether method m serves the whole-tensor reduction `op` ("sum", "prod", "amax", "amin", "all",
// "any") of an integer/bool (integral) or float input.
inline bool method_serves(Method m, std::string_view op, bool integral) {
  std::string_view ops = method_info(m).ops;
  while (!ops.empty()) {
    const size_t sp = ops.find(' ');
    std::string_view tok = ops.substr(0, sp);
    const size_t colon = tok.find(':');
    if (tok.substr(0, colon) == op && (colon == std::string_view::npos || integral)) return true;
    if (sp == std::string_view::npos) break;
    ops = ops.substr(sp + 1);
  }
  return false;
}

inline bool runs_on_cpu(Method m) { return std::string_view(method_info(m).devices).find("cpu") != std::string_view::npos; }

}  // namespace rk
