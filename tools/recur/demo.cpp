// recur demo: a fixed workload through the public API, on the GPU when there
// is one and on the CPU otherwise (--device), every result checked:
// first-order recurrences against the sequential reference computed in
// double, batched tridiagonal systems by their residual, an IIR filter and
// a DPCM round trip against the sequential references. It prints a table per
// section and is a smoke test for an installation as much as a
// demonstration, so it exits non-zero when a check fails.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <recur/config.hpp>
#include <recur/filter.hpp>
#include <recur/linrec.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/tridiag.hpp>

#include "commands.hpp"
#include "device.hpp"

namespace recur_cli {
namespace {

// ------------------------------------------------------- library calls --

template <class Ex, class T>
void call_linrec(Ex const& ex, T const* s, T const* t, T* w, recur::layout const& lay) {
  recur::linrec(ex, s, t, w, lay);
}

template <class Ex, class T>
void call_solve(Ex const& ex, T const* a, T const* b, T const* c, T const* d, T* x, recur::layout const& lay,
                std::int32_t* info) {
  recur::tridiag_options opt;
  opt.info = info;
  recur::solve_batched(ex, a, b, c, d, x, lay, opt);
}

template <class T, class Ex>
std::string resolved_algorithm(Ex const& ex, recur::layout const& lay) {
  return recur::to_string(recur::resolve_tridiag_algorithm<T>(ex, lay));
}

template <class Ex>
void call_lfilter(Ex const& ex, std::vector<float> const& b, std::vector<float> const& a, float const* x,
                  float* y, recur::layout const& lay) {
  recur::lfilter(ex, std::span<float const>(b), std::span<float const>(a), x, y, lay);
}

template <class Ex>
void call_dpcm(Ex const& ex, bool encode, std::vector<std::int64_t> const& c, std::int16_t const* in,
               std::int16_t* out, recur::layout const& lay) {
  std::span<std::int64_t const> const cs(c);
  if (encode)
    recur::dpcm_encode(ex, cs, 0, in, out, lay);
  else
    recur::dpcm_decode(ex, cs, 0, in, out, lay);
}

// -------------------------------------------------------------- inputs --

// splitmix64: tiny, fast, and the same stream on every platform (the standard
// distributions are not specified bit for bit), so the demo's inputs are too.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {  // [lo, hi)
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53;
  }
};

// |s| <= s_bound < 1 keeps every sequence stable: the influence of a step on the
// ones after it decays, so values stay O(1 / (1 - s_bound)) whatever n is.
constexpr double s_bound = 0.99;
constexpr std::uint64_t seed = 42;

splitmix64 stream(std::uint64_t id) { return {seed ^ (id * 0xd1b54a32d192ed03ull)}; }

// ------------------------------------------------------------- running --

// Timed runs after the warm-up. Five on the CPU keep the whole CPU demo well
// under 20 s on 2 cores.
constexpr int gpu_runs = 10;
constexpr int cpu_runs = 5;

struct timing {
  double median_ms = 0;
  bool repeatable = true;  // the timed runs gave the warm-up's result bit for bit
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::vector<T> poisoned(std::int64_t size) {  // an element left unwritten fails every check
  return std::vector<T>(static_cast<std::size_t>(size), std::numeric_limits<T>::quiet_NaN());
}

// One warm-up run of f (module load, first-touch allocations; its result is
// kept to check that the timed runs reproduce it bit for bit, a documented
// guarantee), then the timed runs. `out` is the host array f's output comes
// back to.
template <class T, class F>
timing time_runs(device& dev, std::vector<T> const& out, F&& f) {
  dev.run(f);
  dev.fetch();
  std::vector<T> const first = out;
  std::vector<double> ms;
  for (int r = 0; r < (dev.is_gpu() ? gpu_runs : cpu_runs); ++r) ms.push_back(dev.time_ms(f));
  dev.fetch();
  return {median(ms), same_bits(first, out)};
}

double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }

// A problem's row, announced as done the moment it is (the table follows
// the section).
template <class Row>
Row done(Row r, int width) {
  fmt::print("  {:<{}} done\n", r.problem, width);
  std::fflush(stdout);
  return r;
}

// --------------------------------------------------- linear recurrences --

