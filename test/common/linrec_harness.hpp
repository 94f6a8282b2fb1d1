#pragma once
// Shared by the linrec suites (host and CUDA): seeded problem generation,
// poisoned outputs (poison.hpp), and the check of a result against the exact
// recurrence.
//
// The check. Every output is compared with the recurrence evaluated in long
// double from the same (rounded) inputs. Writing a_ij = |s_{j+1} ... s_i|, the
// terms of w_i are a_ij t_j (and a_{i,-1} init), so
//   M_i = sum_j a_ij |t_j|              (magnitude of the terms)
//   E_i = sum_j (i - j + 1) a_ij |t_j|  (the same, weighted by distance)
// A sequential evaluation rounds twice per step, and the error it makes in a
// term is bounded by the steps that term passes through: |err_i| <= eps E_i
// (eps = 2u) to first order. A parallel evaluation reassociates: a term also
// passes through the combination of partial results (a scan tree, the chunk
// or tile prefixes), which adds O(log n) roundings, plus at most one per
// chunk or tile crossed, which the distance already counts. So the tolerance
// is eps * (C_dist E_i + C_log (log2 n + 2) M_i) with C_dist = C_log = 4, twice
// the first-order bound. E_i <= (i + 1) M_i <= n M_i: this is the C n eps
// bound relative to the magnitude of the partial terms, and for contractive
// coefficients (|s| < 1 on average) it is much tighter, since far terms
// vanish. For long-memory sequences (|s| ~ 1) E_i ~ n sum|t| and the bound is
// that of summation, as loose as it honestly has to be.
//
// Values stored in a 16-bit type (recur::bfloat16, recur::float16) are
// computed in float and rounded once when stored: the bound above with
// float's eps, then the rounding of the stored result, its unit roundoff u_T
// (2^-8 bfloat16, 2^-11 float16) times |w_i| (plus half T's smallest
// subnormal, which float16 reaches below 2^-14). The inputs are generated in
// T, so the exact recurrence is that of the rounded inputs.
//
// Big cases are generated and checked on every core: inputs come from a
// counter-based generator (a value depends on the seed and its position only),
// and the check splits long sequences into chunks whose exact incoming states
// come from composing each chunk's steps in long double (x, M and E all follow
// affine recurrences), then checks the chunks in parallel.
//
// Environment: RECUR_TEST_SEED=<n> draws other inputs (failures print the
// seed of their case); RECUR_TEST_THREADS=<n> sets the threads of big cases.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <recur/linrec.hpp>

#include "cases.hpp"
#include "layouts.hpp"
#include "parallel.hpp"
#include "poison.hpp"
#include "random.hpp"

namespace recur_test {

// ---------------------------------------------------------------- memory ----

// A vector that does not zero its elements: the large cases fill (or receive)
// every element anyway, and zeroing gigabytes first costs seconds.
template <class T>
struct uninit_alloc {
  using value_type = T;
  uninit_alloc() = default;
  template <class U>
  uninit_alloc(uninit_alloc<U> const&) noexcept {}  // NOLINT
  T* allocate(std::size_t n) { return std::allocator<T>{}.allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <class U>
  friend bool operator==(uninit_alloc const&, uninit_alloc<U> const&) {
    return true;
  }
};
template <class T>
using buffer = std::vector<T, uninit_alloc<T>>;

// How a layout's elements are split into tasks: slabs of `width` sequences
// times `chunks` pieces of each sequence. Interleaved-like layouts are walked
// row by row (one state per sequence of the slab), others sequence by
// sequence, so that memory is read in order.
struct traversal {
  recur::layout lay;
  int workers = 1;
  bool rows = false;
  std::int64_t width = 1, slabs = 0, chunks = 1;

