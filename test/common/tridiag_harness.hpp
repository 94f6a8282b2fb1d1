#pragma once
// Shared by the batched tridiagonal suites: test_tridiag_host.cpp runs these
// cases through recur::host, test_tridiag_cuda.cpp through recur::cuda. A
// suite is instantiated with a Backend that says where memory lives:
//
//   struct Backend {
//     using executor_type = recur::host;          // or recur::cuda
//     static executor_type executor();
//     static char const* name();
//     template <class T> struct array {           // memory the executor reads and writes
//       explicit array(std::vector<T> const& contents);
//       T* data() const;
//       std::vector<T> read() const;              // after finish()
//     };
//     static void finish();                       // wait for the work, surface asynchronous errors
//     // An independent solution of system k, right-hand side r, for the
//     // agreement check (host: LAPACK's ?gtsv; CUDA: Thomas in long double).
//     template <class T> static std::vector<long double> oracle(problem<T> const&, std::int64_t k,
//     std::int64_t r);
//     // Whether the backend must run alg for this shape: a shape it must run
//     // and refuses is a failure, any other refusal a counted skip.
//     template <class T> static bool must_run(tridiag_algorithm alg, layout const& lay);
//   };
//
// What every case checks (check()):
// - x starts poisoned (all-ones bytes, a NaN no solver writes); every element
//   of every right-hand side of every system is written, and nothing else in
//   its buffer (guards either side, the layout's gaps, the gaps between
//   right-hand side sets) changes. info starts as -1 (the same bytes), gets
//   a value >= 0 for every system, and its guards stay.
// - a, b, c (and d unless x == d) are not written.
// - a[0] and c[n-1] of every system hold NaN: a solver that reads them
//   produces NaN and fails.
// - info 0: every x finite and the relative residual
//     ||A x - d||_inf / (||A||_inf ||x||_inf) <= C n eps,  C = 4
//   (the references reach a tenth of it, test_reference_tridiag.cpp); on
//   diagonally dominant systems, agreement with the oracle,
//     ||x - x_oracle|| <= C n eps kappa ||x_oracle||,
//   kappa = ||A|| / min_i (|b_i| - |a_i| - |c_i|) >= ||A|| ||A^-1|| (Varah).
//   RD and CR+RD accept their result only up to a componentwise backward
//   error of 2^(digits/4) eps (reference/tridiag.hpp), so their tolerances
//   carry that factor, and they run on Zhang et al.'s matrices with close
//   values in rows (on dominant rows RD's products overflow or lose x_0),
//   right-hand sides d = A x: every system of RD's domain
//   (tridiag_systems.hpp, rd_must_solve) must be solved, any other may
//   break down.
// - info > 0: every x of the system (all right-hand sides) is NaN.
//
// Sizes: n in {1, 2, 3, 5, 31, 32, 33, 127, 512, 513, 1000, 4096} x counts
// {1, 3, 37, 1000} x three layouts, bounded in total work per case (a
// budget in unknowns times right-hand sides, large only for Thomas, whose
// big batches are what it is for). Each case rotates the right-hand sides
// (1; 3 one after the other; 3 with a gap between sets; 2 with a negative
// stride) and in-place use (x == d). Every sweep counts the cases it ran and
// the shapes the backend refused, fails on a refused shape the backend must
// run (Backend::must_run), and requires a minimum number of cases.
//
// Inputs come from recur_test::seed_for (RECUR_TEST_SEED draws other ones);
// failures print the case and its seed.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>
#include <recur/reference/tridiag.hpp>
#include <recur/tridiag.hpp>

#include "cases.hpp"
#include "expect_invalid.hpp"
#include "layouts.hpp"
#include "poison.hpp"
#include "random.hpp"
#include "tridiag_systems.hpp"

namespace tridiag_test {

using recur::layout;
using recur::tridiag_algorithm;
using recur_test::basic_layout_kinds;
using recur_test::extent;
using recur_test::is_poison;
using recur_test::layout_kind;
using recur_test::make_layout;
using recur_test::name;
using recur_test::poison;
using recur_test::rng;
using recur_test::same_bytes;
using recur_test::seed_for;
using recur_test::tridiag_system;
using recur_test::type_name;

inline constexpr auto const& all_algorithms = recur::tridiag_algorithms;

// RD and CR+RD: a looser tolerance, close-values matrices, breakdown allowed.
inline bool rd_like(tridiag_algorithm a) {
  return a == tridiag_algorithm::rd || a == tridiag_algorithm::cr_rd;
}
// Thomas' pivots: a zero pivot is reported at its own row.
inline bool thomas_pivots(tridiag_algorithm a) {
  return a == tridiag_algorithm::thomas || a == tridiag_algorithm::pscheme;
}

// --------------------------------------------------------------- problems ---

enum class matrix_kind {
  dominant,      // recur_test::dominant_row; d uniform in [-1, 1)
  close_values,  // recur_test::close_values_row; d = A x, |x_i| in [1/2, 1] (RD's domain)
};

// A batch in host memory: the buffers as they are handed to the executor,
// guards included (poison outside the layout).
template <class T>
struct problem {
  static constexpr std::int64_t guard = 16;

