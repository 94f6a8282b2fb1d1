#pragma once
// The cases of the GPU suites of recur::sosfilt (test_sosfilt_cuda.cpp), the
// floating-point DPCM codecs (test_dpcm_cuda.cpp) and recur::linrec_order_k
// (test_linrec_order_k_cuda.cpp): the host API's GPU paths, one problem type
// for the four recurrences. Host code only.
//
// Every output is compared with the sequential reference (reference::sosfilt,
// dpcm_encode, dpcm_decode, linrec_order_k) run on the host in higher
// precision (recur_test::oracle_t: double for f32, x87 long double for f64
// where there is one) on the same rounded coefficients, samples and state. Cases: 1, 2, 3,
// 4, 5 and 9 sections (more than 4 run in passes), every row's a0 != 1; DPCM
// orders 0, 1, 2, 3, 5, 8 and linrec_order_k orders 0-8; f32 and f64;
// contiguous, interleaved and strided (gaps) layouts; 1 to 64 lanes, and
// 4100-5000 short sequences (another kernel); lengths 0 to ~3 * 10^5 (n < k
// included); state in and out, none, in place (y == x), zf == zi; the DPCM
// round trip. Outputs start poisoned (all-ones bytes, a NaN): every element
// of the layout must be written, finite and within the tolerance, every gap
// left alone. Also: argument errors (nothing written), reproducibility.
//
// The tolerance (test_lfilter_cuda.cpp's argument): an error committed in the
// state of a stable recurrence reaches later outputs through the powers of
// its state matrix A, whatever the evaluation order (the GPU's scan too), so
//   |y_gpu - y_oracle| <= C * eps * (K + 1) * G * S,   C = 16,
// eps = 2^-23 or 2^-52, K the state size, G = sum_k ||A^k||_inf (until a
// power's norm is below 1e-18), S the size of the terms; likewise every
// final-state value.
// - sosfilt: K = 2 * sections; A (2S x 2S): column i is the state after one
//   zero-input step of the cascade (reference::detail::df2t_step, section
//   after section) from the unit state e_i; S = max(1, max|y|, max|zi|,
//   max|zf|, max|x| (1 + max|b / a0|), M), M the largest output or state
//   value of any section over the run (a section's output can exceed the
//   cascade's). Cascades are drawn with G <= 300 (9 sections: median ~200),
//   so tol <= 16 * 19 * 300 eps S = 1.1e-2 S in f32 (checked: < 2e-2 S).
// - dpcm_decode, linrec_order_k (y_i = sum_j c_j y_{i-j} + x_i): K = k, A the
//   companion matrix of [1, -c_1, ..., -c_k] (recur_test::error_gain), c
//   drawn with G <= 100 (roots inside radius 0.9); S = max(1, max|in|,
//   max|out|, max|init|, max|final state|) (1 + max|c|), the size of the
//   prediction's terms. dpcm_encode (an FIR filter): K = k, G = k + 1, S alike.
// - decode(encode(x)) vs x: decode spreads the encoder's error (at most
//   tol_encode) by at most G (its impulse response sums to <= G), so
//   tol = G tol_encode + 16 eps (k + 1) G S.
//
// RECUR_TEST_SEED changes the inputs (random.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/chain.hpp>
#include <recur/filter.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include <recur/reference/linrec_order_k.hpp>

#include "cases.hpp"
#include "cuda_memory.hpp"
#include "filters.hpp"
#include "layouts.hpp"
#include "lti_check.hpp"
#include "poison.hpp"
#include "random.hpp"

namespace lti_cuda {

using recur::layout;
using recur_test::dbuf;
using recur_test::finish;
using recur_test::layout_kind;
using recur_test::oracle_t;
using recur_test::poisoned;
using recur_test::rng;
using recur_test::seed_for;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;

// ----------------------------------------------------------- coefficients ---

// The cascade's error gain from its normalised rows (3 b and 3 a values per
// section): A from zero-input steps of the reference's DF2T step.
inline double cascade_gain(std::vector<double> const& nb, std::vector<double> const& na) {
  int const sections = static_cast<int>(nb.size() / 3), m = 2 * sections;
  std::vector<double> A(static_cast<std::size_t>(m * m));
  for (int i = 0; i < m; ++i) {
    std::vector<double> z(static_cast<std::size_t>(m), 0.0);
    z[i] = 1;
    double v = 0;
    for (int j = 0; j < sections; ++j)
      v = recur::reference::detail::df2t_step(&nb[3 * j], &na[3 * j], 2, &z[2 * j], v);
    for (int r = 0; r < m; ++r) A[r * m + i] = z[r];
  }
  return recur_test::power_sum(A, m);
}

// -------------------------------------------------------------- problems ---

enum class op { sosfilt, encode, decode, order_k };
inline char const* name(op w) {
  constexpr char const* names[] = {"sosfilt", "dpcm_encode", "dpcm_decode", "linrec_order_k"};
  return names[static_cast<int>(w)];
}

struct spec {
  op what = op::sosfilt;
  int order = 2;  // sections for sosfilt, k (c.size(), a.size()) otherwise
  layout lay;
  bool zi = true, zf = true;    // initial state in; final state out (sosfilt, linrec_order_k)
  bool in_place = false;        // y == x
  bool state_in_place = false;  // zf == zi
  std::uint64_t seed = 0;

