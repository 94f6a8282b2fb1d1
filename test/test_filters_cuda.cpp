// recur::sosfilt, the floating-point DPCM codecs and recur::linrec_order_k
// through recur::cuda{stream}: the host API's GPU paths. Host code only;
// buffers, poison and the oracle's type as in test_filter_cuda.cpp.
//
// Every output is compared with the sequential reference (reference::sosfilt,
// dpcm_encode, dpcm_decode, linrec_order_k) run on the host in higher
// precision (oracle_t: double for f32, x87 long double for f64 where there is
// one) on the same rounded coefficients, samples and state. Cases: 1, 2, 3,
// 4, 5 and 9 sections (more than 4 run in passes), every row's a0 != 1; DPCM
// orders 0, 1, 2, 3, 5, 8 and linrec_order_k orders 0-8; f32 and f64;
// contiguous, interleaved and strided (gaps) layouts; 1 to 64 lanes, and
// 4100-5000 short sequences (another kernel); lengths 0 to ~3 * 10^5 (n < k
// included); state in and out, none, in place (y == x), zf == zi; the DPCM
// round trip. Outputs start poisoned (all-ones bytes, a NaN): every element
// of the layout must be written, finite and within the tolerance, every gap
// left alone. Also: argument errors (nothing written), reproducibility.
//
// The tolerance (test_filter_cuda.cpp's argument): an error committed in the
// state of a stable recurrence reaches later outputs through the powers of
// its state matrix A, whatever the evaluation order (the GPU's scan too), so
//   |y_gpu - y_oracle| <= C * eps * (K + 1) * G * S,   C = 16,
// eps = 2^-23 or 2^-52, K the state size, G = sum_k ||A^k||_inf (until a
// power's norm is below 1e-18), S the size of the terms; likewise every
// final-state value.
// - sosfilt: K = 2 * sections; A (2S x 2S): column i is the state after one
//   zero-input step of the cascade (reference::detail::df2t_step, section
//   after section) from the unit state e_i; S = max(1, max|y|, max|zi|,
//   max|zf|, max|x| (1 + max|b / a0|), M), M the largest output or state
//   value of any section over the run (a section's output can exceed the
//   cascade's). Cascades are drawn with G <= 300 (9 sections: median ~200),
//   so tol <= 16 * 19 * 300 eps S = 1.1e-2 S in f32 (checked: < 2e-2 S).
// - dpcm_decode, linrec_order_k (y_i = sum_j c_j y_{i-j} + x_i): K = k, A the
//   companion matrix of [1, -c_1, ..., -c_k] (recur_test::error_gain), c
//   drawn with G <= 100 (roots inside radius 0.9); S = max(1, max|in|,
//   max|out|, max|init|, max|final state|) (1 + max|c|), the size of the
//   prediction's terms. dpcm_encode (an FIR filter): K = k, G = k + 1, S alike.
// - decode(encode(x)) vs x: decode spreads the encoder's error (at most
//   tol_encode) by at most G (its impulse response sums to <= G), so
//   tol = G tol_encode + 16 eps (k + 1) G S.
//
// RECUR_TEST_SEED changes the inputs (see linrec_harness.hpp).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/chain.hpp>
#include <recur/filter.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include <recur/reference/linrec_order_k.hpp>

#include "filter_error_gain.hpp"
#include "linrec_harness.hpp"

using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

// ------------------------------------- CUDA memory (test_filter_cuda.cpp) ---

void cuda_ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(
        fmt::format("test_gpu: {} failed: {} ({})", what, cudaGetErrorString(e), int(e)));
}