  layout lay;
  std::int64_t nrhs = 1;
  std::int64_t rhs_stride_arg = 0;  // what the call passes (0: the default)
  std::int64_t rhs_stride = 0;      // what it means
  matrix_kind kind = matrix_kind::dominant;
  std::uint64_t seed = 0;
  std::int64_t ext = 0;
  std::vector<T> a, b, c;   // guard + ext + guard
  std::vector<T> d;         // every right-hand side set, guards either side
  std::int64_t d_base = 0;  // index in d of set 0's element (0, 0)

  std::size_t mi(std::int64_t i, std::int64_t k) const {
    return static_cast<std::size_t>(guard + lay.offset(i, k));
  }
  std::size_t vi(std::int64_t i, std::int64_t k, std::int64_t r) const {
    return static_cast<std::size_t>(d_base + lay.offset(i, k) + r * rhs_stride);
  }
  // Row i of system k with the unread ends as zero.
  T sub(std::int64_t i, std::int64_t k) const { return i > 0 ? a[mi(i, k)] : T(0); }
  T sup(std::int64_t i, std::int64_t k) const { return i + 1 < lay.n ? c[mi(i, k)] : T(0); }
  // System k's matrix, in long double.
  tridiag_system system(std::int64_t k) const {
    return tridiag_system::gather(
        lay.n, [&](std::int64_t i) { return a[mi(i, k)]; }, [&](std::int64_t i) { return b[mi(i, k)]; },
        [&](std::int64_t i) { return c[mi(i, k)]; });
  }

  std::string describe() const {
    return fmt::format("{} layout {{n={}, count={}, es={}, bs={}}} nrhs={} rhs_stride={} {} seed={:#x}",
                       type_name<T>, lay.n, lay.count, lay.element_stride, lay.batch_stride, nrhs,
                       rhs_stride_arg, kind == matrix_kind::dominant ? "dominant" : "close_values", seed);
  }
};

template <class T>
problem<T> make_problem(layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride_arg, matrix_kind kind,
                        std::uint64_t seed) {
  problem<T> p;
  constexpr std::int64_t g = problem<T>::guard;
  p.lay = lay;
  p.nrhs = nrhs;
  p.kind = kind;
  p.seed = seed;
  p.ext = extent(lay);
  p.rhs_stride_arg = rhs_stride_arg;
  p.rhs_stride = rhs_stride_arg == 0 ? p.ext : rhs_stride_arg;
  std::int64_t const mag = p.rhs_stride < 0 ? -p.rhs_stride : p.rhs_stride;
  std::int64_t const sets_span = nrhs > 0 ? (nrhs - 1) * mag + p.ext : 0;
  p.a.assign(static_cast<std::size_t>(p.ext + 2 * g), poison<T>());
  p.b = p.a;
  p.c = p.a;
  p.d.assign(static_cast<std::size_t>(sets_span + 2 * g), poison<T>());
  p.d_base = g + (p.rhs_stride < 0 && nrhs > 1 ? (nrhs - 1) * mag : 0);
  rng r(seed);
  T const nan = std::numeric_limits<T>::quiet_NaN();
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = p.mi(i, k);
      auto const row = kind == matrix_kind::dominant ? recur_test::dominant_row(r, i == 0, i + 1 == lay.n)
                                                     : recur_test::close_values_row(r);
      p.a[o] = static_cast<T>(row.a);
      p.b[o] = static_cast<T>(row.b);
      p.c[o] = static_cast<T>(row.c);
      if (i == 0) p.a[o] = nan;  // never read
      if (i + 1 == lay.n) p.c[o] = nan;
    }
  for (std::int64_t rr = 0; rr < nrhs; ++rr)
    for (std::int64_t k = 0; k < lay.count; ++k) {
      if (kind == matrix_kind::dominant) {
        for (std::int64_t i = 0; i < lay.n; ++i) p.d[p.vi(i, k, rr)] = static_cast<T>(r.symmetric());
        continue;
      }
      std::vector<double> x(static_cast<std::size_t>(lay.n));
      for (double& v : x) v = recur_test::solution_value(r);
      tridiag_system const s = p.system(k);
      for (std::int64_t i = 0; i < lay.n; ++i)
        p.d[p.vi(i, k, rr)] = static_cast<T>(s.row_times(i, [&](std::int64_t j) { return x[j]; }));
    }
  return p;
}

// ------------------------------------------------------------------ oracle ---

// Thomas in long double (tridiag_system::thomas): for the dominant rows it is
// compared on, accurate far below any tolerance here.
template <class T>
std::vector<long double> thomas_long_double(problem<T> const& p, std::int64_t k, std::int64_t r) {
  return p.system(k).thomas([&](std::int64_t i) { return p.d[p.vi(i, k, r)]; });
}

// --------------------------------------------------------------- running ----

template <class T>
struct outputs {
  std::vector<T> x;                // the whole buffer x lives in (d's when in place)
  std::vector<std::int32_t> info;  // guard + count + guard
  std::string inputs_written;      // which input changed, if any
};

inline constexpr std::int32_t info_poison = -1;  // the bytes 0xFF

