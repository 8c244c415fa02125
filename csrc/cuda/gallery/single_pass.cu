// single_pass: the kernel behind `auto`. Everything the gallery teaches, kept where it pays:
//  - 16-byte loads (vectorized), UNROLL of them issued before any is used, so each thread keeps
//    UNROLL*16 bytes in flight (memory-level parallelism is what a streaming read needs);
//  - a grid of one full wave (SM count x occupancy), grid-stride, the last partial sweep shared
//    out evenly;
//  - ONE launch: each block posts its partial, and the last block to finish (a per-stream counter
//    in static device memory) reduces the partials in index order and resets the counter to zero
//    for the next call, so no memset is needed and CUDA graph replays stay correct;
//  - a wide accumulator (float32 sums in float64; bytes summed with dp4a in int32, then int64):
//    more accurate than torch.sum at no measurable cost, and the result is written directly in
//    the output dtype, so no cast kernel follows.
// Fixed grid + fixed-order combine: bitwise deterministic run to run.
#include <cuda/atomic>

#include <mutex>
#include <unordered_map>

#include "cuda/block/common.cuh"

namespace rk {
namespace {

// Accumulator and output of single_pass per input type.
template <class In> struct SinglePassTypes { using Acc = int64_t; using Out = int64_t; };
template <> struct SinglePassTypes<__half> { using Acc = float; using Out = __half; };
template <> struct SinglePassTypes<__nv_bfloat16> { using Acc = float; using Out = __nv_bfloat16; };
template <> struct SinglePassTypes<float> {
  using Acc = std::conditional_t<RK_FAULT_IS(Float32Acc), float, double>;  // planted: float32 accumulator
  using Out = float;
};
template <> struct SinglePassTypes<double> { using Acc = double; using Out = double; };

constexpr int kMaxSlots = 1 << 16;
constexpr int kMaxDevices = 64;
// Zero-initialized when the module loads on each device. Each slot is owned by one stream (or one
// graph capture), so two reductions never share a counter while they can run concurrently.
__device__ unsigned int g_counters[kMaxSlots];
// Partials of the first kPartialSlots slots live in static memory too, so an eager call needs no
// workspace allocation (a caching-allocator call is ~0.5 us of host time). Later slots (many graph
// captures) and grids above kMaxStaticGrid take their partials from the workspace.
constexpr int kPartialSlots = 128;
constexpr int kMaxStaticGrid = 4096;
__device__ double g_partials[kPartialSlots][kMaxStaticGrid];  // 4 MiB; double is the widest Acc
// The engine's one-launch finishes (eng::FusedFinish): kGroupCounters counters a slot for the
// first kGroupSlots slots, one a group of blocks whose last block finishes the group's outputs;
// each last block sets its counter back to 0. 1 MiB.
__device__ unsigned int g_group_counters[kGroupSlots][kGroupCounters];
// Planted fault arrival_order only: one accumulator per slot that blocks add into as they arrive.
__device__ double g_arrival_acc[RK_FAULT_IS(ArrivalOrder) ? kMaxSlots : 1];

template <class In, class Acc, class Out, class Op, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK) single_pass_kernel(const In* __restrict__ x, int64_t n, Out* __restrict__ out,
                                                            Acc* __restrict__ partials, unsigned int* __restrict__ counter) {
  __shared__ Acc scratch[32];
  __shared__ bool is_last;
  // Programmatic dependent launch (sm_90): this grid may be launched before the previous kernel
  // in the stream has finished; wait for it before the first global memory access.
  grid_dependency_wait();
  const VecSplit<In> sp(x, n);
  const uint4* __restrict__ body = reinterpret_cast<const uint4*>(x + sp.head);
  const int tid = threadIdx.x;

  // Full sweeps grid-stride (the whole grid reads one contiguous window at a time, which streams
  // best: giving each block its own contiguous region measured 6% slower at 2^30), then the
  // remainder, less than one sweep, split evenly: one block per slice of equal size, so no block
  // runs a whole extra step at the end (up to ~6% of an int8 2^28 reduction).
  constexpr int64_t kStep = static_cast<int64_t>(BLOCK) * UNROLL;
  const int64_t sweep = static_cast<int64_t>(gridDim.x) * kStep;
  const int64_t full_end = sp.nvec / sweep * sweep;
  Acc v = identity<Acc, Op>();
  for (int64_t i = blockIdx.x * kStep + tid; i < full_end; i += sweep) {
    uint4 r[UNROLL];  // UNROLL independent loads issued back to back, then consumed
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) r[u] = __ldg(body + i + u * BLOCK);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v = accumulate_vec<In, Acc, Op>(v, r[u]);
  }
  const int64_t rem = sp.nvec - full_end;
  const int64_t end = full_end + rem * (blockIdx.x + 1) / gridDim.x;
  for (int64_t i = full_end + rem * blockIdx.x / gridDim.x + tid; i < end; i += kStep) {
    // Predicated, but all loads are issued before any is used (all of the work at small n).
    uint4 r[UNROLL];
    bool ok[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      ok[u] = i + u * BLOCK < end;
      if (ok[u]) r[u] = __ldg(body + i + u * BLOCK);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (ok[u]) v = accumulate_vec<In, Acc, Op>(v, r[u]);
  }
  v = accumulate_head_tail<In, Acc, Op>(v, x, n, sp, static_cast<int64_t>(blockIdx.x) * BLOCK + tid);
  // Loads issued: let the next PDL kernel in the stream start launching onto freed SMs (it still
  // waits for this whole grid to complete before it touches memory).
  allow_dependent_launch();
  v = block_reduce<Acc, Op>(v, scratch);
  if constexpr (RK_FAULT_IS(WriteInput)) {  // planted: the input is used as scratch
    if (tid == 0 && n > 0) const_cast<In*>(x)[blockIdx.x % n] = from_acc<In>(v);
  }

  if (gridDim.x == 1) {
    if (tid == 0) *out = from_acc<Out>(v);
    return;
  }
  if (counter == nullptr) {  // two-launch fallback: finish_partials does the combine
    if (tid == 0) partials[blockIdx.x] = v;
    return;
  }
  if constexpr (RK_FAULT_IS(ArrivalOrder)) {  // planted: an atomic combine, in arrival order
    Acc* acc = reinterpret_cast<Acc*>(g_arrival_acc + (counter - g_counters));
    if (tid == 0) {
      Op::atomic_combine(acc, v);
      if (arrive_last(counter, gridDim.x)) {
        *out = from_acc<Out>(__ldcg(acc));
        *acc = identity<Acc, Op>();
        *counter = 0;
      }
    }
    return;
  }
  if (tid == 0) {
    partials[blockIdx.x] = v;
    is_last = arrive_last(counter, gridDim.x);  // releases the partial above (no __threadfence needed)
  }
  __syncthreads();  // orders the other threads' reads below after thread 0's acquire
  if (!is_last) return;
  Acc w = identity<Acc, Op>();
  const int nparts = static_cast<int>(gridDim.x) - (RK_FAULT_IS(DropLastPartial) ? 1 : 0);  // planted: one partial lost
  for (int b = tid; b < nparts; b += BLOCK) w = combine<Acc, Op>(w, __ldcg(partials + b));
  w = block_reduce<Acc, Op>(w, scratch);
  if (tid == 0) {
    *out = from_acc<Out>(w);
    // Ready for the next launch on this stream (kernel boundaries order it).
    if constexpr (!RK_FAULT_IS(SkipCounterReset)) *counter = 0;  // planted: the reset is skipped
  }
}

// Slots handed out per device before counter_slot answers -1: kMaxSlots, lowered only by tests
// (single_pass_set_slot_limit) to reach the two-launch fallback without 65536 streams.
int g_slot_limit = kMaxSlots;
std::mutex g_slot_mu;
std::unordered_map<uint64_t, int> g_slots[kMaxDevices];

// Slot of g_counters owned by (device, stream), or by (device, capture sequence) while the stream
// is capturing a graph: a graph keeps the slot it was captured with, and eager calls on the
// capturing stream's handle never share it. -1 once all slots are taken (then the caller falls
// back to two launches).
int counter_slot(int device, cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  if (cudaStreamGetCaptureInfo(s, &status, &capture_id) != cudaSuccess) return -1;
  const uint64_t key = status == cudaStreamCaptureStatusActive ? (capture_id | (1ull << 63))
                                                               : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s));
  if (device < 0 || device >= kMaxDevices) return -1;
  std::lock_guard<std::mutex> lock(g_slot_mu);
  auto& m = g_slots[device];
  auto it = m.find(key);
  if (it != m.end()) return it->second;
  if (static_cast<int>(m.size()) >= g_slot_limit) return -1;
  const int slot = static_cast<int>(m.size());
  m.emplace(key, slot);
  return slot;
}

