// recur poisson: the multigrid example (examples/multigrid/poisson.hpp) on a
// manufactured problem, with one progress line per V-cycle (mixed precision:
// per outer step), the error against the exact solution at the end, and the
// solution written as .npy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <recur/io/npy.hpp>

#include "commands.hpp"
#include "device.hpp"
#include "example_options.hpp"
#include "multigrid/poisson.hpp"

namespace recur_cli {
namespace {

namespace ex = recur_examples;

// The exit status when the solution is written but its residual is above
// --tol (tridiag's partial result has the same number).
constexpr int exit_not_converged = 3;

// The default grid: large enough on the GPU to show the point, seconds on
// the CPU.
constexpr std::int64_t default_n_gpu = 4097, default_n_cpu = 1025;

std::string outcome_line(ex::poisson_result const& r, ex::poisson_options const& opt) {
  std::string const outer = opt.prec == ex::precision::mixed ? fmt::format(" ({} outer steps)", r.outer) : "";
  std::string const what =
      fmt::format("{} V-cycles{}, residual {:.2e}, {:.3f} s", r.cycles, outer, r.residual, r.seconds);
  switch (r.result) {
    case ex::outcome::converged:
      return "converged: " + what;
    case ex::outcome::max_cycles:
      return fmt::format("not converged: --max-cycles {} reached ({})", opt.max_cycles, what);
    case ex::outcome::stalled:
      return fmt::format("not converged: the residual stopped falling ({})", what);
  }
  return what;
}

// --profile: the finest grid's line solves against a copy of their bytes.
std::string profile_lines(ex::line_solve_profile const& pr, ex::poisson_problem const& p) {
  std::string out = fmt::format(
      "finest-grid line solves ({}, {} x {} unknowns; {:.1f} MB read and written per solve: the off-diagonal "
      "(a = c), the diagonal, the right-hand side, the solution)\n",
      pr.value_bytes == 4 ? "float" : "double", p.nx - 2, p.ny - 2, pr.bytes / 1e6);
  auto const line = [&](char const* what, double seconds, int count, bool solve) {
    if (count == 0 || seconds <= 0) return fmt::format("  {:8} none timed\n", what);
    std::string const share = solve ? fmt::format("  {:5.1f}% of copy", 100 * pr.copy_seconds / seconds) : "";
    return fmt::format("  {:8} {:9.3f} ms (median of {:3})  {:8.1f} GB/s{}\n", what, seconds * 1e3, count,
                       pr.bytes / seconds / 1e9, share);
  };
  out += line("x-lines", pr.x_seconds, pr.x_solves, true);
  out += line("y-lines", pr.y_seconds, pr.y_solves, true);
  out += line("copy", pr.copy_seconds, pr.copies, false);
  return out;
}

int run_poisson(arguments const& args) {
  args.expect_positional(0, "");
  device_kind const kind = select_device(args);
  ex::poisson_problem p;
  p.nx = args.integer("--n", kind == device_kind::gpu ? default_n_gpu : default_n_cpu);
  p.ny = args.integer("--ny", p.nx);
  p.eps = real_option(args, "--eps", 1e-3);
  ex::poisson_options opt;
  constexpr ex::smoother smoothers[] = {ex::smoother::jacobi, ex::smoother::x_lines, ex::smoother::y_lines,
                                        ex::smoother::alternating};
  constexpr ex::precision precisions[] = {ex::precision::f64, ex::precision::f32, ex::precision::mixed};
  opt.smooth = choice(args, "--smoother", ex::smoother::alternating, smoothers);
  opt.prec = choice(args, "--precision", ex::precision::mixed, precisions);
  opt.pre_steps = opt.post_steps = int_option(args, "--steps", opt.pre_steps);
  opt.tol = real_option(args, "--tol", opt.tol);
  opt.max_cycles = int_option(args, "--max-cycles", opt.max_cycles);
  opt.inner_cycles = int_option(args, "--inner-cycles", opt.inner_cycles);
  opt.profile = args.has("--profile");
  opt.cuda_graphs = args.has("--cuda-graphs");
  std::string const guess = args.value_or("--guess", "zero");
  if (guess != "zero" && guess != "random")
    usage_error("--guess", fmt::format("must be zero or random, not '{}'", guess));
  auto const output = args.get("--output");
  naming_arguments({{"nx", "--n"},
                    {"ny", "--ny"},
                    {"eps", "--eps"},
                    {"pre_steps", "--steps"},
                    {"tol", "--tol"},
                    {"max_cycles", "--max-cycles"},
                    {"inner_cycles", "--inner-cycles"}},
                   "--n", [&] { ex::check_poisson(p, opt); });

  std::vector<double> const f = ex::manufactured_rhs(p);
  std::vector<double> u0;
  if (guess == "random") {
    std::mt19937_64 gen(1);
    std::uniform_real_distribution<double> uniform(-1, 1);
    u0.resize(f.size());
    for (double& v : u0) v = uniform(gen);
  }
  fmt::print(
      "recur poisson: {} x {} points ({} unknowns), eps = {:g}, {} smoother ({} + {} steps), {} "
      "precision\n  on {}\n",
      p.nx, p.ny, (p.nx - 2) * (p.ny - 2), p.eps, ex::to_string(opt.smooth), opt.pre_steps, opt.post_steps,
      ex::to_string(opt.prec), device_line(kind));
  bool const mixed = opt.prec == ex::precision::mixed;
  auto const progress = [&](ex::cycle_report const& r) {
    std::string const outer = mixed ? fmt::format("  outer {:3}", r.outer) : "";
    fmt::print("cycle {:4}{}  residual {:.3e}  rate {:.4f}  time {:8.3f} s\n", r.cycles, outer, r.residual,
               r.rate, r.seconds);
    std::fflush(stdout);
  };
  ex::poisson_result const r = ex::solve_poisson(
      kind == device_kind::gpu ? ex::backend::gpu : ex::backend::cpu, p, f, u0, opt, progress);
  std::vector<double> const exact = ex::manufactured_solution(p);
  double error = 0;
  for (std::size_t k = 0; k < exact.size(); ++k) error = std::max(error, std::fabs(r.u[k] - exact[k]));
  if (output) save(*output, recur::make_npy<double>({p.ny, p.nx}, std::span<double const>(r.u)));
  fmt::print("{}\nmax |u - u_exact| = {:.3e} (the discretisation error, O(h^2), once converged){}\n",
             outcome_line(r, opt), error, output ? fmt::format("\nwritten: {}", *output) : "");
  if (opt.profile) fmt::print("{}", profile_lines(r.profile, p));
  return r.result == ex::outcome::converged ? exit_ok : exit_not_converged;
}

constexpr option_spec poisson_options[] = {{"--n"},
                                           {"--ny"},
                                           {"--eps"},
                                           {"--smoother"},
                                           {"--precision"},
                                           {"--steps"},
                                           {"--tol"},
                                           {"--max-cycles"},
                                           {"--inner-cycles"},
                                           {"--guess"},
                                           {"--profile", option_kind::flag},
                                           {"--cuda-graphs", option_kind::flag},
                                           {"--output", option_kind::value, "-o"}};

}  // namespace

command const poisson_command{
    "poisson",
    "solve an anisotropic Poisson problem by multigrid with line smoothers",
    "poisson [--n N] [--ny N] [--eps E] [--smoother S] [--precision P] [--device D] [-o U.npy]",
    "Solves -div(K grad u) = f, K = diag(1, eps), on the unit square with u = 0 on the boundary, by\n"
    "geometric multigrid V-cycles whose smoothers solve every grid line of a direction in one batched\n"
    "tridiagonal solve (x-lines contiguous, y-lines interleaved). f is manufactured so that the exact\n"
    "solution is u = sin(pi x) sin(pi y) exp(x + 2y). Five-point differences on N x NY points (the\n"
    "boundary included). Prints one line per V-cycle (mixed precision: per outer step): the residual\n"
    "relative to the initial one, its reduction per V-cycle, the time since the start; then the\n"
    "largest error against the exact solution. -o writes u as float64 of shape (NY, N), u[j, i] at\n"
    "(x, y) = (i / (N - 1), j / (NY - 1)). doc/applications.md explains the method.",
    "  --n N               points per side, 2^k + 1 (default 4097 on the GPU, 1025 on the CPU)\n"
    "  --ny N              points along y when they differ from --n (cells of aspect ratio\n"
    "                      (N - 1) / (NY - 1))\n"
    "  --eps E             the anisotropy: K = diag(1, E) (default 0.001)\n"
    "  --smoother S        jacobi (damped point Jacobi), x or y (damped line relaxation along x or\n"
    "                      y), alternating (default: x- and y-lines in turn)\n"
    "  --precision P       double, single, or mixed (default: double defect correction around\n"
    "                      single-precision V-cycles; single alone stalls near float's rounding)\n"
    "  --steps N           smoothing steps before and after each coarse-grid correction (default 2;\n"
    "                      alternating counts an x step and a y step as two)\n"
    "  --tol T             stop when the residual is T times the initial one (default 1e-9; in\n"
    "                      double it cannot fall much below 1.5e-10 on 4097 x 4097 points)\n"
    "  --max-cycles N      stop after N V-cycles (default 50)\n"
    "  --inner-cycles N    mixed precision: single-precision V-cycles per outer step (default 1;\n"
    "                      float's rounding of the correction limits what more can gain)\n"
    "  --guess G           the initial guess: zero (default) or random (uniform in [-1, 1], all\n"
    "                      frequencies: the asymptotic convergence rate)\n"
    "  --profile           time the finest grid's x-line and y-line solves (waiting for the device\n"
    "                      before and after each, which the iteration's time then includes) and a\n"
    "                      device-to-device copy of as many bytes; print their medians, GB/s and\n"
    "                      the solves' speed as a percentage of the copy's\n"
    "  --cuda-graphs       GPU: launch each V-cycle as one recorded CUDA graph (the coarse grids'\n"
    "                      kernels without the launch overhead; ignored with --profile and on the CPU)\n"
    "  -o, --output U      where to write the solution (default: not written)\n",
    "recur poisson --n 1025 --eps 1e-3 --smoother alternating --precision mixed -o u.npy",
    "  0  converged, U written\n"
    "  1  an input or the run failed; nothing written\n"
    "  2  bad command line\n"
    "  3  not converged (--max-cycles reached, or the residual stopped falling: three cycles in a\n"
    "     row did not reduce it): U written\n",
    poisson_options,
    run_poisson,
};

}  // namespace recur_cli
