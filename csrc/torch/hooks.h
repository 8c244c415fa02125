// The test and tuning hooks of reducekit._C (torch/hooks.cpp) and the overrides they set.
#pragma once

#include <pybind11/pybind11.h>

#include "tuning/tuning.h"

namespace rk {

// The tuning harnesses' and tests' overrides of the launch rules (all zero: the rules). Set only by
// the hooks below, from one thread (tests, benchmarks/tune_*.py); read by the CUDA backend per launch.
TuningOverrides& tuning_overrides();

// Binds _dims_columns_config, _dims_gather_staged, _dims_fused_finish, _dims_fused_row_blocks, _ops_rows_lanes, _columns_wide, _rows_select, _rows_short_lanes, _rows_stripes, _exact_config, _exact_configs and _single_pass_slots
// (CUDA builds; none in a CPU-only build), and _dims_gather and _exp_nv (every build).
void bind_hooks(pybind11::module_& m);

}  // namespace rk
