#pragma once
// Matrix-chain, k-th order and Moebius recurrences over batches.
//
//   recur::matrix_chain<3>(recur::host{}, M, u, x, recur::layout::contiguous(n, count));
//   recur::linrec_order_k(recur::host{}, a, x, x, recur::layout::interleaved(n, count));  // in place
//   recur::mobius_recurrence(recur::host{}, alpha, beta, gamma, delta, p, recur::layout::contiguous(n));
//
// Executors. recur::host (OpenMP) runs everything here. recur::cuda runs all
// three, enqueued on ex.stream without synchronising, every array in device
// memory except linrec_order_k's coefficients a (host):
// - linrec_order_k, orders 0-8 (recur::device::linrec_order_k, kernels/
//   dispatch/dispatch_filters.cuh: a linear time-invariant recurrence on the
//   k-value state, tiles combined with powers of the companion matrix; a
//   higher order is an invalid_argument); results agree with the reference
//   to rounding (a small multiple of eps times the recurrence's error gain
//   for a stable one);
// - matrix_chain<K> and mobius_recurrence (recur::device::matrix_chain and
//   mobius_recurrence, kernels/dispatch/dispatch_chain.cuh: one segmented
//   single-pass scan of the steps under composition, a sequence's first step
//   folded with its init into a constant map); results agree with the
//   reference to rounding of the reassociated products (for Moebius, the
//   rescaled 2x2 products, as the host's chunks).
// All are bitwise reproducible run to run.
//
// - matrix_chain<K>: x_i = M_i x_{i-1} + u_i, x a K-vector, M_i a K x K
//   matrix, K = 2..8, forward, x_{-1} = init. Storage, as
//   reference::matrix_chain: the layout counts elements, and an element is a
//   whole matrix or vector (an array of structures): element i of sequence k
//   is the K*K values of M_i, row-major (M_i[r][c] at column c of row r), at
//     M + lay.offset(i, k) * K * K,
//   and the K values of u_i and x_i at u + lay.offset(i, k) * K and
//   x + lay.offset(i, k) * K. So the layout's strides are in matrices (for M)
//   and vectors (for u, x), not in scalars: layout::contiguous(n, count) is
//   count runs of n whole matrices, layout::interleaved(n, count) puts the
//   count matrices of step i side by side. u may be null (x_i = M_i x_{i-1}).
//   State: K values per sequence, sequence k's x_{-1} at init + k * K (null:
//   zero), its x_{n-1} written to final_state + k * K (init when n == 0).
// - linrec_order_k: y_i = a_1 y_{i-1} + ... + a_k y_{i-k} + x_i with
//   constant coefficients, k = a.size() (0 allowed: y = x), as
//   reference::linrec_order_k: the state is k values per sequence, newest
//   first, (y_{-1}, ..., y_{-k}) at init + s * k and (y_{n-1}, ..., y_{n-k})
//   in final_state + s * k, so one call's final state is the next call's init
//   (for n < k the final state includes initial values). Orders 1 to 8 run
//   the P-scheme on the companion matrix; longer predictors run each sequence
//   sequentially (sequences spread over threads).
// - mobius_recurrence: p_i = (alpha_i p_{i-1} + beta_i) / (gamma_i p_{i-1} +
//   delta_i), p_{-1} = init[k] (or init_value for every sequence when init is
//   null), p_{n-1} to final_state[k]. The four coefficient arrays and p share
//   the layout. Chunks of steps are composed as 2x2 products rescaled by
//   powers of two (ops::mobius_compose), so long products neither overflow nor
//   underflow: the result is finite wherever the sequential recurrence is,
//   even when the plain product of the matrices is not representable. A zero
//   denominator is not an error: it gives inf or NaN as the arithmetic does
//   (where p passes through infinity, the sequential arithmetic gives NaN from
//   there on while a composed chunk may carry the projective limit through;
//   such sequences have no meaningful finite answer either way).
//
// Algorithm (doc/pscheme.md). Sequences are spread over threads when there
// are at least as many as threads; otherwise each long sequence is cut into P
// chunks (P from the linrec cost model, sqrt(n / 5000) clamped to the thread
// budget), each thread composes its chunk's steps into one map
// (pre-computation), the chunk maps are applied in order to give each chunk
// its incoming state (propagation), and each thread re-runs its chunk from
// that state (determination). Composing a chunk costs more than running it
// (K^3 against K^2 per step for a chain, a rescaling per step for Moebius),
// so chunks are used only when there are enough threads for them to pay
// (P > 1 + that cost ratio); otherwise the sequence runs sequentially.
//
// Guarantees, as for linrec: inputs are never written; an output may be an
// input exactly (x == u, y == x, p == any coefficient array: in place), any
// other overlap of an output with an input or another output is rejected
// (final_state == init exactly is allowed); on a bad argument nothing is
// written and recur::invalid_argument names the argument and its value.
// Checked: negative sizes, layouts (non-positive strides, self-overlap, 64-bit
// overflow of the byte offsets, counted in whole matrices), null or
// misaligned pointers for a non-empty batch, non-finite order-k coefficients,
// negative host.threads. Non-finite data are not rejected: they propagate.
// Results are bitwise identical from run to run for the same input, thread
// count (host.threads, or OpenMP's maximum when 0) and build: chunk
// boundaries depend on the sizes and that count only. A sequence that runs
// sequentially gives the reference's bits; a chunked one reassociates the
// products and agrees with the reference to rounding (a few eps times the
// conditioning of the chunk products, not bitwise).
//
// With recur::host, pointers are host memory. Sizes are 64-bit.

