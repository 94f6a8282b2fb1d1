// Host API of linrec and linrec_adjoint: argument checks (before anything is
// written), reverse direction as a mirrored view (a forward call's adjoint
// runs in reverse), then the backend (linrec_backends.hpp).
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <recur/linrec.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "linrec_backends.hpp"
#include "linrec_split.hpp"

namespace recur {
namespace {

using detail::linrec_adjoint_problem;
using detail::linrec_problem;
using detail::span_of;

// The options both entry points share.
void check_options(char const* fn, direction dir, linrec_variant variant) {
  if (dir != direction::forward && dir != direction::reverse)
    detail::bad_argument(fn, fmt::format("direction = {} is not forward or reverse", static_cast<int>(dir)));
  if (variant != linrec_variant::automatic && variant != linrec_variant::single_pass &&
      variant != linrec_variant::three_kernel && variant != linrec_variant::pipelined)
    detail::bad_argument(fn, fmt::format("variant = {} is not a linrec_variant", static_cast<int>(variant)));
}

constexpr char const* fn = "recur::linrec";

// The backends' form of checked arguments: forward only (a reverse call as
// the mirrored view), the layout normalised so that the mirror is well
// defined.
template <class T>
linrec_problem<T> problem_of(operand<T> const& s, operand<T> const& t, T* w, layout const& lay, direction dir,
                             T const* init = nullptr, T init_value = T(0), T* final_state = nullptr) {
  linrec_problem<T> p;
  p.s = s.data;
  p.s_value = s.value;
  p.t = t.data;
  p.t_value = t.value;
  p.w = w;
  p.lay = detail::normalised_layout(lay);
  p.init = init;
  p.init_value = init_value;
  p.final_state = final_state;
  return dir == direction::reverse ? detail::mirrored(p) : p;
}

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
  check_options(fn, opt.dir, opt.variant);

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

