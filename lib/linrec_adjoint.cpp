// Host API of linrec_adjoint: argument checks (before anything is written),
// the forward call's direction turned into the order the adjoint runs in (a
// forward recurrence's adjoint runs in reverse: a mirrored view), then the
// backend (linrec_backends.hpp).
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include <recur/linrec.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "linrec_backends.hpp"

namespace recur {
namespace {

using detail::linrec_adjoint_problem;
using detail::span_of;

constexpr char const* fn = "recur::linrec_adjoint";

template <class T>
linrec_adjoint_problem<T> checked(operand<T> const& s, T const* w, T const* g, T* dt, T* ds,
                                  layout const& lay, linrec_adjoint_options<T> const& opt) {
  detail::check_layout(fn, lay, sizeof(T), " (use direction::reverse for a reverse forward call)");
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, s.data, "s", false);
  detail::check_pointer(fn, w, ds ? "w (read where ds is written)" : "w", work && ds);
  detail::check_pointer(fn, g, "g", work);
  detail::check_pointer(fn, dt, "dt", work);
  detail::check_pointer(fn, ds, "ds", false);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_gradient, "opt.final_gradient", false);
  detail::check_pointer(fn, opt.init_gradient, "opt.init_gradient", false);
  if (opt.dir != direction::forward && opt.dir != direction::reverse)
    detail::bad_argument(fn,
                         fmt::format("direction = {} is not forward or reverse", static_cast<int>(opt.dir)));
  if (opt.variant != linrec_variant::automatic && opt.variant != linrec_variant::single_pass &&
      opt.variant != linrec_variant::three_kernel && opt.variant != linrec_variant::pipelined)
    detail::bad_argument(fn,
                         fmt::format("variant = {} is not a linrec_variant", static_cast<int>(opt.variant)));

  T const* const w_read = ds ? w : nullptr;  // w is read only for ds
  auto const ss = span_of(s.data, lay), sw = span_of(w_read, lay), sg = span_of(g, lay);
  auto const sdt = span_of<T>(dt, lay), sds = span_of<T>(ds, lay);
  auto const si = span_of(opt.init, lay.count), sfg = span_of(opt.final_gradient, lay.count);
  auto const sig = span_of<T>(opt.init_gradient, lay.count);
  // dt may be exactly g (each g_i is read before dt_i is written, by the
  // same thread); s and w are read one element away from where dt and ds are
  // written, so nothing written may overlap them.
  detail::overlap_check const o{fn};
  o.in_place(dt, sdt, "dt", g, sg, "g");
  o.disjoint(sdt, "dt", ss, "s");
  o.disjoint(sdt, "dt", sw, "w");
  o.disjoint(sds, "ds", ss, "s");
  o.disjoint(sds, "ds", sw, "w");
  o.disjoint(sds, "ds", sg, "g");
  o.disjoint(sds, "ds", sdt, "dt");
  for (auto const& [out, on] : {std::pair{sdt, "dt"}, std::pair{sds, "ds"}}) {
    o.disjoint(out, on, si, "opt.init");
    o.disjoint(out, on, sfg, "opt.final_gradient");
  }
  o.in_place(opt.init_gradient, sig, "opt.init_gradient", opt.final_gradient, sfg, "opt.final_gradient");
  for (auto const& [in, name] : {std::pair{ss, "s"}, std::pair{sw, "w"}, std::pair{sg, "g"},
                                 std::pair{sdt, "dt"}, std::pair{sds, "ds"}, std::pair{si, "opt.init"}})
    o.disjoint(sig, "opt.init_gradient", in, name);

  linrec_adjoint_problem<T> p;
  p.scan.s = s.data;
  p.scan.s_value = s.value;
  p.scan.t = g;
  p.scan.w = dt;
  p.scan.lay = detail::normalised_layout(lay);
  p.scan.init = opt.final_gradient;
  p.scan.init_value = T(0);
  p.scan.final_state = opt.init_gradient;
  p.w = w_read;
  p.w_init = opt.init;
  p.w_init_value = opt.init_value;
  p.ds = ds;
  // The adjoint runs against the forward's direction.
  return opt.dir == direction::forward ? detail::mirrored(p) : p;
}

}  // namespace

template <linrec_value T>
void linrec_adjoint(host const& ex, operand<std::type_identity_t<T>> s, T const* w, T const* g, T* dt, T* ds,
                    layout const& lay, linrec_adjoint_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(fn, ex);
  auto const p = checked(s, w, g, dt, ds, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) {
    if (p.scan.final_state)
      for (std::int64_t k = 0; k < lay.count; ++k) p.scan.final_state[k] = p.scan.init_of(k);
    return;
  }
  detail::linrec_adjoint_cpu(p, ex.threads);
}

template <linrec_value T>
void linrec_adjoint(cuda const& ex, operand<std::type_identity_t<T>> s, T const* w, T const* g, T* dt, T* ds,
                    layout const& lay, linrec_adjoint_options<std::type_identity_t<T>> const& opt) {
  detail::require_cuda(fn);
  auto const p = checked(s, w, g, dt, ds, lay, opt);
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, dt, "dt");
    detail::check_device_pointer(fn, g, "g");
    if (s.data) detail::check_device_pointer(fn, s.data, "s");
    if (ds) {
      detail::check_device_pointer(fn, ds, "ds");
      detail::check_device_pointer(fn, w, "w");
    }
  }
  if (lay.count == 0) return;
  if (opt.init) detail::check_device_pointer(fn, opt.init, "opt.init");
  if (opt.final_gradient) detail::check_device_pointer(fn, opt.final_gradient, "opt.final_gradient");
  if (opt.init_gradient && opt.init_gradient != opt.final_gradient)
    detail::check_device_pointer(fn, opt.init_gradient, "opt.init_gradient");
  detail::linrec_adjoint_cuda(p, ex.stream, opt.variant);  // n == 0 handled there
}

template void linrec_adjoint<float>(host const&, operand<float>, float const*, float const*, float*, float*,
                                    layout const&, linrec_adjoint_options<float> const&);
template void linrec_adjoint<float>(cuda const&, operand<float>, float const*, float const*, float*, float*,
                                    layout const&, linrec_adjoint_options<float> const&);
template void linrec_adjoint<double>(host const&, operand<double>, double const*, double const*, double*,
                                     double*, layout const&, linrec_adjoint_options<double> const&);
template void linrec_adjoint<double>(cuda const&, operand<double>, double const*, double const*, double*,
                                     double*, layout const&, linrec_adjoint_options<double> const&);
template void linrec_adjoint<bfloat16>(host const&, operand<bfloat16>, bfloat16 const*, bfloat16 const*,
                                       bfloat16*, bfloat16*, layout const&,
                                       linrec_adjoint_options<bfloat16> const&);
template void linrec_adjoint<bfloat16>(cuda const&, operand<bfloat16>, bfloat16 const*, bfloat16 const*,
                                       bfloat16*, bfloat16*, layout const&,
                                       linrec_adjoint_options<bfloat16> const&);
template void linrec_adjoint<float16>(host const&, operand<float16>, float16 const*, float16 const*, float16*,
                                      float16*, layout const&, linrec_adjoint_options<float16> const&);
template void linrec_adjoint<float16>(cuda const&, operand<float16>, float16 const*, float16 const*, float16*,
                                      float16*, layout const&, linrec_adjoint_options<float16> const&);

}  // namespace recur
