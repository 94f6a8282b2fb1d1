#pragma once
// The launches of the columns kernel (agent_tridiag_columns.cuh: whole
// systems a block) and the segmented kernel (agent_tridiag_segments.cuh:
// systems cut into segments joined in a thread-block cluster).

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "../agent/agent_tridiag_columns.cuh"
#include "../agent/agent_tridiag_segments.cuh"
#include "dispatch_tridiag_common.cuh"

namespace recur::detail {

template <class T>
kernels::tridiag_columns_params<T> tridiag_columns_params_of(tridiag_columns_block const& b, int segments,
                                                             int pad_rows, tridiag_args<T> const& s,
                                                             int width) {
  return {s.a,
          s.b,
          s.c,
          s.d,
          s.x,
          s.info,
          s.lay,
          s.nrhs,
          s.rhs_stride,
          b.systems,
          b.chunks,
          width,
          kernels::tridiag_columns_pitch(b.rows),
          segments,
          int((s.lay.n + pad_rows) / segments),
          pad_rows,
          s.flags};
}

// Blocks of S adjacent systems.
template <class T>
cudaError_t tridiag_launch_columns(tridiag_columns_plan const& pl, tridiag_args<T> const& s,
                                   cudaStream_t stream) {
  namespace K = kernels;
  auto const p = tridiag_columns_params_of<T>(pl, 1, 0, s, tridiag_shape::ceil_pow2(pl.chunks));
  std::int64_t const items = (s.lay.count + pl.systems - 1) / pl.systems * s.nrhs;
  auto go = [&](auto kernel) { return K::launch_persistent(kernel, p, items, pl.threads, pl.smem, stream); };
  switch (pl.instance) {
    case columns_instance::rows16:
      return go(K::tridiag_columns_kernel<T, 16, false>);
    case columns_instance::rows32:
      return go(K::tridiag_columns_kernel<T, 32, false>);
    case columns_instance::rows16_lone:
      if constexpr (sizeof(T) == 4) return go(K::tridiag_columns_kernel<T, 16, true>);
      break;
    case columns_instance::rows32_lone:
      if constexpr (sizeof(T) == 4) return go(K::tridiag_columns_kernel<T, 32, true>);
      break;
    case columns_instance::burst:
      return go(K::tridiag_columns_kernel<T, 16, false, true>);
  }
  return cudaErrorNotSupported;
}

// Whether the device runs clusters of cfg's size of this kernel (sm_90 and
// room on a GPC), cached per kernel, device and shape.
template <class Kernel>
cudaError_t tridiag_cluster_fits(Kernel kernel, cudaLaunchConfig_t const& cfg, bool& fits) {
  struct entry {
    void const* kernel;
    int dev;
    unsigned threads, G;
    std::size_t smem;
    bool fits;
  };
  static std::mutex m;
  static std::vector<entry> cache;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  void const* const key = reinterpret_cast<void const*>(kernel);
  unsigned const G = cfg.attrs[0].val.clusterDim.x;
  {
    std::lock_guard<std::mutex> lock(m);
    for (entry const& c : cache)
      if (c.kernel == key && c.dev == dev && c.threads == cfg.blockDim.x && c.G == G &&
          c.smem == cfg.dynamicSmemBytes) {
        fits = c.fits;
        return cudaSuccess;
      }
  }
  int major = 0, clusters = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
      e != cudaSuccess)
    return e;
  if (major >= 9) {
    if (cudaError_t e = kernels::allow_dynamic_smem(kernel, cfg.dynamicSmemBytes); e != cudaSuccess) return e;
    if (G > 8)
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
          e != cudaSuccess)
        return e;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // an unsupported cluster size: it does not fit
      clusters = 0;
    }
  }
  fits = clusters > 0;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, cfg.blockDim.x, G, cfg.dynamicSmemBytes, fits});
  return cudaSuccess;
}

