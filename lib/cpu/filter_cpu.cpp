// CPU backend of lfilter, sosfilt, filtfilt, sosfiltfilt and the DPCM codecs:
// sequences spread over OpenMP threads, each filtered sequentially by the
// references' arithmetic (include/recur/reference/lfilter.hpp, dpcm.hpp), so
// the results are the references' bit for bit whatever the thread count; and
// correlate_lags, sums over units of fixed size added in order.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <omp.h>

#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include "../filter_backends.hpp"
#include "pscheme.hpp"

namespace recur::detail {
namespace {

// Sequences advanced together, row by row, when the layout puts adjacent
// sequences closer than adjacent elements (interleaved): every access then
// runs along memory, and a row of 256 sequences fills whole pages, where a
// narrower block would touch every page of the batch for a few hundred bytes
// and pay a TLB miss for each (linrec_cpu.cpp's lane blocks do the same). The
// per-sequence arithmetic is unchanged. The element stride is negative in a
// reverse view (filter_backends.hpp).
std::int64_t sequence_block(layout const& l) {
  std::int64_t const es = l.element_stride < 0 ? -l.element_stride : l.element_stride;
  return l.count > 1 && l.n > 1 && l.batch_stride < es ? 256 : 1;
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
// alias, and the compiler reloads them on every sample. Order > 0 fixes the
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

// One sequence of filtfilt_cpu: xs and ys at its first element, es its
// element stride; z (per values) and rp (edge values) scratch. The right
// extension is read into rp before anything is written, so ys may be xs.
template <class T>
void filtfilt_sequence(T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* zi,
                       T const* xs, T* ys, std::int64_t n, std::int64_t es, std::int64_t edge,
                       filtfilt_pad pad, T* z, T* rp) {
  std::int64_t const per = sections * order, stride = order + 1;
  auto step = [&](T v) {
    for (std::int64_t s = 0; s < sections; ++s)
      v = reference::detail::df2t_step(b + s * stride, a + s * stride, order, z + s * order, v);
    return v;
  };
  auto start = [&](T v) {
    for (std::int64_t j = 0; j < per; ++j) z[j] = zi[j] * v;
  };
  T const first = xs[0];
  auto extended = [&](std::int64_t j) { return reference::detail::filtfilt_extended(pad, xs, n, es, j); };
  for (std::int64_t j = 0; j < edge; ++j) rp[j] = extended(n + j);
  start(edge > 0 ? extended(-edge) : first);
  for (std::int64_t j = -edge; j < 0; ++j) step(extended(j));
  for (std::int64_t i = 0; i < n; ++i) ys[i * es] = step(xs[i * es]);
  for (std::int64_t j = 0; j < edge; ++j) rp[j] = step(rp[j]);
  start(edge > 0 ? rp[edge - 1] : ys[(n - 1) * es]);
  for (std::int64_t j = edge - 1; j >= 0; --j) step(rp[j]);
  for (std::int64_t i = n - 1; i >= 0; --i) ys[i * es] = step(ys[i * es]);
}

// correlate_cpu's unit of work: sequences [k0, k1) (one, or a block of
// sequence_block's when rows run along memory) and elements [i0, i1), its
// nv * lags sums to out. Each sum is a vector reduction over the elements of
// one sequence, or over the sequences of one row (the order fixed by the
// build, not by the thread that runs the unit).
template <class T>
void correlate_unit(T const* u, T const* const* v, std::int64_t nv, std::int64_t lags, layout const lay,
                    std::int64_t k0, std::int64_t k1, std::int64_t i0, std::int64_t i1, T* out) {
  std::int64_t const es = lay.element_stride, bs = lay.batch_stride;
  for (std::int64_t j = 0; j < nv; ++j)
    for (std::int64_t l = 0; l < lags; ++l) {
      T acc = T(0);
      T const* const vj = v[j];
      std::int64_t const back = l * es;  // element i - l of v[j] at offset(i, k) - back
      if (k1 - k0 == 1) {
        std::int64_t const s = k0 * bs;
#pragma omp simd reduction(+ : acc)
        for (std::int64_t i = std::max(i0, l); i < i1; ++i) acc += u[s + i * es] * vj[s + i * es - back];
      } else {
        for (std::int64_t i = std::max(i0, l); i < i1; ++i) {
          std::int64_t const r = i * es;
#pragma omp simd reduction(+ : acc)
          for (std::int64_t k = k0; k < k1; ++k) acc += u[r + k * bs] * vj[r + k * bs - back];
        }
      }
      out[j * lags + l] = acc;
    }
}

// Sequences over threads; each one is the reference's call on that sequence
// alone (a one-sequence layout at its first element, its init values).
template <class S, class Body>
void dpcm_batch(layout const& l, std::int64_t k, S const* init, int threads, Body body) {
  layout const one{l.n, 1, l.element_stride, l.n * l.element_stride};
  int const nt = thread_count(available_threads(threads), l.count, l.n * l.count);
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t s = 0; s < l.count; ++s) body(l.offset(0, s), one, init ? init + s * k : nullptr);
}

}  // namespace

template <class T>
void df2t_cpu(T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* x, T* y,
              layout const& lay, T const* init, T* final_state, int threads) {
  std::int64_t const per = sections * order;
  std::int64_t const block = sequence_block(lay);
  std::int64_t const blocks = (lay.count + block - 1) / block;
  int const nt = thread_count(available_threads(threads), blocks, lay.n * lay.count * sections);
  // Each thread's states on cache lines of their own (no false sharing),
  // allocated here, not inside the parallel region: nothing may throw there.
  constexpr std::int64_t line = 64 / sizeof(T);
  std::int64_t const room = (block * per + line - 1) / line * line + line;
  std::vector<T> state(static_cast<std::size_t>(nt * room));
  auto const run = order == 1   ? &df2t_block<1, T>
                   : order == 2 ? &df2t_block<2, T>
                   : order == 3 ? &df2t_block<3, T>
                   : order == 4 ? &df2t_block<4, T>
                                : &df2t_block<0, T>;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t bi = 0; bi < blocks; ++bi) {
    std::int64_t const k0 = bi * block;
    run(b, a, sections, order, x, y, lay, k0, std::min(lay.count, k0 + block), init, final_state,
        state.data() + static_cast<std::int64_t>(omp_get_thread_num()) * room);
  }
}

