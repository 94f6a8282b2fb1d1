#pragma once
// A scan over any associative operator on the host, and the options that
// recur::device::scan (kernels/dispatch/dispatch_scan.cuh) and
// recur::dist::scan (dist_scan.hpp) share:
//
//   struct max_op {
//     float operator()(float l, float r) const { return l < r ? r : l; }
//   };
//   recur::scan(recur::host{}, in, out, recur::layout::contiguous(n), max_op{});  // running maximum
//
// Each sequence of the layout is scanned on its own: inclusive,
// out_i = x_0 op x_1 op ... op x_i (init op x_0 op ... with an initial
// value), or exclusive, out_i = init op x_0 op ... op x_(i-1) with
// out_0 = init (an initial value is then required). The operator must be
// associative; it need not commute: op(l, r) means "l first, then r", the
// convention of recur::ops (ops::compose scans affine maps, so
// recur::scan(host{}, maps, maps, lay, ops::compose{}) composes them). T is
// any copyable value type; out may equal in (in place), other overlaps are
// refused.
//
// Header-only, since the operator is the caller's type; the checks and the
// threads are librecur's. The sequences run in parallel over host.threads
// (0: the library's choice). A batch with fewer sequences than threads
// splits each long sequence into chunks, the CPU backend's P-scheme
// (lib/cpu/pscheme.hpp, whose rule picks the chunk count): each chunk is
// reduced, the chunk totals are folded in order, and each chunk is scanned
// from its prefix (each element read twice, written once), so the grouping,
// and so floating-point rounding, depends on the thread budget, never on
// scheduling. The operator must not throw.
//
// Errors (recur::invalid_argument, nothing written): a bad layout, null or
// misaligned in or out for a non-empty batch, in and out overlapping other
// than in place, exclusive without has_init, inits without has_init,
// host.threads < 0.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>

namespace recur {

template <class T>
struct scan_options {
  bool exclusive = false;  // out_i = init op x_0 op ... op x_(i-1); out_0 = init
  bool has_init = false;   // an initial value; required when exclusive
  T init{};                // the initial value of every sequence ...
  // ... or, where given (with has_init), one per sequence (lay.count of
  // them; in the memory of the call's executor: device memory for
  // recur::device::scan).
  T const* inits = nullptr;
};

namespace detail {

// What the checks of a generic scan need to know of its arguments.
struct scan_arguments {
  void const* in;
  void const* out;
  layout lay;
  std::size_t value_bytes, value_align;
  bool exclusive, has_init;
  void const* inits;
  bool device;      // in, out and inits must be device memory
  int threads = 0;  // host.threads (host calls)
};

// Throws invalid_argument (message starting with fn) for the errors listed
// above; device: where in, out or inits is not device memory.
void check_scan(char const* fn, scan_arguments const& a);

// How a batch runs on the host, decided in librecur by the CPU backend's
// rule (lib/cpu/pscheme.hpp): `threads` threads over `chunks` pieces of each
// sequence (1: whole sequences), piece c of a sequence of n covering
// [begin(c, n), begin(c + 1, n)).
struct scan_plan {
  int threads = 1;
  std::int64_t chunks = 1;
  std::int64_t begin(std::int64_t c, std::int64_t n) const { return n * c / chunks; }
};
scan_plan host_scan_plan(host const& ex, layout const& lay);

// Runs body(ctx, begin, end) over `threads` static blocks of [0, items)
// (OpenMP, in librecur).
void host_parallel_for(int threads, std::int64_t items, void (*body)(void*, std::int64_t, std::int64_t),
                       void* ctx);

template <class F>
void parallel_for(int threads, std::int64_t items, F&& f) {
  using G = std::remove_reference_t<F>;
  host_parallel_for(
      threads, items, [](void* c, std::int64_t b, std::int64_t e) { (*static_cast<G*>(c))(b, e); }, &f);
}

// A running value of a scan: none yet, or `value`.
template <class T>
struct scan_state {
  T value{};
  bool has = false;
};

template <class T, class Op>
scan_state<T> fold(scan_state<T> s, T const& x, Op const& op) {
  return {s.has ? op(s.value, x) : x, true};
}

// Elements [b, e) of sequence k folded into s (read only).
template <class T, class Op>
scan_state<T> reduce_range(T const* in, layout const& lay, std::int64_t k, std::int64_t b, std::int64_t e,
                           Op const& op, scan_state<T> s) {
  for (std::int64_t i = b; i < e; ++i) s = fold(s, in[lay.offset(i, k)], op);
  return s;
}

// Elements [b, e) of sequence k scanned from s into out (each element read
// before its output is written, so out may be in).
template <class T, class Op>
scan_state<T> scan_range(T const* in, T* out, layout const& lay, std::int64_t k, std::int64_t b,
                         std::int64_t e, Op const& op, bool exclusive, scan_state<T> s) {
  for (std::int64_t i = b; i < e; ++i) {
    std::int64_t const o = lay.offset(i, k);
    T const x = in[o];
    if (exclusive) out[o] = s.value;  // exclusive scans always have a value (the initial one)
    s = fold(s, x, op);
    if (!exclusive) out[o] = s.value;
  }
  return s;
}

// Each sequence's reduction from start(k) (a scan_state) into totals[k];
// chunked as the scan is.
template <class T, class Op, class Start>
void host_reduce(host const& ex, T const* in, layout const& lay, Op const& op, Start const& start,
                 scan_state<T>* totals) {
  scan_plan const ch = host_scan_plan(ex, lay);
  std::int64_t const pieces = ch.chunks * lay.count;
  std::vector<scan_state<T>> part(ch.chunks > 1 ? static_cast<std::size_t>(pieces) : 0);
  parallel_for(ch.threads, pieces, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t p = b; p < e; ++p) {
      std::int64_t const k = p / ch.chunks, c = p % ch.chunks;
      if (ch.chunks == 1)
        totals[k] = reduce_range(in, lay, k, 0, lay.n, op, start(k));
      else
        part[p] = reduce_range(in, lay, k, ch.begin(c, lay.n), ch.begin(c + 1, lay.n), op, scan_state<T>{});
    }
  });
  if (ch.chunks == 1) return;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    scan_state<T> s = start(k);
    for (std::int64_t c = 0; c < ch.chunks; ++c) s = fold(s, part[k * ch.chunks + c].value, op);
    totals[k] = s;
  }
}

