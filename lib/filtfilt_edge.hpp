#pragma once
// How many samples filtfilt and sosfiltfilt add at each end of a sequence,
// checked (lib/filter.cpp, and the split calls of lib/dist/filtfilt_dist.cpp).
// Header-only; included by host .cpp files only (fmt).

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>

#include <recur/types.hpp>
#include "detail/arg_check.hpp"

namespace recur::detail {

// The samples filtfilt adds at each end (scipy's _validate_pad): 0 for
// padtype none, else padlen or 3 * ntaps; n must exceed it.
inline std::int64_t filtfilt_edge(char const* fn, filtfilt_options const& opt, std::int64_t ntaps,
                                  std::int64_t n) {
  if (opt.padtype != filtfilt_pad::odd && opt.padtype != filtfilt_pad::even &&
      opt.padtype != filtfilt_pad::constant && opt.padtype != filtfilt_pad::none)
    bad_argument(fn, fmt::format("opt.padtype = {} is not a filtfilt_pad", static_cast<int>(opt.padtype)));
  if (opt.padlen && *opt.padlen < 0)
    bad_argument(fn, fmt::format("opt.padlen = {} is negative", *opt.padlen));
  std::int64_t const edge = opt.padtype == filtfilt_pad::none ? 0 : opt.padlen.value_or(3 * ntaps);
  if (n <= edge)
    bad_argument(fn, fmt::format("layout.n = {} must be greater than padlen, which is {}", n, edge));
  return edge;
}

// sosfiltfilt's ntaps, as scipy counts it: 2 n_sections + 1, less the
// smaller of the numbers of zero b2 and zero a2.
template <class T>
std::int64_t sections_ntaps(std::span<T const> sos) {
  std::int64_t const ns = static_cast<std::int64_t>(sos.size() / 6);
  std::int64_t zb = 0, za = 0;
  for (std::int64_t j = 0; j < ns; ++j) {
    zb += sos[6 * j + 2] == T(0);
    za += sos[6 * j + 5] == T(0);
  }
  return 2 * ns + 1 - std::min(zb, za);
}

}  // namespace recur::detail
