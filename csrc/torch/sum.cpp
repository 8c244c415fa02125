// reducekit::sum's device-independent half: torch.sum's signature and rules (dims, keepdim,
// dtype=, complex, empty inputs, result layout), the choice between the whole-tensor path and the
// dims engine, and the execution of the engine's plan steps on a backend (CPU or CUDA).
#include <torch/extension.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "torch/frontend.h"
#include "core/faults.h"
#include "engine/op_impl.h"
#include "torch/hooks.h"

namespace rk {

bool is_real_supported(at::ScalarType t) {
  switch (t) {
    case at::kBool: case at::kByte: case at::kChar: case at::kShort: case at::kInt: case at::kLong:
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble: return true;
    default: return false;
  }
}

namespace {

bool is_supported(at::ScalarType t) {
  return is_real_supported(t) || t == at::kComplexHalf || t == at::kComplexFloat || t == at::kComplexDouble;
}

std::string supported_names() {
  std::string s;
  for (int i = 0; i < static_cast<int>(DType::Count); ++i) s += std::string(i ? ", " : "") + kDTypeNames[i];
  return s + ", complex32 (CUDA), complex64, complex128";
}

// `dims` of x put in memory order, the one sort behind the multi-dim order (engine/plan.h), the
// copies and the result's layout: by stride, largest first, equal strides in their given order. A
// broadcast dim (stride 0, size > 1) has no place in memory: it goes outermost, so that the other
// dims keep their order whether a slice still broadcasts or not (a review found expand()ed batches
// whose slices, copied in logical order, differed).
void sort_memory_order(const at::Tensor& x, std::vector<int64_t>& dims) {
  const auto key = [&](int64_t i) {
    return x.size(i) > 1 && x.stride(i) == 0 ? std::numeric_limits<int64_t>::max() : x.stride(i);
  };
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return key(a) > key(b); });
}

}  // namespace

// x itself when dense, else a dense copy whose dims keep x's memory order (sort_memory_order): the
// multi-dim order follows the strides, so a view with gaps is copied in its own dims' order, not
// torch's contiguous one (a permuted view's slice and its batch then read their values alike).
at::Tensor dense_in_order(const at::Tensor& x) {
  if (x.is_non_overlapping_and_dense()) return x;
  const int64_t nd = x.dim();
  std::vector<int64_t> perm(nd), inv(nd);
  std::iota(perm.begin(), perm.end(), 0);
  sort_memory_order(x, perm);
  for (int64_t i = 0; i < nd; ++i) inv[perm[i]] = i;
  return x.permute(perm).contiguous().permute(inv);
}

Plan1 one_step(const at::Tensor& self, const std::vector<bool>& reduced, const Backend& be, bool enters_values, bool kernel_sum) {
  Plan1 s;
  const at::Tensor x = dense_in_order(self);
  s.dense = x;
  bool red[kMaxDims];
  const int nd = static_cast<int>(x.dim());
  for (int i = 0; i < nd; ++i) red[i] = reduced[i];
  const MergedDims m = merge_dims(nd, x.sizes().data(), x.strides().data(), red);
  const Plan p = make_plan(m);
  if (p.nsteps == 1) {
    s.x = x;
    s.kind = p.steps[0].kind;
    s.outer = p.steps[0].outer;
    s.extent = p.steps[0].extent;
    s.inner = p.steps[0].inner;
    return s;
  }
  // Several steps: one run through the dims (the gather step) where the backend has it: with a
  // reduced innermost run (the rows form: runs of at least kGatherDirectMinLanes lanes read in place
  // lane by lane, shorter ones of kGatherStagedMinRunBytes or more staged through shared memory;
  // tuning.h), or a kept innermost run (the columns form) for an operator that enters values one by
  // one. Anything else is copied with the reduced dims last (as_rows); so are the short runs under
  // the hook's gather_staged = 2. The CPU (Backend::gathers_rows) takes the rows form whatever the
  // run's length, but not for the sums of its own kernels (cpu_sum_kernels), which copy.
  Gather g;
  const int elem = static_cast<int>(x.element_size());
  const int64_t run = m.nd > 0 ? m.d[m.nd - 1].size : 0;
  const auto takes = [&] {  // after make_gather filled g
    if (be.gathers)
      return g.columns ? enters_values : run >= kGatherDirectMinLanes * lane_elems(elem) || gather_staged(run, elem, tuning_overrides());
    return be.gathers_rows && !g.columns && !kernel_sum;
  };
  if (p.nsteps > 1 && (be.gathers || be.gathers_rows) && !tuning_overrides().no_gather && make_gather(m, &g) && takes()) {
    s.x = x;
    s.kind = StepKind::Gather;
    s.gather = g;
    s.inner = g.columns ? g.ksize[g.nk - 1].d : 1;
    s.outer = g.K / s.inner;
    s.extent = g.N;
    return s;
  }
  s.x = as_rows(x, reduced, /*kept_in_memory_order=*/true);
  s.outer = s.x.size(0);
  s.extent = s.x.size(1);
  return s;
}

