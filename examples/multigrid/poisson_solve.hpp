#pragma once
// solve_poisson's body for one space: the double and single solvers and
// the mixed-precision defect correction. Included by poisson.cpp (the CPU)
// and poisson_cuda.cpp (the GPU), each instantiating it for its space.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/space.hpp"
#include "multigrid/grid.hpp"
#include "multigrid/multigrid.hpp"
#include "multigrid/poisson.hpp"

namespace recur_examples::detail {

// The finest grid of the problem.
inline grid finest_grid(poisson_problem const& p) {
  double const hx = 1.0 / static_cast<double>(p.nx - 1), hy = 1.0 / static_cast<double>(p.ny - 1);
  return {p.nx - 2, p.ny - 2, 1 / (hx * hx), p.eps / (hy * hy)};
}

// The interior of a whole-grid host array, as T (zero when a is empty).
template <class T>
std::vector<T> interior(poisson_problem const& p, std::span<double const> a) {
  std::vector<T> v(static_cast<std::size_t>((p.nx - 2) * (p.ny - 2)));
  if (a.empty()) return v;
  for (std::int64_t j = 1; j + 1 < p.ny; ++j)
    for (std::int64_t i = 1; i + 1 < p.nx; ++i)
      v[static_cast<std::size_t>((j - 1) * (p.nx - 2) + i - 1)] =
          static_cast<T>(a[static_cast<std::size_t>(j * p.nx + i)]);
  return v;
}

// An array of the space holding `host`.
template <class T, class Space>
buffer<T, Space> upload(Space const& space, std::vector<T> const& host) {
  buffer<T, Space> b(space, host.size());
  space.to_space(b.data(), host.data(), host.size() * sizeof(T));
  return b;
}

// The whole grid from the interior values in the space's memory.
template <class T, class Space>
std::vector<double> whole_grid(Space const& space, poisson_problem const& p, buffer<T, Space> const& u) {
  std::vector<T> in(u.size());
  space.to_host(in.data(), u.data(), u.size() * sizeof(T));
  std::vector<double> out(static_cast<std::size_t>(p.nx * p.ny), 0.0);
  for (std::int64_t j = 1; j + 1 < p.ny; ++j)
    for (std::int64_t i = 1; i + 1 < p.nx; ++i)
      out[static_cast<std::size_t>(j * p.nx + i)] =
          in[static_cast<std::size_t>((j - 1) * (p.nx - 2) + i - 1)];
  return out;
}

// The bookkeeping of one solve: the residual history, the clock, the
// reports and the stopping rule.
class monitor {
 public:
  monitor(poisson_options const& opt, std::function<void(cycle_report const&)> const& progress)
      : opt_(opt), progress_(progress), start_(std::chrono::steady_clock::now()) {}

  void start(double r0) {
    r0_ = r0;
    history_.assign(1, r0);
  }

  // Records a residual after `cycles` more V-cycles (mixed: one outer step);
  // true while the iteration is to go on.
  bool record(double r, int cycles) {
    report_.cycles += cycles;
    report_.outer += 1;
    report_.residual = r0_ > 0 ? r / r0_ : 0;
    report_.rate = history_.back() > 0 ? std::pow(r / history_.back(), 1.0 / cycles) : 0;
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (progress_) progress_(report_);
    history_.push_back(r);
    // Stalled: no lower than `stall_window` reports ago. Near rounding's
    // floor the residual wanders while the error still falls for a few
    // cycles, so one cycle without progress is not enough.
    bool const reduced = history_.size() <= stall_window || r < history_[history_.size() - 1 - stall_window];
    if (!(report_.residual > opt_.tol)) {  // NaN stops as stalled, below
      if (std::isnan(report_.residual)) return stop(outcome::stalled);
      return stop(outcome::converged);
    }
    if (!reduced) return stop(outcome::stalled);
    if (report_.cycles >= opt_.max_cycles) return stop(outcome::max_cycles);
    return true;
  }

  // Initial residual zero: u0 solves the problem.
  bool solved() const { return r0_ == 0; }

  poisson_result result(std::vector<double> u) const {
    poisson_result res;
    res.u = std::move(u);
    res.result = outcome_;
    res.cycles = report_.cycles;
    res.outer = report_.outer;
    res.residual = solved() ? 0 : report_.residual;
    res.seconds = report_.seconds;
    return res;
  }

 private:
  bool stop(outcome o) {
    outcome_ = o;
    return false;
  }

