#pragma once
// Tuning policies for linrec, one constexpr struct per value type (the same
// for sm_80 and sm_90 so far). Each figure says where it came from.

namespace recur::kernels {

template <class T>
struct linrec_policy;

// Tiles: 256 threads x 16 items = 4096 elements of f32 per tile, 36 KB of
// shared memory, registers capped for 4 blocks per SM (64 registers, no
// spills). Chosen on the H100 with bench/tune_linrec_tiles (2026-11-22,
// doc/performance.md): with the packed-word look-back, 256x16 at 4 blocks
// per SM gives 73% of copy for f32 on fading data and 64% on long-memory
// data; 256x12 at 5 blocks 75% / 63%, 512x16 at 2 blocks 73% / 66%, 3 blocks
// per SM 65% / 56%. f64: 256x8 at 4 blocks 81% / 75%; 512x8 at 2 blocks
// 78% / 75%; 128x16 at 4 blocks 80% / 74%.
// Pipelined (opt-in linrec_variant::pipelined, agent_linrec_pipe.cuh):
// 256 threads x 16 items (f32) or 8 (f64), 2 shared-memory stages (one
// tile worked on, the next one's copies in flight), 3 blocks per SM (66 KB
// each, 80 registers, no spills). bench/tune_linrec_tiles on the H100
// (2026-11-23): f32 87.3-87.8% of copy on fading data, 40% on long-memory
// data; f64 94.5% / 50%. 3 stages at 2 blocks per SM: 73.6% / 10% (tiles
// are taken a whole iteration before they are worked on); 128 x 16 at 5
// blocks per SM 81% / 29%.
// Lanes: 128 lanes x 32 rows held in registers.
template <>
struct linrec_policy<float> {
  static constexpr int block = 256, items = 16, lookback_depth = 256, min_blocks = 4;
  static constexpr int pipe_block = 256, pipe_items = 16, pipe_stages = 2, pipe_min_blocks = 3;
  static constexpr int lanes_block = 128, lanes_rows = 32, lanes_lookback_depth = 8;
  // Three-kernel form: the paper's T and G (T = 128 threads per block; G
  // from the SM count, so P = T G = 256 threads per SM).
  static constexpr int three_kernel_block = 128, three_kernel_blocks_per_sm = 2;
};

template <>
struct linrec_policy<double> {
  static constexpr int block = 256, items = 8, lookback_depth = 256, min_blocks = 4;
  static constexpr int pipe_block = 256, pipe_items = 8, pipe_stages = 2, pipe_min_blocks = 3;
  static constexpr int lanes_block = 128, lanes_rows = 16, lanes_lookback_depth = 8;
  static constexpr int three_kernel_block = 128, three_kernel_blocks_per_sm = 2;
};

// The lanes agent needs enough sequences side by side to fill a warp's loads.
inline constexpr long long linrec_lanes_min_count = 32;

}  // namespace recur::kernels
