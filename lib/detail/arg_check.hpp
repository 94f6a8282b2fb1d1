#pragma once
// Argument checks shared by the host API's entry points (lib/linrec.cpp,
// chain.cpp, filter.cpp, tridiag.cpp): layouts, pointers, the memory they
// cover and how outputs may overlap inputs, per-sequence state sizes,
// host.threads. Each check throws recur::invalid_argument with a message that
// starts with the calling function's name (`fn`, e.g. "recur::linrec") and
// names the argument and its value. Header-only (inline), so that it needs no
// entry of its own in lib/CMakeLists.txt; it is included by host .cpp files
// only (fmt).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur::detail {

[[noreturn]] inline void bad_argument(char const* fn, std::string const& msg) {
  throw invalid_argument(std::string(fn) + ": " + msg);
}

// A range of bytes [lo, hi); empty when lo == hi.
struct byte_span {
  std::uintptr_t lo = 0, hi = 0;
  bool empty() const { return lo == hi; }
  bool intersects(byte_span const& o) const { return !empty() && !o.empty() && lo < o.hi && o.lo < hi; }
};

// The bytes a layout covers from p (strides positive: check_layout first).
template <class T>
byte_span span_of(T const* p, layout const& l) {
  if (!p || l.n == 0 || l.count == 0) return {};
  auto const base = reinterpret_cast<std::uintptr_t>(p);
  auto const last =
      static_cast<std::uintptr_t>((l.n - 1) * l.element_stride + (l.count - 1) * l.batch_stride);
  return {base, base + (last + 1) * sizeof(T)};
}

// The bytes of `sets` copies of a layout, set r starting at p + r * set_stride
// (set_stride may be negative; the sets are assumed checked not to overflow).
template <class T>
byte_span span_of(T const* p, layout const& l, std::int64_t sets, std::int64_t set_stride) {
  if (!p || l.n == 0 || l.count == 0 || sets == 0) return {};
  byte_span s = span_of(p, l);
  auto const shift = static_cast<std::uintptr_t>(sets - 1) *
                     static_cast<std::uintptr_t>(set_stride < 0 ? -set_stride : set_stride) * sizeof(T);
  if (set_stride < 0)
    s.lo -= shift;
  else
    s.hi += shift;
  return s;
}

// The bytes of count consecutive elements.
template <class T>
byte_span span_of(T const* p, std::int64_t count) {
  if (!p || count == 0) return {};
  auto const base = reinterpret_cast<std::uintptr_t>(p);
  return {base, base + static_cast<std::uintptr_t>(count) * sizeof(T)};
}

// Null (an error when required) or misaligned for T.
template <class T>
void check_pointer(char const* fn, T const* p, char const* name, bool required) {
  if (!p) {
    if (required) bad_argument(fn, fmt::format("{} is null", name));
    return;
  }
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0)
    bad_argument(fn, fmt::format("{} = {} is not aligned to {} bytes", name, fmt::ptr(p), alignof(T)));
}

// Elements from the first to the last one of a checked, non-empty layout:
// the largest offset plus one.
inline std::int64_t layout_extent(layout const& l) {
  if (l.n == 0 || l.count == 0) return 0;
  return (l.n - 1) * (l.n > 1 ? l.element_stride : 0) + (l.count - 1) * (l.count > 1 ? l.batch_stride : 0) +
         1;
}