  explicit traversal(recur::layout const& l) : lay(l), workers(worker_count(l.n * l.count)) {
    if (l.n == 0 || l.count == 0) return;
    rows = l.count > 1 && l.element_stride > l.batch_stride;
    // At least 64 sequences a slab in rows: slabs share a row's cache lines.
    width = rows ? std::clamp<std::int64_t>((l.count + workers - 1) / workers,
                                            std::min<std::int64_t>(64, l.count), l.count)
                 : 1;
    slabs = (l.count + width - 1) / width;
    if (slabs < 4 * workers)
      chunks = std::clamp<std::int64_t>((4 * workers + slabs - 1) / slabs, 1,
                                        std::max<std::int64_t>(1, l.n / 4096));
  }
  std::int64_t tasks() const { return slabs * chunks; }
  std::int64_t k_begin(std::int64_t task) const { return task / chunks * width; }
  std::int64_t k_end(std::int64_t task) const { return std::min(lay.count, k_begin(task) + width); }
  std::int64_t j_begin(std::int64_t task) const { return lay.n * (task % chunks) / chunks; }
  std::int64_t j_end(std::int64_t task) const { return lay.n * (task % chunks + 1) / chunks; }
};

// ---------------------------------------------------------------- problems --

enum class coef {
  uniform,               // s, t, init in [-1, 1): contractive on average
  near_one,              // |s| in [0.999, 1], random sign: memory ~ 1000 steps
  long_memory,           // |s| in [1 - 1e-6, 1], random sign: memory ~ 10^6 steps
  long_memory_positive,  // s in [1 - 1e-6, 1], t and init in [0, 1): no cancellation
  near_one_resets,       // near_one, but one s in 500 is exactly 0 (the history is forgotten)
};
enum class init_kind { none, value, array };  // none: the default init_value 0
enum class place { separate, w_is_s, w_is_t };

inline char const* name(coef c) {
  switch (c) {
    case coef::uniform:
      return "uniform";
    case coef::near_one:
      return "near_one";
    case coef::long_memory:
      return "long_memory";
    case coef::long_memory_positive:
      return "long_memory_positive";
    case coef::near_one_resets:
      return "near_one_resets";
  }
  return "?";
}
inline char const* name(init_kind k) {
  return k == init_kind::none ? "none" : k == init_kind::value ? "value" : "array";
}
inline char const* name(place p) {
  return p == place::separate ? "separate" : p == place::w_is_s ? "w=s" : "w=t";
}

struct spec {
  recur::layout lay;
  recur::direction dir = recur::direction::forward;
  bool s_scalar = false;
  bool t_scalar = false;
  init_kind init = init_kind::array;
  bool final_state = true;
  place where = place::separate;
  coef dist = coef::uniform;
  std::uint64_t seed = 1;

  std::string describe() const {
    return fmt::format(
        "layout {{n={}, count={}, es={}, bs={}}} {} s={} t={} init={} final_state={} {} coef={} seed={:#x}",
        lay.n, lay.count, lay.element_stride, lay.batch_stride,
        dir == recur::direction::forward ? "forward" : "reverse", s_scalar ? "scalar" : "array",
        t_scalar ? "scalar" : "array", name(init), final_state, name(where), name(dist), seed);
  }
};

// Options that vary with a case index, so that a sweep over sizes also covers
// every combination of operand kinds, init, final_state and in-place use.
inline spec rotated(spec sp, int idx) {
  sp.init = static_cast<init_kind>(idx % 3);
  sp.final_state = idx % 2 == 0;
  sp.s_scalar = idx % 5 == 3;
  sp.t_scalar = idx % 7 == 5;
  sp.where = place::separate;
  if (idx % 4 == 1 && !sp.t_scalar) sp.where = place::w_is_t;
  if (idx % 4 == 2 && !sp.s_scalar) sp.where = place::w_is_s;
  return sp;
}

// Every combination of init (none / value / array), final_state, scalar or
// array s and t, and in-place use (w == s, w == t) for one layout and
// direction, with near-one coefficients: 3 x 2 x 8 = 48 (in place over a
// scalar operand is no combination: 8 of the 12 operand and place choices).
// Seeds seed_for(salt, idx++).
inline std::vector<spec> option_combinations(recur::layout const& lay, recur::direction dir,
                                             std::uint64_t salt, int& idx) {
  std::vector<spec> out;
  for (init_kind const init : {init_kind::none, init_kind::value, init_kind::array})
    for (bool const final_state : {false, true})
      for (bool const s_scalar : {false, true})
        for (bool const t_scalar : {false, true})
          for (place const where : {place::separate, place::w_is_s, place::w_is_t}) {
            if ((where == place::w_is_s && s_scalar) || (where == place::w_is_t && t_scalar)) continue;
            spec sp;
            sp.lay = lay;
            sp.dir = dir;
            sp.init = init;
            sp.final_state = final_state;
            sp.s_scalar = s_scalar;
            sp.t_scalar = t_scalar;
            sp.where = where;
            sp.dist = coef::near_one;
            sp.seed = seed_for(salt, static_cast<std::uint64_t>(idx++));
            out.push_back(sp);
          }
  return out;
}
inline constexpr std::int64_t option_combination_count = 48;

template <class T>
struct problem {
  static constexpr std::int64_t guard = 16;  // poisoned elements either side of every array

