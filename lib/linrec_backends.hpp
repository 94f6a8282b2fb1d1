#pragma once
// What lib/linrec.cpp (validation, normalisation) calls after the checks pass.
// Each backend receives a checked, forward-only problem with n*count > 0.

#include <recur/detail/linrec_problem.hpp>
#include <recur/executor.hpp>
#include <recur/linrec.hpp>

namespace recur::detail {

template <class T>
void linrec_cpu(linrec_problem<T> const& p, int threads);

// Defined in lib/cuda/ (or as a not_compiled stub when CUDA is off).
template <class T>
void linrec_cuda(linrec_problem<T> const& p, CUstream_st* stream, linrec_variant variant);

// Throws invalid_argument if ptr is not device-accessible (CUDA builds only).
// The message starts with fn; the two-argument form reports as recur::linrec.
void check_device_pointer(char const* fn, void const* ptr, char const* name);
void check_device_pointer(void const* ptr, char const* name);

// The P-scheme thread count for the CPU backend (doc/pscheme.md).
int pscheme_cpu_threads(std::int64_t n, int max_threads);

}  // namespace recur::detail