// Which inputs a call changed ("a b " ...; d only when x is apart from it),
// from the backend's arrays a, b, c, d.
template <class T, class ArrayT>
std::string inputs_written(problem<T> const& p, ArrayT const& a, ArrayT const& b, ArrayT const& c,
                           ArrayT const& d, bool in_place) {
  std::string w;
  if (!same_bytes(a.read(), p.a)) w += "a ";
  if (!same_bytes(b.read(), p.b)) w += "b ";
  if (!same_bytes(c.read(), p.c)) w += "c ";
  if (!in_place && !same_bytes(d.read(), p.d)) w += "d ";
  return w;
}

// One call through the backend; x starts poisoned (or is d).
template <class Backend, class T>
outputs<T> run(problem<T> const& p, tridiag_algorithm alg, bool in_place,
               typename Backend::executor_type const& ex = Backend::executor(), bool with_info = true) {
  constexpr std::int64_t g = problem<T>::guard;
  using array_t = typename Backend::template array<T>;
  array_t const da(p.a), db(p.b), dc(p.c), dd(p.d);
  std::optional<array_t> dx;
  if (!in_place) dx.emplace(std::vector<T>(p.d.size(), poison<T>()));
  typename Backend::template array<std::int32_t> const di(
      std::vector<std::int32_t>(static_cast<std::size_t>(p.lay.count + 2 * g), info_poison));
  recur::tridiag_options opt;
  opt.nrhs = p.nrhs;
  opt.rhs_stride = p.rhs_stride_arg;
  opt.info = with_info ? di.data() + g : nullptr;
  opt.algorithm = alg;
  // The algorithms' own eliminations; pivoting = automatic and partial have
  // their suites in tridiag_pivot_harness.hpp.
  opt.pivoting = recur::tridiag_pivoting::none;
  T* const x = (in_place ? dd.data() : dx->data()) + p.d_base;
  recur::solve_batched(ex, da.data() + g, db.data() + g, dc.data() + g, dd.data() + p.d_base, x, p.lay, opt);
  Backend::finish();
  outputs<T> out;
  out.x = in_place ? dd.read() : dx->read();
  out.info = di.read();
  out.inputs_written = inputs_written(p, da, db, dc, dd, in_place);
  return out;
}

// ------------------------------------------------------------------ check ---

inline constexpr double residual_c = 4;

template <class T>
double rd_factor(tridiag_algorithm alg) {
  return rd_like(alg) ? std::ldexp(1.0, recur::reference::detail::rd_backward_error_exponent<T>) : 1.0;
}

// What a system's info must be.
inline constexpr int info_zero = 0;       // solved
inline constexpr int info_positive = -2;  // broke down (any row)
inline constexpr int info_any = -3;       // either; checked for consistency with x only

struct tally {
  std::int64_t solved = 0, broke = 0;
  double worst_residual = 0, worst_error = 0;  // in units of their tolerances
};

// Failures as text (empty when all is well), at most a few described.
struct failures {
  std::int64_t count = 0;
  std::string text;
  template <class F>
  void add(F&& describe) {
    if (++count <= 6) text += describe() + "\n";
  }
  std::string report() const {
    return count ? text + fmt::format("{} failures in total", count) : std::string();
  }
};