  return problem_of(s, t, w, lay, opt.dir, opt.init, opt.init_value, opt.final_state);
}

constexpr char const* summary_fn = "recur::linrec_summary";

template <class T>
linrec_problem<T> checked_summary(operand<T> const& s, operand<T> const& t, T* a, T* b, layout const& lay,
                                  direction dir) {
  detail::check_layout(summary_fn, lay, sizeof(T), " (use direction::reverse to run backwards)");
  detail::check_pointer(summary_fn, s.data, "s", false);
  detail::check_pointer(summary_fn, t.data, "t", false);
  detail::check_pointer(summary_fn, a, "a", lay.count > 0);
  detail::check_pointer(summary_fn, b, "b", lay.count > 0);
  check_options(summary_fn, dir, linrec_variant::automatic);
  auto const ss = span_of(s.data, lay), st = span_of(t.data, lay);
  auto const sa = span_of<T>(a, lay.count), sb = span_of<T>(b, lay.count);
  detail::overlap_check const o{summary_fn};
  for (auto const& [out, on] : {std::pair{sa, "a"}, std::pair{sb, "b"}}) {
    o.disjoint(out, on, ss, "s");
    o.disjoint(out, on, st, "t");
  }
  o.disjoint(sa, "a", sb, "b");
  return problem_of<T>(s, t, nullptr, lay, dir);
}

constexpr char const* adjoint_fn = "recur::linrec_adjoint";

template <class T>
linrec_adjoint_problem<T> checked_adjoint(operand<T> const& s, T const* w, T const* g, T* dt, T* ds,
                                          layout const& lay, linrec_adjoint_options<T> const& opt) {
  detail::check_layout(adjoint_fn, lay, sizeof(T), " (use direction::reverse for a reverse forward call)");
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(adjoint_fn, s.data, "s", false);
  detail::check_pointer(adjoint_fn, w, ds ? "w (read where ds is written)" : "w", work && ds);
  detail::check_pointer(adjoint_fn, g, "g", work);
  detail::check_pointer(adjoint_fn, dt, "dt", work);
  detail::check_pointer(adjoint_fn, ds, "ds", false);
  detail::check_pointer(adjoint_fn, opt.init, "opt.init", false);
  detail::check_pointer(adjoint_fn, opt.final_gradient, "opt.final_gradient", false);
  detail::check_pointer(adjoint_fn, opt.init_gradient, "opt.init_gradient", false);
  check_options(adjoint_fn, opt.dir, opt.variant);

  T const* const w_read = ds ? w : nullptr;  // w is read only for ds
  auto const ss = span_of(s.data, lay), sw = span_of(w_read, lay), sg = span_of(g, lay);
  auto const sdt = span_of<T>(dt, lay), sds = span_of<T>(ds, lay);
  auto const si = span_of(opt.init, lay.count), sfg = span_of(opt.final_gradient, lay.count);
  auto const sig = span_of<T>(opt.init_gradient, lay.count);
  // dt may be exactly g (each g_i is read before dt_i is written, by the
  // same thread); s and w are read one element away from where dt and ds are
  // written, so nothing written may overlap them.
  detail::overlap_check const o{adjoint_fn};
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

template <linrec_value T>
void linrec_summary(host const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t,
                    T* a, T* b, layout const& lay, direction dir) {
  detail::check_threads(summary_fn, ex);
  auto const p = checked_summary(s, t, a, b, lay, dir);
  if (lay.count == 0) return;
  std::vector<ops::affine<compute_t<T>>> maps(static_cast<std::size_t>(lay.count),
                                              ops::affine_identity<compute_t<T>>());
  if (lay.n > 0) detail::linrec_summary_cpu(p, maps.data(), ex.threads);
  for (std::int64_t k = 0; k < lay.count; ++k) {
    a[k] = to_storage<T>(maps[k].a);
    b[k] = to_storage<T>(maps[k].b);
  }
}

template <linrec_value T>
void linrec_summary(cuda const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t,
                    T* a, T* b, layout const& lay, direction dir) {
  detail::require_cuda(summary_fn);
  auto const p = checked_summary(s, t, a, b, lay, dir);
  if (lay.count == 0) return;
  if (lay.n > 0) {
    if (s.data) detail::check_device_pointer(summary_fn, s.data, "s");
    if (t.data) detail::check_device_pointer(summary_fn, t.data, "t");
  }
  detail::check_device_pointer(summary_fn, a, "a");
  detail::check_device_pointer(summary_fn, b, "b");
  detail::linrec_summary_cuda_store(p, ex.stream, a, b);  // n == 0: identity maps
}

#define RECUR_LINREC_SUMMARY(E, T) \
  template void linrec_summary<T>(E const&, operand<T>, operand<T>, T*, T*, layout const&, direction);
RECUR_LINREC_SUMMARY(host, float)
RECUR_LINREC_SUMMARY(host, double)
RECUR_LINREC_SUMMARY(host, bfloat16)
RECUR_LINREC_SUMMARY(host, float16)
RECUR_LINREC_SUMMARY(cuda, float)
RECUR_LINREC_SUMMARY(cuda, double)
RECUR_LINREC_SUMMARY(cuda, bfloat16)
RECUR_LINREC_SUMMARY(cuda, float16)
#undef RECUR_LINREC_SUMMARY

namespace detail {

namespace {

// recur::cuda's checks beyond checked(): where the arrays live.
void check_cuda_arrays(void const* s, void const* t, void const* w, layout const& lay, void const* init,
                       void const* final_state) {
  require_cuda(fn);
  if (lay.n > 0 && lay.count > 0) {
    check_device_pointer(fn, w, "w");
    if (s) check_device_pointer(fn, s, "s");
    if (t) check_device_pointer(fn, t, "t");
  }
  if (lay.count > 0) check_device_state(fn, init, final_state);
}

}  // namespace

template <class Executor, linrec_value T>
void linrec_split_summary(Executor const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                          linrec_options<T> const& opt, ops::affine<compute_t<T>>* out, T* init,
                          linrec_chunk_maps<compute_t<T>>* kept) {
  if constexpr (std::is_same_v<Executor, host>) check_threads(fn, ex);
  auto const p = checked(s, t, w, lay, opt);
  if constexpr (std::is_same_v<Executor, cuda>)
    check_cuda_arrays(s.data, t.data, w, lay, opt.init, opt.final_state);
  if (lay.count == 0) return;
  if constexpr (std::is_same_v<Executor, cuda>) {
    // opt.init is device memory: the backend copies it (n == 0: identity maps).
    if (lay.n > 0 || (init && p.init)) return linrec_summary_cuda(p, ex.stream, out, init);
  }
  // Host memory, or no device array to read: init is p.init's values or init_value.
  for (std::int64_t k = 0; k < lay.count; ++k) out[k] = ops::affine_identity<compute_t<T>>();
  if (init)
    for (std::int64_t k = 0; k < lay.count; ++k) init[k] = p.init_of(k);
  if constexpr (std::is_same_v<Executor, host>)
    if (lay.n > 0) linrec_summary_cpu(p, out, ex.threads, kept);
}

template <class Executor, linrec_value T>
void linrec_split_finish(Executor const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                         linrec_options<T> const& opt, T const* in, T const* final,
                         linrec_chunk_maps<compute_t<T>> const* kept) {
  auto p = checked(s, t, w, lay, opt);
  if (lay.count == 0) return;
  if constexpr (std::is_same_v<Executor, cuda>) {
    linrec_cuda_from_host(p, ex.stream, opt.variant, in, final);
  } else {
    T* const final_state = p.final_state;
    p.init = in;
    p.final_state = nullptr;
    if (lay.n > 0) linrec_cpu(p, ex.threads, kept);
    if (final_state && final)
      for (std::int64_t k = 0; k < lay.count; ++k) final_state[k] = final[k];
  }
}

template <linrec_value T>
void linrec_split_check(cuda const&, operand<T> s, operand<T> t, T* w, layout const& lay,
                        linrec_options<T> const& opt) {
  checked(s, t, w, lay, opt);
  check_cuda_arrays(s.data, t.data, w, lay, opt.init, opt.final_state);
}

template <linrec_value T>
void linrec_split_exchanged(cuda const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                            linrec_options<T> const& opt, split_ranks const& ranks,
                            linrec_exchange const& exchange) {
  auto const p = checked(s, t, w, lay, opt);
  check_cuda_arrays(s.data, t.data, w, lay, opt.init, opt.final_state);
  if (lay.count > 0) linrec_cuda_exchanged(p, ex.stream, opt.variant, ranks, exchange);
}

#define RECUR_LINREC_EXCHANGED(T)                                                                 \
  template void linrec_split_check<T>(cuda const&, operand<T>, operand<T>, T*, layout const&,     \
                                      linrec_options<T> const&);                                  \
  template void linrec_split_exchanged<T>(cuda const&, operand<T>, operand<T>, T*, layout const&, \
                                          linrec_options<T> const&, split_ranks const&,           \
                                          linrec_exchange const&);
RECUR_LINREC_EXCHANGED(float)
RECUR_LINREC_EXCHANGED(double)
RECUR_LINREC_EXCHANGED(bfloat16)
RECUR_LINREC_EXCHANGED(float16)
#undef RECUR_LINREC_EXCHANGED

#define RECUR_LINREC_SPLIT(E, T)                                                                     \
  template void linrec_split_summary<E, T>(E const&, operand<T>, operand<T>, T*, layout const&,      \
                                           linrec_options<T> const&, ops::affine<compute_t<T>>*, T*, \
                                           linrec_chunk_maps<compute_t<T>>*);                        \
  template void linrec_split_finish<E, T>(E const&, operand<T>, operand<T>, T*, layout const&,       \
                                          linrec_options<T> const&, T const*, T const*,              \
                                          linrec_chunk_maps<compute_t<T>> const*);
RECUR_LINREC_SPLIT(host, float)
RECUR_LINREC_SPLIT(host, double)
RECUR_LINREC_SPLIT(host, bfloat16)
RECUR_LINREC_SPLIT(host, float16)
RECUR_LINREC_SPLIT(cuda, float)
RECUR_LINREC_SPLIT(cuda, double)
RECUR_LINREC_SPLIT(cuda, bfloat16)
RECUR_LINREC_SPLIT(cuda, float16)
#undef RECUR_LINREC_SPLIT

}  // namespace detail

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

template <linrec_value T>
void linrec_adjoint(host const& ex, operand<std::type_identity_t<T>> s, T const* w, T const* g, T* dt, T* ds,
                    layout const& lay, linrec_adjoint_options<std::type_identity_t<T>> const& opt) {
  detail::check_threads(adjoint_fn, ex);
  auto const p = checked_adjoint(s, w, g, dt, ds, lay, opt);
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
  detail::require_cuda(adjoint_fn);
  auto const p = checked_adjoint(s, w, g, dt, ds, lay, opt);
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(adjoint_fn, dt, "dt");
    detail::check_device_pointer(adjoint_fn, g, "g");
    if (s.data) detail::check_device_pointer(adjoint_fn, s.data, "s");
    if (ds) {
      detail::check_device_pointer(adjoint_fn, ds, "ds");
      detail::check_device_pointer(adjoint_fn, w, "w");
    }
  }
  if (lay.count == 0) return;
  if (opt.init) detail::check_device_pointer(adjoint_fn, opt.init, "opt.init");
  if (opt.final_gradient) detail::check_device_pointer(adjoint_fn, opt.final_gradient, "opt.final_gradient");
  if (opt.init_gradient && opt.init_gradient != opt.final_gradient)
    detail::check_device_pointer(adjoint_fn, opt.init_gradient, "opt.init_gradient");
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
