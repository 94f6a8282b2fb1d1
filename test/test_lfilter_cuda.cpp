// recur::lfilter through recur::cuda{stream}: the host API's GPU path
// (recur::device::lfilter behind the host checks). Host code only: buffers
// come from the CUDA runtime, the work from the host API.
//
// Every output is compared with recur::reference::lfilter run on the host in
// higher precision (the oracle, recur_test::oracle_t) on the same (rounded)
// coefficients, samples and initial state: the GPU composes the filter as a
// scan, so it does not reproduce the sequential T arithmetic bit for bit.
// Cases: orders 0 to 8 (b and a of equal and of different lengths), f32 and
// f64, contiguous, interleaved and strided (gaps) layouts, lengths 0, 1, 2,
// 3, primes and ~10^5, 1, 3 and 64 lanes, with zi in / zf out, without
// state, in place (y == x), zf == zi, both forms of the call (spans; pointer
// and length). Outputs start poisoned (all-ones bytes, a NaN): every element
// of the layout must be written, finite and within the tolerance, every gap
// left alone. Also: bitwise reproducibility run to run, order 9 rejected
// with nothing written, host pointers rejected (and device coefficients),
// the host's argument errors word for word, empty batches, managed memory,
// and a check that the comparison itself catches a wrong element.
//
// The tolerance. A stable filter (every case here: poles inside radius 0.9,
// see make_filter) forgets a rounding error the way it forgets its input: an
// error e committed in the state at step j reaches step i as A^(i-j) e, A
// the companion matrix of the normalised a. So whatever the evaluation order,
// errors of relative size eps (machine epsilon, 2^-23 or 2^-52) committed in
// the K + 1 values of the state reach the output amplified by at most the
// error gain G = sum_k ||A^k||_inf. The scan commits a bounded number of
// such errors per sample (the load, the thread's run of items, the log2(512)
// levels of the block scan, the tile's incoming prefix, the determination),
// and those committed in earlier tiles decay through A^tile like any other:
// the error does not grow with n (it is not a sum, whose error grows like
// sqrt(n) to n). Hence
//   |y_gpu - y_exact| <= C * eps * (K + 1) * G * S,
// S the size of the terms: max(|y|, |zf|, |zi|, |x| (1 + max|b / a0|)).
// C = 16: a CPU emulation of the first GPU kernel's operation order (a
// generic scan over (state, output) values: items per thread, warp and block
// Hillis-Steele, look-back fold, determination; without fma contraction,
// which only lowers the error) on these filters, n up to 10^5, gave at most
// 0.55 for |error| / (eps (K + 1) G S), and the sequential reference in T at
// most 0.5 (on every case of the sweeps below). The kernel now runs
// agent_lti.cuh (per-thread runs, warp scan and warp-total scan with matrix
// powers, value-space look-back, re-run from the incoming state): a similar
// count of rounded operations per sample, and these sweeps pass with C = 16
// on the H100. C = 16 leaves ~30x, also with an
// oracle in double for f64 (see oracle_t), whose own error is the
// sequential one. Filters are drawn with G <= 100 (make_filter), so the
// tolerance stays below 16 (K + 1) 100 eps S, 9.6e-4 S in f32 and 1.8e-12 S
// in f64 for order 4 (1.7e-3 and 3.2e-12 for order 8; checked for every
// case), typically 10x smaller: a wrong
// coefficient, a lost initial state or a shifted sample, errors of order S,
// fail by orders of magnitude (checker_catches_wrong_results shows the
// comparison failing on one element off by twice the tolerance).
//
// RECUR_TEST_SEED changes the inputs (common/random.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <regex>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>
#include <recur/reference/lfilter.hpp>

#include "common/cases.hpp"
#include "common/cuda_memory.hpp"
#include "common/filters.hpp"
#include "common/layouts.hpp"
#include "common/lti_check.hpp"
#include "common/poison.hpp"
#include "common/random.hpp"

using recur::layout;
using recur_test::layout_kind;
using recur_test::rng;
using recur_test::seed_for;

