// reducekit::reduce's device-independent half: every torch reduction but sum (mean, prod, amax,
// amin, aminmax, nansum, nanmean, all, any, count_nonzero, var, std, var_mean, std_mean,
// vector_norm, logsumexp, argmax, argmin) with torch's rules (result dtypes, integer promotion,
// dtype=, empty inputs and their errors, complex inputs), mapped onto one engine step of the
// op's operator (engine/op_desc.h) on a backend. The whole-tensor gallery strategies serve prod,
// amax, amin, all and any too (method=...).
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "engine/op_impl.h"
#include "torch/frontend.h"

namespace rk {
namespace {

using red::OpKind;

using red::op_name;
using red::op_traits;

OpKind parse_op(c10::string_view name) {
  const OpKind op = red::op_from_name(std::string_view(name.data(), name.size()));
  if (op != OpKind::Count) return op;
  std::string all;
  for (const auto& t : red::kOps) all += std::string(all.empty() ? "" : ", ") + t.name;
  TORCH_CHECK_VALUE(false, "reducekit.reduce: unknown op '", std::string(name.data(), name.size()), "'. Ops: ", all, ".");
}

bool two_outputs(OpKind op) { return op_traits(op).outputs == 2; }
// Ops without an identity: an empty reduction raises, as torch's do.
bool needs_values(OpKind op) { return op_traits(op).empty == red::Empty::Error; }
bool takes_dtype(OpKind op) { return op_traits(op).takes_dtype; }

red::NormOrd norm_ord(double ord) {
  if (ord == 0) return red::NormOrd::Zero;
  if (ord == 1) return red::NormOrd::One;
  if (ord == 2) return red::NormOrd::Two;
  if (ord == std::numeric_limits<double>::infinity()) return red::NormOrd::Inf;
  if (ord == -std::numeric_limits<double>::infinity()) return red::NormOrd::NegInf;
  return red::NormOrd::P;
}

std::string ord_str(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::string s = std::to_string(ord);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// What an empty reduction (no values per output) gives, for the ops that have an identity.
double empty_value(OpKind op) {
  switch (op_traits(op).empty) {
    case red::Empty::Zero: return 0;
    case red::Empty::One: return 1;
    case red::Empty::NegInf: return -std::numeric_limits<double>::infinity();
    case red::Empty::NaN: return std::numeric_limits<double>::quiet_NaN();
    case red::Empty::Error: break;  // raised before an empty result is made
  }
  TORCH_CHECK(false, "reducekit.", op_name(op), ": internal error: an empty reduction of an op without an identity");
}

// The ops' result dtype (before dtype= for those that take it).
at::ScalarType natural_result(OpKind op, at::ScalarType in) {
  const bool integral = at::isIntegralType(in, /*includeBool=*/true);
  switch (op_traits(op).result) {
    case red::Result::Input: return in;  // var_mean/std_mean: the var part real, below
    case red::Result::LongIfIntegral: return integral ? at::kLong : in;
    case red::Result::Truth: return in == at::kByte ? at::kByte : at::kBool;
    case red::Result::Long: return at::kLong;
    case red::Result::DefaultIfIntegral: return integral ? c10::typeMetaToScalarType(at::get_default_dtype()) : in;
    case red::Result::RealValue: return c10::toRealValueType(in);
  }
  TORCH_CHECK(false, "reducekit: internal error: bad result rule");
}

void check_input(OpKind op, const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  const at::ScalarType t = self.scalar_type();
  const auto name = [op] { return std::string("reducekit.") + op_name(op); };  // built only for a message
  TORCH_CHECK_TYPE(self.layout() == at::kStrided, name(), ": input layout ", self.layout(),
                   " is not supported; only strided (dense) tensors are. Convert with input.to_dense().");
  TORCH_CHECK_TYPE(is_real_supported(t) || at::isComplexType(t), name(), ": input dtype ", t,
                   " is not supported; it takes bool, integer, float and complex tensors.");
  const bool floating = at::isFloatingType(t) || at::isComplexType(t);
  if (dtype.has_value()) {
    TORCH_CHECK_VALUE(takes_dtype(op), name(), " takes no dtype= argument (torch's ", op_name(op), " has none).");
    TORCH_CHECK_TYPE(is_real_supported(*dtype) || at::isComplexType(*dtype), name(), ": dtype=", *dtype, " is not supported.");
  }
  switch (op) {
    case OpKind::NanMean:  // torch's nanmean checks the input's dtype even with dtype= (its words)
      TORCH_CHECK(floating, name(), "(): expected input to have floating point or complex dtype but got ", c10::toString(t),
                  ". Convert first, for example input.float().");
      break;
    case OpKind::Mean:
      TORCH_CHECK(floating || (dtype.has_value() && (at::isFloatingType(*dtype) || at::isComplexType(*dtype))), name(),
                  "(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ",
                  c10::toString(t), ". Pass dtype=torch.float32 (or another float dtype) to average integers.");
      break;
    case OpKind::Var: case OpKind::Std: case OpKind::VarMean: case OpKind::StdMean:
      TORCH_CHECK(floating, name(), ": std and var only support floating point and complex dtypes, got ", c10::toString(t),
                  ". Convert first, for example input.float().");
      break;
    case OpKind::Norm:
      TORCH_CHECK(floating, "reducekit.linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
                  c10::toString(t), ". Convert first, for example input.float().");
      if (dtype.has_value()) {  // torch's three dtype= rules, in its words
        const at::ScalarType d = *dtype;
        TORCH_CHECK(at::isFloatingType(d) || at::isComplexType(d), "reducekit.linalg.vector_norm: dtype should be floating point or "
                    "complex. Got ", c10::toString(d), ".");
        TORCH_CHECK(at::isComplexType(d) == at::isComplexType(t), "reducekit.linalg.vector_norm: dtype should be ",
                    at::isComplexType(t) ? "complex for complex" : "real for real", " inputs, but got ", c10::toString(d), ".");
        TORCH_CHECK(c10::promoteTypes(t, d) == d, "reducekit.linalg.vector_norm: the dtype of the input (", c10::toString(t),
                    ") should be convertible without narrowing to the specified dtype (", c10::toString(d),
                    "); pass a dtype at least as wide as the input's, or cast the input first.");
      }
      break;
    // torch's exception types: NotImplementedError for amax/amin/aminmax, RuntimeError for argmax/argmin.
    case OpKind::Amax: case OpKind::Amin: case OpKind::AMinMax:
      TORCH_CHECK_NOT_IMPLEMENTED(!at::isComplexType(t), name(), ": not implemented for '", c10::toString(t),
                                  "': complex numbers are not ordered. Reduce input.abs() or input.real instead.");
      break;
    case OpKind::ArgMax: case OpKind::ArgMin:
      TORCH_CHECK(t != at::kBool, name(), "(): does not support bool input (as torch's). Convert first, for example "
                  "input.to(torch.uint8).");
      TORCH_CHECK(!at::isComplexType(t), name(), ": does not support complex input (complex numbers are not ordered), got ",
                  c10::toString(t), ". Reduce input.abs() or input.real instead.");
      break;
    default: break;
  }
}

// The engine step of `op` over x (real, engine dtype): outputs of dtypes `dts`, allocated here
// once in their final layout.
std::vector<at::Tensor> run_op(OpKind op, const at::Tensor& x, const std::vector<bool>& reduced, const red::Params& prm,
                               red::NormOrd ord, bool wide, const c10::SmallVector<at::ScalarType, 2>& dts,
                               const std::vector<int64_t>& out_sizes, bool keepdim, const Backend& be) {
  const Plan1 s = one_step(x, reduced, be, red::enters_values(op, ord));
  OpDesc d = step_desc(s, op, wide);
  d.ord = ord;
  d.params = prm;
  std::vector<at::Tensor> outs;
  outs.reserve(dts.size());
  const std::vector<int64_t> strides = step_result_strides(s, reduced, keepdim, out_sizes, be, &d);
  for (const auto dt : dts) outs.push_back(OutLoan::result_buffer(outs.size(), out_sizes, strides, x.options().dtype(dt)));
  d.out0 = outs[0].mutable_data_ptr();
  if (outs.size() > 1) d.out1 = outs[1].mutable_data_ptr();
  be.op_step(s.x, d);
  for (auto& o : outs)  // (a backend without output maps wrote the kept dims in memory order)
    if (!o.is_contiguous()) o = o.contiguous();
  return outs;
}

// The gallery's name for an op it may serve, or nullptr.
const char* gallery_name(OpKind op, GalleryOp* g) {
  *g = op_traits(op).gallery;
  return *g == GalleryOp::None ? nullptr : kGalleryOpNames[static_cast<int>(*g)];
}

}  // namespace

at::Tensor reduce_gallery(const at::Tensor& self, OpKind op, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<at::ScalarType> dtype, Method m, const Backend& be) {
  const std::string name = std::string("reducekit.") + op_name(op);
  GalleryOp g = GalleryOp::Sum;
  const char* gname = gallery_name(op, &g);
  const bool integral = at::isIntegralType(self.scalar_type(), /*includeBool=*/true);
  if (!gname || !method_serves(m, gname, integral)) {
    std::string can;
    for (const auto& i : kMethods)
      if (i.id != Method::Auto && gname && method_serves(i.id, gname, integral)) can += std::string(can.empty() ? "" : ", ") + i.name;
    TORCH_CHECK_VALUE(false, name, ": method '", method_info(m).name, "' does not serve ", op_name(op),
                      integral ? "" : " of floating-point input", ". ",
                      can.empty() ? std::string("Only method='auto' does.")
                                  : "Methods that do: " + can + " (and 'auto', which also reduces over dims).");
  }
  TORCH_CHECK_TYPE(!self.is_complex(), name, ": method '", method_info(m).name, "' takes real dtypes only; complex input reduces with method='auto'.");
  const int64_t nd = self.dim();
  const std::vector<bool> reduced = dim.has_value() ? reduced_dims(*dim, nd) : std::vector<bool>(nd, true);
  TORCH_CHECK_VALUE(std::all_of(reduced.begin(), reduced.end(), [](bool b) { return b; }), name, ": method '", method_info(m).name,
                    "' reduces the whole tensor only, but dim=", dims_str(*dim), " keeps some dims. method='auto' reduces over any dims.");
  at::Tensor x = self.is_neg() ? self.resolve_neg() : self;
  if (dtype.has_value() && *dtype != x.scalar_type()) x = x.to(*dtype);
  // Empty inputs have no launch to make: auto gives the identity (or torch's error).
  if (x.numel() == 0) return reduce_impl(x, op_name(op), dim, keepdim, std::nullopt, 2.0, 1.0, "auto", be)[0];
  const at::ScalarType res = natural_result(op, x.scalar_type());
  at::Tensor r = be.full_op(x, m, g);
  if (op == OpKind::All || op == OpKind::Any) r = r.ne(0);
  return r.to(res).reshape(reduced_shape(self.sizes(), reduced, keepdim));
}

namespace {

using Outputs = std::vector<at::Tensor>;

// A reducekit::reduce call with its dims resolved: the shared inputs of the steps below.
struct Call {
  OpKind op;
  std::string name;  // "reducekit.<public name>", for messages
  c10::string_view op_name;
  at::OptionalIntArrayRef dim;
  bool keepdim;
  double ord_value, correction;
  c10::string_view method;
  int64_t nd;
  bool flat_arg;  // argmax/argmin without a dim: the flattened input (its logical order)
  std::vector<bool> reduced;
  std::vector<int64_t> out_sizes;
  int64_t n;  // values per output
};

// The input the engine reads and the result dtype: torch's promotion, dtype= casting the input
// first (16-bit -> float32 and float32 -> float64 are read in place: the `wide` outputs).
struct Promoted {
  at::Tensor x;
  at::ScalarType res;
  bool wide = false;
};

Promoted promote(const Call& c, const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  const OpKind op = c.op;
  at::Tensor x = self;
  if (x.is_conj()) x = x.resolve_conj();
  if (x.is_neg()) x = x.resolve_neg();
  at::ScalarType res = natural_result(op, x.scalar_type());
  bool wide = false;
  if (dtype.has_value()) {
    res = op == OpKind::Norm ? c10::toRealValueType(*dtype) : *dtype;
    const at::ScalarType xt = x.scalar_type();
    const bool widening = ((xt == at::kHalf || xt == at::kBFloat16) && *dtype == at::kFloat) || (xt == at::kFloat && *dtype == at::kDouble);
    if (widening && op != OpKind::Prod) {
      wide = true;
    } else if (xt != *dtype) {
      x = x.to(*dtype);
    }
  }
  if ((op == OpKind::NanSum || op == OpKind::Prod) && at::isIntegralType(res, true) && !at::isIntegralType(x.scalar_type(), true))
    x = x.to(res);  // a float input with an integer dtype=: torch casts, then reduces
  if (op == OpKind::LogSumExp && at::isIntegralType(x.scalar_type(), true)) x = x.to(res);

  return {x, res, wide};
}

// torch's errors for empty reductions of ops without an identity (and vector_norm's negative or
// infinite ord).
void check_empty(const Call& c, const at::Tensor& self) {
  const OpKind op = c.op;
  const std::string& name = c.name;
  const at::OptionalIntArrayRef dim = c.dim;
  const bool flat_arg = c.flat_arg;
  const int64_t n = c.n, nd = c.nd;
  const double ord_value = c.ord_value;
  const std::vector<bool>& reduced = c.reduced;
  const int64_t nout = c10::multiply_integers(c.out_sizes);
  if (needs_values(op) && (n == 0 || flat_arg) && (nout > 0 || flat_arg || !dim.has_value())) {
    if (!dim.has_value() || flat_arg) {
      TORCH_CHECK_INDEX(!(op == OpKind::ArgMax || op == OpKind::ArgMin), name,
                        "(): Expected reduction dim to be specified for input.numel() == 0.");
      TORCH_CHECK(op != OpKind::AMinMax, name, "(): cannot compute aminmax over an empty dimension as the operation has no identity.");
      TORCH_CHECK(false, name, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
    }
    int64_t zd = 0;
    for (int64_t i = 0; i < nd; ++i)
      if (reduced[i] && self.size(i) == 0) zd = i;
    TORCH_CHECK_INDEX(false, name + "(): Expected reduction dim " + std::to_string(zd) + " to have non-zero size.");
  }
  if (op == OpKind::Norm && n == 0 && nout > 0) {
    TORCH_CHECK(!(ord_value < 0 || std::isinf(ord_value)), "reducekit.linalg.vector_norm cannot compute the ", ord_str(ord_value),
                " norm on an empty tensor because the operation does not have an identity");
  }
}

// Complex inputs, through real views or a nonzero mask: the outputs, or nothing for a real x.
std::optional<std::vector<at::Tensor>> reduce_complex(const Call& c, const at::Tensor& x, const Backend& be) {
  const OpKind op = c.op;
  const c10::string_view op_name_ = c.op_name, method = c.method;
  const at::OptionalIntArrayRef dim = c.dim;
  const bool keepdim = c.keepdim;
  const double ord_value = c.ord_value, correction = c.correction;
  const int64_t n = c.n, nd = c.nd;
  const std::vector<bool>& reduced = c.reduced;
  const std::vector<int64_t>& out_sizes = c.out_sizes;
  if (op == OpKind::LogSumExp && at::isComplexType(x.scalar_type()) && n == 0)
    return Outputs{at::full(out_sizes, -std::numeric_limits<double>::infinity(), x.options())};
  if (at::isComplexType(x.scalar_type())) {
    switch (op) {
      case OpKind::All: case OpKind::Any: case OpKind::CountNonzero:
        return reduce_impl(x.ne(0), op_name_, dim, keepdim, std::nullopt, ord_value, correction, method, be);
      case OpKind::Norm:
        return reduce_impl(x.abs(), op_name_, dim, keepdim, std::nullopt, ord_value, correction, method, be);
      case OpKind::Mean: {
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < nd; ++i)
          if (reduced[i]) dims.push_back(i);
        if (dims.empty()) return Outputs{x.clone()};
        at::Tensor r = reduce_impl(at::view_as_real(x), op_name_, dims, keepdim, std::nullopt, ord_value, correction, method, be)[0];
        return Outputs{at::view_as_complex(r.contiguous())};
      }
      case OpKind::NanSum: case OpKind::NanMean: {
        // A complex value is NaN when either part is: it counts as missing whole, as in torch.
        const at::Tensor nan = at::isnan(x);
        const at::Tensor z = at::where(nan, at::zeros({}, x.options()), x);
        const auto d = dim.has_value() ? dim : at::OptionalIntArrayRef(at::IntArrayRef{});
        at::Tensor s = sum_impl(z, d, keepdim, std::nullopt, "auto", be);
        if (op == OpKind::NanSum) return Outputs{s};
        at::Tensor cnt = sum_impl(nan.logical_not(), d, keepdim, std::nullopt, "auto", be);
        return Outputs{s / cnt.to(c10::toRealValueType(x.scalar_type()))};
      }
      case OpKind::Var: case OpKind::Std: case OpKind::VarMean: case OpKind::StdMean: {
        // var(z) = var(re) + var(im) with the same n - correction; the mean is complex.
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < nd; ++i)
          if (reduced[i]) dims.push_back(i);
        const bool with_mean = op == OpKind::VarMean || op == OpKind::StdMean;
        const at::Tensor xr = at::view_as_real(x);
        if (dims.empty()) {  // nothing reduced: n = 1
          auto r = reduce_impl(at::real(x).unsqueeze(-1), with_mean ? "var_mean" : "var", std::vector<int64_t>{-1}, false, std::nullopt,
                               ord_value, correction, method, be);
          at::Tensor v = r[0] * 2;  // both parts
          if (op == OpKind::Std || op == OpKind::StdMean) v = v.sqrt();
          if (!with_mean) return Outputs{v};
          return Outputs{v, x.clone()};
        }
        auto r = reduce_impl(xr, with_mean ? "var_mean" : "var", dims, keepdim, std::nullopt, ord_value, correction, method, be);
        at::Tensor v = r[0].sum(-1);
        if (op == OpKind::Std || op == OpKind::StdMean) v = v.sqrt();
        if (!with_mean) return Outputs{v};
        return Outputs{v, at::view_as_complex(r[1].contiguous())};
      }
      case OpKind::LogSumExp: {
        // log(sum(exp(z - m))) + m with m the largest real part (0 where it is not finite).
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < nd; ++i)
          if (reduced[i]) dims.push_back(i);
        at::Tensor mr = reduce_impl(at::real(x), "amax", dims, true, std::nullopt, ord_value, correction, method, be)[0];
        mr = at::where(mr.isfinite(), mr, at::zeros({}, mr.options()));
        at::Tensor s = sum_impl(at::exp(x - mr), dims, true, std::nullopt, "auto", be);
        at::Tensor r = at::log(s) + mr;
        if (!keepdim && !dims.empty()) r = r.squeeze(dims);
        return Outputs{r};
      }
      case OpKind::Prod: {
        // prod(z) = prod|z| * exp(i * sum(arg z)): the magnitudes' product and the angles' sum on the
        // engine in float64 (complex128 for every complex input), then the input's dtype. As
        // accurate as torch's chain of complex products or more. A zero factor gives 0; an
        // infinite one an infinite result in the direction of the angles' sum, where torch's
        // naive products (inf * 0 inside) often give NaN parts.
        const at::Tensor xd = x.to(at::kComplexDouble);
        const at::Tensor mag = reduce_impl(at::abs(xd), "prod", dim, keepdim, std::nullopt, ord_value, correction, method, be)[0];
        const at::Tensor ang = sum_impl(at::angle(xd), dim.has_value() ? dim : at::OptionalIntArrayRef(at::IntArrayRef{}), keepdim,
                                        std::nullopt, "auto", be);
        return Outputs{at::polar(mag, ang).to(x.scalar_type())};
      }
      default: break;
    }
  }

