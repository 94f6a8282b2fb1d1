// Tuning sweep and per-phase (differential) timing of the single-pass tiles
// and pipelined agents, the source of kernels/tuning/tuning_linrec.cuh.
//
//   build/bench/tune_linrec_tiles          (one H100 run takes about 30 s)
//
// Each configuration is a compile-time instantiation of agent_linrec_tiles
// (block, items, look-back depth, blocks per SM, phases). Correctness first:
// the last 2^20 values of every full run are compared with a sequential
// double-precision reference; then 30 timed runs with CUDA events, median
// reported, with the device-to-device copy measured in the same process.
// Partial-phase runs give wrong results by design (tail err is large).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include <recur/kernels/dispatch/dispatch_linrec.cuh>

#include "tune_util.cuh"

using namespace recur;
using namespace recur::kernels;

namespace {

double copy_gbs = 0;

template <class T>
struct data {
  detail::linrec_problem<T> p;
  std::vector<T> tail_ref;  // last 2^20 values, sequential, in double
  char const* name;         // "fading": s ~ U[-0.99, 0.99], a tile's map is constant (a underflows to 0);
                            // "long": s ~ U[0.9999, 1], a tile's map keeps a > 0, the walk needs history
};

template <class T>
data<T> make(std::int64_t n, bool long_memory) {
  data<T> d;
  d.name = long_memory ? "long" : "fading";
  T *s, *t, *w;
  CK(cudaMalloc(&s, n * sizeof(T)));
  CK(cudaMalloc(&t, n * sizeof(T)));
  CK(cudaMalloc(&w, n * sizeof(T)));
  std::vector<T> hs(n), ht(n);
  std::mt19937 g(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::int64_t i = 0; i < n; ++i) {
    hs[i] = long_memory ? T(1 - 0.0001 * (0.5 + 0.5 * u(g))) : T(0.99 * u(g));
    ht[i] = T(u(g));
  }
  CK(cudaMemcpy(s, hs.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(t, ht.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  std::int64_t const tail = std::int64_t{1} << 20;
  d.tail_ref.resize(tail);
  double x = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    x = double(hs[i]) * x + ht[i];
    if (i >= n - tail) d.tail_ref[i - (n - tail)] = T(x);
  }
  d.p.s = s;
  d.p.t = t;
  d.p.w = w;
  d.p.lay = layout::contiguous(n, 1);
  return d;
}

template <class T>
void release(data<T>& d) {
  CK(cudaFree(const_cast<T*>(d.p.s)));
  CK(cudaFree(const_cast<T*>(d.p.t)));
  CK(cudaFree(d.p.w));
}

// One run, the largest error of the last 2^20 values against the
// reference, then the median time of `launch`.
template <class T, class Launch>
std::pair<double, float> check_and_time(data<T> const& d, Launch const& launch) {
  launch();
  CK(cudaDeviceSynchronize());
  std::int64_t const total = d.p.lay.n * d.p.lay.count, tail = d.tail_ref.size();
  std::vector<T> w(tail);
  CK(cudaMemcpy(w.data(), d.p.w + total - tail, tail * sizeof(T), cudaMemcpyDeviceToHost));
  double err = 0;
  for (std::int64_t i = 0; i < tail; ++i) err = std::max(err, double(std::fabs(w[i] - d.tail_ref[i])));
  return {err, median_ms(launch)};
}

template <class T, int Block, int Items, int Depth, int MinBlocks, int Words = 1,
          linrec_phases Phases = linrec_phases::all>
void run(data<T> const& d) {
  using agent = agent_linrec_tiles<T, Block, Items, Depth, MinBlocks, Words, Phases>;
  using status = linrec_tile_status<T>;
  std::int64_t const total = d.p.lay.n * d.p.lay.count, tiles = agent::tiles(total);
  int const smem = sizeof(typename agent::temp_storage);
  auto const kernel = linrec_tiles_kernel<agent>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Block, smem));
  void* temp;
  CK(cudaMalloc(&temp, status::bytes(tiles)));
  auto const launch = [&] {
    CK(cudaMemsetAsync(temp, status::fill, status::bytes(tiles)));
    kernel<<<static_cast<unsigned>(tiles), Block, smem>>>(linrec_params<T>{d.p}, status::carve(temp, tiles));
  };
  auto const [err, ms] = check_and_time(d, launch);
  double const gbs = 3.0 * sizeof(T) * total / ms / 1e6;
  static char const* const phase_names[] = {"load+store", "+precompute", "+propagate", "all"};
  std::printf(
      "%s block %4d items %2d depth %4d min_blocks %d (%d/SM) words %d %-6s %-11s  %.3f ms  %7.1f GB/s  "
      "%5.1f%% of copy  "
      "tail err %.2e\n",
      sizeof(T) == 4 ? "f32" : "f64", Block, Items, Depth, MinBlocks, per_sm, Words, d.name,
      phase_names[static_cast<int>(Phases)], ms, gbs, 100 * gbs / copy_gbs, err);
  CK(cudaFree(temp));
}

// The persistent, pipelined agent (agent_linrec_pipe.cuh): grid = SMs x
// MinBlocks, tiles taken from the counter.
template <class T, int Block, int Items, int Stages, int MinBlocks, int Depth = 256, int Words = 1>
void run_pipe(data<T> const& d) {
  using agent = agent_linrec_pipe<T, Block, Items, Stages, Depth, MinBlocks, Words>;
  using status = linrec_tile_status<T>;
  std::int64_t const total = d.p.lay.n * d.p.lay.count, tiles = agent::tiles(total);
  int const smem = sizeof(typename agent::temp_storage);
  auto const kernel = linrec_pipe_kernel<agent>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Block, smem));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, std::int64_t{sms} * per_sm));
  void* temp;
  CK(cudaMalloc(&temp, status::bytes(tiles)));
  auto const launch = [&] {
    CK(cudaMemsetAsync(temp, status::fill, status::bytes(tiles)));
    kernel<<<grid, Block, smem>>>(linrec_params<T>{d.p}, status::carve(temp, tiles));
  };
  auto const [err, ms] = check_and_time(d, launch);
  double const gbs = 3.0 * sizeof(T) * total / ms / 1e6;
  std::printf(
      "%s PIPE block %4d items %2d stages %d min_blocks %d depth %4d words %d (%d/SM, smem %d) %-6s  %.3f ms "
      " %7.1f GB/s  %5.1f%% of copy  "
      "tail err %.2e\n",
      sizeof(T) == 4 ? "f32" : "f64", Block, Items, Stages, MinBlocks, Depth, Words, per_sm, smem, d.name, ms,
      gbs, 100 * gbs / copy_gbs, err);
  CK(cudaFree(temp));
}

}  // namespace

