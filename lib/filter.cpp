// Host API of the IIR filters (lfilter, lfilter_zi, sosfilt) and the DPCM
// codecs: every argument checked before anything is written, then sequences
// spread over OpenMP threads, each filtered sequentially by the references'
// arithmetic (include/recur/reference/lfilter.hpp, dpcm.hpp), so the results
// are the references' bit for bit whatever the thread count. lfilter,
// sosfilt and the floating-point DPCM codecs with recur::cuda run the same
// checks, then those of the GPU (order at most 8, device memory), and call
// the CUDA backends (filter_backends.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include <recur/filter.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include "arg_check.hpp"
#include "filter_backends.hpp"
#include "linrec_backends.hpp"  // check_device_pointer

namespace recur {
namespace {

using detail::byte_span;
using detail::span_of;

// ------------------------------------------------------------------ checks --

void check_threads(char const* fn, host const& ex) {
  if (ex.threads < 0) detail::bad_argument(fn, fmt::format("host.threads = {} is negative", ex.threads));
}

// A length given by the caller (pointer-and-length forms).
void check_length(char const* fn, char const* name, std::int64_t v) {
  if (v < 0) detail::bad_argument(fn, fmt::format("{} = {} is negative", name, v));
}

template <class T>
void check_finite(char const* fn, char const* name, T const* p, std::int64_t size) {
  for (std::int64_t j = 0; j < size; ++j)
    if (!std::isfinite(p[j]))
      detail::bad_argument(fn, fmt::format("{}[{}] = {} is not finite", name, j, p[j]));
}

// count * per values of per-sequence state, checked not to overflow.
std::int64_t state_size(char const* fn, char const* what, std::int64_t count, std::int64_t per) {
  if (per > 0 && count > std::numeric_limits<std::int64_t>::max() / per)
    detail::bad_argument(fn, fmt::format("layout.count * {} = {} * {} overflows", what, count, per));
  return count * per;
}

// A per-sequence state array: `given` values (-1: as many as needed, the
// pointer forms) where `need` are needed; none at all is always fine.
template <class T>
void check_state(char const* fn, char const* name, T const* p, std::int64_t given, std::int64_t need,
                 char const* unit) {
  detail::check_pointer(fn, p, name, false);
  if (!p || given < 0) return;
  if (given != need)
    detail::bad_argument(fn, fmt::format("{} has {} values; {} are needed (layout.count times {}), or none",
                                         name, given, need, unit));
}

// The layout with the strides an empty or degenerate batch leaves unused made
// well defined (as lib/linrec.cpp does).
layout normalised_layout(layout const& lay) {
  layout l = lay;
  if (l.n <= 1) l.element_stride = 1;
  if (l.count <= 1) l.batch_stride = l.n * l.element_stride;
  return l;
}

// Overlap rules shared by every function here: the output `out` may be the
// input `in` exactly (in place); nothing else may overlap an output.
struct overlap_check {
  char const* fn;
  void disjoint(byte_span a, char const* an, byte_span b, char const* bn) const {
    if (a.intersects(b)) detail::bad_argument(fn, fmt::format("{} overlaps {}", an, bn));
  }
  template <class T>
  void in_place(T const* out, byte_span so, char const* on, T const* in, byte_span si,
                char const* in_name) const {
    if (out != in && so.intersects(si))
      detail::bad_argument(
          fn, fmt::format("{} overlaps {} (only {} == {} exactly is allowed)", on, in_name, on, in_name));
  }
};

// Threads for `tasks` independent tasks over `elements` samples in all: at
// most host.threads (or OpenMP's maximum), at most one per task, and at least
// 2^14 samples per thread (below that, starting threads costs more than it
// saves). Results do not depend on it: every sequence is computed whole by
// one thread.
int thread_budget(host const& ex, std::int64_t tasks, std::int64_t elements) {
  std::int64_t const t = ex.threads > 0 ? ex.threads : omp_get_max_threads();
  return static_cast<int>(std::max<std::int64_t>(1, std::min({t, tasks, elements >> 14})));
}

// Sequences advanced together, row by row, when the layout puts adjacent
// sequences closer than adjacent elements (interleaved): every access then
// runs along memory, and a row of 256 sequences fills whole pages (64 would
// touch every page of the batch for 256 bytes: 2.5x slower, by TLB misses, at
// 2^14 x 1024 f32). As in lib/cpu/linrec_cpu.cpp. The per-sequence arithmetic
// is unchanged.
std::int64_t sequence_block(layout const& l) {
  return l.count > 1 && l.n > 1 && l.batch_stride < l.element_stride ? 256 : 1;
}

// ----------------------------------------------------------------- lfilter --

template <class T>
using normalised_filter = reference::detail::normalised_filter<T>;

// b and a checked and normalised by a[0] (the reference's normalisation).
template <class T>
normalised_filter<T> checked_filter(char const* fn, T const* b, std::int64_t nb, T const* a,
                                    std::int64_t na) {
  check_length(fn, "nb", nb);
  check_length(fn, "na", na);
  if (nb == 0) detail::bad_argument(fn, "b is empty");
  if (na == 0) detail::bad_argument(fn, "a is empty");
  detail::check_pointer(fn, b, "b", true);
  detail::check_pointer(fn, a, "a", true);
  check_finite(fn, "b", b, nb);
  check_finite(fn, "a", a, na);
  if (a[0] == T(0)) detail::bad_argument(fn, "a[0] = 0: the filter cannot be normalised");
  auto f = reference::detail::normalise<T>(fn, std::span<T const>(b, static_cast<std::size_t>(nb)),
                                           std::span<T const>(a, static_cast<std::size_t>(na)));
  for (std::int64_t j = 0; j < nb; ++j)
    if (!std::isfinite(f.b[j]))
      detail::bad_argument(fn, fmt::format("b[{}] / a[0] = {} / {} is not finite", j, b[j], a[0]));
  for (std::int64_t j = 0; j < na; ++j)
    if (!std::isfinite(f.a[j]))
      detail::bad_argument(fn, fmt::format("a[{}] / a[0] = {} / {} is not finite", j, a[j], a[0]));
  return f;
}

// Sections of scipy's sos array checked and normalised, flattened: section j's
// b at b[3 j], its a at a[3 j].
template <class T>
struct normalised_sections {
  std::vector<T> b, a;
  std::int64_t count() const { return static_cast<std::int64_t>(b.size() / 3); }
};

template <class T>
normalised_sections<T> checked_sections(char const* fn, std::span<T const> sos) {
  if (sos.empty() || sos.size() % 6 != 0)
    detail::bad_argument(fn,
                         fmt::format("sos has {} values, not a positive multiple of 6 (n_sections rows of "
                                     "b0 b1 b2 a0 a1 a2)",
                                     sos.size()));
  detail::check_pointer(fn, sos.data(), "sos", true);
  std::int64_t const ns = static_cast<std::int64_t>(sos.size() / 6);
  for (std::int64_t j = 0; j < ns; ++j)
    for (int c = 0; c < 6; ++c)
      if (!std::isfinite(sos[6 * j + c]))
        detail::bad_argument(fn, fmt::format("sos[{}][{}] = {} is not finite", j, c, sos[6 * j + c]));
  normalised_sections<T> s{std::vector<T>(static_cast<std::size_t>(3 * ns)),
                           std::vector<T>(static_cast<std::size_t>(3 * ns))};
  for (std::int64_t j = 0; j < ns; ++j) {
    T const a0 = sos[6 * j + 3];
    if (a0 == T(0))
      detail::bad_argument(
          fn, fmt::format("sos[{}][3] = 0 (a0 of section {}): the section cannot be normalised", j, j));
    auto const f = reference::detail::normalise<T>(fn, sos.subspan(6 * j, 3), sos.subspan(6 * j + 3, 3));
    for (int c = 0; c < 3; ++c) {
      if (!std::isfinite(f.b[c]) || !std::isfinite(f.a[c]))
        detail::bad_argument(fn, fmt::format("section {} divided by a0 = {} is not finite", j, a0));
      s.b[3 * j + c] = f.b[c];
      s.a[3 * j + c] = f.a[c];
    }
  }
  return s;
}

// The checks every filter call shares once its coefficients are known:
// layout, pointers, state sizes, overlaps. `coeffs` are the caller's
// coefficient arrays (outputs must not overlap them either).
template <class T>
void check_filter_call(char const* fn, T const* x, T* y, layout const& lay, T const* zi, std::int64_t zi_size,
                       T* zf, std::int64_t zf_size, std::int64_t per_sequence, char const* unit,
                       std::initializer_list<std::pair<byte_span, char const*>> coeffs) {
  detail::check_layout(fn, lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(fn, x, "x", work);
  detail::check_pointer(fn, y, "y", work);
  std::int64_t const need = state_size(fn, "order", lay.count, per_sequence);
  check_state(fn, "zi", zi, zi_size, need, unit);
  check_state(fn, "zf", zf, zf_size, need, unit);
  byte_span const sx = span_of(x, lay), sy = span_of<T>(y, lay);
  byte_span const szi = span_of(zi, need), szf = span_of<T>(zf, need);
  overlap_check const o{fn};
  o.in_place<T>(y, sy, "y", x, sx, "x");
  o.disjoint(sy, "y", szi, "zi");
  o.disjoint(szf, "zf", sy, "y");
  o.disjoint(szf, "zf", sx, "x");
  o.in_place<T>(zf, szf, "zf", zi, szi, "zi");
  for (auto const& [sc, name] : coeffs) {
    o.disjoint(sy, "y", sc, name);
    o.disjoint(szf, "zf", sc, name);
  }
}

// The direct form II transposed step of the reference over a batch. `sections`
// filters of order `order` in cascade (lfilter: one section of any order;
// sosfilt: order 2), section j's normalised coefficients at b + j * (order +
// 1) and a + j * (order + 1). State: sections * order values per sequence.
//
// df2t_block advances sequences [k0, k1) together, row by row, their states
// in z (k1 - k0 times `per` values). It is a function of its own, its
// arguments passed by value, rather than the body of the OpenMP loop: there
// the shared variables live behind a pointer that every store to y might
// alias, and were reloaded on every sample (1.7x slower). Order > 0 fixes the
// order at compile time (the reference's step with its loop unrolled by the
// compiler: the same operations in the same order); Order = 0 takes it from
// order_arg.
template <std::int64_t Order, class T>
void df2t_block(T const* b, T const* a, std::int64_t sections, std::int64_t order_arg, T const* x, T* y,
                layout const lay_ref, std::int64_t k0, std::int64_t k1, T const* zi, T* zf, T* z) {
  layout const lay = lay_ref;
  std::int64_t const order = Order > 0 ? Order : order_arg;
  std::int64_t const per = sections * order, stride = order + 1;
  for (std::int64_t k = k0; k < k1; ++k)
    for (std::int64_t j = 0; j < per; ++j) z[(k - k0) * per + j] = zi ? zi[k * per + j] : T(0);
  if (k1 - k0 == 1 && sections == 1) {
    // One sequence, one section: the reference's own loop.
    std::int64_t const es = lay.element_stride;
    T const* xs = x + lay.offset(0, k0);
    T* ys = y + lay.offset(0, k0);
    for (std::int64_t i = 0; i < lay.n; ++i)
      ys[i * es] = reference::detail::df2t_step(b, a, order, z, xs[i * es]);
  } else {
    for (std::int64_t i = 0; i < lay.n; ++i)
      for (std::int64_t k = k0; k < k1; ++k) {
        std::int64_t const off = lay.offset(i, k);
        T v = x[off];
        T* const zk = z + (k - k0) * per;
        for (std::int64_t s = 0; s < sections; ++s)
          v = reference::detail::df2t_step(b + s * stride, a + s * stride, order, zk + s * order, v);
        y[off] = v;
      }
  }
  if (zf)
    for (std::int64_t k = k0; k < k1; ++k)
      for (std::int64_t j = 0; j < per; ++j) zf[k * per + j] = z[(k - k0) * per + j];
}

template <class T>
void df2t_batch(host const& ex, T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* x,
                T* y, layout const& lay, T const* zi, T* zf) {
  std::int64_t const per = sections * order;
  std::int64_t const block = sequence_block(lay);
  std::int64_t const blocks = (lay.count + block - 1) / block;
  int const threads = thread_budget(ex, blocks, lay.n * lay.count * sections);
  // Each thread's states on cache lines of their own (no false sharing),
  // allocated here, not inside the parallel region: nothing may throw there.
  constexpr std::int64_t line = 64 / sizeof(T);
  std::int64_t const room = (block * per + line - 1) / line * line + line;
  std::vector<T> state(static_cast<std::size_t>(threads * room));
  auto const run = order == 1   ? &df2t_block<1, T>
                   : order == 2 ? &df2t_block<2, T>
                   : order == 3 ? &df2t_block<3, T>
                   : order == 4 ? &df2t_block<4, T>
                                : &df2t_block<0, T>;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t bi = 0; bi < blocks; ++bi) {
    std::int64_t const k0 = bi * block;
    run(b, a, sections, order, x, y, lay, k0, std::min(lay.count, k0 + block), zi, zf,
        state.data() + static_cast<std::int64_t>(omp_get_thread_num()) * room);
  }
}

// zi_size / zf_size: -1 when the caller gave pointers (as many values as needed).
template <class T>
void run_lfilter(host const& ex, T const* b, std::int64_t nb, T const* a, std::int64_t na, T const* x, T* y,
                 layout const& lay, T const* zi, std::int64_t zi_size, T* zf, std::int64_t zf_size) {
  constexpr char const* fn = "recur::lfilter";
  check_threads(fn, ex);
  auto const f = checked_filter(fn, b, nb, a, na);
  std::int64_t const m = f.order();
  check_filter_call<T>(fn, x, y, lay, zi, zi_size, zf, zf_size, m, "the order max(len(a), len(b)) - 1",
                       {{span_of(b, nb), "b"}, {span_of(a, na), "a"}});
  if (lay.count == 0) return;
  df2t_batch(ex, f.b.data(), f.a.data(), 1, m, x, y, normalised_layout(lay), zi, zf);
}

// recur::cuda: the host checks (the same errors, nothing written on error),
// then what the GPU needs: an order it implements, coefficients the host can
// read (they are checked and normalised here), and device-accessible x, y,
// zi and zf. Everything is checked before the backend is called.
template <class T>
void run_lfilter_cuda(cuda const& ex, T const* b, std::int64_t nb, T const* a, std::int64_t na, T const* x,
                      T* y, layout const& lay, T const* zi, std::int64_t zi_size, T* zf,
                      std::int64_t zf_size) {
  constexpr char const* fn = "recur::lfilter";
  // Whatever the call, even an empty one (as linrec): code that runs in a
  // CPU-only build must not appear to work until its first non-empty batch.
  if (!cuda_compiled())
    throw not_compiled(
        "recur::lfilter: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
  // b and a are read on the host: device memory there would fault.
  if (b && nb > 0) detail::check_host_pointer(fn, b, "b");
  if (a && na > 0) detail::check_host_pointer(fn, a, "a");
  auto const f = checked_filter(fn, b, nb, a, na);
  std::int64_t const m = f.order();
  if (m > detail::lfilter_cuda_max_order)
    detail::bad_argument(fn,
                         fmt::format("order {} (max(len(a), len(b)) - 1) is not supported with recur::cuda: "
                                     "the CUDA backend supports orders 0-{} (recur::host has no limit)",
                                     m, detail::lfilter_cuda_max_order));
  check_filter_call<T>(fn, x, y, lay, zi, zi_size, zf, zf_size, m, "the order max(len(a), len(b)) - 1",
                       {{span_of(b, nb), "b"}, {span_of(a, na), "a"}});
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, x, "x");
    if (y != x) detail::check_device_pointer(fn, y, "y");
  }
  if (lay.count > 0 && m > 0) {  // order 0 has no state: zi and zf are never touched
    if (zi) detail::check_device_pointer(fn, zi, "zi");
    if (zf && zf != zi) detail::check_device_pointer(fn, zf, "zf");
  }
  if (lay.count == 0) return;
  detail::lfilter_cuda<T>(b, nb, a, na, x, y, normalised_layout(lay), zi, m > 0 ? zf : nullptr, ex.stream);
}

template <class T>
void run_sosfilt(host const& ex, std::span<T const> sos, T const* x, T* y, layout const& lay,
                 std::span<T const> zi, std::span<T> zf) {
  constexpr char const* fn = "recur::sosfilt";
  check_threads(fn, ex);
  auto const s = checked_sections(fn, sos);
  std::int64_t const ns = s.count();
  T const* const zip = zi.empty() ? nullptr : zi.data();
  T* const zfp = zf.empty() ? nullptr : zf.data();
  check_filter_call<T>(fn, x, y, lay, zip, static_cast<std::int64_t>(zi.size()), zfp,
                       static_cast<std::int64_t>(zf.size()), 2 * ns, "2 n_sections",
                       {{span_of(sos.data(), static_cast<std::int64_t>(sos.size())), "sos"}});
  if (lay.count == 0) return;
  df2t_batch(ex, s.b.data(), s.a.data(), ns, 2, x, y, normalised_layout(lay), zip, zfp);
}

// recur::cuda: the host's checks, then the GPU's (device memory, sos on the
// host), then the LTI backend.
template <class T>
void run_sosfilt_cuda(cuda const& ex, std::span<T const> sos, T const* x, T* y, layout const& lay,
                      std::span<T const> zi, std::span<T> zf) {
  constexpr char const* fn = "recur::sosfilt";
  if (!cuda_compiled())
    throw not_compiled("recur::sosfilt: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
  if (!sos.empty()) detail::check_host_pointer(fn, sos.data(), "sos");
  auto const s = checked_sections(fn, sos);
  std::int64_t const ns = s.count();
  T const* const zip = zi.empty() ? nullptr : zi.data();
  T* const zfp = zf.empty() ? nullptr : zf.data();
  check_filter_call<T>(fn, x, y, lay, zip, static_cast<std::int64_t>(zi.size()), zfp,
                       static_cast<std::int64_t>(zf.size()), 2 * ns, "2 n_sections",
                       {{span_of(sos.data(), static_cast<std::int64_t>(sos.size())), "sos"}});
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(fn, x, "x");
    if (y != x) detail::check_device_pointer(fn, y, "y");
  }
  if (lay.count > 0) {
    if (zip) detail::check_device_pointer(fn, zip, "zi");
    if (zfp && zfp != zip) detail::check_device_pointer(fn, zfp, "zf");
  }
  if (lay.count == 0) return;
  detail::sosfilt_cuda<T>(sos.data(), ns, x, y, normalised_layout(lay), zip, zfp, ex.stream);
}

template <class T>
std::vector<T> run_lfilter_zi(std::span<T const> b, std::span<T const> a) {
  constexpr char const* fn = "recur::lfilter_zi";
  checked_filter(fn, b.data(), static_cast<std::int64_t>(b.size()), a.data(),
                 static_cast<std::int64_t>(a.size()));
  try {
    return reference::lfilter_zi<T>(b, a);
  } catch (invalid_argument const& e) {
    // The one failure left: no steady state. Keep the reason, name this entry point.
    std::string what = e.what();
    std::string const prefix = "recur::reference::lfilter_zi: ";
    if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
    detail::bad_argument(fn, what);
  }
}

// -------------------------------------------------------------------- DPCM --

// How a DPCM call names its arrays: encode reads x and writes e, decode the
// reverse.
struct dpcm_names {
  char const* fn;
  char const* in;
  char const* out;
};
constexpr dpcm_names encode_names{"recur::dpcm_encode", "x", "e"};
constexpr dpcm_names decode_names{"recur::dpcm_decode", "e", "x"};

void check_integer_predictor(char const* fn, std::span<std::int64_t const> c, int shift) {
  if (shift < 0 || shift > 62) detail::bad_argument(fn, fmt::format("shift = {} is outside [0, 62]", shift));
  if (!c.empty()) detail::check_pointer(fn, c.data(), "c", true);
  std::uint64_t total = 0;
  for (std::size_t j = 0; j < c.size(); ++j) {
    std::uint64_t const m =
        c[j] < 0 ? 0 - static_cast<std::uint64_t>(c[j]) : static_cast<std::uint64_t>(c[j]);
    if (m > (std::uint64_t{1} << 31) || (total += m) > (std::uint64_t{1} << 31))
      detail::bad_argument(
          fn, fmt::format("sum |c_j| exceeds 2^31 (at c[{}] = {}): the int64 prediction would not "
                          "be exact",
                          j, c[j]));
  }
}

template <class T>
void check_float_predictor(char const* fn, std::span<T const> c) {
  if (!c.empty()) detail::check_pointer(fn, c.data(), "c", true);
  check_finite(fn, "c", c.data(), static_cast<std::int64_t>(c.size()));
}

// Layout, pointers, init's size, overlaps; the coefficients are checked by
// the caller. C is the coefficients' element type.
template <class S, class C>
void check_dpcm_call(dpcm_names const& nm, std::span<C const> c, S const* in, S* out, layout const& lay,
                     std::span<S const> init) {
  detail::check_layout(nm.fn, lay, sizeof(S));
  bool const work = lay.n > 0 && lay.count > 0;
  detail::check_pointer(nm.fn, in, nm.in, work);
  detail::check_pointer(nm.fn, out, nm.out, work);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  std::int64_t const need = state_size(nm.fn, "order", lay.count, k);
  check_state(nm.fn, "init", init.empty() ? nullptr : init.data(), static_cast<std::int64_t>(init.size()),
              need, "the order c.size()");
  byte_span const si = span_of(in, lay), so = span_of<S>(out, lay);
  byte_span const sinit = span_of(init.empty() ? nullptr : init.data(), need);
  byte_span const sc = span_of(c.data(), k);
  overlap_check const o{nm.fn};
  o.in_place<S>(out, so, nm.out, in, si, nm.in);
  o.disjoint(so, nm.out, sinit, "init");
  o.disjoint(so, nm.out, sc, "c");
}

// Sequences over threads; each one is the reference's call on that sequence
// alone (a one-sequence layout at its first element, its init values).
template <class S, class Body>
void dpcm_batch(host const& ex, layout const& lay, std::int64_t k, std::span<S const> init, Body body) {
  if (lay.count == 0) return;
  layout const l = normalised_layout(lay);
  layout const one{l.n, 1, l.element_stride, l.n * l.element_stride};
  S const* const ip = init.empty() ? nullptr : init.data();
  int const threads = thread_budget(ex, l.count, l.n * l.count);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t s = 0; s < l.count; ++s) body(l.offset(0, s), one, ip ? ip + s * k : nullptr);
}