struct SymbolBases {
  unsigned int* counters = nullptr;
  double* partials = nullptr;
  unsigned int* groups = nullptr;
};

// Device addresses of g_counters and g_partials on `device`, looked up once.
const SymbolBases& symbol_bases(int device) {
  static SymbolBases bases[kMaxDevices];
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  SymbolBases& b = bases[device];
  if (!b.counters) {
    void* c = nullptr;
    void* p = nullptr;
    void* g = nullptr;
    if (cudaGetSymbolAddress(&c, g_counters) == cudaSuccess && cudaGetSymbolAddress(&p, g_partials) == cudaSuccess &&
        cudaGetSymbolAddress(&g, g_group_counters) == cudaSuccess) {
      b.partials = static_cast<double*>(p);
      b.groups = static_cast<unsigned int*>(g);
      b.counters = static_cast<unsigned int*>(c);
    }
  }
  return b;
}

struct Config {
  int block, unroll;
};
// Compiled configurations (block, unroll), one list for the table below and the dispatch in
// run_config. The first is the default when no block/unroll is given.
#define RK_SP_CONFIGS(X) X(512, 4) X(256, 4) X(256, 8) X(1024, 2) X(512, 2) X(512, 8) X(256, 2) X(128, 4) X(128, 2)
#define RK_SP_CONFIG_ROW(B, U) {B, U},
constexpr Config kConfigs[] = {RK_SP_CONFIGS(RK_SP_CONFIG_ROW)};
#undef RK_SP_CONFIG_ROW

