#pragma once
// Shared by the linrec_adjoint suites (host and CUDA): problems, poisoned
// outputs, and the check of dt, ds and the init's gradient against the
// adjoint recurrence evaluated in long double from the same (rounded)
// inputs.
//
// The inputs come from linrec_harness.hpp's generator: s, g (a problem's t)
// and init from one problem, the forward's w and the final state's gradient
// (another problem's t and init) from a second, so that every layout, its
// gaps and guards are poisoned the same way. The adjoint is linear in w and
// g, so w need not be the forward's result for the check to mean something.
//
// The check. lambda follows a linear recurrence (coefficient s one element
// back, input g), so its error bound is linrec_harness.hpp's, from the
// magnitudes M and E of its terms: err(lambda_i) <= tol_i. dt_i = lambda_i
// rounded to T; ds_i = lambda_i x_i (x the forward's neighbouring w or
// init), err <= |x_i| tol_i + eps |lambda_i x_i|, then rounded to T; the
// init's gradient s lambda likewise.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <recur/linrec.hpp>

#include "linrec_harness.hpp"

namespace recur_test {

struct adjoint_spec {
  recur::layout lay;
  recur::direction dir = recur::direction::forward;
  bool s_scalar = false;
  init_kind init = init_kind::array;  // the forward's init (ds at its first element)
  bool final_gradient = true;
  bool init_gradient = true;
  bool ds = true;
  bool in_place = false;  // dt is g's array
  coef dist = coef::uniform;
  std::uint64_t seed = 1;

  std::string describe() const {
    return fmt::format(
        "layout {{n={}, count={}, es={}, bs={}}} {} s={} init={} final_gradient={} init_gradient={} ds={} "
        "{} coef={} seed={:#x}",
        lay.n, lay.count, lay.element_stride, lay.batch_stride,
        dir == recur::direction::forward ? "forward" : "reverse", s_scalar ? "scalar" : "array", name(init),
        final_gradient, init_gradient, ds, in_place ? "dt=g" : "separate", name(dist), seed);
  }
};

// Options that vary with a case index (as rotated() does for linrec).
inline adjoint_spec rotated(adjoint_spec sp, int idx) {
  sp.init = static_cast<init_kind>(idx % 3);
  sp.final_gradient = idx % 2 == 0;
  sp.init_gradient = idx % 4 != 1;
  sp.s_scalar = idx % 5 == 3;
  sp.ds = !sp.s_scalar || idx % 3 == 0;
  sp.in_place = idx % 7 == 2;
  return sp;
}

// Every combination of s (array or scalar), init (none, value, array), final
// and init gradients, ds and in-place dt for one layout and direction:
// 2 x 3 x 2 x 2 x 2 x 2 = 96.
inline std::vector<adjoint_spec> adjoint_combinations(recur::layout const& lay, recur::direction dir,
                                                      std::uint64_t salt, int& idx) {
  std::vector<adjoint_spec> out;
  for (bool const s_scalar : {false, true})
    for (init_kind const init : {init_kind::none, init_kind::value, init_kind::array})
      for (bool const fg : {false, true})
        for (bool const ig : {false, true})
          for (bool const ds : {false, true})
            for (bool const in_place : {false, true}) {
              adjoint_spec sp;
              sp.lay = lay;
              sp.dir = dir;
              sp.s_scalar = s_scalar;
              sp.init = init;
              sp.final_gradient = fg;
              sp.init_gradient = ig;
              sp.ds = ds;
              sp.in_place = in_place;
              sp.dist = coef::near_one;
              sp.seed = seed_for(salt, static_cast<std::uint64_t>(idx++));
              out.push_back(sp);
            }
  return out;
}
inline constexpr std::int64_t adjoint_combination_count = 96;

template <class T>
struct adjoint_problem {
  static constexpr std::int64_t guard = problem<T>::guard;
  adjoint_spec sp;
  problem<T> a;  // s (a.s or a.s_value), g = a.t, init = a.init / a.init_value
  problem<T> b;  // the forward's w = b.t, final gradient = b.init

