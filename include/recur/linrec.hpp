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
// storage (a few bytes per tile) is allocated stream-ordered.
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

}  // namespace recur
