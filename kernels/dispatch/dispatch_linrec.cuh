#pragma once
// Device-level linrec, header-only, CUB's calling convention:
//
//   std::size_t bytes = 0;
//   recur::device::linrec<float>(nullptr, bytes, problem, stream);  // size only
//   cudaMallocAsync(&temp, bytes, stream);
//   recur::device::linrec<float>(temp, bytes, problem, stream);     // enqueue
//
// `problem` is a checked, forward-direction recur::detail::linrec_problem (the
// host API in lib/ checks arguments and mirrors reverse calls). Nothing is
// synchronised or allocated here; every launch is graph-capturable. The
// temporary storage must not be shared by two calls in flight at once.
// T is the storage type (float, double, recur::bfloat16, recur::float16); the
// agents compute in compute_t<T> (kernels/agent/linrec_params.cuh).
//
// recur::device::linrec_adjoint takes a detail::linrec_adjoint_problem the
// same way and runs the same agents, chosen by the same rules, over the
// adjoint's view (linrec_adjoint_params): one dispatch for both.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include <recur/types.hpp>
#include "../agent/agent_linrec_lanes.cuh"
#include "../agent/agent_linrec_pipe.cuh"
#include "../agent/agent_linrec_rows.cuh"
#include "../agent/agent_linrec_stripes.cuh"
#include "../agent/agent_linrec_three_kernel.cuh"
#include "../agent/agent_linrec_tiles.cuh"
#include "../tuning/tuning_linrec.cuh"
#include "launch_persistent.cuh"
#include "workspace.cuh"

namespace recur::kernels {

// n == 0: the final state is the initial state.
template <class T>
__global__ void linrec_copy_init_kernel(detail::linrec_problem<T> p) {
  std::int64_t const k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < p.lay.count) p.final_state[k] = p.init_of(k);
}

enum class linrec_agent { none, tiles, pipe, lanes, stripes, rows, three_kernel };

// The agents of a view P (linrec_params<T> or linrec_adjoint_params<T>), with
// its policy (P::policy).
template <class P, class T = typename P::storage, class policy = typename P::policy>
using linrec_tiles_agent_of = agent_linrec_tiles<T, policy::block, policy::items, policy::lookback_depth,
                                                 policy::min_blocks, 1, linrec_phases::all, P>;
template <class P, class T = typename P::storage, class policy = typename P::policy>
using linrec_lanes_agent_of =
    agent_linrec_lanes<T, policy::lanes_block, policy::lanes_rows, policy::lanes_lookback_depth, P>;
template <class P, class T = typename P::storage, class policy = typename P::policy>
using linrec_pipe_agent_of = agent_linrec_pipe<T, policy::pipe_block, policy::pipe_items, policy::pipe_stages,
                                               policy::lookback_depth, policy::pipe_min_blocks, 1, P>;
template <class P, class T = typename P::storage, class policy = typename P::policy>
using linrec_stripes_agent_of = agent_linrec_stripes<T, policy::stripes_block, policy::stripes_lanes,
                                                     policy::stripes_rows, policy::stripes_min_blocks, P>;
template <class P, class T = typename P::storage, class policy = typename P::policy>
using linrec_rows_agent_of = agent_linrec_rows<T, policy::rows_block, policy::rows_items, policy::rows_stages,
                                               policy::rows_min_blocks, P>;

// Whether the batch fills a device of `sms` SMs with whole sequences, one
// block each, rows_min_waves times over, and the rows agent serves it.
template <class P>
bool linrec_rows_fill(P const& prm, int sms) {
  using T = typename P::storage;
  using policy = typename P::policy;
  return prm.p.lay.count >= linrec_rows_min_count<T, policy>(sms) &&
         prm.p.lay.n >= linrec_rows_min_n<T, policy>() && linrec_rows_agent_of<P>::serves(prm);
}

// Whether every tile's composed map is provably constant (a == 0): s is one
// scalar whose tile-length power underflows to zero in the compute type, with
// a margin of 10 binary orders (any association of the product gives exactly
// 0). Then
// each look-back ends at the predecessor, the case the pipelined agent is
// made for, and its long-memory weakness cannot arise.
template <class T>
bool linrec_tiles_forget(detail::linrec_problem<T> const& p, int tile_items) {
  if (p.s) return false;
  double const a = std::fabs(double(to_compute(p.s_value)));
  if (!(a < 1)) return false;  // also NaN
  if (a == 0) return true;
  constexpr double limit =
      sizeof(compute_t<T>) == 4 ? -149.0 - 10.0 : -1074.0 - 10.0;  // smallest subnormal, minus margin
  return tile_items * std::log2(a) < limit;
}

