#pragma once
// What lib/chain.cpp calls, after its argument checks pass, for
// matrix_chain, linrec_order_k and mobius_recurrence. Backends receive a
// checked problem: a layout free of self-overlap and of 64-bit overflow
// (strides counted in whole matrices and vectors for a chain), its unused
// strides made well defined (detail::normalised_layout); count > 0; outputs
// either disjoint from the inputs or equal to one exactly (in place),
// final_state disjoint from init or equal to it; state arrays (init,
// final_state: null, or count times the state size) as in
// include/recur/types.hpp.

#include <cstdint>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur::detail {

// ---------------------------------------------------------------- CPU ----
// lib/cpu/chain_cpu.cpp, the P-scheme over OpenMP threads (lib/cpu/pscheme.hpp);
// threads is host.threads (0: OpenMP's maximum). Called with n > 0 (the
// entry point copies init to final_state for n == 0). K = 2..8.

template <int K, class T>
void matrix_chain_cpu(T const* M, T const* u, T* x, layout const& lay, T const* init, T* final_state,
                      int threads);

// k = 0 .. any; a holds a_1 .. a_k, finite.
template <class T>
void linrec_order_k_cpu(T const* a, std::int64_t k, T const* x, T* y, layout const& lay, T const* init,
                        T* final_state, int threads);

template <class T>
void mobius_cpu(T const* alpha, T const* beta, T const* gamma, T const* delta, T* p, layout const& lay,
                T const* init, T init_value, T* final_state, int threads);

// --------------------------------------------------------------- CUDA ----
// lib/cuda/ (or not_compiled stubs when CUDA is off): every array
// device-accessible where it is read or written. They enqueue everything on
// `stream` (temporary storage stream-ordered) and never synchronise; for
// n == 0 they only set final_state from init.

// lib/cuda/chain_f32.cu and chain_f64.cu, K = 2..6; chain_k7_8_f32.cu and
// chain_k7_8_f64.cu, K = 7 and 8.
template <int K, class T>
void matrix_chain_cuda(T const* M, T const* u, T* x, layout const& lay, T const* init, T* final_state,
                       CUstream_st* stream);

template <class T>
void mobius_cuda(T const* alpha, T const* beta, T const* gamma, T const* delta, T* p, layout const& lay,
                 T const* init, T init_value, T* final_state, CUstream_st* stream);

// lib/cuda/filters_f32.cu and filters_f64.cu (the predictor recurrence of
// kernels/dispatch/dispatch_filters.cuh): a on the host, k <= lti_cuda_max_order
// (lib/detail/cuda_support.hpp); final_state null when k == 0.
template <class T>
void linrec_order_k_cuda(T const* a, std::int64_t k, T const* x, T* y, layout const& lay, T const* init,
                         T* final_state, CUstream_st* stream);

}  // namespace recur::detail
