#pragma once
// Kernel-side view of a linrec problem: element access through the layout,
// with sequence starts folded into the data. Element 0 of sequence k becomes
// the constant map (0, s_0 init_k + t_0), so a batch of sequences is one scan
// of maps whose boundaries need no flags (see ops::compose_resetting). And
// the look-back's record and fold for the single-pass agents.
//
// Two views share one interface, so that every agent is written once over
// them (its `Params`): linrec_params (linrec) and linrec_adjoint_params
// (linrec_adjoint: the coefficient read one element back, and a second
// output formed from the forward's w read one element on). An agent reads
// element i of sequence seq as step(seq, i, off), loads what its store needs
// besides the result as load_aux(seq, i, off) (nothing for linrec), and
// writes it as store(seq, i, off, value, aux). The agents that stage tiles
// in shared memory (rows, pipe) stage the arrays staged_input(0 ..
// staged_arrays - 1) and shift the adjoint's runs themselves
// (agent_linrec_rows.cuh). Each view names the tuning policy its agents run
// with (kernels/tuning/tuning_linrec.cuh).
//
// T is the storage type of the problem's arrays and scalars, V = compute_t<T>
// the type of every map and state (float for the 16-bit storage types): step
// converts what it loads, store rounds what it writes, and everything between
// (compositions, scans, look-back records, determination) is V.

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <recur/detail/linrec_problem.hpp>
#include <recur/ops/affine.hpp>
#include <recur/storage.hpp>
#include "../thread/thread_ops.cuh"
#include "../tuning/tuning_linrec.cuh"
#include "lookback.cuh"

namespace recur::kernels {

// What an element's store needs besides its result: nothing, for linrec.
struct no_aux {};

// What both views share: the recurrence p and its element access.
template <class T>
struct linrec_view {
  using storage = T;
  using value = compute_t<T>;
  detail::linrec_problem<T> p;

  __device__ __forceinline__ std::int64_t offset(std::int64_t seq, std::int64_t i) const {
    return i * p.lay.element_stride + seq * p.lay.batch_stride;
  }
  __device__ __forceinline__ value init_of(std::int64_t seq) const { return to_compute(p.init_of(seq)); }
};

template <class T>
struct linrec_params : linrec_view<T> {
  using typename linrec_view<T>::value;
  using linrec_view<T>::p;
  using linrec_view<T>::init_of;
  using aux = no_aux;
  using policy = linrec_policy<T>;
  static constexpr bool adjoint = false;
  static constexpr int staged_arrays = 2;  // s and t; t's slots receive w

  // Step i of sequence seq as a map, the sequence start folded in.
  __device__ __forceinline__ ops::affine<value> step(std::int64_t seq, std::int64_t i,
                                                     std::int64_t off) const {
    value s = to_compute(p.s ? p.s[off] : p.s_value);
    value t = to_compute(p.t ? p.t[off] : p.t_value);
    if (i == 0) {
      t = fma(s, init_of(seq), t);
      s = value(0);
    }
    return {s, t};
  }
  __device__ __forceinline__ aux load_aux(std::int64_t, std::int64_t, std::int64_t) const { return {}; }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, std::int64_t off, value w,
                                        aux = {}) const {
    T const v = to_storage<T>(w);
    p.w[off] = v;
    if (p.final_state && i == p.lay.n - 1) p.final_state[seq] = v;
  }
  __device__ __forceinline__ T const* staged_input(int k) const { return k == 0 ? p.s : p.t; }
  // The arrays a staged agent's alignment rules concern (host).
  __host__ std::array<void const*, 3> arrays() const { return {p.s, p.t, p.w}; }
};

// The adjoint (detail::linrec_adjoint_problem): p is the recurrence of
// lambda, its coefficient at element i is s_{i-1} (1 at element 0, so the
// element folds into the constant map (0, init + g_0)); each element also
// writes ds_i = lambda_i x_i, x_i the forward's w at element i + 1 (w_init
// at n - 1), and the final state is s_{n-1} lambda_{n-1}. x is the aux
// (load_aux) of the agents that store element by element; the staged agents
// stage s, g (p.t) and w and shift the runs themselves.
template <class T>
struct linrec_adjoint_params : linrec_view<T> {
  using typename linrec_view<T>::value;
  using linrec_view<T>::p;
  using linrec_view<T>::init_of;
  using aux = value;
  using policy = linrec_adjoint_policy<T>;
  static constexpr bool adjoint = true;
  static constexpr int staged_arrays = 3;  // s, g and w; g's slots receive dt, s's ds
  T const* w;
  T const* w_init;
  T w_init_value;
  T* ds;

  explicit linrec_adjoint_params(detail::linrec_adjoint_problem<T> const& q)
      : linrec_view<T>{q.scan}, w(q.w), w_init(q.w_init), w_init_value(q.w_init_value), ds(q.ds) {}

