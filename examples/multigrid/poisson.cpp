// solve_poisson on the CPU, and the choice of space; the checks and the
// manufactured solution.
#include "multigrid/poisson.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "common/arguments.hpp"

#include "multigrid/poisson_solve.hpp"

namespace recur_examples {

namespace {

bool power_of_two_plus_one(std::int64_t n) {
  return n >= 3 && n - 1 <= (std::int64_t{1} << 30) && ((n - 1) & (n - 2)) == 0;
}

}  // namespace

void check_poisson(poisson_problem const& p, poisson_options const& opt) {
  for (auto const& [name, n] : {std::pair{"nx", p.nx}, std::pair{"ny", p.ny}})
    if (!power_of_two_plus_one(n))
      bad(std::string(name) + " = " + str(n) +
          ": the points per side must be 2^k + 1, 3 <= n <= 2^30 + 1 (3, 5, 9, ..., 1025, ...)");
  if (!(p.eps > 0) || !std::isfinite(p.eps)) bad("eps = " + str(p.eps) + ": must be positive and finite");
  if (opt.pre_steps < 0 || opt.post_steps < 0 || opt.pre_steps + opt.post_steps == 0)
    bad("pre_steps = " + str(opt.pre_steps) + ", post_steps = " + str(opt.post_steps) +
        ": neither may be negative, and one must be positive");
  if (!(opt.tol > 0) || !(opt.tol < 1)) bad("tol = " + str(opt.tol) + ": must lie in (0, 1)");
  if (opt.max_cycles < 1) bad("max_cycles = " + str(opt.max_cycles) + ": must be at least 1");
  if (opt.inner_cycles < 1) bad("inner_cycles = " + str(opt.inner_cycles) + ": must be at least 1");
}

poisson_result solve_poisson(backend where, poisson_problem const& p, std::span<double const> f,
                             std::span<double const> u0, poisson_options const& opt,
                             std::function<void(cycle_report const&)> const& progress) {
  check_poisson(p, opt);
  auto const size = static_cast<std::size_t>(p.nx * p.ny);
  if (f.size() != size) bad("f has " + str(f.size()) + " values, not nx * ny = " + str(size));
  if (!u0.empty() && u0.size() != size)
    bad("u0 has " + str(u0.size()) + " values, not nx * ny = " + str(size) + " (or none)");
  if (where == backend::gpu) {
#if RECUR_HAS_CUDA
    return detail::solve_on_gpu(p, f, u0, opt, progress);
#else
    throw recur::not_compiled("solve_poisson: the GPU needs a build with CUDA (RECUR_ENABLE_CUDA=ON)");
#endif
  }
  return detail::solve_in(host_space{}, p, f, u0, opt, progress);
}

namespace {

// z(t) = sin(pi t) exp(a t) and its second derivative.
double wave(double t, double a) { return std::sin(std::numbers::pi * t) * std::exp(a * t); }
double wave2(double t, double a) {
  double const pi = std::numbers::pi;
  return std::exp(a * t) * ((a * a - pi * pi) * std::sin(pi * t) + 2 * a * pi * std::cos(pi * t));
}

template <class F>
std::vector<double> on_grid(poisson_problem const& p, F&& value) {
  std::vector<double> v(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  for (std::int64_t j = 1; j + 1 < p.ny; ++j)
    for (std::int64_t i = 1; i + 1 < p.nx; ++i)
      v[static_cast<std::size_t>(j * p.nx + i)] =
          value(static_cast<double>(i) / static_cast<double>(p.nx - 1),
                static_cast<double>(j) / static_cast<double>(p.ny - 1));
  return v;
}

}  // namespace

std::vector<double> manufactured_solution(poisson_problem const& p) {
  return on_grid(p, [](double x, double y) { return wave(x, 1) * wave(y, 2); });
}

std::vector<double> manufactured_rhs(poisson_problem const& p) {
  return on_grid(
      p, [&](double x, double y) { return -(wave2(x, 1) * wave(y, 2) + p.eps * wave(x, 1) * wave2(y, 2)); });
}

std::string_view to_string(smoother s) {
  switch (s) {
    case smoother::jacobi:
      return "jacobi";
    case smoother::x_lines:
      return "x";
    case smoother::y_lines:
      return "y";
    case smoother::alternating:
      return "alternating";
  }
  return "?";
}

std::string_view to_string(precision p) {
  switch (p) {
    case precision::f64:
      return "double";
    case precision::f32:
      return "single";
    case precision::mixed:
      return "mixed";
  }
  return "?";
}

}  // namespace recur_examples
