// The heat equation example (examples/heat/heat.hpp) on the device that
// test_examples runs with (test_examples_main.cpp): a Fourier mode decays by
// the Peaceman-Rachford scheme's amplification factor per step, to
// rounding; the scheme is second order in dt; the periodic direction has no
// seam (a shift along x commutes with the stepper); the argument checks;
// and, with --device gpu, the GPU's results against the CPU's.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <recur/error.hpp>

#include "common/examples_device.hpp"
#include "common/random.hpp"
#include "heat/heat.hpp"

namespace ex = recur_examples;
namespace utf = boost::unit_test;
using recur_test::examples_backend;

namespace {

ex::heat_options options(double dt, std::int64_t steps, ex::precision prec = ex::precision::f64) {
  ex::heat_options opt;
  opt.dt = dt;
  opt.steps = steps;
  opt.prec = prec;
  return opt;
}

// Random interior values, zero boundary rows.
std::vector<double> random_field(ex::heat_problem const& p, std::uint64_t seed) {
  recur_test::rng r(seed);
  std::vector<double> u(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  for (std::int64_t k = p.nx; k < p.nx * (p.ny - 1); ++k) u[static_cast<std::size_t>(k)] = r.symmetric();
  return u;
}

double max_abs_difference(std::vector<double> const& a, std::vector<double> const& b) {
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) m = std::max(m, std::fabs(a[k] - b[k]));
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(heat)

// u0 = the mode: after N steps u = g^N u0 at every point, g the scheme's
// factor (discrete_factor), up to rounding: about N eps of the working
// precision. Anisotropic (kx != ky, nx != ny - 1) so that swapped
// directions fail, and kx dt / hx^2 = 8, ky dt / hy^2 = 1: beyond the
// explicit scheme's limit (their sum at most 1/2).
BOOST_AUTO_TEST_CASE(mode_decays_by_the_schemes_factor) {
  ex::heat_problem p;
  p.nx = 64;
  p.ny = 33;
  p.kx = 1;
  p.ky = 0.5;
  p.p = 1;
  p.q = 2;
  constexpr std::int64_t steps = 20;
  double const dt = 2e-3;
  for (ex::precision const prec : {ex::precision::f64, ex::precision::f32}) {
    std::vector<double> reports;
    ex::heat_options opt = options(dt, steps, prec);
    opt.every = 5;
    ex::heat_result const r = ex::solve_heat(
        examples_backend, p, {}, opt, [&](ex::heat_report const& h) { reports.push_back(h.amplitude); });
    double const g = std::pow(ex::discrete_factor(p, dt), steps);
    BOOST_TEST_REQUIRE(g > 0.05, "g^N = " << g << ": too small a mode to test");
    std::vector<double> expected = ex::heat_mode(p);
    for (double& v : expected) v *= g;
    double const tol = prec == ex::precision::f64 ? 1e-13 : 2e-6;
    std::string const what(ex::to_string(prec));
    BOOST_TEST(max_abs_difference(r.u, expected) <= tol,
               what << ": max |u - g^N m| = " << max_abs_difference(r.u, expected) << ", g^N = " << g);
    BOOST_TEST(std::fabs(r.last.amplitude - g) <= tol, what);
    BOOST_TEST(r.last.scheme == g, what);
    BOOST_TEST(r.last.step == steps);
    BOOST_TEST(r.last.max_abs <= 1.0);
    BOOST_TEST_REQUIRE(reports.size() == 4u, what);
    for (std::size_t k = 0; k < reports.size(); ++k)
      BOOST_TEST(std::fabs(reports[k] -
                           std::pow(ex::discrete_factor(p, dt), 5.0 * static_cast<double>(k + 1))) <= tol,
                 what << ": report " << k);
    // The PDE's decay: the scheme's O(dt^2 + h^2) away (here about 3%).
    BOOST_TEST(std::fabs(r.last.amplitude - r.last.exact) <= 0.1 * r.last.exact,
               what << ": amplitude " << r.last.amplitude << ", exact decay " << r.last.exact);
  }
}

// Against the semi-discrete decay exp(-(kx sx / hx^2 + ky sy / hy^2) T)
// (the grid's exact solution in time), the amplitude's error falls 4 times
// per halving of dt: Peaceman-Rachford is second order in time.
BOOST_AUTO_TEST_CASE(second_order_in_dt) {
  ex::heat_problem p;
  p.nx = 32;
  p.ny = 33;
  p.kx = 1;
  p.ky = 0.7;
  double const T = 0.02, pi = 3.14159265358979323846;
  double const hx = 1.0 / 32, hy = 1.0 / 32;
  double const mu = p.kx * 4 * std::pow(std::sin(pi * hx), 2) / (hx * hx) +
                    p.ky * 4 * std::pow(std::sin(pi * hy / 2), 2) / (hy * hy);
  double const semi = std::exp(-mu * T);
  std::vector<double> errors;
  for (std::int64_t const steps : {10, 20, 40, 80}) {
    ex::heat_result const r =
        ex::solve_heat(examples_backend, p, {}, options(T / static_cast<double>(steps), steps));
    errors.push_back(std::fabs(r.last.amplitude - semi));
    BOOST_TEST_MESSAGE("steps " << steps << ": error " << errors.back());
  }
  for (std::size_t k = 1; k < errors.size(); ++k) {
    double const ratio = errors[k - 1] / errors[k];
    BOOST_TEST((ratio >= 3.6 && ratio <= 4.4), "dt / " << (1 << k) << ": error ratio " << ratio);
  }
}

// Shifting u0 by s points along x shifts u by s points: the periodic
// systems treat the row's ends as neighbours like any others. Random data,
// every frequency present.
BOOST_AUTO_TEST_CASE(periodic_direction_has_no_seam) {
  ex::heat_problem p;
  p.nx = 40;
  p.ny = 19;
  p.kx = 2;
  p.ky = 1;
  std::vector<double> const u0 = random_field(p, recur_test::seed_for(3802));
  constexpr std::int64_t s = 7;
  std::vector<double> shifted(u0.size());
  auto const shift = [&](std::vector<double> const& a, std::vector<double>& b) {
    for (std::int64_t j = 0; j < p.ny; ++j)
      for (std::int64_t i = 0; i < p.nx; ++i)
        b[static_cast<std::size_t>(j * p.nx + (i + s) % p.nx)] = a[static_cast<std::size_t>(j * p.nx + i)];
  };
  shift(u0, shifted);
  ex::heat_options const opt = options(1e-3, 5);
  ex::heat_result const r = ex::solve_heat(examples_backend, p, u0, opt);
  ex::heat_result const rs = ex::solve_heat(examples_backend, p, shifted, opt);
  std::vector<double> expected(u0.size());
  shift(r.u, expected);
  BOOST_TEST(max_abs_difference(rs.u, expected) <= 1e-13);
  // The boundary rows stay zero, and heat diffuses: max |u| falls.
  for (std::int64_t i = 0; i < p.nx; ++i) {
    BOOST_TEST(r.u[static_cast<std::size_t>(i)] == 0.0);
    BOOST_TEST(r.u[static_cast<std::size_t>((p.ny - 1) * p.nx + i)] == 0.0);
  }
  BOOST_TEST(r.last.max_abs < 1.0);
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  auto const expect = [](ex::heat_problem const& p, ex::heat_options const& opt, std::string const& start,
                         std::size_t u0_size = 0) {
    std::vector<double> const u0(u0_size, 0.0);
    try {
      ex::solve_heat(examples_backend, p, u0, opt);
      BOOST_TEST(false, "no error; expected '" << start << "'");
    } catch (recur::invalid_argument const& e) {
      BOOST_TEST(std::string(e.what()).starts_with(start), e.what());
    }
  };
  auto const problem = [](auto change) {
    ex::heat_problem p;
    p.nx = 16;
    p.ny = 9;
    change(p);
    return p;
  };
  auto const same = [](auto&) {};
  ex::heat_options const opt = options(1e-3, 2);
  expect(problem([](auto& p) { p.nx = 2; }), opt, "nx = 2: the periodic direction needs at least 3 points");
  expect(problem([](auto& p) { p.ny = 2; }), opt, "ny = 2:");
  expect(problem([](auto& p) { p.kx = -1; }), opt, "kx = -1");
  expect(problem([](auto& p) { p.ky = NAN; }), opt, "ky = nan");
  expect(problem([](auto& p) { p.p = 8; }), opt, "p = 8: must satisfy 1 <= p < nx / 2");
  expect(problem([](auto& p) { p.q = 8; }), opt, "q = 8: must lie in 1 .. ny - 2 = 7");
  expect(problem(same), options(0, 2), "dt = 0");
  expect(problem(same), options(INFINITY, 2), "dt = inf");
  expect(problem(same), options(1e-3, -1), "steps = -1");
  expect(problem(same), options(1e-3, 2, ex::precision::mixed), "precision = mixed");
  expect(problem(same), opt, "u0 has 100 values, not nx * ny = 144", 100);
}

// The GPU's steps against the CPU's: the kernels' arithmetic is the CPU
// loops' (up to contraction into fused multiply-adds), the line solves'
// algorithms differ, so the results agree to rounding. Runs with
// --device gpu only.
BOOST_AUTO_TEST_CASE(gpu_agrees_with_cpu,
                     *utf::precondition([](utf::test_unit_id) { return recur_test::examples_on_gpu(); })) {
  ex::heat_problem p;
  p.nx = 256;
  p.ny = 129;
  p.kx = 1;
  p.ky = 0.25;
  std::vector<double> const u0 = random_field(p, recur_test::seed_for(3803));
  for (ex::precision const prec : {ex::precision::f64, ex::precision::f32}) {
    ex::heat_options const opt = options(1e-4, 20, prec);
    ex::heat_result const cpu = ex::solve_heat(ex::backend::cpu, p, u0, opt);
    ex::heat_result const gpu = ex::solve_heat(ex::backend::gpu, p, u0, opt);
    double const tol = prec == ex::precision::f64 ? 1e-12 : 1e-5;
    BOOST_TEST(max_abs_difference(cpu.u, gpu.u) <= tol,
               ex::to_string(prec) << ": max difference " << max_abs_difference(cpu.u, gpu.u));
  }
}

BOOST_AUTO_TEST_SUITE_END()