  std::int64_t per() const { return what == op::sosfilt ? 2 * order : order; }
  std::int64_t state_size() const { return lay.count * per(); }
  bool has_zf() const { return zf && (what == op::sosfilt || what == op::order_k); }
  std::string describe() const {
    return fmt::format(
        "{} {} {}, layout {{n = {}, count = {}, element_stride = {}, batch_stride = {}}}{}{}{}{}, "
        "seed {:#x}",
        name(what), what == op::sosfilt ? "sections" : "order", order, lay.n, lay.count, lay.element_stride,
        lay.batch_stride, zi ? ", state in" : "", has_zf() ? ", state out" : "", in_place ? ", in place" : "",
        state_in_place ? ", zf == zi" : "", seed);
  }
};

template <class T>
struct problem {
  spec sp;
  std::vector<T> coef;         // sos rows, or c / a
  std::vector<double> nb, na;  // sosfilt: the rows normalised by a0 (3 + 3 per section)
  std::vector<T> x, zi;        // input (the layout's extent; gaps hold values too), initial state
  std::vector<double> y, zf;   // the oracle (layout positions; final state)
  double gain = 1, scale = 0, tol = 0;
};

inline double worst_c = 0;  // the largest |error| / (eps (K + 1) G S) seen since the last report

template <class T>
problem<T> make_problem(spec const& sp) {
  problem<T> p;
  p.sp = sp;
  rng r(sp.seed);
  int const k = sp.order;
  if (sp.what == op::sosfilt) {
    do {  // rows [b0 b1 b2 a0 a1 a2], a0 in [0.5, 2): the normalisation is exercised
      p.coef.clear(), p.nb.clear(), p.na.clear();
      for (int j = 0; j < k; ++j) {
        std::vector<double> const poly = recur_test::stable_poly(r, 2);
        double const a0 = 0.5 + 1.5 * r.uniform();
        for (int c = 0; c < 3; ++c) p.coef.push_back(static_cast<T>(r.symmetric()));
        for (int c = 0; c < 3; ++c) p.coef.push_back(static_cast<T>(a0 * poly[c]));
        std::vector<double> const row(p.coef.end() - 6, p.coef.end());
        auto const f = recur::reference::detail::normalise<double>("sos", std::span(row).first(3),
                                                                   std::span(row).last(3));
        p.nb.insert(p.nb.end(), f.b.begin(), f.b.end());
        p.na.insert(p.na.end(), f.a.begin(), f.a.end());
      }
      p.gain = cascade_gain(p.nb, p.na);
    } while (p.gain > 300);
  } else {
    do {  // c_j = -a_j of a stable monic a
      std::vector<double> const poly = recur_test::stable_poly(r, k);
      std::vector<double> a{1.0};
      p.coef.clear();
      for (int j = 1; j <= k; ++j) {
        p.coef.push_back(static_cast<T>(-poly[j]));
        a.push_back(-double(p.coef.back()));
      }
      p.gain = recur_test::error_gain(a);
    } while (p.gain > 100);
  }
  layout const& lay = sp.lay;
  std::int64_t const per = sp.per();
  recur_test::draw_inputs(r, lay, sp.state_size(), sp.zi, p.x, p.zi);
  // The oracle, lane by lane (in parallel); for sosfilt also M, the largest
  // intermediate value (section outputs and states, in double).
  using O = oracle_t<T>;
  std::vector<O> const co(p.coef.begin(), p.coef.end());
  std::vector<double> inner(static_cast<std::size_t>(lay.count), 0.0);
  recur_test::oracle_lanes<O>(
      lay, p.x, p.zi, per, sp.has_zf(), p.y, p.zf,
      [&](std::int64_t q, auto const& xs, auto& ys, O const* zi, auto& zfs) {
        layout const one = layout::contiguous(lay.n);
        namespace ref = recur::reference;
        if (sp.what == op::sosfilt) ref::sosfilt<O>(co, xs.data(), ys.data(), one, zi, zfs.data());
        if (sp.what == op::encode) ref::dpcm_encode<O>(co, xs.data(), ys.data(), one, zi);
        if (sp.what == op::decode) ref::dpcm_decode<O>(co, xs.data(), ys.data(), one, zi);
        if (sp.what == op::order_k) ref::linrec_order_k<O>(co, xs.data(), ys.data(), one, zi, zfs.data());
        if (sp.what != op::sosfilt) return;
        std::vector<double> z(static_cast<std::size_t>(per), 0.0);
        for (std::int64_t j = 0; zi && j < per; ++j) z[j] = double(zi[j]);
        double m = 0;
        for (std::int64_t i = 0; i < lay.n; ++i) {
          double v = double(xs[i]);
          for (int j = 0; j < k; ++j) {
            v = recur::reference::detail::df2t_step(&p.nb[3 * j], &p.na[3 * j], 2, &z[2 * j], v);
            m = std::max({m, std::fabs(v), std::fabs(z[2 * j]), std::fabs(z[2 * j + 1])});
          }
        }
        inner[q] = m;
      });
  // S (see the top of the file).
  double xmax = 0, ymax = 0, smax = 0, cmax = 0;
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, q);
      xmax = std::max(xmax, std::fabs(double(p.x[o])));
      ymax = std::max(ymax, std::fabs(p.y[o]));
    }
  for (T const v : p.zi) smax = std::max(smax, std::fabs(double(v)));
  for (double const v : p.zf) smax = std::max(smax, std::fabs(v));
  if (sp.what == op::sosfilt) {
    for (double const v : p.nb) cmax = std::max(cmax, std::fabs(v));
    for (double const m : inner) smax = std::max(smax, m);
    p.scale = std::max({1.0, ymax, smax, xmax * (1 + cmax)});
  } else {
    for (T const v : p.coef) cmax = std::max(cmax, std::fabs(double(v)));
    p.scale = std::max({1.0, xmax, ymax, smax}) * (1 + cmax);
  }
  if (sp.what == op::encode) p.gain = k + 1;
  double const K = sp.what == op::sosfilt ? 2 * k : k;
  p.tol = 16 * std::numeric_limits<T>::epsilon() * (K + 1) * p.gain * p.scale;
  return p;
}

