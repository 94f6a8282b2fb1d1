#pragma once
// Sequential reference for first-order linear recurrences: the test oracle and
// the plainest statement of the math. No argument checking (the host API does
// that); s or t may be null to mean the scalar s_value or t_value.

#include <cstdint>

#include <recur/layout/layout.hpp>

namespace recur::reference {

// w_i = s_i w_{i-1} + t_i for one sequence k of a layout, forward from
// w_{-1} = init, or in reverse (w_i = s_i w_{i+1} + t_i from w_n = init).
// Returns the last value written (init when n == 0).
template <class T>
T linrec_sequence(T const* s, T s_value, T const* t, T t_value, T* w, layout const& lay, std::int64_t k,
                  T init, bool reverse = false) {
  T x = init;
  for (std::int64_t j = 0; j < lay.n; ++j) {
    std::int64_t const i = reverse ? lay.n - 1 - j : j;
    std::int64_t const o = lay.offset(i, k);
    T const si = s ? s[o] : s_value;
    T const ti = t ? t[o] : t_value;
    x = si * x + ti;
    w[o] = x;
  }
  return x;
}

// Every sequence of the layout. init (count values) may be null: init_value.
// final_state (count values) may be null.
template <class T>
void linrec(T const* s, T s_value, T const* t, T t_value, T* w, layout const& lay, T const* init,
            T init_value, T* final_state, bool reverse = false) {
  for (std::int64_t k = 0; k < lay.count; ++k) {
    T const last = linrec_sequence(s, s_value, t, t_value, w, lay, k, init ? init[k] : init_value, reverse);
    if (final_state) final_state[k] = last;
  }
}

// The adjoint of linrec for sequence k (recur::linrec_adjoint's math): g the
// gradient of w, lambda run against the forward's direction from
// final_gradient, dt = lambda, ds_i = lambda_i times the forward's previous
// w (init at the forward's first element; ds may be null). Returns the
// gradient of init (final_gradient when n == 0). dt may be g.
template <class T>
T linrec_adjoint_sequence(T const* s, T s_value, T const* w, T const* g, T* dt, T* ds, layout const& lay,
                          std::int64_t k, T init, T final_gradient, bool reverse = false) {
  T lambda = final_gradient;
  T a = T(1);  // the coefficient that carries lambda to the next element
  for (std::int64_t j = 0; j < lay.n; ++j) {
    std::int64_t const i = reverse ? j : lay.n - 1 - j;
    std::int64_t const o = lay.offset(i, k);
    lambda = a * lambda + g[o];
    dt[o] = lambda;
    bool const first = reverse ? i == lay.n - 1 : i == 0;  // the forward's first element
    if (ds) ds[o] = lambda * (first ? init : w[lay.offset(reverse ? i + 1 : i - 1, k)]);
    a = s ? s[o] : s_value;
  }
  return a * lambda;
}

// Every sequence of the layout. init and final_gradient (count values) may
// be null (init_value, zero); init_gradient (count values) may be null.
template <class T>
void linrec_adjoint(T const* s, T s_value, T const* w, T const* g, T* dt, T* ds, layout const& lay,
                    T const* init, T init_value, T const* final_gradient, T* init_gradient,
                    bool reverse = false) {
  for (std::int64_t k = 0; k < lay.count; ++k) {
    T const d = linrec_adjoint_sequence(s, s_value, w, g, dt, ds, lay, k, init ? init[k] : init_value,
                                        final_gradient ? final_gradient[k] : T(0), reverse);
    if (init_gradient) init_gradient[k] = d;
  }
}

}  // namespace recur::reference
