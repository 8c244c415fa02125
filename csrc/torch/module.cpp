// reducekit._C, assembled: the fast calls (torch/library.cpp), the tables that describe the library
// (below: methods, ops, dtypes, faults, the dims plan, auto's choice, compiled configurations) and
// the test and tuning hooks (torch/hooks.cpp, names starting with an underscore).
#include <torch/extension.h>

#include "core/faults.h"
#include "core/methods.h"
#include "core/op_table.h"
#include "cpu/parallel_cpu.h"
#include "engine/exact.h"
#include "engine/plan.h"
#include "torch/frontend.h"
#include "torch/hooks.h"
#include "tuning/tuning.h"

#ifdef RK_WITH_CUDA
#include "cuda/launchers.h"
#endif

namespace rk {
void bind_calls(pybind11::module_& m);  // torch/library.cpp

namespace {

// The public introspection of reducekit._C: every table the Python package and the tests read.
void bind_tables(pybind11::module_& m) {
  m.def("ops", [] {
    pybind11::list out;
    for (const auto& t : rk::red::kOps) out.append(t.name);
    return out;
  }, "The op names reducekit::reduce takes");
  m.def("op_table", [] {
    pybind11::list out;
    for (const auto& t : rk::red::kOps) {
      pybind11::dict d;
      d["name"] = t.name;
      d["public_name"] = t.public_name;
      d["outputs"] = t.outputs;
      d["float_only"] = t.float_only;
      d["takes_dtype"] = t.takes_dtype;
      d["differentiable"] = t.grad != rk::red::Grad::None;
      d["identity"] = t.empty != rk::red::Empty::Error;
      d["gallery"] = t.gallery != rk::GalleryOp::None;
      out.append(d);
    }
    return out;
  }, "core/op_table.h, a dict per operator of reducekit::reduce: name, public_name (reducekit's function), outputs, "
     "float_only, takes_dtype, differentiable, identity (an empty slice has a value), gallery (a gallery strategy serves it)");
  m.def("dims_plan", [](std::vector<int64_t> sizes, std::vector<int64_t> strides, std::vector<int64_t> dims, int64_t elem_bytes) {
    TORCH_CHECK_VALUE(sizes.size() == strides.size() && sizes.size() <= static_cast<size_t>(rk::kMaxDims), "dims_plan: bad shape");
    std::vector<bool> red(sizes.size(), dims.empty());
    for (int64_t d : dims) red.at(d < 0 ? d + static_cast<int64_t>(sizes.size()) : d) = true;
    const rk::Plan p = rk::plan_for(sizes, strides, red);
    pybind11::list steps;
    for (int i = 0; i < p.nsteps; ++i) {
      const rk::Step& s = p.steps[i];
      pybind11::dict d;
      d["kind"] = rk::step_name(s.kind);
      d["outer"] = s.outer;
      d["extent"] = s.extent;
      d["inner"] = s.inner;
      d["depth"] = rk::step_depth(s.extent, static_cast<int>(elem_bytes));
      steps.append(d);
    }
    return steps;
  }, "The dims engine's plan for a dense tensor of (sizes, strides) reduced over dims ([] = all): a list of steps "
     "{kind: rows|columns, outer, extent, inner, depth (additions on the longest path in the CUDA order for an element "
     "of elem_bytes bytes)}, one per merged reduced run, innermost first; a plan of several is reduced as one run "
     "(engine/plan.h: the multi-dim order), gathered on CUDA or copied", pybind11::arg("sizes"), pybind11::arg("strides"),
     pybind11::arg("dims"), pybind11::arg("elem_bytes"));
  m.def("methods", [] {
    pybind11::list out;
    for (const auto& i : rk::kMethods) {
      pybind11::dict d;
      d["name"] = i.name;
      d["devices"] = i.devices;
      d["deterministic_int"] = i.deterministic_int;
      d["deterministic_float"] = i.deterministic_float;
      d["launches"] = i.launches;
      d["host_sync"] = i.host_sync;
      d["source"] = i.source;
      d["idea"] = i.idea;
      d["ops"] = i.ops;
      out.append(d);
    }
    return out;
  });
  m.def("faults", [] {
    pybind11::list out;
    for (const auto& f : rk::kFaults) out.append(pybind11::make_tuple(f.name, f.what));
    return out;
  }, "(name, what it plants) of every planted fault a build can compile in (csrc/core/faults.h)");
  m.attr("EXACT_WORDS") = rk::exact::kExactWords;
  m.attr("EXACT_LIMBS") = rk::exact::kUnivLimbs;
  m.attr("EXACT_BASE") = rk::exact::kUnivBase;
  m.attr("fault") = rk::kFaults[static_cast<int>(rk::kFault)].name;
  m.def("auto_choice", [](const std::string& dtype, int64_t n, int cc, bool captured) {
    int d = 0;
    while (d < static_cast<int>(rk::DType::Count) && dtype != rk::kDTypeNames[d]) ++d;
    TORCH_CHECK_VALUE(d < static_cast<int>(rk::DType::Count), "reducekit._C.auto_choice: unknown dtype '" + dtype + "'");
    const rk::AutoChoice c = rk::choose_auto(static_cast<rk::DType>(d), n, cc, captured);
    return pybind11::make_tuple(rk::method_info(c.method).name, c.block, c.unroll, c.grid);
  }, "(method, block, unroll, grid) that auto picks on CUDA for this dtype name, size and compute capability, in an eager call "
     "or (captured=True) inside CUDA graph capture", pybind11::arg("dtype"), pybind11::arg("n"), pybind11::arg("cc"),
     pybind11::arg("captured") = false);
  m.def("cpu_parallel_regions", [] { return rk::parallel_regions(); },
        "parallel regions the CPU backend has started (csrc/cpu/parallel_cpu.h): small reductions start none");
  m.def("dtypes", [] {
    pybind11::list out;
    for (int i = 0; i < static_cast<int>(rk::DType::Count); ++i) out.append(rk::kDTypeNames[i]);
    return out;
  });
  m.def("single_pass_configs", [] {
    pybind11::list out;
#ifdef RK_WITH_CUDA
    for (int i = 0; i < rk::single_pass_config_count(); ++i) {
      int block = 0, unroll = 0;
      rk::single_pass_config(i, &block, &unroll);
      out.append(pybind11::make_tuple(block, unroll));
    }
#endif
    return out;
  }, "(block, unroll) pairs compiled for single_pass (empty in a CPU-only build)");
#ifdef RK_WITH_CUDA
  m.attr("cuda_built") = true;
#else
  m.attr("cuda_built") = false;
#endif
}

}  // namespace
}  // namespace rk

PYBIND11_MODULE(_C, m) {
  m.doc() = "reducekit native extension: registers torch.ops.reducekit and exposes the method registry";
  rk::bind_calls(m);
  rk::bind_tables(m);
  rk::bind_hooks(m);
}
