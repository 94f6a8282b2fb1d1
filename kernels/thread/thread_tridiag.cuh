#pragma once
// One tridiagonal system, one thread: the pivot rule every solver applies
// to a divisor (usable_pivot) and the reciprocal the one-thread sweeps take
// of it (pivot_rcp), written once for the shared-memory forms
// (kernels/block/), the global-memory pivoted form (thread_tridiag_pivot.cuh,
// run by kernels/agent/agent_tridiag_pivot.cuh) and the CPU tests
// (test/test_tridiag_pivot_thread.cpp). Plain C++ (host and device), no
// CUDA header.

#include <cmath>
#include <cstdint>
#include <limits>

#include <recur/config.hpp>

namespace recur::kernels {

// A divisor the solvers accept (the reference's rule,
// reference::detail::usable_pivot), tested without a branch (the sweeps test
// every row's). double: nonzero and finite (0 < |p| < inf, false for NaN).
// float: 2^-126 <= |p| < 2^126, a normal number whose reciprocal is normal
// too: the range where pivot_rcp's three instructions give 1 / p exactly as
// the division does. A subnormal pivot, or one of 2^126 or more, is a
// breakdown.
template <class T>
RECUR_HD inline bool usable_pivot(T p) {
  if constexpr (sizeof(T) == 4) {
    // Biased exponent e in [1, 252]: (e + 3) mod 256 >= 4.
    return ((__builtin_bit_cast(std::uint32_t, p) + 0x01800000u) & 0x7f800000u) > 0x01ffffffu;
  } else {
    T const m = std::fabs(p);
    return (m > T(0)) & (m < std::numeric_limits<T>::infinity());
  }
}

// 1 / p for a usable pivot (bitwise the correctly rounded quotient). float
// on the device: the approximate reciprocal and one Newton step, the fast
// path of nvcc's own division without its range test and the branch to its
// slow path (which covers only the pivots usable_pivot rejects;
// test_block_tridiag's pivot_rcp_exact checks every float); in the float
// sweeps that test and branch would be a seventh of a row's instructions.
// Elsewhere the division.
template <class T>
RECUR_HD inline T pivot_rcp(T p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(p));
    return fmaf(r, fmaf(-p, r, 1.0f), r);
  } else {
    return T(1) / p;
  }
#else
  return T(1) / p;
#endif
}

}  // namespace recur::kernels
