#pragma once
// What the tuning programs (tune_linrec_tiles, tune_scan) share: a CUDA
// error check that exits, and the median of timed runs with CUDA events.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// Spins for `ns` nanoseconds (tune_spin_ns, also for kernels that stand
// in for work by waiting); the kernel is queued ahead of the start event so that the
// host's enqueue of the timed call (argument preparation, launches) is not
// counted, as bench_common.cuh does.
__device__ inline void tune_spin_ns(unsigned long long ns) {
  if (ns == 0) return;
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
template <class = void>
__global__ void tune_spin_kernel(unsigned long long ns) {
  tune_spin_ns(ns);
}

// Cold inputs (tune_cold_enable): before each timed launch, untimed, a
// kernel reads a buffer twice the size of L2, so the launch reads its
// inputs from DRAM as bench_linrec's do (which rotates sets or evicts).
inline char const* tune_cold_buf = nullptr;
inline std::size_t tune_cold_bytes = 0;
template <class = void>
__global__ void tune_cold_kernel(int4 const* p, std::size_t n, int* sink) {
  int4 acc{0, 0, 0, 0};
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    int4 const v = p[i];
    acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) *sink = 1;  // (keeps the loads)
}
inline void tune_cold_enable() {
  int dev = 0, l2 = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  tune_cold_bytes = 2 * std::size_t(l2);
  char* b = nullptr;
  CK(cudaMalloc(&b, tune_cold_bytes + 16));
  CK(cudaMemset(b, 1, tune_cold_bytes + 16));
  tune_cold_buf = b;
}
inline void tune_cold_evict() {
  if (!tune_cold_buf) return;
  tune_cold_kernel<><<<1024, 256>>>(reinterpret_cast<int4 const*>(tune_cold_buf), tune_cold_bytes / 16,
                                    reinterpret_cast<int*>(const_cast<char*>(tune_cold_buf) + tune_cold_bytes));
}

// One warm-up launch, then `reps` timed ones (each behind a 50 us spin on
// the default stream, and with tune_cold_enable an eviction of L2 before
// that); the median in milliseconds.
template <class F>
float median_ms(F&& launch, int reps = 30) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
    tune_cold_evict();
    tune_spin_kernel<><<<1, 1>>>(50000);
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float x;
    CK(cudaEventElapsedTime(&x, a, b));
    ts.push_back(x);
  }
  std::sort(ts.begin(), ts.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ts[ts.size() / 2];
}

// The copy ceiling: a device-to-device cudaMemcpy of 1 GiB, bytes read plus
// written, GB/s (median of 20), printed as "copy ceiling: ... GB/s".
inline double tune_copy_ceiling_gbs() {
  std::size_t const bytes = std::size_t(1) << 30;
  char *s, *d;
  CK(cudaMalloc(&s, bytes));
  CK(cudaMalloc(&d, bytes));
  CK(cudaMemset(s, 1, bytes));
  float const ms = median_ms([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); }, 20);
  double const gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
  std::printf("copy ceiling: %.1f GB/s\n", gbs);
  CK(cudaFree(s));
  CK(cudaFree(d));
  return gbs;
}