OpDesc step_desc(const Plan1& s, red::OpKind op, bool wide) {
  OpDesc d;
  d.op = op;
  d.kind = s.kind;
  d.outer = s.outer;
  d.extent = s.extent;
  d.inner = s.inner;
  d.gather = s.gather;
  d.in = s.x.const_data_ptr();
  d.in_dtype = to_rk_dtype(s.x);
  d.wide = wide;
  return d;
}

at::Tensor reduce_plan(const at::Tensor& self, const std::vector<bool>& reduced, bool keepdim, red::OpKind op, bool wide,
                       at::ScalarType out_t, const Backend& be) {
  const std::vector<int64_t> out_sizes = reduced_shape(self.sizes(), reduced, keepdim);
  bool unit = true;
  for (int64_t i = 0; i < self.dim(); ++i) unit = unit && (!reduced[i] || self.size(i) == 1);
  if (unit) {  // only dims of size 1 are reduced: each output is one input value
    const at::Tensor& x = self;
    at::Tensor out = OutLoan::result_buffer(0, out_sizes, {}, x.options().dtype(out_t));
    out.copy_((op == red::OpKind::NanSum ? x.masked_fill(x.isnan(), 0) : x).reshape(out_sizes));
    // A sum starts from +0.0, so a sum of the one value -0.0 is +0.0, as torch's (copying it kept -0.0).
    if (at::isFloatingType(out_t)) out.add_(0.0);
    return out;
  }
  const Plan1 s = one_step(self, reduced, be, red::enters_values(op, red::NormOrd::Two),
                           op == red::OpKind::Sum && cpu_sum_kernels(to_rk_dtype(self.scalar_type()), wide));
  OpDesc d = step_desc(s, op, wide);
  at::Tensor out = OutLoan::result_buffer(0, out_sizes, step_result_strides(s, reduced, keepdim, out_sizes, be, &d), self.options().dtype(out_t));
  d.out0 = out.mutable_data_ptr();
  be.op_step(s.x, d);
  // torch's reductions return contiguous results: a backend without output maps wrote the kept dims
  // in the input's memory order, which differs only for permuted inputs.
  return out.is_contiguous() ? out : out.contiguous();
}

namespace {

bool is_exact_dtype(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16 || t == at::kFloat || t == at::kDouble; }

}  // namespace

std::string dims_str(at::IntArrayRef dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// Strides for a result with sizes `out_sizes` that is dense in the memory order of the input's
// kept dims (the order the engine writes it in): kept dims sorted by input stride, largest first.
std::vector<int64_t> result_strides(const at::Tensor& x, const std::vector<bool>& reduced, bool keepdim,
                                    const std::vector<int64_t>& out_sizes) {
  const int64_t nd = x.dim();
  std::vector<int64_t> kept;  // input dims kept in the result
  for (int64_t i = 0; i < nd; ++i)
    if (!reduced[i]) kept.push_back(i);
  std::vector<int64_t> order = kept;
  sort_memory_order(x, order);
  std::vector<int64_t> kept_stride(nd, 1);
  int64_t st = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    kept_stride[*it] = st;
    st *= std::max<int64_t>(x.size(*it), 1);
  }
  std::vector<int64_t> strides;
  strides.reserve(out_sizes.size());
  for (int64_t i = 0; i < nd; ++i) {
    if (!reduced[i]) {
      strides.push_back(kept_stride[i]);
    } else if (keepdim) {
      strides.push_back(1);
    }
  }
  return strides;
}

