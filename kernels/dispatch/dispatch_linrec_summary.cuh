#pragma once
// Device-level linrec summary, header-only, CUB's calling convention:
//
//   std::size_t bytes = 0;
//   recur::device::linrec_summary<float>(nullptr, bytes, problem, out, stream);  // size only
//   recur::device::linrec_summary<float>(temp, bytes, problem, out, stream);     // enqueue
//
// out[k] (device memory, lay.count maps in compute_t<T>) receives sequence
// k's steps composed: its last state is out[k].a * init + out[k].b
// (kernels/agent/agent_linrec_summary.cuh), the identity map where n == 0.
// `problem` is a checked, forward-direction detail::linrec_problem (a
// reverse call mirrored); its w, init and final_state are not used. Nothing
// is synchronised or allocated; every launch is graph-capturable.
//
// Which kernel reads the problem: tiles where a sequence's elements are
// adjacent in memory (|element_stride| == 1) or the layout is neither,
// columns where adjacent sequences are adjacent (interleaved). The rows of
// maps either leaves are folded by the tiles kernel, a factor of
// Block x Items a launch, until one map per sequence remains.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <cuda_runtime.h>

#include "../agent/agent_linrec_summary.cuh"
#include "launch_persistent.cuh"
#include "workspace.cuh"

namespace recur::kernels {

// 256 x 8 maps a tile and 2048 threads of columns an SM: enough loads in
// flight to stream from memory; not tuned (the summary is read-once work).
inline constexpr int summary_block = 256;
inline constexpr int summary_items = 8;
inline constexpr std::int64_t summary_tile = summary_block * summary_items;
inline constexpr std::int64_t summary_columns_per_sm = 2048;
inline constexpr std::int64_t summary_columns_min_length = 32;

template <class V>
__global__ void linrec_summary_identity_kernel(ops::affine<V>* out, std::int64_t count) {
  std::int64_t const k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) out[k] = ops::affine_identity<V>();
}

// The first level's shape: by columns, and how many runs a sequence.
struct summary_shape {
  bool columns;
  std::int64_t runs;    // maps a sequence after the first level
  std::int64_t length;  // columns: elements a run
};

inline summary_shape summary_shape_of(layout const& lay, int sms) {
  bool const columns =
      std::llabs(lay.element_stride) != 1 && std::llabs(lay.batch_stride) == 1 && lay.count > 1;
  if (!columns) return {false, (lay.n + summary_tile - 1) / summary_tile, 0};
  std::int64_t const want = summary_columns_per_sm * sms;  // threads wanted
  std::int64_t const runs_wanted = (want + lay.count - 1) / lay.count;
  std::int64_t length = (lay.n + runs_wanted - 1) / runs_wanted;
  if (length < summary_columns_min_length) length = summary_columns_min_length;
  return {true, (lay.n + length - 1) / length, length};
}

// Blocks for `items` tiles or threads: at most a few waves of the device.
inline unsigned summary_grid(std::int64_t items, std::int64_t per_block, int sms) {
  std::int64_t const blocks = (items + per_block - 1) / per_block, cap = std::int64_t(sms) * 16;
  return static_cast<unsigned>(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

}  // namespace recur::kernels

namespace recur::device {

template <class T>
cudaError_t linrec_summary(void* temp, std::size_t& temp_bytes, detail::linrec_problem<T> const& p,
                           ops::affine<compute_t<T>>* out, cudaStream_t stream) {
  using namespace recur::kernels;
  using V = compute_t<T>;
  using map = ops::affine<V>;
  std::int64_t const n = p.lay.n, count = p.lay.count;
  int sms = 0;
  if (cudaError_t const e = current_sm_count(sms); e != cudaSuccess) return e;
  summary_shape const shape = summary_shape_of(p.lay, sms);
  // Two rows of maps, ping-pong: the first level's and the next one's.
  std::size_t const first = workspace_piece(sizeof(map) * std::size_t(count) * std::size_t(shape.runs));
  std::size_t const second =
      sizeof(map) * std::size_t(count) * std::size_t((shape.runs + summary_tile - 1) / summary_tile);
  if (!temp) {
    temp_bytes =
        count > 0 && n > 0 && shape.runs > 1 ? first + second : 1;  // nonzero: the second call launches
    return cudaSuccess;
  }
  if (count == 0) return cudaSuccess;
  if (n == 0) {
    linrec_summary_identity_kernel<<<unsigned((count + 255) / 256), 256, 0, stream>>>(out, count);
    return cudaGetLastError();
  }
  workspace_cursor ws(temp);
  map* a = shape.runs > 1 ? ws.take<map>(first) : out;
  map* b = shape.runs > 1 ? ws.take<map>(second) : nullptr;
  summary_problem_source<T> const src{p};
  if (shape.columns)
    linrec_summary_columns_kernel<<<summary_grid(count * shape.runs, 256, sms), 256, 0, stream>>>(
        src, n, count, shape.length, a);
  else
    linrec_summary_tiles_kernel<summary_block, summary_items>
        <<<summary_grid(count * shape.runs, 1, sms), summary_block, 0, stream>>>(src, n, count, a);
  if (cudaError_t const e = cudaGetLastError(); e != cudaSuccess) return e;
  // Fold rows of `runs` maps a sequence until one is left, into out last.
  for (std::int64_t runs = shape.runs; runs > 1;) {
    std::int64_t const next = (runs + summary_tile - 1) / summary_tile;
    map* const to = next == 1 ? out : b;
    linrec_summary_tiles_kernel<summary_block, summary_items>
        <<<summary_grid(count * next, 1, sms), summary_block, 0, stream>>>(summary_map_source<V>{a, runs},
                                                                           runs, count, to);
    if (cudaError_t const e = cudaGetLastError(); e != cudaSuccess) return e;
    std::swap(a, b);
    runs = next;
  }
  return cudaSuccess;
}

}  // namespace recur::device
