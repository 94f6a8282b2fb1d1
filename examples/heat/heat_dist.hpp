#pragma once
// The heat example (heat.hpp) on a grid cut into slabs over MPI ranks: rank
// r holds a band of the interior rows, the Peaceman-Rachford step of
// adi.hpp with the x systems (rows) solved locally and the y systems
// (columns) split across the ranks by recur::dist::solve_batched. The
// explicit half steps read one row of each neighbouring rank (a halo row
// each side, exchanged through the host with MPI_Sendrecv). The result
// equals solve_heat's to the tridiagonal solves' rounding.
//
//   mpirun -np 4 recur_heat_dist --nx 1024 --ny 1026 --steps 100 [--gpu] [--f32] [--check]
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "heat/heat.hpp"

namespace recur_examples {

struct heat_dist_result {
  std::vector<double> u;  // ny x nx on rank 0 (the boundary rows zero); empty on the other ranks
  double seconds = 0;     // the stepping's time, the slowest rank's
};

// Steps the mode (heat_mode) opt.steps times with the interior rows cut
// evenly over the ranks of comm (ny - 2 >= the rank count). Every rank
// calls it with the same arguments. Throws as solve_heat does, and
// recur::invalid_argument where a rank would hold no row.
heat_dist_result solve_heat_dist(MPI_Comm comm, backend where, heat_problem const& p,
                                 heat_options const& opt);

}  // namespace recur_examples