  return std::nullopt;
}

// The real reduction on the engine: nansum through sum, the empty results, one step of the op.
std::vector<at::Tensor> reduce_real(const Call& c, const Promoted& pr, const Backend& be) {
  const OpKind op = c.op;
  const at::Tensor& x = pr.x;
  const at::ScalarType res = pr.res;
  const bool wide = pr.wide;
  const at::OptionalIntArrayRef dim = c.dim;
  const bool keepdim = c.keepdim, flat_arg = c.flat_arg;
  const int64_t n = c.n;
  const double ord_value = c.ord_value, correction = c.correction;
  const std::vector<bool>& reduced = c.reduced;
  const std::vector<int64_t>& out_sizes = c.out_sizes;
  red::Params prm;
  prm.n = n;
  prm.correction = correction;
  prm.p = ord_value;
  if (ord_value >= 3 && ord_value <= red::kMaxIntPow && ord_value == std::floor(ord_value)) prm.ip = static_cast<int>(ord_value);
  prm.sqrt = op == OpKind::Std || op == OpKind::StdMean;
  const red::NormOrd ord = norm_ord(ord_value);

  // nansum is sum of the values with NaN read as 0, in sum's order, so that nansum(x) and sum(x)
  // have the same bits on NaN-free data over dims. Integer sums are sum's (no NaN to skip). Where
  // the CPU's sum runs its own vector kernels (cpu_sum_kernels: float32 and 16-bit sums of their
  // own dtype), a float nansum is sum of a masked copy; elsewhere (CUDA, and the CPU's float64 and
  // dtype= widened sums, which take the operators' loops) nansum over dims is sum's plan with a
  // first step that skips NaN (below), and of a whole tensor the engine's one row, where sum's is
  // single_pass (CUDA) or the CPU's whole-tensor kernel: not the same order.
  const bool integral = at::isIntegralType(x.scalar_type(), true);
  if (op == OpKind::NanSum && (integral || (x.device().is_cpu() && cpu_sum_kernels(to_rk_dtype(x.scalar_type()), wide)))) {
    // sum's order follows the layout, so the copy is laid out as sum reads x: with x's strides
    // when x is dense, contiguous when it has gaps (sum copies such a view contiguous first). An
    // out-of-place masked_fill returns a contiguous copy, whose sum of a permuted input differed
    // from sum(x) in the last bits.
    at::Tensor z = x;
    if (!integral) {
      z = x.is_non_overlapping_and_dense() ? x.clone(at::MemoryFormat::Preserve) : x.contiguous();
      z.masked_fill_(at::isnan(z), 0);
    }
    // dim=None stays None: sum(x) reduces the whole tensor by its own path, not the dims engine.
    return {sum_impl(z, dim, keepdim, integral || wide ? std::optional<at::ScalarType>(res) : std::nullopt, "auto", be)};
  }

  // The outputs' dtypes (the first converted to res at the end, where they differ).
  c10::SmallVector<at::ScalarType, 2> dts{op == OpKind::Prod && at::isIntegralType(res, true) ? at::kLong
                                          : (op == OpKind::All || op == OpKind::Any)         ? at::kBool
                                                                                              : res};
  if (two_outputs(op)) dts.push_back(x.scalar_type());
  std::vector<at::Tensor> outs;
  if (n == 0 || x.numel() == 0) {
    // No values per output (the identity's result), or no outputs at all.
    const bool none = c10::multiply_integers(out_sizes) == 0;
    for (const auto dt : dts)
      outs.push_back(none ? at::empty(out_sizes, x.options().dtype(dt)) : at::full(out_sizes, empty_value(op), x.options().dtype(dt)));
    if (outs[0].scalar_type() != res) outs[0] = outs[0].to(res);
    return outs;
  }
  if (op == OpKind::NanSum && dim.has_value()) return {reduce_plan(x, reduced, keepdim, op, wide, dts[0], be)};
  if (flat_arg) {  // one value; keepdim gives it nd dims of size 1
    outs = run_op(op, x.reshape({-1}), std::vector<bool>{true}, prm, ord, wide, dts, {}, false, be);
    outs[0] = outs[0].reshape(out_sizes);
  } else {
    outs = run_op(op, x, reduced, prm, ord, wide, dts, out_sizes, keepdim, be);
  }
  if (outs[0].scalar_type() != res) outs[0] = outs[0].to(res);
  return outs;
}

}  // namespace

