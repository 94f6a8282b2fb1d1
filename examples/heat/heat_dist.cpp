// solve_heat_dist (heat_dist.hpp): adi.hpp's step on a slab of rows.
#include "heat/heat_dist.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>

#include <recur/dist.hpp>
#include <recur/error.hpp>

#include "heat/adi.hpp"

namespace recur_examples {
namespace {

// The rows [first, first + rows) of the my interior rows on this rank, held
// with a halo row each side: ext is (rows + 2) x nx, row 0 and row rows + 1
// the neighbours' (zero beyond the grid's interior).
template <class T, class Space>
class slab_stepper {
 public:
  slab_stepper(Space const& space, MPI_Comm comm, heat_problem const& p, double dt, std::int64_t rows)
      : space_(space), comm_(comm), nx_(p.nx), rows_(rows) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    prev_ = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    next_ = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    double const hx = 1.0 / static_cast<double>(p.nx), hy = 1.0 / static_cast<double>(p.ny - 1);
    rx_ = p.kx * dt / (2 * hx * hx);
    ry_ = p.ky * dt / (2 * hy * hy);
    std::int64_t const n = nx_ * rows_, ext = nx_ * (rows_ + 2);
    for (buffer<T, Space>* b : {&off_x_, &diag_x_, &off_y_, &diag_y_})
      *b = buffer<T, Space>(space, static_cast<std::size_t>(n));
    v_ = buffer<T, Space>(space, static_cast<std::size_t>(ext));
    fill(space, n, static_cast<T>(-rx_), off_x_.data());
    fill(space, n, static_cast<T>(1 + 2 * rx_), diag_x_.data());
    fill(space, n, static_cast<T>(-ry_), off_y_.data());
    fill(space, n, static_cast<T>(1 + 2 * ry_), diag_y_.data());
    fill(space, ext, T(0), v_.data());
  }

  // One step of dt on u_ext ((rows + 2) x nx, this rank's rows at u_ext + nx).
  void step(T* u_ext) {
    T* const v_ext = v_.data();
    T* const u = u_ext + nx_;
    T* const v = v_ext + nx_;
    auto const ex = space_.executor();
    halo(u_ext);
    explicit_part(space_, nx_, rows_ + 2, 0.0, ry_, u_ext, v_ext);  // the halo rows' results are unused
    recur::tridiag_options periodic;
    periodic.periodic = true;
    recur::solve_batched(ex, off_x_.data(), diag_x_.data(), off_x_.data(), v, v,
                         recur::layout::contiguous(nx_, rows_), periodic);
    explicit_part(space_, nx_, rows_, rx_, 0.0, v, u);  // within rows: no halo
    recur::dist::solve_batched(recur::dist::communicator{comm_}, ex, off_y_.data(), diag_y_.data(),
                               off_y_.data(), u, u, recur::layout::interleaved(rows_, nx_));
  }

 private:
  // The halo rows of ext from the neighbours: this rank's first row to the
  // previous rank (its lower halo), its last row to the next.
  void halo(T* ext) {
    MPI_Datatype const type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
    std::size_t const bytes = sizeof(T) * static_cast<std::size_t>(nx_);
    std::vector<T> first(nx_), last(nx_), above(nx_, T(0)), below(nx_, T(0));
    space_.to_host(first.data(), ext + nx_, bytes);
    space_.to_host(last.data(), ext + rows_ * nx_, bytes);
    int const n = static_cast<int>(nx_);
    MPI_Sendrecv(first.data(), n, type, prev_, 0, below.data(), n, type, next_, 0, comm_, MPI_STATUS_IGNORE);
    MPI_Sendrecv(last.data(), n, type, next_, 1, above.data(), n, type, prev_, 1, comm_, MPI_STATUS_IGNORE);
    space_.to_space(ext, above.data(), bytes);
    space_.to_space(ext + (rows_ + 1) * nx_, below.data(), bytes);
  }

  Space const& space_;
  MPI_Comm comm_;
  std::int64_t nx_, rows_;
  int prev_ = MPI_PROC_NULL, next_ = MPI_PROC_NULL;
  double rx_ = 0, ry_ = 0;
  buffer<T, Space> off_x_, diag_x_, off_y_, diag_y_, v_;
};

template <class T, class Space>
heat_dist_result run(Space const& space, MPI_Comm comm, heat_problem const& p, heat_options const& opt) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::int64_t const nx = p.nx, my = p.ny - 2;
  std::int64_t const first = my * rank / size, rows = my * (rank + 1) / size - first;
  std::vector<double> const mode = heat_mode(p);
  std::vector<T> host(static_cast<std::size_t>(nx * (rows + 2)), T(0));
  for (std::int64_t k = 0; k < nx * rows; ++k)
    host[static_cast<std::size_t>(nx + k)] =
        static_cast<T>(mode[static_cast<std::size_t>(nx * (1 + first) + k)]);
  slab_stepper<T, Space> adi(space, comm, p, opt.dt, rows);
  buffer<T, Space> u(space, host.size());
  space.to_space(u.data(), host.data(), host.size() * sizeof(T));
  space.synchronize();
  MPI_Barrier(comm);
  auto const start = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < opt.steps; ++s) adi.step(u.data());
  space.synchronize();
  double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  space.to_host(host.data(), u.data(), host.size() * sizeof(T));
  // Rows gathered onto rank 0, as doubles.
  std::vector<double> slab(host.begin() + nx, host.begin() + nx * (rows + 1));
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::int64_t const f = my * r / size, e = my * (r + 1) / size;
    counts[r] = static_cast<int>(nx * (e - f));
    displs[r] = static_cast<int>(nx * (1 + f));
  }
  heat_dist_result res;
  res.seconds = slowest;
  if (rank == 0) res.u.assign(static_cast<std::size_t>(nx * p.ny), 0.0);
  MPI_Gatherv(slab.data(), static_cast<int>(slab.size()), MPI_DOUBLE, res.u.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, comm);
  return res;
}

template <class Space>
heat_dist_result run_in(Space const& space, MPI_Comm comm, heat_problem const& p, heat_options const& opt) {
  return opt.prec == precision::f32 ? run<float>(space, comm, p, opt) : run<double>(space, comm, p, opt);
}

}  // namespace

heat_dist_result solve_heat_dist(MPI_Comm comm, backend where, heat_problem const& p,
                                 heat_options const& opt) {
  check_heat(p, opt);
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (p.ny - 2 < size)
    throw recur::invalid_argument("solve_heat_dist: ny = " + std::to_string(p.ny) + " leaves " +
                                  std::to_string(p.ny - 2) + " interior rows for " + std::to_string(size) +
                                  " ranks (one row a rank at least)");
  if (where == backend::gpu) {
#if RECUR_HAS_CUDA
    cuda_space const space;
    return run_in(space, comm, p, opt);
#else
    throw recur::not_compiled("solve_heat_dist: the GPU needs a build with CUDA (RECUR_ENABLE_CUDA=ON)");
#endif
  }
  return run_in(host_space{}, comm, p, opt);
}

}  // namespace recur_examples