std::vector<int64_t> step_result_strides(const Plan1& s, const std::vector<bool>& reduced, bool keepdim,
                                         const std::vector<int64_t>& out_sizes, const Backend& be, OpDesc* d) {
  std::vector<int64_t> mem = result_strides(s.dense, reduced, keepdim, out_sizes);
  // Where the map is the identity, the result keeps mem's strides (which differ from contiguous()'s
  // only in dims of size 1, and which results have always had: the corpus pins them).
  if (be.maps_outputs && make_out_map(static_cast<int>(out_sizes.size()), out_sizes.data(), mem.data(), &d->out_map) && d->out_map.nd > 0)
    return {};
  d->out_map = OutMap{};
  return mem;
}

// x (dense or not) with its reduced dims moved last and flattened, in the multi-dim order (by
// stride, largest first), the kept dims in their logical order or (kept_in_memory_order, for a
// result written as the engine writes one in place: result_strides) by stride: a contiguous
// (rows, len) tensor, a view where the layout allows.
at::Tensor as_rows(const at::Tensor& x, const std::vector<bool>& reduced, bool kept_in_memory_order) {
  std::vector<int64_t> perm;
  int64_t rows = 1, len = 1;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (!reduced[i]) {
      perm.push_back(i);
      rows *= x.size(i);
    }
  if (kept_in_memory_order) sort_memory_order(x, perm);
  std::vector<int64_t> red;  // the reduced dims in the multi-dim order: by stride, largest first (engine/plan.h)
  for (int64_t i = 0; i < x.dim(); ++i)
    if (reduced[i]) {
      red.push_back(i);
      len *= x.size(i);
    }
  if (!RK_FAULT_IS(RowsLogicalOrder)) sort_memory_order(x, red);  // planted: the logical order
  perm.insert(perm.end(), red.begin(), red.end());
  return x.permute(perm).reshape({rows, len}).contiguous();
}