// Forms, first that applies:
//   none          nothing to scan (n or count zero): final_state = init
//   three_kernel  asked for (linrec_variant::three_kernel)
//   stripes       interleaved batches of at least one stripe per SM
//                 (linrec_stripes_min_count): one block per stripe of
//                 adjacent sequences, no look-back
//   lanes         other interleaved batches of linrec_lanes_min_count
//                 sequences or more: one sequence per thread
//   rows          automatic, on batches of sequences contiguous in memory
//                 that fill the device (linrec_rows_fill; `sms`, its SM
//                 count): one block per sequence, no look-back
//   pipe          asked for (pipelined), or automatic when every tile's map
//                 provably forgets (linrec_tiles_forget), on a dense
//                 contiguous 16-byte-aligned batch; it loses to the tiles
//                 agent when walks go far back
//   tiles         otherwise
//
// The same for the adjoint's view: its coefficient is s, read one element
// back, so the same tiles forget.
template <class P>
linrec_agent choose_linrec_agent(P const& prm, linrec_variant v, int sms) {
  auto const& p = prm.p;
  if (p.lay.n == 0 || p.lay.count == 0) return linrec_agent::none;
  if (v == linrec_variant::three_kernel) return linrec_agent::three_kernel;
  using policy = typename P::policy;
  if (p.lay.count >= linrec_lanes_min_count && p.lay.batch_stride == 1 && p.lay.n > 1)
    return linrec_has_stripes<policy> &&
                   p.lay.count >= linrec_stripes_min_count<typename P::storage, policy>(sms)
               ? linrec_agent::stripes
               : linrec_agent::lanes;
  if (v == linrec_variant::automatic && linrec_rows_fill(prm, sms)) return linrec_agent::rows;
  using pipe = linrec_pipe_agent_of<P>;
  if ((v == linrec_variant::pipelined ||
       (v == linrec_variant::automatic && linrec_tiles_forget(p, pipe::tile_items))) &&
      pipe::serves(prm))
    return linrec_agent::pipe;
  return linrec_agent::tiles;
}
template <class T>
linrec_agent choose_linrec_agent(detail::linrec_problem<T> const& p, linrec_variant v, int sms) {
  return choose_linrec_agent(linrec_params<T>{p}, v, sms);
}

