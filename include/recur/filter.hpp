#pragma once
// IIR filtering with scipy.signal's semantics (lfilter, lfilter_zi, lfiltic,
// sosfilt, sosfilt_zi, filtfilt, sosfiltfilt), forward or in reverse, the
// lagged correlations of lfilter's gradients (correlate_lags), and DPCM
// codecs, over batches.
//
//   std::vector<float> b = {0.2f, 0.4f, 0.2f}, a = {1.0f, -0.5f, 0.1f};
//   recur::lfilter(recur::host{}, b, a, x, y, recur::layout::contiguous(n, count));
//   recur::sosfilt(recur::host{}, sos, x, x, recur::layout::interleaved(n, count));  // in place
//   recur::dpcm_encode(recur::host{}, c, shift, pixels, residuals, recur::layout::contiguous(w, h));
//   recur::lfilter(recur::cuda{stream}, b, a, d_x, d_y, recur::layout::interleaved(n, count),
//                  {d_zi, d_zf});  // state in and out: scipy's zi and zf
//
// Executors. recur::host (OpenMP, sequences spread over threads, each
// sequence filtered sequentially) runs every function here. recur::cuda runs
// lfilter (orders 0-8), sosfilt (any number of sections) and the DPCM codecs
// (orders 0-8), floating point through recur::device::lfilter, sosfilt,
// dpcm_encode and dpcm_decode (kernels/dispatch/dispatch_lfilter.cuh,
// dispatch_filters.cuh, both over dispatch_lti.cuh), integer through
// kernels/dispatch/dispatch_dpcm_int.cuh; filtfilt and sosfiltfilt are two
// of those lfilter or sosfilt calls on the stream (lib/cuda/filtfilt_cuda.cu);
// correlate_lags through recur::device::correlate_lags
// (kernels/dispatch/dispatch_correlate.cuh). lfilter_zi, lfiltic and
// sosfilt_zi compute on the host from the coefficients alone.
//
// Semantics: those of the sequential references, include/recur/reference/
// lfilter.hpp and dpcm.hpp, whose arithmetic the recur::host functions run,
// operation for operation: their results equal the references' bit for bit,
// whatever the layout and the number of threads (so they are also bitwise
// identical from run to run).
//
// - lfilter: y = scipy.signal.lfilter(b, a, x, zi=zi) along the layout's
//   element axis of every sequence: b and a are divided by a[0] and padded
//   with zeros to m + 1 values, m = max(len(a), len(b)) - 1 the order, and
//   each sample goes through direct form II transposed. The state is m values
//   per sequence (filter_options): opt.init is scipy's zi and opt.final_state
//   its zf, with the sequence axis first, sequence k's state at
//   init[k * m .. k * m + m) (final_state likewise), count * m values each.
//   A null init is a zero initial state (scipy's default); a null
//   final_state is not wanted. final_state receives the state after the last
//   sample, so filtering x[0, h) with final_state = z, then x[h, n) with
//   init = z, gives the same bits as filtering x at once. init may be
//   final_state itself (the state updated in place).
// - direction (opt.dir, lfilter and sosfilt): direction::reverse runs each
//   sequence from its last element to its first, y = flip(lfilter(b, a,
//   flip(x), zi)) with flip reversing the element axis, without copies (the
//   backends run the mirrored view, a negative element stride, as linrec's
//   reverse direction does); init is then the state before x[n - 1] and
//   final_state the state after x[0]. The adjoint of a filter is the filter
//   run in the other direction (recur.torch's backward passes,
//   python/recur/_autograd.py).
// - lfilter_zi: scipy.signal.lfilter_zi, the steady-state state for a unit
//   step: lfilter with init = c * lfilter_zi(b, a) (per sequence) on a
//   constant c input is constant from the first sample.
// - sosfilt: the cascade of second-order sections, sos holding n_sections
//   rows [b0 b1 b2 a0 a1 a2] (row-major, 6 * n_sections values, each row
//   normalised by its a0, which must be nonzero; scipy requires 1). One pass
//   over memory: every sample goes through all sections before the next is
//   read. The state is 2 values per section per sequence, sequence k's
//   section j at init[(k * n_sections + j) * 2] (final_state likewise); it
//   equals lfilter applied section after section, bit for bit.
// - dpcm_encode / dpcm_decode with an order-k linear predictor,
//   k = c.size(). Integer samples (int16_t, int32_t, uint8_t): the prediction
//   p_i = (sum_j c_j x_{i-j}) >> shift is exact in int64, residuals are
//   e_i = x_i - p_i reduced modulo 2^bits into the sample type (wrap-around,
//   no saturation), and decode(encode(x)) == x exactly for every input.
//   Floating point: p_i = sum_j c_j x_{i-j}, e_i = x_i - p_i; the round trip
//   is exact only to rounding (decode is a k-th order recurrence). Samples
//   before the first are 0, or k values per sequence from opt.init
//   (dpcm_options), newest first (sequence s's x_{-1} at init[s * k]).
//
// Guarantees, as for linrec: inputs are never written; the output may be the
// input itself (y == x, e == x, x == e: in place), any other overlap of an
// output with an input or with another output is rejected (final_state ==
// init exactly is allowed); on a bad argument nothing is written and
// recur::invalid_argument names the argument and its value. Checked: empty a
// or b, a[0] == 0, non-finite coefficients (also after the division by a[0]),
// sos not a positive multiple of 6 values, negative sizes, null or
// misaligned pointers for a non-empty batch, a DPCM shift outside
// [0, 62] or sum |c_j| > 2^31 (the int64 prediction would not be exact),
// layouts (negative sizes, non-positive strides, self-overlap, 64-bit
// overflow), negative host.threads. Non-finite samples are not rejected: they
// propagate through the arithmetic.
//
// With recur::cuda (lfilter, sosfilt, DPCM integer and floating point): the same
// semantics and the same argument checks (same errors, nothing written on
// error), except that
// - x, y, e and the state (opt.init, opt.final_state) are device (or managed)
//   pointers; the coefficients b, a, sos and c stay host memory (they are
//   checked and normalised on the host); a host pointer where device memory is
//   needed, or device memory for coefficients, is an invalid_argument;
// - lfilter's order max(len(a), len(b)) - 1 and DPCM's c.size() must be 0 to
//   8 (a higher one is an invalid_argument; recur::host has no limit);
//   sosfilt takes any number of sections, fused 4 at a time into one pass
//   over memory;
// - the work is enqueued on the executor's stream and the call returns
//   without synchronising; temporary storage is allocated stream-ordered
//   (cudaMallocAsync / cudaFreeAsync on that stream);
// - the GPU runs the filter as a linear time-invariant recurrence on its
//   state (tiles of each sequence combined by a scan with the powers of the
//   state matrix; many short or strided sequences one thread each), so the
//   results are not bitwise the references': they agree to rounding, within
//   a small multiple of eps times the filter's error gain (sum_k ||A^k||) for
//   a stable filter, not growing with the length. lfilter of orders 3-8
//   whose companion matrix's powers peak high (most designed filters of
//   orders 5-8) runs as a cascade of second-order sections factored from b
//   and a on the host (zi and zf mapped to and from the sections' states),
//   whose scan is as accurate as a sequential cascade: on the filters
//   scipy.signal designs of orders 1-8 the GPU's error stays within 10 times
//   scipy's own in the same precision (doc/design.md). Results are bitwise
//   identical from run to run for the same input, device and build. Outputs
//   may equal inputs (in place), final_state may equal init, as on the host;
// - integer DPCM is exact on the GPU too: bitwise the reference's results
//   (encoding is a stencil; decoding with shift 0 a scan in wrap-around
//   uint32_t arithmetic, exact modulo 2^bits; with a shift, whose floor is
//   not linear, one sequence per thread: fast for many sequences, such as
//   image rows, slow for a few long ones);
// - a non-finite sample propagates through the state as the arithmetic
//   takes it (a scan multiplies it by matrix powers, 0 * NaN = NaN), so it
//   may reach later outputs of its sequence that the sequential filter would
//   not (an FIR filter after its order), though never past a tile whose
//   state matrix power is exactly zero in T;
// - a build without CUDA throws recur::not_compiled, whatever the call.
//
// Pointers are host memory, except with recur::cuda (above).
// Sizes are 64-bit.

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur {

// Every function here is defined in the library for T = float and double (S:
// int16_t, int32_t, uint8_t) on both executors. With recur::cuda the
// coefficients (b, a, sos, c) are host memory, every other array device
// memory.

// --- lfilter ---------------------------------------------------------------

template <real_value T>
void lfilter(host const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void lfilter(cuda const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt = {});

// The order max(len(a), len(b)) - 1: the state values per sequence.
constexpr std::int64_t lfilter_order(std::int64_t nb, std::int64_t na) noexcept {
  return (nb > na ? nb : na) - 1;
}

// scipy.signal.lfilter_zi(b, a): order values. Throws recur::invalid_argument
// for the coefficients lfilter rejects, and when the filter has a pole at
// z = 1 (sum(a) == 0: no steady state).
template <real_value T>
std::vector<T> lfilter_zi(std::span<T const> b, std::span<T const> a);

// scipy.signal.lfiltic(b, a, y, x): the state (order values) that continues a
// filtering whose past outputs were y (y[-1], y[-2], ..., newest first) and
// past inputs x (likewise); missing values are zero, extra ones unused.
// Throws recur::invalid_argument for the coefficients lfilter rejects and for
// non-finite y or x.
template <real_value T>
std::vector<T> lfiltic(std::span<T const> b, std::span<T const> a, std::span<T const> y,
                       std::span<T const> x = {});

// --- lfilter's gradients ----------------------------------------------------

// The lagged correlations of u with each array of v, summed over the batch:
//
//   c[j * lags + k] = sum over sequences s, elements i in [k, n) of u_s[i] v_j,s[i - k]
//
// for k < lags, j < v.size(), u and every v[j] laid out as lay, element i
// counted in direction dir (direction::reverse: i is element n - 1 - i, so
// the sum runs over u_s[i] v_j,s[i + k]). For y = lfilter(b, a, x) and
// lambda its adjoint (lfilter(1, a, g) run in the other direction, g the
// gradient of y), the coefficients' gradients are c of (lambda; x, y): with
// a[0] = 1, d b_k = c[k] and d a_k = -c[lags + k] for k >= 1.
//
// c (v.size() * lags values) must not overlap u or any v; lags >= 0 (none:
// nothing written). An empty batch gives zeros. With recur::host the result
// does not depend on the thread count; each sequence is summed in chunks
// of a fixed length, the chunks' sums added in order. With recur::cuda: u,
// v's arrays and c are device memory (v, the span of pointers, is host
// memory), lags at most 9 and v.size() at most 2 (lfilter's gradients of
// orders 0-8; more is an invalid_argument), the work enqueued on the
// stream without synchronising; tiles' partial sums are added in a fixed
// order, so the result is bitwise reproducible run to run (not bitwise
// recur::host's). Errors name the argument: null or misaligned pointers
// (of a non-empty batch), the layout's, a negative lags, overlaps.
template <real_value T>
void correlate_lags(host const& ex, std::type_identity_t<T> const* u,
                    std::span<std::type_identity_t<T> const* const> v, T* c, std::int64_t lags,
                    layout const& lay, direction dir = direction::forward);
template <real_value T>
void correlate_lags(cuda const& ex, std::type_identity_t<T> const* u,
                    std::span<std::type_identity_t<T> const* const> v, T* c, std::int64_t lags,
                    layout const& lay, direction dir = direction::forward);

// --- filtfilt --------------------------------------------------------------

// scipy.signal.filtfilt(b, a, x, padtype, padlen) with method 'pad', along
// the layout's element axis of every sequence: each sequence is extended by
// padlen samples at both ends (opt, filtfilt_options), filtered forward from
// the state lfilter_zi(b, a) * ext[0], the result filtered backward from
// lfilter_zi(b, a) * (its last value), and the middle n samples written to
// y. y may be x (in place). Throws recur::invalid_argument, before writing
// anything, for what lfilter rejects, for a negative padlen, for
// n <= padlen (scipy's "must be greater than padlen") and for a filter
// without steady state (sum(a) == 0). With recur::host each sequence runs
// the references' arithmetic (the results are those of scipy's filtfilt up
// to the rounding of its own loop); with recur::cuda the two passes are GPU
// lfilter calls on the stream, on an extended copy in temporary storage
// (2 (n + 2 padlen) values per sequence, and its initial state), so
// lfilter's GPU limits and accuracy apply (orders 0-8).
template <real_value T>
void filtfilt(host const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt = {});
template <real_value T>
void filtfilt(cuda const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt = {});

// --- sosfilt ---------------------------------------------------------------

template <real_value T>
void sosfilt(host const& ex, std::span<std::type_identity_t<T> const> sos, std::type_identity_t<T> const* x,
             T* y, layout const& lay, filter_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void sosfilt(cuda const& ex, std::span<std::type_identity_t<T> const> sos, std::type_identity_t<T> const* x,
             T* y, layout const& lay, filter_options<std::type_identity_t<T>> const& opt = {});

// scipy.signal.sosfilt_zi(sos): 2 values per section, section j's at 2 j,
// the steady state of the cascade for a unit step (each section's
// lfilter_zi scaled by the DC gain of the sections before it). Throws
// recur::invalid_argument for the sos sosfilt rejects and when a section has
// no steady state.
template <real_value T>
std::vector<T> sosfilt_zi(std::span<T const> sos);

// scipy.signal.sosfiltfilt(sos, x, padtype, padlen): filtfilt with the
// cascade of sections (forward and backward passes are sosfilt, started from
// sosfilt_zi(sos) times the first value), the same extension, errors and
// executors (with recur::cuda any number of sections).
template <real_value T>
void sosfiltfilt(host const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt = {});
template <real_value T>
void sosfiltfilt(cuda const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt = {});

// --- DPCM ------------------------------------------------------------------

// Integer codecs. c: the predictor's coefficients c_1 .. c_k (fixed point with
// `shift` fractional bits). With recur::cuda: results bitwise those of
// recur::host; encoding is a stencil, decoding with shift 0 a single-pass
// scan (the recurrence is linear modulo 2^32), with a shift one sequence per
// thread.
template <dpcm_sample S>
void dpcm_encode(host const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* x,
                 S* e, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt = {});
template <dpcm_sample S>
void dpcm_encode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* x,
                 S* e, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt = {});
template <dpcm_sample S>
void dpcm_decode(host const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* e,
                 S* x, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt = {});
template <dpcm_sample S>
void dpcm_decode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::type_identity_t<S> const* e,
                 S* x, layout const& lay, dpcm_options<std::type_identity_t<S>> const& opt = {});

// Floating-point codecs.
template <real_value T>
void dpcm_encode(host const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* x,
                 T* e, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void dpcm_encode(cuda const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* x,
                 T* e, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void dpcm_decode(host const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* e,
                 T* x, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt = {});
template <real_value T>
void dpcm_decode(cuda const& ex, std::span<std::type_identity_t<T> const> c, std::type_identity_t<T> const* e,
                 T* x, layout const& lay, dpcm_options<std::type_identity_t<T>> const& opt = {});

// --- one sequence of n elements --------------------------------------------

template <class Executor, real_value T>
void lfilter(Executor const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             std::int64_t n, filter_options<std::type_identity_t<T>> const& opt = {}) {
  lfilter(ex, b, a, x, y, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void sosfilt(Executor const& ex, std::span<std::type_identity_t<T> const> sos,
             std::type_identity_t<T> const* x, T* y, std::int64_t n,
             filter_options<std::type_identity_t<T>> const& opt = {}) {
  sosfilt(ex, sos, x, y, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void filtfilt(Executor const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              std::int64_t n, filtfilt_options const& opt = {}) {
  filtfilt(ex, b, a, x, y, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void sosfiltfilt(Executor const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, std::int64_t n, filtfilt_options const& opt = {}) {
  sosfiltfilt(ex, sos, x, y, layout::contiguous(n, 1), opt);
}
template <class Executor, dpcm_sample S>
void dpcm_encode(Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* x, S* e, std::int64_t n,
                 dpcm_options<std::type_identity_t<S>> const& opt = {}) {
  dpcm_encode(ex, c, shift, x, e, layout::contiguous(n, 1), opt);
}
template <class Executor, dpcm_sample S>
void dpcm_decode(Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* e, S* x, std::int64_t n,
                 dpcm_options<std::type_identity_t<S>> const& opt = {}) {
  dpcm_decode(ex, c, shift, e, x, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void dpcm_encode(Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* x, T* e, std::int64_t n,
                 dpcm_options<std::type_identity_t<T>> const& opt = {}) {
  dpcm_encode(ex, c, x, e, layout::contiguous(n, 1), opt);
}
template <class Executor, real_value T>
void dpcm_decode(Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* e, T* x, std::int64_t n,
                 dpcm_options<std::type_identity_t<T>> const& opt = {}) {
  dpcm_decode(ex, c, e, x, layout::contiguous(n, 1), opt);
}

}  // namespace recur
