#pragma once
// What lib/tridiag.cpp (argument checks, algorithm resolution) calls after
// the checks pass. Each backend receives a checked problem: strides positive
// (element_stride 1 when n == 1, batch_stride n * element_stride when
// count == 1), the layout free of self-overlap and of 64-bit overflow,
// rhs_stride resolved (never 0; the layout's extent when nrhs <= 1; when
// nrhs > 1 it may be negative, the sets then lying below the base pointers,
// with |rhs_stride| >= the layout's extent, so sets never overlap), x either
// disjoint from a, b, c and d or equal to d (in place), info disjoint from
// all of them, and (tridiag_cpu) an algorithm other than `automatic`.
//
// tridiag_cpu is called only when n * count * nrhs > 0 (lib/tridiag.cpp
// writes info, pivoted and refinement_steps = 0 itself for an empty
// problem); it writes all three outputs that are not null.
//
// tridiag_cuda is called when n * count * nrhs > 0, and also for an empty
// problem with count > 0 (n == 0 or nrhs == 0) and info, pivoted or
// refinement_steps non-null: it must then only set those that are not null
// to 0 for systems 0 .. count, enqueued on the stream (e.g.
// cudaMemsetAsync), reading and writing nothing else (a, b, c, d and x may be
// null, workspace is null). With count == 0 nothing is called. It plans
// the problem itself (as tridiag_cuda_resolve does): lib/ decides nothing
// of what runs.

#include <cstddef>
#include <cstdint>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/tridiag.hpp>

namespace recur::detail {

template <class T>
struct tridiag_problem {
  T const* a = nullptr;
  T const* b = nullptr;
  T const* c = nullptr;
  T const* d = nullptr;
  T* x = nullptr;
  layout lay;
  std::int64_t nrhs = 1;
  std::int64_t rhs_stride = 0;
  std::int32_t* info = nullptr;
  tridiag_algorithm algorithm = tridiag_algorithm::thomas;
  // tridiag_options' fields, checked (lib/tridiag_options.hpp): pivoting
  // partial, periodic and refinement mixed come with algorithm automatic or
  // thomas only, mixed with double only, periodic with n >= 3. The CUDA
  // backend receives the requested algorithm (automatic or resolved) and
  // plans it itself.
  tridiag_pivoting pivoting = tridiag_pivoting::none;
  bool periodic = false;
  tridiag_refinement refinement = tridiag_refinement::none;
  int max_refinement_steps = 0;
  std::int32_t* pivoted = nullptr;           // disjoint from every other array, like info
  std::int32_t* refinement_steps = nullptr;  // likewise
};

// CPU backend (lib/cpu/tridiag_cpu.cpp): systems spread over threads, or
// one long system split over them (lib/cpu/tridiag_split.hpp). threads:
// recur::host's (0: OpenMP's maximum).
template <class T>
void tridiag_cpu(tridiag_problem<T> const& p, int threads);
// What opt.algorithm runs for this layout with opt's pivoting, periodic and
// refinement (automatic resolved).
tridiag_algorithm tridiag_cpu_resolve(layout const& lay, std::size_t value_bytes, tridiag_options const& opt,
                                      int threads);

// CUDA backend (lib/cuda/tridiag_*.cu, or a not_compiled stub when CUDA is
// off). workspace: device memory of tridiag_cuda_workspace bytes (aligned to
// at least 16 bytes; tridiag_plan::run checks that), or null to have the
// backend allocate it stream-ordered (solve_batched passes null; a plan whose
// workspace size is 0 passes null too, so a size of 0 must mean that nothing
// is allocated). Never synchronises. Throws invalid_argument, as
// tridiag_cuda_resolve does, before anything is enqueued where p.algorithm
// cannot run the shape.
template <class T>
void tridiag_cuda(tridiag_problem<T> const& p, CUstream_st* stream, void* workspace);
// The workspace tridiag_cuda needs for p's shape, algorithm and options
// (its pointers are not read).
template <class T>
std::size_t tridiag_cuda_workspace(tridiag_problem<T> const& p);
// What the CUDA backend runs for this layout with opt's algorithm,
// pivoting, periodic, refinement and nrhs: the algorithm (automatic
// resolved; thomas where the pivoted form runs), as
// kernels/dispatch/tridiag_resolve.cuh's plan_tridiag decides it; throws
// invalid_argument saying why where the algorithm cannot run the shape.
tridiag_algorithm tridiag_cuda_resolve(layout const& lay, std::size_t value_bytes,
                                       tridiag_options const& opt);

}  // namespace recur::detail