// The result's sizes: kept dims, and reduced ones as 1 with keepdim.
std::vector<int64_t> reduced_shape(at::IntArrayRef sizes, const std::vector<bool>& reduced, bool keepdim) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(sizes[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

namespace {
thread_local OutLoan* t_loan = nullptr;  // the innermost loan of this thread's current call
}  // namespace

OutLoan::OutLoan(std::vector<at::Tensor> outs, const at::Tensor& input) : outs_(std::move(outs)), prev_(t_loan) {
  for (auto& o : outs_)  // an out that shares memory with the input would be written while read
    if (o.defined() && (o.device() != input.device() || at::get_overlap_status(o, input) != at::MemOverlapStatus::No)) o = at::Tensor();
  t_loan = this;
}

OutLoan::~OutLoan() { t_loan = prev_; }

at::Tensor OutLoan::result_buffer(size_t k, at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options) {
  if (t_loan && k < t_loan->outs_.size() && t_loan->outs_[k].defined()) {
    at::Tensor& o = t_loan->outs_[k];
    bool fits = o.sizes() == sizes && o.scalar_type() == options.dtype().toScalarType() && o.device() == options.device() &&
                (strides.empty() ? o.is_contiguous() : true);
    for (size_t i = 0; fits && !strides.empty() && i < sizes.size(); ++i)
      fits = sizes[i] <= 1 || o.stride(static_cast<int64_t>(i)) == strides[i];  // a dim of one value has any stride
    if (fits) {
      at::Tensor given = o;
      o = at::Tensor();
      return given;
    }
  }
  return strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
}

exact::OutFmt out_fmt(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return exact::OutFmt::Half;
    case at::kBFloat16: return exact::OutFmt::BFloat16;
    case at::kFloat: return exact::OutFmt::Single;
    case at::kDouble: return exact::OutFmt::Double;
    default: TORCH_CHECK(false, "reducekit: internal error: no exact rounding format for ", t);
  }
}

// torch's dim rules and messages, built with std::to_string: the H200 image's toolchain segfaults
// when an int64 is streamed into an error message (at::dim_list_to_bitset and maybe_wrap_dim do).
std::vector<bool> reduced_dims(at::IntArrayRef dims, int64_t nd) {
  std::vector<bool> red(nd, dims.empty());
  const int64_t lo = nd > 0 ? -nd : -1, hi = nd > 0 ? nd - 1 : 0;
  std::vector<bool> seen(std::max<int64_t>(nd, 1), false);
  for (int64_t d : dims) {
    TORCH_CHECK_INDEX(d >= lo && d <= hi, "Dimension out of range (expected to be in range of [" + std::to_string(lo) + ", " +
                                               std::to_string(hi) + "], but got " + std::to_string(d) + ")");
    const int64_t w = d < 0 ? d + std::max<int64_t>(nd, 1) : d;
    TORCH_CHECK(!seen[w], "dim " + std::to_string(w) + " appears multiple times in the list of dims");
    seen[w] = true;
    if (nd > 0) red[w] = true;
  }
  return red;
}

Plan plan_for(at::IntArrayRef sizes, at::IntArrayRef strides, const std::vector<bool>& reduced) {
  bool red[kMaxDims];
  const int nd = static_cast<int>(sizes.size());
  for (int i = 0; i < nd; ++i) red[i] = reduced[i];
  return make_plan(merge_dims(nd, sizes.data(), strides.data(), red));
}

namespace {

// torch.sum's argument checks: layout, dtypes, device, rank.
void check_sum_args(const at::Tensor& self, std::optional<at::ScalarType> dtype, Method m) {
  TORCH_CHECK_TYPE(self.layout() == at::kStrided, "reducekit.sum: input layout ", self.layout(),
                   " is not supported; only strided (dense) tensors are. Convert with input.to_dense().");
  TORCH_CHECK_TYPE(is_supported(self.scalar_type()), "reducekit.sum: input dtype ", self.scalar_type(), " is not supported. Supported dtypes: ",
                   supported_names(), ". Convert first, for example input.to(torch.float32).");
  if (dtype.has_value()) {
    TORCH_CHECK_TYPE(is_supported(*dtype), "reducekit.sum: dtype=", *dtype, " is not supported. Supported dtypes: ",
                     supported_names(), ".");
  }
  check_device(m, self);
  // RuntimeError, as torch's; reducekit.sum reduces more dims over every dim by flattening.
  TORCH_CHECK(self.dim() <= kMaxDims, "reducekit.sum: only tensors with up to " + std::to_string(kMaxDims) +
                                          " dims are supported (input has " + std::to_string(self.dim()) +
                                          "); reduce over every dim, or reshape to fewer dims first.");
}

// A complex sum (or a complex input summed into a real dtype=) through real sums.
at::Tensor sum_complex(at::Tensor x, const std::vector<bool>& reduced, at::OptionalIntArrayRef dim, bool keepdim, at::ScalarType res,
                       c10::string_view method, const Backend& be) {
  if (!at::isComplexType(res)) return sum_impl(x.to(res), dim, keepdim, res, method, be);  // torch: cast, then sum
  if (x.scalar_type() != res) x = x.to(res);
  // A complex sum is two real sums: the real view's trailing (re, im) dim is kept.
  const at::Tensor xr = at::view_as_real(x);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (reduced[i]) dims.push_back(i);
  if (dims.empty()) return x.clone();  // a 0-dim input: nothing to reduce (and dim=() would mean every dim)
  at::Tensor r = sum_impl(xr, dims, keepdim, std::nullopt, method, be);
  return at::view_as_complex(r.is_contiguous() || r.stride(-1) == 1 ? r : r.contiguous());
}

// torch's dtype= rule: the input is cast to dtype, then summed. The engine reads 16-bit floats
// into float32 and float32 into float64 anyway, so those widenings need no cast; integers sum
// exactly in int64 and wrap like torch's narrower integer sums; other conversions cast first.
at::Tensor cast_for_sum(at::Tensor x, at::ScalarType res) {
  if (res == at::kBool && x.scalar_type() != at::kBool) x = x.ne(0);
  if (at::isIntegralType(res, /*includeBool=*/false) && at::isFloatingType(x.scalar_type())) x = x.to(res);
  if (at::isFloatingType(res) && x.scalar_type() != res) {
    const at::ScalarType xt = x.scalar_type();
    const bool widening = ((xt == at::kHalf || xt == at::kBFloat16) && res == at::kFloat) || (xt == at::kFloat && res == at::kDouble);
    if (!widening) x = x.to(res);
  }
  return x;
}

}  // namespace

at::Tensor sum_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype,
                    c10::string_view method, const Backend& be) {
  Method m = parse_method(method);
  check_sum_args(self, dtype, m);
  const at::ScalarType in_t = self.scalar_type();
  const bool full = !dim.has_value();
  const std::vector<bool> reduced = full ? std::vector<bool>(self.dim(), true) : reduced_dims(*dim, self.dim());
  const bool covers_all = std::all_of(reduced.begin(), reduced.end(), [](bool b) { return b; });
  const at::ScalarType res = dtype.has_value() ? *dtype : (at::isIntegralType(in_t, /*includeBool=*/true) ? at::kLong : in_t);
  // Integer sums are exact already: method='exact' with an integer result is the integer sum.
  if (m == Method::Exact && at::isIntegralType(res, /*includeBool=*/true)) m = Method::Auto;
  if (m != Method::Auto && m != Method::Exact) {
    TORCH_CHECK_VALUE(covers_all, "reducekit.sum: method '", method_info(m).name,
                      "' reduces the whole tensor only, but dim=", dims_str(*dim), " keeps some dims. method='auto' (or 'exact') reduces over any dims.");
    TORCH_CHECK_TYPE(!at::isComplexType(in_t) && !at::isComplexType(res), "reducekit.sum: method '", method_info(m).name,
                     "' takes real dtypes only; complex input reduces with method='auto' or 'exact'.");
  }

  std::vector<int64_t> out_sizes = reduced_shape(self.sizes(), reduced, keepdim);
  if (self.numel() == 0) return at::zeros(out_sizes, self.options().dtype(res));

  // Conjugate and negative views are lazy bits the kernels do not read: resolve them.
  at::Tensor x = self;
  if (x.is_conj()) x = x.resolve_conj();
  if (x.is_neg()) x = x.resolve_neg();
  if (at::isComplexType(res) || x.is_complex()) return sum_complex(x, reduced, dim, keepdim, res, method, be);

  x = cast_for_sum(x, res);
  const bool int_res = at::isIntegralType(res, /*includeBool=*/true);
  const at::ScalarType engine_res = int_res ? at::kLong : res;  // integer sums are int64, then cast
  auto finish = [&](at::Tensor r) { return r.scalar_type() != res ? r.to(res) : r; };

  if (m == Method::Exact) {
    // Correctly rounded sums of each output's slice (engine/exact.h), written in res directly: a
    // float16 input with dtype=float32 is rounded once, from the exact sum, to float32.
    if (be.exact_columns && !covers_all) {
      // Reduced dims that merge into one strided run (columns, and a batch of them): read in place
      // where the backend has a columns path for the dtype, the result dense in the memory order
      // of the kept dims (as the engine writes one).
      const at::Tensor dense = dense_in_order(x);
      bool red[kMaxDims];
      for (int64_t i = 0; i < dense.dim(); ++i) red[i] = reduced[i];
      const Plan p = make_plan(merge_dims(static_cast<int>(dense.dim()), dense.sizes().data(), dense.strides().data(), red));
      if (p.nsteps == 1 && p.steps[0].kind == StepKind::Columns) {
        at::Tensor out = OutLoan::result_buffer(0, out_sizes, result_strides(dense, reduced, keepdim, out_sizes), self.options().dtype(res));
        if (be.exact_columns(dense, p.steps[0].outer, p.steps[0].extent, p.steps[0].inner, out)) return out.is_contiguous() ? out : out.contiguous();
      }
    }
    const at::Tensor rows = as_rows(x, reduced);
    const at::Tensor out = OutLoan::result_buffer(0, out_sizes, {}, self.options().dtype(res));
    at::Tensor flat = out.view({rows.size(0)});
    be.exact_rows(rows, flat, /*words=*/false);
    return out;
  }

  if (m != Method::Auto || (full && result_dtype(x.scalar_type()) == engine_res)) {
    // The whole-tensor path: dim=None (single_pass on CUDA), or a gallery method, whose dim list
    // covers every dim (checked above).
    at::Tensor r = be.full(x, m).reshape(out_sizes);
    return finish(r.scalar_type() != engine_res ? r.to(engine_res) : r);
  }

  // The dims engine, in the plan's steps (16-bit -> float32 and float32 -> float64 read in place: wide).
  const bool wide = at::isFloatingType(res) && x.scalar_type() != res;
  return finish(reduce_plan(x, reduced, keepdim, red::OpKind::Sum, wide, engine_res, be));
}

