// Tuning sweep of the device-wide generic scan (recur::device::scan): tile
// shape and look-back window per value size, against CUB on the same data,
// with the device-to-device copy measured in the same process. The source of
// kernels/dispatch/dispatch_scan.cuh's scan_policy figures.
//
//   build/bench/tune_scan          (one H100 run takes about 20 s)
//
// Each configuration is checked first (the last element against CUB's), then
// timed: 30 runs with CUDA events, the median reported. The data are
// cudaMalloc'd (aligned), so single sequences take the agent's 16-byte
// vector path where the shape allows it (Items x value size = 64 bytes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <recur/kernels/dispatch/dispatch_scan.cuh>
#include <recur/ops/affine.hpp>
#include <recur/ops/matrix.hpp>

#include "tune_util.cuh"

namespace {

double copy_gbs = 0;


template <int B, int I, int W, int M = 1, int D = 256>
struct policy {
  static constexpr int block = B, items = I, lookback_depth = D, lookback_words = W, min_blocks = M;
};

__global__ void fill(float* p, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x)
    p[i] = float((i * 2654435761ull) % 1000) * 0.002f - 1.0f;
}
__global__ void fill_affine(recur::ops::affine<float>* p, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x)
    p[i] = {float((i * 2654435761ull) % 1000) * 0.00198f - 0.99f, float((i * 40503ull) % 1000) * 0.002f - 1.0f};
}

using mat3 = recur::ops::matrix<float, 3>;
// Rotations about z by small varying angles: long products stay orthogonal.
__global__ void fill_rotation(mat3* p, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    float const t = 0.001f * float((i * 2654435761ull) % 13), c = cosf(t), s = sinf(t);
    p[i] = mat3{{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}};
  }
}

template <class V>
bool same(V const& a, V const& b, double tol) {
  if constexpr (std::is_same_v<V, float>)
    return std::fabs(a - b) <= tol * (1 + std::fabs(b));
  else if constexpr (std::is_same_v<V, mat3>) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        if (!(std::fabs(a.m[i][j] - b.m[i][j]) <= tol)) return false;
    return true;
  } else
    return std::fabs(a.a - b.a) <= tol && std::fabs(a.b - b.b) <= tol * (1 + std::fabs(b.b));
}

template <class V, class Op, class P>
void run(char const* what, V const* in, V* out, long long n, V const& want, float cub_ms, long long at = -1) {
  if (at < 0) at = n - 1;  // the element checked against CUB's
  std::size_t bytes = 0;
  recur::layout const lay = recur::layout::contiguous(n);
  CK((recur::kernels::dispatch_scan<V, Op, false, P>(nullptr, bytes, in, out, lay, Op{}, {}, 0)));
  void* temp;
  CK(cudaMalloc(&temp, bytes));
  auto launch = [&] {
    std::size_t b = bytes;
    CK((recur::kernels::dispatch_scan<V, Op, false, P>(temp, b, in, out, lay, Op{}, {}, 0)));
  };
  launch();
  CK(cudaDeviceSynchronize());
  V last;
  CK(cudaMemcpy(&last, out + at, sizeof(V), cudaMemcpyDeviceToHost));
  float const ms = median_ms(launch);
  double const gbs = 2.0 * sizeof(V) * n / ms / 1e6;
  std::printf("%-8s block %4d items %2d words %d minb %2d depth %3d  %.3f ms  %7.1f GB/s  %5.1f%% of copy  %.2fx CUB  %s\n",
              what, P::block, P::items, P::lookback_words, P::min_blocks, P::lookback_depth, ms, gbs,
              100 * gbs / copy_gbs, cub_ms / ms,
              same(last, want, 1e-3) ? "ok" : "WRONG");
  CK(cudaFree(temp));
}

}  // namespace