// expected(k): info_zero, info_positive, info_any, or the exact row (> 0).
// oracle(p, k, r): the independent solution (only called for dominant
// matrices, on a sample of the systems).
template <class T, class ExpectedT, class OracleT>
std::string check(problem<T> const& p, outputs<T> const& out, tridiag_algorithm alg, ExpectedT&& expected,
                  OracleT&& oracle, tally& t) {
  constexpr std::int64_t g = problem<T>::guard;
  layout const& lay = p.lay;
  std::int64_t const n = lay.n;
  failures f;
  if (!out.inputs_written.empty()) f.add([&] { return "inputs written: " + out.inputs_written; });
  if (out.x.size() != p.d.size() || out.info.size() != static_cast<std::size_t>(lay.count + 2 * g))
    return "output buffers have the wrong size";

  // Everything outside the layout's right-hand sides keeps its poison.
  std::vector<bool> inside(out.x.size(), false);
  for (std::int64_t r = 0; r < p.nrhs; ++r)
    for (std::int64_t k = 0; k < lay.count; ++k)
      for (std::int64_t i = 0; i < n; ++i) inside[p.vi(i, k, r)] = true;
  for (std::size_t j = 0; j < out.x.size(); ++j)
    if (!inside[j] && !is_poison(out.x[j]))
      f.add([&] {
        return fmt::format("x buffer element {} outside the systems was written: {}", j, out.x[j]);
      });
  for (std::int64_t j = 0; j < g; ++j)
    if (out.info[static_cast<std::size_t>(j)] != info_poison ||
        out.info[static_cast<std::size_t>(g + lay.count + j)] != info_poison)
      f.add([&] { return fmt::format("info guard element {} was written", j); });

  double const eps = std::numeric_limits<T>::epsilon(), loose = rd_factor<T>(alg);
  double const res_tol = residual_c * static_cast<double>(n) * eps * loose;
  bool const compare = p.kind == matrix_kind::dominant;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    std::int32_t const info = out.info[static_cast<std::size_t>(g + k)];
    int const want = expected(k);
    bool const info_ok =
        info >= 0 && info <= n &&
        (want == info_any || (want == info_positive && info > 0) || (want >= 0 && info == want));
    if (!info_ok)
      f.add([&] {
        return fmt::format("system {}: info = {}, expected {}", k, info,
                           want == info_positive ? std::string("> 0")
                           : want == info_any    ? "0..n"
                                                 : std::to_string(want));
      });
    if (info < 0) continue;
    (info == 0 ? t.solved : t.broke)++;
    if (info > 0) {
      for (std::int64_t r = 0; r < p.nrhs; ++r)
        for (std::int64_t i = 0; i < n; ++i) {
          T const v = out.x[p.vi(i, k, r)];
          if (!std::isnan(v) || is_poison(v))
            f.add([&] {
              return fmt::format("system {} (info {}) rhs {} element {}: {} where NaN must be written", k,
                                 info, r, i,
                                 is_poison(v) ? std::string("poison (not written)") : fmt::format("{}", v));
            });
        }
      continue;
    }
    // Solved: finite, small residual, close to the oracle.
    bool const sample = k < 8 || k % 37 == 0 || k == lay.count - 1;
    tridiag_system const s = p.system(k);
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      auto const norms = s.residual([&](std::int64_t i) { return out.x[p.vi(i, k, r)]; },
                                    [&](std::int64_t i) { return p.d[p.vi(i, k, r)]; });
      if (!norms.finite) {
        f.add([&] {
          return fmt::format("system {} rhs {}: info 0 but x is not finite (or not written)", k, r);
        });
        continue;
      }
      double const rel =
          static_cast<double>(norms.residual / (norms.a * norms.x + std::numeric_limits<long double>::min()));
      t.worst_residual = std::max(t.worst_residual, rel / res_tol);
      if (!(rel <= res_tol))
        f.add([&] {
          return fmt::format("system {} rhs {}: relative residual {:.3g} > {:.3g} (C n eps)", k, r, rel,
                             res_tol);
        });
      if (!compare || !sample) continue;
      double const kappa = static_cast<double>(s.varah_condition());
      std::vector<long double> const want_x = oracle(p, k, r);
      long double err = 0, wn = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        err = std::max(err, std::fabs(static_cast<long double>(out.x[p.vi(i, k, r)]) - want_x[i]));
        wn = std::max(wn, std::fabs(want_x[i]));
      }
      double const tol = residual_c * static_cast<double>(n) * eps * kappa * loose * static_cast<double>(wn);
      t.worst_error = std::max(t.worst_error, static_cast<double>(err) / tol);
      if (!(static_cast<double>(err) <= tol))
        f.add([&] {
          return fmt::format(
              "system {} rhs {}: differs from the oracle by {:.3g} (relative), tolerance {:.3g}", k, r,
              static_cast<double>(err / wn), tol / static_cast<double>(wn));
        });
    }
  }
  return f.report();
}

// ----------------------------------------------------------------- support ---

// Whether the backend runs alg for this shape (resolve_tridiag_algorithm does
// not throw invalid_argument); why not otherwise.
template <class T, class Backend>
std::optional<std::string> unsupported(tridiag_algorithm alg, layout const& lay) {
  try {
    (void)recur::resolve_tridiag_algorithm<T>(Backend::executor(), lay, alg);
    return std::nullopt;
  } catch (recur::invalid_argument const& e) {
    return std::string(e.what());
  }
}

// Whether a sweep runs alg for this shape: true, or the skip counted with
// the backend's reason. A refused shape the backend must run
// (Backend::must_run) fails the test.
template <class T, class Backend>
bool runs(tridiag_algorithm alg, layout const& lay, recur_test::case_count& cases) {
  auto const why = unsupported<T, Backend>(alg, lay);
  if (!why) return true;
  BOOST_TEST(!Backend::template must_run<T>(alg, lay),
             Backend::name() << " " << recur::to_string(alg) << " " << type_name<T> << " refuses layout {n="
                             << lay.n << ", count=" << lay.count << ", es=" << lay.element_stride
                             << ", bs=" << lay.batch_stride << "}, a shape it must run: " << *why);
  cases.skip(*why);
  return false;
}

// ------------------------------------------------------------------ cases ---

// The unknowns times right-hand sides a case may have: Thomas takes the big
// batches; the others' references cost more per unknown on the CPU.
inline std::int64_t work_budget(tridiag_algorithm alg) {
  return alg == tridiag_algorithm::thomas ? (std::int64_t{1} << 22) : (std::int64_t{1} << 16);
}

// The fewest cases a sweep runs whatever the backend: 100 of its 126 shapes
// (144 for Thomas). It also runs every shape the backend must run.
inline constexpr std::int64_t sweep_min_cases = 100;
// The fewest systems of RD's domain an RD sweep solves (it draws thousands).
inline constexpr std::int64_t rd_sweep_min_domain = 1000;