// Error metric. With a_i = |s_i| a_{i-1} + |t_i| (a_{-1} = 0), the forward
// error of any evaluation order of the recurrence is bounded term by term by
// (roundings on the term's path) * eps * a_i, so
//     err = max_i |w_i - w_ref_i| / max_i a_i
// is the normwise relative error on the scale the rounding actually acts on.
// It is invariant under scaling of t, needs no guard against w_ref_i ~ 0, and
// max a >= max |w_ref|, so it is never looser than a plain relative error by
// more than the cancellation in the data. +inf when some w is not finite.
//
// The reference is recur::reference::linrec_sequence in double, run chunk by
// chunk (each chunk starting from the previous chunk's last value, which is
// exactly the sequential recurrence) so the check needs no full-size double
// copy of the inputs.
template <class T>
double linrec_error(std::vector<T> const& s, std::vector<T> const& t, std::vector<T> const& w,
                    recur::layout const& lay) {
  constexpr std::int64_t chunk = 1 << 14;
  std::vector<double> sd(chunk), td(chunk), wd(chunk);
  double max_diff = 0, scale = 0;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    double x = 0, a = 0;  // w_{-1} = 0, the API's default
    for (std::int64_t i0 = 0; i0 < lay.n; i0 += chunk) {
      std::int64_t const len = std::min(chunk, lay.n - i0);
      for (std::int64_t j = 0; j < len; ++j) {
        std::int64_t const o = lay.offset(i0 + j, k);
        sd[j] = static_cast<double>(s[o]);
        td[j] = static_cast<double>(t[o]);
      }
      x = recur::reference::linrec_sequence<double>(sd.data(), 0.0, td.data(), 0.0, wd.data(),
                                                    recur::layout::contiguous(len, 1), 0, x);
      for (std::int64_t j = 0; j < len; ++j) {
        a = std::abs(sd[j]) * a + std::abs(td[j]);
        scale = std::max(scale, a);
        double const got = static_cast<double>(w[lay.offset(i0 + j, k)]);
        if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
        max_diff = std::max(max_diff, std::abs(got - wd[j]));
      }
    }
  }
  return scale > 0 ? max_diff / scale : max_diff;
}

// Tolerance. Each term (prod_{k=j+1..i} s_k) t_j of w_i passes through about
// (i - j) multiply-adds plus the levels at which a parallel algorithm combines
// partial results (at most ~log2 of the element count for a tree; longer
// chains, such as a look-back across tiles, only carry terms multiplied by a
// whole tile of s's, which |s| <= 0.99 has damped to nothing). Weighted by
// prod |s_k| <= 0.99^(i-j), the lags (i - j) average at most 1 / (1 - 0.99)
// = 100, so err <= ~2 u (100 + log2 N) = eps (100 + log2 N). This is the "n"
// of the usual n*eps tolerance: the recurrence's memory, not its length. A
// factor 8 covers the constants of the first-order analysis: for f32 at N =
// 2^24 that is 8 * 1.19e-7 * 124 = 1.2e-4, for f64 2.2e-13. Typical errors are
// a few eps; a wrong element (a missed carry, an unwritten element) gives
// err ~ 1e-2 or more.
template <class T>
double linrec_tolerance(std::int64_t total_elements) {
  double const memory = 1.0 / (1.0 - s_bound);
  double const depth = std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(total_elements, 2))));
  return 8.0 * static_cast<double>(std::numeric_limits<T>::epsilon()) * (memory + depth);
}

struct row {
  std::string problem;
  double ms = 0, gbps = 0, err = 0, tol = 0;
  bool repeatable = true, ok = false;
};

template <class T>
row run_linrec(device_kind kind, std::string problem, recur::layout const& lay, std::uint64_t stream_id) {
  std::vector<T> s(static_cast<std::size_t>(lay.size())), t(s.size());
  splitmix64 rng = stream(stream_id);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i] = static_cast<T>(rng.uniform(-s_bound, s_bound));
    t[i] = static_cast<T>(rng.uniform(-1.0, 1.0));
  }
  std::vector<T> w = poisoned<T>(lay.size());
  timing tm;
  {
    device dev(kind);
    T const *const ds = dev.input(std::span<T const>(s)), *const dt = dev.input(std::span<T const>(t));
    T* const dw = dev.output(std::span<T>(w));
    tm = time_runs(dev, w, [&](auto const& ex) { call_linrec(ex, ds, dt, dw, lay); });
  }
  row r;
  r.problem = std::move(problem);
  r.ms = tm.median_ms;
  // s and t read, w written, once each: the traffic of an ideal implementation.
  r.gbps = gbps(3.0 * sizeof(T) * static_cast<double>(lay.size()), r.ms);
  r.err = linrec_error(s, t, w, lay);
  r.tol = linrec_tolerance<T>(lay.size());
  r.repeatable = tm.repeatable;
  r.ok = r.err <= r.tol && r.repeatable;
  return r;
}