namespace {

using recur_test::dbuf;
using recur_test::finish;
using recur_test::memory;
using recur_test::oracle_t;
using recur_test::other_stream;
using recur_test::poisoned;
using recur_test::same_bytes;
using recur_test::settle;
using recur_test::test_stream;
using recur_test::upload;

// ---------------------------------------------------------------- filters ---

using recur_test::error_gain;

template <class T>
struct filter {
  std::vector<T> b, a;
  int order() const { return static_cast<int>(std::max(b.size(), a.size())) - 1; }
  double gain = 1;
};

// A stable filter with nb and na coefficients: na - 1 poles
// (recur_test::stable_poly: conjugate pairs or real poles of radius 0.3 to
// 0.9); a[0] between 0.5 and 2 (the normalisation is exercised); b in
// [-1, 1). Drawn again until the error gain of the rounded coefficients is
// at most 100 (poles clustered near radius 0.9 give transients in the
// thousands; the tolerance is proportional to it).
template <class T>
filter<T> make_filter(rng& r, int nb, int na) {
  for (;;) {
    std::vector<double> const poly = recur_test::stable_poly(r, na - 1);
    double const a0 = 0.5 + 1.5 * r.uniform();
    filter<T> f;
    for (double const c : poly) f.a.push_back(static_cast<T>(a0 * c));
    for (int j = 0; j < nb; ++j) f.b.push_back(static_cast<T>(r.symmetric()));
    // The state has max(nb, na) - 1 values: a padded with zeros (an FIR
    // filter's A is the shift, G = order + 1).
    std::vector<double> ad(f.a.begin(), f.a.end());
    ad.resize(static_cast<std::size_t>(std::max(nb, na)), 0.0);
    f.gain = error_gain(ad);
    if (f.gain <= 100) return f;
  }
}

// ------------------------------------------------------------------ cases ---

struct spec {
  int order = 2;
  int shape = 0;  // 0: nb == na == order + 1; 1: b shorter (nb = order); 2: a shorter (na = order)
  layout lay;
  bool zi = true, zf = true;
  bool in_place = false;        // y == x
  bool state_in_place = false;  // zf == zi
  std::uint64_t seed = 0;

  std::int64_t state_size() const { return lay.count * order; }
  std::string describe() const {
    return fmt::format(
        "order {} (shape {}), layout {{n = {}, count = {}, element_stride = {}, batch_stride = {}}}"
        "{}{}{}{}, seed {:#x}",
        order, shape, lay.n, lay.count, lay.element_stride, lay.batch_stride, zi ? ", zi" : "",
        zf ? ", zf" : "", in_place ? ", y == x" : "", state_in_place ? ", zf == zi" : "", seed);
  }
};

template <class T>
struct problem {
  spec sp;
  filter<T> f;
  std::vector<T> x;        // the layout's extent; gaps hold samples too (never read)
  std::vector<T> zi;       // count * order values (empty without zi)
  std::vector<double> y;   // the oracle at the layout's positions (rounded to double)
  std::vector<double> zf;  // count * order values
  double scale = 0, tol = 0;
};

template <class T>
problem<T> make_problem(spec const& sp) {
  problem<T> p;
  p.sp = sp;
  rng r(sp.seed);
  int const k = sp.order;
  int const nb = sp.shape == 1 ? std::max(1, k) : k + 1;
  int const na = sp.shape == 2 ? std::max(1, k) : k + 1;
  p.f = make_filter<T>(r, nb, na);
  BOOST_REQUIRE_EQUAL(p.f.order(), k);
  layout const& lay = sp.lay;
  recur_test::draw_inputs(r, lay, sp.state_size(), sp.zi, p.x, p.zi);
  // The oracle, lane by lane (in parallel): the reference in oracle_t on the
  // rounded coefficients and data.
  using O = oracle_t<T>;
  std::vector<O> const bl(p.f.b.begin(), p.f.b.end()), al(p.f.a.begin(), p.f.a.end());
  recur_test::oracle_lanes<O>(lay, p.x, p.zi, k, true, p.y, p.zf,
                              [&](std::int64_t, auto const& xs, auto& ys, O const* zi, auto& zfs) {
                                recur::reference::lfilter<O>(bl, al, xs.data(), ys.data(),
                                                             layout::contiguous(lay.n), zi, zfs.data());
                              });
  // S: the size of the terms (see the top of the file).
  double bmax = 0;
  for (T const v : p.f.b) bmax = std::max(bmax, std::fabs(double(v) / double(p.f.a[0])));
  double xmax = 0, s = 0;
  for (std::int64_t q = 0; q < lay.count; ++q)
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, q);
      xmax = std::max(xmax, std::fabs(double(p.x[o])));
      s = std::max(s, std::fabs(p.y[o]));
    }
  for (double const v : p.zf) s = std::max(s, std::fabs(v));
  for (T const v : p.zi) s = std::max(s, std::fabs(double(v)));
  p.scale = std::max(s, xmax * (1 + bmax));
  double const eps = std::numeric_limits<T>::epsilon();
  constexpr double C = 16;
  p.tol = C * eps * (k + 1) * p.f.gain * p.scale;
  return p;
}

