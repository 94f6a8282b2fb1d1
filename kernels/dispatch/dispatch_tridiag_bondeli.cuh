#pragma once
// The launches of Bondeli's algorithm (kernels/agent/agent_tridiag_bondeli.cuh):
// the blocks, the reduced system H by the pivoted form, the correction;
// part of dispatch_tridiag.cuh, which declares them and includes this file.

#include <algorithm>
#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_bondeli.cuh"
#include "dispatch_tridiag.cuh"

namespace recur::device {

// The workspace of Bondeli's form: w and v (n values a system each), H's
// three diagonals and right-hand side (m = 2 (p - 1) rows a system), a
// breakdown row and H's info per system, and the pivoted form's
// factorisation of H.
template <class T>
struct tridiag_bondeli_workspace {
  kernels::bondeli_cut cut;
  layout reduced;
  tridiag_launch_plan reduced_plan;
  std::size_t vectors = 0, diagonals = 0, bad = 0, hinfo = 0, pivot = 0;
  tridiag_bondeli_workspace(layout const& lay, tridiag_launch_plan const& pl)
      : cut(std::max<std::int64_t>(1, lay.n), pl.bondeli_blocks),
        reduced(layout::contiguous(2 * (cut.count - 1), lay.count)),
        reduced_plan(tridiag_plan_pivot(pl.max_smem, false)) {
    std::size_t const count = std::size_t(std::max<std::int64_t>(0, lay.count));
    vectors = tridiag_ws_piece(std::size_t(std::max<std::int64_t>(0, lay.n)) * count * sizeof(T));
    diagonals = tridiag_ws_piece(std::size_t(reduced.n) * count * sizeof(T));
    bad = tridiag_ws_piece(count * sizeof(unsigned long long));
    hinfo = tridiag_ws_piece(count * sizeof(std::int32_t));
    pivot = reduced.n > 0 ? tridiag_workspace_bytes<T>(reduced, reduced_plan) : 0;
  }
  std::size_t total() const { return 2 * vectors + 4 * diagonals + bad + hinfo + pivot; }
};

template <class T>
std::size_t tridiag_bondeli_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl) {
  return tridiag_bondeli_workspace<T>(lay, pl).total();
}

// Bondeli's form, one right-hand side at a time (each pass factors the
// blocks again; the breakdown, a property of the matrix, is the same in
// every pass). Instances: lib/cuda/tridiag_bondeli.cu.
template <class T>
cudaError_t tridiag_launch_bondeli(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                   cudaStream_t stream) {
  tridiag_bondeli_workspace<T> const ws(s.lay, pl);
  tridiag_ws_cursor cut(workspace);
  T* const w = cut.take<T>(ws.vectors);
  T* const v = cut.take<T>(ws.vectors);
  T* const ha = cut.take<T>(ws.diagonals);
  T* const hb = cut.take<T>(ws.diagonals);
  T* const hc = cut.take<T>(ws.diagonals);
  T* const hd = cut.take<T>(ws.diagonals);
  auto* const bad = cut.take<unsigned long long>(ws.bad);
  auto* const hinfo = cut.take<std::int32_t>(ws.hinfo);
  kernels::tridiag_bondeli_params<T> p{s.a, s.b, s.c, s.d, s.x, s.lay, ws.cut, w,
                                       v,   ha,  hb,  hc,  hd,  bad,   hinfo,  s.info};
  void* const pivot = cut.take(ws.pivot);
  int const threads = pl.threads;
  auto grid = [threads](std::int64_t items) {
    return unsigned(std::clamp<std::int64_t>((items + threads - 1) / threads, 1, std::int64_t(1) << 20));
  };
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    p.d = s.d + r * s.rhs_stride;
    p.x = s.x + r * s.rhs_stride;
    p.info = r == 0 ? s.info : nullptr;
    if (cudaError_t e =
            cudaMemsetAsync(bad, 0xff, std::size_t(s.lay.count) * sizeof(unsigned long long), stream);
        e != cudaSuccess)
      return e;
    kernels::tridiag_bondeli_blocks_kernel<T><<<grid(ws.cut.count * s.lay.count), threads, 0, stream>>>(p);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (ws.reduced.n > 0) {
      tridiag_args<T> h{ha, hb, hc, hd, hd, ws.reduced, 1, 0, hinfo};
      h.pivoting = tridiag_pivoting::partial;
      if (cudaError_t e = tridiag_launch_pivot<T>(ws.reduced_plan, pivot, h, stream); e != cudaSuccess)
        return e;
    }
    kernels::tridiag_bondeli_correct_kernel<T><<<grid(s.lay.n * s.lay.count), threads, 0, stream>>>(p);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace recur::device
