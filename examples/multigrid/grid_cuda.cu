// The grid operations of grid.hpp on a CUDA device: one plain grid-stride
// kernel each, queued on the space's stream. The arithmetic is that of
// grid_host.cpp, point by point.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime_api.h>

#include <recur/error.hpp>

#include "common/space.hpp"
#include "multigrid/grid.hpp"

namespace recur_examples {

namespace {

constexpr int block_threads = 256;

// Points a thread takes at once: their loads in flight together (a float
// grid's one load of 4 bytes a thread is too few bytes in flight to keep
// the memory busy).
constexpr int per_thread = 4;

// Enough blocks for n threads of per_thread elements, at most 2^16 (a
// grid-stride loop covers the rest).
unsigned blocks_for(std::int64_t n) {
  std::int64_t const threads = (n + per_thread - 1) / per_thread;
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((threads + block_threads - 1) / block_threads, 1, 1 << 16));
}

// The blocks of a kernel over the points of an mx x my grid (for_points):
// x across a row, y along the rows, at most max_blocks in all.
dim3 blocks_2d(std::int64_t mx, std::int64_t my, std::int64_t max_blocks = std::int64_t(1) << 20) {
  std::int64_t const gx = std::clamp<std::int64_t>((mx + block_threads - 1) / block_threads, 1, 64);
  std::int64_t const rows = (my + per_thread - 1) / per_thread;
  std::int64_t const gy = std::clamp<std::int64_t>(
      rows, 1, std::max<std::int64_t>(1, std::min<std::int64_t>(65535, max_blocks / gx)));
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

void check_launch(char const* kernel) {
  cudaError_t const e = cudaGetLastError();
  if (e != cudaSuccess)
    throw recur::cuda_error(std::string("launching ") + kernel + " failed: " + cudaGetErrorString(e),
                            static_cast<int>(e));
}

__device__ std::int64_t first_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// f(i, j) for every point of an mx x my grid (blocks_2d's blocks): rows
// and columns counted directly, no division of a flat index; per_thread
// rows a thread at once (the kernels' pointers are __restrict__, so the
// unrolled points' loads may go ahead of their stores).
template <class F>
__device__ void for_points(std::int64_t mx, std::int64_t my, F&& f) {
  std::int64_t const sy = gridDim.y;
  for (std::int64_t j = blockIdx.y; j < my; j += per_thread * sy)
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < mx;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
#pragma unroll
      for (int v = 0; v < per_thread; ++v)
        if (j + v * sy < my) f(i, j + v * sy);
}

// f(k) for k < n, per_thread elements a thread at once (as for_points).
template <class F>
__device__ void for_elements(std::int64_t n, F&& f) {
  std::int64_t const g = grid_stride();
  for (std::int64_t k = first_index(); k < n; k += per_thread * g)
#pragma unroll
    for (int v = 0; v < per_thread; ++v)
      if (k + v * g < n) f(k + v * g);
}

template <class T>
__global__ void restrict_kernel(std::int64_t mx, std::int64_t cmx, std::int64_t cmy, T const* __restrict__ r,
                                T* __restrict__ fc) {
  for_points(cmx, cmy, [&](std::int64_t I, std::int64_t J) {
    std::int64_t const k = J * cmx + I, i = 2 * I + 1;
    T const* const r0 = r + (2 * J) * mx;
    T const* const r1 = r0 + mx;
    T const* const r2 = r1 + mx;
    T const corners = r0[i - 1] + r0[i + 1] + r2[i - 1] + r2[i + 1];
    T const edges = r0[i] + r2[i] + r1[i - 1] + r1[i + 1];
    fc[k] = (4 * r1[i] + 2 * edges + corners) / 16;
  });
}

template <class T>
__global__ void prolongate_kernel(std::int64_t mx, std::int64_t my, std::int64_t cmx, std::int64_t cmy,
                                  T const* __restrict__ ec, T* __restrict__ u) {
  for_points(mx, my, [&](std::int64_t i, std::int64_t j) {
    std::int64_t const k = j * mx + i;
    std::int64_t const J0 = j % 2 ? (j - 1) / 2 : j / 2 - 1, J1 = j % 2 ? -1 : j / 2;
    std::int64_t const I0 = i % 2 ? (i - 1) / 2 : i / 2 - 1, I1 = i % 2 ? -1 : i / 2;
    T const wy = j % 2 ? T(1) : T(0.5), wx = i % 2 ? T(1) : T(0.5);
    auto const at = [&](std::int64_t J) {
      if (J < 0 || J >= cmy) return T(0);
      T v = I0 >= 0 ? ec[J * cmx + I0] : T(0);
      if (I1 >= 0 && I1 < cmx) v += ec[J * cmx + I1];
      return v;
    };
    u[k] += wx * wy * (at(J0) + at(J1));
  });
}

template <class T>
__global__ void scale_copy_kernel(std::int64_t n, T a, T const* __restrict__ x, T* __restrict__ y) {
  for_elements(n, [&](std::int64_t k) { y[k] = a * x[k]; });
}

template <class T, class U>
__global__ void axpy_kernel(std::int64_t n, std::common_type_t<T, U> a, T const* __restrict__ x,
                            U* __restrict__ y) {
  using W = std::common_type_t<T, U>;
  for_elements(
      n, [&](std::int64_t k) { y[k] = static_cast<U>(static_cast<W>(y[k]) + a * static_cast<W>(x[k])); });
}

template <class T>
__global__ void fill_kernel(std::int64_t n, T v, T* y) {
  for_elements(n, [&](std::int64_t k) { y[k] = v; });
}

// The reductions' two passes: each block sums its grid-stride share into
// partial[blockIdx.x], then one block sums the partial sums into
// partial[blocks]. A fixed tree in shared memory and a grid size that
// depends only on n: the same bits from run to run.
__device__ double block_sum(double v) {
  __shared__ double s[block_threads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = block_threads / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

// d = s (f - A u) rounded to U; with Sum, each block's share of sum (f - A
// u)^2 in partial[blockIdx.x].
template <bool Sum, class T, class U>
__global__ void residual_kernel(std::int64_t mx, std::int64_t my, T cx, T cy, T const* __restrict__ u,
                                T const* __restrict__ f, std::common_type_t<T, U> s, U* __restrict__ d,
                                double* partial) {
  using W = std::common_type_t<T, U>;
  double acc = 0;
  for_points(mx, my, [&](std::int64_t i, std::int64_t j) {
    std::int64_t const k = j * mx + i;
    T const w = i > 0 ? u[k - 1] : T(0), e = i + 1 < mx ? u[k + 1] : T(0);
    T const so = j > 0 ? u[k - mx] : T(0), n = j + 1 < my ? u[k + mx] : T(0);
    T const c = u[k];
    T const r = f[k] - (cx * ((c - w) - (e - c)) + cy * ((c - so) - (n - c)));
    d[k] = static_cast<U>(s * static_cast<W>(r));
    if constexpr (Sum) acc += static_cast<double>(r) * static_cast<double>(r);
  });
  if constexpr (Sum) {
    double const total = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.y * gridDim.x + blockIdx.x] = total;
  }
}

__global__ void sum_partials_kernel(int blocks, double* partial) {
  double acc = 0;
  for (int k = threadIdx.x; k < blocks; k += block_threads) acc += partial[k];
  double const s = block_sum(acc);
  if (threadIdx.x == 0) partial[blocks] = s;
}

}  // namespace

template <class T>
void residual(cuda_space const& sp, grid const& g, T const* u, T const* f, T* r) {
  residual_kernel<false, T, T><<<blocks_2d(g.mx, g.my), block_threads, 0, sp.stream()>>>(
      g.mx, g.my, static_cast<T>(g.cx), static_cast<T>(g.cy), u, f, T(1), r, nullptr);
  check_launch("residual_kernel");
}

template <class T, class U>
double defect(cuda_space const& sp, grid const& g, T const* u, T const* f, double s, U* d) {
  dim3 const grid2 = blocks_2d(g.mx, g.my, cuda_space::scratch_values - 1);
  unsigned const blocks = grid2.x * grid2.y;
  residual_kernel<true, T, U>
      <<<grid2, block_threads, 0, sp.stream()>>>(g.mx, g.my, static_cast<T>(g.cx), static_cast<T>(g.cy), u, f,
                                                 static_cast<std::common_type_t<T, U>>(s), d, sp.scratch());
  check_launch("residual_kernel");
  sum_partials_kernel<<<1, block_threads, 0, sp.stream()>>>(static_cast<int>(blocks), sp.scratch());
  check_launch("sum_partials_kernel");
  double sum = 0;
  sp.to_host(&sum, sp.scratch() + blocks, sizeof sum);
  return sum;
}

template <class T>
void restrict_full_weighting(cuda_space const& sp, grid const& fine, T const* r, T* fc) {
  grid const c = fine.coarse();
  restrict_kernel<<<blocks_2d(c.mx, c.my), block_threads, 0, sp.stream()>>>(fine.mx, c.mx, c.my, r, fc);
  check_launch("restrict_kernel");
}

template <class T>
void prolongate_add(cuda_space const& sp, grid const& fine, T const* ec, T* u) {
  grid const c = fine.coarse();
  prolongate_kernel<<<blocks_2d(fine.mx, fine.my), block_threads, 0, sp.stream()>>>(fine.mx, fine.my, c.mx,
                                                                                    c.my, ec, u);
  check_launch("prolongate_kernel");
}

template <class T>
void scale_copy(cuda_space const& sp, std::int64_t n, double a, T const* x, T* y) {
  if (n == 0) return;
  scale_copy_kernel<<<blocks_for(n), block_threads, 0, sp.stream()>>>(n, static_cast<T>(a), x, y);
  check_launch("scale_copy_kernel");
}

template <class T, class U>
void axpy(cuda_space const& sp, std::int64_t n, double a, T const* x, U* y) {
  if (n == 0) return;
  axpy_kernel<T, U>
      <<<blocks_for(n), block_threads, 0, sp.stream()>>>(n, static_cast<std::common_type_t<T, U>>(a), x, y);
  check_launch("axpy_kernel");
}

template <class T>
void fill(cuda_space const& sp, std::int64_t n, T v, T* y) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), block_threads, 0, sp.stream()>>>(n, v, y);
  check_launch("fill_kernel");
}

RECUR_EXAMPLES_GRID_INSTANCES(cuda_space)

}  // namespace recur_examples
