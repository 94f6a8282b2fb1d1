#pragma once
// Host-level CUDA backend of the batched tridiagonal solvers: the plan for
// the shape on the current device, stream-ordered workspace when the caller
// gives none, then the device-level launch (kernels/dispatch/
// dispatch_tridiag.cuh). Included by one translation unit per value type;
// the columns and segmented kernels are compiled in units of their own
// (tridiag_columns_f32.cu, tridiag_columns_f64.cu), declared extern here.

#include <string>

#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

#include "../tridiag_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

struct tridiag_device {
  std::size_t max_smem = 0;
  int cc_major = 0;
};

inline tridiag_device tridiag_current_device() {
  tridiag_device d;
  cuda_check(device::tridiag_device_limits(d.max_smem, d.cc_major), "cudaDeviceGetAttribute");
  return d;
}

template <class T>
device::tridiag_launch_plan tridiag_cuda_plan(layout const& lay, tridiag_algorithm algorithm) {
  tridiag_device const dev = tridiag_current_device();
  return device::plan_tridiag_for<T>(lay, algorithm, dev.max_smem, dev.cc_major);
}

// The plan for p (tridiag_backends.hpp's tridiag_cuda_pivot_form): the
// pivoted form (pivoting = partial on plain systems that fit a tile: the
// tile's thread_gtsv); periodic systems of tridiag_cuda_periodic_split, the
// algorithm's form inside the split; the algorithm's form for pivoting =
// none. Under pivoting = automatic the algorithm's form with its check
// (dispatch_tridiag_pivot.cuh's tridiag_launch_checked): always where the
// form screens as it solves (tridiag_form_screens: it costs a flag per
// system and a launch); beside the other forms, which need a second pass
// over a, b and c, only where the caller asks what it decided (pivoted or
// refinement_steps), and in place then as the bounded pivoted form alone.
template <class T>
device::tridiag_launch_plan tridiag_cuda_plan(tridiag_problem<T> const& p, bool in_place) {
  if (p.pivoting == tridiag_pivoting::partial && !p.periodic && p.refinement == tridiag_refinement::none) {
    tridiag_device const dev = tridiag_current_device();
    return device::plan_tridiag_partial<T>(p.lay, dev.max_smem, dev.cc_major);
  }
  if (tridiag_cuda_pivot_form(p))
    return device::tridiag_plan_pivot(tridiag_current_device().max_smem,
                                      p.refinement == tridiag_refinement::mixed);
  device::tridiag_launch_plan pl = tridiag_cuda_plan<T>(p.lay, p.algorithm);
  if (p.periodic) {
    pl.periodic_split = pl.supported();
    return pl;
  }
  if (p.pivoting != tridiag_pivoting::automatic || !pl.supported()) return pl;
  bool const asked = p.pivoted != nullptr || p.refinement_steps != nullptr;
  if (device::tridiag_form_screens<T>(p.lay, pl))
    pl.pivot_check = true;
  else if (asked && in_place)
    return device::tridiag_plan_pivot(pl.max_smem, false, true);
  else
    pl.pivot_check = asked;
  return pl;
}

// Not in place: its workspace holds the in-place plan's too.
template <class T>
std::size_t tridiag_cuda_workspace(tridiag_problem<T> const& p) {
  return device::tridiag_workspace_bytes<T>(p.lay, tridiag_cuda_plan<T>(p, false));
}

template <class T>
void tridiag_cuda(tridiag_problem<T> const& p, CUstream_st* stream, void* workspace) {
  device::tridiag_launch_plan const pl = tridiag_cuda_plan<T>(p, p.x == p.d);
  std::size_t const need = device::tridiag_workspace_bytes<T>(p.lay, pl);
  bool const own = need > 0 && workspace == nullptr;
  if (own) cuda_check(temp_malloc_async(&workspace, need, stream), "cudaMallocFromPoolAsync");
  device::tridiag_args<T> s{p.a, p.b, p.c, p.d, p.x, p.lay, p.nrhs, p.rhs_stride, p.info};
  s.pivoting = p.pivoting;
  s.periodic = p.periodic;
  s.refinement = p.refinement;
  s.max_refinement_steps = p.max_refinement_steps;
  s.pivoted = p.pivoted;
  s.refinement_steps = p.refinement_steps;
  cudaError_t const e = device::tridiag_launch<T>(pl, workspace, s, stream);
  cudaError_t const f = own ? cudaFreeAsync(workspace, stream) : cudaSuccess;
  cuda_check(e, "recur::device::tridiag_launch");
  cuda_check(f, "cudaFreeAsync");
}

// `automatic` resolved for the shape; a named algorithm checked: it runs
// wherever its plan has a form, and the message says why where it has none.
template <class T>
tridiag_algorithm tridiag_cuda_resolve_as(layout const& lay, tridiag_algorithm requested) {
  tridiag_device const dev = tridiag_current_device();
  if (lay.n <= 0) return requested == tridiag_algorithm::automatic ? tridiag_algorithm::thomas : requested;
  if (requested == tridiag_algorithm::automatic)
    return device::tridiag_with_policy<T>(
        dev.cc_major, [&]<class P>() { return device::tridiag_resolve<T, P>(lay, dev.max_smem); });
  if (device::plan_tridiag_for<T>(lay, requested, dev.max_smem, dev.cc_major).supported()) return requested;
  // Past shared memory every algorithm but Thomas runs the partitioned form
  // (its reduced systems by the algorithm itself), whose rows are int.
  throw invalid_argument(
      std::string("recur::solve_batched: algorithm ") + to_string(requested) +
      (requested == tridiag_algorithm::thomas_pcr ? " needs 4 <= n < 2^30 (n = " : " needs n < 2^30 (n = ") +
      std::to_string(lay.n) + ")");
}

}  // namespace recur::detail