template <class S>
void run_dpcm_int(host const& ex, bool encode, std::span<std::int64_t const> c, int shift, S const* in,
                  S* out, layout const& lay, std::span<S const> init) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  check_threads(nm.fn, ex);
  check_integer_predictor(nm.fn, c, shift);
  check_dpcm_call<S, std::int64_t>(nm, c, in, out, lay, init);
  dpcm_batch<S>(ex, lay, static_cast<std::int64_t>(c.size()), init,
                [&](std::int64_t off, layout const& one, S const* is) {
                  if (encode)
                    reference::dpcm_encode<S>(c, shift, in + off, out + off, one, is);
                  else
                    reference::dpcm_decode<S>(c, shift, in + off, out + off, one, is);
                });
}

// recur::cuda: the same checks, then the GPU's (order at most 8, device
// memory, a host coefficient array), then the backend.
template <class S>
void run_dpcm_int_cuda(cuda const& ex, bool encode, std::span<std::int64_t const> c, int shift, S const* in,
                       S* out, layout const& lay, std::span<S const> init) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  if (!cuda_compiled())
    throw not_compiled(std::string(nm.fn) +
                       ": this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
  if (!c.empty()) detail::check_host_pointer(nm.fn, c.data(), "c");
  check_integer_predictor(nm.fn, c, shift);
  check_dpcm_call<S, std::int64_t>(nm, c, in, out, lay, init);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  if (k > detail::predictor_cuda_max_order)
    detail::bad_argument(nm.fn, fmt::format("order {} (c.size()) is not supported with recur::cuda: the CUDA "
                                            "backend supports orders 0-{} (recur::host has no limit)",
                                            k, detail::predictor_cuda_max_order));
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(nm.fn, in, nm.in);
    if (out != in) detail::check_device_pointer(nm.fn, out, nm.out);
    if (!init.empty()) detail::check_device_pointer(nm.fn, init.data(), "init");
  }
  if (lay.count == 0 || lay.n == 0) return;
  detail::dpcm_int_cuda<S>(encode, c.data(), k, shift, in, out, normalised_layout(lay),
                           init.empty() ? nullptr : init.data(), ex.stream);
}

