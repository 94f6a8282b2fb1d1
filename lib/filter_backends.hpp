#pragma once
// What lib/filter.cpp and lib/correlate.cpp call, after their argument
// checks pass, for lfilter, sosfilt, filtfilt, sosfiltfilt, the DPCM codecs
// and correlate_lags. Backends receive a checked problem: coefficients in
// host memory, finite, normalised where the entry point normalises them
// (lfilter's b and a by a[0] for the CPU; sos rows by their a0); a layout
// free of self-overlap and of 64-bit overflow, its unused strides made well
// defined (detail::normalised_layout), for lfilter, sosfilt and
// correlate_lags in direction::reverse mirrored (element i at the pointers'
// element n - 1 - i: a negative element stride); count > 0 and
// n > 0 unless stated; outputs either disjoint from the inputs or equal to
// one exactly (in place), final_state disjoint from init or equal to it;
// state arrays null or holding count times the state size (filters: the
// order; sosfilt: 2 per section; DPCM: the predictor's order k).

#include <cstdint>
#include <span>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur::detail {

// ---------------------------------------------------------------- CPU ----
// lib/cpu/filter_cpu.cpp: sequences spread over OpenMP threads, each one
// filtered sequentially by the references' arithmetic
// (include/recur/reference/lfilter.hpp, dpcm.hpp), so the results are the
// references' bit for bit whatever the thread count; threads is host.threads
// (0: OpenMP's maximum).

// `sections` filters of order `order` in cascade, direct form II transposed
// (lfilter: one section of any order; sosfilt: order 2), section j's
// normalised coefficients at b + j * (order + 1) and a + j * (order + 1).
// State: sections * order values per sequence. n may be 0 (final_state = init).
template <class T>
void df2t_cpu(T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* x, T* y,
              layout const& lay, T const* init, T* final_state, int threads);

// filtfilt and sosfiltfilt: the same cascade (df2t_cpu's b, a, sections,
// order) run forward over each sequence extended by `edge` samples at both
// ends (`pad`; none when edge is 0) from zi * (the extension's first value),
// then backward from zi * (the forward pass's last value); the middle n
// samples go to y, which may be x. zi: the unit-step steady state,
// sections * order values. n > edge.
template <class T>
void filtfilt_cpu(T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* zi, T const* x,
                  T* y, layout const& lay, std::int64_t edge, filtfilt_pad pad, int threads);

// correlate_lags: c[j * lags + k] = sum over the sequences and elements i of
// u[i] v[j][i - k] (the view's elements), for j < nv and k < lags (both
// positive); count or n may be 0 (c zeros).
template <class T>
void correlate_cpu(T const* u, T const* const* v, std::int64_t nv, T* c, std::int64_t lags, layout const& lay,
                   int threads);

// Integer DPCM (S: int16_t, int32_t, uint8_t) and floating-point DPCM
// (T: float, double); encode maps x to e, decode e to x (in to out).
template <class S>
void dpcm_int_cpu(bool encode, std::span<std::int64_t const> c, int shift, S const* in, S* out,
                  layout const& lay, S const* init, int threads);
template <class T>
void dpcm_float_cpu(bool encode, std::span<T const> c, T const* in, T* out, layout const& lay, T const* init,
                    int threads);

// --------------------------------------------------------------- CUDA ----
// lib/cuda/ (or not_compiled stubs when CUDA is off): every array but the
// coefficients device-accessible where it is read or written; the order at
// most lti_cuda_max_order (lib/detail/cuda_support.hpp) except for sosfilt.
// They enqueue everything on `stream` (temporary storage stream-ordered)
// and never synchronise.

// lib/cuda/lfilter_cuda.cu: b and a as given (nb, na >= 1, a[0] nonzero).
// Also called for n == 0, when it only sets final_state to init (or zeros);
// final_state is null for order 0.
template <class T>
void lfilter_cuda(T const* b, std::int64_t nb, T const* a, std::int64_t na, T const* x, T* y,
                  layout const& lay, T const* init, T* final_state, CUstream_st* stream);

// lib/cuda/filters_f32.cu, filters_f64.cu: `sections` rows of 6 coefficients
// (sos); any number of sections (up to 4 fused per pass over memory).
template <class T>
void sosfilt_cuda(T const* sos, std::int64_t sections, T const* x, T* y, layout const& lay, T const* init,
                  T* final_state, CUstream_st* stream);

// lib/cuda/filtfilt_cuda.cu: filtfilt_cpu's computation as GPU lfilter
// (sos null: b and a as lfilter_cuda takes them) or sosfilt (sos non-null,
// `sections` rows) calls on the stream, over an extended copy of the batch in
// stream-ordered temporary storage. zi (host memory, `per` values: the
// filter's state size) is the unit-step steady state.
template <class T>
struct iir_coefficients {
  T const* b = nullptr;
  std::int64_t nb = 0;
  T const* a = nullptr;
  std::int64_t na = 0;
  T const* sos = nullptr;
  std::int64_t sections = 0;
};
template <class T>
void filtfilt_cuda(iir_coefficients<T> const& f, T const* zi, std::int64_t per, T const* x, T* y,
                   layout const& lay, std::int64_t edge, filtfilt_pad pad, CUstream_st* stream);

// lib/cuda/correlate_cuda.cu (kernels/dispatch/dispatch_correlate.cuh):
// correlate_cpu's sums on the GPU, u, the arrays of v and c device memory,
// v itself host memory; lags and nv at most the limits below. Also called
// for n == 0 (c zeros).
inline constexpr std::int64_t correlate_cuda_max_lags = 9, correlate_cuda_max_arrays = 2;
template <class T>
void correlate_cuda(T const* u, T const* const* v, std::int64_t nv, T* c, std::int64_t lags,
                    layout const& lay, CUstream_st* stream);

// lib/cuda/filters_f32.cu, filters_f64.cu (the predictor recurrence of
// kernels/dispatch/dispatch_filters.cuh): c_1 .. c_k.
template <class T>
void dpcm_float_cuda(bool encode, T const* c, std::int64_t k, T const* in, T* out, layout const& lay,
                     T const* init, CUstream_st* stream);

// lib/cuda/dpcm_int.cu (kernels/dispatch/dispatch_dpcm_int.cuh): sum |c_j| <=
// 2^31, shift in [0, 62].
template <class S>
void dpcm_int_cuda(bool encode, std::int64_t const* c, std::int64_t k, int shift, S const* in, S* out,
                   layout const& lay, S const* init, CUstream_st* stream);

}  // namespace recur::detail
