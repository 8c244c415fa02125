// reducekit._C's test and tuning hooks (names starting with an underscore; not public API), and the
// overrides they set. The CUDA backend copies the overrides into each launch's arguments
// (OpStep::tuning, ExactArgs::tuning): the CUDA code itself reads no mutable state.
#include "torch/hooks.h"

#include <torch/extension.h>

#include <string>

#include "engine/reduce_ops.h"

#ifdef RK_WITH_CUDA
#include "cuda/launchers.h"
#endif

namespace rk {

TuningOverrides& tuning_overrides() {
  static TuningOverrides o;
  return o;
}

void bind_hooks(pybind11::module_& m) {
#ifdef RK_WITH_CUDA
  m.def("_dims_columns_config", [](int tx0, int lpt, int pack, int loads) {
    TORCH_CHECK_VALUE((tx0 == 0 || (tx0 >= 1 && tx0 <= 32 && (tx0 & (tx0 - 1)) == 0)) &&
                      (lpt == 0 || lpt == 1 || lpt == 2 || lpt == 4 || lpt == 8) &&
                      (pack == 0 || (pack >= 1 && pack <= 256 && (pack & (pack - 1)) == 0)) && loads >= 0 && loads <= 2,
                      "reducekit._C._dims_columns_config: tx0 must be 0 or a power of two up to 32, lpt 0, 1, 2, 4 or 8, "
                      "pack 0 or a power of two up to 256, loads 0, 1 or 2; got (" + std::to_string(tx0) + ", " + std::to_string(lpt) +
                      ", " + std::to_string(pack) + ", " + std::to_string(loads) + ")");
    TuningOverrides& o = tuning_overrides();
    const auto old = pybind11::make_tuple(o.columns_tx0, o.columns_lanes, o.columns_pack, o.columns_loads);
    o.columns_tx0 = tx0;
    o.columns_lanes = lpt;
    o.columns_pack = pack;
    o.columns_loads = loads;
    return old;
  }, "Tuning hook: force the dims columns kernel's (tx0, lanes per thread, batches per block; at most what one block "
     "holds, loads: 1 16-byte vectors, 2 one column a thread); (0, 0, 0, 0) restores the rule. Returns the previous tuple.",
     pybind11::arg("tx0"), pybind11::arg("lpt"), pybind11::arg("pack") = 0, pybind11::arg("loads") = 0);
  m.def("_dims_gather_staged", [](int mode) {
    TORCH_CHECK_VALUE(mode >= 0 && mode <= 2, "reducekit._C._dims_gather_staged: mode must be 0 (the rule), 1 (every run of "
                      "the gather step's rows form staged through shared memory) or 2 (none: runs under kGatherDirectMinLanes "
                      "lanes copied), got " + std::to_string(mode));
    const int old = tuning_overrides().gather_staged;
    tuning_overrides().gather_staged = mode;
    return old;
  }, "Test and tuning hook: how the gather step's rows form reads its runs: 0 the rule (runs under kGatherDirectMinLanes "
     "lanes staged through shared memory, longer ones lane by lane), 1 every run staged, 2 none (short runs copied with "
     "the reduced dims last, as before session 44). The same bits in every mode. Returns the previous mode.",
     pybind11::arg("mode"));
  m.def("_ops_rows_lanes", [](int lpt) {
    TORCH_CHECK_VALUE(lpt >= 0 && lpt <= 16 && (lpt & (lpt - 1)) == 0,
                      "reducekit._C._ops_rows_lanes: lpt must be 0 (the rule) or a power of two up to 16, got " + std::to_string(lpt));
    const int old = tuning_overrides().rows_lanes;
    tuning_overrides().rows_lanes = lpt;
    return old;
  }, "Tuning hook: force the operators' rows kernel lanes per thread; 0 restores the rule. Returns the previous value.",
     pybind11::arg("lpt"));
  // The three-way mode hooks of the engine's kernels (-1, 0 the rule, 1): each sets one override and
  // returns its previous value. `modes` names what -1 and 1 do, for the error message.
  const auto mode_hook = [&m](const char* name, int TuningOverrides::*field, const char* modes, const char* doc) {
    m.def(name, [name, field, modes](int mode) {
      TORCH_CHECK_VALUE(mode >= -1 && mode <= 1, std::string("reducekit._C.") + name + ": mode must be " + modes + ", got " +
                                                    std::to_string(mode));
      const int old = tuning_overrides().*field;
      tuning_overrides().*field = mode;
      return old;
    }, doc, pybind11::arg("mode"));
  };
  mode_hook("_rows_stripes", &TuningOverrides::rows_stripes,
            "-1 (one lane a thread), 0 (the rule) or 1 (two lanes t and t + W a thread wherever the rows kernel takes one lane a thread)",
            "Test and benchmark hook: the rows kernel's rows of one lane a thread on W / 2 threads of two lanes each (-1 "
            "never, 1 wherever possible, 0 the rule: rows_stripes_pay in tuning.h). The same bits in every "
            "mode. Returns the previous mode.");
  mode_hook("_rows_select", &TuningOverrides::rows_select,
            "-1 (the tree kernels), 0 (the rule) or 1 (argmax and argmin rows by the strided warp form wherever possible)",
            "Test and benchmark hook: argmax and argmin rows by the strided warp form (select_rows_kernel; -1 never, 1 "
            "wherever possible: 2-, 4- and 8-byte values, 0 the rule: rows_select_pays in tuning.h). The same bits in every "
            "mode. Returns the previous mode.");
  mode_hook("_columns_wide", &TuningOverrides::columns_wide,
            "-1 (the build held to 2 blocks an SM), 0 (the rule) or 1 (the build held to 3 blocks an SM wherever it is compiled)",
            "Test and benchmark hook: Welford's one-column columns (var, std, var_mean, std_mean on 2- and 4-byte values) by "
            "the columns kernel's build held to 3 blocks an SM (-1 never, 1 always, 0 the rule: columns_wide_pays in "
            "tuning.h). The same bits in every mode. Returns the previous mode.");
  mode_hook("_rows_short_lanes", &TuningOverrides::short_lanes, "-1 (element loads), 0 (the rule) or 1 (a whole lane's vectors)",
            "Test and benchmark hook: how a row's short last lane is read in the engine's rows kernels, for every operator and "
            "dtype: -1 element loads (as before session 53), 1 a whole lane's 16-byte loads; 0 restores the rule (vectors "
            "but for argmax and argmin, Welford on 16-bit input and 1-byte rows over two lanes: family.cuh's rows_short_vectors). "
            "The same bits in every mode. Returns the previous mode.");
  m.def("_exact_config", [](int block, int unroll, int bpr) {
    TORCH_CHECK_VALUE(exact_config_supported(block, unroll) && bpr >= 0 && bpr <= (1 << 20),
                      "reducekit._C._exact_config: (block=" + std::to_string(block) + ", unroll=" + std::to_string(unroll) +
                          ") is not compiled (see RK_EXACT_CONFIGS in csrc/cuda/engine/exact.cu), or bpr=" + std::to_string(bpr) +
                          " is outside 0..2^20");
    TuningOverrides& o = tuning_overrides();
    o.exact_block = block;
    o.exact_unroll = unroll;
    o.exact_bpr = bpr;
  }, "Test hook: force method='exact''s CUDA (block, unroll) and blocks per row; (0, 0, 0) restores the rule.",
     pybind11::arg("block"), pybind11::arg("unroll"), pybind11::arg("bpr"));
  m.def("_exact_warp_rows_min", [](int64_t n) {
    TORCH_CHECK_VALUE(n >= 0 && n <= (int64_t(1) << 30),
                      "reducekit._C._exact_warp_rows_min: n must be 0 (the rule) to 2^30 (no row a warp), got " + std::to_string(n));
    const int old = tuning_overrides().exact_warp_min;
    tuning_overrides().exact_warp_min = static_cast<int>(n);
    return old;
  }, "Tuning hook: the shortest row method='exact' takes a warp a row for (CUDA); 0 restores the rule. Returns the previous value.",
     pybind11::arg("n"));
  m.def("_exact_configs", [] {
    pybind11::list out;
    for (int b : {64, 128, 256, 512})
      for (int u : {2, 4})
        if (exact_config_supported(b, u)) out.append(pybind11::make_tuple(b, u));
    return out;
  }, "(block, unroll) pairs compiled for method='exact' on CUDA");
  m.def("_dims_fused_finish", [](bool enabled) {
    const bool old = tuning_overrides().fused_finish >= 0;
    tuning_overrides().fused_finish = enabled ? 0 : -1;
    return old;
  }, "Test hook: with False, split rows and columns of the engine always finish in a second launch (pairwise_finish_kernel) "
     "instead of in their last blocks (the same bits); True restores the rule. Returns the previous setting.", pybind11::arg("enabled"));
  m.def("_dims_fused_row_blocks", [](int64_t n) {
    TORCH_CHECK_VALUE(n >= 0 && n <= (int64_t(1) << 30), "reducekit._C._dims_fused_row_blocks: n must be in [0, 2^30] "
                      "(0 restores the rule), got ", std::to_string(n));
    const int old = tuning_overrides().fused_row_blocks;
    tuning_overrides().fused_row_blocks = static_cast<int>(n);
    return old;
  }, "Tuning hook: the most blocks of a rows step that finish in their last block (one launch); 0 restores the rule "
     "(kFusedRowBlocks). Returns the previous value.", pybind11::arg("n"));
  m.def("_single_pass_slots", [](int device, int limit) {
    const int old = single_pass_set_slot_limit(limit);
    return pybind11::make_tuple(single_pass_slots_used(device), old);
  }, "Test hook: (slots used on device, previous limit); limit >= 0 sets how many counter slots single_pass hands out");
#endif
  m.def("_dims_gather", [](bool enabled) {
    const bool old = tuning_overrides().no_gather == 0;
    tuning_overrides().no_gather = enabled ? 0 : 1;
    return old;
  }, "Test hook (every build: the CPU gathers too): with False, a reduction over dims that do not merge into one run is copied with its reduced dims "
     "last and reduced as rows, instead of read through its dims by the gather step (the same bits); True restores "
     "the rule. Returns the previous setting.", pybind11::arg("enabled"));
  m.def("_exp_nv", [](const at::Tensor& x) {
    TORCH_CHECK_VALUE(x.device().is_cpu() && x.scalar_type() == at::kDouble,
                      "reducekit._C._exp_nv: x must be a CPU float64 tensor, got " + std::string(x.device().str()) + " " +
                          std::string(c10::toString(x.scalar_type())));
    const at::Tensor c = x.contiguous();
    at::Tensor out = at::empty_like(c);
    const double* in = c.data_ptr<double>();
    double* o = out.data_ptr<double>();
    for (int64_t i = 0; i < c.numel(); ++i) o[i] = red::exp_nv_cpu(in[i]);
    return out;
  }, "Test hook: the CPU's copy of CUDA's float64 exp (the one logsumexp's CPU loops use), value by value; on a GPU "
     "torch.exp of float64 gives the same bits.", pybind11::arg("x"));
}

}  // namespace rk