template <class T>
void run_dpcm_float(host const& ex, bool encode, std::span<T const> c, T const* in, T* out, layout const& lay,
                    std::span<T const> init) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  check_threads(nm.fn, ex);
  check_float_predictor(nm.fn, c);
  check_dpcm_call<T, T>(nm, c, in, out, lay, init);
  dpcm_batch<T>(ex, lay, static_cast<std::int64_t>(c.size()), init,
                [&](std::int64_t off, layout const& one, T const* is) {
                  if (encode)
                    reference::dpcm_encode<T>(c, in + off, out + off, one, is);
                  else
                    reference::dpcm_decode<T>(c, in + off, out + off, one, is);
                });
}

template <class T>
void run_dpcm_float_cuda(cuda const& ex, bool encode, std::span<T const> c, T const* in, T* out,
                         layout const& lay, std::span<T const> init) {
  dpcm_names const& nm = encode ? encode_names : decode_names;
  if (!cuda_compiled())
    throw not_compiled(std::string(nm.fn) +
                       ": this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
  if (!c.empty()) detail::check_host_pointer(nm.fn, c.data(), "c");
  check_float_predictor(nm.fn, c);
  check_dpcm_call<T, T>(nm, c, in, out, lay, init);
  std::int64_t const k = static_cast<std::int64_t>(c.size());
  if (k > detail::predictor_cuda_max_order)
    detail::bad_argument(nm.fn, fmt::format("order {} (c.size()) is not supported with recur::cuda: the CUDA "
                                            "backend supports orders 0-{} (recur::host has no limit)",
                                            k, detail::predictor_cuda_max_order));
  if (lay.n > 0 && lay.count > 0) {
    detail::check_device_pointer(nm.fn, in, nm.in);
    if (out != in) detail::check_device_pointer(nm.fn, out, nm.out);
    if (!init.empty()) detail::check_device_pointer(nm.fn, init.data(), "init");
  }
  if (lay.count == 0 || lay.n == 0) return;
  detail::predictor_cuda<T>(encode, c.data(), k, in, out, normalised_layout(lay),
                            init.empty() ? nullptr : init.data(), nullptr, ex.stream);
}

template <class T>
std::int64_t ssize_of(std::span<T> s) {
  return static_cast<std::int64_t>(s.size());
}

}  // namespace