  std::size_t size() const { return a.size(); }
  std::size_t state_size() const { return a.final_size(); }
  T const* s_ptr() const { return a.s_ptr(); }
  T const* w_ptr() const { return b.t_ptr(); }
  T const* g_ptr() const { return a.t_ptr(); }
  T s_value() const { return a.s_value; }
  T init_of(std::int64_t k) const { return a.init_of(k); }
  T final_gradient_of(std::int64_t k) const {
    return sp.final_gradient ? b.init[static_cast<std::size_t>(guard + k)] : T(0);
  }
  // The options of a call; the state pointers point wherever the caller's
  // copies live (host or device).
  recur::linrec_adjoint_options<T> options(T const* init_p, T const* final_gradient_p, T* init_gradient_p,
                                           recur::linrec_variant v = recur::linrec_variant::automatic) const {
    recur::linrec_adjoint_options<T> o;
    o.dir = sp.dir;
    if (sp.init == init_kind::value) o.init_value = a.init_value;
    if (sp.init == init_kind::array) o.init = init_p;
    o.final_gradient = sp.final_gradient ? final_gradient_p : nullptr;
    o.init_gradient = sp.init_gradient ? init_gradient_p : nullptr;
    o.variant = v;
    return o;
  }
};

template <class T>
adjoint_problem<T> make_adjoint_problem(adjoint_spec const& sp) {
  spec first;
  first.lay = sp.lay;
  first.dir = sp.dir;
  first.s_scalar = sp.s_scalar;
  first.init = sp.init;
  first.dist = sp.dist;
  first.seed = sp.seed;
  spec second = first;
  second.s_scalar = true;  // only t and init are used
  second.init = init_kind::array;
  second.seed = draw(sp.seed, 17);
  return {sp, make_problem<T>(first), make_problem<T>(second)};
}

// What a call wrote: dt's buffer (g's, in place), ds's and the init
// gradient's (empty where not requested), all with their guards.
template <class T>
struct adjoint_outputs {
  buffer<T> dt, ds, init_gradient;
};

// The error allowed in lambda_i computed in compute_t<T> (before it is
// stored): linrec_harness.hpp's bound without the store rounding.
template <class T>
long double lambda_tolerance(tolerance<T> const& tol, long double E, long double M) {
  using V = recur::compute_t<T>;
  return tol.eps * (c_dist * E + tol.log_term * M) +
         16.0L * static_cast<long double>(std::numeric_limits<V>::min()) * (1 + M);
}

// Empty when the outputs are right; otherwise what is wrong.
template <class T>
std::string check_adjoint(adjoint_problem<T> const& p, adjoint_outputs<T> const& out) {
  auto const& sp = p.sp;
  auto const& lay = sp.lay;
  constexpr std::int64_t g = adjoint_problem<T>::guard;
  failures f;
  auto const sized = [&](buffer<T> const& b, bool wanted, std::size_t size, char const* what) {
    if (wanted && b.size() != size)
      f.add([&] { return fmt::format("{} buffer has {} elements, expected {}", what, b.size(), size); });
    return wanted && b.size() == size;
  };
  bool const has_dt = sized(out.dt, true, p.size(), "dt");
  bool const has_ds = sized(out.ds, sp.ds, p.size(), "ds");
  bool const has_ig = sized(out.init_gradient, sp.init_gradient, p.state_size(), "init_gradient");
  if (!has_dt) return f.first.front();

  // Guards and gaps untouched (the poison, or g's values where dt is g).
  std::vector<bool> in_layout(p.size(), false);
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) in_layout[static_cast<std::size_t>(g + lay.offset(i, k))] = true;
  auto const untouched = [&](buffer<T> const& b, buffer<T> const* start, char const* what) {
    for (std::size_t o = 0; o < b.size(); ++o)
      if (!in_layout[o] && !same_bits(b[o], start ? (*start)[o] : poison<T>()))
        f.add([&] { return fmt::format("{} element {} outside the layout was written", what, o); });
  };
  untouched(out.dt, sp.in_place ? &p.a.t : nullptr, "dt");
  if (has_ds) untouched(out.ds, nullptr, "ds");
  if (has_ig)
    for (std::int64_t b = 0; b < g; ++b)
      if (!is_poison(out.init_gradient[static_cast<std::size_t>(b)]) ||
          !is_poison(out.init_gradient[static_cast<std::size_t>(g + lay.count + b)]))
        f.add([&] { return fmt::format("init_gradient guard element {} was written", b); });