bool linrec_section(device_kind kind, std::string const& backend) {
  constexpr std::int64_t big = std::int64_t{1} << 24, batch = 4096;
  std::vector<row> rows;
  auto report = [&](row r) { rows.push_back(done(std::move(r), 36)); };
  report(run_linrec<float>(kind, "f32  1 x 2^24", recur::layout::contiguous(big, 1), 1));
  report(run_linrec<float>(kind, "f32  4096 x 4096 contiguous", recur::layout::contiguous(batch, batch), 2));
  report(
      run_linrec<float>(kind, "f32  4096 x 4096 interleaved", recur::layout::interleaved(batch, batch), 3));
  report(run_linrec<double>(kind, "f64  1 x 2^24", recur::layout::contiguous(big, 1), 4));

  fmt::print("\n{:<8} {:<30} {:>10} {:>9} {:>12} {:>10} {:>10} {:>6}\n", "backend", "problem", "time (ms)",
             "GB/s", "max rel err", "tolerance", "repeatable", "check");
  bool all_ok = true;
  for (row const& r : rows) {
    fmt::print("{:<8} {:<30} {:>10.3f} {:>9.2f} {:>12.3e} {:>10.1e} {:>10} {:>6}\n", backend, r.problem, r.ms,
               r.gbps, r.err, r.tol, r.repeatable ? "yes" : "NO", r.ok ? "ok" : "FAIL");
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\ntime: median of {} runs after a warm-up ({}). GB/s: 12 B per f32 element, 24 B per f64 element\n"
      "(s and t read, w written once). max rel err: max |w - w_ref| / max a, a_i = |s_i| a_(i-1) + |t_i|,\n"
      "w_ref the sequential reference in double. repeatable: the timed runs matched the first bit for bit.\n",
      kind == device_kind::gpu ? gpu_runs : cpu_runs,
      kind == device_kind::gpu ? "CUDA events" : "std::chrono");
  return all_ok;
}

// ------------------------------------------- batched tridiagonal systems --

// Diagonally dominant rows, |b| >= |a| + |c| + 1, random signs: the systems of
// Zhang et al.'s first accuracy set, which every algorithm without pivoting
// solves. a[0] and c[n-1] are NaN: the solvers never read them.
template <class T>
struct tridiag_inputs {
  std::vector<T> a, b, c, d;
};

template <class T>
tridiag_inputs<T> make_tridiag(recur::layout const& lay, std::uint64_t stream_id) {
  std::size_t const size = static_cast<std::size_t>(lay.size());
  tridiag_inputs<T> in{std::vector<T>(size), std::vector<T>(size), std::vector<T>(size),
                       std::vector<T>(size)};
  splitmix64 rng = stream(stream_id);
  for (std::int64_t k = 0; k < lay.count; ++k)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k));
      double const a = rng.uniform(-1, 1), c = rng.uniform(-1, 1);
      double const m = std::abs(a) * (i > 0) + std::abs(c) * (i + 1 < lay.n) + 1 + rng.uniform(0, 1);
      in.a[o] = i > 0 ? static_cast<T>(a) : std::numeric_limits<T>::quiet_NaN();
      in.c[o] = i + 1 < lay.n ? static_cast<T>(c) : std::numeric_limits<T>::quiet_NaN();
      in.b[o] = static_cast<T>(rng.uniform(-1, 1) < 0 ? -m : m);
      in.d[o] = static_cast<T>(rng.uniform(-1, 1));
    }
  return in;
}