// Every layout x n x count within the budget; see the top.
template <class Backend, class T>
void sweep(tridiag_algorithm alg) {
  static constexpr std::int64_t ns[] = {1, 2, 3, 5, 31, 32, 33, 127, 512, 513, 1000, 4096};
  static constexpr std::int64_t counts[] = {1, 3, 37, 1000};
  tally t;
  recur_test::case_count cases(
      fmt::format("{} {} {} sweep", Backend::name(), recur::to_string(alg), type_name<T>));
  std::int64_t must = 0, in_domain = 0;
  int idx = 0;
  for (layout_kind const kind : basic_layout_kinds)
    for (std::int64_t const n : ns)
      for (std::int64_t const count : counts) {
        layout const lay = make_layout(kind, n, count);
        int const rot = idx++;
        std::int64_t nrhs = 1, stride = 0;
        switch (rot % 4) {
          case 1:
            nrhs = 3;  // sets one after the other (rhs_stride 0)
            break;
          case 2:
            nrhs = 3, stride = extent(lay) + 5;  // gaps between sets
            break;
          case 3:
            if (rot % 8 == 7) nrhs = 2, stride = -(extent(lay) + 2);  // sets below the base pointer
            break;
        }
        if (n * count * nrhs > work_budget(alg)) {
          if (n * count > work_budget(alg)) continue;  // not one of the sweep's shapes
          nrhs = 1, stride = 0;
        }
        must += Backend::template must_run<T>(alg, lay);
        if (!runs<T, Backend>(alg, lay, cases)) continue;
        bool const in_place = rot % 3 == 1;
        matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
        auto const p =
            make_problem<T>(lay, nrhs, stride, mk, seed_for(400 + static_cast<int>(alg), rot, sizeof(T)));
        auto const out = run<Backend>(p, alg, in_place);
        cases.run();
        // Every system solved; RD's: every one of its domain, others may break down.
        auto const expected = [&](std::int64_t k) {
          if (!rd_like(alg)) return info_zero;
          if (!recur_test::rd_must_solve<T>(p.system(k))) return info_any;
          ++in_domain;
          return info_zero;
        };
        auto const msg = check(
            p, out, alg, expected,
            [](auto const& q, std::int64_t k, std::int64_t r) { return Backend::oracle(q, k, r); }, t);
        BOOST_TEST(msg.empty(), Backend::name() << " " << recur::to_string(alg) << " " << name(kind)
                                                << (in_place ? " in place " : " ") << p.describe() << "\n"
                                                << msg);
      }
  BOOST_TEST_MESSAGE(Backend::name() << " " << recur::to_string(alg) << " " << type_name<T> << ": "
                                     << t.solved << " systems solved (" << in_domain << " of RD's domain), "
                                     << t.broke << " broke down; worst residual " << t.worst_residual
                                     << " and error " << t.worst_error << " of their tolerances");
  cases.require(std::max(must, sweep_min_cases));
  if (rd_like(alg)) {
    BOOST_TEST(in_domain >= rd_sweep_min_domain, Backend::name() << " " << recur::to_string(alg) << " "
                                                                 << type_name<T> << ": only " << in_domain
                                                                 << " systems of RD's domain");
    // Beyond the domain, most close-values systems are still solved.
    BOOST_TEST(2 * t.solved >= t.solved + t.broke, "too few systems solved");
  } else {
    BOOST_TEST(t.broke == 0);
  }
}

