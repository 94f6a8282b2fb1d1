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

// One warm-up launch, then `reps` timed ones; the median in milliseconds.
template <class F>
float median_ms(F&& launch, int reps = 30) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int r = 0; r < reps; ++r) {
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