// ------------------------------------------------------------- entry points --

void lfilter(host const& ex, std::span<float const> b, std::span<float const> a, float const* x, float* y,
             layout const& lay, std::span<float const> zi, std::span<float> zf) {
  run_lfilter<float>(ex, b.data(), ssize_of(b), a.data(), ssize_of(a), x, y, lay,
                     zi.empty() ? nullptr : zi.data(), ssize_of(zi), zf.empty() ? nullptr : zf.data(),
                     ssize_of(zf));
}
void lfilter(host const& ex, std::span<double const> b, std::span<double const> a, double const* x, double* y,
             layout const& lay, std::span<double const> zi, std::span<double> zf) {
  run_lfilter<double>(ex, b.data(), ssize_of(b), a.data(), ssize_of(a), x, y, lay,
                      zi.empty() ? nullptr : zi.data(), ssize_of(zi), zf.empty() ? nullptr : zf.data(),
                      ssize_of(zf));
}
void lfilter(host const& ex, float const* b, std::int64_t nb, float const* a, std::int64_t na, float const* x,
             float* y, layout const& lay, float const* zi, float* zf) {
  run_lfilter<float>(ex, b, nb, a, na, x, y, lay, zi, -1, zf, -1);
}
void lfilter(host const& ex, double const* b, std::int64_t nb, double const* a, std::int64_t na,
             double const* x, double* y, layout const& lay, double const* zi, double* zf) {
  run_lfilter<double>(ex, b, nb, a, na, x, y, lay, zi, -1, zf, -1);
}

