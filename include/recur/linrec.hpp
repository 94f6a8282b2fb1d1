#pragma once
// First-order linear recurrences  w_i = s_i * w_{i-1} + t_i.
//
//   recur::linrec(recur::host{}, s, t, w, n);                 // one sequence
//   recur::linrec(recur::cuda{stream}, s, t, w,
//                 recur::layout::interleaved(n, count), opt);  // a batch
//
// Each of s and t is either an array laid out like w or one scalar shared by
// every step (recur::operand). Forward: w_{-1} = init and i runs 0..n-1.
// Reverse: w_n = init and w_i = s_i w_{i+1} + t_i for i = n-1..0.
//
// Guarantees: inputs are never written; w may be the same array as s or t
// (in place), other overlaps are rejected; on a bad argument nothing is
// written and recur::invalid_argument names the argument. Results are bitwise
// identical from run to run for the same input, device and build (the order
// in which partial results are combined is fixed by the sizes alone). The
// parallel algorithms reassociate the products, so results agree with the
// sequential reference to rounding (a few n*eps relative to the magnitude of
// the terms), not bitwise.
//
// With recur::cuda the pointers are device pointers, the work is enqueued on
// the executor's stream and the call returns without synchronising; temporary
// storage (a few bytes per tile; three_kernel: transposed copies of s and
// t) is allocated stream-ordered.
//
// Low precision: T may be recur::bfloat16 or recur::float16 (recur/storage.hpp,
// bit-compatible with __nv_bfloat16 and __half), on both executors. Every
// array, scalar and state is stored in T; each element is converted to float
// when loaded, all products and sums (the tiles' composed maps, the
// look-back, each step) are float, and w and the final state are rounded to T
// once, when stored. So w_i is the float recurrence of the rounded inputs to
// within f32 accumulation error, then rounded: a relative error of 2^-8
// (bfloat16) or 2^-11 (float16) of |w_i|, plus a few n*2^-24 of the terms.
//
//   auto* x = reinterpret_cast<recur::bfloat16 const*>(a_device);  // __nv_bfloat16*
//   recur::linrec(recur::cuda{stream}, x, recur::bfloat16(1.0f), w, lay);

#include <cstdint>
#include <type_traits>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur {

// Defined in the library for T = float, double, bfloat16 and float16.
template <linrec_value T>
void linrec(host const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t, T* w,
            layout const& lay, linrec_options<std::type_identity_t<T>> const& opt = {});
template <linrec_value T>
void linrec(cuda const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t, T* w,
            layout const& lay, linrec_options<std::type_identity_t<T>> const& opt = {});

// One sequence of n elements.
template <class Executor, linrec_value T>
void linrec(Executor const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t, T* w,
            std::int64_t n, linrec_options<std::type_identity_t<T>> const& opt = {}) {
  linrec(ex, s, t, w, layout::contiguous(n, 1), opt);
}

// The summary of each sequence: its n steps composed into one affine map,
//
//   recur::linrec_summary(ex, s, t, a, b, lay, direction::forward);
//
// so that the sequence's last state from any initial state x is
// a[k] * x + b[k] (a[k] is the product of its s, b[k] its last state from
// x = 0; a = 1, b = 0 where n == 0; in reverse, the steps are composed from
// element n-1 down to 0). It is the reduction half of reduce-then-scan: a
// caller who holds one slice of a longer sequence (a rank of a
// sequence-parallel model, a chunk on another stream) exchanges the
// summaries, folds the ones before its slice into its initial state, and
// runs recur::linrec from it (recur::dist::linrec does this over MPI). s and
// t are read once; nothing but a and b (count values each, on the
// executor's memory: device pointers with recur::cuda) is written, and
// neither may overlap s, t or the other. A step with s_i == 0 forgets what
// came before, as in linrec. With a 16-bit T the maps are composed in float
// and a and b rounded once. Guarantees as linrec's: nothing written on a
// bad argument, bitwise reproducible, with recur::cuda enqueued on the
// stream without synchronising.
template <linrec_value T>
void linrec_summary(host const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t,
                    T* a, T* b, layout const& lay, direction dir = direction::forward);
template <linrec_value T>
void linrec_summary(cuda const& ex, operand<std::type_identity_t<T>> s, operand<std::type_identity_t<T>> t,
                    T* a, T* b, layout const& lay, direction dir = direction::forward);

// The adjoint of linrec (its reverse-mode gradient), fused into one pass:
// given the forward call's s, its result w and g, the gradient of a loss
// with respect to w,
//
//   recur::linrec_adjoint(ex, s, w, g, dt, ds, lay, {.dir = ..., .init = ...});
//
// writes dt = dL/dt and ds = dL/ds. With lambda the gradient with respect to
// w (the final state's gradient added at the last element) and the forward
// run forwards (w_i = s_i w_{i-1} + t_i, w_{-1} = init):
//
//   lambda_i = g_i + s_{i+1} lambda_{i+1},  lambda_{n-1} = g_{n-1} + final_gradient
//   dt_i = lambda_i,  ds_i = lambda_i w_{i-1}  (w_{-1} = init),  init_gradient = s_0 lambda_0
//
// and for a reverse forward (w_i = s_i w_{i+1} + t_i, w_n = init) the same
// with the indices mirrored: lambda_i = g_i + s_{i-1} lambda_{i-1}, ds_i =
// lambda_i w_{i+1} (w_n = init), init_gradient = s_{n-1} lambda_{n-1}. It is
// linrec's recurrence run against the forward's direction, its coefficient
// read one element on, with ds formed as each lambda_i is stored: s, w and g
// are read once and dt and ds written once (5 words per element; the
// unfused composition moves about 12).
//
// s is an array laid out like w, or a scalar (then ds is usually not wanted:
// pass null). ds may be null (not written; w is then not read and may be
// null). dt may be the same array as g (in place); no other output may
// overlap an input or another output (init_gradient may be final_gradient).
// Every guarantee of linrec holds: nothing is written on a bad argument,
// which recur::invalid_argument names; results are bitwise reproducible run
// to run; the parallel forms agree with the sequential reference
// (recur/reference/linrec.hpp) to rounding, and T may be a 16-bit storage
// type computed in float (ds_i rounded once, from the float lambda_i).
// With n == 0 init_gradient receives final_gradient.
//
// Defined in the library for T = float, double, bfloat16 and float16.
template <linrec_value T>
void linrec_adjoint(host const& ex, operand<std::type_identity_t<T>> s, T const* w, T const* g, T* dt, T* ds,
                    layout const& lay, linrec_adjoint_options<std::type_identity_t<T>> const& opt = {});
template <linrec_value T>
void linrec_adjoint(cuda const& ex, operand<std::type_identity_t<T>> s, T const* w, T const* g, T* dt, T* ds,
                    layout const& lay, linrec_adjoint_options<std::type_identity_t<T>> const& opt = {});

}  // namespace recur
