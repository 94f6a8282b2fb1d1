#pragma once
// The layouts every suite runs: contiguous, interleaved, strided with gaps
// (elements and systems apart, so a write to a gap shows) and interleaved
// with padded rows.
#include <cstdint>
#include <vector>

#include <recur/layout/layout.hpp>

#include "poison.hpp"

namespace recur_test {

enum class layout_kind { contiguous, interleaved, strided_gaps, interleaved_padded };

// The lists the sweeps iterate over.
inline constexpr layout_kind dense_layout_kinds[] = {layout_kind::contiguous, layout_kind::interleaved};
inline constexpr layout_kind basic_layout_kinds[] = {layout_kind::contiguous, layout_kind::interleaved,
                                                     layout_kind::strided_gaps};
inline constexpr layout_kind all_layout_kinds[] = {layout_kind::contiguous, layout_kind::interleaved,
                                                   layout_kind::strided_gaps,
                                                   layout_kind::interleaved_padded};

inline char const* name(layout_kind k) {
  switch (k) {
    case layout_kind::contiguous:
      return "contiguous";
    case layout_kind::interleaved:
      return "interleaved";
    case layout_kind::strided_gaps:
      return "strided_gaps";
    case layout_kind::interleaved_padded:
      return "interleaved_padded";
  }
  return "?";
}

inline recur::layout make_layout(layout_kind k, std::int64_t n, std::int64_t count) {
  switch (k) {
    case layout_kind::contiguous:
      return recur::layout::contiguous(n, count);
    case layout_kind::interleaved:
      return recur::layout::interleaved(n, count);
    // Every other element, and 3 unused elements between sequences.
    case layout_kind::strided_gaps:
      return recur::layout::strided(n, count, 2, 2 * n + 3);
    // Interleaved rows padded by 2 elements.
    case layout_kind::interleaved_padded:
      return recur::layout::strided(n, count, count + 2, 1);
  }
  return {};
}

// Elements from the first to the last element of the layout (0 if empty).
// Strides are positive here (the tests build only such layouts).
inline std::int64_t extent(recur::layout const& l) {
  if (l.n == 0 || l.count == 0) return 0;
  return (l.n - 1) * l.element_stride + (l.count - 1) * l.batch_stride + 1;
}

inline bool is_dense(recur::layout const& l) { return extent(l) == l.n * l.count; }

// Which of the extent's values (W per element) belong to the layout.
inline std::vector<bool> covered(recur::layout const& lay, int W = 1) {
  std::vector<bool> in(static_cast<std::size_t>(extent(lay) * W), false);
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i)
      for (int j = 0; j < W; ++j) in[static_cast<std::size_t>(lay.offset(i, k) * W + j)] = true;
  return in;
}

// Every value of y (W per element) outside the layout is still the poison.
template <class T>
bool gaps_untouched(std::vector<T> const& y, recur::layout const& lay, int W = 1) {
  auto const in = covered(lay, W);
  for (std::size_t o = 0; o < y.size(); ++o)
    if (!in[o] && !is_poison(y[o])) return false;
  return true;
}

// v (the layout's extent) with every sequence reversed, the gaps copied.
template <class T>
std::vector<T> flipped(std::vector<T> const& v, recur::layout const& lay) {
  std::vector<T> f = v;
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) f[lay.offset(i, k)] = v[lay.offset(lay.n - 1 - i, k)];
  return f;
}

}  // namespace recur_test
