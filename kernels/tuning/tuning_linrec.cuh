#pragma once
// Tuning policies for linrec, one constexpr struct per value type, the same
// for sm_80 and sm_90. The figures are bench/tune_linrec_tiles's (2^28 f32
// or 2^27 f64 elements, one sequence, |s| <= 0.99) on the H100, the rows
// policy's bench/tune_linrec_rows's (batches of 2^16-element sequences).
//
// Rows (agent_linrec_rows) runs where count >= rows_min_waves x SMs x
// rows_min_blocks (the device's SM count; the last wave, partly idle, is
// then at most one in rows_min_waves + 1) and n >= rows_min_tiles tiles (so
// that the partial tiles at a sequence's two ends cost little). Its stages
// are sized by Little's law: bytes in flight per SM >= bandwidth x latency /
// SMs, about 25 KB on the H100 and 36 KB on the H200.

#include <recur/storage.hpp>

namespace recur::kernels {

template <class T>
struct linrec_policy;

template <>
struct linrec_policy<float> {
  // Tiles (agent_linrec_tiles): tune_linrec_tiles f32 (h100-tune-linrec.log): 73.4% of copy
  static constexpr int block = 256, items = 16, lookback_depth = 256, min_blocks = 4;
  // Pipelined (agent_linrec_pipe): tune_linrec_tiles f32 PIPE (h100-tune-linrec.log): 88.1% of copy
  static constexpr int pipe_block = 256, pipe_items = 16, pipe_stages = 2, pipe_min_blocks = 3;
  // Lanes (agent_linrec_lanes), untuned: 128 sequences x 32 rows in registers
  static constexpr int lanes_block = 128, lanes_rows = 32, lanes_lookback_depth = 8;
  // Three kernels: the paper's T = 128 threads per block, P = 256 threads per SM
  static constexpr int three_kernel_block = 128, three_kernel_blocks_per_sm = 2;
  // Rows: tune_linrec_rows f32 4096 x 2^16 (h100-tune-linrec-rows.log): 91.1% of copy
  static constexpr int rows_block = 256, rows_items = 16, rows_stages = 2, rows_min_blocks = 3,
                       rows_min_waves = 4, rows_min_tiles = 2;
  // Stripes: none. tune_linrec_rows interleaved f32 (h100-tune-linrec-rows.log, h200-tune.log): the lanes
  // agent's look-back form is ahead of every stripes candidate but one (within a point) on both chips
  static constexpr int stripes_block = 0, stripes_lanes = 0, stripes_rows = 0, stripes_min_blocks = 0;
};

template <>
struct linrec_policy<double> {
  // Tiles: tune_linrec_tiles f64 (h100-tune-linrec.log): 87.8% of copy (long memory 79.9%); on the
  // H200 73.4% (64.9%) (h200-tune.log), 4 blocks per SM 81.6% (74.8%) and 68.5% (61.2%)
  static constexpr int block = 256, items = 8, lookback_depth = 256, min_blocks = 5;
  // Pipelined: tune_linrec_tiles f64 PIPE (h100-tune-linrec.log): 94.4% of copy
  static constexpr int pipe_block = 256, pipe_items = 8, pipe_stages = 2, pipe_min_blocks = 3;
  // Lanes, untuned: 128 sequences x 16 rows in registers
  static constexpr int lanes_block = 128, lanes_rows = 16, lanes_lookback_depth = 8;
  // Three kernels: the paper's T and G, as for float
  static constexpr int three_kernel_block = 128, three_kernel_blocks_per_sm = 2;
  // Rows: tune_linrec_rows f64 4096 x 2^16 (h100-tune-linrec-rows.log): 93.7% of copy
  static constexpr int rows_block = 256, rows_items = 8, rows_stages = 2, rows_min_blocks = 3,
                       rows_min_waves = 4, rows_min_tiles = 2;
  // Stripes: tune_linrec_rows interleaved f64 4096 x 2^16: 92.5% of copy on the H100, 86.6% on the H200
  // (h100-tune-linrec-rows.log, h200-tune.log; the lanes agent 81.4% and 71.5%)
  static constexpr int stripes_block = 256, stripes_lanes = 16, stripes_rows = 8, stripes_min_blocks = 2;
};

// 16-bit storage computed in float: float's policy (the agents' shared memory
// and look-back hold float; the pipelined agent's 16-byte copies carry 8
// elements, so pipe_items stays a multiple of 8), but for the rows agent.
template <>
struct linrec_policy<bfloat16> : linrec_policy<float> {
  // Rows: tune_linrec_rows bf16 4096 and 12288 x 2^16 (h100-tune-linrec-rows.log, h200-tune.log): 92.5%
  // and 93.3% of copy on the H100, 67.6% and 69.5% on the H200 (float's shape 90.8/92.5%, 64.9/65.9%);
  // one tile long sequences, the length float's policy reaches them from.
  static constexpr int rows_block = 256, rows_items = 32, rows_stages = 2, rows_min_blocks = 2,
                       rows_min_waves = 4, rows_min_tiles = 1;
};
template <>
struct linrec_policy<float16> : linrec_policy<bfloat16> {};

// Stripes (agent_linrec_stripes) runs on interleaved batches of at least one
// stripe of stripes_lanes sequences per SM, where the policy has stripes
// (stripes_lanes > 0); other interleaved batches run the lanes agent, whose
// look-back lets chunks of one sequence run side by side.
template <class Policy>
constexpr bool linrec_has_stripes = Policy::stripes_lanes > 0;
template <class T, class Policy = linrec_policy<T>>
constexpr long long linrec_stripes_min_count(int sms) {
  return static_cast<long long>(Policy::stripes_lanes) * sms;
}

// The adjoint (linrec_adjoint_params) on linrec's policies, with two blocks
// per SM for the agents that stage a third array (pipe, rows: 96 KB a block
// in f32, so two fit an SM, and their registers may double). Untuned.
template <class T>
struct linrec_adjoint_policy : linrec_policy<T> {
  static constexpr int pipe_min_blocks = 2, rows_min_blocks = 2;
};
// 16-bit storage: float's adjoint (the forward's 16-bit rows shape, 32
// elements a thread over three staged arrays, made the forward plus
// backward 12% slower on the H200: python_bench fwd_bwd bf16).
template <>
struct linrec_adjoint_policy<bfloat16> : linrec_adjoint_policy<float> {};
template <>
struct linrec_adjoint_policy<float16> : linrec_adjoint_policy<float> {};

// The lanes agent needs enough sequences side by side to fill a warp's loads.
inline constexpr long long linrec_lanes_min_count = 32;

// The rows agent's reach (see above): at least this many sequences on a
// device of `sms` SMs, each at least linrec_rows_min_n() long (Policy:
// linrec_policy<T> or linrec_adjoint_policy<T>).
template <class T, class Policy = linrec_policy<T>>
constexpr long long linrec_rows_min_count(int sms) {
  return static_cast<long long>(Policy::rows_min_waves) * Policy::rows_min_blocks * sms;
}
template <class T, class Policy = linrec_policy<T>>
constexpr long long linrec_rows_min_n() {
  return static_cast<long long>(Policy::rows_min_tiles) * Policy::rows_block * Policy::rows_items;
}

}  // namespace recur::kernels