#include <cstdint>
#include <span>
#include <type_traits>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur {

// --- matrix chains ---------------------------------------------------------

// Defined in the library for K = 2..8 and T = float, double. With recur::cuda
// M, u, x, init and final_state are device memory.
template <int K, real_value T>
requires(K >= 2 && K <= 8) void matrix_chain(host const& ex, std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt = {});
template <int K, real_value T>
requires(K >= 2 && K <= 8) void matrix_chain(cuda const& ex, std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt = {});

// --- k-th order recurrences with constant coefficients ---------------------

// a holds a_1 .. a_k. With recur::cuda (orders 0-8) a is host memory, the
// rest device memory.
template <real_value T>
void linrec_order_k(host const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void linrec_order_k(cuda const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt = {});

// --- Moebius recurrences ---------------------------------------------------

// With recur::cuda every array is device memory.
template <real_value T>
void mobius_recurrence(host const& ex, std::type_identity_t<T> const* alpha,
                       std::type_identity_t<T> const* beta, std::type_identity_t<T> const* gamma,
                       std::type_identity_t<T> const* delta, T* p, layout const& lay,
                       mobius_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void mobius_recurrence(cuda const& ex, std::type_identity_t<T> const* alpha,
                       std::type_identity_t<T> const* beta, std::type_identity_t<T> const* gamma,
                       std::type_identity_t<T> const* delta, T* p, layout const& lay,
                       mobius_options<std::type_identity_t<T>> const& opt = {});

// --- one sequence of n elements --------------------------------------------

template <int K, class Executor, real_value T>
requires(K >= 2 && K <= 8) void matrix_chain(Executor const& ex, std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, std::int64_t n,
                                             chain_options<std::type_identity_t<T>> const& opt = {}) {
  matrix_chain<K, T>(ex, M, u, x, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void linrec_order_k(Executor const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, std::int64_t n,
                    chain_options<std::type_identity_t<T>> const& opt = {}) {
  linrec_order_k(ex, a, x, y, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void mobius_recurrence(Executor const& ex, std::type_identity_t<T> const* alpha,
                       std::type_identity_t<T> const* beta, std::type_identity_t<T> const* gamma,
                       std::type_identity_t<T> const* delta, T* p, std::int64_t n,
                       mobius_options<std::type_identity_t<T>> const& opt = {}) {
  mobius_recurrence(ex, alpha, beta, gamma, delta, p, layout::contiguous(n, 1), opt);
}

}  // namespace recur