// Singular and zero-pivot systems in a batch (see the comments below); the
// other systems are solved, and only broken systems get NaN.
template <class Backend, class T>
void breakdown(tridiag_algorithm requested) {
  std::int64_t const n = 33, count = 6, nrhs = 2, zero_row = 16, pivot_row = 5;
  recur_test::case_count cases(
      fmt::format("{} {} {} breakdown", Backend::name(), recur::to_string(requested), type_name<T>));
  int idx = 0;
  for (layout_kind const kind : {layout_kind::contiguous, layout_kind::interleaved}) {
    layout const lay = make_layout(kind, n, count);
    if (!runs<T, Backend>(requested, lay, cases)) continue;
    cases.run();
    tridiag_algorithm const alg = recur::resolve_tridiag_algorithm<T>(Backend::executor(), lay, requested);
    matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
    auto p = make_problem<T>(lay, nrhs, 0, mk, seed_for(450, idx++, sizeof(T)));
    std::map<std::int64_t, int> want;
    // System 1: an all-zero row (a singular matrix). Every algorithm breaks
    // down; Thomas' pivot of that row is exactly 0.
    p.a[p.mi(zero_row, 1)] = p.b[p.mi(zero_row, 1)] = p.c[p.mi(zero_row, 1)] = 0;
    want[1] = thomas_pivots(alg) ? static_cast<int>(zero_row + 1) : info_positive;
    if (!rd_like(alg)) {
      // System 3: b_0 = 0. Every algorithm that divides by b breaks down at
      // row 1 (RD divides by c only and solves it).
      p.b[p.mi(0, 3)] = 0;
      want[3] = 1;
      if constexpr (std::is_same_v<T, float>) {
        // System 5 (float): b_0 = 2^-127, subnormal, below the smallest
        // usable pivot (2^-126; its reciprocal would overflow): row 1 too.
        p.b[p.mi(0, 5)] = 0x1p-127f;
        want[5] = 1;
      }
    } else if (alg == tridiag_algorithm::rd) {
      // RD's divisor: c_0 = 0, row 1.
      p.c[p.mi(0, 3)] = 0;
      want[3] = 1;
    }
    if (thomas_pivots(alg)) {
      // System 4: a zero pivot with a non-zero diagonal. a_4 = 0 makes
      // p_4 = b_4 = 2 and c'_4 = 1 / 2; a_5 = 1, b_5 = 1/2 give
      // p_5 = 1/2 - 1/2 = 0 exactly (and (b_5 p_4 - a_5 c_4) / p_4 = 0).
      p.a[p.mi(pivot_row - 1, 4)] = 0;
      p.b[p.mi(pivot_row - 1, 4)] = 2;
      p.c[p.mi(pivot_row - 1, 4)] = 1;
      p.a[p.mi(pivot_row, 4)] = 1;
      p.b[p.mi(pivot_row, 4)] = T(0.5);
      want[4] = static_cast<int>(pivot_row + 1);
    }
    auto const expected = [&](std::int64_t k) {
      auto const it = want.find(k);
      return it == want.end() ? info_zero : it->second;
    };
    tally t;
    auto const oracle = [](auto const& q, std::int64_t k, std::int64_t r) {
      return Backend::oracle(q, k, r);
    };
    for (bool const in_place : {false, true}) {
      auto const out = run<Backend>(p, requested, in_place);
      auto const msg = check(p, out, alg, expected, oracle, t);
      BOOST_TEST(msg.empty(), Backend::name() << " " << recur::to_string(requested) << " ("
                                              << recur::to_string(alg) << ") " << name(kind)
                                              << (in_place ? " in place " : " ") << p.describe() << "\n"
                                              << msg);
    }
    // Without info, broken systems still get NaN.
    auto const out = run<Backend>(p, requested, false, Backend::executor(), false);
    for (auto const& [k, w] : want) {
      (void)w;
      bool all_nan = true;
      for (std::int64_t r = 0; r < nrhs; ++r)
        for (std::int64_t i = 0; i < n; ++i)
          all_nan &= std::isnan(out.x[p.vi(i, k, r)]) && !is_poison(out.x[p.vi(i, k, r)]);
      BOOST_TEST(all_nan, recur::to_string(requested) << " without info: system " << k << " not NaN");
    }
  }
  cases.require(2);  // both layouts
}

// Same input, same backend and algorithm: the same bits (API guarantee).
template <class Backend, class T>
void deterministic(tridiag_algorithm alg) {
  recur_test::case_count cases(
      fmt::format("{} {} {} reproducibility", Backend::name(), recur::to_string(alg), type_name<T>));
  int idx = 0;
  for (layout const& lay : {layout::contiguous(513, 37), layout::interleaved(1000, 37),
                            make_layout(layout_kind::strided_gaps, 127, 3)}) {
    if (!runs<T, Backend>(alg, lay, cases)) continue;
    cases.run();
    matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
    auto const p = make_problem<T>(lay, 2, 0, mk, seed_for(460, idx++, sizeof(T)));
    auto const x1 = run<Backend>(p, alg, false), x2 = run<Backend>(p, alg, false);
    bool const same =
        std::memcmp(x1.x.data(), x2.x.data(), x1.x.size() * sizeof(T)) == 0 && x1.info == x2.info;
    BOOST_TEST(same,
               Backend::name() << " " << recur::to_string(alg) << " not reproducible: " << p.describe());
  }
  cases.require(3);  // every layout
}

// ------------------------------------------------------------- arguments ---

// expect_invalid.hpp's check, for recur::solve_batched by default.
using recur_test::expect_invalid;
template <class CallT, class SnapshotT>
void expect_invalid(CallT&& call, SnapshotT&& snapshot, std::initializer_list<char const*> needles) {
  expect_invalid(call, snapshot, needles, "recur::solve_batched: ");
}

// One allocation holds a, b, c, d, x and info, so that overlaps can be made
// and one snapshot covers everything a bad call could write.
template <class Backend, class T>
struct arena {
  static constexpr std::int64_t region = 256;
  typename Backend::template array<T> mem;
  static std::vector<T> initial() {
    std::vector<T> v(static_cast<std::size_t>(8 * region), poison<T>());
    rng r(seed_for(470));
    for (std::int64_t j = 0; j < 4 * region; ++j) v[static_cast<std::size_t>(j)] = T(r.symmetric());
    for (std::int64_t j = region; j < 2 * region; ++j) v[static_cast<std::size_t>(j)] += T(4);  // b: dominant
    return v;
  }
  arena() : mem(initial()) {}
  T* a() const { return mem.data(); }
  T* b() const { return mem.data() + region; }
  T* c() const { return mem.data() + 2 * region; }
  T* d() const { return mem.data() + 3 * region; }
  T* x() const { return mem.data() + 4 * region; }                                                 // poisoned
  std::int32_t* info() const { return reinterpret_cast<std::int32_t*>(mem.data() + 6 * region); }  // poisoned
  static T* misaligned(T* p) { return reinterpret_cast<T*>(reinterpret_cast<char*>(p) + 1); }
  std::vector<T> snapshot() const { return mem.read(); }
};

