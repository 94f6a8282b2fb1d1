// The floor under bench_linrec's timing of one call (bench_common.cuh's
// time_calls: a spin kernel queued ahead of the start event, then the call,
// then the stop event): the same events around launches that do (almost)
// nothing, so that a small shape's time (512 x 512) can be split into this
// floor and the kernel's own work. Standalone (no recur): the target
// probe_floor, or nvcc -O2 -std=c++17 -arch=sm_90 bench/probe_floor.cu;
// no arguments; it prints the median of 201 timed launches of each kind.
// H100, 2026-11-24 (bench/results/h100-probe-floor.log): nothing between
// the events 1.25 us, an empty <<<128, 128>>> 3.36 us, a 4 MB + 4 MB copy
// kernel 4.35 us.
#include <algorithm>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

__global__ void empty(int* p) {
  if (p && threadIdx.x == 0 && blockIdx.x == 0x7fffffff) *p = 1;
}

// One 16-byte load and store per thread: a launch that touches memory once.
__global__ void touch(float4 const* in, float4* out, int n) {
  int const i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = in[i];
}

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

template <class Launch>
int time_it(char const* name, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, Launch launch) {
  std::vector<float> ms;
  for (int r = 0; r < 211; ++r) {
    spin<<<1, 1, 0, s>>>(30000);
    CHECK(cudaEventRecord(e0, s));
    launch();
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (r >= 10) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-40s median %.3f us  (min %.3f, max %.3f)\n", name, 1e3 * ms[ms.size() / 2], 1e3 * ms.front(),
              1e3 * ms.back());
  return 0;
}

int main() {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  int const n = 512 * 512;  // 512 x 512 f32 unknowns, as float4 groups of one array: 1 MB
  float4 *in, *out;
  CHECK(cudaMalloc(&in, n * sizeof(float4)));
  CHECK(cudaMalloc(&out, n * sizeof(float4)));
  CHECK(cudaMemset(in, 0, n * sizeof(float4)));
  time_it("nothing between the events", s, e0, e1, [] {});
  time_it("empty <<<1, 32>>>", s, e0, e1, [&] { empty<<<1, 32, 0, s>>>(nullptr); });
  time_it("empty <<<128, 128>>>", s, e0, e1, [&] { empty<<<128, 128, 0, s>>>(nullptr); });
  time_it("empty <<<1024, 256>>>", s, e0, e1, [&] { empty<<<1024, 256, 0, s>>>(nullptr); });
  time_it("touch 4 MB in, 4 MB out <<<1024, 256>>>", s, e0, e1, [&] { touch<<<1024, 256, 0, s>>>(in, out, n); });
  time_it("touch 1 MB in, 1 MB out <<<256, 256>>>", s, e0, e1, [&] { touch<<<256, 256, 0, s>>>(in, out, n / 4); });
  return 0;
}