template <class T>
struct result {
  std::vector<T> y, zf;
};

// One call of the function on device pointers (ns state values in zi and zf;
// their size follows from the layout).
template <class T>
void call(recur::cuda const& ex, op what, std::span<T const> coef, T const* x, T* y, layout const& lay,
          T const* zi, T* zf, std::size_t /*ns*/) {
  if (what == op::sosfilt) recur::sosfilt(ex, coef, x, y, lay, {zi, zf});
  if (what == op::encode) recur::dpcm_encode(ex, coef, x, y, lay, {zi});
  if (what == op::decode) recur::dpcm_decode(ex, coef, x, y, lay, {zi});
  if (what == op::order_k) recur::linrec_order_k(ex, coef, x, y, lay, recur::chain_options<T>{zi, zf});
}

// On fresh device buffers: x and zi uploaded, y and zf poisoned.
template <class T>
result<T> run_gpu(problem<T> const& p) {
  spec const& sp = p.sp;
  std::size_t const ext = p.x.size(), ns = static_cast<std::size_t>(sp.state_size());
  dbuf<T> const dx = upload(p.x);
  dbuf<T> const dy = sp.in_place ? dbuf<T>() : poisoned<T>(ext);
  dbuf<T> const dzi = sp.zi ? upload(p.zi) : dbuf<T>();
  dbuf<T> const dzf = sp.has_zf() && !sp.state_in_place ? poisoned<T>(ns) : dbuf<T>();
  settle();
  T* const zf = !sp.has_zf() || !ns ? nullptr : sp.state_in_place ? dzi.p : dzf.p;
  call<T>(recur::cuda{test_stream()}, sp.what, p.coef, dx.p, sp.in_place ? dx.p : dy.p, sp.lay,
          sp.zi && ns ? dzi.p : nullptr, zf, ns);
  finish();
  result<T> r;
  r.y = (sp.in_place ? dx : dy).read();
  if (sp.has_zf()) r.zf = (sp.state_in_place ? dzi : dzf).read();
  return r;
}

