// explicit_part (adi.hpp) on a CUDA device: one grid-stride kernel on the
// space's stream, the arithmetic of adi_host.cpp point by point.
#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include <recur/error.hpp>

#include "common/space.hpp"
#include "heat/adi.hpp"

namespace recur_examples {

namespace {

constexpr int block_threads = 256;

template <class T>
__global__ void explicit_part_kernel(std::int64_t nx, std::int64_t my, T ax, T ay, T const* u, T* w) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < nx * my;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t const j = k / nx, i = k - j * nx;
    T const c = u[k];
    T const west = u[i > 0 ? k - 1 : k + nx - 1], east = u[i + 1 < nx ? k + 1 : k - i];
    T const south = j > 0 ? u[k - nx] : T(0), north = j + 1 < my ? u[k + nx] : T(0);
    w[k] = c + ax * ((west - c) + (east - c)) + ay * ((south - c) + (north - c));
  }
}

}  // namespace

template <class T>
void explicit_part(cuda_space const& sp, std::int64_t nx, std::int64_t my, double sx, double sy, T const* u,
                   T* w) {
  std::int64_t const n = nx * my;
  if (n == 0) return;
  auto const blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((n + block_threads - 1) / block_threads, 1, 1 << 16));
  explicit_part_kernel<<<blocks, block_threads, 0, sp.stream()>>>(nx, my, static_cast<T>(sx),
                                                                  static_cast<T>(sy), u, w);
  cudaError_t const e = cudaGetLastError();
  if (e != cudaSuccess)
    throw recur::cuda_error(std::string("launching explicit_part_kernel failed: ") + cudaGetErrorString(e),
                            static_cast<int>(e));
}

RECUR_EXAMPLES_HEAT_INSTANCES(cuda_space)

}  // namespace recur_examples