template <class In, int BLOCK, int UNROLL>
auto kernel_ptr() {
  using T = SinglePassTypes<In>;
  return single_pass_kernel<In, typename T::Acc, typename T::Out, SumOp, BLOCK, UNROLL>;
}

// Resident blocks per SM for this kernel, computed once.
template <class In, int BLOCK, int UNROLL>
int blocks_per_sm() {
  static const int v = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel_ptr<In, BLOCK, UNROLL>(), BLOCK, 0) != cudaSuccess || b < 1) b = 1;
    return b;
  }();
  return v;
}

template <class In, int BLOCK, int UNROLL>
int64_t plan_grid(const ReduceArgs& a) {
  if (a.grid > 0) return a.grid;
  const int64_t vecs = ceil_div(a.n, 16 / static_cast<int64_t>(sizeof(In)));
  const int64_t needed = ceil_div(vecs, static_cast<int64_t>(BLOCK) * UNROLL);
  const int64_t cap = static_cast<int64_t>(a.num_sms) * blocks_per_sm<In, BLOCK, UNROLL>();
  return needed < 1 ? 1 : (needed < cap ? needed : cap);
}

template <class In, int BLOCK, int UNROLL>
cudaError_t run(const ReduceArgs& a) {
  using T = SinglePassTypes<In>;
  using Acc = typename T::Acc;
  using Out = typename T::Out;
  const auto* x = static_cast<const In*>(a.in);
  auto* out = static_cast<Out*>(a.out);
  const int64_t g = plan_grid<In, BLOCK, UNROLL>(a);
  unsigned int* counter = nullptr;
  Acc* partials = static_cast<Acc*>(a.workspace);
  if (g > 1 && a.slot >= 0) {
    const SymbolBases& b = symbol_bases(a.device);
    if (b.counters) counter = b.counters + a.slot;
    if (!partials && b.partials && a.slot < kPartialSlots && g <= kMaxStaticGrid)
      partials = reinterpret_cast<Acc*>(b.partials + static_cast<int64_t>(a.slot) * kMaxStaticGrid);
  }
  if (g > 1 && !partials) return cudaErrorInvalidValue;  // workspace_bytes() was not consulted
  cudaError_t e = launch_maybe_pdl(kernel_ptr<In, BLOCK, UNROLL>(), dim3(static_cast<unsigned>(g)), dim3(BLOCK), a.stream,
                                   a.pdl && a.cc >= 90, x, a.n, out, partials, counter);
  if (e != cudaSuccess || g == 1 || counter) return e;
  // No counter slot was free: the kernel wrote partials only; a second launch combines them in
  // the same order (a different block reduce shape, so possibly different last bits).
  return finish_partials<Acc, SumOp, Out>(partials, g, out, a.stream);
}

