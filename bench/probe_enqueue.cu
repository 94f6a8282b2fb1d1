// Where the host's enqueue time of the LTI filters goes (bench_linrec reports
// recur::device::sosfilt at about 50 us per call against 8-20 us for lfilter
// and DPCM). Times, on the host, the mean of many calls of each piece, the
// GPU kept busy by a long spin kernel so that no call waits for the queue:
//
//   build/bench/probe_enqueue
//
// sosfilt (4 sections), lfilter order 4 and DPCM decode order 2 in full
// (recur::device::*, 2^24 samples, one lane); dispatch_lti alone on the
// same systems; the temp-size query; cudaMemsetAsync alone; an empty kernel
// launched with parameters of 16 bytes and of sizeof(the sosfilt agent's
// params). And where a small tridiagonal solve's goes (512 x 512 f32, whose
// event-timed call in bench_linrec is within a few microseconds of an empty
// launch): tridiag_plan::run, device::tridiag_solve without the API's
// checks, cudaPointerGetAttributes and the occupancy query alone.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <recur/kernels/dispatch/dispatch_filters.cuh>
#include <recur/kernels/dispatch/dispatch_lfilter.cuh>
#include <recur/kernels/dispatch/dispatch_lti.cuh>
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>
#include <recur/tridiag.hpp>
#include "tune_util.cuh"

namespace k = recur::kernels;
using recur::layout;

template <int Bytes>
struct blob {
  unsigned char b[Bytes];
};
template <int Bytes>
__global__ void empty_kernel(__grid_constant__ blob<Bytes> const p) {
  if (p.b[0] == 1 && threadIdx.x == 12345) asm volatile("trap;");
}

template <class F>
double host_us(F&& f, int calls = 400) {
  tune_spin_kernel<><<<1, 1>>>(200000000ull);  // 200 ms of GPU time ahead of the calls
  f();                                         // first call (lazy loading) untimed
  auto const t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CK(cudaDeviceSynchronize());
  return 1e6 * s / calls;
}

