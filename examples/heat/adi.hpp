#pragma once
// The Peaceman-Rachford ADI stepper for heat.hpp's problem, written once for
// either space (space.hpp) and either type, and solve_heat's body. Included
// by heat.cpp (the CPU) and heat_cuda.cpp (the GPU).
//
// The unknowns are the my = ny - 2 interior rows of nx points, u[j * nx + i]
// at (x_i, y_(j+1)). With Dx, Dy the second differences (Dx periodic, Dy
// with u = 0 beyond the interior rows), rx = kx dt / (2 hx^2) and
// ry = ky dt / (2 hy^2), one step of dt is two half steps:
//
//   (I - rx Dx) v = (I + ry Dy) u       implicit in x, explicit in y
//   (I - ry Dy) u' = (I + rx Dx) v      implicit in y, explicit in x
//
// The x systems are the rows: contiguous, periodic (a[0] couples the row's
// last point into its first equation, c[nx-1] the first into the last), one
// recur::solve_batched call over all my rows. The y systems are the
// columns: interleaved (column i's point j at j * nx + i), Dirichlet, one
// call over all nx columns. Both matrices are strictly diagonally dominant
// (1 + 2r against r + r), whatever dt.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <recur/tridiag.hpp>

#include "common/space.hpp"
#include "heat/heat.hpp"
#include "multigrid/grid.hpp"  // fill

namespace recur_examples {

// w = u + sx Dx u + sy Dy u on the my x nx interior (Dx periodic, Dy with
// zero rows beyond the interior), queued on the space. u and w differ.
template <class T>
void explicit_part(host_space const&, std::int64_t nx, std::int64_t my, double sx, double sy, T const* u,
                   T* w);
template <class T>
void explicit_part(cuda_space const&, std::int64_t nx, std::int64_t my, double sx, double sy, T const* u,
                   T* w);

#define RECUR_EXAMPLES_HEAT_INSTANCES(Space)                                                                 \
  template void explicit_part<float>(Space const&, std::int64_t, std::int64_t, double, double, float const*, \
                                     float*);                                                                \
  template void explicit_part<double>(Space const&, std::int64_t, std::int64_t, double, double,              \
                                      double const*, double*);

template <class T, class Space>
class adi_stepper {
 public:
  adi_stepper(Space const& space, heat_problem const& p, double dt)
      : space_(space), nx_(p.nx), my_(p.ny - 2) {
    double const hx = 1.0 / static_cast<double>(p.nx), hy = 1.0 / static_cast<double>(p.ny - 1);
    rx_ = p.kx * dt / (2 * hx * hx);
    ry_ = p.ky * dt / (2 * hy * hy);
    std::int64_t const n = nx_ * my_;
    for (buffer<T, Space>* b : {&off_x_, &diag_x_, &off_y_, &diag_y_, &v_})
      *b = buffer<T, Space>(space, static_cast<std::size_t>(n));
    fill(space, n, static_cast<T>(-rx_), off_x_.data());
    fill(space, n, static_cast<T>(1 + 2 * rx_), diag_x_.data());
    fill(space, n, static_cast<T>(-ry_), off_y_.data());
    fill(space, n, static_cast<T>(1 + 2 * ry_), diag_y_.data());
  }

  // One step of dt on u (the space's memory, my x nx), in place.
  void step(T* u) {
    T* const v = v_.data();
    auto const ex = space_.executor();
    explicit_part(space_, nx_, my_, 0.0, ry_, u, v);
    recur::tridiag_options periodic;
    periodic.periodic = true;
    recur::solve_batched(ex, off_x_.data(), diag_x_.data(), off_x_.data(), v, v,
                         recur::layout::contiguous(nx_, my_), periodic);
    explicit_part(space_, nx_, my_, rx_, 0.0, v, u);
    recur::solve_batched(ex, off_y_.data(), diag_y_.data(), off_y_.data(), u, u,
                         recur::layout::interleaved(my_, nx_));
  }

 private:
  Space const& space_;
  std::int64_t nx_, my_;
  double rx_ = 0, ry_ = 0;
  buffer<T, Space> off_x_, diag_x_, off_y_, diag_y_;
  buffer<T, Space> v_;  // the half step's values
};

namespace detail {

// The report of the state u_host (ny x nx) after `step` steps.
inline heat_report report_of(heat_problem const& p, heat_options const& opt, std::int64_t step,
                             std::vector<double> const& u_host, double seconds) {
  heat_report r;
  r.step = step;
  r.time = static_cast<double>(step) * opt.dt;
  for (double const v : u_host) r.max_abs = std::max(r.max_abs, std::fabs(v));
  r.amplitude = mode_amplitude(p, u_host);
  r.scheme = std::pow(discrete_factor(p, opt.dt), static_cast<double>(step));
  r.exact = exact_decay(p, r.time);
  r.seconds = seconds;
  return r;
}

template <class T, class Space>
heat_result solve_heat_plain(Space const& space, heat_problem const& p, std::span<double const> u0,
                             heat_options const& opt,
                             std::function<void(heat_report const&)> const& progress) {
  std::int64_t const nx = p.nx, my = p.ny - 2;
  auto const interior = static_cast<std::size_t>(nx * my);
  // The interior rows of u0 (rows 1 .. ny - 2) as T, and back.
  std::vector<T> host(interior);
  for (std::size_t k = 0; k < interior; ++k) host[k] = static_cast<T>(u0[static_cast<std::size_t>(nx) + k]);
  std::vector<double> whole(u0.size(), 0.0);
  auto const download = [&](buffer<T, Space> const& u) {
    space.to_host(host.data(), u.data(), interior * sizeof(T));
    for (std::size_t k = 0; k < interior; ++k) whole[static_cast<std::size_t>(nx) + k] = host[k];
  };
  adi_stepper<T, Space> adi(space, p, opt.dt);
  buffer<T, Space> u(space, interior);
  space.to_space(u.data(), host.data(), interior * sizeof(T));
  space.synchronize();
  auto const start = std::chrono::steady_clock::now();
  auto const elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (std::int64_t s = 1; s <= opt.steps; ++s) {
    adi.step(u.data());
    if (progress && opt.every > 0 && (s % opt.every == 0 || s == opt.steps)) {
      download(u);
      progress(report_of(p, opt, s, whole, elapsed()));
    }
  }
  space.synchronize();
  heat_result res;
  res.seconds = elapsed();
  download(u);
  res.last = report_of(p, opt, opt.steps, whole, res.seconds);
  res.u = std::move(whole);
  return res;
}

// solve_heat_in on the current CUDA device (heat_cuda.cpp, in a build with
// CUDA only).
heat_result solve_heat_on_gpu(heat_problem const& p, std::span<double const> u0, heat_options const& opt,
                              std::function<void(heat_report const&)> const& progress);

template <class Space>
heat_result solve_heat_in(Space const& space, heat_problem const& p, std::span<double const> u0,
                          heat_options const& opt, std::function<void(heat_report const&)> const& progress) {
  if (opt.prec == precision::f32) return solve_heat_plain<float>(space, p, u0, opt, progress);
  return solve_heat_plain<double>(space, p, u0, opt, progress);
}

}  // namespace detail

}  // namespace recur_examples