// Sizes non-negative; for a non-empty batch, strides positive (where they
// matter), byte offsets within 64 bits, and no two elements at one address.
// stride_hint is appended to the message about a non-positive element stride
// (linrec: how to run backwards instead).
inline void check_layout(char const* fn, layout const& l, std::size_t elem_bytes,
                         char const* stride_hint = "") {
  if (l.n < 0) bad_argument(fn, fmt::format("layout.n = {} is negative", l.n));
  if (l.count < 0) bad_argument(fn, fmt::format("layout.count = {} is negative", l.count));
  // No element, no address: the strides of an empty batch are unused (and
  // layout::contiguous(0, count) or layout::interleaved(n, 0) make them 0).
  if (l.n == 0 || l.count == 0) return;
  if (l.n > 1 && l.element_stride <= 0)
    bad_argument(fn,
                 fmt::format("layout.element_stride = {} must be positive{}", l.element_stride, stride_hint));
  if (l.count > 1 && l.batch_stride <= 0)
    bad_argument(fn, fmt::format("layout.batch_stride = {} must be positive", l.batch_stride));
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  // The largest offset, and the total, must fit in 64-bit bytes.
  auto const lim = static_cast<std::int64_t>(max / static_cast<std::int64_t>(elem_bytes));
  if (l.n > lim / l.count)
    bad_argument(fn, fmt::format("layout.n * layout.count = {} * {} overflows", l.n, l.count));
  std::int64_t const es = l.n > 1 ? l.element_stride : 0, bs = l.count > 1 ? l.batch_stride : 0;
  if ((l.n - 1) > 0 && es > lim / (l.n - 1))
    bad_argument(fn, fmt::format("layout.element_stride = {} with n = {} overflows", l.element_stride, l.n));
  std::int64_t const ext_e = (l.n - 1) * es;
  if ((l.count - 1) > 0 && bs > (lim - ext_e) / (l.count - 1))
    bad_argument(fn,
                 fmt::format("layout.batch_stride = {} with count = {} overflows", l.batch_stride, l.count));
  // Distinct elements must have distinct addresses. Elements (i, k) and
  // (i', k') meet when (i - i') es == (k' - k) bs; with g = gcd(es, bs) the
  // smallest such steps are bs / g rows and es / g sequences, so the layout
  // overlaps itself exactly when both fit.
  if (l.n > 1 && l.count > 1) {
    std::int64_t const g = std::gcd(es, bs);
    if (bs / g < l.n && es / g < l.count)
      bad_argument(
          fn, fmt::format("layout {{n = {}, count = {}, element_stride = {}, batch_stride = {}}} maps two "
                          "elements to one address",
                          l.n, l.count, l.element_stride, l.batch_stride));
  }
}

// host.threads: 0 lets the library choose; a negative count is an error.
inline void check_threads(char const* fn, host const& ex) {
  if (ex.threads < 0) bad_argument(fn, fmt::format("host.threads = {} is negative", ex.threads));
}

// Every value of p[0, size) finite (coefficients).
template <class T>
void check_finite(char const* fn, char const* name, T const* p, std::int64_t size) {
  for (std::int64_t j = 0; j < size; ++j)
    if (!std::isfinite(p[j])) bad_argument(fn, fmt::format("{}[{}] = {} is not finite", name, j, p[j]));
}

// The layout every backend receives: the strides that an empty or degenerate
// batch leaves unused made well defined (element_stride 1 when n <= 1,
// batch_stride n * element_stride when count <= 1).
inline layout normalised_layout(layout const& lay) {
  layout l = lay;
  if (l.n <= 1) l.element_stride = 1;
  if (l.count <= 1) l.batch_stride = l.n * l.element_stride;
  return l;
}

// The values of per-sequence state in a batch, count * per (per: `what`,
// e.g. "order"), checked so that their bytes fit 64 bits.
inline std::int64_t state_size(char const* fn, std::int64_t count, std::int64_t per, char const* what,
                               std::size_t value_bytes) {
  if (per > 0 &&
      count > std::numeric_limits<std::int64_t>::max() / per / static_cast<std::int64_t>(value_bytes))
    bad_argument(fn, fmt::format("layout.count * {} = {} * {} overflows", what, count, per));
  return count * per;
}

// The overlap rules of every entry point: an output may be one input exactly
// (in place), final_state may be init exactly, and nothing else may overlap
// an output.
struct overlap_check {
  char const* fn;
  void disjoint(byte_span a, char const* an, byte_span b, char const* bn) const {
    if (a.intersects(b)) bad_argument(fn, fmt::format("{} overlaps {}", an, bn));
  }
  // out may be in exactly; any other overlap is rejected.
  void in_place(void const* out, byte_span so, char const* on, void const* in, byte_span si,
                char const* in_name) const {
    if (out != in && so.intersects(si))
      bad_argument(
          fn, fmt::format("{} overlaps {} (only {} == {} exactly is allowed)", on, in_name, on, in_name));
  }
  // The state arrays against the output `out` (which must avoid both) and
  // each other (final_state may be init exactly).
  void state(byte_span out, char const* on, void const* init, byte_span si, void const* final_state,
             byte_span sf) const {
    disjoint(out, on, si, "init");
    disjoint(sf, "final_state", out, on);
    in_place(final_state, sf, "final_state", init, si, "init");
  }
};

}  // namespace recur::detail
