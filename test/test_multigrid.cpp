// The multigrid example (examples/multigrid/poisson.hpp) on the device that
// test_examples runs with (test_examples_main.cpp): the discretisation
// error of the solution against the manufactured one, the convergence rate
// per V-cycle of each smoother against the anisotropy, the argument checks,
// and, with --device gpu, the GPU's results against the CPU's.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <recur/error.hpp>

#include "common/examples_device.hpp"
#include "common/random.hpp"
#include "multigrid/poisson.hpp"

namespace ex = recur_examples;
namespace utf = boost::unit_test;
using recur_test::examples_backend;

namespace {

double max_abs_difference(std::vector<double> const& a, std::vector<double> const& b) {
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) m = std::max(m, std::fabs(a[k] - b[k]));
  return m;
}

// The manufactured problem solved to a residual of tol; returns u.
ex::poisson_result solve_manufactured(ex::backend where, ex::poisson_problem const& p, ex::precision prec,
                                      double tol = 1e-10, int max_cycles = 50) {
  ex::poisson_options opt;
  opt.prec = prec;
  opt.tol = tol;
  opt.max_cycles = max_cycles;
  return ex::solve_poisson(where, p, ex::manufactured_rhs(p), {}, opt);
}

// A random initial guess (uniform in [-1, 1] inside, zero on the boundary).
std::vector<double> random_guess(ex::poisson_problem const& p, std::uint64_t seed) {
  recur_test::rng r(seed);
  std::vector<double> u(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  for (std::int64_t j = 1; j + 1 < p.ny; ++j)
    for (std::int64_t i = 1; i + 1 < p.nx; ++i) u[static_cast<std::size_t>(j * p.nx + i)] = r.symmetric();
  return u;
}

// The asymptotic convergence rate per V-cycle: f = 0 from a random guess
// (every frequency present; with f = 0 rounding sets no floor), 20 cycles,
// the geometric mean of the last 5 reductions.
double asymptotic_rate(ex::poisson_problem const& p, ex::smoother s, ex::precision prec) {
  constexpr int cycles = 20, last = 5;
  ex::poisson_options opt;
  opt.smooth = s;
  opt.prec = prec;
  opt.tol = 1e-300;
  opt.max_cycles = cycles;
  std::vector<double> residuals;
  std::vector<double> const f(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  ex::poisson_result const r =
      ex::solve_poisson(examples_backend, p, f, random_guess(p, recur_test::seed_for(3801)), opt,
                        [&](ex::cycle_report const& c) { residuals.push_back(c.residual); });
  BOOST_TEST_REQUIRE(r.cycles == cycles, "stopped after " << r.cycles << " cycles");
  double const rate = std::pow(residuals[cycles - 1] / residuals[cycles - 1 - last], 1.0 / last);
  BOOST_TEST_MESSAGE(ex::to_string(s) << " " << ex::to_string(prec) << " " << p.nx << " x " << p.ny
                                      << ", eps " << p.eps << ": rate " << rate);
  return rate;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(multigrid)

// The five-point scheme is second order: each halving of h divides the
// largest error by 4 (3.6 to 4.4 allowed: the h^4 term still shows at 17
// points). Double and mixed precision solve to the same residual, and their
// solutions differ by far less than the discretisation error. Anisotropic
// and isotropic K, and cells of aspect ratio 4.
BOOST_AUTO_TEST_CASE(manufactured_solution_second_order) {
  struct shape {
    std::int64_t nx, ny;
    double eps;
  };
  for (shape const s : {shape{17, 17, 1.0}, shape{17, 17, 1e-3}, shape{65, 17, 1e-2}}) {
    double previous = 0;
    for (int refine = 0; refine < 4; ++refine) {
      ex::poisson_problem p;
      p.nx = (s.nx - 1) * (std::int64_t{1} << refine) + 1;
      p.ny = (s.ny - 1) * (std::int64_t{1} << refine) + 1;
      p.eps = s.eps;
      std::vector<double> const exact = ex::manufactured_solution(p);
      ex::poisson_result const d = solve_manufactured(examples_backend, p, ex::precision::f64);
      ex::poisson_result const m = solve_manufactured(examples_backend, p, ex::precision::mixed);
      BOOST_TEST_REQUIRE((d.result == ex::outcome::converged && m.result == ex::outcome::converged),
                         p.nx << " x " << p.ny << ": double or mixed did not converge");
      double const error = max_abs_difference(d.u, exact);
      double const mixed_error = max_abs_difference(m.u, exact);
      BOOST_TEST_MESSAGE(p.nx << " x " << p.ny << ", eps " << p.eps << ": error " << error << " (mixed "
                              << mixed_error << ")");
      BOOST_TEST(max_abs_difference(m.u, d.u) <= 1e-4 * error,
                 p.nx << " x " << p.ny << ": mixed and double differ by " << max_abs_difference(m.u, d.u));
      if (refine > 0) {
        double const ratio = previous / error;
        BOOST_TEST((ratio > 3.6 && ratio < 4.4), p.nx << " x " << p.ny << ", eps " << p.eps
                                                      << ": the error fell by " << ratio << ", not 4");
      }
      previous = error;
    }
  }
}

// Mixed precision costs at most one V-cycle more than double: each outer
// step's one float V-cycle reduces the double residual as a double V-cycle
// does (about 0.15), as long as float's floor for the step (the rounding of
// the correction, poisson.hpp: about 1e-3 of the defect at 513^2) stays
// below that. Outer steps that ran float cycles until they gained two
// digits took 10 cycles here against double's 8, and at 2049^2, where the floor is
// 2e-2, 24 against double's 10.
BOOST_AUTO_TEST_CASE(mixed_needs_the_cycles_of_double) {
  ex::poisson_problem const p{513, 513, 1e-3};
  ex::poisson_result const d = solve_manufactured(examples_backend, p, ex::precision::f64, 1e-9);
  ex::poisson_result const m = solve_manufactured(examples_backend, p, ex::precision::mixed, 1e-9);
  BOOST_TEST_REQUIRE((d.result == ex::outcome::converged && m.result == ex::outcome::converged));
  BOOST_TEST_MESSAGE("513 x 513, eps 1e-3: " << d.cycles << " double V-cycles, " << m.cycles << " mixed");
  BOOST_TEST(m.cycles <= d.cycles + 1);
  BOOST_TEST(m.outer == m.cycles);
}

// The alternating line smoother converges at a rate below 0.2 per V-cycle
// for every anisotropy, from K or from the cells' aspect ratio, whichever
// direction is the strong one, in double and in float. Local Fourier
// analysis (doc/applications.md) bounds its smoothing factor per x-and-y
// sweep by 1/3 for every cy / cx; a V-cycle with one sweep before and one
// after gives about 1/9 for the two-grid method and 0.16 with all levels.
BOOST_AUTO_TEST_CASE(alternating_lines_robust) {
  struct shape {
    std::int64_t nx, ny;
    double eps;
  };
  std::vector<shape> shapes;
  for (double const eps : {1e3, 1e2, 10.0, 1.0, 0.1, 1e-2, 1e-3}) shapes.push_back({65, 65, eps});
  shapes.push_back({129, 9, 1.0});    // cy / cx = 256: the y-lines couple strongly
  shapes.push_back({9, 129, 1.0});    // cy / cx = 1 / 256
  shapes.push_back({129, 33, 1e-3});  // cy / cx = 1 / 62.5, a 1 x 1 coarsest grid never reached
  for (ex::precision const prec : {ex::precision::f64, ex::precision::f32})
    for (shape const s : shapes) {
      ex::poisson_problem const p{s.nx, s.ny, s.eps};
      BOOST_TEST(asymptotic_rate(p, ex::smoother::alternating, prec) < 0.2,
                 ex::to_string(prec) << " " << s.nx << " x " << s.ny << ", eps " << s.eps);
    }
}

// Point Jacobi is as good on the isotropic problem and degrades as eps
// falls (its smoothing factor tends to 1 as eps does); line relaxation along
// x alone is as good as the alternating one when x is the strong direction
// and degrades like Jacobi when it is the weak one, and y the other way.
BOOST_AUTO_TEST_CASE(point_and_single_direction_smoothers_degrade) {
  ex::poisson_problem const iso{65, 65, 1.0}, weak_y{65, 65, 1e-3}, weak_x{65, 65, 1e3};
  auto const rate = [](ex::poisson_problem const& p, ex::smoother s) {
    return asymptotic_rate(p, s, ex::precision::f64);
  };
  BOOST_TEST(rate(iso, ex::smoother::jacobi) < 0.2);
  BOOST_TEST(rate(weak_y, ex::smoother::jacobi) > 0.8);
  BOOST_TEST(rate(weak_x, ex::smoother::jacobi) > 0.8);
  BOOST_TEST(rate(weak_y, ex::smoother::x_lines) < 0.2);
  BOOST_TEST(rate(weak_x, ex::smoother::x_lines) > 0.8);
  BOOST_TEST(rate(weak_x, ex::smoother::y_lines) < 0.2);
  BOOST_TEST(rate(weak_y, ex::smoother::y_lines) > 0.8);
}

// A grid of one interior point, or one line, is solved exactly by the
// coarsest-grid line solve: one cycle.
BOOST_AUTO_TEST_CASE(coarsest_grids_exact) {
  for (ex::poisson_problem const p :
       {ex::poisson_problem{3, 3, 1.0}, ex::poisson_problem{33, 3, 0.5}, ex::poisson_problem{3, 65, 2.0}}) {
    ex::poisson_result const r = solve_manufactured(examples_backend, p, ex::precision::f64, 1e-12, 1);
    BOOST_TEST((r.result == ex::outcome::converged), p.nx << " x " << p.ny << ": residual " << r.residual);
    BOOST_TEST(r.cycles == 1);
  }
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  auto const expect = [](ex::poisson_problem const& p, ex::poisson_options const& opt, std::size_t f_size,
                         std::string const& start) {
    std::vector<double> const f(f_size, 0.0);
    try {
      ex::solve_poisson(examples_backend, p, f, {}, opt);
      BOOST_TEST(false, "no error; expected '" << start << "'");
    } catch (recur::invalid_argument const& e) {
      BOOST_TEST(std::string(e.what()).starts_with(start), e.what());
    }
  };
  ex::poisson_options const opt;
  auto const with = [&](auto change) {
    ex::poisson_options o = opt;
    change(o);
    return o;
  };
  expect({30, 33, 1}, opt, 990, "nx = 30: the points per side must be 2^k + 1");
  expect({33, 2, 1}, opt, 66, "ny = 2:");
  expect({33, 33, 0}, opt, 1089, "eps = 0");
  expect({33, 33, -1}, opt, 1089, "eps = -1");
  expect({33, 33, NAN}, opt, 1089, "eps = nan");
  expect({33, 33, 1}, opt, 1000, "f has 1000 values, not nx * ny = 1089");
  expect({33, 33, 1}, with([](auto& o) { o.tol = 0; }), 1089, "tol = 0");
  expect({33, 33, 1}, with([](auto& o) { o.pre_steps = o.post_steps = 0; }), 1089,
         "pre_steps = 0, post_steps = 0");
  expect({33, 33, 1}, with([](auto& o) { o.max_cycles = 0; }), 1089, "max_cycles = 0");
  expect({33, 33, 1}, with([](auto& o) { o.inner_cycles = 0; }), 1089, "inner_cycles = 0");
}

// The GPU's solves against the CPU's: the same cycles, the residual history
// and the solution equal to rounding (the kernels' arithmetic is the CPU
// loops', up to contraction into fused multiply-adds and the line solver's
// algorithm). Runs with --device gpu only.
BOOST_AUTO_TEST_CASE(gpu_agrees_with_cpu,
                     *utf::precondition([](utf::test_unit_id) { return recur_test::examples_on_gpu(); })) {
  ex::poisson_problem const p{129, 65, 1e-3};
  for (ex::smoother const s : {ex::smoother::alternating, ex::smoother::jacobi})
    for (ex::precision const prec : {ex::precision::f64, ex::precision::mixed, ex::precision::f32}) {
      ex::poisson_options opt;
      opt.smooth = s;
      opt.prec = prec;
      opt.tol = 1e-300;
      // float's: 3 cycles, its residual still far above float's rounding.
      opt.max_cycles = prec == ex::precision::f32 ? 3 : 6;
      std::vector<double> history[2];
      ex::poisson_result r[2];
      std::vector<double> const f = ex::manufactured_rhs(p);
      for (int k = 0; k < 2; ++k)
        r[k] = ex::solve_poisson(k ? ex::backend::gpu : ex::backend::cpu, p, f, {}, opt,
                                 [&](ex::cycle_report const& c) { history[k].push_back(c.residual); });
      std::string const what = std::string(ex::to_string(s)) + " " + std::string(ex::to_string(prec));
      BOOST_TEST_REQUIRE(history[0].size() == history[1].size(), what);
      // The residuals are relative to the initial one. Rounding in the line
      // solves (GPU and CPU run different algorithms for the lines) moves
      // them by about eps of the working precision of the initial residual,
      // which is a large part of a late cycle's residual: hence the floor.
      bool const f64 = prec == ex::precision::f64;
      double const tol = prec == ex::precision::f32 ? 1e-3 : 1e-9, floor = f64 ? 1e-12 : 1e-5;
      for (std::size_t c = 0; c < history[0].size(); ++c)
        BOOST_TEST(std::fabs(history[1][c] - history[0][c]) <= tol * history[0][c] + floor,
                   what << ": cycle " << c + 1 << ": residual " << history[1][c] << " on the GPU, "
                        << history[0][c] << " on the CPU");
      double scale = 0;
      for (double const v : r[0].u) scale = std::max(scale, std::fabs(v));
      // Mixed precision's u holds the inner float cycles' rounding.
      BOOST_TEST(max_abs_difference(r[0].u, r[1].u) <= (f64 ? 1e-9 : 1e-5) * scale, what);
    }
}

// V-cycles launched as recorded CUDA graphs run the same kernels in the same
// order as launched one by one: the same residuals and solution, bit for
// bit. Mixed precision with two inner cycles uses both recordings (the
// cycle from zero and the cycle from c). Runs with --device gpu only.
BOOST_AUTO_TEST_CASE(cuda_graphs_change_nothing,
                     *utf::precondition([](utf::test_unit_id) { return recur_test::examples_on_gpu(); })) {
  ex::poisson_problem const p{257, 129, 1e-3};
  std::vector<double> const f = ex::manufactured_rhs(p);
  for (ex::precision const prec : {ex::precision::f64, ex::precision::mixed}) {
    ex::poisson_options opt;
    opt.prec = prec;
    opt.tol = 1e-300;
    opt.max_cycles = 8;
    opt.inner_cycles = 2;
    std::vector<double> history[2];
    ex::poisson_result r[2];
    for (int k = 0; k < 2; ++k) {
      opt.cuda_graphs = k == 1;
      r[k] = ex::solve_poisson(ex::backend::gpu, p, f, {}, opt,
                               [&](ex::cycle_report const& c) { history[k].push_back(c.residual); });
    }
    BOOST_TEST(history[1] == history[0], boost::test_tools::per_element());
    BOOST_TEST(max_abs_difference(r[0].u, r[1].u) == 0.0, ex::to_string(prec));
  }
}

BOOST_AUTO_TEST_SUITE_END()
