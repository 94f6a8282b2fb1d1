#pragma once
// recur::solve_batched's argument checks as a function of their own, for
// callers that run the solve in pieces (lib/dist/, a system split across
// processes): every check solve_batched makes for `ex` (recur::cuda: the
// pointers device-accessible), naming `fn` in its invalid_argument, before
// anything is written. Returns the checked problem (tridiag_backends.hpp)
// with opt's fields copied, the algorithm as given. Defined in
// lib/tridiag.cpp for host and cuda and T = float and double.

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/tridiag.hpp>
#include "tridiag_backends.hpp"

namespace recur::detail {

template <class Executor, class T>
tridiag_problem<T> tridiag_checked(char const* fn, Executor const& ex, T const* a, T const* b, T const* c,
                                   T const* d, T* x, layout const& lay, tridiag_options const& opt);

}  // namespace recur::detail
