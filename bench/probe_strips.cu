// The interleaved tridiagonal layout's access pattern alone, without a
// solve: what bandwidth four arrays read and one written in column strips
// can reach on this GPU, by strip width and loads in flight. The columns
// kernel (kernels/agent/agent_tridiag_columns.cuh) reads a strip of 32
// (f32) adjacent systems, 128 bytes per row, down all n rows; its copy
// alone ran at 70-80% of copy (doc/performance.md). This asks whether that
// is the pattern (DRAM locality of 128-byte pieces 4 MB apart) or the bytes
// a kernel keeps in flight.
//
// Kernel: a block of S systems x C chunks (thread (s, c): system s, rows
// c n / C .. (c + 1) n / C - 1), each thread keeping L rows of a, b, c, d in
// flight in registers and writing x = a b + c d per row. Bytes: 5 words per
// row per system. f32, n x batch = 2^25 (671 MB moved). Median of 20 runs
// (CUDA events), against cudaMemcpy device to device in the same run.
//
//   build-gpu/bench/probe_strips
#include <cstdio>

#include "tune_util.cuh"

template <int S, int L>
__global__ void __launch_bounds__(256) strips_kernel(float const* __restrict__ a, float const* __restrict__ b,
                                                     float const* __restrict__ c, float const* __restrict__ d,
                                                     float* __restrict__ x, int n, long long batch, int chunks) {
  int const s = int(threadIdx.x) % S, ch = int(threadIdx.x) / S;
  long long const sys = (long long)blockIdx.x * S + s;
  int const per = n / chunks, r0 = ch * per;
  float ra[L], rb[L], rc[L], rd[L];
#pragma unroll
  for (int u = 0; u < L; ++u) {
    long long const o = (long long)(r0 + u) * batch + sys;
    ra[u] = a[o], rb[u] = b[o], rc[u] = c[o], rd[u] = d[o];
  }
  for (int i = 0; i < per; i += L) {
#pragma unroll
    for (int u = 0; u < L; ++u) {
      long long const o = (long long)(r0 + i + u) * batch + sys;
      x[o] = ra[u] * rb[u] + rc[u] * rd[u];
      if (i + u + L < per) {
        long long const q = o + (long long)L * batch;
        ra[u] = a[q], rb[u] = b[q], rc[u] = c[q], rd[u] = d[q];
      }
    }
  }
}

template <int S, int L>
void run(float* const* p, int n, long long batch, double copy_gbs) {
  constexpr int threads = 256, C = threads / S;
  if (n % (C * L) != 0) return;
  unsigned const blocks = unsigned(batch / S);
  auto launch = [&] { strips_kernel<S, L><<<blocks, threads>>>(p[0], p[1], p[2], p[3], p[4], n, batch, C); };
  float const ms = median_ms(launch, 20);
  CK(cudaGetLastError());
  double const gbs = 5.0 * 4 * double(n) * double(batch) / (ms * 1e6);
  std::printf("n %5d  strip %4d B  rows in flight %d  chunks %3d  %7.3f ms  %7.1f GB/s  %5.1f%% of copy\n", n, S * 4,
              L, C, ms, gbs, 100 * gbs / copy_gbs);
}

template <int S>
void widths(float* const* p, int n, long long batch, double copy_gbs) {
  run<S, 1>(p, n, batch, copy_gbs);
  run<S, 2>(p, n, batch, copy_gbs);
  run<S, 4>(p, n, batch, copy_gbs);
  run<S, 8>(p, n, batch, copy_gbs);
}

int main() {
  long long const total = 1ll << 25;
  float* p[5];
  for (auto& q : p) {
    CK(cudaMalloc(&q, total * 4));
    CK(cudaMemset(q, 0, total * 4));
  }
  double const copy_gbs = tune_copy_ceiling_gbs();
  for (int n : {64, 512, 4096}) {
    long long const batch = total / n;
    widths<8>(p, n, batch, copy_gbs);
    widths<32>(p, n, batch, copy_gbs);
    widths<64>(p, n, batch, copy_gbs);
    widths<128>(p, n, batch, copy_gbs);
    widths<256>(p, n, batch, copy_gbs);
  }
  return 0;
}
