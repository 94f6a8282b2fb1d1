// recur_heat_dist: the heat example on slabs over MPI ranks (heat_dist.hpp).
//   mpirun -np P recur_heat_dist [--nx N] [--ny N] [--steps N] [--dt X] [--gpu] [--f32] [--check]
// prints the time per step; --check also solves on rank 0 alone
// (solve_heat) and fails (exit 1) where the two differ by more than the
// solves' rounding (1e-12 of max |u| in f64, 1e-4 in f32).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include <mpi.h>

#include "heat/heat_dist.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  recur_examples::heat_problem p;
  recur_examples::heat_options opt;
  auto where = recur_examples::backend::cpu;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string("0"); };
    if (a == "--nx")
      p.nx = std::stoll(next());
    else if (a == "--ny")
      p.ny = std::stoll(next());
    else if (a == "--steps")
      opt.steps = std::stoll(next());
    else if (a == "--dt")
      opt.dt = std::stod(next());
    else if (a == "--gpu")
      where = recur_examples::backend::gpu;
    else if (a == "--f32")
      opt.prec = recur_examples::precision::f32;
    else if (a == "--check")
      check = true;
  }
  try {
    auto const res = recur_examples::solve_heat_dist(MPI_COMM_WORLD, where, p, opt);
    if (rank == 0) {
      std::printf("ranks %d  grid %lld x %lld  %lld steps  %.3f ms a step\n", size,
                  static_cast<long long>(p.nx), static_cast<long long>(p.ny),
                  static_cast<long long>(opt.steps),
                  1e3 * res.seconds / static_cast<double>(std::max<std::int64_t>(opt.steps, 1)));
      if (check) {
        auto const one = recur_examples::solve_heat(where, p, {}, opt);
        double diff = 0, scale = 0;
        for (std::size_t k = 0; k < one.u.size(); ++k) {
          diff = std::max(diff, std::fabs(one.u[k] - res.u[k]));
          scale = std::max(scale, std::fabs(one.u[k]));
        }
        double const tol = (opt.prec == recur_examples::precision::f32 ? 1e-4 : 1e-12) * scale;
        std::printf("max |split - one rank| = %.3g (tolerance %.3g): %s\n", diff, tol,
                    diff <= tol ? "passed" : "FAILED");
        status = diff <= tol ? 0 : 1;
      }
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "recur_heat_dist: rank %d: %s\n", rank, e.what());
    status = 2;
  }
  int worst = status;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