template <class Backend, class T>
void bad_arguments() {
  arena<Backend, T> m;
  auto const snap = [&] { return m.snapshot(); };
  std::int64_t const n = 50, count = 2;
  layout const lay = layout::contiguous(n, count);
  auto const ex = Backend::executor();
  struct args {
    T const *a, *b, *c, *d;
    T* x;
    layout lay;
    recur::tridiag_options opt;
  };
  args good{m.a(), m.b(), m.c(), m.d(), m.x(), lay, {}};
  good.opt.info = m.info();
  auto const call = [&](args const& g) {
    return [&ex, g] { recur::solve_batched(ex, g.a, g.b, g.c, g.d, g.x, g.lay, g.opt); };
  };
  auto with = [&](auto&& change) {
    args g = good;
    change(g);
    return call(g);
  };
  std::int64_t const big = std::int64_t{1} << 40;
  // Sizes and strides.
  expect_invalid(with([](args& g) { g.lay = layout{-1, 1, 1, 0}; }), snap, {"layout.n = -1", "negative"});
  expect_invalid(with([](args& g) { g.lay = layout{4, -2, 1, 4}; }), snap, {"layout.count = -2", "negative"});
  expect_invalid(with([](args& g) { g.lay = layout{4, 1, 0, 4}; }), snap, {"layout.element_stride = 0"});
  expect_invalid(with([](args& g) { g.lay = layout{4, 1, -1, 4}; }), snap, {"layout.element_stride = -1"});
  expect_invalid(with([](args& g) { g.lay = layout{4, 2, 1, 0}; }), snap, {"layout.batch_stride = 0"});
  expect_invalid(with([](args& g) { g.lay = layout{4, 2, 1, -4}; }), snap, {"layout.batch_stride = -4"});
  expect_invalid(with([](args& g) { g.lay = layout{4, 2, 1, 2}; }), snap, {"layout", "one address"});
  expect_invalid(with([&](args& g) { g.lay = layout{big, big, 1, big}; }), snap, {"overflows"});
  expect_invalid(with([](args& g) { g.opt.nrhs = -1; }), snap, {"nrhs = -1", "negative"});
  expect_invalid(with([](args& g) { g.opt.nrhs = 2, g.opt.rhs_stride = 2 * 50 - 1; }), snap,
                 {"rhs_stride = 99"});
  expect_invalid(with([](args& g) { g.opt.nrhs = 2, g.opt.rhs_stride = -3; }), snap, {"rhs_stride = -3"});
  expect_invalid(with([&](args& g) { g.opt.nrhs = big, g.opt.rhs_stride = big; }), snap,
                 {"rhs_stride", "overflows"});
  expect_invalid(with([](args& g) { g.opt.algorithm = static_cast<tridiag_algorithm>(99); }), snap,
                 {"algorithm = 99"});
  // Pointers: null, misaligned.
  expect_invalid(with([](args& g) { g.a = nullptr; }), snap, {"a is null"});
  expect_invalid(with([](args& g) { g.b = nullptr; }), snap, {"b is null"});
  expect_invalid(with([](args& g) { g.c = nullptr; }), snap, {"c is null"});
  expect_invalid(with([](args& g) { g.d = nullptr; }), snap, {"d is null"});
  expect_invalid(with([](args& g) { g.x = nullptr; }), snap, {"x is null"});
  expect_invalid(with([&](args& g) { g.a = m.misaligned(m.a()); }), snap, {"a = ", "not aligned"});
  expect_invalid(with([&](args& g) { g.b = m.misaligned(m.b()); }), snap, {"b = ", "not aligned"});
  expect_invalid(with([&](args& g) { g.c = m.misaligned(m.c()); }), snap, {"c = ", "not aligned"});
  expect_invalid(with([&](args& g) { g.d = m.misaligned(m.d()); }), snap, {"d = ", "not aligned"});
  expect_invalid(with([&](args& g) { g.x = m.misaligned(m.x()); }), snap, {"x = ", "not aligned"});
  expect_invalid(with([&](args& g) {
                   g.opt.info = reinterpret_cast<std::int32_t*>(reinterpret_cast<char*>(m.info()) + 2);
                 }),
                 snap, {"info = ", "not aligned"});
  // Overlaps: x on a diagonal, x straddling d, info inside x.
  expect_invalid(with([&](args& g) { g.x = m.a() + 3; }), snap, {"x = ", "overlaps a"});
  expect_invalid(with([&](args& g) { g.x = m.b() - 5; }), snap, {"x = ", "overlaps b"});
  expect_invalid(with([&](args& g) { g.x = m.c() + 2 * n - 1; }), snap, {"x = ", "overlaps c"});
  expect_invalid(with([&](args& g) { g.x = m.d() + 1; }), snap, {"x = ", "overlaps d"});
  expect_invalid(with([&](args& g) { g.x = m.d() - 2 * n + 1; }), snap, {"x = ", "overlaps d"});
  expect_invalid(with([&](args& g) { g.x = m.d() + 2 * n, g.opt.nrhs = 2; }), snap, {"x = ", "overlaps d"});
  expect_invalid(with([&](args& g) { g.opt.info = reinterpret_cast<std::int32_t*>(m.x() + 5); }), snap,
                 {"info = ", "overlaps x"});
  expect_invalid(with([&](args& g) { g.opt.info = reinterpret_cast<std::int32_t*>(m.b() + 2 * n - 1); }),
                 snap, {"info = ", "overlaps b"});
  // Not errors: x == d (in place), and null pointers for an empty batch.
  BOOST_CHECK_NO_THROW(recur::solve_batched(ex, static_cast<T const*>(nullptr), nullptr, nullptr, nullptr,
                                            static_cast<T*>(nullptr), layout::contiguous(0, 0)));
  BOOST_CHECK_NO_THROW(recur::solve_batched(ex, static_cast<T const*>(nullptr), nullptr, nullptr, nullptr,
                                            static_cast<T*>(nullptr), layout::contiguous(5, 0)));
  Backend::finish();
}

