// recur heat: the heat equation example (examples/heat/heat.hpp) from a
// Fourier mode, with a progress line every N steps (the mode's amplitude
// against the scheme's and the PDE's decay), and the solution written as
// .npy.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <recur/io/npy.hpp>

#include "commands.hpp"
#include "device.hpp"
#include "example_options.hpp"
#include "heat/heat.hpp"

namespace recur_cli {
namespace {

namespace ex = recur_examples;

// The default run: 1000 steps on the GPU; 200 on the CPU, seconds there.
constexpr std::int64_t default_steps_gpu = 1000, default_steps_cpu = 200;

int run_heat(arguments const& args) {
  args.expect_positional(0, "");
  device_kind const kind = select_device(args);
  ex::heat_problem p;
  p.nx = args.integer("--nx", p.nx);
  p.ny = args.integer("--ny", p.ny);
  p.kx = real_option(args, "--kx", p.kx);
  p.ky = real_option(args, "--ky", p.ky);
  p.p = args.integer("--p", p.p);
  p.q = args.integer("--q", p.q);
  ex::heat_options opt;
  opt.dt = real_option(args, "--dt", 1e-4);
  opt.steps = args.integer("--steps", kind == device_kind::gpu ? default_steps_gpu : default_steps_cpu);
  opt.every = args.integer("--every", 100);
  constexpr ex::precision precisions[] = {ex::precision::f64, ex::precision::f32};
  opt.prec = choice(args, "--precision", ex::precision::f64, precisions);
  auto const output = args.get("--output");
  naming_arguments({{"nx", "--nx"},
                    {"ny", "--ny"},
                    {"kx", "--kx"},
                    {"ky", "--ky"},
                    {"p", "--p"},
                    {"q", "--q"},
                    {"dt", "--dt"},
                    {"steps", "--steps"},
                    {"every", "--every"}},
                   "--nx", [&] { ex::check_heat(p, opt); });

  double const hx = 1.0 / static_cast<double>(p.nx), hy = 1.0 / static_cast<double>(p.ny - 1);
  fmt::print(
      "recur heat: {} x {} points, kx = {:g}, ky = {:g}, dt = {:g} (kx dt / hx^2 = {:.3g}, ky dt / hy^2 = "
      "{:.3g}), {} steps, {} precision\n  u0 = sin(2 pi {} x) sin(pi {} y), on {}\n",
      p.nx, p.ny, p.kx, p.ky, opt.dt, p.kx * opt.dt / (hx * hx), p.ky * opt.dt / (hy * hy), opt.steps,
      ex::to_string(opt.prec), p.p, p.q, device_line(kind));
  auto const line = [](ex::heat_report const& r) {
    return fmt::format(
        "step {:6}  t {:.4e}  max|u| {:.4e}  amplitude {:.6e}  scheme {:.6e}  exact {:.6e}  time {:8.3f} s",
        r.step, r.time, r.max_abs, r.amplitude, r.scheme, r.exact, r.seconds);
  };
  auto const progress = [&](ex::heat_report const& r) {
    fmt::print("{}\n", line(r));
    std::fflush(stdout);
  };
  ex::heat_result const r =
      ex::solve_heat(kind == device_kind::gpu ? ex::backend::gpu : ex::backend::cpu, p, {}, opt, progress);
  if (output) save(*output, recur::make_npy<double>({p.ny, p.nx}, std::span<double const>(r.u)));
  auto const relative = [&](double v) {
    return v != 0 ? std::fabs(r.last.amplitude - v) / std::fabs(v) : 0.0;
  };
  fmt::print(
      "{} steps in {:.3f} s; amplitude against the scheme's factor: relative difference {:.2e} (rounding), "
      "against the PDE's decay: {:.2e} (O(dt^2 + h^2)){}\n",
      opt.steps, r.seconds, relative(r.last.scheme), relative(r.last.exact),
      output ? fmt::format("\nwritten: {}", *output) : "");
  return exit_ok;
}

constexpr option_spec heat_options[] = {{"--nx"},
                                        {"--ny"},
                                        {"--kx"},
                                        {"--ky"},
                                        {"--p"},
                                        {"--q"},
                                        {"--dt"},
                                        {"--steps"},
                                        {"--every"},
                                        {"--precision"},
                                        {"--output", option_kind::value, "-o"}};

}  // namespace

command const heat_command{
    "heat",
    "step the 2-D heat equation by ADI (periodic and Dirichlet line solves)",
    "heat [--nx N] [--ny N] [--dt DT] [--steps N] [--kx K] [--ky K] [--precision P] [--every N] [--device D] "
    "[-o U.npy]",
    "Steps u_t = kx u_xx + ky u_yy on [0, 1) x [0, 1], periodic in x, u = 0 at y = 0 and 1, by the\n"
    "Peaceman-Rachford ADI scheme: each step a half step implicit in x (every row one periodic\n"
    "tridiagonal system, all rows in one batched solve) and one implicit in y (every column a\n"
    "Dirichlet system, interleaved, all columns in one batched solve). Unconditionally stable: dt may\n"
    "exceed the explicit limit h^2 / 4k by orders of magnitude. u0 = sin(2 pi P x) sin(pi Q y), which\n"
    "the scheme multiplies by a known factor per step. Every N steps prints the step, the time, max|u|,\n"
    "the mode's amplitude in u, the scheme's amplitude (its factor to the step's power), the PDE's\n"
    "exp(-(kx (2 pi P)^2 + ky (pi Q)^2) t), and the time since the start. -o writes u as float64 of\n"
    "shape (NY, NX), u[j, i] at (x, y) = (i / NX, j / (NY - 1)). doc/applications.md explains it.",
    "  --nx N              points along x, the periodic direction (default 1024)\n"
    "  --ny N              points along y, the boundary rows included (default 1025)\n"
    "  --dt DT             the time step (default 1e-4: kx dt / hx^2 = 105 on the default grid)\n"
    "  --steps N           steps to take (default 1000 on the GPU, 200 on the CPU)\n"
    "  --kx K, --ky K      the diffusivities (default 1 and 1)\n"
    "  --p P, --q Q        the initial mode sin(2 pi P x) sin(pi Q y) (default 1 and 1)\n"
    "  --precision P       double (default) or single\n"
    "  --every N           a progress line every N steps and after the last (default 100; 0: none)\n"
    "  -o, --output U      where to write the solution (default: not written)\n",
    "recur heat --nx 1024 --ny 1025 --dt 1e-4 --steps 1000 --every 100 -o u.npy",
    "",
    heat_options,
    run_heat,
};

}  // namespace recur_cli
