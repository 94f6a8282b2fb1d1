#pragma once
// What lib/filter.cpp (argument checks) calls after the checks pass, for the
// recur::cuda overloads of lfilter. Backends receive a checked problem:
// b and a host arrays of nb, na >= 1 values with a[0] nonzero and every
// coefficient finite (also after the division by a[0]); the order
// max(na, nb) - 1 at most lfilter_cuda_max_order; a layout free of
// self-overlap and of 64-bit overflow, with its unused strides made well
// defined (element_stride 1 when n <= 1, batch_stride n * element_stride when
// count <= 1); count > 0 (a call with count == 0 returns before the backend);
// x, y, zi and zf device-accessible where they are read or written (x and y
// when n > 0, zi and zf when the order is > 0), y either disjoint from x or
// equal to it (in place), zf either disjoint from zi or equal to it, zi and
// zf holding count * order values each or null.
//
// lfilter_cuda enqueues everything on `stream` and never synchronises; for
// n == 0 it only sets zf to zi (or to zeros), reading and writing nothing
// else. Its temporary storage is allocated and freed stream-ordered.

#include <cstdint>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur::detail {

// The GPU runs the filter as a linear time-invariant recurrence on its state
// (kernels/dispatch/dispatch_lfilter.cuh over dispatch_lti.cuh): orders 0 to 8.
inline constexpr std::int64_t lfilter_cuda_max_order = 8;

// Defined in lib/cuda/lfilter_cuda.cu (or as a not_compiled stub when CUDA is off).
template <class T>
void lfilter_cuda(T const* b, std::int64_t nb, T const* a, std::int64_t na, T const* x, T* y,
                  layout const& lay, T const* zi, T* zf, CUstream_st* stream);

// sosfilt on the GPU: `sections` checked rows of 6 coefficients (sos, host
// memory; each row's a0 nonzero, everything finite after normalisation);
// state 2 * sections values per sequence. Any number of sections (up to 4
// fused per pass over memory). Same contract as lfilter_cuda otherwise.
template <class T>
void sosfilt_cuda(T const* sos, std::int64_t sections, T const* x, T* y, layout const& lay, T const* zi, T* zf,
                  CUstream_st* stream);

// Predictor recurrences of order k <= predictor_cuda_max_order on the GPU,
// coefficients c (host memory, finite): encode e_i = x_i - sum c_j x_(i-j)
// (DPCM encoding), otherwise y_i = sum c_j y_(i-j) + x_i (DPCM decoding and
// linrec_order_k); state k values per sequence, newest first (init read,
// final_state written, either may be null; final_state only when decoding).
inline constexpr std::int64_t predictor_cuda_max_order = 8;
template <class T>
void predictor_cuda(bool encode, T const* c, std::int64_t k, T const* in, T* out, layout const& lay,
                    T const* init, T* final_state, CUstream_st* stream);

// Integer DPCM on the GPU (kernels/dispatch/dispatch_dpcm_int.cuh): S is
// int16_t, int32_t or uint8_t; c (host memory) checked: k <= predictor_cuda_max_order,
// sum |c_j| <= 2^31, shift in [0, 62]; init k samples per sequence or null.
template <class S>
void dpcm_int_cuda(bool encode, std::int64_t const* c, std::int64_t k, int shift, S const* in, S* out,
                   layout const& lay, S const* init, CUstream_st* stream);

// Throws invalid_argument (message starting with fn) when ptr is memory the
// host cannot read (device memory): for arrays the host API reads itself,
// such as lfilter's coefficients with recur::cuda. CUDA builds only.
void check_host_pointer(char const* fn, void const* ptr, char const* name);

}  // namespace recur::detail