template <class T>
struct result {
  std::vector<T> y;   // the layout's extent
  std::vector<T> zf;  // count * order values, when zf was asked for
};

// One call of recur::lfilter(recur::cuda{stream}, ...) on fresh device
// buffers: x uploaded, y and zf poisoned.
template <class T>
result<T> run_gpu(problem<T> const& p, cudaStream_t stream = test_stream(), memory m = memory::device) {
  spec const& sp = p.sp;
  std::size_t const ext = p.x.size(), ns = static_cast<std::size_t>(sp.state_size());
  dbuf<T> const dx = upload(p.x, m);
  dbuf<T> const dy = sp.in_place ? dbuf<T>() : poisoned<T>(ext, m);
  dbuf<T> const dzi = sp.zi ? upload(p.zi, m) : dbuf<T>();
  dbuf<T> const dzf = sp.zf && !sp.state_in_place ? poisoned<T>(ns, m) : dbuf<T>();
  settle();
  T* const y = sp.in_place ? dx.p : dy.p;
  T const* const zi = sp.zi && ns ? dzi.p : nullptr;
  T* const zf = !sp.zf || !ns ? nullptr : sp.state_in_place ? dzi.p : dzf.p;
  recur::cuda const ex{stream};
  auto const& f = p.f;
  recur::lfilter(ex, std::span<T const>(f.b), std::span<T const>(f.a), dx.p, y, sp.lay, {zi, zf});
  finish(stream);
  result<T> r;
  r.y = (sp.in_place ? dx : dy).read();
  if (sp.zf) r.zf = (sp.state_in_place ? dzi : dzf).read();
  return r;
}

// The comparison with the oracle: "" when every element of the layout is
// written, finite and within the tolerance, every gap untouched (poison, or
// x's value in place) and every zf value within the tolerance; otherwise
// what went wrong first, with the worst errors.
template <class T>
std::string mismatch(problem<T> const& p, result<T> const& r) {
  spec const& sp = p.sp;
  auto const c =
      recur_test::compare_lti(sp.lay, r.y, p.y, p.x, sp.in_place, sp.zf ? &r.zf : nullptr, p.zf, "zf", p.tol);
  if (c.first.empty()) return "";
  return fmt::format(
      "{} (worst y error {:.3g}, worst zf error {:.3g}, tolerance {:.3g} = 16 eps (K + 1) G S with "
      "G = {:.3g}, S = {:.3g})",
      c.first, c.worst_y, c.worst_state, p.tol, p.f.gain, p.scale);
}

