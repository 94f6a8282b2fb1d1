#pragma once
// Geometric multigrid for the model problem of grid.hpp, written once for
// either space (space.hpp) and either type: V-cycles over grids coarsened by
// two in both directions down to a single line of unknowns, which one line
// solve answers exactly.
//
// Smoothing (doc/applications.md derives the damping factors):
// - point Jacobi, damped: u += omega D^-1 (f - A u), omega = 4/5;
// - line relaxation along x (or y): u += omega M^-1 (f - A u), M the part of
//   A that couples each x-line (y-line) with itself, tridiagonal per line, so
//   M^-1 is one batched recur::solve_batched call over all lines: the
//   contiguous layout for x-lines, the interleaved one for y-lines, solved in
//   place in the residual's array; omega = 2/3;
// - alternating: x-lines and y-lines in turn, the damped form of Goeddeke and
//   Strzodka's ADI-TRIDI smoother (their sec. 3.5), an x step and a y step
//   counted as two steps, as they count them.
// The line systems are scaled to an off-diagonal of -1: the x-lines' rows
// are M / cx (diagonal 2 + 2 cy / cx), the y-lines' M / cy. Every level has
// the same ratio cy / cx, so one array of -1 and one diagonal array per
// direction, of the finest grid's size, serve every level.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <recur/tridiag.hpp>

#include "common/space.hpp"
#include "multigrid/grid.hpp"
#include "multigrid/poisson.hpp"

namespace recur_examples {

// The lines of one direction of one grid, solved by the space's executor.
template <class T, class Space>
class line_solver;

template <class T>
class line_solver<T, host_space> {
 public:
  explicit line_solver(recur::layout const& lay) : lay_(lay) {}
  std::size_t workspace_size() const { return 0; }
  // x = M^-1 d for every line (x may be d).
  void solve(host_space const& sp, T const* off, T const* diag, T const* d, T* x, void*) const {
    recur::solve_batched(sp.executor(), off, diag, off, d, x, lay_);
  }

 private:
  recur::layout lay_;
};

// On the GPU a tridiag_plan per shape: the algorithm is chosen once and run()
// allocates nothing.
template <class T>
class line_solver<T, cuda_space> {
 public:
  explicit line_solver(recur::layout const& lay) : plan_(lay) {}
  std::size_t workspace_size() const { return plan_.workspace_size(); }
  void solve(cuda_space const& sp, T const* off, T const* diag, T const* d, T* x, void* workspace) const {
    plan_.run(sp.executor(), off, diag, off, d, x, workspace);
  }

 private:
  recur::tridiag_plan<T> plan_;
};

// The seconds of the finest grid's line solves, one entry per solve.
struct line_solve_times {
  std::vector<double> x, y;
};

template <class T, class Space>
class multigrid {
 public:
  multigrid(Space const& space, grid const& finest, smoother kind, int pre_steps, int post_steps)
      : space_(space), kind_(kind), pre_(pre_steps), post_(post_steps) {
    omega_ = kind == smoother::jacobi ? 0.8 : 2.0 / 3.0;
    for (grid g = finest;; g = g.coarse()) {
      auto const n = static_cast<std::size_t>(g.size());
      // u and f of the coarse grids; level 0 works on the caller's.
      auto const coarse_only = [&] {
        return levels_.empty() ? buffer<T, Space>() : buffer<T, Space>(space, n);
      };
      levels_.push_back(level{g, coarse_only(), coarse_only(), buffer<T, Space>(space, n),
                              line_solver<T, Space>(g.x_lines()), line_solver<T, Space>(g.y_lines())});
      if (g.coarsest()) break;
    }
    std::size_t workspace = 0;
    for (level const& l : levels_)
      workspace = std::max({workspace, l.x_lines.workspace_size(), l.y_lines.workspace_size()});
    if (workspace) workspace_ = buffer<std::byte, Space>(space, workspace);
    std::int64_t const n = finest.size();
    off_ = buffer<T, Space>(space, static_cast<std::size_t>(n));
    diag_x_ = buffer<T, Space>(space, static_cast<std::size_t>(n));
    diag_y_ = buffer<T, Space>(space, static_cast<std::size_t>(n));
    fill(space, n, T(-1), off_.data());
    fill(space, n, static_cast<T>(2 + 2 * finest.cy / finest.cx), diag_x_.data());
    fill(space, n, static_cast<T>(2 + 2 * finest.cx / finest.cy), diag_y_.data());
  }

  // One V-cycle for A u = f on the finest grid; u and f in the space's memory.
  void cycle(T* u, T const* f) { run(u, f, false); }
  // One V-cycle from the initial guess u = 0: u is written, not read.
  void cycle_from_zero(T* u, T const* f) { run(u, f, true); }

  // On the GPU, from now on: each kind of cycle (from u or from zero) is
  // recorded once as a CUDA graph and launched as one, recorded again when
  // u or f change (not while line solves are timed).
  void use_graphs(bool on) { graphs_on_ = on; }

