#pragma once
// The multigrid example's interface: -div(K grad u) = f on the unit square,
// u = 0 on the boundary, K = diag(1, eps) (grid.hpp has the discretisation),
// solved by V-cycles (multigrid.hpp) in double, in float, or in the
// mixed-precision scheme of Goeddeke and Strzodka (2011, sec. 2.5): defect
// correction in double around a multigrid in float,
//
//   d = f - A u (double);  A c = d solved roughly by float V-cycles;  u += c (double),
//
// which reaches the double solver's accuracy with most of its work in float.
// On the CPU (recur::host) or a CUDA GPU (recur::cuda), the same code.
//
// Arrays on the host are whole grids of ny x nx points, row by row (x
// varying fastest), the boundary included: value [j * nx + i] at (x, y) =
// (i / (nx - 1), j / (ny - 1)).
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace recur_examples {

enum class smoother {
  jacobi,       // damped point Jacobi, the reference
  x_lines,      // damped line relaxation along x (the contiguous lines)
  y_lines,      // damped line relaxation along y (the interleaved lines)
  alternating,  // x-lines and y-lines in turn (ADI-TRIDI)
};

enum class precision {
  f64,    // V-cycles in double
  f32,    // V-cycles in float: its accuracy stops near float's rounding
  mixed,  // double defect correction around float V-cycles
};

enum class backend { cpu, gpu };

struct poisson_problem {
  std::int64_t nx = 129, ny = 129;  // points per side, the boundary included: 2^k + 1 each, k >= 1
  double eps = 1;                   // K = diag(1, eps), eps > 0
};

struct poisson_options {
  smoother smooth = smoother::alternating;
  precision prec = precision::f64;
  int pre_steps = 2, post_steps = 2;  // smoothing steps per level before and after the coarse grid
  // Stop when ||f - A u|| <= tol ||f - A u0|| (2-norm). Rounding bounds how
  // small it can get (grid.hpp): in double about 1.5e-10 on 4097 x 4097.
  double tol = 1e-9;
  int max_cycles = 50;  // V-cycles in all (mixed: the inner cycles summed)
  // mixed: float V-cycles per outer step. A float correction c is rounded
  // to about 6e-8 |c|, and A times that rounding, about 6e-8 |A| |c|, is a
  // floor under the defect an outer step can leave: relative to a smooth
  // defect d (|c| ~ |d| / lambda_min) it is 5e-3 on 1025 x 1025 points
  // (eps = 1e-3) and 4 times more per halving of h, 7.5e-2 on 4097 x 4097.
  // One V-cycle (a reduction of about 0.15) stays above it, and the outer
  // steps then reduce the residual as double V-cycles do.
  int inner_cycles = 1;
  // Time every line solve of the finest grid and a copy of the same bytes
  // (poisson_result::profile). The solves are timed between waits for the
  // device, which the iteration's time then includes.
  bool profile = false;
  // On the GPU, launch each V-cycle as one recorded CUDA graph instead of
  // kernel by kernel (ignored on the CPU, and while profiling): the coarse
  // grids' small kernels then cost their run time, not the host's launch
  // overhead. The same kernels in the same order: the same results.
  bool cuda_graphs = false;
};

// After each V-cycle (mixed: each outer step), for progress lines.
struct cycle_report {
  int cycles = 0;       // V-cycles so far
  int outer = 0;        // mixed: outer steps so far; otherwise cycles
  double residual = 1;  // ||f - A u|| / ||f - A u0||, in the solver's precision (mixed: double)
  double rate = 0;      // residual reduction per V-cycle since the previous report
  double seconds = 0;   // since the iteration began
};

enum class outcome {
  converged,   // the residual reached tol
  max_cycles,  // max_cycles V-cycles ran first
  stalled,     // three cycles (mixed: outer steps) in a row did not reduce the residual
};

// The finest grid's line solves against a copy (poisson_options::profile),
// in the precision of the V-cycles (mixed: float).
struct line_solve_profile {
  int value_bytes = 0;  // sizeof the V-cycles' type
  // What one solve of all lines of a direction reads and writes: the
  // off-diagonal (one array, passed as both a and c), the diagonal, the
  // right-hand side, the solution; 4 values per unknown.
  double bytes = 0;
  int x_solves = 0, y_solves = 0, copies = 0;  // solves and copies timed
  double x_seconds = 0, y_seconds = 0;         // the solves' medians
  double copy_seconds = 0;  // the copies' median, each of bytes / 2 (bytes read and written)
};

struct poisson_result {
  std::vector<double> u;  // ny x nx, the boundary included (zero)
  outcome result = outcome::converged;
  int cycles = 0, outer = 0;
  double residual = 1;         // as in cycle_report
  double seconds = 0;          // the iteration's time, without setup and the copies to and from the device
  line_solve_profile profile;  // with poisson_options::profile
};

// Solves -div(K grad u) = f from the initial guess u0 (empty: zero), f and
// u0 ny x nx grids (f's and u0's boundary values are not read: the boundary
// is zero). `progress`, if set, is called after every report. Throws
// recur::invalid_argument naming the field ("nx = 30: ...") for a bad
// problem or option, recur::not_compiled for the GPU in a build without
// CUDA, recur::cuda_error when CUDA fails.
poisson_result solve_poisson(backend where, poisson_problem const& p, std::span<double const> f,
                             std::span<double const> u0, poisson_options const& opt,
                             std::function<void(cycle_report const&)> const& progress = {});

// Throws recur::invalid_argument as solve_poisson does.
void check_poisson(poisson_problem const& p, poisson_options const& opt);

// The manufactured solution u(x, y) = sin(pi x) sin(pi y) exp(x + 2 y) on
// the grid, and the right-hand side -div(K grad u) that has it as its exact
// solution: the finite-difference solution differs from it by O(h^2).
std::vector<double> manufactured_solution(poisson_problem const& p);
std::vector<double> manufactured_rhs(poisson_problem const& p);

// Names for the command line and messages: "jacobi", "x", "y",
// "alternating"; "double", "single", "mixed".
std::string_view to_string(smoother s);
std::string_view to_string(precision p);

}  // namespace recur_examples
