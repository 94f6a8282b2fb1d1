// solve_heat on the CPU, and the choice of space; the checks, the mode and
// its analytic decay.
#include "heat/heat.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "common/arguments.hpp"

#include "heat/adi.hpp"

namespace recur_examples {

namespace {

double hx_of(heat_problem const& p) { return 1.0 / static_cast<double>(p.nx); }
double hy_of(heat_problem const& p) { return 1.0 / static_cast<double>(p.ny - 1); }

}  // namespace

void check_heat(heat_problem const& p, heat_options const& opt) {
  constexpr std::int64_t max_points = std::int64_t{1} << 31;
  if (p.nx < 3) bad("nx = " + str(p.nx) + ": the periodic direction needs at least 3 points");
  if (p.ny < 3) bad("ny = " + str(p.ny) + ": needs at least 3 points (one interior row)");
  if (p.nx > max_points / p.ny) bad("nx = " + str(p.nx) + ", ny = " + str(p.ny) + ": more than 2^31 points");
  if (!(p.kx >= 0) || !std::isfinite(p.kx)) bad("kx = " + str(p.kx) + ": must be non-negative and finite");
  if (!(p.ky >= 0) || !std::isfinite(p.ky)) bad("ky = " + str(p.ky) + ": must be non-negative and finite");
  if (p.p < 1 || 2 * p.p >= p.nx)
    bad("p = " + str(p.p) + ": must satisfy 1 <= p < nx / 2 = " + str(p.nx / 2.0));
  if (p.q < 1 || p.q > p.ny - 2) bad("q = " + str(p.q) + ": must lie in 1 .. ny - 2 = " + str(p.ny - 2));
  if (!(opt.dt > 0) || !std::isfinite(opt.dt)) bad("dt = " + str(opt.dt) + ": must be positive and finite");
  if (opt.steps < 0) bad("steps = " + str(opt.steps) + ": must not be negative");
  if (opt.every < 0) bad("every = " + str(opt.every) + ": must not be negative");
  if (opt.prec == precision::mixed)
    bad("precision = mixed: the heat stepper runs in double or single precision");
}

heat_result solve_heat(backend where, heat_problem const& p, std::span<double const> u0,
                       heat_options const& opt, std::function<void(heat_report const&)> const& progress) {
  check_heat(p, opt);
  auto const size = static_cast<std::size_t>(p.nx * p.ny);
  if (!u0.empty() && u0.size() != size)
    bad("u0 has " + str(u0.size()) + " values, not nx * ny = " + str(size) + " (or none)");
  std::vector<double> const mode = u0.empty() ? heat_mode(p) : std::vector<double>();
  std::span<double const> const start = u0.empty() ? std::span<double const>(mode) : u0;
  if (where == backend::gpu) {
#if RECUR_HAS_CUDA
    return detail::solve_heat_on_gpu(p, start, opt, progress);
#else
    throw recur::not_compiled("solve_heat: the GPU needs a build with CUDA (RECUR_ENABLE_CUDA=ON)");
#endif
  }
  return detail::solve_heat_in(host_space{}, p, start, opt, progress);
}

std::vector<double> heat_mode(heat_problem const& p) {
  double const pi = std::numbers::pi;
  std::vector<double> m(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  for (std::int64_t j = 1; j + 1 < p.ny; ++j) {
    double const sy = std::sin(pi * static_cast<double>(p.q * j) * hy_of(p));
    for (std::int64_t i = 0; i < p.nx; ++i)
      // (p i) mod nx keeps the sine's argument in [0, 2 pi).
      m[static_cast<std::size_t>(j * p.nx + i)] =
          std::sin(2 * pi * static_cast<double>((p.p * i) % p.nx) * hx_of(p)) * sy;
  }
  return m;
}

double mode_amplitude(heat_problem const& p, std::span<double const> u) {
  std::vector<double> const m = heat_mode(p);
  double um = 0, mm = 0;
  for (std::size_t k = 0; k < m.size(); ++k) {
    um += u[k] * m[k];
    mm += m[k] * m[k];
  }
  return mm > 0 ? um / mm : 0;
}

double discrete_factor(heat_problem const& p, double dt) {
  double const pi = std::numbers::pi, hx = hx_of(p), hy = hy_of(p);
  double const sx = 4 * std::pow(std::sin(pi * static_cast<double>(p.p) * hx), 2);
  double const sy = 4 * std::pow(std::sin(pi * static_cast<double>(p.q) * hy / 2), 2);
  double const rx = p.kx * dt / (2 * hx * hx) * sx, ry = p.ky * dt / (2 * hy * hy) * sy;
  return (1 - ry) * (1 - rx) / ((1 + rx) * (1 + ry));
}

double exact_decay(heat_problem const& p, double t) {
  double const pi = std::numbers::pi;
  double const kp = 2 * pi * static_cast<double>(p.p), kq = pi * static_cast<double>(p.q);
  return std::exp(-(p.kx * kp * kp + p.ky * kq * kq) * t);
}

}  // namespace recur_examples