template <class In>
cudaError_t run_config(const ReduceArgs& a, int block, int unroll) {
#define RK_SP_CASE(B, U) \
  if (block == B && unroll == U) return run<In, B, U>(a);
  RK_SP_CONFIGS(RK_SP_CASE)
#undef RK_SP_CASE
  return cudaErrorInvalidValue;
}

}  // namespace

bool single_pass_config_supported(int block, int unroll) {
  for (const auto& c : kConfigs)
    if (c.block == block && c.unroll == unroll) return true;
  return false;
}

int single_pass_config_count() { return static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0])); }

void single_pass_config(int i, int* block, int* unroll) {
  *block = kConfigs[i].block;
  *unroll = kConfigs[i].unroll;
}

int single_pass_set_slot_limit(int limit) {
  std::lock_guard<std::mutex> lock(g_slot_mu);
  const int old = g_slot_limit;
  if (limit >= 0) g_slot_limit = limit < kMaxSlots ? limit : kMaxSlots;
  return old;
}

int single_pass_slots_used(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  std::lock_guard<std::mutex> lock(g_slot_mu);
  return static_cast<int>(g_slots[device].size());
}

size_t single_pass_workspace(ReduceArgs& a) {
  // The largest grid any config can use: one wave of the smallest (128-thread) blocks (occupancy
  // never exceeds 2048 threads/SM), or the grid asked for.
  const int64_t g = a.grid > 0 ? a.grid : static_cast<int64_t>(a.num_sms) * (2048 / 128);
  a.slot = a.device >= 0 && a.device < kMaxDevices ? counter_slot(a.device, a.stream) : -1;
  if (a.slot >= 0 && a.slot < kPartialSlots && g <= kMaxStaticGrid) return 0;  // static partials
  return align256(g * 8);
}

int stream_slot(int device, cudaStream_t s) {
  if (device < 0 || device >= kMaxDevices) return -1;
  return counter_slot(device, s);
}

unsigned int* stream_counter_at(int device, int slot) {
  if (device < 0 || device >= kMaxDevices || slot < 0) return nullptr;
  const SymbolBases& b = symbol_bases(device);
  return b.counters ? b.counters + slot : nullptr;
}

StreamScratch stream_scratch(int device, cudaStream_t s) {
  StreamScratch r;
  const int slot = stream_slot(device, s);
  if (slot < 0) return r;
  const SymbolBases& b = symbol_bases(device);
  if (b.groups && slot < kGroupSlots) r.counters = b.groups + static_cast<int64_t>(slot) * kGroupCounters;
  if (b.partials && slot < kPartialSlots) {
    r.partials = b.partials + static_cast<int64_t>(slot) * kMaxStaticGrid;
    r.partial_bytes = kMaxStaticGrid * sizeof(double);
  }
  return r;
}

cudaError_t single_pass_launch(const ReduceArgs& a) {
  const int block = a.block > 0 ? a.block : kConfigs[0].block;
  const int unroll = a.unroll > 0 ? a.unroll : kConfigs[0].unroll;
  if (a.device < 0 || a.device >= kMaxDevices) return cudaErrorInvalidDevice;
  return dispatch_gallery_types(a.dtype, [&](auto t) {
    using T = decltype(t);
    return run_config<typename T::In>(a, block, unroll);
  });
}

}  // namespace rk