// "" when every element of the layout is written, finite and within the
// tolerance, every gap untouched (poison, or x's value in place) and every
// final-state value within the tolerance; otherwise the first failure.
template <class T>
std::string mismatch(problem<T> const& p, result<T> const& r) {
  spec const& sp = p.sp;
  auto const c = recur_test::compare_lti(sp.lay, r.y, p.y, p.x, sp.in_place, sp.has_zf() ? &r.zf : nullptr,
                                         p.zf, "final state", p.tol);
  double const unit = p.tol / 16;  // eps (K + 1) G S
  if (unit > 0) worst_c = std::max({worst_c, c.worst_y / unit, c.worst_state / unit});
  if (c.first.empty()) return "";
  return fmt::format(
      "{} (worst error {:.3g}, tolerance {:.3g} = 16 eps (K + 1) G S with G = {:.3g}, S = {:.3g})", c.first,
      std::max(c.worst_y, c.worst_state), p.tol, p.gain, p.scale);
}

template <class T>
void run_and_check(spec const& sp) {
  auto const p = make_problem<T>(sp);
  BOOST_TEST(p.tol <= 2e-2 * p.scale, sp.describe() << ": tolerance " << p.tol << " is not far below S");
  std::string const why = mismatch(p, run_gpu(p));
  BOOST_TEST(why.empty(), (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": " << why);
}

inline void report(char const* what) {
  BOOST_TEST_MESSAGE(what << ": worst |error| / (eps (K + 1) G S) = " << worst_c << " (C = 16)");
  worst_c = 0;
}

inline constexpr auto const& kinds = recur_test::basic_layout_kinds;
inline constexpr auto const& dense = recur_test::dense_layout_kinds;

struct shape {
  std::int64_t n, count;
};

inline std::vector<int> const sections = {1, 2, 3, 4, 5, 9}, dpcm_orders = {0, 1, 2, 3, 5, 8},
                              orders_0_8 = {0, 1, 2, 3, 4, 5, 6, 7, 8};
inline std::vector<shape> const sos_shapes = [] {
  std::vector<shape> v;
  for (std::int64_t const count : {1, 3, 64})
    for (std::int64_t const n : {0, 1, 2, 31, 4099, 20011}) v.push_back({n, count});
  return v;
}();
inline std::vector<shape> const dpcm_shapes = {{1, 1}, {5, 1},    {4099, 1},   {100003, 1}, {1, 7},
                                               {5, 7}, {4099, 7}, {100003, 7}, {40, 4100}};
inline std::vector<shape> const order_k_shapes = {{0, 3},  {1, 1},    {2, 3},      {5, 3},
                                                  {7, 64}, {4099, 3}, {20011, 64}, {100003, 1}};

// Every layout kind x shape, with zi in and zf out (sosfilt), or init in and
// not (DPCM), or init and final_state, each with and without (linrec_order_k).
template <class T>
void sweep(op what, std::vector<int> const& orders, std::span<layout_kind const> ks,
           std::vector<shape> const& shapes, std::uint64_t salt) {
  recur_test::case_count cases(fmt::format("{} {} sweep", name(what), recur_test::type_name<T>));
  int const inits = what == op::encode || what == op::decode ? 2 : 1;
  int idx = 0;
  for (int order : orders)
    for (layout_kind const kind : ks)
      for (auto const [n, count] : shapes)
        for (int init = 0; init < inits; ++init, ++idx) {
          run_and_check<T>({.what = what,
                            .order = order,
                            .lay = recur_test::make_layout(kind, n, count),
                            .zi = init == 0 && !(what == op::order_k && idx % 3 == 2),
                            .zf = !(what == op::order_k && idx % 5 == 4),
                            .seed = seed_for(salt, static_cast<std::uint64_t>(idx))});
          cases.run();
        }
  report(fmt::format("{} {}", name(what), recur_test::type_name<T>).c_str());
  cases.require(static_cast<std::int64_t>(orders.size() * ks.size() * shapes.size()) * inits);
}

// y == x, zf == zi (sosfilt, linrec_order_k), and both at once.
template <class T>
void in_place(op what, std::vector<int> const& orders, std::uint64_t salt) {
  recur_test::case_count cases(fmt::format("{} {} in place", name(what), recur_test::type_name<T>));
  int idx = 0;
  for (int order : orders)
    for (layout_kind const kind : kinds)
      for (auto const [n, count] : {shape{1, 1}, shape{3, 3}, shape{4099, 64}, shape{20011, 3}})
        for (int mode = 0; mode < 3; ++mode, ++idx) {
          run_and_check<T>({.what = what,
                            .order = order,
                            .lay = recur_test::make_layout(kind, n, count),
                            .in_place = mode != 1,
                            .state_in_place = mode != 0 && (what == op::sosfilt || what == op::order_k),
                            .seed = seed_for(salt, static_cast<std::uint64_t>(idx))});
          cases.run();
        }
  cases.require(static_cast<std::int64_t>(orders.size()) * 3 * 4 * 3);  // x layouts x shapes x modes
}

// Bad arguments of each function in `ops`: recur::invalid_argument with the
// function's name and the argument's, before anything is written.
template <class T>
void errors(std::initializer_list<op> ops) {
  std::int64_t const n = 1000, count = 2;
  std::size_t const elements = n * count, ns = count * 2;  // 1 section, or order 2: 2 state values a lane
  layout const lay = layout::contiguous(n, count);
  rng r(seed_for(841, sizeof(T)));
  std::vector<T> hx(elements), hzi(ns), hy(elements, recur_test::poison<T>());
  for (auto& v : hx) v = T(r.symmetric());
  for (auto& v : hzi) v = T(r.symmetric());
  std::vector<T> const sos = {T(0.25), T(0.5), T(0.25), T(2), T(-0.5), T(0.25)}, c2 = {T(0.5), T(-0.25)},
                       c9(9, T(0.05)), sos7 = {T(0.25), T(0.5), T(0.25), T(1), T(-0.5), T(0.25), T(0.1)};
  auto const dx = upload(hx), dzi = upload(hzi), dsos = upload(sos), dc = upload(c2);
  auto const dy = poisoned<T>(elements), dzf = poisoned<T>(ns);
  settle();
  recur::cuda const ex{test_stream()};
  auto expect = [](auto&& f, std::string const& fn, std::vector<std::string> const& words,
                   std::string const& what) {
    BOOST_CHECK_EXCEPTION(f(), recur::invalid_argument, [&](recur::invalid_argument const& e) {
      std::string const m = e.what();
      bool ok = m.rfind(fn + ": ", 0) == 0;
      for (auto const& w : words) ok = ok && m.find(w) != std::string::npos;
      BOOST_TEST(ok, recur_test::type_name<T> << " " << what << ": message \"" << m << "\"");
      return ok;
    });
  };
  struct names {
    op what;
    char const *in, *out, *state, *coef;
  };
  names const table[] = {names{op::sosfilt, "x = ", "y = ", "opt.init = ", "sos = "},
                         names{op::encode, "x = ", "e = ", "init = ", "c = "},
                         names{op::decode, "e = ", "x = ", "init = ", "c = "},
                         names{op::order_k, "x = ", "y = ", "opt.init = ", "a = "}};
  for (op const what : ops) {
    names const& nm = table[static_cast<int>(what)];
    bool const sos_call = what == op::sosfilt;
    std::string const fn = std::string("recur::") + name(what);
    std::span<T const> const coef = sos_call ? std::span<T const>(sos) : std::span<T const>(c2);
    std::span<T const> const dcoef(sos_call ? dsos.p : dc.p, coef.size());
    T* const zf = sos_call || what == op::order_k ? dzf.p : nullptr;
    // Host memory where device memory is needed: the input, the output, the state.
    expect([&] { call<T>(ex, what, coef, hx.data(), dy.p, lay, dzi.p, zf, ns); }, fn, {nm.in, "host memory"},
           fn + " host input");
    expect([&] { call<T>(ex, what, coef, dx.p, hy.data(), lay, dzi.p, zf, ns); }, fn, {nm.out, "host memory"},
           fn + " host output");
    expect([&] { call<T>(ex, what, coef, dx.p, dy.p, lay, hzi.data(), zf, ns); }, fn,
           {nm.state, "host memory"}, fn + " host state");
    // Device memory for the coefficients (they are read on the host).
    expect([&] { call<T>(ex, what, dcoef, dx.p, dy.p, lay, dzi.p, zf, ns); }, fn, {nm.coef, "device memory"},
           fn + " device coefficients");
    // Order 9: the GPU's limit is 8.
    if (!sos_call)
      expect([&] { call<T>(ex, what, std::span<T const>(c9), dx.p, dy.p, lay, nullptr, nullptr, 0); }, fn,
             {"order 9", "0-8"}, fn + " order 9");
    else
      expect(
          [&] { call<T>(ex, op::sosfilt, std::span<T const>(sos7), dx.p, dy.p, lay, nullptr, nullptr, 0); },
          "recur::sosfilt", {"sos has 7 values"}, "sos of 7 values");
  }
  finish();
  BOOST_TEST(recur_test::all_poison(dy.read()));
  BOOST_TEST(recur_test::all_poison(dzf.read()));
  BOOST_TEST(recur_test::all_poison(hy));
  BOOST_TEST(recur_test::same_bytes(dx.read(), hx));
  BOOST_TEST(recur_test::same_bytes(dzi.read(), hzi));
}

}  // namespace lti_cuda
