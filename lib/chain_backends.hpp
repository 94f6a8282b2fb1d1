#pragma once
// What lib/chain.cpp calls, after its argument checks pass, for the
// recur::cuda overloads of matrix_chain and mobius_recurrence. Backends
// receive a checked problem: a layout free of self-overlap and of 64-bit
// overflow (strides counted in whole matrices and vectors for a chain), its
// unused strides made well defined; count > 0; every array device-accessible
// where it is read or written; outputs either disjoint from the inputs or
// equal to one exactly (in place), final_state disjoint from init or equal to
// it. They enqueue everything on `stream` (temporary storage stream-ordered)
// and never synchronise; for n == 0 they only set final_state from init.

#include <cstdint>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur::detail {

// Defined in lib/cuda/chain_f32.cu and chain_f64.cu (or as not_compiled
// stubs when CUDA is off), K = 2..8.
template <int K, class T>
void matrix_chain_cuda(T const* M, T const* u, T* x, layout const& lay, T const* init, T* final_state,
                       CUstream_st* stream);

template <class T>
void mobius_cuda(T const* alpha, T const* beta, T const* gamma, T const* delta, T* p, layout const& lay,
                 T const* init, T init_value, T* final_state, CUstream_st* stream);

}  // namespace recur::detail
