#pragma once
// The comparison of a linear recurrence's GPU outputs (lfilter, sosfilt, the
// DPCM codecs, linrec_order_k) with its oracle, for the host-API GPU suites.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <recur/layout/layout.hpp>

#include "filters.hpp"
#include "layouts.hpp"
#include "parallel.hpp"
#include "poison.hpp"
#include "random.hpp"

namespace recur_test {

// A recurrence's inputs from r: samples in [-1, 1) over the layout's extent
// (gaps hold samples too, never read) and, when with_state, `state`
// initial-state values.
template <class T>
void draw_inputs(rng& r, recur::layout const& lay, std::int64_t state, bool with_state, std::vector<T>& x,
                 std::vector<T>& zi) {
  x.resize(static_cast<std::size_t>(extent(lay)));
  fill_symmetric(x, r.next());
  if (!with_state) return;
  zi.resize(static_cast<std::size_t>(state));
  for (auto& v : zi) v = static_cast<T>(r.symmetric());
}

// The oracle of a recurrence with `per` state values a lane, lane by lane on
// every core, in O: lane(q, xs, ys, zi, zf) computes lane q from its samples
// xs (x at the layout's positions) and initial state zi (null without one)
// into ys and zf (contiguous); y receives ys at the layout's positions and,
// when want_zf, zf the final states (count * per values), rounded to double.
template <class O, class T, class LaneT>
void oracle_lanes(recur::layout const& lay, std::vector<T> const& x, std::vector<T> const& zi,
                  std::int64_t per, bool want_zf, std::vector<double>& y, std::vector<double>& zf,
                  LaneT&& lane) {
  y.assign(x.size(), 0.0);
  zf.assign(want_zf ? static_cast<std::size_t>(lay.count * per) : 0, 0.0);
  parallel_for(lay.count, worker_count(lay.n * lay.count), [&](std::int64_t q, int) {
    std::vector<O> xs(static_cast<std::size_t>(lay.n)), ys(xs.size()), zis(static_cast<std::size_t>(per)),
        zfs(zis.size());
    for (std::int64_t i = 0; i < lay.n; ++i) xs[i] = x[lay.offset(i, q)];
    for (std::int64_t j = 0; j < per; ++j) zis[j] = zi.empty() ? O(0) : O(zi[q * per + j]);
    lane(q, xs, ys, zi.empty() ? nullptr : zis.data(), zfs);
    for (std::int64_t i = 0; i < lay.n; ++i) y[lay.offset(i, q)] = static_cast<double>(ys[i]);
    if (want_zf)
      for (std::int64_t j = 0; j < per; ++j) zf[q * per + j] = static_cast<double>(zfs[j]);
  });
}

struct lti_comparison {
  std::string first;  // what went wrong first; empty when nothing did
  double worst_y = 0, worst_state = 0;
};

// Every element of y in the layout written, finite and within tol of want_y
// (the oracle at the layout's positions); every other element untouched: the
// poison, or x's value when y is x (in place); and, when state is given,
// every final-state value written, finite and within tol of want_state.
// A NaN error counts as the worst.
template <class T>
lti_comparison compare_lti(recur::layout const& lay, std::vector<T> const& y,
                           std::vector<double> const& want_y, std::vector<T> const& x, bool in_place,
                           std::vector<T> const* state, std::vector<double> const& want_state,
                           char const* state_name, double tol) {
  lti_comparison c;
  if (y.size() != x.size()) {
    c.first = "y has the wrong size";
    return c;
  }
  auto const check = [&](T v, double want, double& worst, auto&& where) {
    double const e = std::fabs(double(v) - want);
    if ((is_poison(v) || !std::isfinite(v) || !(e <= tol)) && c.first.empty())
      c.first = is_poison(v) ? fmt::format("{} was not written", where())
                             : fmt::format("{} = {} where the oracle has {}: error {:.3g}", where(),
                                           double(v), want, e);
    if (!(e <= worst)) worst = e;
  };
  std::vector<char> in(y.size(), 0);
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, q);
      in[o] = 1;
      check(y[o], want_y[o], c.worst_y, [&] { return fmt::format("y({}, {})", i, q); });
    }
  for (std::size_t o = 0; o < in.size(); ++o)
    if (!in[o] && c.first.empty() && !(in_place ? same_bits(y[o], x[o]) : is_poison(y[o])))
      c.first = fmt::format("the gap at offset {} was written", o);
  if (state) {
    if (state->size() != want_state.size()) {
      c.first = fmt::format("{} has the wrong size", state_name);
      return c;
    }
    for (std::size_t j = 0; j < want_state.size(); ++j)
      check((*state)[j], want_state[j], c.worst_state, [&] { return fmt::format("{}[{}]", state_name, j); });
  }
  return c;
}

}  // namespace recur_test
