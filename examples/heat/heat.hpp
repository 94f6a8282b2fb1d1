#pragma once
// The heat equation example's interface: u_t = kx u_xx + ky u_yy on
// [0, 1) x [0, 1], periodic in x, u = 0 at y = 0 and y = 1, stepped by the
// Peaceman-Rachford ADI scheme (adi.hpp) in double or float, on the CPU
// (recur::host) or a CUDA GPU (recur::cuda), the same code.
//
// The grid: nx points along x, x_i = i / nx (the period, hx = 1 / nx), and
// ny points along y, the boundary included, y_j = j / (ny - 1). Arrays on
// the host are whole grids of ny x nx values, row by row (x varying
// fastest): value [j * nx + i] at (x_i, y_j); rows 0 and ny - 1 are the
// boundary (zero).
//
// A Fourier mode sin(2 pi p x) sin(pi q y) of the grid is an eigenvector of
// both second differences, so each ADI step multiplies it by the scheme's
// amplification factor (discrete_factor) exactly, up to rounding: the
// example's check. The PDE's own mode decays as exp(-(kx (2 pi p)^2 + ky
// (pi q)^2) t); the scheme's factor differs from it by O(dt^2 + h^2) per
// unit time.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "multigrid/poisson.hpp"  // backend, precision

namespace recur_examples {

struct heat_problem {
  std::int64_t nx = 1024;  // points along x (periodic), nx >= 3
  std::int64_t ny = 1025;  // points along y, the boundary included, ny >= 3
  double kx = 1, ky = 1;   // the diffusivities, >= 0 and finite
  // The Fourier mode sin(2 pi p x) sin(pi q y): the initial condition when
  // none is given, and the mode whose amplitude the reports follow.
  // 1 <= p < nx / 2, 1 <= q <= ny - 2 (modes the grid resolves).
  std::int64_t p = 1, q = 1;
};

struct heat_options {
  double dt = 1e-4;                 // the time step, positive and finite
  std::int64_t steps = 100;         // >= 0
  precision prec = precision::f64;  // f64 or f32 (mixed is refused)
  std::int64_t every = 0;           // a report every `every` steps and after the last; 0: none
};

// For progress lines; the amplitudes are projections onto the mode.
struct heat_report {
  std::int64_t step = 0;
  double time = 0;       // step * dt
  double max_abs = 0;    // max |u|
  double amplitude = 0;  // the mode's amplitude in u: sum u m / sum m^2 (m the mode on the grid)
  double scheme = 0;     // the scheme's amplitude for u0 = the mode: discrete_factor^step
  double exact = 0;      // the PDE's: exp(-(kx (2 pi p)^2 + ky (pi q)^2) time)
  double seconds = 0;    // since the stepping began
};

struct heat_result {
  std::vector<double> u;  // ny x nx, the boundary rows zero
  heat_report last;       // the state after the last step (the report's fields)
  double seconds = 0;     // the stepping's time, without setup and the copies to and from the device
};

// Steps u from u0 (ny x nx; empty: the mode) `steps` times. `progress`, if
// set, is called with each report. Throws recur::invalid_argument naming
// the field ("nx = 2: ...") for a bad problem or option,
// recur::not_compiled for the GPU in a build without CUDA,
// recur::cuda_error when CUDA fails.
heat_result solve_heat(backend where, heat_problem const& p, std::span<double const> u0,
                       heat_options const& opt, std::function<void(heat_report const&)> const& progress = {});

// Throws recur::invalid_argument as solve_heat does.
void check_heat(heat_problem const& p, heat_options const& opt);

// The mode sin(2 pi p x) sin(pi q y) on the grid (ny x nx, boundary rows zero).
std::vector<double> heat_mode(heat_problem const& p);

// The mode's amplitude in u (ny x nx): sum u m / sum m^2.
double mode_amplitude(heat_problem const& p, std::span<double const> u);

// The factor by which one Peaceman-Rachford step of dt multiplies the mode:
//   g = (1 - ry sy)(1 - rx sx) / ((1 + rx sx)(1 + ry sy)),
//   rx = kx dt / (2 hx^2), sx = 4 sin^2(pi p hx),
//   ry = ky dt / (2 hy^2), sy = 4 sin^2(pi q hy / 2),
// sx and sy the eigenvalues of -(second difference) on the mode.
double discrete_factor(heat_problem const& p, double dt);

// The PDE's decay of the mode at time t.
double exact_decay(heat_problem const& p, double t);

}  // namespace recur_examples
