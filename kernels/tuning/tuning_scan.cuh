#pragma once
// Tile shapes of the device-wide scan (agent_scan.cuh) by value size, the
// same for sm_80 and sm_90: the generic scan (scan_policy) and the matrix
// chains, Moebius recurrences and integer DPCM decoding built on it
// (chain_policy). The figures are bench/tune_scan's on the H100.

#include <cstddef>

namespace recur::kernels {

// Block threads x Items values per thread, look-back rounds of 32
// LookbackWords predecessors and a stack of LookbackDepth, MinBlocks per SM
// (a register cap).
template <int Block, int Items, int LookbackWords, int MinBlocks, int LookbackDepth = 256>
struct scan_shape {
  static constexpr int block = Block, items = Items, lookback_words = LookbackWords, min_blocks = MinBlocks,
                       lookback_depth = LookbackDepth;
};

// By value size (Bytes), the first that applies.
template <std::size_t Bytes, int Class = Bytes <= 4    ? 0
                                         : Bytes <= 8  ? 1
                                         : Bytes <= 24 ? 2
                                         : Bytes <= 36 ? 3
                                                       : 4>
struct scan_tuning;
// tune_scan sum f32 (h100-tune-scan.log): 75.1% of copy
template <std::size_t Bytes>
struct scan_tuning<Bytes, 0> : scan_shape<512, 16, 1, 4> {};
// tune_scan affine f32 (h100-tune-scan-parts.log): 77.9% of copy
template <std::size_t Bytes>
struct scan_tuning<Bytes, 1> : scan_shape<512, 8, 2, 3> {};
// untuned: 64-byte runs at 64 registers
template <std::size_t Bytes>
struct scan_tuning<Bytes, 2> : scan_shape<512, Bytes <= 16 ? 4 : 2, 2, 2> {};
// tune_scan matrix3 f32 (h100-tune-scan-tags.log): 81.4% of copy
template <std::size_t Bytes>
struct scan_tuning<Bytes, 3> : scan_shape<256, 8, 1, 2> {};
// untuned: no register cap (a cap spills 3x3 products)
template <std::size_t Bytes>
struct scan_tuning<Bytes, 4> : scan_shape<512, 2, 2, 1> {};

template <class V>
using scan_policy = scan_tuning<sizeof(V)>;

// Segmented steps of 16 B to 600 B (a 3x3 f32 affine step is 52 B, an 8x8
// f64 one 584 B): fewer threads and items as they grow. Untuned.
template <class V>
using chain_policy = scan_shape<(sizeof(V) <= 64    ? 256
                                 : sizeof(V) <= 160 ? 128
                                                    : 64),
                                (sizeof(V) <= 160 ? 2 : 1), 1, 1, 32>;

}  // namespace recur::kernels