// max over the systems of ||A x - d|| / (||A|| ||x||) (infinity norms), in
// double; +inf when some x is not finite.
template <class T>
double max_relative_residual(tridiag_inputs<T> const& in, std::vector<T> const& x, recur::layout const& lay) {
  double worst = 0;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    double res = 0, anorm = 0, xnorm = 0;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::size_t const o = static_cast<std::size_t>(lay.offset(i, k));
      double const xi = static_cast<double>(x[o]);
      if (!std::isfinite(xi)) return std::numeric_limits<double>::infinity();
      double const ai = i > 0 ? static_cast<double>(in.a[o]) : 0.0;
      double const ci = i + 1 < lay.n ? static_cast<double>(in.c[o]) : 0.0;
      double acc = static_cast<double>(in.b[o]) * xi - static_cast<double>(in.d[o]);
      if (i > 0) acc += ai * static_cast<double>(x[static_cast<std::size_t>(lay.offset(i - 1, k))]);
      if (i + 1 < lay.n) acc += ci * static_cast<double>(x[static_cast<std::size_t>(lay.offset(i + 1, k))]);
      res = std::max(res, std::abs(acc));
      anorm = std::max(anorm, std::abs(ai) + std::abs(static_cast<double>(in.b[o])) + std::abs(ci));
      xnorm = std::max(xnorm, std::abs(xi));
    }
    worst = std::max(worst, res / (anorm * xnorm + std::numeric_limits<double>::min()));
  }
  return worst;
}

struct tridiag_row {
  std::string problem, algorithm, failure;
  double ms = 0, gbps = 0, res = 0, tol = 0;
  std::int64_t broke = 0;  // systems with info != 0
  bool repeatable = true, ok = false;
};

template <class T>
tridiag_row run_tridiag(device_kind kind, std::string problem, recur::layout const& lay,
                        std::uint64_t stream_id) {
  tridiag_row r;
  r.problem = std::move(problem);
  tridiag_inputs<T> const in = make_tridiag<T>(lay, stream_id);
  std::vector<T> x = poisoned<T>(lay.size());
  std::vector<std::int32_t> info(static_cast<std::size_t>(lay.count), -1);
  // The relative residual of a backward stable solver is a few eps; the
  // tests allow 4 n eps (test/tridiag_harness.hpp), and so does the demo.
  r.tol = 4.0 * static_cast<double>(lay.n) * static_cast<double>(std::numeric_limits<T>::epsilon());
  try {
    device dev(kind);
    T const *const a = dev.input(std::span<T const>(in.a)), *const b = dev.input(std::span<T const>(in.b)),
                   *const c = dev.input(std::span<T const>(in.c)),
                   *const d = dev.input(std::span<T const>(in.d));
    T* const dx = dev.output(std::span<T>(x));
    std::int32_t* const dinfo = dev.output(std::span<std::int32_t>(info));
    dev.run([&](auto const& ex) { r.algorithm = resolved_algorithm<T>(ex, lay); });
    timing const tm = time_runs(dev, x, [&](auto const& ex) { call_solve(ex, a, b, c, d, dx, lay, dinfo); });
    r.ms = tm.median_ms;
    r.repeatable = tm.repeatable;
  } catch (recur::error const& e) {
    r.failure = e.what();
    return r;
  }
  r.broke = std::count_if(info.begin(), info.end(), [](std::int32_t v) { return v != 0; });
  // a, b, c, d read and x written once each.
  r.gbps = gbps(5.0 * sizeof(T) * static_cast<double>(lay.size()), r.ms);
  r.res = max_relative_residual(in, x, lay);
  r.ok = r.res <= r.tol && r.repeatable && r.broke == 0;
  return r;
}