template <class T>
void run_and_check(spec const& sp) {
  auto const p = make_problem<T>(sp);
  // The tolerance must stay meaningful (see the top of the file).
  double const cap = 16 * (sp.order + 1) * 100 * std::numeric_limits<T>::epsilon();
  BOOST_TEST(p.tol <= cap * p.scale, sp.describe() << ": tolerance " << p.tol << " above " << cap << " S");
  auto const r = run_gpu(p);
  std::string const why = mismatch(p, r);
  BOOST_TEST(why.empty(), (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": " << why);
}

constexpr auto const& kinds = recur_test::basic_layout_kinds;

template <class T>
void sweep(std::uint64_t salt) {
  recur_test::case_count cases(fmt::format("lfilter {}", recur_test::type_name<T>));
  int idx = 0;
  for (int order = 0; order <= 8; ++order)
    for (layout_kind const kind : kinds)
      for (std::int64_t const count : {1, 3, 64})
        for (std::int64_t const n : {0, 1, 2, 3, 31, 509, 4099, 20011, 100003}) {
          // 64 lanes of ~10^5 samples in one layout only (time: the oracle).
          if (count == 64 && n == 100003 && kind != layout_kind::interleaved) {
            cases.skip("64 lanes of 100003 samples, but interleaved");
            continue;
          }
          spec sp;
          sp.order = order;
          sp.shape = order == 0 ? 0 : idx % 3;
          sp.lay = recur_test::make_layout(kind, n, count);
          sp.seed = seed_for(salt, static_cast<std::uint64_t>(idx++));
          run_and_check<T>(sp);
          cases.run();
        }
  cases.require(9 * (3 * 3 * 9 - 2));  // orders x (layouts x lanes x lengths, less two)
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lfilter_cuda)

// Orders 0-8 x layouts x lanes x lengths, zi in and zf out.
BOOST_AUTO_TEST_CASE(f32_orders_layouts_lengths) { sweep<float>(701); }
BOOST_AUTO_TEST_CASE(f64_orders_layouts_lengths) { sweep<double>(702); }

// Zero initial state (scipy's default), with and without zf.
BOOST_AUTO_TEST_CASE(without_initial_or_final_state) {
  struct shape {
    std::int64_t n, count;
  };
  int idx = 0;
  for (int order = 0; order <= 4; ++order)
    for (layout_kind const kind : {layout_kind::contiguous, layout_kind::interleaved})
      for (auto const [n, count] : {shape{1, 1}, shape{2053, 3}, shape{4099, 64}, shape{100003, 1}})
        for (bool const zf : {true, false}) {
          spec sp;
          sp.order = order;
          sp.lay = recur_test::make_layout(kind, n, count);
          sp.zi = false;
          sp.zf = zf;
          sp.seed = seed_for(703, static_cast<std::uint64_t>(idx++));
          run_and_check<float>(sp);
          sp.seed = seed_for(704, static_cast<std::uint64_t>(idx));
          run_and_check<double>(sp);
        }
}

// y == x, zf == zi, and both at once.
BOOST_AUTO_TEST_CASE(in_place_and_shared_state) {
  struct shape {
    std::int64_t n, count;
  };
  int idx = 0;
  for (int order = 0; order <= 8; ++order)
    for (layout_kind const kind : kinds)
      for (auto const [n, count] : {shape{1, 1}, shape{2, 3}, shape{509, 64}, shape{100003, 3}})
        for (int mode = 0; mode < 3; ++mode) {
          spec sp;
          sp.order = order;
          sp.lay = recur_test::make_layout(kind, n, count);
          sp.in_place = mode != 1;
          sp.state_in_place = mode != 0;
          sp.seed = seed_for(705, static_cast<std::uint64_t>(idx++));
          run_and_check<float>(sp);
          sp.seed = seed_for(706, static_cast<std::uint64_t>(idx));
          run_and_check<double>(sp);
        }
}

// The same inputs give the same bits: twice on one stream, once on another,
// with many tiles (so the look-back between them runs) and batches.
template <class T>
void reproducible(std::uint64_t salt) {
  int idx = 0;
  struct shape {
    layout_kind kind;
    std::int64_t n, count;
  };
  for (int order = 1; order <= 4; ++order)
    for (auto const [kind, n, count] :
         {shape{layout_kind::contiguous, 100003, 1}, shape{layout_kind::interleaved, 20011, 64},
          shape{layout_kind::strided_gaps, 4099, 3}}) {
      spec sp;
      sp.order = order;
      sp.lay = recur_test::make_layout(kind, n, count);
      sp.seed = seed_for(salt, static_cast<std::uint64_t>(idx++));
      auto const p = make_problem<T>(sp);
      auto const r1 = run_gpu(p), r2 = run_gpu(p), r3 = run_gpu(p, other_stream());
      BOOST_TEST(mismatch(p, r1).empty(), (sizeof(T) == 4 ? "f32 " : "f64 ")
                                              << sp.describe() << ": " << mismatch(p, r1));
      BOOST_TEST((same_bytes(r1.y, r2.y) && same_bytes(r1.zf, r2.zf)),
                 (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": two runs differ");
      BOOST_TEST((same_bytes(r1.y, r3.y) && same_bytes(r1.zf, r3.zf)),
                 (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": a run on another stream differs");
    }
}
BOOST_AUTO_TEST_CASE(bitwise_reproducible) {
  reproducible<float>(707);
  reproducible<double>(708);
}

// Batches wide enough that whole sequences run one block each, tile after
// tile, with no look-back (lti_rows_kernel: unit stride and at least
// lti_rows_min_waves (4) x blocks per SM x SMs sequences; 6 blocks per SM is
// the largest shape's, f32 up to 4 state values): short and long filters (both
// tile shapes), with and without zi and zf, in place, zf == zi, with gaps
// between the sequences; then the same call twice, bitwise the same.
template <class T>
void whole_sequences(std::uint64_t salt) {
  int dev = 0, sms = 0;
  recur_test::cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  recur_test::cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                      "cudaDeviceGetAttribute");
  std::int64_t const count = 5 * 6 * std::int64_t(sms) + 5;  // lti_rows_min_waves is 4, with a margin
  int idx = 0;
  for (int const order : {1, 2, 8})
    for (int variant = 0; variant < 4; ++variant) {
      spec sp;
      sp.order = order;
      sp.shape = idx % 3;
      std::int64_t const n = variant == 3 ? 1 : 4099 + 2000 * variant;
      sp.lay = variant == 2 ? recur_test::make_layout(layout_kind::strided_gaps, n, count)
                            : layout::contiguous(n, count);
      sp.zi = variant != 1;
      sp.zf = variant != 2;
      sp.in_place = variant == 1;
      sp.state_in_place = variant == 0;
      sp.seed = seed_for(salt, static_cast<std::uint64_t>(idx++));
      run_and_check<T>(sp);
      if (variant == 0) {
        auto const p = make_problem<T>(sp);
        auto const r1 = run_gpu(p), r2 = run_gpu(p);
        BOOST_TEST((same_bytes(r1.y, r2.y) && same_bytes(r1.zf, r2.zf)),
                   (sizeof(T) == 4 ? "f32 " : "f64 ") << sp.describe() << ": two runs differ");
      }
    }
}
BOOST_AUTO_TEST_CASE(wide_batches_whole_sequences) {
  whole_sequences<float>(716);
  whole_sequences<double>(717);
}

// Orders above 8: invalid_argument naming the order and the supported range,
// before anything is written (whatever the shape, even an empty one).
template <class T>
void order_9_rejected() {
  std::int64_t const n = 1000, count = 3, k = 9;
  layout const lay = layout::contiguous(n, count);
  std::vector<T> hx(static_cast<std::size_t>(n * count));
  rng r(seed_for(709));
  for (auto& v : hx) v = static_cast<T>(r.symmetric());
  std::vector<T> hzi(static_cast<std::size_t>(count * k), T(0.5));
  dbuf<T> const dx = upload(hx), dy = poisoned<T>(hx.size()), dzi = upload(hzi),
                dzf = poisoned<T>(hzi.size());
  settle();
  std::vector<T> const b6 = {T(0.1),  T(0.2),  T(0.3),  T(0.2),  T(0.1),
                             T(0.05), T(0.02), T(0.01), T(0.01), T(0.01)},
                       a6 = {T(1), T(-0.1), T(0.01), 0, 0, T(0.001), 0, 0, 0, T(0.001)};
  std::vector<T> const b2 = {T(1), T(0.5)}, a2 = {T(1), T(-0.5)};
  recur::cuda const ex{test_stream()};
  auto rejected = [&](auto&& call, char const* what) {
    BOOST_CHECK_EXCEPTION(call(), recur::invalid_argument, [&](recur::invalid_argument const& e) {
      std::string const m = e.what();
      bool const ok = m.find("order 9") != std::string::npos && m.find("0-8") != std::string::npos &&
                      m.rfind("recur::lfilter: ", 0) == 0;
      BOOST_TEST(ok, what << ": message \"" << m << "\"");
      return ok;
    });
  };
  recur::filter_options<T> const state{dzi.p, dzf.p};
  std::span<T const> const sb6(b6), sa6(a6), sb2(b2), sa2(a2);
  rejected([&] { recur::lfilter(ex, sb6, sa2, dx.p, dy.p, lay, state); }, "b of 10");
  rejected([&] { recur::lfilter(ex, sb2, sa6, dx.p, dy.p, lay, state); }, "a of 10");
  rejected([&] { recur::lfilter(ex, sb6, sa6, dx.p, dy.p, lay, state); }, "both of 10");
  rejected([&] { recur::lfilter(ex, sb6, sa2, dx.p, dx.p, lay); }, "in place");
  rejected([&] { recur::lfilter(ex, sb6, sa6, dx.p, dy.p, layout::contiguous(0, count), state); }, "n == 0");
  rejected([&] { recur::lfilter<T>(ex, sb6, sa6, nullptr, nullptr, layout::contiguous(n, 0)); },
           "count == 0");
  finish(test_stream());
  BOOST_TEST(recur_test::all_poison(dy.read()));
  BOOST_TEST(recur_test::all_poison(dzf.read()));
  BOOST_TEST(same_bytes(dx.read(), hx));
  BOOST_TEST(same_bytes(dzi.read(), hzi));
}
BOOST_AUTO_TEST_CASE(order_9_rejected_nothing_written) {
  order_9_rejected<float>();
  order_9_rejected<double>();
}

// A host pointer where device memory is needed (x, y, zi, zf), or device
// memory where the host reads (b, a): invalid_argument naming the argument,
// nothing written.
BOOST_AUTO_TEST_CASE(host_pointers_rejected) {
  std::int64_t const n = 1000, count = 2, k = 2;
  std::size_t const elements = n * count, ns = count * k;
  layout const lay = layout::contiguous(n, count);
  rng r(seed_for(710));
  std::vector<float> hx(elements), hzi(ns);
  for (auto& v : hx) v = float(r.symmetric());
  for (auto& v : hzi) v = float(r.symmetric());
  std::vector<float> hy(elements, recur_test::poison<float>()), hzf(ns, recur_test::poison<float>());
  std::vector<float> const b = {0.25f, 0.5f, 0.25f}, a = {1.0f, -0.5f, 0.25f};
  dbuf<float> const dx = upload(hx), dzi = upload(hzi), dy = poisoned<float>(elements),
                    dzf = poisoned<float>(ns);
  dbuf<float> const db = upload(b), da = upload(a);
  settle();
  struct args {
    float const* b;
    float const* a;
    float const* x;
    float* y;
    float const* zi;
    float* zf;
    char const* name;
  };
  args const good{b.data(), a.data(), dx.p, dy.p, dzi.p, dzf.p, ""};
  std::vector<args> cases;
  for (int which = 0; which < 6; ++which) {
    args c = good;
    switch (which) {
      case 0:
        c.x = hx.data(), c.name = "x = ";
        break;
      case 1:
        c.y = hy.data(), c.name = "y = ";
        break;
      case 2:
        c.zi = hzi.data(), c.name = "opt.init = ";
        break;
      case 3:
        c.zf = hzf.data(), c.name = "opt.final_state = ";
        break;
      case 4:
        c.b = db.p, c.name = "b = ";
        break;
      case 5:
        c.a = da.p, c.name = "a = ";
        break;
    }
    cases.push_back(c);
  }
  recur::cuda const ex{test_stream()};
  for (args const& c : cases) {
    auto named = [&](recur::invalid_argument const& e) {
      std::string const m = e.what();
      bool const ok = m.find(c.name) != std::string::npos && m.rfind("recur::lfilter: ", 0) == 0;
      BOOST_TEST(ok, "message \"" << m << "\" lacks \"" << c.name << "\"");
      return ok;
    };
    BOOST_CHECK_EXCEPTION(recur::lfilter(ex, std::span<float const>(c.b, 3), std::span<float const>(c.a, 3),
                                         c.x, c.y, lay, {c.zi, c.zf}),
                          recur::invalid_argument, named);
  }
  // In place with a host array.
  std::vector<float> hx2 = hx;
  BOOST_CHECK_THROW(
      recur::lfilter(ex, std::span<float const>(b), std::span<float const>(a), hx2.data(), hx2.data(), lay),
      recur::invalid_argument);
  finish(test_stream());
  BOOST_TEST(recur_test::all_poison(dy.read()));
  BOOST_TEST(recur_test::all_poison(dzf.read()));
  BOOST_TEST(recur_test::all_poison(hy));
  BOOST_TEST(recur_test::all_poison(hzf));
  BOOST_TEST(same_bytes(hx2, hx));
}

// The argument checks are the host's: the same errors, word for word, and
// nothing written.
BOOST_AUTO_TEST_CASE(same_errors_as_host) {
  std::int64_t const n = 100, count = 2, k = 2;
  std::size_t const elements = n * count, ns = count * k;
  layout const lay = layout::contiguous(n, count);
  std::vector<double> hx(elements, 0.5), hzi(ns, 0.25);
  std::vector<double> hy(elements, recur_test::poison<double>()), hzf(ns, recur_test::poison<double>());
  dbuf<double> const dx = upload(hx), dzi = upload(hzi), dy = poisoned<double>(elements),
                     dzf = poisoned<double>(ns);
  settle();
  std::vector<double> const b = {0.25, 0.5, 0.25}, a = {1.0, -0.5, 0.25}, a0 = {0.0, 1.0}, empty,
                            b_inf = {1.0, std::numeric_limits<double>::infinity()}, a_tiny = {1e-300, 0.5};
  std::vector<double> const b_big = {1e300, 1.0};
  struct bad_call {
    char const* what;
    std::vector<double> const* b;
    std::vector<double> const* a;
    layout lay;
    int zi, zf;    // 0: null, 1: the state buffer, 2: that buffer one byte on (misaligned)
    int y_shift;   // y = x + y_shift when >= 0 (overlap), else the y buffer
    int zf_alias;  // 1: zf inside y
  };
  std::vector<bad_call> const calls = {
      {"a[0] == 0", &b, &a0, lay, 1, 1, -1, 0},
      {"empty b", &empty, &a, lay, 1, 1, -1, 0},
      {"non-finite b", &b_inf, &a, lay, 0, 0, -1, 0},
      {"b / a[0] overflows", &b_big, &a_tiny, lay, 0, 0, -1, 0},
      {"misaligned zi", &b, &a, lay, 2, 1, -1, 0},
      {"misaligned zf", &b, &a, lay, 1, 2, -1, 0},
      {"negative n", &b, &a, layout{-1, 1, 1, 1}, 0, 0, -1, 0},
      {"self-overlapping layout", &b, &a, layout::strided(n, count, 1, 10), 0, 0, -1, 0},
      {"y overlaps x", &b, &a, lay, 0, 0, 1, 0},
      {"zf inside y", &b, &a, lay, 1, 1, -1, 1},
  };
  auto pick = [](double* p, int how) {
    return how == 0 ? nullptr : how == 1 ? p : reinterpret_cast<double*>(reinterpret_cast<char*>(p) + 1);
  };
  auto message = [](auto&& call) {
    try {
      call();
    } catch (recur::invalid_argument const& e) {
      return std::string(e.what());
    }
    return std::string("(no invalid_argument)");
  };
  for (bad_call const& c : calls) {
    auto args = [&](double* x, double* y, double* zi, double* zf) {
      double* const yy = c.y_shift >= 0 ? x + c.y_shift : y;
      double* const zff = c.zf_alias ? y + 10 : pick(zf, c.zf);
      return std::tuple{std::span<double const>(*c.b), std::span<double const>(*c.a), x, yy,
                        recur::filter_options<double>{pick(zi, c.zi), zff}};
    };
    std::vector<double> hx_copy = hx;
    std::string const on_host = message([&] {
      auto [bb, aa, x, y, state] = args(hx_copy.data(), hy.data(), hzi.data(), hzf.data());
      recur::lfilter(recur::host{}, bb, aa, x, y, c.lay, state);
    });
    std::string const on_gpu = message([&] {
      auto [bb, aa, x, y, state] = args(dx.p, dy.p, dzi.p, dzf.p);
      recur::lfilter(recur::cuda{test_stream()}, bb, aa, x, y, c.lay, state);
    });
    BOOST_TEST(on_host.rfind("recur::lfilter: ", 0) == 0, c.what << ": host says \"" << on_host << "\"");
    // The same words; the addresses named differ (host and device buffers).
    auto words = [](std::string const& m) {
      return std::regex_replace(m, std::regex("0x[0-9a-f]+"), "ADDRESS");
    };
    BOOST_TEST(words(on_gpu) == words(on_host),
               c.what << ": GPU says \"" << on_gpu << "\", host \"" << on_host << "\"");
    BOOST_TEST(same_bytes(hx_copy, hx), c.what);
  }
  finish(test_stream());
  BOOST_TEST(recur_test::all_poison(dy.read()));
  BOOST_TEST(recur_test::all_poison(dzf.read()));
  BOOST_TEST(same_bytes(dx.read(), hx));
  BOOST_TEST(recur_test::all_poison(hy));
  BOOST_TEST(recur_test::all_poison(hzf));
}

// count == 0: nothing happens (null x and y are fine). n == 0: zf = zi, or
// zeros without zi; y untouched.
BOOST_AUTO_TEST_CASE(empty_batches) {
  recur::cuda const ex{test_stream()};
  std::vector<float> const bv = {0.25f, 0.5f, 0.25f}, av = {1.0f, -0.5f, 0.25f};
  std::span<float const> const b(bv), a(av);
  {
    dbuf<float> const guard = poisoned<float>(16), y = poisoned<float>(16);
    settle();
    BOOST_CHECK_NO_THROW(recur::lfilter<float>(ex, b, a, nullptr, nullptr, layout::contiguous(10, 0)));
    BOOST_CHECK_NO_THROW(recur::lfilter<float>(ex, b, a, nullptr, nullptr, layout::interleaved(10, 0)));
    // A final_state pointer of count * order = 0 values is not written either.
    BOOST_CHECK_NO_THROW(recur::lfilter(ex, b, a, y.p, y.p, layout::contiguous(16, 0), {nullptr, guard.p}));
    finish(test_stream());
    BOOST_TEST(recur_test::all_poison(guard.read()));
    BOOST_TEST(recur_test::all_poison(y.read()));
  }
  for (std::int64_t const count : {1, 5, 1000}) {
    std::size_t const ns = static_cast<std::size_t>(count * 2);
    std::vector<float> zi(ns);
    rng r(seed_for(711, count));
    for (auto& v : zi) v = float(r.symmetric());
    dbuf<float> const dzi = upload(zi), dzf = poisoned<float>(ns), dzf0 = poisoned<float>(ns),
                      dy = poisoned<float>(8);
    settle();
    layout const lay = layout::contiguous(0, count);
    recur::lfilter<float>(ex, b, a, nullptr, nullptr, lay, {dzi.p, dzf.p});
    recur::lfilter(ex, b, a, dy.p, dy.p, lay, {nullptr, dzf0.p});
    recur::lfilter<float>(ex, b, a, nullptr, nullptr, lay, {dzi.p, dzi.p});  // zf == zi
    finish(test_stream());
    BOOST_TEST(same_bytes(dzf.read(), zi), "count " << count << ": zf is not zi");
    BOOST_TEST(same_bytes(dzi.read(), zi), "count " << count << ": zf == zi changed it");
    BOOST_TEST((dzf0.read() == std::vector<float>(ns, 0.0f)), "count " << count << ": zf is not zero");
    BOOST_TEST(recur_test::all_poison(dy.read()));
  }
}

// Managed memory is valid for recur::cuda too.
BOOST_AUTO_TEST_CASE(managed_memory) {
  spec sp;
  sp.order = 3;
  sp.lay = layout::interleaved(10007, 33);
  sp.seed = seed_for(712);
  auto const p = make_problem<float>(sp);
  auto const r = run_gpu(p, test_stream(), memory::managed);
  BOOST_TEST(mismatch(p, r).empty(), mismatch(p, r));
}

// The comparison can fail: one element off by twice the tolerance, one zf
// value off, one element not written, one gap written are all reported.
BOOST_AUTO_TEST_CASE(checker_catches_wrong_results) {
  spec sp;
  sp.order = 2;
  sp.lay = recur_test::make_layout(layout_kind::strided_gaps, 4099, 3);
  sp.seed = seed_for(713);
  auto const p = make_problem<float>(sp);
  auto const r = run_gpu(p);
  BOOST_TEST_REQUIRE(mismatch(p, r).empty(), mismatch(p, r));
  std::int64_t const o = sp.lay.offset(2000, 1);
  auto bad = r;
  bad.y[o] = float(p.y[o] + 2 * p.tol);
  BOOST_TEST(!mismatch(p, bad).empty());
  bad = r;
  bad.zf[3] = float(p.zf[3] - 2 * p.tol);
  BOOST_TEST(!mismatch(p, bad).empty());
  bad = r;
  bad.y[o] = recur_test::poison<float>();
  BOOST_TEST(!mismatch(p, bad).empty());
  bad = r;
  bad.y[o + 1] = 0.0f;  // a gap of the strided layout
  BOOST_TEST(!mismatch(p, bad).empty());
  // And the tolerance is far below the signal (see the top of the file).
  BOOST_TEST(p.tol < 1e-3 * p.scale);
}

BOOST_AUTO_TEST_SUITE_END()