void reduce_reject_quantized(const at::Tensor& self, c10::string_view op_name_) {
  const OpKind op = parse_op(op_name_);
  const std::string name = std::string("reducekit.") + op_traits(op).public_name;
  const std::string t = c10::toString(self.scalar_type());
  // torch's nanmean and logsumexp check the dtype before any kernel runs (RuntimeError, their
  // words); every other reduction has no quantized kernel (NotImplementedError). torch's mean and
  // std do compute quantized results; reducekit refuses them (README: deliberate differences).
  TORCH_CHECK(op != OpKind::NanMean, name, "(): expected input to have floating point or complex dtype but got ", t,
              ". Dequantize first (input.dequantize()).");
  TORCH_CHECK(op != OpKind::LogSumExp, name, "(): Expected floating point type for result tensor, but got: ", t,
              ". Dequantize first (input.dequantize()).");
  TORCH_CHECK_NOT_IMPLEMENTED(false, name, ": quantized tensors (", t, ") are not supported; dequantize first (input.dequantize()).");
}

std::vector<at::Tensor> reduce_impl(const at::Tensor& self, c10::string_view op_name_, at::OptionalIntArrayRef dim, bool keepdim,
                                    std::optional<at::ScalarType> dtype, double ord_value, double correction, c10::string_view method,
                                    const Backend& be) {
  const OpKind op = parse_op(op_name_);
  if (op == OpKind::Sum) return {sum_impl(self, dim, keepdim, dtype, method, be)};  // the row reducekit::sum serves
  const std::string name = std::string("reducekit.") + op_traits(op).public_name;
  const Method m = parse_method(method);
  check_input(op, self, dtype);
  check_device(m, self, name.c_str());
  if (m != Method::Auto) return {reduce_gallery(self, op, dim, keepdim, dtype, m, be)};
  const int64_t nd = self.dim();
  // RuntimeError, as torch's; the Python functions reduce more dims over every dim by flattening.
  TORCH_CHECK(nd <= kMaxDims, name + ": only tensors with up to " + std::to_string(kMaxDims) + " dims are supported (input has " +
                                  std::to_string(nd) + "); reduce over every dim, or reshape to fewer dims first.");
  Call c{op, name, op_name_, dim, keepdim, ord_value, correction, method, nd};
  c.flat_arg = (op == OpKind::ArgMax || op == OpKind::ArgMin) && !dim.has_value();
  c.reduced = dim.has_value() ? reduced_dims(*dim, nd) : std::vector<bool>(nd, true);
  c.out_sizes = c.flat_arg ? (keepdim ? std::vector<int64_t>(nd, 1) : std::vector<int64_t>{}) : reduced_shape(self.sizes(), c.reduced, keepdim);
  c.n = 1;
  for (int64_t i = 0; i < nd; ++i)
    if (c.reduced[i]) c.n *= self.size(i);
  // torch's warning, in its words (a complex input warns once, in the real call it becomes).
  const bool var_family = op == OpKind::Var || op == OpKind::Std || op == OpKind::VarMean || op == OpKind::StdMean;
  if (var_family && !self.is_complex() && static_cast<double>(c.n) - correction <= 0)
    TORCH_WARN(op_traits(op).public_name, "(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
               "factor (input numel divided by output numel).");
  const Promoted pr = promote(c, self, dtype);
  if (c.n == 0 || self.numel() == 0) check_empty(c, self);
  if (auto r = reduce_complex(c, pr.x, be)) return *r;
  return reduce_real(c, pr, be);
}

}  // namespace rk