bool tridiag_section(device_kind kind, std::string const& backend) {
  std::vector<tridiag_row> rows;
  auto report = [&](tridiag_row r) { rows.push_back(done(std::move(r), 36)); };
  constexpr std::int64_t zhang = 512, lanes = std::int64_t{1} << 16;
  report(run_tridiag<float>(kind, "f32  512 x 512 contiguous", recur::layout::contiguous(zhang, zhang), 11));
  report(run_tridiag<double>(kind, "f64  512 x 512 contiguous", recur::layout::contiguous(zhang, zhang), 12));
  report(run_tridiag<float>(kind, "f32  64 x 2^16 interleaved", recur::layout::interleaved(64, lanes), 13));
  report(run_tridiag<double>(kind, "f64  64 x 2^16 interleaved", recur::layout::interleaved(64, lanes), 14));

  fmt::print("\n{:<8} {:<30} {:<10} {:>10} {:>9} {:>12} {:>10} {:>10} {:>6}\n", "backend", "problem",
             "algorithm", "time (ms)", "GB/s", "max rel res", "tolerance", "repeatable", "check");
  bool all_ok = true;
  for (tridiag_row const& r : rows) {
    if (!r.failure.empty()) {
      fmt::print("{:<8} {:<30} {:<10} FAILED: {}\n", backend, r.problem, r.algorithm, r.failure);
      all_ok = false;
      continue;
    }
    fmt::print("{:<8} {:<30} {:<10} {:>10.3f} {:>9.2f} {:>12.3e} {:>10.1e} {:>10} {:>6}\n", backend,
               r.problem, r.algorithm, r.ms, r.gbps, r.res, r.tol, r.repeatable ? "yes" : "NO",
               r.ok ? "ok" : "FAIL");
    if (r.broke) fmt::print("         {} systems reported breakdown (info != 0)\n", r.broke);
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\nn x count: count systems of n unknowns, diagonally dominant, random (seed {}). algorithm: what\n"
      "`auto` resolves to. GB/s: 5 words per unknown (a, b, c, d read, x written). max rel res: the\n"
      "largest ||A x - d|| / (||A|| ||x||) over the systems (infinity norms, in double); tolerance\n"
      "4 n eps.\n",
      seed);
  return all_ok;
}

// ----------------------------------------------------- IIR filter, DPCM --

struct filter_row {
  std::string problem, check;
  double ms = 0, gbps = 0;
  bool repeatable = true, ok = false;
};

// The error gain G = sum_k ||A^k||_inf of the order-m filter a (a[0] = 1),
// A its companion matrix: errors of relative size eps committed in the state,
// in any evaluation order, reach the output amplified by at most G.
double error_gain(std::vector<double> const& a) {
  std::size_t const m = a.size() - 1;
  std::vector<double> p(m * m, 0.0);  // A^k, from k = 0
  for (std::size_t j = 0; j < m; ++j) p[j * m + j] = 1;
  double g = 0, norm = 1;
  for (int k = 0; k < 100000 && norm > 1e-18; ++k) {
    norm = 0;
    for (std::size_t r = 0; r < m; ++r) {
      double sum = 0;
      for (std::size_t c = 0; c < m; ++c) sum += std::abs(p[r * m + c]);
      norm = std::max(norm, sum);
    }
    g += norm;
    // A^(k+1) = A^k A, A's first column -a[1:] and ones above its diagonal.
    std::vector<double> next(m * m, 0.0);
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t q = 0; q < m; ++q) next[r * m] -= p[r * m + q] * a[q + 1];
      for (std::size_t c = 1; c < m; ++c) next[r * m + c] = p[r * m + c - 1];
    }
    p = std::move(next);
  }
  return g;
}

// An order-2 low-pass (a pair of poles at radius 0.64) over a batch of f32
// sequences. On the CPU the check is the sequential reference's bits; on the
// GPU (a scan over the filter's state) agreement with the reference run in
// double: max |y - y_ref| <= 16 eps (K + 1) G S, S the size of the terms.
filter_row run_lfilter(device_kind kind, std::string problem, recur::layout const& lay,
                       std::uint64_t stream_id) {
  std::vector<float> const b = {0.0675f, 0.135f, 0.0675f}, a = {1.0f, -1.1430f, 0.4128f};
  std::vector<float> x(static_cast<std::size_t>(lay.size()));
  splitmix64 rng = stream(stream_id);
  for (auto& v : x) v = static_cast<float>(rng.uniform(-1, 1));
  std::vector<float> y = poisoned<float>(lay.size());
  timing tm;
  {
    device dev(kind);
    float const* const dx = dev.input(std::span<float const>(x));
    float* const dy = dev.output(std::span<float>(y));
    tm = time_runs(dev, y, [&](auto const& ex) { call_lfilter(ex, b, a, dx, dy, lay); });
  }
  filter_row r;
  r.problem = std::move(problem);
  r.ms = tm.median_ms;
  r.repeatable = tm.repeatable;
  r.gbps = gbps(8.0 * static_cast<double>(lay.size()), r.ms);  // x read, y written
  if (kind == device_kind::cpu) {
    std::vector<float> want(x.size());
    recur::reference::lfilter<float>(b, a, x.data(), want.data(), lay, nullptr, nullptr);
    bool const same = same_bits(y, want);
    r.check = same ? "== reference::lfilter, bitwise" : "DIFFERS from reference::lfilter";
    r.ok = same && r.repeatable;
    return r;
  }
  std::vector<double> const bd(b.begin(), b.end()), ad(a.begin(), a.end()), xd(x.begin(), x.end());
  std::vector<double> want(x.size());
  recur::reference::lfilter<double>(bd, ad, xd.data(), want.data(), lay, nullptr, nullptr);
  double err = 0, scale = 0, xmax = 0, bmax = 0;
  for (double const v : bd) bmax = std::max(bmax, std::abs(v));
  for (std::size_t i = 0; i < x.size(); ++i) {
    double const got = y[i];
    err =
        std::isfinite(got) ? std::max(err, std::abs(got - want[i])) : std::numeric_limits<double>::infinity();
    scale = std::max(scale, std::abs(want[i]));
    xmax = std::max(xmax, std::abs(xd[i]));
  }
  scale = std::max(scale, xmax * (1 + bmax));
  double const tol =
      16 * static_cast<double>(std::numeric_limits<float>::epsilon()) * 3 * error_gain(ad) * scale;
  r.check = fmt::format("reference in f64: {:.1e} <= {:.1e}", err, tol);
  r.ok = err <= tol && r.repeatable;
  return r;
}

