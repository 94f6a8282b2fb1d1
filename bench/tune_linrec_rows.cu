// Candidate policies of the rows agent (agent_linrec_rows.cuh: one block per
// whole sequence, no look-back) and of the stripes agent
// (agent_linrec_stripes.cuh: one block per stripe of adjacent interleaved
// sequences, no look-back), the source of linrec_policy's rows_* and
// stripes_* values in kernels/tuning/tuning_linrec.cuh.
//
//   build/bench/tune_linrec_rows [bf16]     (bf16: the bfloat16 shapes only)
//
// Interleaved shapes: 4096 x 2^16 and 12288 x 2^16 f32, 2048 x 2^17 f32 (a
// batch narrower than a stripe per SM), 4096 x 2^16 f64, against the lanes
// agent (one lane per thread, look-back between chunks) with the library's
// policy. "in flight" for stripes: one chunk of s and t per block (the next
// chunk's loads), times the resident blocks per SM.
//
// Shapes: 4096 x 2^16 and 12288 x 2^16 contiguous f32 and bf16 (accelerated-scan's
// (1, 4096, 2^16) and (8, 1536, 2^16)), 4096 x 2^16 f64; s ~ U[-0.99, 0.99],
// t ~ U[-1, 1]. Each candidate is a compile-time instantiation (block,
// items, stages, blocks per SM) on a persistent grid of SMs x resident
// blocks; "lookback" is the tiles agent with the library's policy, the form
// these batches ran before. Correctness first: four whole sequences against
// a sequential double-precision reference; then 30 timed runs with CUDA
// events, median reported, against the copy ceiling measured in the same
// process. "in flight" is the design figure: (stages - 1) tiles of s and t
// per block, times the resident blocks per SM.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include <recur/kernels/agent/agent_linrec_lanes.cuh>
#include <recur/kernels/agent/agent_linrec_rows.cuh>
#include <recur/kernels/agent/agent_linrec_stripes.cuh>
#include <recur/kernels/agent/agent_linrec_tiles.cuh>
#include <recur/kernels/tuning/tuning_linrec.cuh>

#include "tune_util.cuh"

using namespace recur;
using namespace recur::kernels;

namespace {

double copy_gbs = 0;

__host__ __device__ inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__host__ __device__ inline double unit(std::uint64_t h) { return double(h >> 11) * 0x1.0p-53 * 2 - 1; }

template <class T>
__global__ void fill_kernel(T* s, T* t, std::int64_t total) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    s[i] = T(0.99 * unit(mix(2 * i)));
    t[i] = T(unit(mix(2 * i + 1)));
  }
}

template <class T>
struct batch {
  detail::linrec_problem<T> p;
  std::vector<std::int64_t> checked;  // sequences compared with the reference
  std::vector<std::vector<double>> ref;
};

// Sequence k of a batch to or from the host: contiguous, or every count-th
// element (interleaved).
template <class T>
void copy_sequence(T* dst, T const* src, std::int64_t k, std::int64_t n, std::int64_t count, bool interleaved,
                   cudaMemcpyKind kind) {
  if (interleaved)
    CK(cudaMemcpy2D(dst, sizeof(T), src + k, count * sizeof(T), sizeof(T), n, kind));
  else
    CK(cudaMemcpy(dst, src + k * n, n * sizeof(T), kind));
}

template <class T>
batch<T> make(std::int64_t count, std::int64_t n, bool interleaved = false) {
  batch<T> b;
  std::int64_t const total = count * n;
  T *s, *t, *w;
  CK(cudaMalloc(&s, total * sizeof(T)));
  CK(cudaMalloc(&t, total * sizeof(T)));
  CK(cudaMalloc(&w, total * sizeof(T)));
  fill_kernel<T><<<1024, 256>>>(s, t, total);
  CK(cudaDeviceSynchronize());
  b.p.s = s;
  b.p.t = t;
  b.p.w = w;
  b.p.lay = interleaved ? layout::interleaved(n, count) : layout::contiguous(n, count);
  b.checked = {0, 1, count / 2, count - 1};
  std::vector<T> hs(n), ht(n);
  for (std::int64_t k : b.checked) {
    copy_sequence(hs.data(), s, k, n, count, interleaved, cudaMemcpyDeviceToHost);
    copy_sequence(ht.data(), t, k, n, count, interleaved, cudaMemcpyDeviceToHost);
    std::vector<double> r(n);
    double x = 0;
    for (std::int64_t i = 0; i < n; ++i) r[i] = x = double(hs[i]) * x + double(ht[i]);
    b.ref.push_back(std::move(r));
  }
  return b;
}

