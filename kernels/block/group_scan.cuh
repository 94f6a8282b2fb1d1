#pragma once
// A scan across a group of threads inside a block: the block holds several
// independent groups of G consecutive threads (G a multiple of 32, at most
// 1024), one problem each, as the tridiagonal tiles do (one system per
// group). Hillis-Steele in each warp (warp_scan_hillis_steele's shuffles),
// then Hillis-Steele over the group's warp totals by its first warp, through
// `scratch` (G / 32 values per group in shared memory).
//
// Any associative operator, commutative or not, in the recur::ops order:
// op(l, r) is "l first, then r". Forward scans run in rank order (rank 0
// first); reverse scans in the opposite order (rank G - 1 first), as a
// backward recurrence needs. The combination order depends only on G, so
// results are reproducible bitwise.
//
// Every thread of the block must call (the function has block barriers),
// with the same G; threads of a group without a problem pass identity
// values. scratch may be reused as soon as the call returns (it ends with a
// barrier).

#include "../thread/thread_ops.cuh"

namespace recur::kernels {

template <bool Reverse>
struct group_scan_direction {
  // The value `d` places earlier in scan order than this lane's.
  template <class V>
  __device__ __forceinline__ static V earlier(V v, unsigned d) {
    if constexpr (Reverse)
      return shfl_down(v, d);
    else
      return shfl_up(v, d);
  }
  // Whether `lane` has a lane `d` places earlier among the first `width`.
  __device__ __forceinline__ static bool has_earlier(unsigned lane, unsigned d, unsigned width) {
    return Reverse ? lane + d < width : lane >= d;
  }
  // Inclusive scan over lanes 0 .. width-1 of the warp (others: garbage).
  template <class V, class Op>
  __device__ __forceinline__ static V warp_inclusive(V v, Op op, unsigned lane, unsigned width) {
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
      V const u = earlier(v, d);
      if (has_earlier(lane, d, width)) v = op(u, v);
    }
    return v;
  }
};

// Returns the combination of the values of every thread before this one in
// scan order (identity for the first); total receives the group's
// combination.
template <bool Reverse, class V, class Op>
__device__ V group_exclusive_scan(V v, V identity, Op op, int rank, int group_threads, V* scratch,
                                  V& total) {
  using dir = group_scan_direction<Reverse>;
  unsigned const lane = unsigned(rank) % 32;
  int const warp = rank / 32, warps = group_threads / 32;
  V const inc = dir::warp_inclusive(v, op, lane, 32);
  if (lane == (Reverse ? 0u : 31u)) scratch[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    V x = scratch[lane < unsigned(warps) ? lane : 0];
    x = dir::warp_inclusive(x, op, lane, unsigned(warps));
    __syncwarp();
    if (lane < unsigned(warps)) scratch[lane] = x;  // inclusive over the group's warps
  }
  __syncthreads();
  total = scratch[Reverse ? 0 : warps - 1];
  V const lane_before = dir::earlier(inc, 1);
  bool const has_lane = dir::has_earlier(lane, 1, 32);
  int const prev_warp = Reverse ? warp + 1 : warp - 1;
  bool const has_warp = prev_warp >= 0 && prev_warp < warps;
  V out = identity;
  if (has_warp) out = scratch[prev_warp];
  if (has_lane) out = has_warp ? op(out, lane_before) : lane_before;
  __syncthreads();  // scratch is free again
  return out;
}

}  // namespace recur::kernels
