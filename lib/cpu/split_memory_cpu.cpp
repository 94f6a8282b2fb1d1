// recur::host's side of a solve split across processes (lib/split_memory.hpp):
// host memory, plain copies, and split_combine over the executor's threads.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "../split_memory.hpp"
#include "pscheme.hpp"

namespace recur::detail {

std::shared_ptr<void> split_alloc(host const&, std::size_t bytes) {
  return std::shared_ptr<void>(::operator new(bytes ? bytes : 1), [](void* p) { ::operator delete(p); });
}

template <class T>
void split_gather(host const&, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                  std::int64_t count) {
  for (std::size_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < count; ++k) columns[j].host[k] = columns[j].at[k * stride];
}

template <class T>
void split_scatter(host const&, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                   std::int64_t count) {
  for (std::size_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < count; ++k) columns[j].at[k * stride] = columns[j].host[k];
}

// Both passes run over (system, block of rows) pairs, so that one long
// system spreads over the threads as a batch does.
constexpr std::int64_t rows_a_task = 4096;

template <class T>
void split_unit_columns(host const& ex, T* z, layout const& lay, std::int64_t set_stride) {
  int const threads = available_threads(ex.threads);
  std::int64_t const blocks = (lay.n + rows_a_task - 1) / rows_a_task;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t task = 0; task < lay.count * blocks; ++task) {
    std::int64_t const k = task / blocks, i0 = (task % blocks) * rows_a_task;
    for (std::int64_t i = i0; i < std::min(lay.n, i0 + rows_a_task); ++i) {
      z[lay.offset(i, k)] = T(i == 0);
      z[set_stride + lay.offset(i, k)] = T(i == lay.n - 1);
    }
  }
}

template <class T>
void split_combine(host const& ex, split_combine_args<T> const& g) {
  int const threads = available_threads(ex.threads);
  layout const& lay = g.lay;
  std::int64_t const blocks = (lay.n + rows_a_task - 1) / rows_a_task;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t task = 0; task < lay.count * blocks; ++task) {
    std::int64_t const k = task / blocks, i0 = (task % blocks) * rows_a_task;
    for (std::int64_t r = 0; r < g.nrhs; ++r) {
      T const alpha = g.alpha[k * g.nrhs + r], beta = g.beta[k * g.nrhs + r];
      for (std::int64_t i = i0; i < std::min(lay.n, i0 + rows_a_task); ++i) {
        std::int64_t const o = lay.offset(i, k);
        g.x[o + r * g.rhs_stride] =
            split_correct(g.y[o + r * g.rhs_stride], g.z[o], g.z[g.set_stride + o], alpha, beta);
      }
    }
  }
}

#define RECUR_SPLIT_MOVES(T)                                                                     \
  template void split_gather<T>(host const&, split_column<T> const*, std::size_t, std::int64_t,  \
                                std::int64_t);                                                   \
  template void split_scatter<T>(host const&, split_column<T> const*, std::size_t, std::int64_t, \
                                 std::int64_t);
RECUR_SPLIT_MOVES(float)
RECUR_SPLIT_MOVES(double)
RECUR_SPLIT_MOVES(std::int32_t)
RECUR_SPLIT_MOVES(std::int16_t)
RECUR_SPLIT_MOVES(std::uint8_t)
#undef RECUR_SPLIT_MOVES
template void split_unit_columns<float>(host const&, float*, layout const&, std::int64_t);
template void split_unit_columns<double>(host const&, double*, layout const&, std::int64_t);
template void split_combine<float>(host const&, split_combine_args<float> const&);
template void split_combine<double>(host const&, split_combine_args<double> const&);

}  // namespace recur::detail