template <class T>
void filtfilt_cpu(T const* b, T const* a, std::int64_t sections, std::int64_t order, T const* zi, T const* x,
                  T* y, layout const& lay, std::int64_t edge, filtfilt_pad pad, int threads) {
  std::int64_t const per = sections * order;
  int const nt =
      thread_count(available_threads(threads), lay.count, 2 * (lay.n + 2 * edge) * lay.count * sections);
  // Each thread's scratch on cache lines of its own, allocated outside the
  // parallel region (nothing may throw there).
  constexpr std::int64_t line = 64 / sizeof(T);
  std::int64_t const room = (per + edge + line - 1) / line * line + line;
  std::vector<T> scratch(static_cast<std::size_t>(nt * room));
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t k = 0; k < lay.count; ++k) {
    T* const z = scratch.data() + static_cast<std::int64_t>(omp_get_thread_num()) * room;
    filtfilt_sequence<T>(b, a, sections, order, zi, x + lay.offset(0, k), y + lay.offset(0, k), lay.n,
                         lay.element_stride, edge, pad, z, z + per);
  }
}

template <class T>
void correlate_cpu(T const* u, T const* const* v, std::int64_t nv, T* c, std::int64_t lags, layout const& lay,
                   int threads) {
  std::int64_t const values = nv * lags;
  std::fill(c, c + values, T(0));
  if (lay.n == 0 || lay.count == 0) return;
  // Units of about 4096 elements (a fixed function of the layout): their
  // sums, added in unit order, do not depend on the thread count.
  std::int64_t const block = sequence_block(lay), rows = block > 1 ? 16 : 4096;
  std::int64_t const groups = (lay.count + block - 1) / block, chunks = (lay.n + rows - 1) / rows;
  std::int64_t const units = groups * chunks;
  int const nt = thread_count(available_threads(threads), units, lay.n * lay.count * values);
  std::vector<T> sums(static_cast<std::size_t>(units * values));  // before the parallel region: it may throw
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t q = 0; q < units; ++q) {
    std::int64_t const g = q / chunks, h = q % chunks;
    correlate_unit<T>(u, v, nv, lags, lay, g * block, std::min(lay.count, (g + 1) * block), h * rows,
                      std::min(lay.n, (h + 1) * rows), sums.data() + q * values);
  }
  for (std::int64_t q = 0; q < units; ++q)
    for (std::int64_t e = 0; e < values; ++e) c[e] += sums[static_cast<std::size_t>(q * values + e)];
}

