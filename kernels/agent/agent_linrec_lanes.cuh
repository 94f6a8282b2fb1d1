#pragma once
// The single-pass P-scheme for batches whose sequences sit side by side
// (interleaved: element i of consecutive sequences adjacent, batch_stride 1).
// One lane (sequence) per thread, so a warp's loads of one row are coalesced.
// A tile is Block lanes x Rows rows; the thread keeps its Rows elements in
// registers:
//   pre-computation: compose the lane's Rows maps;
//   propagation:     per-lane look-back over the chunks above it;
//   determination:   re-run the Rows elements from the incoming state.
// Memory is read once and written once.

#include <cstdint>

#include "linrec_params.cuh"

namespace recur::kernels {

// Params: linrec_params<T> or linrec_adjoint_params<T> (linrec_params.cuh).
template <class T, int Block, int Rows, int LookbackDepth, class Params = linrec_params<T>>
struct agent_linrec_lanes {
  using params = Params;
  static constexpr int block_threads = Block;
  using V = compute_t<T>;  // T is stored, V computed in (linrec_params.cuh)
  using map = ops::affine<V>;
  using status = linrec_tile_status<V>;

  struct temp_storage {
    map stack[LookbackDepth * Block];
    std::int64_t tile;
  };

  // Tiles are numbered chunk-major (all lane groups of chunk 0 first), so
  // launch order follows the dependency order.
  __host__ __device__ static std::int64_t groups(std::int64_t count) { return (count + Block - 1) / Block; }
  __host__ __device__ static std::int64_t chunks(std::int64_t n) { return (n + Rows - 1) / Rows; }
  static std::int64_t tiles(std::int64_t n, std::int64_t count) { return groups(count) * chunks(n); }
  // One status slot per lane and chunk.
  static std::int64_t slots(std::int64_t n, std::int64_t count) { return chunks(n) * count; }

  __device__ static void run(temp_storage& ts, Params const& prm, status const& st) {
    unsigned const tid = threadIdx.x;
    if (tid == 0) ts.tile = st.next_tile();
    __syncthreads();
    std::int64_t const n = prm.p.lay.n, count = prm.p.lay.count;
    std::int64_t const g = groups(count);
    std::int64_t const chunk = ts.tile / g;
    std::int64_t const lane = (ts.tile - chunk * g) * Block + tid;
    if (lane >= count) return;  // no barrier below this point
    std::int64_t const row0 = chunk * Rows;
    int const rows = static_cast<int>((n - row0 < Rows ? n - row0 : Rows));

    map m[Rows];
    typename Params::aux aux[Rows];  // what the stores need besides the results
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      m[r] = ops::affine_identity<V>();
      aux[r] = {};
      if (r < rows) {
        std::int64_t const off = prm.offset(lane, row0 + r);
        m[r] = prm.step(lane, row0 + r, off);
        aux[r] = prm.load_aux(lane, row0 + r, off);
      }
    }
    map agg = ops::affine_identity<V>();
#pragma unroll
    for (int r = 0; r < Rows; ++r) agg = ops::compose_resetting{}(agg, m[r]);

    std::int64_t const slot = chunk * count + lane;
    V w = V(0);
    if (chunk > 0) {
      st.publish(slot, lookback_aggregate, agg);
      w = st.template lookback_thread<LookbackDepth>(slot - count, count, ts.stack + tid, Block,
                                                     linrec_fold<V, 1>{});
    }
    st.publish(slot, lookback_inclusive, {V(0), apply_resetting(agg, w)});
    // final_state may be init: the lane's last chunk writes it only after
    // chunk 0 has read init (a walk from chunk 2 on may stop short of it at a
    // constant map; see init_tile_to_await).
    if (chunk >= 2 && row0 + rows == n && prm.p.final_state && prm.p.final_state == prm.p.init)
      st.wait_published(lane);

#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      if (r < rows) {
        w = determine(m[r].a, m[r].b, w);
        prm.store(lane, row0 + r, prm.offset(lane, row0 + r), w, aux[r]);
      }
    }
  }
};

template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads)
    linrec_lanes_kernel(typename Agent::params prm, typename Agent::status st) {
  __shared__ typename Agent::temp_storage ts;
  Agent::run(ts, prm, st);
}

}  // namespace recur::kernels