at::Tensor exact_partial_impl(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, const Backend& be) {
  TORCH_CHECK_TYPE(self.layout() == at::kStrided, "reducekit.exact_partial: input layout ", self.layout(),
                   " is not supported; only strided (dense) tensors are. Convert with input.to_dense().");
  TORCH_CHECK_TYPE(is_exact_dtype(self.scalar_type()), "reducekit.exact_partial: input dtype ", c10::getDtypeNames(self.scalar_type()).first,
                   " is not supported; it takes float16, bfloat16, float32 or float64. Integer sums are exact already "
                   "(reducekit.sum); a complex tensor's parts: torch.view_as_real(input), reduced over the other dims.");
  const int64_t nd = self.dim();
  const std::vector<bool> reduced = dim.has_value() ? reduced_dims(*dim, nd) : std::vector<bool>(nd, true);
  std::vector<int64_t> out_sizes = reduced_shape(self.sizes(), reduced, keepdim);
  out_sizes.push_back(exact::kExactWords);
  const auto opts = self.options().dtype(at::kLong);
  if (self.numel() == 0) return at::zeros(out_sizes, opts);
  at::Tensor x = self.is_neg() ? self.resolve_neg() : self;
  const at::Tensor rows = as_rows(x, reduced);
  at::Tensor out = at::empty({rows.size(0), exact::kExactWords}, opts);
  be.exact_rows(rows, out, /*words=*/true);
  return out.view(out_sizes);
}