template <class T>
void release(batch<T>& b) {
  CK(cudaFree(const_cast<T*>(b.p.s)));
  CK(cudaFree(const_cast<T*>(b.p.t)));
  CK(cudaFree(b.p.w));
}

// One run (w poisoned first), the largest error over the checked sequences,
// then the median time of `launch`; prints one line.
template <class T, class Launch>
void check_time_print(batch<T> const& b, char const* what, Launch const& launch) {
  std::int64_t const n = b.p.lay.n, total = n * b.p.lay.count;
  CK(cudaMemset(b.p.w, 0xff, total * sizeof(T)));
  launch();
  CK(cudaDeviceSynchronize());
  double err = 0;
  std::vector<T> w(n);
  for (std::size_t c = 0; c < b.checked.size(); ++c) {
    copy_sequence(w.data(), b.p.w, b.checked[c], n, b.p.lay.count, b.p.lay.batch_stride == 1,
                  cudaMemcpyDeviceToHost);
    for (std::int64_t i = 0; i < n; ++i) {
      double const e = std::fabs(double(w[i]) - b.ref[c][i]);
      err = e == e ? std::max(err, e) : INFINITY;
    }
  }
  float const ms = median_ms(launch);
  double const gbs = 3.0 * sizeof(T) * total / ms / 1e6;
  std::printf("%s %6lld x %6lld  %-52s %.3f ms  %7.1f GB/s  %5.1f%% of copy  err %.2e\n",
              sizeof(T) == 2   ? "bf16"
              : sizeof(T) == 4 ? "f32"
                               : "f64",
              static_cast<long long>(b.p.lay.count), static_cast<long long>(n), what, ms, gbs,
              100 * gbs / copy_gbs, err);
}

template <class T, int Block, int Items, int Stages, int MinBlocks>
void rows(batch<T> const& b) {
  using agent = agent_linrec_rows<T, Block, Items, Stages, MinBlocks>;
  int const smem = sizeof(typename agent::temp_storage);
  auto const kernel = linrec_rows_kernel<agent>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Block, smem));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned const grid =
      static_cast<unsigned>(std::min<std::int64_t>(b.p.lay.count, std::int64_t{sms} * per_sm));
  char what[128];
  std::snprintf(what, sizeof what, "rows %4d x %2d stages %d min %d (%d/SM, %3d KB in flight)", Block, Items,
                Stages, MinBlocks, per_sm,
                (Stages - 1) * 2 * agent::tile_items * int(sizeof(T)) * per_sm / 1024);
  check_time_print(b, what, [&] { kernel<<<grid, Block, smem>>>(linrec_params<T>{b.p}); });
}

// The tiles agent with the library's policy: look-back across each sequence.
template <class T>
void lookback(batch<T> const& b) {
  using policy = linrec_policy<T>;
  using agent =
      agent_linrec_tiles<T, policy::block, policy::items, policy::lookback_depth, policy::min_blocks>;
  using status = typename agent::status;  // float's for 16-bit storage
  std::int64_t const tiles = agent::tiles(b.p.lay.n * b.p.lay.count);
  int const smem = sizeof(typename agent::temp_storage);
  auto const kernel = linrec_tiles_kernel<agent>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  void* temp;
  CK(cudaMalloc(&temp, status::bytes(tiles)));
  check_time_print(b, "lookback (tiles agent, library policy)", [&] {
    CK(cudaMemsetAsync(temp, status::fill, status::bytes(tiles)));
    kernel<<<static_cast<unsigned>(tiles), policy::block, smem>>>(linrec_params<T>{b.p},
                                                                  status::carve(temp, tiles));
  });
  CK(cudaFree(temp));
}

template <class T, int Block, int Lanes, int Rows, int MinBlocks>
void stripes(batch<T> const& b) {
  using agent = agent_linrec_stripes<T, Block, Lanes, Rows, MinBlocks>;
  auto const kernel = linrec_stripes_kernel<agent>;
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Block, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::int64_t const n_stripes = agent::stripes(b.p.lay.count);
  unsigned const grid = static_cast<unsigned>(std::min<std::int64_t>(n_stripes, std::int64_t{sms} * per_sm));
  char what[128];
  std::snprintf(what, sizeof what, "stripes %4d x %2d lanes x %2d rows min %d (%d/SM, %3d KB in flight)",
                Block, Lanes, Rows, MinBlocks, per_sm, Block * Rows * 2 * int(sizeof(T)) * per_sm / 1024);
  check_time_print(b, what, [&] { kernel<<<grid, Block>>>(linrec_params<T>{b.p}); });
}

