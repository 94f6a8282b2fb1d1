#pragma once
// Tile shapes of the LTI agent (agent_lti.cuh: lfilter, sosfilt, DPCM,
// order-k recurrences), per value type and state size K, the same for sm_80
// and sm_90. Two per type: one for tiles that forget (A^tile zero in T, so
// every look-back ends at the first predecessor), one for long memory (a walk
// may go far back: fewer, longer tiles pay). The figures are bench/tune_lti's
// (f32, one lane of 2^24 samples) on the H100.

#include <type_traits>

#include "../thread/lti_systems.cuh"

namespace recur::kernels {

// Block threads x Items samples per thread, a look-back stack of Depth
// tiles, MinBlocks per SM (a register cap); Correct: agent_lti's
// output-correcting determination.
template <int Block, int Items, int Depth, int MinBlocks, bool Correct = false>
struct lti_shape {
  static constexpr int block = Block, items = Items, depth = Depth, min_blocks = MinBlocks;
  static constexpr bool correct = Correct;
};

template <class T, int K>
struct lti_policy {
  static_assert(sizeof(T) == 8);
  // Untuned: 16 KB tiles, as the f32 shapes.
  using forgetting = lti_shape<128, 16, 128, K <= 4 ? 4 : 2>;
  using long_memory = forgetting;
};

template <int K>
struct lti_policy<float, K> {
  using forgetting =
      std::conditional_t<(K <= 4),
                         // tune_lti lfilter order 1 (h100-tune-lti-offsets.log): 77.2% of copy
                         lti_shape<128, 32, 128, 6, true>,
                         // tune_lti sosfilt 4 sections (h100-tune-lti-offsets.log): 58.8% of copy
                         lti_shape<128, 32, 128, 3>>;
  using long_memory =
      std::conditional_t<(K <= 4),
                         // tune_lti order 1, pole 0.99999 (h100-tune-lti-offsets.log): 68.4% of copy
                         lti_shape<256, 32, 128, 3>,
                         // untuned: the forgetting shape at 2 blocks per SM
                         lti_shape<128, 32, 128, 2>>;
};

// One thread per sequence instead of tiles: many sequences (4096 or more)
// that are strided, or short against a tile of 2048 samples (4096 for f32
// states of more than 4 values).
template <class T, int K>
inline constexpr long long lti_lanes_tile = sizeof(T) == 4 && K > 4 ? 4096 : 2048;
inline constexpr long long lti_lanes_min_count = 4096;

// Whole sequences per block (lti_rows_kernel) from this many waves of the
// blocks the device holds at once: the last, partly idle wave is then at
// most a fifth of the time. Untuned (linrec's rows agent's bound).
inline constexpr int lti_rows_min_waves = 4;

// The largest power of A the tiles of a K-value state use, A^(2^top): the
// longer tile of the two shapes.
template <class T, int K>
constexpr int lti_power_top() {
  using forgetting = typename lti_policy<T, K>::forgetting;
  using long_memory = typename lti_policy<T, K>::long_memory;
  constexpr int f = lti_log2(forgetting::block * forgetting::items),
                l = lti_log2(long_memory::block * long_memory::items);
  return f > l ? f : l;
}

}  // namespace recur::kernels