at::Tensor exact_round_impl(const at::Tensor& words, at::ScalarType dtype, const Backend& be) {
  TORCH_CHECK_TYPE(words.layout() == at::kStrided && words.scalar_type() == at::kLong,
                   "reducekit.exact_round: words must be a dense int64 tensor (from reducekit.exact_partial), got ",
                   c10::getDtypeNames(words.scalar_type()).first, " ", words.layout());
  TORCH_CHECK_VALUE(words.dim() >= 1 && words.size(-1) == exact::kExactWords, "reducekit.exact_round: words must have a last dim of " +
                    std::to_string(exact::kExactWords) + " (reducekit.EXACT_WORDS), got shape " + dims_str(words.sizes()) +
                    ". Pass what exact_partial returned, or partials summed over another dim.");
  TORCH_CHECK_TYPE(is_exact_dtype(dtype), "reducekit.exact_round: dtype=", c10::getDtypeNames(dtype).first,
                   " is not supported; round to float16, bfloat16, float32 or float64.");
  std::vector<int64_t> out_sizes(words.sizes().begin(), words.sizes().end() - 1);
  const at::Tensor w = words.reshape({-1, exact::kExactWords}).contiguous();
  at::Tensor out = at::empty({w.size(0)}, words.options().dtype(dtype));
  if (w.size(0) > 0) be.exact_round(w, out);
  return out.view(out_sizes);
}

}  // namespace rk