// A non-blocking stream: the library must order its work on the stream it is given.
cudaStream_t test_stream() {
  static cudaStream_t const s = [] {
    cudaStream_t t = nullptr;
    cuda_ok(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return t;
  }();
  return s;
}

// `elements` values of T in device memory, freed on scope exit.
template <class T>
struct dbuf {
  std::unique_ptr<T, cudaError_t (*)(void*)> h{nullptr, cudaFree};
  T* p = nullptr;
  std::size_t size = 0;
  dbuf() = default;
  explicit dbuf(std::size_t elements, int fill = -1) : size(elements) {
    void* v = nullptr;
    cuda_ok(cudaMalloc(&v, (elements ? elements : 1) * sizeof(T)), "cudaMalloc");
    h.reset(p = static_cast<T*>(v));
    if (fill >= 0 && elements) cuda_ok(cudaMemset(p, fill, elements * sizeof(T)), "cudaMemset");
  }
  std::vector<T> read() const {
    std::vector<T> v(size);
    if (size) cuda_ok(cudaMemcpy(v.data(), p, size * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
    return v;
  }
};
template <class T>
dbuf<T> upload(std::vector<T> const& v) {
  dbuf<T> d(v.size());
  if (!v.empty()) cuda_ok(cudaMemcpy(d.p, v.data(), v.size() * sizeof(T), cudaMemcpyDefault), "cudaMemcpy");
  return d;
}
template <class T>
dbuf<T> poisoned(std::size_t elements) {
  return dbuf<T>(elements, 0xFF);
}

// Uploads from pageable memory and cudaMemset (legacy stream) done before a call on the test stream.
void settle() { cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before the call)"); }

void finish() {
  cuda_ok(cudaStreamSynchronize(test_stream()), "cudaStreamSynchronize (after the call)");
  cuda_ok(cudaGetLastError(), "kernels");
}

template <class T>
bool all_poison(std::vector<T> const& v) {
  return std::all_of(v.begin(), v.end(), [](T x) { return recur_test::is_poison(x); });
}

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The oracle's arithmetic (see test_filter_cuda.cpp): double for f32; for
// f64 long double where it is the x87 80-bit format, else double.
template <class T>
using oracle_t =
    std::conditional_t<sizeof(T) == sizeof(double) && std::numeric_limits<long double>::digits == 64,
                       long double, double>;

// ----------------------------------------------------------- coefficients ---

// The monic polynomial (1, p_1, ..., p_k) with k roots: conjugate pairs of
// radius 0.3 to 0.9 and angle 0.4 to 2.7 rad, or real roots of magnitude 0.3 to 0.9.
std::vector<double> stable_poly(rng& r, int k) {
  std::vector<std::complex<double>> poly{1.0};
  auto mul = [&](std::complex<double> root) {
    std::vector<std::complex<double>> q(poly.size() + 1, 0.0);
    for (std::size_t i = 0; i < poly.size(); ++i) {
      q[i] += poly[i];
      q[i + 1] -= poly[i] * root;
    }
    poly = q;
  };
  for (int j = 0; j < k;) {
    if (k - j >= 2 && r.uniform() < 0.5) {
      auto const p = std::polar(0.3 + 0.6 * r.uniform(), 0.4 + 2.3 * r.uniform());
      mul(p);
      mul(std::conj(p));
      j += 2;
    } else {
      mul(r.sign() * (0.3 + 0.6 * r.uniform()));
      j += 1;
    }
  }
  std::vector<double> out;
  for (auto const& c : poly) out.push_back(c.real());
  return out;
}

// sum_k ||A^k||_inf for an m x m matrix A (row-major), until a power's norm is below 1e-18.
double power_sum(std::vector<double> const& A, int m) {
  std::vector<double> pw(static_cast<std::size_t>(m * m), 0.0);
  for (int i = 0; i < m; ++i) pw[i * m + i] = 1;
  double g = 0;
  for (int step = 0; step < 1000000; ++step) {
    double norm = 0;
    for (int r = 0; r < m; ++r) {
      double row = 0;
      for (int c = 0; c < m; ++c) row += std::fabs(pw[r * m + c]);
      norm = std::max(norm, row);
    }
    g += norm;
    if (norm < 1e-18) break;
    std::vector<double> next(pw.size(), 0.0);
    for (int r = 0; r < m; ++r)
      for (int q = 0; q < m; ++q)
        for (int c = 0; c < m; ++c) next[r * m + c] += pw[r * m + q] * A[q * m + c];
    pw = std::move(next);
  }
  return g;
}

// The cascade's error gain from its normalised rows (3 b and 3 a values per
// section): A from zero-input steps of the reference's DF2T step.
double cascade_gain(std::vector<double> const& nb, std::vector<double> const& na) {
  int const sections = static_cast<int>(nb.size() / 3), m = 2 * sections;
  std::vector<double> A(static_cast<std::size_t>(m * m));
  for (int i = 0; i < m; ++i) {
    std::vector<double> z(static_cast<std::size_t>(m), 0.0);
    z[i] = 1;
    double v = 0;
    for (int j = 0; j < sections; ++j)
      v = recur::reference::detail::df2t_step(&nb[3 * j], &na[3 * j], 2, &z[2 * j], v);
    for (int r = 0; r < m; ++r) A[r * m + i] = z[r];
  }
  return power_sum(A, m);
}

// -------------------------------------------------------------- problems ---

enum class op { sosfilt, encode, decode, order_k };
char const* name(op w) {
  constexpr char const* names[] = {"sosfilt", "dpcm_encode", "dpcm_decode", "linrec_order_k"};
  return names[static_cast<int>(w)];
}

struct spec {
  op what = op::sosfilt;
  int order = 2;  // sections for sosfilt, k (c.size(), a.size()) otherwise
  layout lay;
  bool zi = true, zf = true;    // initial state in; final state out (sosfilt, linrec_order_k)
  bool in_place = false;        // y == x
  bool state_in_place = false;  // zf == zi
  std::uint64_t seed = 0;

  std::int64_t per() const { return what == op::sosfilt ? 2 * order : order; }
  std::int64_t state_size() const { return lay.count * per(); }
  bool has_zf() const { return zf && (what == op::sosfilt || what == op::order_k); }
  std::string describe() const {
    return fmt::format(
        "{} {} {}, layout {{n = {}, count = {}, element_stride = {}, batch_stride = {}}}{}{}{}{}, "
        "seed {:#x}",
        name(what), what == op::sosfilt ? "sections" : "order", order, lay.n, lay.count, lay.element_stride,
        lay.batch_stride, zi ? ", state in" : "", has_zf() ? ", state out" : "", in_place ? ", in place" : "",
        state_in_place ? ", zf == zi" : "", seed);
  }
};

template <class T>
struct problem {
  spec sp;
  std::vector<T> coef;         // sos rows, or c / a
  std::vector<double> nb, na;  // sosfilt: the rows normalised by a0 (3 + 3 per section)
  std::vector<T> x, zi;        // input (the layout's extent; gaps hold values too), initial state
  std::vector<double> y, zf;   // the oracle (layout positions; final state)
  double gain = 1, scale = 0, tol = 0;
};

double worst_c = 0;  // the largest |error| / (eps (K + 1) G S) seen since the last report

template <class T>
problem<T> make_problem(spec const& sp) {
  problem<T> p;
  p.sp = sp;
  rng r(sp.seed);
  int const k = sp.order;
  if (sp.what == op::sosfilt) {
    do {  // rows [b0 b1 b2 a0 a1 a2], a0 in [0.5, 2): the normalisation is exercised
      p.coef.clear(), p.nb.clear(), p.na.clear();
      for (int j = 0; j < k; ++j) {
        std::vector<double> const poly = stable_poly(r, 2);
        double const a0 = 0.5 + 1.5 * r.uniform();
        for (int c = 0; c < 3; ++c) p.coef.push_back(static_cast<T>(r.symmetric()));
        for (int c = 0; c < 3; ++c) p.coef.push_back(static_cast<T>(a0 * poly[c]));
        std::vector<double> const row(p.coef.end() - 6, p.coef.end());
        auto const f = recur::reference::detail::normalise<double>("sos", std::span(row).first(3),
                                                                   std::span(row).last(3));
        p.nb.insert(p.nb.end(), f.b.begin(), f.b.end());
        p.na.insert(p.na.end(), f.a.begin(), f.a.end());
      }
      p.gain = cascade_gain(p.nb, p.na);
    } while (p.gain > 300);
  } else {
    do {  // c_j = -a_j of a stable monic a
      std::vector<double> const poly = stable_poly(r, k);
      std::vector<double> a{1.0};
      p.coef.clear();
      for (int j = 1; j <= k; ++j) {
        p.coef.push_back(static_cast<T>(-poly[j]));
        a.push_back(-double(p.coef.back()));
      }
      p.gain = recur_test::error_gain(a);
    } while (p.gain > 100);
  }
  layout const& lay = sp.lay;
  std::int64_t const ext = recur_test::extent(lay), per = sp.per();
  std::uint64_t const key = r.next();
  p.x.resize(static_cast<std::size_t>(ext));
  recur_test::parallel_for(64, recur_test::worker_count(ext), [&](std::int64_t piece, int) {
    for (std::int64_t i = ext * piece / 64; i < ext * (piece + 1) / 64; ++i)
      p.x[i] = static_cast<T>(2.0 * recur_test::unit(recur_test::draw(key, i)) - 1.0);
  });
  if (sp.zi) {
    p.zi.resize(static_cast<std::size_t>(sp.state_size()));
    for (auto& v : p.zi) v = static_cast<T>(r.symmetric());
  }
  // The oracle, lane by lane (in parallel); for sosfilt also M, the largest
  // intermediate value (section outputs and states, in double).
  using O = oracle_t<T>;
  std::vector<O> const co(p.coef.begin(), p.coef.end());
  p.y.assign(static_cast<std::size_t>(ext), 0.0);
  p.zf.assign(sp.has_zf() ? static_cast<std::size_t>(sp.state_size()) : 0, 0.0);
  std::vector<double> inner(static_cast<std::size_t>(lay.count), 0.0);
  recur_test::parallel_for(lay.count, recur_test::worker_count(lay.n * lay.count), [&](std::int64_t q, int) {
    std::vector<O> xs(static_cast<std::size_t>(lay.n)), ys(xs.size()), zis(per), zfs(per);
    for (std::int64_t i = 0; i < lay.n; ++i) xs[i] = p.x[lay.offset(i, q)];
    for (std::int64_t j = 0; j < per; ++j) zis[j] = sp.zi ? O(p.zi[q * per + j]) : O(0);
    O const* const zi = sp.zi ? zis.data() : nullptr;
    layout const one = layout::contiguous(lay.n);
    namespace ref = recur::reference;
    if (sp.what == op::sosfilt) ref::sosfilt<O>(co, xs.data(), ys.data(), one, zi, zfs.data());
    if (sp.what == op::encode) ref::dpcm_encode<O>(co, xs.data(), ys.data(), one, zi);
    if (sp.what == op::decode) ref::dpcm_decode<O>(co, xs.data(), ys.data(), one, zi);
    if (sp.what == op::order_k) ref::linrec_order_k<O>(co, xs.data(), ys.data(), one, zi, zfs.data());
    for (std::int64_t i = 0; i < lay.n; ++i) p.y[lay.offset(i, q)] = static_cast<double>(ys[i]);
    for (std::size_t j = 0; j < (p.zf.empty() ? 0 : zfs.size()); ++j)
      p.zf[q * per + j] = static_cast<double>(zfs[j]);
    if (sp.what == op::sosfilt) {
      std::vector<double> z(zis.begin(), zis.end());
      double m = 0;
      for (std::int64_t i = 0; i < lay.n; ++i) {
        double v = double(xs[i]);
        for (int j = 0; j < k; ++j) {
          v = recur::reference::detail::df2t_step(&p.nb[3 * j], &p.na[3 * j], 2, &z[2 * j], v);
          m = std::max({m, std::fabs(v), std::fabs(z[2 * j]), std::fabs(z[2 * j + 1])});
        }
      }
      inner[q] = m;
    }
  });
  // S (see the top of the file).
  double xmax = 0, ymax = 0, smax = 0, cmax = 0;
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, q);
      xmax = std::max(xmax, std::fabs(double(p.x[o])));
      ymax = std::max(ymax, std::fabs(p.y[o]));
    }
  for (T const v : p.zi) smax = std::max(smax, std::fabs(double(v)));
  for (double const v : p.zf) smax = std::max(smax, std::fabs(v));
  if (sp.what == op::sosfilt) {
    for (double const v : p.nb) cmax = std::max(cmax, std::fabs(v));
    for (double const m : inner) smax = std::max(smax, m);
    p.scale = std::max({1.0, ymax, smax, xmax * (1 + cmax)});
  } else {
    for (T const v : p.coef) cmax = std::max(cmax, std::fabs(double(v)));
    p.scale = std::max({1.0, xmax, ymax, smax}) * (1 + cmax);
  }
  if (sp.what == op::encode) p.gain = k + 1;
  double const K = sp.what == op::sosfilt ? 2 * k : k;
  p.tol = 16 * std::numeric_limits<T>::epsilon() * (K + 1) * p.gain * p.scale;
  return p;
}

template <class T>
struct result {
  std::vector<T> y, zf;
};

// One call of the function on device pointers (ns state values in zi and zf;
// their size follows from the layout).
template <class T>
void call(recur::cuda const& ex, op what, std::span<T const> coef, T const* x, T* y, layout const& lay,
          T const* zi, T* zf, std::size_t /*ns*/) {
  if (what == op::sosfilt) recur::sosfilt(ex, coef, x, y, lay, {zi, zf});
  if (what == op::encode) recur::dpcm_encode(ex, coef, x, y, lay, {zi});
  if (what == op::decode) recur::dpcm_decode(ex, coef, x, y, lay, {zi});
  if (what == op::order_k) recur::linrec_order_k(ex, coef, x, y, lay, recur::chain_options<T>{zi, zf});
}

// On fresh device buffers: x and zi uploaded, y and zf poisoned.
template <class T>
result<T> run_gpu(problem<T> const& p) {
  spec const& sp = p.sp;
  std::size_t const ext = p.x.size(), ns = static_cast<std::size_t>(sp.state_size());
  dbuf<T> const dx = upload(p.x);
  dbuf<T> const dy = sp.in_place ? dbuf<T>() : poisoned<T>(ext);
  dbuf<T> const dzi = sp.zi ? upload(p.zi) : dbuf<T>();
  dbuf<T> const dzf = sp.has_zf() && !sp.state_in_place ? poisoned<T>(ns) : dbuf<T>();
  settle();
  T* const zf = !sp.has_zf() || !ns ? nullptr : sp.state_in_place ? dzi.p : dzf.p;
  call<T>(recur::cuda{test_stream()}, sp.what, p.coef, dx.p, sp.in_place ? dx.p : dy.p, sp.lay,
          sp.zi && ns ? dzi.p : nullptr, zf, ns);
  finish();
  result<T> r;
  r.y = (sp.in_place ? dx : dy).read();
  if (sp.has_zf()) r.zf = (sp.state_in_place ? dzi : dzf).read();
  return r;
}

// "" when every element of the layout is written, finite and within the
// tolerance, every gap untouched (poison, or x's value in place) and every
// final-state value within the tolerance; otherwise the first failure.
template <class T>
std::string mismatch(problem<T> const& p, result<T> const& r) {
  spec const& sp = p.sp;
  layout const& lay = sp.lay;
  if (r.y.size() != p.x.size()) return "y has the wrong size";
  std::vector<char> in(p.x.size(), 0);
  std::string first;
  double worst = 0;
  auto const check = [&](T v, double want, auto&& where) {
    double const e = std::fabs(double(v) - want);
    if ((recur_test::is_poison(v) || !std::isfinite(v) || !(e <= p.tol)) && first.empty())
      first = recur_test::is_poison(v)
                  ? fmt::format("{} was not written", where())
                  : fmt::format("{} = {} where the oracle has {}: error {:.3g}", where(), double(v), want, e);
    if (!(e <= worst)) worst = e;
  };
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, q);
      in[o] = 1;
      check(r.y[o], p.y[o], [&] { return fmt::format("y({}, {})", i, q); });
    }
  for (std::size_t o = 0; o < in.size(); ++o)
    if (!in[o] && first.empty() &&
        !(sp.in_place ? recur_test::same_bits(r.y[o], p.x[o]) : recur_test::is_poison(r.y[o])))
      first = fmt::format("the gap at offset {} was written", o);
  if (sp.has_zf()) {
    if (r.zf.size() != p.zf.size()) return "the final state has the wrong size";
    for (std::size_t j = 0; j < p.zf.size(); ++j)
      check(r.zf[j], p.zf[j], [&] { return fmt::format("final state [{}]", j); });
  }
  double const unit = p.tol / 16;  // eps (K + 1) G S
  if (unit > 0) worst_c = std::max(worst_c, worst / unit);
  if (first.empty()) return "";
  return fmt::format(
      "{} (worst error {:.3g}, tolerance {:.3g} = 16 eps (K + 1) G S with G = {:.3g}, S = {:.3g})", first,
      worst, p.tol, p.gain, p.scale);
}

