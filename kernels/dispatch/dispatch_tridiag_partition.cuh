#pragma once
// The launch of the partitioned form (agent_tridiag_partition.cuh): reduce,
// the reduced batch solved by its own plan (tridiag_plan_reduced), then
// substitute, one right-hand side at a time.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_partition.cuh"
#include "dispatch_tridiag_common.cuh"
#include "dispatch_tridiag_tile.cuh"

namespace recur::detail {

// Where the breakdown depends on the right-hand side (rd, cr_rd inside),
// the rows fold into a status per system that the status kernel turns into
// info and NaN, as the tile's.
template <class T>
cudaError_t tridiag_launch_partition(tridiag_partition_plan const& pl, tridiag_device const& dev,
                                     void* workspace, tridiag_args<T> const& s, cudaStream_t stream) {
  tridiag_partition_workspace<T> const ws(s.lay, pl, dev);
  if (!ws.nested) return cudaErrorNotSupported;
  kernels::workspace_cursor cut(workspace);
  T* const ra = cut.take<T>(ws.arrays);
  T* const rb = cut.take<T>(ws.arrays);
  T* const rc = cut.take<T>(ws.arrays);
  T* const rd = cut.take<T>(ws.arrays);
  auto* const row_info = cut.take<unsigned>(ws.ints);
  auto* const rinfo = cut.take<std::int32_t>(ws.ints);
  std::int32_t* const status_piece = ws.rhs_breakdown ? cut.take<std::int32_t>(ws.ints) : nullptr;
  std::int32_t* const status = s.nrhs > 1 ? status_piece : nullptr;
  void* const nested = cut.take(ws.nested_bytes);
  if (status)
    if (cudaError_t e =
            cudaMemsetAsync(status, 0x7f, std::size_t(s.lay.count) * sizeof(std::int32_t), stream);
        e != cudaSuccess)
      return e;
  // Chunks in registers: exactly R rows each (the last one's rows past n
  // identity rows); else n split evenly.
  constexpr int R = kernels::tridiag_partition_regs_rows<T>;
  if (pl.regs_rows != 0 && pl.regs_rows != R) return cudaErrorNotSupported;
  bool const regs = pl.regs_rows == R;
  kernels::chunk_split const split =
      regs ? kernels::chunk_split{R, 0}
           : kernels::chunk_split{int(s.lay.n / pl.chunks), int(s.lay.n % pl.chunks)};
  constexpr int regs_threads = kernels::tridiag_partition_regs_threads;
  std::int64_t const regs_blocks = (s.lay.count * pl.chunks + regs_threads - 1) / regs_threads;
  auto pass = [&](auto window_kernel, auto regs_kernel, kernels::tridiag_partition_params<T> const& p) {
    return regs ? kernels::launch_persistent(regs_kernel, p, regs_blocks, regs_threads, 0, stream)
                : kernels::launch_persistent(window_kernel, p, p.windows, pl.threads, pl.smem, stream);
  };
  std::int64_t const windows = regs ? 0
                                    : (s.lay.count + pl.window_systems - 1) / pl.window_systems *
                                          ((pl.chunks + pl.window_chunks - 1) / pl.window_chunks);
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    kernels::tridiag_partition_params<T> const p{s.a,
                                                 s.b,
                                                 s.c,
                                                 s.d + r * s.rhs_stride,
                                                 s.x + r * s.rhs_stride,
                                                 s.lay,
                                                 split,
                                                 pl.chunks,
                                                 pl.window_systems,
                                                 pl.window_chunks,
                                                 pl.ld,
                                                 windows,
                                                 ra,
                                                 rb,
                                                 rc,
                                                 rd,
                                                 row_info,
                                                 rinfo,
                                                 status || r + 1 < s.nrhs ? nullptr : s.info,
                                                 status,
                                                 status ? nullptr : s.flags};
    if (cudaError_t e = cudaMemsetAsync(row_info, 0xff, std::size_t(s.lay.count) * sizeof(unsigned), stream);
        e != cudaSuccess)
      return e;
    if (cudaError_t e = pass(kernels::tridiag_partition_reduce_kernel<T>,
                             kernels::tridiag_partition_regs_kernel<T, R, false>, p);
        e != cudaSuccess)
      return e;
    tridiag_args<T> const reduced{ra, rb, rc, rd, rd, ws.reduced, 1, ws.reduced.n * ws.reduced.count, rinfo};
    if (cudaError_t e = tridiag_launch_form<T>(*ws.nested, dev, nested, reduced, stream); e != cudaSuccess)
      return e;
    if (cudaError_t e = pass(kernels::tridiag_partition_substitute_kernel<T>,
                             kernels::tridiag_partition_regs_kernel<T, R, true>, p);
        e != cudaSuccess)
      return e;
  }
  return status ? tridiag_launch_rhs_status<T>(status, s, stream) : cudaSuccess;
}

}  // namespace recur::detail
