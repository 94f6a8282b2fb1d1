#pragma once
// The workspace of a tridiagonal solve plan (tridiag_resolve.cuh): how many
// bytes, and the pieces each form and wrapper cuts it into
// (kernels/dispatch/workspace.cuh's rule; the launches hand the pieces out
// in the order sized here). Host code only.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "tridiag_resolve.cuh"
#include "workspace.cuh"

namespace recur::detail {

template <class T>
std::size_t tridiag_form_workspace_bytes(layout const& lay, tridiag_form const& form,
                                         tridiag_device const& dev);

// The partitioned form's: the reduced batch (4 arrays of 2 chunks values a
// system), two ints a system (three where the breakdown depends on the
// right-hand side: rd and cr_rd inside), and what the reduced batch's own
// solve needs (tridiag_plan_reduced).
template <class T>
struct tridiag_partition_workspace {
  layout reduced;
  std::optional<tridiag_form> nested;
  std::size_t arrays = 0, ints = 0, nested_bytes = 0;
  bool rhs_breakdown = false;
  tridiag_partition_workspace(layout const& lay, tridiag_partition_plan const& pl, tridiag_device const& dev)
      : reduced(layout::contiguous(2 * std::int64_t(pl.chunks), lay.count)),
        nested(tridiag_plan_reduced<T>(reduced, pl, dev)),
        rhs_breakdown(tridiag_rhs_breakdown(pl.inner)) {
    arrays = kernels::workspace_piece(std::size_t(reduced.n) * reduced.count * sizeof(T));
    ints = kernels::workspace_piece(std::size_t(lay.count) * sizeof(std::int32_t));
    nested_bytes = nested ? tridiag_form_workspace_bytes<T>(reduced, *nested, dev) : 0;
  }
  std::size_t total() const { return 4 * arrays + (rhs_breakdown ? 3 : 2) * ints + nested_bytes; }
};

// Bondeli's: y, w and v (n values a system each), H's three diagonals and
// right-hand side (m = 2 (p - 1) rows a system), a breakdown row and H's
// info per system, and the pivoted form's factorisation of H.
template <class T>
struct tridiag_bondeli_workspace {
  kernels::bondeli_cut cut;
  layout reduced;
  tridiag_pivot_plan reduced_plan;
  std::size_t vectors = 0, diagonals = 0, bad = 0, hinfo = 0, pivot = 0;
  tridiag_bondeli_workspace(layout const& lay, tridiag_bondeli_plan const& pl)
      : cut(std::max<std::int64_t>(1, lay.n), pl.blocks),
        reduced(layout::contiguous(2 * (cut.count - 1), lay.count)),
        reduced_plan(tridiag_plan_pivot(pl.threads, false)) {
    std::size_t const count = std::size_t(std::max<std::int64_t>(0, lay.count));
    vectors = kernels::workspace_piece(std::size_t(std::max<std::int64_t>(0, lay.n)) * count * sizeof(T));
    diagonals = kernels::workspace_piece(std::size_t(reduced.n) * count * sizeof(T));
    bad = kernels::workspace_piece(count * sizeof(unsigned long long));
    hinfo = kernels::workspace_piece(count * sizeof(std::int32_t));
    pivot = reduced.n > 0
                ? std::size_t(reduced.n) * std::size_t(tridiag_pivot_slots<T>(reduced, reduced_plan)) *
                      kernels::tridiag_pivot_row_bytes<T>(false)
                : 0;
  }
  std::size_t total() const { return 3 * vectors + 4 * diagonals + bad + hinfo + pivot; }
};

// The pivoted form's: its factors, n values a row of each slot.
template <class T>
std::size_t tridiag_pivot_workspace_bytes(layout const& lay, tridiag_pivot_plan const& pl) {
  return std::size_t(std::max<std::int64_t>(0, lay.n)) * std::size_t(tridiag_pivot_slots<T>(lay, pl)) *
         kernels::tridiag_pivot_row_bytes<T>(pl.refine);
}

template <class T>
std::size_t tridiag_form_workspace_bytes(layout const& lay, tridiag_form const& form,
                                         tridiag_device const& dev) {
  std::size_t const count = std::size_t(std::max<std::int64_t>(0, lay.count));
  std::size_t const values = std::size_t(std::max<std::int64_t>(0, lay.n)) * count;
  if (auto const* t = std::get_if<tridiag_tile_plan>(&form))  // rd, cr_rd: a status per system
    return tridiag_rhs_breakdown(t->solver) ? count * sizeof(std::int32_t) : 0;
  if (std::holds_alternative<tridiag_global_thomas_plan>(form))  // c' and d'
    return kernels::workspace_piece(values * sizeof(T)) + values * sizeof(T);
  if (auto const* p = std::get_if<tridiag_partition_plan>(&form))
    return tridiag_partition_workspace<T>(lay, *p, dev).total();
  if (std::holds_alternative<tridiag_segments_plan>(form)) {
    auto const fallback = tridiag_segments_fallback<T>(lay, dev);
    return fallback ? tridiag_form_workspace_bytes<T>(lay, *fallback, dev) : 0;
  }
  if (auto const* p = std::get_if<tridiag_pivot_plan>(&form))
    return tridiag_pivot_workspace_bytes<T>(lay, *p);
  if (auto const* b = std::get_if<tridiag_bondeli_plan>(&form))
    return tridiag_bondeli_workspace<T>(lay, *b).total();
  return 0;  // the register and columns forms
}

// The periodic split's (dispatch_tridiag_periodic.cuh): the form's, then b'
// and u (later z), each the layout's extent, then w and the divisor (count
// values each).
template <class T>
struct tridiag_periodic_workspace {
  std::size_t form = 0, array = 0, per_system = 0;
  tridiag_periodic_workspace(layout const& lay, tridiag_solve_plan const& pl) {
    form = kernels::workspace_piece(tridiag_form_workspace_bytes<T>(lay, pl.form, pl.dev));
    std::int64_t const extent = lay.n <= 0 || lay.count <= 0 ? 0
                                                             : (lay.n - 1) * lay.element_stride +
                                                                   (lay.count - 1) * lay.batch_stride + 1;
    array = kernels::workspace_piece(std::size_t(extent) * sizeof(T));
    per_system = kernels::workspace_piece(std::size_t(std::max<std::int64_t>(0, lay.count)) * sizeof(T));
  }
  std::size_t total() const { return form + 2 * array + 2 * per_system; }
};

// The solve without the screen: the form's, or the periodic split's around it.
template <class T>
std::size_t tridiag_unscreened_workspace_bytes(layout const& lay, tridiag_solve_plan const& pl) {
  return pl.periodic ? tridiag_periodic_workspace<T>(lay, pl).total()
                     : tridiag_form_workspace_bytes<T>(lay, pl.form, pl.dev);
}

// The bounded pivoted form that solves again the systems the screen flags.
template <class T>
tridiag_pivot_plan tridiag_screen_fix_plan(tridiag_device const& dev) {
  return tridiag_with_policy<T>(dev.cc_major, [&]<class P>() {
    return tridiag_plan_pivot(P::system_threads, false, true, P::pivot_bounded_bytes);
  });
}

// The screen's (dispatch_tridiag_pivot.cuh): the solve's, then the no-pivot
// solve's info where the caller passes none and the flags where the caller
// passes no pivoted (count int32 each), then the bounded pivoted form's
// factors for the flagged systems.
template <class T>
struct tridiag_screened_workspace {
  tridiag_pivot_plan fix;
  std::size_t solve = 0, ints = 0, pivot = 0;
  tridiag_screened_workspace(layout const& lay, tridiag_solve_plan const& pl)
      : fix(tridiag_screen_fix_plan<T>(pl.dev)) {
    solve = kernels::workspace_piece(tridiag_unscreened_workspace_bytes<T>(lay, pl));
    ints = kernels::workspace_piece(std::size_t(std::max<std::int64_t>(0, lay.count)) * sizeof(std::int32_t));
    pivot = tridiag_pivot_workspace_bytes<T>(lay, fix);
  }
  std::size_t total() const { return solve + 2 * ints + pivot; }
};

// The bytes of workspace a plan needs (0: none).
template <class T>
std::size_t tridiag_workspace_bytes(layout const& lay, tridiag_solve_plan const& pl) {
  if (pl.screen != tridiag_screen::none) return tridiag_screened_workspace<T>(lay, pl).total();
  return tridiag_unscreened_workspace_bytes<T>(lay, pl);
}

}  // namespace recur::detail