  __device__ __forceinline__ value w_init_of(std::int64_t seq) const {
    return to_compute(w_init ? w_init[seq] : w_init_value);
  }
  // s at offset off (the coefficient of the element after it).
  __device__ __forceinline__ value s_at(std::int64_t off) const {
    return to_compute(p.s ? p.s[off] : p.s_value);
  }
  __device__ __forceinline__ ops::affine<value> step(std::int64_t seq, std::int64_t i,
                                                     std::int64_t off) const {
    value const g = to_compute(p.t[off]);
    if (i == 0) return {value(0), init_of(seq) + g};
    return {s_at(off - p.lay.element_stride), g};
  }
  __device__ __forceinline__ aux load_aux(std::int64_t seq, std::int64_t i, std::int64_t off) const {
    if (!ds) return value(0);
    return i == p.lay.n - 1 ? w_init_of(seq) : to_compute(w[off + p.lay.element_stride]);
  }
  __device__ __forceinline__ void store(std::int64_t seq, std::int64_t i, std::int64_t off, value lambda,
                                        aux x) const {
    p.w[off] = to_storage<T>(lambda);
    if (ds) ds[off] = to_storage<T>(lambda * x);
    if (p.final_state && i == p.lay.n - 1) p.final_state[seq] = to_storage<T>(s_at(off) * lambda);
  }
  __device__ __forceinline__ T const* staged_input(int k) const {
    return k == 0 ? p.s : k == 1 ? p.t : ds ? w : nullptr;
  }
  // A staged agent's runs, in scan order, shifted by one element: the
  // coefficients a_j = s_{j-1} (`before` at j = 0, the element before the
  // run), and x_j = w_{j+1} (`after` at the run's last j, the element after
  // it). The agent then sets a = 1 at element 0 and x = w_init at n - 1.
  template <int Items>
  __device__ __forceinline__ static void shift_back(value (&s)[Items], value before) {
#pragma unroll
    for (int j = Items - 1; j > 0; --j) s[j] = s[j - 1];
    s[0] = before;
  }
  template <int Items>
  __device__ __forceinline__ static void shift_on(value (&x)[Items], value after) {
#pragma unroll
    for (int j = 0; j < Items - 1; ++j) x[j] = x[j + 1];
    x[Items - 1] = after;
  }
  __host__ std::array<void const*, 5> arrays() const { return {p.s, p.t, p.w, ds ? w : nullptr, ds}; }
};

// final_state may be init (the same array). The tile that writes sequence
// q's final state must then not do so before the tile holding q's element 0
// has read init[q]. A look-back reads the predecessor tile's status, so only
// a sequence spanning three tiles or more is at risk: its walk may stop at an
// intermediate tile whose map is constant (a zero s, or a power that
// underflows) without waiting for the first. Only the sequence a tile starts
// in can be that one. Returns the tile to wait for (its first status word,
// published after its loads), or -1.
template <class T>
__device__ __forceinline__ std::int64_t init_tile_to_await(detail::linrec_problem<T> const& p,
                                                           std::int64_t tile, std::int64_t tile_items) {
  if (!p.final_state || p.final_state != p.init) return -1;
  std::int64_t const n = p.lay.n, f0 = tile * tile_items;
  std::int64_t const start = f0 / n * n;       // element 0 of the tile's first sequence
  if (start + n > f0 + tile_items) return -1;  // that sequence does not end in this tile
  std::int64_t const first = start / tile_items;
  return first < tile - 1 ? first : -1;
}

// One determination step: w_i = s_i w_{i-1} + t_i, a constant map ignoring
// w_{i-1} (see apply_resetting).
template <class T>
__device__ __forceinline__ T determine(T s, T t, T w) {
  return s == T(0) ? t : fma(s, w, t);
}

// A tile's status (T: the compute type): one word of 2 sizeof(T) bytes
// holding its map (a, b), read and written whole. The inclusive value w_out
// is published as the constant map (0, w_out); any map with a == 0 reads as
// inclusive, since it is the tile's outgoing state whatever came before (a
// constant map ends a walk, which needs no history). a's bits all ones (the
// 0xff memset) read as nothing published; a NaN a is stored canonical, so it
// never collides.
template <class T>
struct linrec_record {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  using value = ops::affine<T>;
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  using word = status_word<2 * sizeof(T)>;
  static constexpr int words = 1;

  __device__ __forceinline__ static void encode(std::uint32_t, value const& m, word (&w)[1]) {
    bits a = __builtin_bit_cast(bits, m.a);
    if (m.a != m.a) a = __builtin_bit_cast(bits, T(NAN));
    bits const h[2] = {a, __builtin_bit_cast(bits, m.b)};
    std::memcpy(&w[0], h, sizeof(h));
  }
  __device__ __forceinline__ static std::uint32_t decode(word const (&w)[1], value& m) {
    bits h[2];
    std::memcpy(h, &w[0], sizeof(h));
    if (h[0] == ~bits(0)) return lookback_invalid;
    m = {__builtin_bit_cast(T, h[0]), __builtin_bit_cast(T, h[1])};
    return m.a == T(0) ? lookback_inclusive : lookback_aggregate;
  }
};

template <class T>
using linrec_tile_status = tile_status<linrec_record<T>>;

// The look-back's fold in value space: the walk's base is a constant map
// (its outgoing state b), the aggregates apply to it forward with the fused
// multiply-add a tile uses to publish its own outgoing state. Batch
// shared-memory loads go ahead of the dependent chain.
template <class T, int Batch>
struct linrec_fold {
  using result = T;
  static constexpr bool shuffle_base = true;
  __device__ __forceinline__ bool ends(ops::affine<T> const&) const { return false; }  // the record says
  template <class Stack>
  __device__ __forceinline__ T operator()(ops::affine<T> const& base, Stack const& stack, int depth) const {
    return fold_stack<Batch>(base.b, stack, depth,
                             [](T w, ops::affine<T> const& m) { return apply_resetting(m, w); });
  }
};

}  // namespace recur::kernels