// A 16-bit image (rows as lanes): a smooth field plus noise, coded with the
// gradient predictor 2 x_(i-1) - x_(i-2). Encode is checked against the
// reference's bits, decode by the round trip (exactly the image), on either
// device: integer DPCM is exact on the GPU too.
std::vector<filter_row> run_dpcm(device_kind kind, std::int64_t width, std::int64_t height,
                                 std::uint64_t stream_id) {
  recur::layout const lay = recur::layout::contiguous(width, height);
  std::vector<std::int16_t> img(static_cast<std::size_t>(lay.size()));
  splitmix64 rng = stream(stream_id);
  for (std::int64_t yy = 0; yy < height; ++yy)
    for (std::int64_t xx = 0; xx < width; ++xx) {
      double const v =
          8000.0 * std::sin(0.003 * static_cast<double>(xx)) * std::cos(0.002 * static_cast<double>(yy)) +
          rng.uniform(-20, 20);
      img[static_cast<std::size_t>(yy * width + xx)] = static_cast<std::int16_t>(v);
    }
  std::vector<std::int64_t> const c = {2, -1};
  std::vector<std::int16_t> e(img.size(), -1), back(img.size(), -1);
  std::string const shape = fmt::format("{} x {} rows", width, height);
  double const bytes = 4.0 * static_cast<double>(lay.size());  // 2 B read, 2 B written per sample
  timing te, td;
  {
    device dev(kind);
    std::int16_t const* const dimg = dev.input(std::span<std::int16_t const>(img));
    std::int16_t* const de = dev.output(std::span<std::int16_t>(e));
    te = time_runs(dev, e, [&](auto const& ex) { call_dpcm(ex, true, c, dimg, de, lay); });
  }
  {
    device dev(kind);
    std::int16_t const* const de = dev.input(std::span<std::int16_t const>(e));
    std::int16_t* const dback = dev.output(std::span<std::int16_t>(back));
    td = time_runs(dev, back, [&](auto const& ex) { call_dpcm(ex, false, c, de, dback, lay); });
  }

  filter_row enc;
  enc.problem = "i16  DPCM encode order 2, " + shape;
  std::vector<std::int16_t> want(img.size());
  recur::reference::dpcm_encode<std::int16_t>(c, 0, img.data(), want.data(), lay);
  bool const same = same_bits(e, want);
  enc.ms = te.median_ms;
  enc.repeatable = te.repeatable;
  enc.gbps = gbps(bytes, enc.ms);
  enc.check = same ? "== reference::dpcm_encode, bitwise" : "DIFFERS from reference::dpcm_encode";
  enc.ok = same && enc.repeatable;

  filter_row dec;
  dec.problem = "i16  DPCM decode order 2, " + shape;
  bool const exact = back == img;
  dec.ms = td.median_ms;
  dec.repeatable = td.repeatable;
  dec.gbps = gbps(bytes, dec.ms);
  dec.check = exact ? "decode(encode(x)) == x, exact" : "ROUND TRIP NOT EXACT";
  dec.ok = exact && dec.repeatable;
  return {enc, dec};
}