void lfilter(cuda const& ex, std::span<float const> b, std::span<float const> a, float const* x, float* y,
             layout const& lay, std::span<float const> zi, std::span<float> zf) {
  run_lfilter_cuda<float>(ex, b.data(), ssize_of(b), a.data(), ssize_of(a), x, y, lay,
                          zi.empty() ? nullptr : zi.data(), ssize_of(zi), zf.empty() ? nullptr : zf.data(),
                          ssize_of(zf));
}
void lfilter(cuda const& ex, std::span<double const> b, std::span<double const> a, double const* x, double* y,
             layout const& lay, std::span<double const> zi, std::span<double> zf) {
  run_lfilter_cuda<double>(ex, b.data(), ssize_of(b), a.data(), ssize_of(a), x, y, lay,
                           zi.empty() ? nullptr : zi.data(), ssize_of(zi), zf.empty() ? nullptr : zf.data(),
                           ssize_of(zf));
}
void lfilter(cuda const& ex, float const* b, std::int64_t nb, float const* a, std::int64_t na, float const* x,
             float* y, layout const& lay, float const* zi, float* zf) {
  run_lfilter_cuda<float>(ex, b, nb, a, na, x, y, lay, zi, -1, zf, -1);
}
void lfilter(cuda const& ex, double const* b, std::int64_t nb, double const* a, std::int64_t na,
             double const* x, double* y, layout const& lay, double const* zi, double* zf) {
  run_lfilter_cuda<double>(ex, b, nb, a, na, x, y, lay, zi, -1, zf, -1);
}

