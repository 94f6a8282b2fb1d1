#pragma once
// The launches of the direct forms (agent_tridiag_direct.cuh): Thomas-PCR
// from global memory into registers, and the same fed through shared memory
// for interleaved batches.

#include <cstdint>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_direct.cuh"
#include "dispatch_tridiag_common.cuh"

namespace recur::detail {

// f.template operator()<L>() for the power of two L == lanes, 2 <= L <= Max.
template <int Max, int L = 2, class F>
cudaError_t tridiag_with_lanes(int lanes, F&& f) {
  if (lanes == L) return f.template operator()<L>();
  if constexpr (2 * L <= Max)
    return tridiag_with_lanes<Max, 2 * L>(lanes, f);
  else
    return cudaErrorNotSupported;
}

// Whether the direct plan's exact instances take s: n fills the form and
// every array and right-hand side starts on a 16-byte boundary.
template <class T>
bool tridiag_direct_exact(tridiag_direct_plan const& pl, tridiag_args<T> const& s) {
  auto aligned = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  return s.lay.n == pl.size() &&
         (s.lay.count == 1 || s.lay.batch_stride * std::int64_t(sizeof(T)) % 16 == 0) &&
         (s.nrhs == 1 || s.rhs_stride * std::int64_t(sizeof(T)) % 16 == 0) && aligned(s.a) && aligned(s.b) &&
         aligned(s.c) && aligned(s.d) && aligned(s.x);
}

// Whether periodic systems run in the direct form itself (its Periodic
// instances: one segment of lanes a system, exact shapes) instead of the
// split around it.
template <class T>
bool tridiag_direct_periodic(tridiag_form const& form, tridiag_args<T> const& s) {
  auto const* pl = std::get_if<tridiag_direct_plan>(&form);
  return pl && pl->warps == 1 && tridiag_direct_exact(*pl, s);
}

// Segments of Lanes lanes (blocks of four warps), or W warps a system; the
// exact instances where tridiag_direct_exact holds, else the Any ones;
// periodic (tridiag_direct_periodic holds): the Periodic instance.
template <class T>
cudaError_t tridiag_launch_direct(tridiag_direct_plan const& pl, tridiag_args<T> const& s,
                                  cudaStream_t stream, bool periodic = false) {
  constexpr int R = kernels::tridiag_direct_group_rows<T>;
  if (pl.rows != R) return cudaErrorNotSupported;
  kernels::tridiag_direct_params<T> const p{s.a,    s.b,   s.c,    s.d,          s.x,
                                            s.info, s.lay, s.nrhs, s.rhs_stride, s.flags};
  std::int64_t const items = s.lay.count * s.nrhs;
  bool const exact = tridiag_direct_exact(pl, s);
  auto warps = [&]<int W, bool Spike>() {
    auto const kernel = exact ? kernels::tridiag_direct_group_kernel<T, R, W, Spike, false>
                              : kernels::tridiag_direct_group_kernel<T, R, W, Spike, true>;
    return kernels::launch_persistent(kernel, p, items, 32 * W, 0, stream);
  };
  auto lanes = [&]<int Lanes>() {
    constexpr int block = kernels::tridiag_segments_instances<T>::direct_block, per_block = block / Lanes;
    auto const kernel = periodic ? kernels::tridiag_direct_kernel<T, R, Lanes, block, false, true>
                        : exact  ? kernels::tridiag_direct_kernel<T, R, Lanes, block, false>
                                 : kernels::tridiag_direct_kernel<T, R, Lanes, block, true>;
    return kernels::launch_persistent(kernel, p, (items + per_block - 1) / per_block, block, 0, stream);
  };
  if (pl.warps > 1) {
    switch (pl.warps) {
      case 2:
        return warps.template operator()<2, false>();
      case 4:
        return warps.template operator()<4, false>();
      case 8:
        return warps.template operator()<8, false>();
      case 16:
        if constexpr (kernels::tridiag_direct_warps<T>(16)) return warps.template operator()<16, true>();
        break;
    }
    return cudaErrorNotSupported;
  }
  return tridiag_with_lanes<32>(pl.lanes, lanes);
}

// Blocks of S adjacent systems (agent_tridiag_direct.cuh's
// tridiag_direct_columns_kernel).
template <class T>
cudaError_t tridiag_launch_direct_columns(tridiag_direct_columns_plan const& pl, tridiag_args<T> const& s,
                                          cudaStream_t stream) {
  constexpr int R = kernels::tridiag_direct_group_rows<T>;
  if (pl.rows != R) return cudaErrorNotSupported;
  kernels::tridiag_direct_params<T> const p{s.a,    s.b,   s.c,    s.d,          s.x,
                                            s.info, s.lay, s.nrhs, s.rhs_stride, s.flags};
  auto go = [&]<int Lanes>() {
    constexpr int S = kernels::tridiag_direct_columns_systems<T>(Lanes);
    constexpr std::size_t smem = kernels::tridiag_direct_columns_smem<T>(R, Lanes, S);
    return kernels::launch_persistent(kernels::tridiag_direct_columns_kernel<T, R, Lanes>, p,
                                      (s.lay.count + S - 1) / S * s.nrhs, S * Lanes, smem, stream);
  };
  constexpr int most = R == 8 ? 64 : 32;  // f64: 64 lanes are two warps a system
  return tridiag_with_lanes<most>(pl.lanes, go);
}

}  // namespace recur::detail