  // From now on, the seconds of every finest-grid line solve go to *t (null:
  // none are timed).
  void time_line_solves(line_solve_times* t) { times_ = t; }

  // ||f - A u||_2 on the finest grid (waits for the queued work).
  double residual_norm(T const* u, T const* f) {
    level& l = levels_.front();
    return std::sqrt(defect(space_, l.g, u, f, 1.0, l.r.data()));
  }

 private:
  enum class step { point, x, y };

  struct level {
    grid g;
    buffer<T, Space> u, f;  // the coarse-grid correction and its equation's right-hand side (none on level 0)
    buffer<T, Space> r;     // the residual, overwritten by the line solves' corrections
    line_solver<T, Space> x_lines, y_lines;
  };

  void run(T* u, T const* f, bool zero) {
    if constexpr (std::is_same_v<Space, cuda_space>) {
      if (graphs_on_ && !times_) {
        recording& r = recordings_[zero ? 1 : 0];
        if (r.graph.empty() || r.u != u || r.f != f) {
          space_.capture(r.graph, [&] { vcycle(0, u, f, zero); });
          r.u = u;
          r.f = f;
        }
        space_.launch(r.graph);
        return;
      }
    }
    vcycle(0, u, f, zero);
  }

  // Every coarse grid starts from zero, and so may the finest (zero): the
  // first smoothing step then needs neither the residual (it is f) nor u.
  void vcycle(std::size_t k, T* u, T const* f, bool zero) {
    level& l = levels_[k];
    if (l.g.coarsest()) {  // one line: a line step with omega = 1 is the exact solve
      relax(l, u, f, l.g.my == 1 ? step::x : step::y, 1.0, zero);
      return;
    }
    smooth(l, u, f, pre_, zero);
    level& c = levels_[k + 1];
    residual(space_, l.g, u, f, l.r.data());
    restrict_full_weighting(space_, l.g, l.r.data(), c.f.data());
    vcycle(k + 1, c.u.data(), c.f.data(), true);
    prolongate_add(space_, l.g, c.u.data(), u);
    smooth(l, u, f, post_, false);
  }

  void smooth(level& l, T* u, T const* f, int steps, bool zero) {
    if (zero && steps == 0) fill(space_, l.g.size(), T(0), u);
    for (int s = 0; s < steps; ++s) {
      step const d = kind_ == smoother::jacobi    ? step::point
                     : kind_ == smoother::x_lines ? step::x
                     : kind_ == smoother::y_lines ? step::y
                     : s % 2 == 0                 ? step::x
                                                  : step::y;
      relax(l, u, f, d, omega_, zero && s == 0);
    }
  }

  // u += omega M^-1 (f - A u), M = D or the lines' part of A; from u = 0
  // (zero) u = omega M^-1 f, u not read.
  void relax(level& l, T* u, T const* f, step d, double omega, bool zero) {
    T* const r = l.r.data();
    std::int64_t const n = l.g.size();
    T const* const source = zero ? f : r;
    if (!zero) residual(space_, l.g, u, f, r);
    double scale = omega / l.g.diagonal();
    switch (d) {
      case step::point:
        break;
      case step::x:
        timed(l, times_ ? &times_->x : nullptr,
              [&] { l.x_lines.solve(space_, off_.data(), diag_x_.data(), source, r, workspace_.data()); });
        scale = omega / l.g.cx;
        break;
      case step::y:
        timed(l, times_ ? &times_->y : nullptr,
              [&] { l.y_lines.solve(space_, off_.data(), diag_y_.data(), source, r, workspace_.data()); });
        scale = omega / l.g.cy;
        break;
    }
    T const* const correction = d == step::point ? source : r;
    if (zero)
      scale_copy(space_, n, scale, correction, u);
    else
      axpy(space_, n, scale, correction, u);
  }

  // Runs solve; on the finest grid, with times set, appends its seconds to
  // *times (waiting for the queued work before and after it).
  template <class Solve>
  void timed(level const& l, std::vector<double>* times, Solve&& solve) {
    if (!times || &l != &levels_.front()) {
      solve();
      return;
    }
    space_.synchronize();
    auto const start = std::chrono::steady_clock::now();
    solve();
    space_.synchronize();
    times->push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  // A recorded V-cycle and the arrays it works on (on the CPU, never used).
  struct recording {
    std::conditional_t<std::is_same_v<Space, cuda_space>, cuda_graph, int> graph{};
    T* u = nullptr;
    T const* f = nullptr;
  };

  Space const& space_;
  line_solve_times* times_ = nullptr;
  bool graphs_on_ = false;
  recording recordings_[2];  // from u, from zero
  smoother kind_;
  int pre_, post_;
  double omega_;
  std::vector<level> levels_;
  buffer<T, Space> off_, diag_x_, diag_y_;
  buffer<std::byte, Space> workspace_;
};

}  // namespace recur_examples