int main() {
  {
    std::size_t const n = std::size_t{1} << 28;
    float *a, *b;
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&b, n * 4));
    float const ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, n * 4, cudaMemcpyDeviceToDevice)); });
    copy_gbs = 2.0 * n * 4 / ms / 1e6;
    std::printf("copy ceiling %.1f GB/s\n", copy_gbs);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  using P = linrec_phases;
  for (bool long_memory : {false, true}) {
    auto d = make<float>(std::int64_t{1} << 28, long_memory);
    run_pipe<float, 256, 16, 2, 3>(d);
    run_pipe<float, 256, 16, 2, 3, 256, 2>(d);
    run_pipe<float, 256, 16, 2, 3, 512, 4>(d);
    run_pipe<float, 256, 16, 2, 2, 512, 4>(d);
    run_pipe<float, 128, 16, 2, 5, 512, 4>(d);
    run<float, 256, 16, 256, 4, 1, P::load_store>(d);
    run<float, 256, 16, 256, 4, 1, P::precompute>(d);
    run<float, 256, 16, 256, 4, 1, P::propagate>(d);
    run<float, 256, 16, 256, 4, 1>(d);
    run<float, 256, 16, 256, 4, 2>(d);
    run<float, 512, 16, 256, 2, 1>(d);
    run<float, 256, 16, 256, 3, 1>(d);
    run<float, 256, 12, 256, 5, 1>(d);
    run<float, 128, 16, 256, 8, 1>(d);
    run<float, 256, 8, 256, 8, 1>(d);
    run_pipe<float, 256, 16, 3, 2>(d);
    run_pipe<float, 256, 32, 2, 2>(d);
    run_pipe<float, 128, 16, 3, 4>(d);
    release(d);
  }
  for (bool long_memory : {false, true}) {
    auto d = make<double>(std::int64_t{1} << 27, long_memory);
    run_pipe<double, 256, 8, 2, 3>(d);
    run_pipe<double, 256, 8, 2, 3, 256, 2>(d);
    run_pipe<double, 256, 8, 2, 3, 512, 4>(d);
    run<double, 256, 8, 256, 4, 1>(d);
    run<double, 256, 8, 256, 3, 1>(d);
    run<double, 512, 8, 256, 2, 1>(d);
    run<double, 128, 16, 256, 4, 1>(d);
    run<double, 256, 8, 256, 5, 1>(d);
    run<double, 128, 8, 256, 8, 1>(d);
    run_pipe<double, 256, 8, 3, 2>(d);
    run_pipe<double, 256, 16, 2, 2>(d);
    release(d);
  }
  return 0;
}