// Empty problems: info = 0 for every system, nothing else written.
template <class Backend, class T>
void empty_problems() {
  arena<Backend, T> m;
  auto const ex = Backend::executor();
  std::int64_t const count = 5;
  for (int which = 0; which < 3; ++which) {
    auto const before = m.snapshot();
    recur::tridiag_options opt;
    opt.info = m.info();
    layout lay = layout::contiguous(10, count);
    T* x = m.x();
    if (which == 0) lay = layout::contiguous(0, count), x = nullptr;  // n == 0: no pointer needed
    if (which == 1) opt.nrhs = 0;
    if (which == 2) lay = layout::interleaved(0, count);
    recur::solve_batched(ex, which == 1 ? m.a() : nullptr, which == 1 ? m.b() : nullptr,
                         which == 1 ? m.c() : nullptr, which == 1 ? m.d() : nullptr, x, lay, opt);
    Backend::finish();
    auto after = m.snapshot();
    std::vector<std::int32_t> info(static_cast<std::size_t>(count + 1));
    std::memcpy(info.data(), after.data() + 6 * arena<Backend, T>::region,
                info.size() * sizeof(std::int32_t));
    for (std::int64_t k = 0; k < count; ++k)
      BOOST_TEST(info[k] == 0, "empty case " << which << " system " << k);
    BOOST_TEST(info[count] == info_poison, "empty case " << which << ": info written past count");
    // Everything else as it was; then restore the poison for the next case.
    std::memcpy(after.data() + 6 * arena<Backend, T>::region, before.data() + 6 * arena<Backend, T>::region,
                info.size() * sizeof(std::int32_t));
    BOOST_TEST(same_bytes(after, before), "empty case " << which << " wrote outside info");
    m.mem = typename Backend::template array<T>(before);
  }
  // count == 0: nothing at all; with info it is not touched.
  auto const before = m.snapshot();
  recur::tridiag_options opt;
  opt.info = m.info();
  recur::solve_batched(ex, m.a(), m.b(), m.c(), m.d(), m.x(), layout::contiguous(10, 0), opt);
  Backend::finish();
  BOOST_TEST(same_bytes(m.snapshot(), before));
}

}  // namespace tridiag_test

// The sweep, breakdown and reproducibility cases of one algorithm through
// Backend, both types: one test case each, so a failure names the algorithm.
#define RECUR_TRIDIAG_CASES(Backend, alg)                                        \
  BOOST_AUTO_TEST_CASE(sweep_##alg) {                                            \
    tridiag_test::sweep<Backend, float>(recur::tridiag_algorithm::alg);          \
    tridiag_test::sweep<Backend, double>(recur::tridiag_algorithm::alg);         \
  }                                                                              \
  BOOST_AUTO_TEST_CASE(breakdown_##alg) {                                        \
    tridiag_test::breakdown<Backend, float>(recur::tridiag_algorithm::alg);      \
    tridiag_test::breakdown<Backend, double>(recur::tridiag_algorithm::alg);     \
  }                                                                              \
  BOOST_AUTO_TEST_CASE(deterministic_##alg) {                                    \
    tridiag_test::deterministic<Backend, float>(recur::tridiag_algorithm::alg);  \
    tridiag_test::deterministic<Backend, double>(recur::tridiag_algorithm::alg); \
  }

// Those cases for every tridiag_algorithm (all_algorithms).
#define RECUR_TRIDIAG_ALL_CASES(Backend)   \
  RECUR_TRIDIAG_CASES(Backend, automatic)  \
  RECUR_TRIDIAG_CASES(Backend, thomas)     \
  RECUR_TRIDIAG_CASES(Backend, cr)         \
  RECUR_TRIDIAG_CASES(Backend, pcr)        \
  RECUR_TRIDIAG_CASES(Backend, rd)         \
  RECUR_TRIDIAG_CASES(Backend, cr_pcr)     \
  RECUR_TRIDIAG_CASES(Backend, cr_rd)      \
  RECUR_TRIDIAG_CASES(Backend, cr_packed)  \
  RECUR_TRIDIAG_CASES(Backend, pscheme)    \
  RECUR_TRIDIAG_CASES(Backend, thomas_pcr) \
  RECUR_TRIDIAG_CASES(Backend, cr_split)   \
  RECUR_TRIDIAG_CASES(Backend, bondeli)