// The segmented kernel's instance for a plan (the join is a template
// argument: the three joins are different programs between the cluster
// barriers; the shapes of the wide and dregs instances:
// kernels/tuning/tuning_tridiag.cuh's tridiag_segments_instances).
template <class T>
auto tridiag_segments_kernel_of(tridiag_segments_plan const& pl) {
  namespace K = kernels;
  using I = K::tridiag_segments_instances<T>;
  using Kernel = void (*)(K::tridiag_columns_params<T>);
  [[maybe_unused]] constexpr int A = K::tridiag_segments_ahead<T>, B = K::tridiag_segments_boundary<T>;
  [[maybe_unused]] constexpr int M = K::tridiag_columns_max_threads<T>;
  auto by_join = [&](auto pick) -> Kernel {
    using J = std::integral_constant<int, K::segment_join_by_thomas>;
    using P = std::integral_constant<int, K::segment_join_by_pcr>;
    using X = std::integral_constant<int, K::segment_join_by_scatter>;
    if constexpr (sizeof(T) == 8)
      if (pl.join == P::value) return pick(P{});
    return pl.join == X::value ? pick(X{}) : pick(J{});
  };
  switch (pl.instance) {
    case segments_instance::rows16:
      return by_join([](auto J) -> Kernel { return K::tridiag_segments_kernel<T, 16, J>; });
    case segments_instance::rows32:
      return by_join([](auto J) -> Kernel { return K::tridiag_segments_kernel<T, 32, J>; });
    case segments_instance::near16:
    case segments_instance::near15: {
      bool const r15 = pl.instance == segments_instance::near15;
      return by_join([r15](auto J) -> Kernel {
        constexpr int ahead = J == K::segment_join_by_scatter ? I::near_scatter_ahead : A;
        return r15 ? K::tridiag_segments_kernel<T, 15, J, ahead, B, M, 0, true>
                   : K::tridiag_segments_kernel<T, 16, J, ahead, B, M, 0, true>;
      });
    }
    case segments_instance::wide:
      if constexpr (sizeof(T) == 4)
        return by_join([](auto J) -> Kernel {
          return K::tridiag_segments_kernel<T, I::wide_rows, J, I::wide_ahead, I::wide_boundary,
                                            I::wide_threads, I::wide_blocks>;
        });
      break;
    case segments_instance::dregs: {  // (pad: identity rows past n)
      constexpr int X = K::segment_join_by_scatter;
      if (pl.pad_rows > 0 && sizeof(T) == 4)
        return Kernel(K::tridiag_segments_kernel<T, I::dregs_rows, X, I::dregs_ahead, I::dregs_boundary,
                                                 I::dregs_threads, I::dregs_blocks, false, true, true>);
      return Kernel(K::tridiag_segments_kernel<T, I::dregs_rows, X, I::dregs_ahead, I::dregs_boundary,
                                               I::dregs_threads, I::dregs_blocks, false, true>);
    }
  }
  return Kernel(nullptr);
}

// A cluster of G blocks per group of systems, right-hand sides along y.
// Where the device cannot run clusters of G such blocks, the fallback
// (tridiag_segments_fallback, whose workspace the plan holds).
template <class T>
cudaError_t tridiag_launch_segments(tridiag_segments_plan const& pl, tridiag_device const& dev,
                                    void* workspace, tridiag_args<T> const& s, cudaStream_t stream) {
  int const S = pl.systems, G = pl.segments;
  auto const kernel = tridiag_segments_kernel_of<T>(pl);
  std::int64_t const blocks = (s.lay.count + S - 1) / S * G;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(std::min<std::int64_t>(blocks, INT_MAX)), 1);
  cfg.blockDim = dim3(unsigned(pl.threads));
  cfg.dynamicSmemBytes = pl.smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(G);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  // Clusters placed for load balance: tridiag_auto_f32_interleaved/n:4096.
  attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  bool fits = false;
  if (kernel)
    if (cudaError_t e = tridiag_cluster_fits(kernel, cfg, fits); e != cudaSuccess) return e;
  if (!fits || blocks > INT_MAX) {
    auto const fallback = tridiag_segments_fallback<T>(s.lay, dev);
    if (!fallback) return cudaErrorNotSupported;
    return tridiag_launch_form<T>(*fallback, dev, workspace, s, stream);
  }
  for (std::int64_t r0 = 0; r0 < s.nrhs; r0 += 65535) {  // right-hand sides along y
    std::int64_t const nr = std::min<std::int64_t>(s.nrhs - r0, 65535);
    cfg.gridDim.y = unsigned(nr);
    tridiag_args<T> part = s;
    part.d += r0 * s.rhs_stride;
    part.x += r0 * s.rhs_stride;
    part.nrhs = nr;
    if (r0 + nr != s.nrhs) part.info = nullptr;
    auto const p = tridiag_columns_params_of<T>(pl, pl.segments, pl.pad_rows, part, pl.chunks);
    if (cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p); e != cudaSuccess) return e;
  }
  return cudaGetLastError();
}

}  // namespace recur::detail
