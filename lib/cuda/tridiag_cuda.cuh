#pragma once
// Host-level CUDA backend of the batched tridiagonal solvers: the plan of a
// checked problem on the current device (kernels/dispatch/
// tridiag_resolve.cuh decides everything about it), stream-ordered
// workspace when the caller gives none, then the launch
// (kernels/dispatch/dispatch_tridiag.cuh). Included by one translation unit
// per value type; the columns, pivoted and Bondeli launches are compiled in
// units of their own (tridiag_columns_*.cu, tridiag_pivot_*.cu,
// tridiag_bondeli.cu), declared extern there.

#include <string>

#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

#include "../tridiag_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

inline tridiag_device tridiag_cuda_device() {
  tridiag_device d;
  cuda_check(tridiag_current_device(d), "cudaDeviceGetAttribute");
  return d;
}

template <class T>
tridiag_choice tridiag_cuda_choice(tridiag_problem<T> const& p, bool in_place) {
  tridiag_request rq;
  rq.lay = p.lay;
  rq.nrhs = p.nrhs;
  rq.algorithm = p.algorithm;
  rq.pivoting = p.pivoting;
  rq.periodic = p.periodic;
  rq.refinement = p.refinement;
  rq.in_place = in_place;
  return plan_tridiag<T>(rq, tridiag_cuda_device());
}

// The plan of a choice, or invalid_argument saying why the algorithm cannot
// run the shape (before anything is enqueued).
inline tridiag_solve_plan const& tridiag_cuda_plan_of(tridiag_choice const& choice,
                                                      tridiag_algorithm requested, layout const& lay) {
  if (choice.plan) return *choice.plan;
  throw invalid_argument(std::string("recur::solve_batched: algorithm ") + to_string(requested) + " " +
                         choice.refusal + " (n = " + std::to_string(lay.n) + ")");
}

// Not in place: its workspace holds the in-place plan's too.
template <class T>
std::size_t tridiag_cuda_workspace(tridiag_problem<T> const& p) {
  auto const choice = tridiag_cuda_choice(p, false);
  return choice.plan ? tridiag_workspace_bytes<T>(p.lay, *choice.plan) : 0;
}

template <class T>
void tridiag_cuda(tridiag_problem<T> const& p, CUstream_st* stream, void* workspace) {
  auto const choice = tridiag_cuda_choice(p, p.x == p.d);
  tridiag_solve_plan const& plan = tridiag_cuda_plan_of(choice, p.algorithm, p.lay);
  std::size_t const need = tridiag_workspace_bytes<T>(p.lay, plan);
  bool const own = need > 0 && workspace == nullptr;
  if (own) cuda_check(temp_malloc_async(&workspace, need, stream), "cudaMallocFromPoolAsync");
  tridiag_args<T> s{p.a, p.b, p.c, p.d, p.x, p.lay, p.nrhs, p.rhs_stride, p.info};
  s.pivoting = p.pivoting;
  s.periodic = p.periodic;
  s.refinement = p.refinement;
  s.max_refinement_steps = p.max_refinement_steps;
  s.pivoted = p.pivoted;
  s.refinement_steps = p.refinement_steps;
  cudaError_t const e = tridiag_launch<T>(plan, workspace, s, stream);
  cudaError_t const f = own ? cudaFreeAsync(workspace, stream) : cudaSuccess;
  cuda_check(e, "recur::detail::tridiag_launch");
  cuda_check(f, "cudaFreeAsync");
}

template <class T>
tridiag_algorithm tridiag_cuda_resolve_as(layout const& lay, tridiag_options const& opt) {
  tridiag_problem<T> p;
  p.lay = lay;
  p.nrhs = opt.nrhs;
  p.algorithm = opt.algorithm;
  p.pivoting = opt.pivoting;
  p.periodic = opt.periodic;
  p.refinement = opt.refinement;
  auto const choice = tridiag_cuda_choice(p, false);
  tridiag_cuda_plan_of(choice, opt.algorithm, lay);
  return choice.algorithm;
}

}  // namespace recur::detail