// Each sequence scanned from start(k); chunked as above (the chunks'
// prefixes from their reductions).
template <class T, class Op, class Start>
void host_scan(host const& ex, T const* in, T* out, layout const& lay, Op const& op, bool exclusive,
               Start const& start) {
  scan_plan const ch = host_scan_plan(ex, lay);
  std::int64_t const pieces = ch.chunks * lay.count;
  std::vector<scan_state<T>> prefix(ch.chunks > 1 ? static_cast<std::size_t>(pieces) : 0);
  if (ch.chunks > 1) {
    // Reduce every chunk but each sequence's last, then fold the prefixes.
    parallel_for(ch.threads, pieces, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t p = b; p < e; ++p)
        if (std::int64_t const c = p % ch.chunks; c + 1 < ch.chunks)
          prefix[p] = reduce_range(in, lay, p / ch.chunks, ch.begin(c, lay.n), ch.begin(c + 1, lay.n), op,
                                   scan_state<T>{});
    });
    for (std::int64_t k = 0; k < lay.count; ++k) {
      scan_state<T> s = start(k);
      for (std::int64_t c = 0; c < ch.chunks; ++c) {
        scan_state<T> const total = prefix[k * ch.chunks + c];
        prefix[k * ch.chunks + c] = s;
        if (c + 1 < ch.chunks) s = fold(s, total.value, op);
      }
    }
  }
  parallel_for(ch.threads, pieces, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t p = b; p < e; ++p) {
      std::int64_t const k = p / ch.chunks, c = p % ch.chunks;
      scan_state<T> const s = ch.chunks > 1 ? prefix[p] : start(k);
      scan_range(in, out, lay, k, ch.begin(c, lay.n), ch.begin(c + 1, lay.n), op, exclusive, s);
    }
  });
}

// A sequence's initial state under opt (inits in host memory).
template <class T>
scan_state<T> initial_state(scan_options<T> const& opt, std::int64_t k) {
  if (!opt.has_init) return {};
  return {opt.inits ? opt.inits[k] : opt.init, true};
}

}  // namespace detail

template <class T, class Op>
void scan(host const& ex, T const* in, T* out, layout const& lay, Op op,
          scan_options<std::type_identity_t<T>> const& opt = {}) {
  static_assert(std::is_copy_constructible_v<T> && std::is_copy_assignable_v<T>, "recur::scan: T must copy");
  detail::scan_arguments const args{in,           out,       lay,   sizeof(T), alignof(T), opt.exclusive,
                                    opt.has_init, opt.inits, false, ex.threads};
  detail::check_scan("recur::scan", args);
  if (lay.n == 0 || lay.count == 0) return;
  detail::host_scan(ex, in, out, lay, op, opt.exclusive,
                    [&](std::int64_t k) { return detail::initial_state(opt, k); });
}

}  // namespace recur