  poisson_options const& opt_;
  std::function<void(cycle_report const&)> const& progress_;
  std::chrono::steady_clock::time_point start_;
  cycle_report report_;
  static constexpr std::size_t stall_window = 3;
  double r0_ = 0;
  std::vector<double> history_;  // the residuals reported, r0 first
  outcome outcome_ = outcome::converged;
};

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto const mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The profile of the finest grid's line solves in T (times: their seconds)
// and of copies that read and write as many bytes, timed the same way.
template <class T, class Space>
line_solve_profile profile_of(Space const& space, grid const& g, line_solve_times const& times) {
  line_solve_profile p;
  p.value_bytes = sizeof(T);
  p.bytes = 4.0 * static_cast<double>(g.size()) * sizeof(T);
  p.x_solves = static_cast<int>(times.x.size());
  p.y_solves = static_cast<int>(times.y.size());
  p.x_seconds = median(times.x);
  p.y_seconds = median(times.y);
  auto const values = static_cast<std::size_t>(2 * g.size());
  buffer<T, Space> from(space, values), to(space, values);
  fill(space, g.size() * 2, T(1), from.data());
  fill(space, g.size() * 2, T(0), to.data());
  constexpr int copies = 21;
  std::vector<double> seconds;
  for (int k = 0; k < copies; ++k) {
    space.synchronize();
    auto const start = std::chrono::steady_clock::now();
    space.copy(to.data(), from.data(), values * sizeof(T));
    space.synchronize();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  p.copies = copies;
  p.copy_seconds = median(seconds);
  return p;
}

// V-cycles in T until the monitor stops them.
template <class T, class Space>
poisson_result solve_plain(Space const& space, poisson_problem const& p, std::span<double const> f_host,
                           std::span<double const> u0_host, poisson_options const& opt,
                           std::function<void(cycle_report const&)> const& progress) {
  multigrid<T, Space> mg(space, finest_grid(p), opt.smooth, opt.pre_steps, opt.post_steps);
  line_solve_times times;
  if (opt.profile) mg.time_line_solves(&times);
  mg.use_graphs(opt.cuda_graphs);
  buffer<T, Space> const f = upload(space, interior<T>(p, f_host));
  buffer<T, Space> u = upload(space, interior<T>(p, u0_host));
  monitor m(opt, progress);
  m.start(mg.residual_norm(u.data(), f.data()));
  for (bool more = !m.solved(); more;) {
    mg.cycle(u.data(), f.data());
    more = m.record(mg.residual_norm(u.data(), f.data()), 1);
  }
  poisson_result res = m.result(whole_grid(space, p, u));
  if (opt.profile) res.profile = profile_of<T>(space, finest_grid(p), times);
  return res;
}

// Defect correction in double around V-cycles in float: each outer step
// forms the defect r = f - A u in double and rounds it to float in the same
// pass, runs opt.inner_cycles float V-cycles on A c = d from c = 0, and adds
// the correction to u in double. The defect is scaled before it is rounded,
// by 1 / ||r|| in the first step and by 1 / (the previous defect's norm)
// after it (the norm of the defect being rounded is known only once the pass
// that rounds it is done), so d's norm is 1, then the previous step's
// reduction: float's range, whatever the scale of f.
template <class Space>
poisson_result solve_mixed(Space const& space, poisson_problem const& p, std::span<double const> f_host,
                           std::span<double const> u0_host, poisson_options const& opt,
                           std::function<void(cycle_report const&)> const& progress) {
  grid const g = finest_grid(p);
  std::int64_t const n = g.size();
  multigrid<float, Space> mg(space, g, opt.smooth, opt.pre_steps, opt.post_steps);
  line_solve_times times;
  if (opt.profile) mg.time_line_solves(&times);
  mg.use_graphs(opt.cuda_graphs);
  buffer<double, Space> const f = upload(space, interior<double>(p, f_host));
  buffer<double, Space> u = upload(space, interior<double>(p, u0_host));
  buffer<float, Space> d(space, static_cast<std::size_t>(n)), c(space, static_cast<std::size_t>(n));
  // d = (f - A u) / scale; returns ||f - A u||.
  auto const form_defect = [&](double scale) {
    return std::sqrt(defect(space, g, u.data(), f.data(), 1 / scale, d.data()));
  };
  monitor m(opt, progress);
  double norm = form_defect(1);
  m.start(norm);
  if (m.solved()) return m.result(whole_grid(space, p, u));
  double scale = norm;
  form_defect(scale);
  for (;;) {
    mg.cycle_from_zero(c.data(), d.data());
    for (int k = 1; k < opt.inner_cycles; ++k) mg.cycle(c.data(), d.data());
    axpy(space, n, scale, c.data(), u.data());
    scale = norm;
    norm = form_defect(scale);
    if (!m.record(norm, opt.inner_cycles)) break;
  }
  poisson_result res = m.result(whole_grid(space, p, u));
  if (opt.profile) res.profile = profile_of<float>(space, g, times);
  return res;
}

// solve_in on the current CUDA device (poisson_cuda.cpp, in a build with
// CUDA only).
poisson_result solve_on_gpu(poisson_problem const& p, std::span<double const> f, std::span<double const> u0,
                            poisson_options const& opt,
                            std::function<void(cycle_report const&)> const& progress);

template <class Space>
poisson_result solve_in(Space const& space, poisson_problem const& p, std::span<double const> f,
                        std::span<double const> u0, poisson_options const& opt,
                        std::function<void(cycle_report const&)> const& progress) {
  switch (opt.prec) {
    case precision::f64:
      return solve_plain<double>(space, p, f, u0, opt, progress);
    case precision::f32:
      return solve_plain<float>(space, p, f, u0, opt, progress);
    case precision::mixed:
      break;
  }
  return solve_mixed(space, p, f, u0, opt, progress);
}

}  // namespace recur_examples::detail
