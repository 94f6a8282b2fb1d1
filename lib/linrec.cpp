// Host API of linrec: argument checks (before anything is written), reverse
// direction as a mirrored view, then the backend (linrec_backends.hpp).
#include <cstdint>

#include <fmt/format.h>

#include <recur/linrec.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "linrec_backends.hpp"

namespace recur {
namespace {

using detail::linrec_problem;
using detail::span_of;

constexpr char const* fn = "recur::linrec";

template <class T>
linrec_problem<T> checked(operand<T> const& s, operand<T> const& t, T* w, layout const& lay,
                          linrec_options<T> const& opt) {
  detail::check_layout(fn, lay, sizeof(T), " (use direction::reverse to run backwards)");
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, s.data, "s", false);
  detail::check_pointer(fn, t.data, "t", false);
  detail::check_pointer(fn, w, "w", work);
  detail::check_pointer(fn, opt.init, "opt.init", false);
  detail::check_pointer(fn, opt.final_state, "opt.final_state", false);
  if (opt.dir != direction::forward && opt.dir != direction::reverse)
    detail::bad_argument(fn,
                         fmt::format("direction = {} is not forward or reverse", static_cast<int>(opt.dir)));
  if (opt.variant != linrec_variant::automatic && opt.variant != linrec_variant::single_pass &&
      opt.variant != linrec_variant::three_kernel && opt.variant != linrec_variant::pipelined)
    detail::bad_argument(fn,
                         fmt::format("variant = {} is not a linrec_variant", static_cast<int>(opt.variant)));

  auto const sw = span_of<T>(w, lay), ss = span_of(s.data, lay), st = span_of(t.data, lay);
  auto const si = span_of(opt.init, lay.count), sf = span_of<T>(opt.final_state, lay.count);
  // w may be exactly s or t (in place); any other overlap would read a value
  // after it was overwritten.
  detail::overlap_check const o{fn};
  o.in_place(w, sw, "w", s.data, ss, "s");
  o.in_place(w, sw, "w", t.data, st, "t");
  o.state(sw, "w", opt.init, si, opt.final_state, sf);
  o.disjoint(sf, "final_state", ss, "s");
  o.disjoint(sf, "final_state", st, "t");

  linrec_problem<T> p;
  p.s = s.data;
  p.s_value = s.value;
  p.t = t.data;
  p.t_value = t.value;
  p.w = w;
  p.lay = detail::normalised_layout(lay);  // keeps the mirror well defined
  p.init = opt.init;
  p.init_value = opt.init_value;
  p.final_state = opt.final_state;
  return opt.dir == direction::reverse ? detail::mirrored(p) : p;
}

}  // namespace

template <linrec_value T>
void linrec(host const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t, T* w,
            layout const& lay, linrec_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(fn, ex);
  auto const p = checked(s, t, w, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) {
    if (p.final_state)
      for (std::int64_t k = 0; k < lay.count; ++k) p.final_state[k] = p.init_of(k);
    return;
  }
  detail::linrec_cpu(p, ex.threads);
}

template <linrec_value T>
void linrec(cuda const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t, T* w,
            layout const& lay, linrec_options<std::type_identity_t<T>> const& opt) {
  detail::require_cuda(fn);
  auto const p = checked(s, t, w, lay, opt);
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, w, "w");
    if (s.data) detail::check_device_pointer(fn, s.data, "s");
    if (t.data) detail::check_device_pointer(fn, t.data, "t");
  }
  if (lay.count == 0) return;
  detail::check_device_state(fn, opt.init, opt.final_state);
  detail::linrec_cuda(p, ex.stream, opt.variant);  // n == 0 handled there (final = init)
}

template void linrec<float>(host const&, operand<float>, operand<float>, float*, layout const&,
                            linrec_options<float> const&);
template void linrec<double>(host const&, operand<double>, operand<double>, double*, layout const&,
                             linrec_options<double> const&);
template void linrec<bfloat16>(host const&, operand<bfloat16>, operand<bfloat16>, bfloat16*, layout const&,
                               linrec_options<bfloat16> const&);
template void linrec<float16>(host const&, operand<float16>, operand<float16>, float16*, layout const&,
                              linrec_options<float16> const&);
template void linrec<float>(cuda const&, operand<float>, operand<float>, float*, layout const&,
                            linrec_options<float> const&);
template void linrec<double>(cuda const&, operand<double>, operand<double>, double*, layout const&,
                             linrec_options<double> const&);
template void linrec<bfloat16>(cuda const&, operand<bfloat16>, operand<bfloat16>, bfloat16*, layout const&,
                               linrec_options<bfloat16> const&);
template void linrec<float16>(cuda const&, operand<float16>, operand<float16>, float16*, layout const&,
                              linrec_options<float16> const&);

}  // namespace recur
