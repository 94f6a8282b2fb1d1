#pragma once
// What lib/linrec.cpp (validation, normalisation of linrec and linrec_adjoint)
// call after the checks pass. Each backend receives a checked, forward-only
// problem with count > 0, and n > 0 on the CPU (the GPU's handles n == 0).

#include <recur/detail/linrec_problem.hpp>
#include <recur/executor.hpp>
#include <recur/types.hpp>

namespace recur::detail {

// lib/cpu/linrec_cpu.cpp: threads is host.threads (0: OpenMP's maximum).
template <class T>
void linrec_cpu(linrec_problem<T> const& p, int threads);

// Defined in lib/cuda/ (or as a not_compiled stub when CUDA is off).
template <class T>
void linrec_cuda(linrec_problem<T> const& p, CUstream_st* stream, linrec_variant variant);

// The same for linrec_adjoint: the problem in the order the adjoint runs.
template <class T>
void linrec_adjoint_cpu(linrec_adjoint_problem<T> const& p, int threads);
template <class T>
void linrec_adjoint_cuda(linrec_adjoint_problem<T> const& p, CUstream_st* stream, linrec_variant variant);

}  // namespace recur::detail