// The lanes agent with the library's policy: look-back between chunks.
template <class T>
void lanes(batch<T> const& b) {
  using policy = linrec_policy<T>;
  using agent = agent_linrec_lanes<T, policy::lanes_block, policy::lanes_rows, policy::lanes_lookback_depth>;
  using status = linrec_tile_status<T>;
  std::int64_t const tiles = agent::tiles(b.p.lay.n, b.p.lay.count);
  std::int64_t const slots = agent::slots(b.p.lay.n, b.p.lay.count);
  void* temp;
  CK(cudaMalloc(&temp, status::bytes(slots)));
  check_time_print(b, "lanes (look-back, library policy)", [&] {
    CK(cudaMemsetAsync(temp, status::fill, status::bytes(slots)));
    linrec_lanes_kernel<agent><<<static_cast<unsigned>(tiles), policy::lanes_block>>>(
        linrec_params<T>{b.p}, status::carve(temp, slots));
  });
  CK(cudaFree(temp));
}

// Interleaved: the lanes agent, the library's stripes policy (where it has one), the candidates.
template <class T>
void sweep_interleaved(std::int64_t count, std::int64_t n) {
  using policy = linrec_policy<T>;
  auto b = make<T>(count, n, true);
  lanes(b);
  if constexpr (linrec_has_stripes<policy>)
    stripes<T, policy::stripes_block, policy::stripes_lanes, policy::stripes_rows,
            policy::stripes_min_blocks>(b);
  if constexpr (sizeof(T) == 4) {
    stripes<T, 256, 16, 16, 2>(b);
    stripes<T, 512, 32, 16, 1>(b);
    stripes<T, 256, 32, 32, 1>(b);
    stripes<T, 256, 32, 16, 2>(b);
    stripes<T, 1024, 32, 8, 1>(b);
    stripes<T, 512, 32, 8, 2>(b);
  } else {
    stripes<T, 256, 16, 8, 2>(b);
    stripes<T, 256, 16, 16, 1>(b);
    stripes<T, 512, 16, 8, 1>(b);
    stripes<T, 256, 32, 8, 1>(b);
    stripes<T, 512, 16, 16, 1>(b);
  }
  release(b);
}

// bfloat16 storage (float arithmetic): the library's rows policy, float's
// shape, then candidates with more bytes of each array in flight per SM.
void sweep_bf16(std::int64_t count, std::int64_t n) {
  using T = bfloat16;
  using policy = linrec_policy<T>;
  using f32 = linrec_policy<float>;
  auto b = make<T>(count, n);
  lookback(b);
  rows<T, policy::rows_block, policy::rows_items, policy::rows_stages, policy::rows_min_blocks>(b);
  rows<T, f32::rows_block, f32::rows_items, f32::rows_stages, f32::rows_min_blocks>(b);
  rows<T, 256, 32, 2, 3>(b);
  rows<T, 256, 32, 2, 1>(b);
  rows<T, 256, 16, 4, 3>(b);
  rows<T, 256, 16, 3, 3>(b);
  rows<T, 256, 16, 3, 2>(b);
  rows<T, 512, 16, 2, 2>(b);
  rows<T, 128, 32, 3, 3>(b);
  release(b);
}

// The library's rows policy first, then the candidates.
template <class T>
void sweep(std::int64_t count, std::int64_t n) {
  using policy = linrec_policy<T>;
  auto b = make<T>(count, n);
  lookback(b);
  rows<T, policy::rows_block, policy::rows_items, policy::rows_stages, policy::rows_min_blocks>(b);
  constexpr int k = sizeof(T) == 4 ? 1 : 2;  // items for the same bytes per tile
  rows<T, 256, 16 / k, 2, 3>(b);
  rows<T, 256, 8 / k, 3, 3>(b);
  rows<T, 128, 8 / k, 6, 4>(b);
  rows<T, 512, 8 / k, 3, 2>(b);
  rows<T, 256, 4 / k, 8, 3>(b);
  release(b);
}

}  // namespace

int main(int argc, char** argv) {
  copy_gbs = tune_copy_ceiling_gbs();
  std::int64_t const n = std::int64_t{1} << 16;
  if (argc > 1 && std::string_view(argv[1]) == "bf16") {  // the bfloat16 shapes only
    sweep_bf16(4096, n);
    sweep_bf16(8 * 1536, n);
    return 0;
  }
  sweep<float>(4096, n);
  sweep<float>(8 * 1536, n);
  sweep<double>(4096, n);
  sweep_bf16(4096, n);
  sweep_bf16(8 * 1536, n);
  sweep_interleaved<float>(4096, n);
  sweep_interleaved<float>(8 * 1536, n);
  sweep_interleaved<float>(2048, 2 * n);
  sweep_interleaved<double>(4096, n);
  return 0;
}