int main() {
  std::size_t const n = std::size_t(1) << 24;
  float *x, *y;
  void* temp;
  std::size_t const temp_bytes = std::size_t(64) << 20;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&temp, temp_bytes));
  CK(cudaMemset(x, 0, n * 4));
  layout const lay = layout::contiguous(std::int64_t(n));

  std::vector<float> sos;
  for (int j = 0; j < 4; ++j) {
    double const r = 0.9 - 0.05 * j, t = 0.3 + 0.4 * j;
    for (float v : {0.2f, 0.3f, 0.1f, 1.0f, float(-2 * r * std::cos(t)), float(r * r)}) sos.push_back(v);
  }
  k::sos_system<float, 4> s4;
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < 3; ++c) s4.b[j][c] = sos[6 * j + c], s4.a[j][c] = sos[6 * j + 3 + c];
  std::vector<float> const b4 = {0.5f, 0.25f, 0.16f, 0.125f, 0.1f}, a4 = {1.0f, -0.6f, 0.3f, -0.1f, 0.02f};
  std::vector<float> const pred = {1.6f, -0.64f};

  auto row = [](char const* what, double us) { std::printf("%-58s %8.2f us\n", what, us); };
  row("sosfilt 4 sections, recur::device::sosfilt", host_us([&] {
        std::size_t b = temp_bytes;
        CK(recur::device::sosfilt<float>(temp, b, sos, x, y, lay, nullptr, nullptr, 0));
      }));
  row("sosfilt 4 sections, temp-size query", host_us([&] {
        std::size_t b = 0;
        CK(recur::device::sosfilt<float>(nullptr, b, sos, x, y, lay, nullptr, nullptr, 0));
      }));
  row("sosfilt 4 sections, kernels::dispatch_lti", host_us([&] {
        std::size_t b = temp_bytes;
        CK(k::dispatch_lti<float>(temp, b, s4, x, y, lay, nullptr, nullptr, 8, 0));
      }));
  row("lfilter order 4, recur::device::lfilter", host_us([&] {
        std::size_t b = temp_bytes;
        CK(recur::device::lfilter<float>(temp, b, b4, a4, x, y, lay, nullptr, nullptr, 0));
      }));
  row("DPCM decode order 2, recur::device::dpcm_decode", host_us([&] {
        std::size_t b = temp_bytes;
        CK(recur::device::dpcm_decode<float>(temp, b, pred, x, y, lay, nullptr, 0));
      }));
  row("cudaMemsetAsync 64 KB", host_us([&] { CK(cudaMemsetAsync(temp, 0xff, 65536, 0)); }));
  row("empty kernel, 16 B of parameters", host_us([&] {
        empty_kernel<16><<<4096, 128>>>(blob<16>{});
        CK(cudaGetLastError());
      }));
  using agent = k::agent_lti<float, k::sos_system<float, 4>, 128, 32, 128, 3, true, false, 1>;
  constexpr int pb = int(sizeof(typename agent::params));
  std::printf("sosfilt agent params: %d bytes\n", pb);
  row("empty kernel, the sosfilt agent's parameter size", host_us([&] {
        empty_kernel<pb><<<4096, 128>>>(blob<pb>{});
        CK(cudaGetLastError());
      }));
  {
    // The sosfilt agent's own kernel, launched directly (zero parameters:
    // the results are meaningless, the launch is what is timed), and the
    // memset of its status, each alone.
    std::int64_t const tiles = agent::tiles_per_seq(std::int64_t(n));
    std::size_t const sb = agent::status::bytes(tiles);
    std::printf("sosfilt: %lld tiles, %zu bytes of status\n", (long long)tiles, sb);
    typename agent::params p{};
    p.x = x;
    p.y = y;
    p.lay = lay;
    p.tiles_per_seq = tiles;
    auto const st = agent::status::carve(temp, tiles);
    row("cudaMemsetAsync of the sosfilt status", host_us([&] { CK(cudaMemsetAsync(temp, 0xff, sb, 0)); }));
    row("memset + the sosfilt agent kernel, its grid", host_us([&] {
          CK(cudaMemsetAsync(temp, 0xff, sb, 0));
          k::lti_tiles_kernel<agent><<<unsigned(tiles), agent::block_threads>>>(p, st);
          CK(cudaGetLastError());
        }));
    row("sosfilt agent kernel alone, one block", host_us([&] {
          CK(cudaMemsetAsync(temp, 0xff, sb, 0));
          k::lti_tiles_kernel<agent><<<1, agent::block_threads>>>(p, st);
          CK(cudaGetLastError());
        }));
  }
  row("empty kernel, 4 KB of parameters", host_us([&] {
        empty_kernel<4096><<<4096, 128>>>(blob<4096>{});
        CK(cudaGetLastError());
      }));
  {
    layout const tl = layout::contiguous(512, 512);
    std::size_t const e = std::size_t(tl.size());
    float* base;
    CK(cudaMalloc(&base, 5 * e * sizeof(float)));
    CK(cudaMemset(base, 0, 5 * e * sizeof(float)));
    float *a = base, *b = base + e, *c = base + 2 * e, *d = base + 3 * e, *xs = base + 4 * e;
    recur::tridiag_plan<float> const plan(tl);
    void* ws = plan.workspace_size() ? temp : nullptr;
    row("tridiag 512 x 512 f32, recur::tridiag_plan::run", host_us([&] {
          plan.run(recur::cuda{nullptr}, a, b, c, d, xs, ws);
        }));
    row("tridiag 512 x 512 f32, recur::device::tridiag_solve", host_us([&] {
          std::size_t bytes = temp_bytes;
          CK(recur::device::tridiag_solve<float>(temp, bytes, a, b, c, d, xs, tl, 1, tl.size(), nullptr,
                                                 recur::tridiag_algorithm::thomas_pcr, nullptr, {}));
        }));
    row("cudaPointerGetAttributes", host_us([&] {
          cudaPointerAttributes attr{};
          CK(cudaPointerGetAttributes(&attr, a));
        }));
    row("cudaOccupancyMaxActiveBlocksPerMultiprocessor", host_us([&] {
          int per_sm = 0;
          CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k::tridiag_direct_kernel<float, 16, 32, 128>,
                                                           128, 0));
        }));
    row("cudaGetDevice + cudaDeviceGetAttribute", host_us([&] {
          int dev = 0, sms = 0;
          CK(cudaGetDevice(&dev));
          CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        }));
    k::tridiag_direct_params<float> const dp{a, b, c, d, xs, nullptr, tl, 1, tl.size()};
    row("tridiag direct kernel launch alone (128 blocks)", host_us([&] {
          k::tridiag_direct_kernel<float, 16, 32, 128><<<128, 128>>>(dp);
          CK(cudaGetLastError());
        }));
    cudaFree(base);
  }
  return 0;
}
