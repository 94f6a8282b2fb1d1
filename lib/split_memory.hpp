#pragma once
// The executor's side of a tridiagonal solve split across processes
// (lib/dist/tridiag_dist.cpp): memory on the executor, values moved between
// it and the host a few per system, and the one element-wise pass the split
// makes. recur::host's in lib/cpu/split_memory_cpu.cpp, recur::cuda's in
// lib/cuda/split_memory.cu (device memory, work on the executor's stream),
// not_compiled stubs without CUDA. Defined for T = float, double and
// (gather, scatter) the integer samples std::int32_t, std::int16_t and
// std::uint8_t.

#include <cstddef>
#include <cstdint>
#include <memory>

#include <recur/config.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur::detail {

// Memory of `bytes` on the executor, freed by the handle (recur::cuda:
// stream-ordered, on the executor's stream). Throws where it cannot be had.
std::shared_ptr<void> split_alloc(host const& ex, std::size_t bytes);
std::shared_ptr<void> split_alloc(cuda const& ex, std::size_t bytes);

// One column of a batch: count values at src + k * stride (executor
// memory), k = 0 .. count-1, to or from host[k].
template <class T>
struct split_column {
  T* at;    // executor memory: the value of system 0
  T* host;  // count values on the host
};

// Every column's values into its host array. recur::cuda waits for the
// stream: the host arrays are filled when it returns.
template <class T>
void split_gather(host const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                  std::int64_t count);
template <class T>
void split_gather(cuda const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                  std::int64_t count);

// Every column's host values into executor memory. recur::cuda returns once
// the host arrays may be reused, the stores enqueued.
template <class T>
void split_scatter(host const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                   std::int64_t count);
template <class T>
void split_scatter(cuda const& ex, split_column<T> const* columns, std::size_t n, std::int64_t stride,
                   std::int64_t count);

// n host values in fresh executor memory, kept by the handle (null where
// n == 0); recur::cuda returns with the copy enqueued, host reusable.
template <class Executor, class T>
std::shared_ptr<void> split_upload(Executor const& ex, T const* host, std::size_t n) {
  if (n == 0) return nullptr;
  auto h = split_alloc(ex, sizeof(T) * n);
  split_column<T> const col{static_cast<T*>(h.get()), const_cast<T*>(host)};  // only read
  split_scatter(ex, &col, 1, 1, static_cast<std::int64_t>(n));
  return h;
}

// Two right-hand-side sets of the layout, set_stride apart from z: zero
// except element 0 (set 0) and element n-1 (set 1) of every system, which
// are 1: the columns e_0 and e_(n-1) of each system.
template <class T>
void split_unit_columns(host const& ex, T* z, layout const& lay, std::int64_t set_stride);
template <class T>
void split_unit_columns(cuda const& ex, T* z, layout const& lay, std::int64_t set_stride);

// x = y - alpha u - beta w over the layout, right-hand side r of system k
// at offset(i, k) + r * rhs_stride in x and y, with u and w the two sets of
// z (set_stride apart, one per system, shared by its right-hand sides) and
// alpha, beta host arrays of count * nrhs values (system k's at k * nrhs +
// r). x may be y.
template <class T>
struct split_combine_args {
  T* x;
  T const* y;
  layout lay;
  std::int64_t nrhs, rhs_stride;
  T const* z;
  std::int64_t set_stride;
  T const* alpha;
  T const* beta;
};
template <class T>
void split_combine(host const& ex, split_combine_args<T> const& args);
template <class T>
void split_combine(cuda const& ex, split_combine_args<T> const& args);

// One element of split_combine, the same arithmetic on both executors.
template <class T>
RECUR_HD inline T split_correct(T y, T u, T w, T alpha, T beta) {
  return y - alpha * u - beta * w;
}

}  // namespace recur::detail