bool filter_section(device_kind kind, std::string const& backend) {
  std::vector<filter_row> rows;
  auto report = [&](filter_row r) { rows.push_back(done(std::move(r), 46)); };
  report(run_lfilter(kind, "f32  lfilter order 2, 1024 x 2^14 contiguous",
                     recur::layout::contiguous(std::int64_t{1} << 14, 1024), 21));
  report(run_lfilter(kind, "f32  lfilter order 2, 2^14 x 1024 interleaved",
                     recur::layout::interleaved(std::int64_t{1} << 14, 1024), 22));
  for (auto& r : run_dpcm(kind, 2048, 2048, 23)) report(std::move(r));

  fmt::print("\n{:<8} {:<46} {:>10} {:>9} {:<38} {:>10} {:>6}\n", "backend", "problem", "time (ms)", "GB/s",
             "check against", "repeatable", "check");
  bool all_ok = true;
  for (filter_row const& r : rows) {
    fmt::print("{:<8} {:<46} {:>10.3f} {:>9.2f} {:<38} {:>10} {:>6}\n", backend, r.problem, r.ms, r.gbps,
               r.check, r.repeatable ? "yes" : "NO", r.ok ? "ok" : "FAIL");
    all_ok = all_ok && r.ok;
  }
  fmt::print(
      "\nn x count: count sequences of n samples (inputs U[-1, 1], seed {}). lfilter: b = [0.0675 0.135\n"
      "0.0675], a = [1 -1.143 0.4128]. GB/s: 8 B per f32 sample (x read, y written), 4 B per int16\n"
      "sample. On the CPU each sequence runs sequentially on one thread, with the reference's\n"
      "arithmetic, so the results equal the references bit for bit. On the GPU lfilter is a scan over\n"
      "the filter's state, checked against the reference in double (max |y - y_ref| within 16 eps\n"
      "(K + 1) G S: G the filter's error gain, S the size of the terms); integer DPCM is exact there too.\n",
      seed);
  return all_ok;
}

// ---------------------------------------------------------------- demo --

int run_demo(arguments const& args) {
  args.expect_positional(0, "");
  device_kind const kind = select_device(args);
  std::string const backend = kind == device_kind::gpu ? "cuda" : "host";

  fmt::print("recur {} demo: w_i = s_i w_(i-1) + t_i, w_(-1) = 0, s ~ U[-{}, {}], t ~ U[-1, 1], seed {}\n",
             RECUR_VERSION_STRING, s_bound, s_bound, seed);
  fmt::print("backend: {}\n", device_line(kind));
  std::fflush(stdout);
  bool all_ok = linrec_section(kind, backend);

  fmt::print(
      "\nbatched tridiagonal systems a_i x_(i-1) + b_i x_i + c_i x_(i+1) = d_i, recur::solve_batched\n");
  std::fflush(stdout);
  all_ok = tridiag_section(kind, backend) && all_ok;

  fmt::print("\nIIR filter and DPCM: recur::lfilter, recur::dpcm_encode, recur::dpcm_decode\n");
  std::fflush(stdout);
  all_ok = filter_section(kind, backend) && all_ok;
  if (!all_ok) {
    fmt::print(stderr,
               "recur demo: FAILED: a result is outside its tolerance, not repeatable, or a run failed\n");
    return exit_failed;
  }
  fmt::print("all checks passed\n");
  return exit_ok;
}

}  // namespace

command const demo_command{
    "demo",
    "run a built-in workload through the library and check every result",
    "demo [--device D]",
    "Runs a fixed workload and checks every result: first-order recurrences w_i = s_i w_(i-1) + t_i\n"
    "(one 2^24-element f32 sequence, a batch of 4096 x 4096 f32 in contiguous and interleaved\n"
    "layouts, one 2^24-element f64 sequence) against the sequential reference in double; batched\n"
    "tridiagonal systems (512 systems of 512 unknowns, Zhang et al.'s shape, in f32 and f64, and\n"
    "2^16 systems of 64 unknowns interleaved) by their residual; an order-2 IIR filter over batches\n"
    "and a DPCM round trip of a 16-bit image against the sequential references. Prints time,\n"
    "bandwidth and error per problem. Every section runs on the device --device selects.",
    "",
    "recur demo --device cpu",
    "  0  every check passed\n"
    "  1  a check or a run failed\n"
    "  2  bad command line\n",
    {},
    run_demo,
};

}  // namespace recur_cli
