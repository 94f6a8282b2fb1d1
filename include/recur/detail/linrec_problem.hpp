#pragma once
// The normalised form of a linrec call that every backend receives: forward
// direction only (a reverse call becomes a forward one over a view with a
// negative element stride), scalars resolved, checked. Plain data, usable from
// host and device code.

#include <cstdint>

#include <recur/layout/layout.hpp>

namespace recur::detail {

template <class T>
struct linrec_problem {
  T const* s = nullptr;  // null: every s_i is s_value
  T s_value{};
  T const* t = nullptr;  // null: every t_i is t_value
  T t_value{};
  T* w = nullptr;
  layout lay{};             // element_stride may be negative (reverse view)
  T const* init = nullptr;  // null: init_value for every sequence
  T init_value{};
  T* final_state = nullptr;  // may be null

  RECUR_HD T init_of(std::int64_t k) const { return init ? init[k] : init_value; }
};

// Reverse direction as a forward recurrence over the mirrored view: element
// i of the view is element n-1-i of the arrays.
template <class T>
linrec_problem<T> mirrored(linrec_problem<T> p) {
  if (p.lay.n > 0) {
    std::int64_t const last = (p.lay.n - 1) * p.lay.element_stride;
    if (p.s) p.s += last;
    if (p.t) p.t += last;
    if (p.w) p.w += last;  // null for a problem with no output (linrec_summary's)
  }
  p.lay.element_stride = -p.lay.element_stride;
  return p;
}

// The normalised form of a linrec_adjoint call: the recurrence of lambda in
// the order it runs (the forward's reverse), as a linrec problem `scan` whose
// coefficient at element i is s_{i-1} (1 at element 0):
//   lambda_i = s_{i-1} lambda_{i-1} + g_i,  lambda_{-1} = scan.init,
// with scan.s the forward's s, scan.t = g, scan.w = dt, scan.init the final
// state's gradient and scan.final_state the init's gradient, s_{n-1}
// lambda_{n-1}. Each element also gives ds_i = lambda_i x_i, x_i the
// forward's w one element on in this order (w_{i+1}) and x_{n-1} = w_init.
template <class T>
struct linrec_adjoint_problem {
  linrec_problem<T> scan;
  T const* w = nullptr;       // the forward's w, laid out like scan.w (read where ds is written)
  T const* w_init = nullptr;  // the forward's initial state per sequence, or null: w_init_value
  T w_init_value{};
  T* ds = nullptr;  // null: not written

  RECUR_HD T w_init_of(std::int64_t k) const { return w_init ? w_init[k] : w_init_value; }
};

// The adjoint's order reversed, as mirrored(linrec_problem).
template <class T>
linrec_adjoint_problem<T> mirrored(linrec_adjoint_problem<T> p) {
  if (p.scan.lay.n > 0) {
    std::int64_t const last = (p.scan.lay.n - 1) * p.scan.lay.element_stride;
    if (p.w) p.w += last;
    if (p.ds) p.ds += last;
  }
  p.scan = mirrored(p.scan);
  return p;
}

}  // namespace recur::detail