  // Values, sequence by sequence (in parallel for big cases).
  bool const fwd = sp.dir == recur::direction::forward;
  tolerance<T> const tol(lay.n);
  long double const u_store = store_unit<T>, tiny = store_tiny<T>;
  auto const at = [&](buffer<T> const& b, std::int64_t o) -> long double {
    return b[static_cast<std::size_t>(g + o)];
  };
  auto const s_of = [&](std::int64_t o) -> long double { return p.sp.s_scalar ? p.s_value() : at(p.a.s, o); };
  int const workers = worker_count(lay.n * lay.count);
  std::vector<failures> fails(static_cast<std::size_t>(workers));
  auto const sequence = [&](std::int64_t k, failures& fk) {
    auto const expect = [&](char const* what, std::int64_t i, T got, long double want, long double allowed) {
      long double const err = std::fabs(static_cast<long double>(got) - want);
      if (!(err <= allowed))
        fk.add([&] {
          return fmt::format("{} of sequence {} element {}: got {:.9g}, exact {:.17g}, error {:.3g} > {:.3g}",
                             what, k, i, static_cast<double>(got), want, err, allowed);
        });
    };
    long double lambda = p.final_gradient_of(k), M = std::fabs(lambda), E = 0, a = 1;
    for (std::int64_t j = 0; j < lay.n; ++j) {
      std::int64_t const i = fwd ? lay.n - 1 - j : j;  // against the forward's direction
      std::int64_t const o = lay.offset(i, k);
      long double const gi = at(p.a.t, o);
      E = flush(std::fabs(a) * (E + M) + std::fabs(gi));
      M = flush(std::fabs(a) * M + std::fabs(gi));
      lambda = flush(a * lambda + gi);
      long double const lt = lambda_tolerance(tol, E, M);
      expect("dt", i, out.dt[static_cast<std::size_t>(g + o)], lambda,
             lt * (1 + u_store) + u_store * std::fabs(lambda) + tiny);
      if (has_ds) {
        bool const first = j == lay.n - 1;  // the forward's first element
        long double const x =
            first ? static_cast<long double>(p.init_of(k)) : at(p.b.t, lay.offset(fwd ? i - 1 : i + 1, k));
        long double const d = lambda * x;
        expect("ds", i, out.ds[static_cast<std::size_t>(g + o)], d,
               (std::fabs(x) * lt + tol.eps * std::fabs(d)) * (1 + u_store) + u_store * std::fabs(d) + tiny);
      }
      a = s_of(o);
      if (j == lay.n - 1 && has_ig) {
        long double const d = a * lambda;
        expect("init_gradient", -1, out.init_gradient[static_cast<std::size_t>(g + k)], d,
               (std::fabs(a) * lt + tol.eps * std::fabs(d)) * (1 + u_store) + u_store * std::fabs(d) + tiny);
      }
    }
    if (lay.n == 0 && has_ig &&
        !same_bits(out.init_gradient[static_cast<std::size_t>(g + k)],
                   sp.final_gradient ? p.b.init[static_cast<std::size_t>(g + k)] : T(0)))
      fk.add([&] { return fmt::format("init_gradient[{}] is not the final gradient (n == 0)", k); });
  };
  std::int64_t const tasks = std::min<std::int64_t>(lay.count, 64 * workers);
  parallel_for(tasks, workers, [&](std::int64_t task, int worker) {
    for (std::int64_t k = lay.count * task / tasks; k < lay.count * (task + 1) / tasks; ++k)
      sequence(k, fails[static_cast<std::size_t>(worker)]);
  });
  for (auto const& fw : fails) {
    f.count += fw.count;
    f.first.insert(f.first.end(), fw.first.begin(), fw.first.end());
  }
  std::string msg;
  for (auto const& m : f.first)
    if (msg.size() < 2000) msg += m + "\n";
  if (f.count) msg += fmt::format("{} failures in total", f.count);
  return msg;
}

// One call through recur::host on host copies of the problem.
template <class T>
adjoint_outputs<T> run_adjoint_host(adjoint_problem<T> const& p, recur::host ex) {
  constexpr std::int64_t g = adjoint_problem<T>::guard;
  auto const& sp = p.sp;
  adjoint_outputs<T> out;
  if (sp.in_place)
    out.dt = p.a.t;
  else
    out.dt.assign(p.size(), poison<T>());
  if (sp.ds) out.ds.assign(p.size(), poison<T>());
  if (sp.init_gradient) out.init_gradient.assign(p.state_size(), poison<T>());
  recur::operand<T> const s = sp.s_scalar ? recur::operand<T>(p.s_value()) : recur::operand<T>(p.s_ptr());
  T* const dt = out.dt.data() + g;
  recur::linrec_adjoint(
      ex, s, p.w_ptr(), sp.in_place ? dt : p.g_ptr(), dt, sp.ds ? out.ds.data() + g : nullptr, sp.lay,
      p.options(p.a.init_ptr(), p.b.init_ptr(), sp.init_gradient ? out.init_gradient.data() + g : nullptr));
  return out;
}

}  // namespace recur_test
