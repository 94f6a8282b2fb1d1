#pragma once
// What every launch of the batched tridiagonal solve shares: the arrays of
// one solve (tridiag_args), the entry that launches a whole plan
// (tridiag_launch, dispatch_tridiag.cuh; the forms that solve smaller
// systems inside them call it), and the workspace sizing and launch helpers
// they build on. Internal: recur::device::tridiag_solve is the API.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "launch_persistent.cuh"
#include "tridiag_workspace.cuh"
#include "workspace.cuh"

namespace recur::detail {

// The arrays and shape of one solve.
template <class T>
struct tridiag_args {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  std::int32_t* info;
  // The pivoted form's options (tridiag_options'); the no-pivot forms set
  // pivoted and refinement_steps (if not null) to 0.
  tridiag_pivoting pivoting = tridiag_pivoting::none;
  bool periodic = false;
  tridiag_refinement refinement = tridiag_refinement::none;
  int max_refinement_steps = 0;
  std::int32_t* pivoted = nullptr;
  std::int32_t* refinement_steps = nullptr;
  // The pivoted form only: null, or the systems to solve (only[k] != 0;
  // the others' x and outputs are left alone).
  std::int32_t const* only = nullptr;
  // The no-pivot forms under the screen (tridiag_screen::inside): a flag
  // per system, 1 for a system that failed it, whose x (and info) the form
  // leaves unwritten; null: no screen.
  std::int32_t* flags = nullptr;
};

// Enqueues a planned solve (dispatch_tridiag.cuh). workspace:
// tridiag_workspace_bytes of device memory (null when that is 0).
template <class T>
cudaError_t tridiag_launch(tridiag_solve_plan const& pl, void* workspace, tridiag_args<T> const& s,
                           cudaStream_t stream);

// The same for a bare form (no split, no screen).
template <class T>
cudaError_t tridiag_launch_form(tridiag_form const& form, tridiag_device const& dev, void* workspace,
                                tridiag_args<T> const& s, cudaStream_t stream) {
  return tridiag_launch<T>(tridiag_solve_plan{form, dev}, workspace, s, stream);
}

// The grid of a kernel that walks `items` with a grid-stride loop: at most
// `cap` blocks of `threads`, at least one.
inline unsigned tridiag_grid(std::int64_t items, int threads, std::int64_t cap = std::int64_t(1) << 30) {
  std::int64_t const blocks = (items + threads - 1) / threads;
  return unsigned(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

// Sets count int32 values at out (if not null) to 0, on the stream.
inline cudaError_t tridiag_zero(std::int32_t* out, std::int64_t count, cudaStream_t stream) {
  if (!out || count <= 0) return cudaSuccess;
  return cudaMemsetAsync(out, 0, std::size_t(count) * sizeof(std::int32_t), stream);
}

}  // namespace recur::detail