  spec sp;
  std::int64_t ext = 0;
  buffer<T> s, t;  // guard + ext + guard; layout positions hold inputs, the rest is poison
  T s_value{}, t_value{};
  buffer<T> init;  // guard + count + guard (always generated; used when sp.init == array)
  T init_value{};

  std::size_t size() const { return static_cast<std::size_t>(ext + 2 * guard); }
  std::size_t final_size() const { return static_cast<std::size_t>(sp.lay.count + 2 * guard); }
  T const* s_ptr() const { return s.empty() ? nullptr : s.data() + guard; }
  T const* t_ptr() const { return t.empty() ? nullptr : t.data() + guard; }
  T const* init_ptr() const { return init.data() + guard; }
  T init_of(std::int64_t k) const {
    switch (sp.init) {
      case init_kind::none:
        return T(0);
      case init_kind::value:
        return init_value;
      case init_kind::array:
        return init[static_cast<std::size_t>(guard + k)];
    }
    return T(0);
  }
  // The options of a call; init and final_state point wherever the caller's
  // copies live (host or device).
  recur::linrec_options<T> options(T const* init_p, T* final_p,
                                   recur::linrec_variant v = recur::linrec_variant::automatic) const {
    recur::linrec_options<T> o;
    o.dir = sp.dir;
    if (sp.init == init_kind::value) o.init_value = init_value;
    if (sp.init == init_kind::array) o.init = init_p;
    o.final_state = sp.final_state ? final_p : nullptr;
    o.variant = v;
    return o;
  }
};

template <class T>
problem<T> make_problem(spec const& sp) {
  problem<T> p;
  p.sp = sp;
  p.ext = extent(sp.lay);
  constexpr std::int64_t g = problem<T>::guard;
  std::uint64_t const s_key = draw(sp.seed, 1), t_key = draw(sp.seed, 2), i_key = draw(sp.seed, 3);
  bool const positive = sp.dist == coef::long_memory_positive;
  // Element at offset o: up to three independent draws.
  auto const s_at = [&](std::uint64_t o, bool scalar) -> T {
    double const u = unit(draw(s_key, 3 * o));
    double const sign = (draw(s_key, 3 * o + 1) >> 63) ? -1.0 : 1.0;
    switch (sp.dist) {
      case coef::uniform:
        return T(scalar ? sign * (0.5 + 0.5 * u) : 2.0 * u - 1.0);
      case coef::near_one:
        return T(sign * (0.999 + 0.001 * u));
      case coef::long_memory:
        return T(sign * (1.0 - 1e-6 * u));
      case coef::long_memory_positive:
        return T(1.0 - 1e-6 * u);
      case coef::near_one_resets:
        return T(draw(s_key, 3 * o + 2) % 500 == 0 ? 0.0 : sign * (0.999 + 0.001 * u));
    }
    return T(0);
  };
  auto const t_at = [&](std::uint64_t key, std::uint64_t o) -> T {
    double const u = unit(draw(key, o));
    return T(positive ? u : 2.0 * u - 1.0);
  };
  auto const fill = [&](buffer<T>& b, auto&& at) {
    b.resize(p.size());  // not zeroed: every element is written below
    T* const base = b.data() + g;
    std::fill(b.begin(), b.begin() + g, poison<T>());
    std::fill(b.end() - g, b.end(), poison<T>());
    if (!is_dense(sp.lay)) std::fill(base, base + p.ext, poison<T>());  // the gaps
    traversal const tr(sp.lay);
    auto const put = [&](std::int64_t i, std::int64_t k) {
      auto const o = sp.lay.offset(i, k);
      base[o] = at(static_cast<std::uint64_t>(o));
    };
    parallel_for(tr.tasks(), tr.workers, [&](std::int64_t task, int) {
      if (tr.rows) {
        for (std::int64_t i = tr.j_begin(task); i < tr.j_end(task); ++i)
          for (std::int64_t k = tr.k_begin(task); k < tr.k_end(task); ++k) put(i, k);
      } else {
        for (std::int64_t k = tr.k_begin(task); k < tr.k_end(task); ++k)
          for (std::int64_t i = tr.j_begin(task); i < tr.j_end(task); ++i) put(i, k);
      }
    });
  };
  p.s_value = s_at(~std::uint64_t{0} / 4, true);
  p.t_value = t_at(t_key, ~std::uint64_t{0});
  p.init_value = t_at(i_key, ~std::uint64_t{0});
  if (!sp.s_scalar) fill(p.s, [&](std::uint64_t o) { return s_at(o, false); });
  if (!sp.t_scalar) fill(p.t, [&](std::uint64_t o) { return t_at(t_key, o); });
  p.init.assign(p.final_size(), poison<T>());
  for (std::int64_t k = 0; k < sp.lay.count; ++k)
    p.init[static_cast<std::size_t>(g + k)] = t_at(i_key, static_cast<std::uint64_t>(k));
  return p;
}

// What a call wrote, copied to the host: the whole buffer w lives in (with
// guards and gaps; for an in-place call, the s or t buffer) and final_state.
template <class T>
struct outputs {
  buffer<T> w;
  buffer<T> final_state;  // empty when not requested
};

// The buffer w starts as: poison, or the input it overwrites in place.
template <class T>
buffer<T> const& w_start(problem<T> const& p) {
  static buffer<T> const none;
  if (p.sp.where == place::w_is_s) return p.s;
  if (p.sp.where == place::w_is_t) return p.t;
  return none;
}

// ------------------------------------------------------------------ check ---

inline constexpr long double c_dist = 4.0L;
inline constexpr long double c_log = 4.0L;

// The rounding of a result stored in T (see the top): unit roundoff and half
// the smallest subnormal; none when T is its own compute type.
template <class T>
inline constexpr long double store_unit = 0;
template <>
inline constexpr long double store_unit<recur::bfloat16> = 0x1p-8L;
template <>
inline constexpr long double store_unit<recur::float16> = 0x1p-11L;
template <class T>
inline constexpr long double store_tiny = 0;
template <>
inline constexpr long double store_tiny<recur::bfloat16> = 0x1p-134L;
template <>
inline constexpr long double store_tiny<recur::float16> = 0x1p-25L;

// The error allowed in w_i of a sequence of n elements (see the top), x the
// exact w_i.
template <class T>
struct tolerance {
  using V = recur::compute_t<T>;
  long double eps = std::numeric_limits<V>::epsilon();
  long double log_term;
  explicit tolerance(std::int64_t n)
      : log_term(c_log * (std::log2(static_cast<long double>(std::max<std::int64_t>(n, 1))) + 2)) {}
  long double operator()(long double E, long double M, long double x) const {
    // The last term covers underflow of long products (gradual or flushed).
    long double const computed = eps * (c_dist * E + log_term * M) +
                                 16.0L * static_cast<long double>(std::numeric_limits<V>::min()) * (1 + M);
    return computed * (1 + store_unit<T>)+store_unit<T> * std::fabs(x) + store_tiny<T>;
  }
};

// Failures seen by one worker: how many, and the first few described.
struct failures {
  std::int64_t count = 0;
  std::vector<std::string> first;
  // describe() makes the message; called for the first few only (formatting
  // every failure of a broken 2^31-element case would take minutes).
  template <class F>
  void add(F&& describe) {
    if (++count <= 5) first.push_back(describe());
  }
};

// The exact state of a sequence after some steps: w, and the magnitudes M, E.
struct exact_state {
  long double x, M, E;
};

// Long products of |s| < 1 underflow, and in long double one can get stuck at
// the smallest subnormal (0.75 * min rounds back to min): every later step is
// then a subnormal operation, which some CPUs run 30 times slower. Anything
// under 1e-1000 is far below what any tolerance here can see: make it 0.
inline long double flush(long double v) { return std::fabs(v) < 1e-1000L ? 0.0L : v; }

// The composition of a run of steps, applied to a state:
//   x' = A x + B,  E' = p E + q M + u,  M' = p M + v.
struct exact_map {
  long double A = 1, B = 0, p = 1, q = 0, u = 0, v = 0;
  void then(long double s, long double t) {  // append the step (s, t)
    long double const a = std::fabs(s), b = std::fabs(t);
    A = flush(s * A);
    B = flush(s * B + t);
    q = flush(a * (q + p));
    u = flush(a * (u + v) + b);
    p = flush(a * p);
    v = flush(a * v + b);
  }
  exact_state operator()(exact_state const& z) const {
    return {A * z.x + B, p * z.M + v, p * z.E + q * z.M + u};
  }
};

// Empty when the outputs are right; otherwise what is wrong, the first few
// failures and how many elements failed.
template <class T>
std::string check(problem<T> const& p, outputs<T> const& out) {
  auto const& sp = p.sp;
  auto const& lay = sp.lay;
  constexpr std::int64_t g = problem<T>::guard;
  if (out.w.size() != p.size())
    return fmt::format("w buffer has {} elements, expected {}", out.w.size(), p.size());
  traversal const tr(lay);
  std::vector<failures> fails(static_cast<std::size_t>(tr.workers));
  failures& serial = fails[0];

  // Guards and gaps: untouched poison.
  auto const untouched = [&](std::int64_t b) {
    if (!is_poison(out.w[static_cast<std::size_t>(b)]))
      serial.add([&] {
        return fmt::format("buffer element {} (layout offset {}) outside the layout was written: {}", b,
                           b - g, static_cast<double>(out.w[static_cast<std::size_t>(b)]));
      });
  };
  for (std::int64_t b = 0; b < g; ++b) {
    untouched(b);
    untouched(g + p.ext + b);
  }
  if (!is_dense(lay)) {
    std::vector<bool> in_layout(static_cast<std::size_t>(p.ext), false);
    for (std::int64_t k = 0; k < lay.count; ++k)
      for (std::int64_t i = 0; i < lay.n; ++i) in_layout[static_cast<std::size_t>(lay.offset(i, k))] = true;
    for (std::int64_t b = 0; b < p.ext; ++b)
      if (!in_layout[static_cast<std::size_t>(b)]) untouched(g + b);
  }

  // Values against the exact recurrence.
  bool const rev = sp.dir == recur::direction::reverse;
  tolerance<T> const tol_of(lay.n);
  T const* const w = out.w.data() + g;
  auto const offset_of = [&](std::int64_t k, std::int64_t j) {
    return lay.offset(rev ? lay.n - 1 - j : j, k);
  };
  auto const s_of = [&](std::int64_t o) -> long double {
    return p.s.empty() ? p.s_value : p.s[static_cast<std::size_t>(g + o)];
  };
  auto const t_of = [&](std::int64_t o) -> long double {
    return p.t.empty() ? p.t_value : p.t[static_cast<std::size_t>(g + o)];
  };
  auto const step = [&](exact_state& q, std::int64_t k, std::int64_t j, failures& f) {
    std::int64_t const o = offset_of(k, j);
    long double const si = s_of(o), ti = t_of(o);
    q.E = flush(std::fabs(si) * (q.E + q.M) + std::fabs(ti));
    q.M = flush(std::fabs(si) * q.M + std::fabs(ti));
    q.x = flush(si * q.x + ti);
    T const got = w[o];
    long double const err = std::fabs(static_cast<long double>(got) - q.x);
    long double const tol = tol_of(q.E, q.M, q.x);
    if (!(err <= tol))
      f.add([&] {
        return fmt::format(
            "sequence {} element {}: got {:.9g}, exact {:.17g}, error {:.3g} > tolerance {:.3g}", k,
            rev ? lay.n - 1 - j : j, static_cast<double>(got), q.x, err, tol);
      });
  };
  // Walks a task's elements in memory order, calling visit(state index, k, j).
  auto const walk = [&](std::int64_t task, auto&& visit) {
    std::int64_t const k0 = tr.k_begin(task), k1 = tr.k_end(task), j0 = tr.j_begin(task), j1 = tr.j_end(task);
    if (tr.rows) {
      for (std::int64_t j = j0; j < j1; ++j)
        for (std::int64_t k = k0; k < k1; ++k) visit(k - k0, k, j);
    } else {
      for (std::int64_t k = k0; k < k1; ++k)
        for (std::int64_t j = j0; j < j1; ++j) visit(k - k0, k, j);
    }
  };
  // The state entering each chunk of each sequence: with several chunks, from
  // the composed maps of the chunks before it.
  std::vector<exact_state> entry(static_cast<std::size_t>(lay.count * tr.chunks));
  auto const entry_of = [&](std::int64_t k, std::int64_t c) -> exact_state& {
    return entry[static_cast<std::size_t>(k * tr.chunks + c)];
  };
  for (std::int64_t k = 0; k < lay.count; ++k) {
    long double const x = p.init_of(k);
    entry_of(k, 0) = {x, std::fabs(x), 0};
  }
  if (tr.chunks > 1) {
    std::vector<exact_map> maps(entry.size());
    parallel_for(tr.tasks(), tr.workers, [&](std::int64_t task, int) {
      std::int64_t const c = task % tr.chunks, k0 = tr.k_begin(task);
      if (c == tr.chunks - 1) return;  // the last chunk's map is not needed
      // Composed locally, stored once: neighbouring maps belong to tasks on
      // other threads.
      std::vector<exact_map> local(static_cast<std::size_t>(tr.k_end(task) - k0));
      walk(task, [&](std::int64_t idx, std::int64_t k, std::int64_t j) {
        std::int64_t const o = offset_of(k, j);
        local[static_cast<std::size_t>(idx)].then(s_of(o), t_of(o));
      });
      for (std::size_t i = 0; i < local.size(); ++i)
        maps[static_cast<std::size_t>((k0 + static_cast<std::int64_t>(i)) * tr.chunks + c)] = local[i];
    });
    for (std::int64_t k = 0; k < lay.count; ++k)
      for (std::int64_t c = 1; c < tr.chunks; ++c)
        entry_of(k, c) = maps[static_cast<std::size_t>(k * tr.chunks + c - 1)](entry_of(k, c - 1));
  }
  parallel_for(tr.tasks(), tr.workers, [&](std::int64_t task, int worker) {
    std::int64_t const k0 = tr.k_begin(task), c = task % tr.chunks;
    std::vector<exact_state> q(static_cast<std::size_t>(tr.k_end(task) - k0));
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = entry_of(k0 + static_cast<std::int64_t>(i), c);
    walk(task, [&](std::int64_t idx, std::int64_t k, std::int64_t j) {
      step(q[static_cast<std::size_t>(idx)], k, j, fails[static_cast<std::size_t>(worker)]);
    });
  });

  // final_state: the last w written, bit for bit (init when n == 0).
  if (sp.final_state) {
    if (out.final_state.size() != p.final_size()) {
      serial.add([&] { return std::string("final_state buffer missing"); });
    } else {
      for (std::int64_t k = 0; k < lay.count; ++k) {
        T const f = out.final_state[static_cast<std::size_t>(g + k)];
        T const want = lay.n > 0 ? w[offset_of(k, lay.n - 1)] : p.init_of(k);
        if (!same_bits(f, want))
          serial.add([&] {
            return fmt::format("final_state[{}] = {:.9g}, expected {:.9g} ({})", k, static_cast<double>(f),
                               static_cast<double>(want),
                               lay.n > 0 ? "the last w written, bit for bit" : "init, n == 0");
          });
      }
      for (std::int64_t b = 0; b < g; ++b)
        if (!is_poison(out.final_state[static_cast<std::size_t>(b)]) ||
            !is_poison(out.final_state[static_cast<std::size_t>(g + lay.count + b)]))
          serial.add([&] { return fmt::format("final_state guard element {} was written", b); });
    }
  }

  std::string msg;
  std::int64_t bad = 0;
  for (auto const& f : fails) {
    bad += f.count;
    for (auto const& m : f.first)
      if (msg.size() < 2000) msg += m + "\n";
  }
  if (bad) msg += fmt::format("{} failures in total", bad);
  return msg;
}

}  // namespace recur_test

namespace recur_test {

// One call through recur::host on host copies of the problem.
template <class T>
outputs<T> run_host(problem<T> const& p, recur::host ex) {
  constexpr std::int64_t g = problem<T>::guard;
  outputs<T> out;
  auto const& start = w_start(p);
  if (start.empty())
    out.w.assign(p.size(), poison<T>());
  else
    out.w = start;
  if (p.sp.final_state) out.final_state.assign(p.final_size(), poison<T>());
  T* w = out.w.data() + g;
  recur::operand<T> const s = p.s.empty() ? recur::operand<T>(p.s_value)
                                          : recur::operand<T>(p.sp.where == place::w_is_s ? w : p.s_ptr());
  recur::operand<T> const t = p.t.empty() ? recur::operand<T>(p.t_value)
                                          : recur::operand<T>(p.sp.where == place::w_is_t ? w : p.t_ptr());
  T* const f = p.sp.final_state ? out.final_state.data() + g : nullptr;
  recur::linrec(ex, s, t, w, p.sp.lay, p.options(p.init_ptr(), f));
  return out;
}

}  // namespace recur_test
