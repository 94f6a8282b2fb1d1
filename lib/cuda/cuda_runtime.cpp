// CUDA runtime glue for the host layer (built only with RECUR_ENABLE_CUDA).
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "../detail/cuda_support.hpp"
#include "cuda_check.hpp"

namespace recur {

bool cuda_compiled() noexcept { return true; }

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string cuda_device_description() {
  int n = 0;
  cudaError_t const e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fmt::format("no CUDA device ({})", cudaGetErrorString(e));
  }
  if (n == 0) return "no CUDA device";
  int dev = 0;
  detail::cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  detail::cuda_check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  return fmt::format("{}, {} SMs, sm_{}{}, {:.1f} GiB", prop.name, prop.multiProcessorCount, prop.major,
                     prop.minor, static_cast<double>(prop.totalGlobalMem) / (1ull << 30));
}

namespace detail {

cudaError_t temp_malloc_async(void** p, std::size_t bytes, cudaStream_t stream) {
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  // One pool per device, created on first use and kept for the process.
  static std::mutex m;
  static std::vector<cudaMemPool_t> pools;
  cudaMemPool_t pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(m);
    if (pools.size() <= static_cast<std::size_t>(dev))
      pools.resize(static_cast<std::size_t>(dev) + 1, nullptr);
    if (!pools[static_cast<std::size_t>(dev)]) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      cudaMemPool_t created = nullptr;
      if (cudaError_t e = cudaMemPoolCreate(&created, &props); e != cudaSuccess) return e;
      std::uint64_t keep = temp_pool_keep_bytes;
      if (cudaError_t e = cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep);
          e != cudaSuccess)
        return e;
      pools[static_cast<std::size_t>(dev)] = created;
    }
    pool = pools[static_cast<std::size_t>(dev)];
  }
  return cudaMallocFromPoolAsync(p, bytes, pool, stream);
}

void cuda_check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw cuda_error(
        fmt::format("recur: {} failed: {} ({})", what, cudaGetErrorString(e), static_cast<int>(e)),
        static_cast<int>(e));
  }
}

void check_device_pointer(char const* fn, void const* ptr, char const* name) {
  cudaPointerAttributes attr{};
  cudaError_t const e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw invalid_argument(
        fmt::format("{}: {} = {} is not a pointer CUDA knows ({})", fn, name, ptr, cudaGetErrorString(e)));
  }
  if (attr.type == cudaMemoryTypeUnregistered ||
      (attr.type == cudaMemoryTypeHost && attr.devicePointer == nullptr))
    throw invalid_argument(
        fmt::format("{}: {} = {} is host memory; recur::cuda needs device or managed memory", fn, name, ptr));
}

void check_host_pointer(char const* fn, void const* ptr, char const* name) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    // Older runtimes report memory they do not know (plain host memory) as
    // an error; without a device, the caller's device checks will say so.
    (void)cudaGetLastError();
    return;
  }
  if (attr.type == cudaMemoryTypeDevice)
    throw invalid_argument(
        fmt::format("{}: {} = {} is device memory; it is read on the host (host, pinned or managed memory)",
                    fn, name, ptr));
}

}  // namespace detail
}  // namespace recur
