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

#include <cstdint>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur {

// An input that is either an array (laid out like w) or one scalar.
template <class T>
struct operand {
  T const* data = nullptr;
  T value{};

  operand(T const* p) : data(p) {}  // NOLINT: implicit on purpose
  operand(T v) : value(v) {}        // NOLINT
  bool is_scalar() const { return data == nullptr; }
};

enum class direction { forward, reverse };

// Which GPU algorithm runs. All are the P-scheme (pre-computation,
// propagation, determination); see doc/pscheme.md and doc/performance.md.
enum class linrec_variant {
  automatic,     // single_pass; pipelined when s is a scalar with |s|^4096 (f32; ^2048 for f64)
                 // far below the smallest subnormal, so that every tile provably forgets
  single_pass,   // tile on chip, decoupled look-back: memory read once, written once
  three_kernel,  // the paper's literal form: global transposed arrays, 3 kernels
  // Single pass by a persistent grid that keeps the next tile's loads in
  // flight during each look-back. For dense contiguous layouts with 16-byte
  // aligned arrays (others run single_pass). Faster than single_pass when
  // the recurrence forgets within a tile (|s| bounded away from 1: 88% of
  // the copy bandwidth against 73% for f32 on the H100), slower when it
  // does not (|s| ~ 1: 40% against 64%); same results bit for bit across
  // runs, not the same bits as single_pass (doc/performance.md).
  pipelined,
};

template <class T>
struct linrec_options {
  direction dir = direction::forward;
  T const* init = nullptr;   // per-sequence initial state (count values), or null
  T init_value = T(0);       // initial state of every sequence when init is null
  T* final_state = nullptr;  // if set, receives each sequence's last w (count values)
  linrec_variant variant = linrec_variant::automatic;  // GPU only
};

void linrec(host const& ex, operand<float> s, operand<float> t, float* w, layout const& lay,
            linrec_options<float> const& opt = {});
void linrec(host const& ex, operand<double> s, operand<double> t, double* w, layout const& lay,
            linrec_options<double> const& opt = {});
void linrec(cuda const& ex, operand<float> s, operand<float> t, float* w, layout const& lay,
            linrec_options<float> const& opt = {});
void linrec(cuda const& ex, operand<double> s, operand<double> t, double* w, layout const& lay,
            linrec_options<double> const& opt = {});

// One sequence of n elements.
template <class Executor, class T>
void linrec(Executor const& ex, operand<T> s, operand<T> t, T* w, std::int64_t n,
            linrec_options<T> const& opt = {}) {
  linrec(ex, s, t, w, layout::contiguous(n, 1), opt);
}
template <class Executor, class T>
void linrec(Executor const& ex, T const* s, T const* t, T* w, std::int64_t n,
            linrec_options<T> const& opt = {}) {
  linrec(ex, operand<T>(s), operand<T>(t), w, layout::contiguous(n, 1), opt);
}

}  // namespace recur