std::vector<float> lfilter_zi(std::span<float const> b, std::span<float const> a) {
  return run_lfilter_zi<float>(b, a);
}
std::vector<double> lfilter_zi(std::span<double const> b, std::span<double const> a) {
  return run_lfilter_zi<double>(b, a);
}

void sosfilt(host const& ex, std::span<float const> sos, float const* x, float* y, layout const& lay,
             std::span<float const> zi, std::span<float> zf) {
  run_sosfilt<float>(ex, sos, x, y, lay, zi, zf);
}
void sosfilt(host const& ex, std::span<double const> sos, double const* x, double* y, layout const& lay,
             std::span<double const> zi, std::span<double> zf) {
  run_sosfilt<double>(ex, sos, x, y, lay, zi, zf);
}

void sosfilt(cuda const& ex, std::span<float const> sos, float const* x, float* y, layout const& lay,
             std::span<float const> zi, std::span<float> zf) {
  run_sosfilt_cuda<float>(ex, sos, x, y, lay, zi, zf);
}
void sosfilt(cuda const& ex, std::span<double const> sos, double const* x, double* y, layout const& lay,
             std::span<double const> zi, std::span<double> zf) {
  run_sosfilt_cuda<double>(ex, sos, x, y, lay, zi, zf);
}

void dpcm_encode(host const& ex, std::span<std::int64_t const> c, int shift, std::int16_t const* x,
                 std::int16_t* e, layout const& lay, std::span<std::int16_t const> init) {
  run_dpcm_int<std::int16_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_encode(host const& ex, std::span<std::int64_t const> c, int shift, std::int32_t const* x,
                 std::int32_t* e, layout const& lay, std::span<std::int32_t const> init) {
  run_dpcm_int<std::int32_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_encode(host const& ex, std::span<std::int64_t const> c, int shift, std::uint8_t const* x,
                 std::uint8_t* e, layout const& lay, std::span<std::uint8_t const> init) {
  run_dpcm_int<std::uint8_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_decode(host const& ex, std::span<std::int64_t const> c, int shift, std::int16_t const* e,
                 std::int16_t* x, layout const& lay, std::span<std::int16_t const> init) {
  run_dpcm_int<std::int16_t>(ex, false, c, shift, e, x, lay, init);
}
void dpcm_decode(host const& ex, std::span<std::int64_t const> c, int shift, std::int32_t const* e,
                 std::int32_t* x, layout const& lay, std::span<std::int32_t const> init) {
  run_dpcm_int<std::int32_t>(ex, false, c, shift, e, x, lay, init);
}
void dpcm_decode(host const& ex, std::span<std::int64_t const> c, int shift, std::uint8_t const* e,
                 std::uint8_t* x, layout const& lay, std::span<std::uint8_t const> init) {
  run_dpcm_int<std::uint8_t>(ex, false, c, shift, e, x, lay, init);
}

void dpcm_encode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::int16_t const* x, std::int16_t* e,
                 layout const& lay, std::span<std::int16_t const> init) {
  run_dpcm_int_cuda<std::int16_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_encode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::int32_t const* x, std::int32_t* e,
                 layout const& lay, std::span<std::int32_t const> init) {
  run_dpcm_int_cuda<std::int32_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_encode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::uint8_t const* x, std::uint8_t* e,
                 layout const& lay, std::span<std::uint8_t const> init) {
  run_dpcm_int_cuda<std::uint8_t>(ex, true, c, shift, x, e, lay, init);
}
void dpcm_decode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::int16_t const* e, std::int16_t* x,
                 layout const& lay, std::span<std::int16_t const> init) {
  run_dpcm_int_cuda<std::int16_t>(ex, false, c, shift, e, x, lay, init);
}
void dpcm_decode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::int32_t const* e, std::int32_t* x,
                 layout const& lay, std::span<std::int32_t const> init) {
  run_dpcm_int_cuda<std::int32_t>(ex, false, c, shift, e, x, lay, init);
}
void dpcm_decode(cuda const& ex, std::span<std::int64_t const> c, int shift, std::uint8_t const* e, std::uint8_t* x,
                 layout const& lay, std::span<std::uint8_t const> init) {
  run_dpcm_int_cuda<std::uint8_t>(ex, false, c, shift, e, x, lay, init);
}
void dpcm_encode(host const& ex, std::span<float const> c, float const* x, float* e, layout const& lay,
                 std::span<float const> init) {
  run_dpcm_float<float>(ex, true, c, x, e, lay, init);
}
void dpcm_encode(host const& ex, std::span<double const> c, double const* x, double* e, layout const& lay,
                 std::span<double const> init) {
  run_dpcm_float<double>(ex, true, c, x, e, lay, init);
}
void dpcm_decode(host const& ex, std::span<float const> c, float const* e, float* x, layout const& lay,
                 std::span<float const> init) {
  run_dpcm_float<float>(ex, false, c, e, x, lay, init);
}
void dpcm_decode(host const& ex, std::span<double const> c, double const* e, double* x, layout const& lay,
                 std::span<double const> init) {
  run_dpcm_float<double>(ex, false, c, e, x, lay, init);
}

void dpcm_encode(cuda const& ex, std::span<float const> c, float const* x, float* e, layout const& lay,
                 std::span<float const> init) {
  run_dpcm_float_cuda<float>(ex, true, c, x, e, lay, init);
}
void dpcm_encode(cuda const& ex, std::span<double const> c, double const* x, double* e, layout const& lay,
                 std::span<double const> init) {
  run_dpcm_float_cuda<double>(ex, true, c, x, e, lay, init);
}
void dpcm_decode(cuda const& ex, std::span<float const> c, float const* e, float* x, layout const& lay,
                 std::span<float const> init) {
  run_dpcm_float_cuda<float>(ex, false, c, e, x, lay, init);
}
void dpcm_decode(cuda const& ex, std::span<double const> c, double const* e, double* x, layout const& lay,
                 std::span<double const> init) {
  run_dpcm_float_cuda<double>(ex, false, c, e, x, lay, init);
}

}  // namespace recur
