// The grid operations of grid.hpp on the CPU: loops over rows, the rows
// spread over OpenMP threads. Each value is computed by one thread in a
// fixed order, so results do not depend on the thread count.
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common/space.hpp"
#include "multigrid/grid.hpp"

namespace recur_examples {

namespace {

// d = s (f - A u) rounded to U, row by row; with Sum, returns sum (f - A
// u)^2 (each row's sum by one thread, the rows' sums added in order).
template <bool Sum, class T, class U>
double residual_rows(grid const& g, T const* u, T const* f, double s, U* d) {
  using W = std::common_type_t<T, U>;
  T const cx = static_cast<T>(g.cx), cy = static_cast<T>(g.cy);
  W const sw = static_cast<W>(s);
  std::int64_t const mx = g.mx, my = g.my;
  std::vector<double> rows(Sum ? static_cast<std::size_t>(my) : 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < my; ++j) {
    T const* const row = u + j * mx;
    T const* const below = j > 0 ? row - mx : nullptr;
    T const* const above = j + 1 < my ? row + mx : nullptr;
    double acc = 0;
    for (std::int64_t i = 0; i < mx; ++i) {
      T const w = i > 0 ? row[i - 1] : T(0), e = i + 1 < mx ? row[i + 1] : T(0);
      T const so = below ? below[i] : T(0), n = above ? above[i] : T(0);
      T const c = row[i];
      T const r = f[j * mx + i] - (cx * ((c - w) - (e - c)) + cy * ((c - so) - (n - c)));
      d[j * mx + i] = static_cast<U>(sw * static_cast<W>(r));
      if constexpr (Sum) acc += static_cast<double>(r) * static_cast<double>(r);
    }
    if constexpr (Sum) rows[static_cast<std::size_t>(j)] = acc;
  }
  return std::accumulate(rows.begin(), rows.end(), 0.0);
}

}  // namespace

template <class T>
void residual(host_space const&, grid const& g, T const* u, T const* f, T* r) {
  residual_rows<false>(g, u, f, 1.0, r);
}

template <class T, class U>
double defect(host_space const&, grid const& g, T const* u, T const* f, double s, U* d) {
  return residual_rows<true>(g, u, f, s, d);
}

template <class T>
void restrict_full_weighting(host_space const&, grid const& fine, T const* r, T* fc) {
  grid const c = fine.coarse();
  std::int64_t const mx = fine.mx;
#pragma omp parallel for schedule(static)
  for (std::int64_t J = 0; J < c.my; ++J) {
    // The fine rows 2J, 2J + 1, 2J + 2 around the coarse row J: all interior.
    T const* const r0 = r + (2 * J) * mx;
    T const* const r1 = r0 + mx;
    T const* const r2 = r1 + mx;
    for (std::int64_t I = 0; I < c.mx; ++I) {
      std::int64_t const i = 2 * I + 1;
      T const corners = r0[i - 1] + r0[i + 1] + r2[i - 1] + r2[i + 1];
      T const edges = r0[i] + r2[i] + r1[i - 1] + r1[i + 1];
      fc[J * c.mx + I] = (4 * r1[i] + 2 * edges + corners) / 16;
    }
  }
}

template <class T>
void prolongate_add(host_space const&, grid const& fine, T const* ec, T* u) {
  grid const c = fine.coarse();
  std::int64_t const mx = fine.mx, my = fine.my;
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < my; ++j) {
    // Fine row j lies on coarse row (j - 1) / 2 when j is odd, halfway
    // between coarse rows j / 2 - 1 and j / 2 when even (a row outside the
    // interior is the boundary, zero).
    std::int64_t const J0 = j % 2 ? (j - 1) / 2 : j / 2 - 1, J1 = j % 2 ? -1 : j / 2;
    T const wy = j % 2 ? T(1) : T(0.5);
    T const* const c0 = J0 >= 0 ? ec + J0 * c.mx : nullptr;
    T const* const c1 = J1 >= 0 && J1 < c.my ? ec + J1 * c.mx : nullptr;
    for (std::int64_t i = 0; i < mx; ++i) {
      std::int64_t const I0 = i % 2 ? (i - 1) / 2 : i / 2 - 1, I1 = i % 2 ? -1 : i / 2;
      T const wx = i % 2 ? T(1) : T(0.5);
      auto const at = [&](T const* row) {
        if (!row) return T(0);
        T v = I0 >= 0 ? row[I0] : T(0);
        if (I1 >= 0 && I1 < c.mx) v += row[I1];
        return v;
      };
      u[j * mx + i] += wx * wy * (at(c0) + at(c1));
    }
  }
}

template <class T>
void scale_copy(host_space const&, std::int64_t n, double a, T const* x, T* y) {
  T const at = static_cast<T>(a);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) y[k] = at * x[k];
}

template <class T, class U>
void axpy(host_space const&, std::int64_t n, double a, T const* x, U* y) {
  using W = std::common_type_t<T, U>;
  W const aw = static_cast<W>(a);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k)
    y[k] = static_cast<U>(static_cast<W>(y[k]) + aw * static_cast<W>(x[k]));
}

template <class T>
void fill(host_space const&, std::int64_t n, T v, T* y) {
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) y[k] = v;
}

RECUR_EXAMPLES_GRID_INSTANCES(host_space)

}  // namespace recur_examples