template <class S>
void dpcm_int_cpu(bool encode, std::span<std::int64_t const> c, int shift, S const* in, S* out,
                  layout const& lay, S const* init, int threads) {
  dpcm_batch<S>(lay, static_cast<std::int64_t>(c.size()), init, threads,
                [&](std::int64_t off, layout const& one, S const* is) {
                  if (encode)
                    reference::dpcm_encode<S>(c, shift, in + off, out + off, one, is);
                  else
                    reference::dpcm_decode<S>(c, shift, in + off, out + off, one, is);
                });
}

template <class T>
void dpcm_float_cpu(bool encode, std::span<T const> c, T const* in, T* out, layout const& lay, T const* init,
                    int threads) {
  dpcm_batch<T>(lay, static_cast<std::int64_t>(c.size()), init, threads,
                [&](std::int64_t off, layout const& one, T const* is) {
                  if (encode)
                    reference::dpcm_encode<T>(c, in + off, out + off, one, is);
                  else
                    reference::dpcm_decode<T>(c, in + off, out + off, one, is);
                });
}

template void df2t_cpu<float>(float const*, float const*, std::int64_t, std::int64_t, float const*, float*,
                              layout const&, float const*, float*, int);
template void df2t_cpu<double>(double const*, double const*, std::int64_t, std::int64_t, double const*,
                               double*, layout const&, double const*, double*, int);
template void filtfilt_cpu<float>(float const*, float const*, std::int64_t, std::int64_t, float const*,
                                  float const*, float*, layout const&, std::int64_t, filtfilt_pad, int);
template void filtfilt_cpu<double>(double const*, double const*, std::int64_t, std::int64_t, double const*,
                                   double const*, double*, layout const&, std::int64_t, filtfilt_pad, int);
template void correlate_cpu<float>(float const*, float const* const*, std::int64_t, float*, std::int64_t,
                                   layout const&, int);
template void correlate_cpu<double>(double const*, double const* const*, std::int64_t, double*, std::int64_t,
                                    layout const&, int);
template void dpcm_int_cpu<std::int16_t>(bool, std::span<std::int64_t const>, int, std::int16_t const*,
                                         std::int16_t*, layout const&, std::int16_t const*, int);
template void dpcm_int_cpu<std::int32_t>(bool, std::span<std::int64_t const>, int, std::int32_t const*,
                                         std::int32_t*, layout const&, std::int32_t const*, int);
template void dpcm_int_cpu<std::uint8_t>(bool, std::span<std::int64_t const>, int, std::uint8_t const*,
                                         std::uint8_t*, layout const&, std::uint8_t const*, int);
template void dpcm_float_cpu<float>(bool, std::span<float const>, float const*, float*, layout const&,
                                    float const*, int);
template void dpcm_float_cpu<double>(bool, std::span<double const>, double const*, double*, layout const&,
                                     double const*, int);

}  // namespace recur::detail
