// Host API of correlate_lags (include/recur/filter.hpp), the lagged
// correlations of lfilter's coefficient gradients: every argument checked
// before anything is written, the reverse direction as a mirrored view (as
// lfilter's), then the backend (filter_backends.hpp): lib/cpu/filter_cpu.cpp,
// or, with recur::cuda, the GPU's checks (its limits, device memory) and
// lib/cuda/correlate_cuda.cu.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <recur/filter.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "filter_backends.hpp"

namespace recur {
namespace {

constexpr char const* fn = "recur::correlate_lags";

// A checked call as the backends take it: the arrays at element 0 of the
// view (element n - 1 for direction::reverse), the view's layout.
template <class T>
struct correlate_call {
  T const* u;
  std::vector<T const*> v;
  layout lay;
  std::int64_t values;  // v.size() * lags: the values of c
};

template <class T>
correlate_call<T> checked(T const* u, std::span<T const* const> v, T* c, std::int64_t lags, layout const& lay,
                          direction dir) {
  detail::check_layout(fn, lay, sizeof(T), " (use direction::reverse to run backwards)");
  if (lags < 0) detail::bad_argument(fn, fmt::format("lags = {} is negative", lags));
  if (dir != direction::forward && dir != direction::reverse)
    detail::bad_argument(fn, fmt::format("dir = {} is not forward or reverse", static_cast<int>(dir)));
  std::int64_t const nv = static_cast<std::int64_t>(v.size());
  if (nv > 0 && lags > std::numeric_limits<std::int64_t>::max() / nv / static_cast<std::int64_t>(sizeof(T)))
    detail::bad_argument(fn, fmt::format("v.size() * lags = {} * {} overflows", nv, lags));
  std::int64_t const values = nv * lags;
  bool const work = lay.n > 0 && lay.count > 0 && values > 0;
  detail::check_pointer(fn, u, "u", work);
  detail::check_pointer(fn, c, "c", values > 0);
  detail::byte_span const sc = detail::span_of<T>(c, values);
  detail::overlap_check const o{fn};
  o.disjoint(sc, "c", detail::span_of(u, lay), "u");
  for (std::int64_t j = 0; j < nv; ++j) {
    std::string const name = fmt::format("v[{}]", j);
    detail::check_pointer(fn, v[j], name.c_str(), work);
    o.disjoint(sc, "c", detail::span_of(v[j], lay), name.c_str());
  }
  correlate_call<T> r{u, {v.begin(), v.end()}, detail::normalised_layout(lay), values};
  if (dir == direction::reverse && work) {
    std::int64_t const last = (r.lay.n - 1) * r.lay.element_stride;
    r.u += last;
    for (T const*& p : r.v) p += last;
    r.lay.element_stride = -r.lay.element_stride;
  }
  return r;
}

}  // namespace

template <real_value T>
void correlate_lags(host const& ex, std::type_identity_t<T> const* u,
                    std::span<std::type_identity_t<T> const* const> v, T* c, std::int64_t lags,
                    layout const& lay, direction dir) {
  detail::check_threads(fn, ex);
  auto const call = checked<T>(u, v, c, lags, lay, dir);
  if (call.values == 0) return;
  detail::correlate_cpu<T>(call.u, call.v.data(), static_cast<std::int64_t>(call.v.size()), c, lags, call.lay,
                           ex.threads);
}

// recur::cuda: the host's checks, then the GPU's: its limits on lags and
// v.size(), device memory for u, v's arrays and c.
template <real_value T>
void correlate_lags(cuda const& ex, std::type_identity_t<T> const* u,
                    std::span<std::type_identity_t<T> const* const> v, T* c, std::int64_t lags,
                    layout const& lay, direction dir) {
  detail::require_cuda(fn);
  auto const call = checked<T>(u, v, c, lags, lay, dir);
  if (lags > detail::correlate_cuda_max_lags)
    detail::bad_argument(fn, fmt::format("lags = {} is not supported with recur::cuda: at most {} (the "
                                         "gradients of lfilter's orders 0-8; recur::host has no limit)",
                                         lags, detail::correlate_cuda_max_lags));
  std::int64_t const nv = static_cast<std::int64_t>(v.size());
  if (nv > detail::correlate_cuda_max_arrays)
    detail::bad_argument(fn, fmt::format("v.size() = {} is not supported with recur::cuda: at most {} "
                                         "(recur::host has no limit)",
                                         nv, detail::correlate_cuda_max_arrays));
  if (call.values == 0) return;
  detail::check_device_pointer(fn, c, "c");
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, u, "u");
    for (std::int64_t j = 0; j < nv; ++j)
      detail::check_device_pointer(fn, v[j], fmt::format("v[{}]", j).c_str());
  }
  detail::correlate_cuda<T>(call.u, call.v.data(), nv, c, lags, call.lay, ex.stream);
}

#define RECUR_CORRELATE(Ex, T)                                                                      \
  template void correlate_lags<T>(Ex const&, T const*, std::span<T const* const>, T*, std::int64_t, \
                                  layout const&, direction);
RECUR_CORRELATE(host, float)
RECUR_CORRELATE(host, double)
RECUR_CORRELATE(cuda, float)
RECUR_CORRELATE(cuda, double)
#undef RECUR_CORRELATE

}  // namespace recur