// The dispatch of both device entry points over a view P.
template <class P>
cudaError_t linrec_dispatch(void* d_temp, std::size_t& temp_bytes, P const& prm, cudaStream_t stream,
                            linrec_variant variant) {
  using T = typename P::storage;
  using V = compute_t<T>;  // the agents compute in V, the arrays hold T
  using policy = typename P::policy;
  using tiles_agent = linrec_tiles_agent_of<P>;
  using lanes_agent = linrec_lanes_agent_of<P>;
  using status = linrec_tile_status<V>;
  auto const& p = prm.p;

  int sms = 0;
  if (cudaError_t const e = current_sm_count(sms); e != cudaSuccess) return e;
  linrec_agent const agent = choose_linrec_agent(prm, variant, sms);
  std::int64_t const total = p.lay.n * p.lay.count;
  constexpr std::int64_t max_grid = 0x7fffffff;

  switch (agent) {
    case linrec_agent::none: {
      temp_bytes = 1;
      if (!d_temp || !p.final_state || p.lay.count == 0) return cudaSuccess;
      std::int64_t const blocks = (p.lay.count + 255) / 256;
      if (blocks > max_grid) return cudaErrorInvalidValue;
      linrec_copy_init_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
      return cudaGetLastError();
    }
    case linrec_agent::tiles: {
      std::int64_t const tiles = tiles_agent::tiles(total);
      if (tiles > max_grid) return cudaErrorInvalidValue;
      temp_bytes = status::bytes(tiles);
      if (!d_temp) return cudaSuccess;
      cudaError_t e = cudaMemsetAsync(d_temp, status::fill, status::bytes(tiles), stream);
      if (e != cudaSuccess) return e;
      constexpr int smem = sizeof(typename tiles_agent::temp_storage);
      auto const kernel = linrec_tiles_kernel<tiles_agent>;
      if (smem > 48 * 1024) {
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
      }
      kernel<<<static_cast<unsigned>(tiles), policy::block, smem, stream>>>(prm,
                                                                            status::carve(d_temp, tiles));
      return cudaGetLastError();
    }
    case linrec_agent::pipe: {
      using agent = linrec_pipe_agent_of<P>;
      std::int64_t const tiles = agent::tiles(total);
      temp_bytes = status::bytes(tiles);
      if (!d_temp) return cudaSuccess;
      cudaError_t e = cudaMemsetAsync(d_temp, status::fill, status::bytes(tiles), stream);
      if (e != cudaSuccess) return e;
      constexpr int smem = sizeof(typename agent::temp_storage);
      auto const kernel = linrec_pipe_kernel<agent>;
      if (smem > 48 * 1024) {
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
      }
      // Persistent: as many blocks as fit at once (more would only wait).
      std::int64_t const want = static_cast<std::int64_t>(sms) * agent::min_blocks;
      unsigned const grid = static_cast<unsigned>(tiles < want ? tiles : want);
      kernel<<<grid, agent::block_threads, smem, stream>>>(prm, status::carve(d_temp, tiles));
      return cudaGetLastError();
    }
    case linrec_agent::lanes: {
      std::int64_t const tiles = lanes_agent::tiles(p.lay.n, p.lay.count);
      std::int64_t const slots = lanes_agent::slots(p.lay.n, p.lay.count);
      if (tiles > max_grid) return cudaErrorInvalidValue;
      temp_bytes = status::bytes(slots);
      if (!d_temp) return cudaSuccess;
      cudaError_t e = cudaMemsetAsync(d_temp, status::fill, status::bytes(slots), stream);
      if (e != cudaSuccess) return e;
      linrec_lanes_kernel<lanes_agent><<<static_cast<unsigned>(tiles), policy::lanes_block, 0, stream>>>(
          prm, status::carve(d_temp, slots));
      return cudaGetLastError();
    }
    case linrec_agent::stripes:
      if constexpr (linrec_has_stripes<policy>) {
        using agent = linrec_stripes_agent_of<P>;
        temp_bytes = 1;  // no workspace (as for rows)
        if (!d_temp) return cudaSuccess;
        return launch_persistent(linrec_stripes_kernel<agent>, prm, agent::stripes(p.lay.count),
                                 agent::block_threads, 0, stream);
      }
      return cudaErrorInvalidValue;  // never chosen without a stripes policy
    case linrec_agent::rows: {
      using agent = linrec_rows_agent_of<P>;
      temp_bytes = 1;  // no workspace (a nonzero size, as for `none`: the caller's second call launches)
      if (!d_temp) return cudaSuccess;
      return launch_persistent(linrec_rows_kernel<agent>, prm, p.lay.count, agent::block_threads,
                               sizeof(typename agent::temp_storage), stream);
    }
    case linrec_agent::three_kernel: {
      linrec_three_kernel_plan<V> plan{};
      plan.total = total;
      std::int64_t const want =
          static_cast<std::int64_t>(sms) * policy::three_kernel_blocks_per_sm * policy::three_kernel_block;
      plan.chunks = total < want ? total : want;
      plan.length = (total + plan.chunks - 1) / plan.chunks;
      std::size_t const cells = static_cast<std::size_t>(plan.chunks) * plan.length;
      std::size_t const b_arr = workspace_piece(sizeof(V) * cells);
      std::size_t const b_map = workspace_piece(sizeof(ops::affine<V>) * plan.chunks);
      std::size_t const b_in = workspace_piece(sizeof(V) * plan.chunks);
      temp_bytes = 2 * b_arr + b_map + b_in;
      std::int64_t const gx = (plan.length + 31) / 32, gy = (plan.chunks + 31) / 32;
      if (gx > max_grid || gy > 65535) return cudaErrorInvalidValue;
      if (!d_temp) return cudaSuccess;
      workspace_cursor cut(d_temp);
      plan.s = cut.take<V>(b_arr);
      plan.t = cut.take<V>(b_arr);
      plan.chunk_map = cut.take<ops::affine<V>>(b_map);
      plan.chunk_in = cut.take<V>(b_in);
      dim3 const grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), block(32, 8);
      unsigned const pb = policy::three_kernel_block;
      unsigned const pg = static_cast<unsigned>((plan.chunks + pb - 1) / pb);
      linrec_rearrange_kernel<P, true><<<grid, block, 0, stream>>>(prm, plan);
      linrec_precompute_kernel<V><<<pg, pb, 0, stream>>>(plan);
      linrec_propagate_kernel<V><<<1, 1, 0, stream>>>(plan);
      linrec_determine_kernel<V><<<pg, pb, 0, stream>>>(plan);
      linrec_rearrange_kernel<P, false><<<grid, block, 0, stream>>>(prm, plan);
      return cudaGetLastError();
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace recur::kernels

namespace recur::device {

template <class T>
cudaError_t linrec(void* d_temp, std::size_t& temp_bytes, detail::linrec_problem<T> const& p,
                   cudaStream_t stream = 0, linrec_variant variant = linrec_variant::automatic) {
  return kernels::linrec_dispatch(d_temp, temp_bytes, kernels::linrec_params<T>{p}, stream, variant);
}

// The adjoint (detail::linrec_adjoint_problem, in the order it runs).
template <class T>
cudaError_t linrec_adjoint(void* d_temp, std::size_t& temp_bytes, detail::linrec_adjoint_problem<T> const& p,
                           cudaStream_t stream = 0, linrec_variant variant = linrec_variant::automatic) {
  return kernels::linrec_dispatch(d_temp, temp_bytes, kernels::linrec_adjoint_params<T>{p}, stream, variant);
}

}  // namespace recur::device