int main() {
  long long const n = 1ll << 28;
  float *a, *b;
  CK(cudaMalloc(&a, n * 4));
  CK(cudaMalloc(&b, n * 4));
  copy_gbs = 2.0 * n * 4 / median_ms([&] { CK(cudaMemcpyAsync(b, a, n * 4, cudaMemcpyDeviceToDevice)); }) / 1e6;
  std::printf("copy ceiling %.1f GB/s\n", copy_gbs);
  {
    fill<<<4096, 256>>>(a, n);
    std::size_t bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, a, b, n));
    void* temp;
    CK(cudaMalloc(&temp, bytes));
    float const cub_ms = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(temp, bytes, a, b, n)); });
    float want;
    CK(cudaMemcpy(&want, b + n - 1, 4, cudaMemcpyDeviceToHost));
    std::printf("sum f32 2^28: CUB InclusiveSum %.3f ms, %.1f%% of copy\n", cub_ms,
                100 * (8.0 * n / cub_ms / 1e6) / copy_gbs);
    CK(cudaFree(temp));
    using op = cuda::std::plus<>;
    run<float, op, policy<256, 16, 1>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<256, 32, 1>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 1>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 4>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 8, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<1024, 8, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<256, 32, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<256, 32, 4>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<256, 48, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<128, 32, 2>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 2, 4>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 2, 3>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<256, 16, 2, 8>>("sum f32", a, b, n, want, cub_ms);
    run<float, op, policy<512, 16, 1, 4>>("sum f32", a, b, n, want, cub_ms);
  }
  {
    using V = recur::ops::affine<float>;
    long long const m = n / 2;
    auto* in = reinterpret_cast<V*>(a);
    auto* out = reinterpret_cast<V*>(b);
    fill_affine<<<4096, 256>>>(in, m);
    std::size_t bytes = 0;
    using op = recur::ops::compose;
    CK(cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, op{}, m));
    void* temp;
    CK(cudaMalloc(&temp, bytes));
    float const cub_ms = median_ms([&] { CK(cub::DeviceScan::InclusiveScan(temp, bytes, in, out, op{}, m)); });
    V want;
    CK(cudaMemcpy(&want, out + m - 1, sizeof(V), cudaMemcpyDeviceToHost));
    std::printf("affine f32 2^27: CUB InclusiveScan %.3f ms\n", cub_ms);
    CK(cudaFree(temp));
    run<V, op, policy<256, 8, 1>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<256, 16, 1>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<256, 16, 2>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<512, 8, 2>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<512, 8, 2, 2>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<512, 8, 2, 3>>("affine", in, out, m, want, cub_ms);
    run<V, op, policy<256, 8, 2, 6>>("affine", in, out, m, want, cub_ms);
  }
  {
    // 3x3 f32 matrix products, 2^24 (bench_linrec's scan_matrix3_f32);
    // checked at element 100003 (a product of 2^24 rotations in f32 has lost
    // its angle to rounding, in CUB's order as in ours).
    using V = mat3;
    long long const m = 1ll << 24, at = 100003;
    auto* in = reinterpret_cast<V*>(a);
    auto* out = reinterpret_cast<V*>(b);
    fill_rotation<<<4096, 256>>>(in, m);
    std::size_t bytes = 0;
    using op = recur::ops::matrix_product;
    CK(cub::DeviceScan::InclusiveScan(nullptr, bytes, in, out, op{}, m));
    void* temp;
    CK(cudaMalloc(&temp, bytes));
    float const cub_ms = median_ms([&] { CK(cub::DeviceScan::InclusiveScan(temp, bytes, in, out, op{}, m)); });
    V want;
    CK(cudaMemcpy(&want, out + at, sizeof(V), cudaMemcpyDeviceToHost));
    std::printf("matrix3 f32 2^24: CUB InclusiveScan %.3f ms\n", cub_ms);
    CK(cudaFree(temp));
    run<V, op, policy<512, 2, 2, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 4, 2, 1>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 4, 2, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<128, 4, 2, 3>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<128, 4, 2, 4>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<512, 4, 2, 1>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<128, 8, 2, 1>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<128, 8, 2, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 8, 2, 1>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 8, 2, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 8, 1, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<512, 4, 2, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 8, 1, 2, 128>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 8, 1, 2, 64>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<192, 8, 1, 3>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<128, 16, 1, 2>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<64, 8, 2, 4>>("matrix3", in, out, m, want, cub_ms, at);
    run<V, op, policy<256, 4, 1, 1>>("matrix3", in, out, m, want, cub_ms, at);
  }
  return 0;
}