template <class T>
void run_and_check(spec const& sp) {
  auto const p = make_problem<T>(sp);
  BOOST_TEST(p.tol <= 2e-2 * p.scale, sp.describe() << ": tolerance " << p.tol << " is not far below S");
  std::string const why = mismatch(p, run_gpu(p));
  BOOST_TEST(why.empty(), (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": " << why);
}

void report(char const* what) {
  BOOST_TEST_MESSAGE(what << ": worst |error| / (eps (K + 1) G S) = " << worst_c << " (C = 16)");
  worst_c = 0;
}

constexpr layout_kind kinds[] = {layout_kind::contiguous, layout_kind::interleaved,
                                 layout_kind::strided_gaps};
constexpr layout_kind dense[] = {layout_kind::contiguous, layout_kind::interleaved};
char const* type_name(float) { return "f32"; }
char const* type_name(double) { return "f64"; }

struct shape {
  std::int64_t n, count;
};

std::vector<int> const sections = {1, 2, 3, 4, 5, 9}, dpcm_orders = {0, 1, 2, 3, 5, 8},
                       orders_0_8 = {0, 1, 2, 3, 4, 5, 6, 7, 8};
std::vector<shape> const sos_shapes = [] {
  std::vector<shape> v;
  for (std::int64_t const count : {1, 3, 64})
    for (std::int64_t const n : {0, 1, 2, 31, 4099, 20011}) v.push_back({n, count});
  return v;
}();
std::vector<shape> const dpcm_shapes = {{1, 1}, {5, 1},    {4099, 1},   {100003, 1}, {1, 7},
                                        {5, 7}, {4099, 7}, {100003, 7}, {40, 4100}};
std::vector<shape> const order_k_shapes = {{0, 3},  {1, 1},    {2, 3},      {5, 3},
                                           {7, 64}, {4099, 3}, {20011, 64}, {100003, 1}};

// Every layout kind x shape, with zi in and zf out (sosfilt), or init in and
// not (DPCM), or init and final_state, each with and without (linrec_order_k).
template <class T>
void sweep(op what, std::vector<int> const& orders, std::span<layout_kind const> ks,
           std::vector<shape> const& shapes, std::uint64_t salt) {
  int idx = 0;
  for (int order : orders)
    for (layout_kind const kind : ks)
      for (auto const [n, count] : shapes)
        for (int init = 0; init < (what == op::encode || what == op::decode ? 2 : 1); ++init, ++idx)
          run_and_check<T>({.what = what,
                            .order = order,
                            .lay = recur_test::make_layout(kind, n, count),
                            .zi = init == 0 && !(what == op::order_k && idx % 3 == 2),
                            .zf = !(what == op::order_k && idx % 5 == 4),
                            .seed = seed_for(salt, static_cast<std::uint64_t>(idx))});
  report(fmt::format("{} {}", name(what), type_name(T{})).c_str());
}

// y == x, zf == zi (sosfilt, linrec_order_k), and both at once.
template <class T>
void in_place(op what, std::vector<int> const& orders, std::uint64_t salt) {
  int idx = 0;
  for (int order : orders)
    for (layout_kind const kind : kinds)
      for (auto const [n, count] : {shape{1, 1}, shape{3, 3}, shape{4099, 64}, shape{20011, 3}})
        for (int mode = 0; mode < 3; ++mode, ++idx)
          run_and_check<T>({.what = what,
                            .order = order,
                            .lay = recur_test::make_layout(kind, n, count),
                            .in_place = mode != 1,
                            .state_in_place = mode != 0 && (what == op::sosfilt || what == op::order_k),
                            .seed = seed_for(salt, static_cast<std::uint64_t>(idx))});
}

// encode, then decode what the GPU encoded (separate buffers, or both in
// place): x back within G tol_encode + 16 eps (k + 1) G S (see the top).
template <class T>
void round_trip(std::uint64_t salt) {
  int idx = 0;
  for (int order : dpcm_orders)
    for (layout_kind const kind : dense)
      for (auto const [n, count] : {shape{4099, 7}, shape{100003, 1}, shape{40, 4100}}) {
        problem<T> p = make_problem<T>({.what = op::encode,
                                        .order = order,
                                        .lay = recur_test::make_layout(kind, n, count),
                                        .zi = idx % 2 == 0,
                                        .in_place = idx % 3 == 0,
                                        .seed = seed_for(salt, static_cast<std::uint64_t>(idx))});
        ++idx;
        std::vector<double> a{1.0};
        for (T const c : p.coef) a.push_back(-double(c));
        double const g = recur_test::error_gain(a);
        double const tol = g * p.tol + 16 * std::numeric_limits<T>::epsilon() * (order + 1) * g * p.scale;
        std::vector<T> const x = p.x;
        p.x = run_gpu(p).y;  // e (gaps: poison, never read; or x's values in place)
        p.sp.what = op::decode;
        std::vector<T> const back = run_gpu(p).y;
        double worst = 0;
        for (std::int64_t q = 0; q < p.sp.lay.count; ++q)
          for (std::int64_t i = 0; i < p.sp.lay.n; ++i) {
            std::int64_t const o = p.sp.lay.offset(i, q);
            double const err = std::fabs(double(back[o]) - double(x[o]));
            if (!(err <= worst)) worst = err;  // NaN sticks
          }
        BOOST_TEST(worst <= tol, type_name(T{}) << " " << p.sp.describe() << ": decode(encode(x)) off by "
                                                << worst << ", tolerance " << tol);
      }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(filters_cuda)

// 1, 2, 3, 4, 5, 9 sections x layouts x 1, 3, 64 lanes x lengths 0 to 20011, zi in and zf out.
BOOST_AUTO_TEST_CASE(sosfilt_f32) { sweep<float>(op::sosfilt, sections, kinds, sos_shapes, 801); }
BOOST_AUTO_TEST_CASE(sosfilt_f64) { sweep<double>(op::sosfilt, sections, kinds, sos_shapes, 802); }

// 5000 sequences of 50 (the one-thread-per-sequence kernel); one sequence of
// 300007 (many tiles) with state in and out, without, zf only; in place.
BOOST_AUTO_TEST_CASE(sosfilt_short_long_stateless_in_place) {
  sweep<float>(op::sosfilt, {1, 2, 4, 5, 9}, kinds, {{50, 5000}}, 803);
  sweep<double>(op::sosfilt, {1, 2, 4, 5, 9}, kinds, {{50, 5000}}, 804);
  int idx = 0;
  for (int sections : {1, 3, 4, 9})
    for (int mode = 0; mode < 3; ++mode, ++idx) {
      spec const sp{.order = sections,
                    .lay = layout::contiguous(300007),
                    .zi = mode == 0,
                    .zf = mode != 1,
                    .seed = seed_for(805, static_cast<std::uint64_t>(idx))};
      run_and_check<float>(sp);
      run_and_check<double>(sp);
    }
  in_place<float>(op::sosfilt, {1, 4, 5, 9}, 806);
  in_place<double>(op::sosfilt, {1, 4, 5, 9}, 807);
  report("sosfilt long, stateless, in place");
}

// Orders 0, 1, 2, 3, 5, 8 x init or not x layouts x 1, 7, 4100 lanes x lengths 1 to 100003.
BOOST_AUTO_TEST_CASE(dpcm_encode_f32) { sweep<float>(op::encode, dpcm_orders, dense, dpcm_shapes, 811); }
BOOST_AUTO_TEST_CASE(dpcm_encode_f64) { sweep<double>(op::encode, dpcm_orders, dense, dpcm_shapes, 812); }
BOOST_AUTO_TEST_CASE(dpcm_decode_f32) { sweep<float>(op::decode, dpcm_orders, dense, dpcm_shapes, 813); }
BOOST_AUTO_TEST_CASE(dpcm_decode_f64) { sweep<double>(op::decode, dpcm_orders, dense, dpcm_shapes, 814); }
BOOST_AUTO_TEST_CASE(dpcm_round_trip) {
  round_trip<float>(815);
  round_trip<double>(816);
}

// Orders 0-8 x layouts x lengths 0 to 100003 (n < k included: the final
// state holds initial values), init and final_state or not; then in place.
BOOST_AUTO_TEST_CASE(linrec_order_k_f32) {
  sweep<float>(op::order_k, orders_0_8, kinds, order_k_shapes, 821);
}
BOOST_AUTO_TEST_CASE(linrec_order_k_f64) {
  sweep<double>(op::order_k, orders_0_8, kinds, order_k_shapes, 822);
}
BOOST_AUTO_TEST_CASE(linrec_order_k_and_dpcm_in_place) {
  in_place<float>(op::order_k, dpcm_orders, 823);
  in_place<double>(op::order_k, dpcm_orders, 824);
  in_place<float>(op::decode, {0, 2, 8}, 825);
  in_place<double>(op::encode, {0, 2, 8}, 826);
  report("in place");
}

// Two runs of sosfilt (4 sections, 2^20 samples) give the same bits.
BOOST_AUTO_TEST_CASE(sosfilt_bitwise_reproducible) {
  auto twice = [](auto zero) {
    using T = decltype(zero);
    spec const sp{
        .order = 4, .lay = layout::contiguous(std::int64_t{1} << 20), .seed = seed_for(831, sizeof(T))};
    auto const p = make_problem<T>(sp);
    auto const r1 = run_gpu(p), r2 = run_gpu(p);
    BOOST_TEST(mismatch(p, r1).empty(), sp.describe() << ": " << mismatch(p, r1));
    BOOST_TEST((same_bits(r1.y, r2.y) && same_bits(r1.zf, r2.zf)), sp.describe() << ": two runs differ");
  };
  twice(0.0f);
  twice(0.0);
}

// Bad arguments: recur::invalid_argument with the function's name and the
// argument's, before anything is written.
template <class T>
void errors() {
  std::int64_t const n = 1000, count = 2;
  std::size_t const elements = n * count, ns = count * 2;  // 1 section, or order 2: 2 state values a lane
  layout const lay = layout::contiguous(n, count);
  rng r(seed_for(841, sizeof(T)));
  std::vector<T> hx(elements), hzi(ns), hy(elements, recur_test::poison<T>());
  for (auto& v : hx) v = T(r.symmetric());
  for (auto& v : hzi) v = T(r.symmetric());
  std::vector<T> const sos = {T(0.25), T(0.5), T(0.25), T(2), T(-0.5), T(0.25)}, c2 = {T(0.5), T(-0.25)},
                       c9(9, T(0.05)), sos7 = {T(0.25), T(0.5), T(0.25), T(1), T(-0.5), T(0.25), T(0.1)};
  dbuf<T> const dx = upload(hx), dzi = upload(hzi), dy = poisoned<T>(elements), dzf = poisoned<T>(ns);
  dbuf<T> const dsos = upload(sos), dc = upload(c2);
  settle();
  recur::cuda const ex{test_stream()};
  auto expect = [](auto&& f, std::string const& fn, std::vector<std::string> const& words,
                   std::string const& what) {
    BOOST_CHECK_EXCEPTION(f(), recur::invalid_argument, [&](recur::invalid_argument const& e) {
      std::string const m = e.what();
      bool ok = m.rfind(fn + ": ", 0) == 0;
      for (auto const& w : words) ok = ok && m.find(w) != std::string::npos;
      BOOST_TEST(ok, (sizeof(T) == 4 ? "f32 " : "f64 ") << what << ": message \"" << m << "\"");
      return ok;
    });
  };
  struct names {
    op what;
    char const *in, *out, *state, *coef;
  };
  for (names const& nm : {names{op::sosfilt, "x = ", "y = ", "opt.init = ", "sos = "},
                          names{op::encode, "x = ", "e = ", "init = ", "c = "},
                          names{op::decode, "e = ", "x = ", "init = ", "c = "},
                          names{op::order_k, "x = ", "y = ", "opt.init = ", "a = "}}) {
    op const what = nm.what;
    bool const sos_call = what == op::sosfilt;
    std::string const fn = std::string("recur::") + name(what);
    std::span<T const> const coef = sos_call ? std::span<T const>(sos) : std::span<T const>(c2);
    std::span<T const> const dcoef(sos_call ? dsos.p : dc.p, coef.size());
    T* const zf = sos_call || what == op::order_k ? dzf.p : nullptr;
    // Host memory where device memory is needed: the input, the output, the state.
    expect([&] { call<T>(ex, what, coef, hx.data(), dy.p, lay, dzi.p, zf, ns); }, fn, {nm.in, "host memory"},
           fn + " host input");
    expect([&] { call<T>(ex, what, coef, dx.p, hy.data(), lay, dzi.p, zf, ns); }, fn, {nm.out, "host memory"},
           fn + " host output");
    expect([&] { call<T>(ex, what, coef, dx.p, dy.p, lay, hzi.data(), zf, ns); }, fn,
           {nm.state, "host memory"}, fn + " host state");
    // Device memory for the coefficients (they are read on the host).
    expect([&] { call<T>(ex, what, dcoef, dx.p, dy.p, lay, dzi.p, zf, ns); }, fn, {nm.coef, "device memory"},
           fn + " device coefficients");
    // Order 9: the GPU's limit is 8.
    if (!sos_call)
      expect([&] { call<T>(ex, what, std::span<T const>(c9), dx.p, dy.p, lay, nullptr, nullptr, 0); }, fn,
             {"order 9", "0-8"}, fn + " order 9");
  }
  expect([&] { call<T>(ex, op::sosfilt, std::span<T const>(sos7), dx.p, dy.p, lay, nullptr, nullptr, 0); },
         "recur::sosfilt", {"sos has 7 values"}, "sos of 7 values");
  finish();
  BOOST_TEST(all_poison(dy.read()));
  BOOST_TEST(all_poison(dzf.read()));
  BOOST_TEST(all_poison(hy));
  BOOST_TEST(same_bits(dx.read(), hx));
  BOOST_TEST(same_bits(dzi.read(), hzi));
}
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  errors<float>();
  errors<double>();
}

BOOST_AUTO_TEST_SUITE_END()
