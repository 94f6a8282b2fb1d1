#pragma once
// Launch helpers shared by the dispatches: the persistent launch (a grid of
// the blocks resident at once, each taking work items b, b + grid, ...) of
// linrec's rows and stripes agents, the LTI agent's whole sequences and the
// tridiagonal forms, and dynamic shared memory over the default 48 KB.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <cuda_runtime.h>

namespace recur::kernels {

// The current device's SM count in `sms`.
inline cudaError_t current_sm_count(int& sms) {
  int dev = 0;
  cudaError_t const e = cudaGetDevice(&dev);
  return e == cudaSuccess ? cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) : e;
}

// Dynamic shared memory over the default 48 KB: `kernel` allowed up to the
// device's opt-in limit (not this launch's size: a later launch of the same
// kernel with more would otherwise be rejected).
template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel kernel, std::size_t smem) {
  if (smem <= 48 * 1024) return cudaSuccess;
  int dev = 0, most = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
      e != cudaSuccess)
    return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most);
}

// Blocks of `kernel` resident on the current device at once (per SM, at
// least one, times the SMs): the grid of a persistent launch. Cached per
// kernel, device, threads and shared memory (the occupancy query costs
// about as much as the rest of a small solve's enqueue); the first query
// of a shape also allows its shared memory (allow_dynamic_smem).
template <class Kernel>
cudaError_t resident_blocks(Kernel kernel, int threads, std::size_t smem, std::int64_t& blocks) {
  struct entry {
    void const* kernel;
    int dev, threads;
    std::size_t smem;
    std::int64_t blocks;
  };
  static std::mutex m;
  static std::vector<entry> cache;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  void const* const key = reinterpret_cast<void const*>(kernel);
  {
    std::lock_guard<std::mutex> lock(m);
    for (entry const& c : cache)
      if (c.kernel == key && c.dev == dev && c.threads == threads && c.smem == smem) {
        blocks = c.blocks;
        return cudaSuccess;
      }
  }
  if (cudaError_t e = allow_dynamic_smem(kernel, smem); e != cudaSuccess) return e;
  int sms = 0, per_sm = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
      e != cudaSuccess)
    return e;
  blocks = std::int64_t(std::max(1, per_sm)) * sms;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, threads, smem, blocks});
  return cudaSuccess;
}

// A persistent launch of `kernel` over `items` work items of one block
// each: min(items, resident blocks) blocks of `threads` threads and `smem`
// bytes of dynamic shared memory.
template <class Kernel, class Params>
cudaError_t launch_persistent(Kernel kernel, Params const& p, std::int64_t items, int threads,
                              std::size_t smem, cudaStream_t stream) {
  std::int64_t resident = 0;
  if (cudaError_t e = resident_blocks(kernel, threads, smem, resident); e != cudaSuccess) return e;
  std::int64_t const blocks = std::min({items, resident, std::int64_t(1) << 30});
  if (blocks <= 0) return cudaSuccess;
  kernel<<<unsigned(blocks), threads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace recur::kernels
