#pragma once
// Launch helpers shared by the dispatches whose kernels are persistent (a
// grid of the blocks resident at once, each taking work items b, b + grid,
// ...): linrec's rows and stripes agents, the LTI agent's whole sequences.

#include <cstdint>

#include <cuda_runtime.h>

namespace recur::kernels {

// The current device's SM count in `sms`.
inline cudaError_t current_sm_count(int& sms) {
  int dev = 0;
  cudaError_t const e = cudaGetDevice(&dev);
  return e == cudaSuccess ? cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) : e;
}

// A persistent launch: as many blocks of `block` threads and `smem` bytes of
// dynamic shared memory as are resident at once on a device of `sms` SMs,
// at most `work` (the blocks take work items b, b + grid, ...).
template <class Kernel, class Params>
cudaError_t launch_persistent(Kernel kernel, int block, int smem, int sms, std::int64_t work,
                              cudaStream_t stream, Params const& prm) {
  cudaError_t e = cudaSuccess;
  if (smem > 48 * 1024) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int per_sm = 0;
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem);
  if (e != cudaSuccess) return e;
  std::int64_t const want = static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
  kernel<<<static_cast<unsigned>(work < want ? work : want), block, smem, stream>>>(prm);
  return cudaGetLastError();
}

}  // namespace recur::kernels
