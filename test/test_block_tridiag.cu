// recur::device::tridiag_solve and every form of kernels/dispatch/
// tridiag_forms.cuh (launched through its builder where the ranked lists of
// tridiag_resolve.cuh would not choose it) against the sequential
// references: every GPU algorithm x layout x type, the issue's sizes, batch
// counts that are not a multiple of any tile, several right-hand sides, in
// place, unread ends, and breakdown reported in info with NaN x.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>
#include <recur/reference/tridiag.hpp>

#include "common/cuda_memory.hpp"
#include "common/tridiag_systems.hpp"

// The kernels are librecur's (tridiag_launch and the forms it calls, in
// lib/cuda/tridiag_*.cu), so that this unit does not compile them all again.
namespace recur::detail {
extern template cudaError_t tridiag_launch<float>(tridiag_solve_plan const&, void*,
                                                  tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch<double>(tridiag_solve_plan const&, void*,
                                                   tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::detail

namespace {

using recur::layout;
using recur::tridiag_algorithm;
using recur::detail::tridiag_columns_plan;
using recur::detail::tridiag_direct_columns_plan;
using recur::detail::tridiag_direct_plan;
using recur::detail::tridiag_form;
using recur::detail::tridiag_partition_plan;
using recur::detail::tridiag_segments_plan;
using recur::detail::tridiag_tile_plan;
namespace detail = recur::detail;

// The policy the plans below are made with (the ranked lists' and the
// builders' parameters).
template <class T>
using policy = recur::kernels::tridiag_policy_sm90<T>;

// Whether f holds a plan of form F.
template <class F>
bool holds(std::optional<tridiag_form> const& f) {
  return f && std::holds_alternative<F>(*f);
}

// f's plan of form F, or F{} where f holds none or another form (whose
// fields then fail the checks that name a value they must have).
template <class F>
F form_or(std::optional<tridiag_form> const& f) {
  if (f)
    if (auto const* p = std::get_if<F>(&*f)) return *p;
  return F{};
}
template <class F>
F form_or(std::optional<F> const& f) {
  return f.value_or(F{});
}

// The form the ranked lists give alg (automatic: Thomas-PCR's list) on an
// sm_90 device with smem bytes of shared memory a block.
template <class T>
std::optional<tridiag_form> form_of(layout const& lay, tridiag_algorithm alg, std::size_t smem) {
  return detail::tridiag_form_of<T, policy<T>>(lay, alg, detail::tridiag_device{smem, 9});
}

using recur_test::dbuf;
using recur_test::upload;

struct system_set {
  std::vector<double> a, b, c, d;  // generated in double, rounded per type
};

// System k of s in layout lay, its coefficients rounded to T.
template <class T = double>
recur_test::tridiag_system system_of(system_set const& s, layout const& lay, std::int64_t k) {
  return recur_test::tridiag_system::gather(
      lay.n, [&](std::int64_t i) { return T(s.a[lay.offset(i, k)]); },
      [&](std::int64_t i) { return T(s.b[lay.offset(i, k)]); },
      [&](std::int64_t i) { return T(s.c[lay.offset(i, k)]); });
}

// Diagonally dominant rows (recur_test::dominant_row) in every element of the
// span, d uniform in [-1, 1).
system_set random_dominant(std::size_t span, std::size_t rhs_span, std::mt19937_64& g) {
  system_set s{std::vector<double>(span), std::vector<double>(span), std::vector<double>(span),
               std::vector<double>(rhs_span)};
  for (std::size_t e = 0; e < span; ++e) {
    auto const row = recur_test::dominant_row(g);
    s.a[e] = row.a, s.b[e] = row.b, s.c[e] = row.c;
  }
  for (auto& v : s.d) v = 2 * recur_test::uniform01(g) - 1;
  return s;
}

// Zhang et al.'s matrices for RD (recur_test::close_values_row; RD's
// products stay near 1) in every element of the span, and nrhs right-hand
// sides d = A x, |x_i| in [1/2, 1], rhs_stride apart: the systems of RD's
// domain (tridiag_systems.hpp) where rd_must_solve holds.
system_set close_values(layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride, std::mt19937_64& g) {
  std::size_t const span = std::size_t(lay.offset(lay.n - 1, lay.count - 1) + 1);
  system_set s{std::vector<double>(span), std::vector<double>(span), std::vector<double>(span),
               std::vector<double>(std::size_t(rhs_stride * (nrhs - 1)) + span)};
  for (std::size_t e = 0; e < span; ++e) {
    auto const row = recur_test::close_values_row(g);
    s.a[e] = row.a, s.b[e] = row.b, s.c[e] = row.c;
  }
  std::vector<double> x(std::size_t(lay.n));
  for (std::int64_t r = 0; r < nrhs; ++r)
    for (std::int64_t k = 0; k < lay.count; ++k) {
      for (double& v : x) v = recur_test::solution_value(g);
      auto const m = system_of(s, lay, k);
      for (std::int64_t i = 0; i < lay.n; ++i)
        s.d[lay.offset(i, k) + r * rhs_stride] = double(m.row_times(i, [&](std::int64_t j) { return x[j]; }));
    }
  return s;
}

template <class T>
std::vector<T> as(std::vector<double> const& v) {
  return std::vector<T>(v.begin(), v.end());
}

std::int64_t span_of(layout const& lay) { return lay.offset(lay.n - 1, lay.count - 1) + 1; }

// The device (its opt-in shared memory per block, what the plans are made
// for, and its compute capability).
detail::tridiag_device const& device() {
  static detail::tridiag_device const dev = [] {
    detail::tridiag_device d;
    RECUR_TEST_CUDA_OK(detail::tridiag_current_device(d));
    return d;
  }();
  return dev;
}

// A form for a layout and the device's shared memory per block (empty: the
// form does not run the shape).
using plan_fn = std::function<std::optional<tridiag_form>(layout const&, std::size_t)>;

struct run_args {
  tridiag_algorithm alg;
  layout lay;
  std::int64_t nrhs = 1;
  bool in_place = false;
  // The form to run (null: tridiag_solve with alg).
  plan_fn plan{};
  std::int64_t rhs_pad = 3;  // rhs_stride = span + rhs_pad (3: not the dense default, exercises the stride)
};

// A builder's plan (an optional plan of one form, or a plan) as a form.
template <class F>
std::optional<tridiag_form> as_form(std::optional<F> const& f) {
  if (!f) return std::nullopt;
  return tridiag_form(*f);
}
template <class F>
std::optional<tridiag_form> as_form(F const& f) {
  return tridiag_form(f);
}

// run_args whose plan is p's for T.
template <class T, class P>
plan_fn plan_of(P p) {
  if constexpr (std::is_same_v<P, std::nullptr_t>)
    return {};
  else
    return [p](layout const& lay, std::size_t smem) { return as_form(p(T{}, lay, smem)); };
}

// Solves on the GPU; returns x (the rhs span) and info.
template <class T>
std::pair<std::vector<T>, std::vector<std::int32_t>> solve_gpu(system_set const& s, run_args const& r) {
  std::int64_t const span = span_of(r.lay);
  std::int64_t const rhs_stride = span + r.rhs_pad;
  std::vector<T> ha = as<T>(s.a), hb = as<T>(s.b), hc = as<T>(s.c), hd = as<T>(s.d);
  // The unread ends hold NaN: a solver that reads them poisons x.
  for (std::int64_t k = 0; k < r.lay.count; ++k) {
    ha[r.lay.offset(0, k)] = std::numeric_limits<T>::quiet_NaN();
    hc[r.lay.offset(r.lay.n - 1, k)] = std::numeric_limits<T>::quiet_NaN();
  }
  auto const a = upload(ha), b = upload(hb), c = upload(hc), d = upload(hd);
  auto const x = upload(std::vector<T>(hd.size(), T(-7.25)));  // poison: every element must be written
  auto const info = upload(std::vector<std::int32_t>(r.lay.count, -99));
  T* out = r.in_place ? d.p : x.p;
  std::size_t bytes = 0;
  void* temp = nullptr;
  if (r.plan) {
    std::optional<tridiag_form> const form = r.plan(r.lay, device().max_smem);
    BOOST_REQUIRE_MESSAGE(form.has_value(), "the form runs this shape");
    detail::tridiag_solve_plan const pl{*form, device()};
    bytes = std::max<std::size_t>(1, detail::tridiag_workspace_bytes<T>(r.lay, pl));
    RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
    RECUR_TEST_CUDA_OK(detail::tridiag_launch<T>(
        pl, temp, detail::tridiag_args<T>{a.p, b.p, c.p, d.p, out, r.lay, r.nrhs, rhs_stride, info.p},
        nullptr));
  } else {
    RECUR_TEST_CUDA_OK(recur::device::tridiag_solve<T>(nullptr, bytes, a.p, b.p, c.p, d.p, out, r.lay, r.nrhs,
                                                       rhs_stride, info.p, r.alg, nullptr));
    RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
    RECUR_TEST_CUDA_OK(recur::device::tridiag_solve<T>(temp, bytes, a.p, b.p, c.p, d.p, out, r.lay, r.nrhs,
                                                       rhs_stride, info.p, r.alg, nullptr));
  }
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  cudaFree(temp);
  // Inputs untouched (d too, unless in place).
  BOOST_REQUIRE(b.read() == hb);
  if (!r.in_place) BOOST_REQUIRE(d.read() == hd);
  return {r.in_place ? d.read() : x.read(), info.read()};
}

// ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf) per system and rhs
// (T's values of A and d), the worst (a NaN counts as infinite).
template <class T>
double worst_residual(system_set const& s, std::vector<T> const& x, layout const& lay, std::int64_t nrhs,
                      std::int64_t rhs_stride) {
  double worst = 0;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    auto const m = system_of<T>(s, lay, k);
    for (std::int64_t r = 0; r < nrhs; ++r) {
      auto const nm = m.residual([&](std::int64_t i) { return x[lay.offset(i, k) + r * rhs_stride]; },
                                 [&](std::int64_t i) { return T(s.d[lay.offset(i, k) + r * rhs_stride]); });
      double const rel =
          nm.finite ? double(nm.residual / (nm.a * nm.x + nm.d)) : std::numeric_limits<double>::infinity();
      if (!(rel <= worst))
        worst = std::isnan(rel) ? std::numeric_limits<double>::infinity() : std::max(worst, rel);
    }
  }
  return worst;
}

std::vector<layout> layouts_for(std::int64_t n, std::int64_t count) {
  return {layout::contiguous(n, count), layout::interleaved(n, count),
          layout::strided(n, count, 2 * count + 1, 2)};  // gaps between elements and systems
}

std::string name(tridiag_algorithm a) { return recur::to_string(a); }

// Solves random dominant systems of every size, count and layout (two
// right-hand sides in place, one apart) by alg, or by the form that
// plan(T{}, lay, max_smem) gives (a builder of tridiag_forms.cuh called
// with the test's choices), and checks residuals and that every element of
// x was written.
template <class T, class P = std::nullptr_t>
void sweep(tridiag_algorithm alg, std::vector<std::int64_t> const& ns,
           std::vector<std::int64_t> const& counts, P plan = nullptr) {
  std::mt19937_64 g(1234 + int(alg));
  double const tol = 64 * std::numeric_limits<T>::epsilon();
  for (std::int64_t n : ns)
    for (std::int64_t count : counts)
      for (layout const& lay : layouts_for(n, count))
        for (std::int64_t nrhs : {1, 2}) {
          bool const in_place = nrhs == 2;
          std::int64_t const span = span_of(lay), rhs_stride = span + 3;
          system_set const s = random_dominant(span, std::size_t(rhs_stride * (nrhs - 1) + span), g);
          run_args const r{alg, lay, nrhs, in_place, plan_of<T>(plan)};
          BOOST_TEST_CONTEXT(name(alg) << " n " << n << " count " << count << " strides "
                                       << lay.element_stride << "," << lay.batch_stride << " nrhs " << nrhs) {
            auto const [x, info] = solve_gpu<T>(s, r);
            for (std::int64_t k = 0; k < count; ++k) BOOST_REQUIRE_EQUAL(info[k], 0);
            // Every element of x written; the gaps of the strided layout kept.
            for (std::int64_t r2 = 0; r2 < nrhs; ++r2)
              for (std::int64_t k = 0; k < count; ++k)
                for (std::int64_t i = 0; i < n; ++i)
                  BOOST_REQUIRE(x[lay.offset(i, k) + r2 * rhs_stride] != T(-7.25));
            if (!in_place && lay.n > 1 && lay.element_stride > count) BOOST_REQUIRE(x[1] == T(-7.25));
            double const res = worst_residual<T>(s, x, lay, nrhs, rhs_stride);
            BOOST_TEST(res <= tol, "relative residual " << res << " > " << tol);
          }
        }
}

std::vector<std::int64_t> const issue_sizes{1, 2, 3, 5, 31, 32, 33, 127, 512, 513, 1000, 4096};

// Every float's bits: how many usable_pivot accepts, how many of those have
// pivot_rcp(p) != 1.0f / p bitwise, and the smallest such bit pattern; and
// how many it rejects that are normal with a normal reciprocal (none may).
__global__ void pivot_rcp_sweep(unsigned long long* counts, unsigned* first_bad) {
  unsigned long long usable = 0, differ = 0, wrongly_rejected = 0;
  for (unsigned long long u = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; u < (1ull << 32);
       u += std::uint64_t(gridDim.x) * blockDim.x) {
    float const p = __uint_as_float(unsigned(u));
    float const m = fabsf(p);
    if (!recur::kernels::usable_pivot(p)) {
      wrongly_rejected += m >= 0x1p-126f && m < 0x1p126f;
      continue;
    }
    ++usable;
    if (__float_as_uint(recur::kernels::pivot_rcp(p)) != __float_as_uint(1.0f / p)) {
      ++differ;
      atomicMin(first_bad, unsigned(u));
    }
  }
  atomicAdd(counts, usable);
  atomicAdd(counts + 1, differ);
  atomicAdd(counts + 2, wrongly_rejected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(block_tridiag)

// The f32 sweeps' reciprocal (approximation and one Newton step, no range
// test) is bitwise the division wherever usable_pivot lets it run: 2^-126
// <= |p| < 2^126, 2 (2^32 - 2^25) floats; all of them checked.
BOOST_AUTO_TEST_CASE(pivot_rcp_exact) {
  auto const counts = upload(std::vector<unsigned long long>(3, 0));
  auto const first = upload(std::vector<unsigned>(1, 0xffffffffu));
  pivot_rcp_sweep<<<1024, 256>>>(counts.p, first.p);
  RECUR_TEST_CUDA_OK(cudaGetLastError());
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  auto const c = counts.read();
  BOOST_TEST(c[0] == 2ull * ((1ull << 32) / 2 - (1ull << 25)));
  BOOST_TEST(c[1] == 0u, "pivot_rcp != 1.0f / p first at bits " << std::hex << first.read()[0]);
  BOOST_TEST(c[2] == 0u);
}

BOOST_AUTO_TEST_CASE(thomas_tile) {
  sweep<float>(tridiag_algorithm::thomas, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::thomas, {1, 2, 33, 513, 1000}, {1, 37, 300});
}

BOOST_AUTO_TEST_CASE(thomas_global) {
  auto global = [](auto t, layout const&, std::size_t) {
    return detail::tridiag_plan_global_thomas(policy<decltype(t)>::system_threads);
  };
  sweep<float>(tridiag_algorithm::thomas, {1, 2, 33, 1000}, {1, 3, 200}, global);
  sweep<double>(tridiag_algorithm::thomas, {3, 513}, {1, 37}, global);
}

// A group solver's plan with another switch size (min(sw, the most its
// group holds)) or, for the P-scheme, another run length.
// (The partitioned form, where no tile holds a system, keeps its own: its
// reduced systems are planned at launch.)
template <class T>
std::optional<tridiag_form> with_switch(layout const& lay, tridiag_algorithm alg, int sw, int per_thread) {
  std::optional<tridiag_form> form = form_of<T>(lay, alg, device().max_smem);
  if (form)
    if (auto* tile = std::get_if<tridiag_tile_plan>(&*form))
      tile->switch_size = std::min(sw, tile->group_threads * per_thread);
  return form;
}

BOOST_AUTO_TEST_CASE(cr) {
  // In place, then Goeddeke and Strzodka's split storage (cr_split).
  sweep<float>(tridiag_algorithm::cr, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::cr, issue_sizes, {1, 5});
  sweep<float>(tridiag_algorithm::cr_split, issue_sizes, {1, 3, 37});
  // (f64 n = 4096 needs 267 KB with the second copy: more than an H100 block
  // has; the partitioned form runs it, cr_split solving its reduced systems.)
  sweep<double>(tridiag_algorithm::cr_split, {1, 2, 3, 5, 31, 32, 33, 127, 512, 513, 1000, 3000}, {1, 5});
  sweep<float>(tridiag_algorithm::cr_split, {4, 6, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4095, 6000}, {2});
  auto const split4096 =
      form_of<double>(layout::contiguous(4096, 1), tridiag_algorithm::cr_split, 227 * 1024);
  BOOST_TEST((holds<tridiag_partition_plan>(split4096) &&
              form_or<tridiag_partition_plan>(split4096).inner == tridiag_algorithm::cr_split));
  sweep<double>(tridiag_algorithm::cr_split, {4096}, {1, 3});
}

BOOST_AUTO_TEST_CASE(pcr) {
  sweep<float>(tridiag_algorithm::pcr, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::pcr, issue_sizes, {1, 5});
}

BOOST_AUTO_TEST_CASE(cr_pcr) {
  sweep<float>(tridiag_algorithm::cr_pcr, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::cr_pcr, issue_sizes, {1, 5});
  for (int sw : {4, 33, 256})  // every switch size gives the same system
    sweep<float>(tridiag_algorithm::cr_pcr, {31, 513, 1000}, {2},
                 [sw](auto t, layout const& lay, std::size_t) {
                   return with_switch<decltype(t)>(lay, tridiag_algorithm::cr_pcr, sw,
                                                   recur::kernels::pcr_items_per_thread);
                 });
}

BOOST_AUTO_TEST_CASE(cr_packed) {
  sweep<float>(tridiag_algorithm::cr_packed, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::cr_packed, issue_sizes, {1, 5});
  sweep<float>(tridiag_algorithm::cr_packed, {7, 8, 9, 15, 16, 17, 255, 256, 257, 4095}, {2});
  for (int sw : {8, 64})  // PCR on the reduced system below the switch
    sweep<float>(tridiag_algorithm::cr_packed, {31, 513, 1000, 4096}, {2},
                 [sw](auto t, layout const& lay, std::size_t) {
                   return with_switch<decltype(t)>(lay, tridiag_algorithm::cr_packed, sw,
                                                   recur::kernels::pcr_items_per_thread);
                 });
}

BOOST_AUTO_TEST_CASE(pscheme) {
  sweep<float>(tridiag_algorithm::pscheme, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::pscheme, issue_sizes, {1, 5});
  for (int rows : {1, 3, 64})  // runs of 1 row (a scan per row) to long runs
    sweep<float>(tridiag_algorithm::pscheme, {1, 2, 31, 100, 1000, 12000}, {2},
                 [rows](auto t, layout const& lay, std::size_t smem) {
                   int const gt = std::min<int>(1024, int((lay.n + rows - 1) / rows + 31) / 32 * 32);
                   return detail::tridiag_plan_group_tile<decltype(t)>(
                       lay, smem, recur::kernels::tile_solver::pscheme, std::max(32, gt), 0, 512, 48 * 1024);
                 });
}

// RD and CR+RD on Zhang's close-values matrices with right-hand sides
// d = A x (close_values): every system of RD's domain (tridiag_systems.hpp,
// rd_must_solve) solved, any other either solved (residual within RD's
// looser bound) or reported as breakdown with NaN x; the tally counts
// systems solved, drawn and of the domain, per n.
struct rd_tally {
  struct counts {
    std::int64_t solved = 0, total = 0, in_domain = 0;
  };
  std::map<std::int64_t, counts> by_n;
  void report_and_check(std::string const& what, std::int64_t up_to, std::int64_t domain_n) const {
    std::int64_t solved = 0, total = 0, in_domain = 0, short_ones = 0;
    for (auto const& [n, c] : by_n) {
      BOOST_TEST_MESSAGE(what << " n " << n << ": " << c.solved << " of " << c.total << " systems solved, "
                              << c.in_domain << " of RD's domain");
      if (n <= up_to) solved += c.solved, total += c.total;
      if (n <= domain_n) short_ones += c.total;
      in_domain += c.in_domain;
    }
    // RD's accuracy bound refuses long systems (reference/tridiag.hpp); up to
    // n = up_to most must be solved.
    BOOST_TEST(2 * solved >= total,
               what << ": " << solved << " of " << total << " systems up to n = " << up_to << " solved");
    // The condition bound leaves nearly every short system in the domain.
    BOOST_TEST(10 * in_domain >= 9 * short_ones, what << ": " << in_domain << " of " << short_ones
                                                      << " systems of n <= " << domain_n
                                                      << " in RD's domain");
  }
};

template <class T, class P = std::nullptr_t>
void sweep_rd(tridiag_algorithm alg, std::vector<std::int64_t> const& ns,
              std::vector<std::int64_t> const& counts, rd_tally& tally, P plan = nullptr) {
  std::mt19937_64 g(99 + int(alg));
  double const tol = 64 * std::ldexp(std::numeric_limits<T>::epsilon(),
                                     recur::reference::detail::rd_backward_error_exponent<T>);
  for (std::int64_t n : ns)
    for (std::int64_t count : counts)
      for (layout const& lay : layouts_for(n, count)) {
        std::int64_t const span = span_of(lay), rhs_stride = span + 3;
        system_set const s = close_values(lay, 2, rhs_stride, g);
        BOOST_TEST_CONTEXT(name(alg) << " n " << n << " count " << count << " strides " << lay.element_stride
                                     << "," << lay.batch_stride) {
          auto const [x, info] = solve_gpu<T>(s, run_args{alg, lay, 2, false, plan_of<T>(plan)});
          auto& c = tally.by_n[n];
          c.total += count;
          for (std::int64_t k = 0; k < count; ++k) {
            BOOST_REQUIRE(info[k] >= 0 && info[k] <= n);
            if (recur_test::rd_must_solve<T>(system_of<T>(s, lay, k))) {
              ++c.in_domain;
              BOOST_TEST(info[k] == 0, "system " << k << " of RD's domain: info " << info[k]);
            }
            if (info[k] == 0) {
              ++c.solved;
              system_set sk;
              std::vector<T> xk;
              for (std::int64_t i = 0; i < n; ++i) {
                std::int64_t const o = lay.offset(i, k);
                sk.a.push_back(s.a[o]), sk.b.push_back(s.b[o]), sk.c.push_back(s.c[o]);
                sk.d.push_back(s.d[o]);
                xk.push_back(x[o]);
              }
              double const res = worst_residual<T>(sk, xk, layout::contiguous(n, 1), 1, n);
              BOOST_TEST(res <= tol, "system " << k << ": relative residual " << res << " > " << tol);
            } else {
              for (std::int64_t r = 0; r < 2; ++r)
                for (std::int64_t i = 0; i < n; ++i)
                  BOOST_REQUIRE(std::isnan(x[lay.offset(i, k) + r * rhs_stride]));
            }
          }
        }
      }
}

BOOST_AUTO_TEST_CASE(rd) {
  rd_tally f, d;
  sweep_rd<float>(tridiag_algorithm::rd, issue_sizes, {1, 3, 37}, f);
  sweep_rd<double>(tridiag_algorithm::rd, issue_sizes, {1, 5}, d);
  f.report_and_check("rd f32", 1000, recur_test::rd_domain_max_n<float>);
  d.report_and_check("rd f64", 1000, recur_test::rd_domain_max_n<double>);
}

BOOST_AUTO_TEST_CASE(rd_reproducible) {
  layout const lay = layout::interleaved(1000, 40);
  std::mt19937_64 g(8);
  system_set const s = close_values(lay, 1, span_of(lay) + 3, g);
  for (auto alg : {tridiag_algorithm::rd, tridiag_algorithm::cr_rd}) {
    auto const first = solve_gpu<float>(s, run_args{alg, lay, 1});
    for (int rep = 0; rep < 3; ++rep) {
      auto const again = solve_gpu<float>(s, run_args{alg, lay, 1});
      BOOST_TEST((again.second == first.second));
      BOOST_TEST(std::memcmp(again.first.data(), first.first.data(), first.first.size() * sizeof(float)) ==
                 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(cr_rd) {
  rd_tally f, d, sw_tally;
  sweep_rd<float>(tridiag_algorithm::cr_rd, issue_sizes, {1, 3, 37}, f);
  sweep_rd<double>(tridiag_algorithm::cr_rd, issue_sizes, {1, 5}, d);
  f.report_and_check("cr_rd f32", 1000, recur_test::rd_domain_max_n<float>);
  d.report_and_check("cr_rd f64", 1000, recur_test::rd_domain_max_n<double>);
  for (int sw : {4, 33, 256})
    sweep_rd<float>(tridiag_algorithm::cr_rd, {31, 513, 1000}, {2}, sw_tally,
                    [sw](auto t, layout const& lay, std::size_t) {
                      return with_switch<decltype(t)>(lay, tridiag_algorithm::cr_rd, sw,
                                                      recur::kernels::rd_items_per_thread);
                    });
  sw_tally.report_and_check("cr_rd f32 switch 4, 33, 256", 1000, recur_test::rd_domain_max_n<float>);
}

// Thomas-PCR's tile with `rows` rows a thread (so many threads a system, at
// most max_threads), about smem_target bytes a tile, the register path
// wherever its chunks fit when regs.
auto tile_of(int rows, int max_threads = 256, std::size_t smem_target = 0, bool regs = false) {
  return [=](auto t, layout const& lay, std::size_t smem) {
    using T = decltype(t);
    int const gt = std::clamp(int(std::bit_floor(std::uint64_t(std::max<std::int64_t>(1, lay.n / rows)))), 32,
                              std::max(32, max_threads));
    std::size_t const target =
        smem_target ? smem_target
                    : (lay.element_stride == 1 || lay.n == 1 ? policy<T>::thomas_pcr_smem
                                                             : policy<T>::thomas_pcr_smem_interleaved);
    return detail::tridiag_plan_thomas_pcr_tile<T>(lay, smem, gt, target, 32, regs);
  };
}

BOOST_AUTO_TEST_CASE(thomas_pcr) {
  sweep<float>(tridiag_algorithm::thomas_pcr, issue_sizes, {1, 3, 37});
  sweep<double>(tridiag_algorithm::thomas_pcr, issue_sizes, {1, 5});
  sweep<float>(tridiag_algorithm::thomas_pcr, {4, 63, 64, 65, 95, 96, 97, 2049}, {2});
  // The tile with several warps per system (the boundary system in shared
  // memory), and one.
  for (int rows : {2, 4, 8}) {
    sweep<float>(tridiag_algorithm::thomas_pcr, {1, 2, 3, 65, 130, 255, 256, 1000, 4096}, {1, 9},
                 tile_of(rows));
    sweep<double>(tridiag_algorithm::thomas_pcr, {129, 1000}, {9}, tile_of(rows));
  }
  sweep<float>(tridiag_algorithm::thomas_pcr, {4096}, {3}, tile_of(16, 32));
  // Several long systems per tile.
  sweep<float>(tridiag_algorithm::thomas_pcr, {256, 513, 1000}, {9}, tile_of(16, 256, 48 << 10));
  sweep<double>(tridiag_algorithm::thomas_pcr, {256, 513}, {9}, tile_of(16, 256, 48 << 10));
}

// Thomas-PCR's register path (f32, one warp per system, chunks of <= 16
// rows) does chunk_reduce's arithmetic in the same order: x and info are
// bitwise those of the shared-memory path, also where a system breaks down
// (a zero pivot inside a chunk, at a chunk's first row, at row 0), on both
// layouts, with several right-hand sides.
BOOST_AUTO_TEST_CASE(thomas_pcr_register_path) {
  for (std::int64_t n : {2, 3, 5, 31, 32, 33, 64, 100, 127, 256, 300, 511, 512}) {
    std::int64_t const count =
        n == 300 ? 3000 : 37;  // 3000: not a small batch (all the tiles' threads solve)
    for (layout lay : {layout::contiguous(n, count), layout::interleaved(n, count)}) {
      std::mt19937_64 g{std::uint64_t(n)};
      system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(3 * (span_of(lay) + 3)), g);
      if (n >= 5) {
        s.b[lay.offset(0, 1)] = 0;  // row 0
        s.a[lay.offset(n / 2, 3)] = 0;
        s.b[lay.offset(n / 2, 3)] = 0;  // inside (or at the start of) a chunk
        s.a[lay.offset(n - 1, 5)] = 0;
        s.b[lay.offset(n - 1, 5)] = 0;  // the last row
      }
      run_args r{tridiag_algorithm::thomas_pcr, lay, 3};
      r.plan = plan_of<float>(tile_of(16, 256, 0, true));
      BOOST_TEST((form_or<tridiag_tile_plan>(r.plan(lay, device().max_smem)).solver ==
                  recur::kernels::tile_solver::thomas_pcr_regs),
                 "n " << n);
      auto const regs = solve_gpu<float>(s, r);
      r.plan = plan_of<float>(tile_of(16, 256, 0, false));
      auto const smem = solve_gpu<float>(s, r);
      BOOST_TEST((regs.second == smem.second), "n " << n);
      BOOST_TEST(std::memcmp(regs.first.data(), smem.first.data(), regs.first.size() * sizeof(float)) == 0,
                 "n " << n << (lay.element_stride == 1 ? " contiguous" : " interleaved"));
      if (n >= 5) {
        BOOST_TEST(regs.second[1] == 1);
        BOOST_TEST(regs.second[3] > 0);
        BOOST_TEST(regs.second[5] > 0);
        BOOST_TEST(regs.second[0] == 0);
      }
    }
  }
}

// Three systems of the batch made to break down: system 1 at row 0, system
// 3 inside (or at the start of) a chunk, the last system at its last row.
void break_three(system_set& s, layout const& lay) {
  std::int64_t const n = lay.n, count = lay.count;
  s.b[lay.offset(0, 1)] = 0;
  s.a[lay.offset(n / 2 + 1, 3)] = 0;
  s.b[lay.offset(n / 2 + 1, 3)] = 0;
  s.a[lay.offset(n - 1, count - 1)] = 0;
  s.b[lay.offset(n - 1, count - 1)] = 0;
}

// What a solver reports for break_three's systems: info 1 for system 1,
// a breakdown for systems 3 and count - 1, none for system 0; x NaN for a
// broken system, finite for a sound one.
template <class T>
void expect_three_broken(std::pair<std::vector<T>, std::vector<std::int32_t>> const& got, layout const& lay) {
  std::int64_t const n = lay.n, count = lay.count;
  BOOST_TEST(got.second[1] == 1);
  BOOST_TEST(got.second[3] > 0);
  BOOST_TEST(got.second[count - 1] > 0);
  BOOST_TEST(got.second[0] == 0);
  BOOST_TEST(std::isnan(double(got.first[lay.offset(n - 1, 1)])));
  BOOST_TEST(std::isfinite(double(got.first[lay.offset(n - 1, 2)])));
}

// break_three's systems (random otherwise, from seed) solved by Thomas-PCR
// (the form plan gives, or automatic's), f32 and f64, x apart from d and in
// place.
template <class P = std::nullptr_t>
void expect_three_broken_both(layout const& lay, std::uint64_t seed, P plan = nullptr) {
  std::mt19937_64 g{seed};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
  break_three(s, lay);
  for (bool in_place : {false, true}) {
    expect_three_broken(
        solve_gpu<float>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, in_place, plan_of<float>(plan)}),
        lay);
    expect_three_broken(solve_gpu<double>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, in_place,
                                                      plan_of<double>(plan)}),
                        lay);
  }
}

// x and info of the direct form against the tile's: bitwise in f64 (spike =
// false: the same arithmetic), or (spike = true: the boundary equations by
// warp and spikes; and f32, below) the same breakdowns and x within tol of
// it relative to the largest |x| of its system, NaN where it is NaN. f32
// without spikes: the same info too, and x within a few ulp (the direct
// kernel's x may differ from the tile's in the last bits, although
// pivot_rcp(p) is bitwise 1.0f / p for every float the sweeps accept:
// pivot_rcp_exact).
template <class T>
void expect_direct_tile(std::pair<std::vector<T>, std::vector<std::int32_t>> const& direct,
                        std::pair<std::vector<T>, std::vector<std::int32_t>> const& tile, layout const& lay,
                        bool spike, std::string const& what) {
  if (!spike) BOOST_TEST((direct.second == tile.second), what);
  if (!spike && sizeof(T) == 8) {
    BOOST_TEST(std::memcmp(direct.first.data(), tile.first.data(), tile.first.size() * sizeof(T)) == 0, what);
    return;
  }
  double const tol = 64 * double(lay.n) * std::numeric_limits<T>::epsilon();
  std::size_t const nrhs = tile.first.size() / std::size_t(span_of(lay));
  double worst = 0;
  bool nan_match = true;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    BOOST_TEST((direct.second[k] == 0) == (tile.second[k] == 0), what << " system " << k);
    for (std::size_t q = 0; q < nrhs; ++q) {
      std::size_t const o = q * std::size_t(span_of(lay));
      double big = 0;
      for (std::int64_t i = 0; i < lay.n; ++i)
        if (std::isfinite(double(tile.first[o + lay.offset(i, k)])))
          big = std::max(big, std::abs(double(tile.first[o + lay.offset(i, k)])));
      for (std::int64_t i = 0; i < lay.n; ++i) {
        double const u = double(direct.first[o + lay.offset(i, k)]),
                     v = double(tile.first[o + lay.offset(i, k)]);
        if (std::isnan(u) != std::isnan(v)) nan_match = false;
        if (!std::isnan(u) && !std::isnan(v))
          worst = std::max(worst, std::abs(u - v) / std::max(big, 1e-300));
      }
    }
  }
  BOOST_TEST(nan_match, what);
  BOOST_TEST(worst <= tol, what << ": " << worst << " > " << tol);
}

// The direct form (registers from global memory): chunks of
// tridiag_direct_group_rows rows, the tile's with that many rows a thread
// (tile_of).
auto const direct_of = [](auto t, layout const& lay, std::size_t) {
  using T = decltype(t);
  return detail::tridiag_plan_direct<T>(lay, policy<T>::direct_min_fill);
};

// Thomas-PCR from global memory into registers (agent_tridiag_direct.cuh:
// contiguous, a warp or W warps per system, 16-byte aligned) against the
// tile's Thomas-PCR with the same chunks (expect_direct_tile), also in
// place and where systems break down (row 0, inside a chunk, the last
// row); f32 and f64. f64's 16 warps join by spikes, fewer warps by warp 0.
template <class T>
void direct_matches_tile(std::int64_t n, std::int64_t count, int tile_rows, int warps) {
  layout const lay = layout::contiguous(n, count);
  std::mt19937_64 g{std::uint64_t(n * 7 + count)};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
  break_three(s, lay);
  bool const spike = warps == 16;
  auto const pd = direct_of(T{}, lay, device().max_smem);
  BOOST_TEST((pd && pd->warps == warps && pd->spike == spike), "n " << n);
  for (bool in_place : {false, true}) {
    auto const direct =
        solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, in_place, plan_of<T>(direct_of)});
    auto const tile = solve_gpu<T>(
        s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, in_place, plan_of<T>(tile_of(tile_rows, 512))});
    std::ostringstream what;
    what << "n " << n << " count " << count << (in_place ? " in place" : "") << (spike ? " spike" : "");
    expect_direct_tile(direct, tile, lay, spike, what.str());
    expect_three_broken(direct, lay);
  }
}

// Several right-hand sides 16-byte apart (the direct form's condition),
// in place: the direct form against the tile.
template <class T>
void direct_rhs_match_tile(std::int64_t n, std::int64_t count, int tile_rows, bool spike) {
  layout const lay = layout::contiguous(n, count);
  std::int64_t const span = span_of(lay), nrhs = 3;
  std::mt19937_64 g{std::uint64_t(n + count)};
  system_set const s = random_dominant(std::size_t(span), std::size_t(span * nrhs), g);
  run_args r{tridiag_algorithm::thomas_pcr, lay, nrhs, true, plan_of<T>(tile_of(tile_rows, 512))};
  r.rhs_pad = 0;
  auto const tile = solve_gpu<T>(s, r);
  r.plan = plan_of<T>(direct_of);
  auto const direct = solve_gpu<T>(s, r);
  expect_direct_tile(direct, tile, lay, spike, "n " + std::to_string(n) + " 3 right-hand sides");
}

BOOST_AUTO_TEST_CASE(thomas_pcr_direct) {
  direct_rhs_match_tile<float>(4096, 45, 16, false);
  direct_rhs_match_tile<double>(1024, 45, 8, false);
  direct_rhs_match_tile<double>(4096, 45, 8, true);
  // One warp a system (16 rows per lane in f32, 8 in f64).
  direct_matches_tile<float>(512, 37, 16, 1);
  direct_matches_tile<float>(512, 3001, 16, 1);
  direct_matches_tile<double>(256, 37, 8, 1);
  // Several warps a system.
  for (std::int64_t n : {1024, 2048, 4096}) direct_matches_tile<float>(n, 37, 16, int(n / 512));
  direct_matches_tile<float>(1024, 700, 16, 2);
  for (std::int64_t n : {512, 1024, 2048, 4096}) direct_matches_tile<double>(n, 37, 8, int(n / 256));
  direct_matches_tile<double>(512, 2000, 8, 2);
  BOOST_TEST(form_or<tridiag_direct_plan>(
                 form_of<double>(layout::contiguous(4096, 10000), tridiag_algorithm::thomas_pcr, 227 * 1024))
                 .warps == 16);
  // Also where the systems are not on 16-byte boundaries.
  BOOST_TEST(holds<tridiag_direct_plan>(
      form_of<float>(layout::strided(512, 10, 1, 513), tridiag_algorithm::thomas_pcr, 227 * 1024)));

  // And its residuals (the sweep's own check), several systems per block.
  sweep<float>(tridiag_algorithm::thomas_pcr, {128, 256, 512, 2048, 4096}, {1, 4, 1000});
  sweep<double>(tridiag_algorithm::thomas_pcr, {64, 512, 1024, 4096}, {5, 1000});
}

// Thomas-PCR's own plan for break_three's systems (random otherwise, from
// seed) against the plan `ref` (with other chunks): the same breakdowns
// and x within 64 n eps of it (expect_direct_tile), for each number of
// right-hand sides (3 apart: off 16-byte boundaries), also in place.
template <class T, class Ref>
void expect_near_plan(layout const& lay, std::uint64_t seed, std::vector<std::int64_t> const& nrhs_list,
                      Ref ref) {
  std::int64_t const most = *std::max_element(nrhs_list.begin(), nrhs_list.end());
  std::mt19937_64 g{seed};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(most * (span_of(lay) + 3)), g);
  break_three(s, lay);
  for (std::int64_t nrhs : nrhs_list)
    for (bool in_place : {false, true}) {
      auto const got = solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, nrhs, in_place});
      auto const want =
          solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, nrhs, in_place, plan_of<T>(ref)});
      std::ostringstream what;
      what << "n " << lay.n << " count " << lay.count << " nrhs " << nrhs << (in_place ? " in place" : "");
      expect_direct_tile(got, want, lay, true, what.str());
      expect_three_broken(got, lay);
    }
}

// The direct form at any n (identity rows past n) and any alignment
// (systems n apart): the plan it runs (the smallest config that holds n),
// against the tile (expect_near_plan: the chunks differ), with one and
// three right-hand sides.
template <class T>
void direct_any_matches_tile(std::int64_t n, std::int64_t count) {
  constexpr std::int64_t rows = sizeof(T) == 4 ? 16 : 8;
  layout const lay = layout::contiguous(n, count);
  std::int64_t const lanes = std::int64_t(std::bit_ceil(std::uint64_t((n + rows - 1) / rows)));
  auto const pd = form_of<T>(lay, tridiag_algorithm::thomas_pcr, device().max_smem);
  BOOST_TEST((holds<tridiag_direct_plan>(pd) &&
              std::int64_t(form_or<tridiag_direct_plan>(pd).lanes) * form_or<tridiag_direct_plan>(pd).warps ==
                  lanes),
             "n " << n);
  expect_near_plan<T>(lay, std::uint64_t(n * 5 + count), {1, 3}, tile_of(int(rows), 512));
}

BOOST_AUTO_TEST_CASE(thomas_pcr_direct_any_n) {
  for (std::int64_t n : {4095, 4093, 3001, 2300, 1500, 1023, 600, 300, 150, 100, 40, 20})
    direct_any_matches_tile<float>(n, 37);
  direct_any_matches_tile<float>(100, 1001);
  for (std::int64_t n : {4095, 2500, 2047, 1000, 511, 200, 63, 9}) direct_any_matches_tile<double>(n, 37);
  direct_any_matches_tile<double>(200, 1001);
  // Systems filling less than direct_min_fill of the smallest size that
  // holds them run the tile.
  for (std::int64_t n : {2049, 129, 33, 17})
    BOOST_TEST(holds<tridiag_tile_plan>(
                   form_of<float>(layout::contiguous(n, 37), tridiag_algorithm::thomas_pcr, 227 * 1024)),
               "n " << n);
  // Residuals over every layout (gaps of the strided ones unwritten), and
  // several right-hand sides, in place.
  sweep<float>(tridiag_algorithm::thomas_pcr, {4095, 1000, 77}, {1, 5, 300});
  sweep<double>(tridiag_algorithm::thomas_pcr, {4093, 333, 21}, {1, 5, 300});
}

// The direct form with several systems per warp (segments of Lanes lanes,
// 16 rows per lane in f32, 8 in f64): against the columns form with the
// same chunks on the contiguous layout (chunk_sweeps and warp_boundary_pcr
// over segments of the same width), bitwise in f64, also in place, with
// several right-hand sides, partial warps and breakdowns.
template <class T>
void segments_match_columns(std::int64_t n, std::int64_t count) {
  constexpr int rows = sizeof(T) == 4 ? 16 : 8;
  layout const lay = layout::contiguous(n, count);
  std::mt19937_64 g{std::uint64_t(n * 3 + count)};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(2 * (span_of(lay) + 3)), g);
  break_three(s, lay);
  auto const columns = [](auto t, layout const& l, std::size_t smem) {
    return detail::tridiag_plan_columns<decltype(t)>(l, smem, rows);
  };
  for (bool in_place : {false, true}) {
    run_args r{tridiag_algorithm::thomas_pcr, lay, 1, in_place};
    auto const plan = form_of<T>(lay, r.alg, 227 * 1024);
    BOOST_TEST((holds<tridiag_direct_plan>(plan) && form_or<tridiag_direct_plan>(plan).lanes == n / rows),
               "n " << n);
    auto const seg = solve_gpu<T>(s, r);
    r.plan = plan_of<T>(columns);
    auto const cols = solve_gpu<T>(s, r);
    BOOST_TEST((seg.second == cols.second), "n " << n);
    // Bitwise in f64; in f32 within 64 n eps (expect_direct_tile says why).
    if constexpr (sizeof(T) == 8)
      BOOST_TEST(std::memcmp(seg.first.data(), cols.first.data(), cols.first.size() * sizeof(T)) == 0,
                 "n " << n << " count " << count << (in_place ? " in place" : ""));
    else
      expect_direct_tile(
          seg, cols, lay, true,
          "n " + std::to_string(n) + " count " + std::to_string(count) + (in_place ? " in place" : ""));
    expect_three_broken(seg, lay);
  }
}

BOOST_AUTO_TEST_CASE(thomas_pcr_direct_segments) {
  for (std::int64_t n : {32, 64, 128, 256}) {
    segments_match_columns<float>(n, 37);
    segments_match_columns<float>(n, 1001);
  }
  for (std::int64_t n : {16, 32, 64, 128}) segments_match_columns<double>(n, 37);
  // Chosen wherever n = Lanes R (f32 R = 16, f64 R = 8), and by automatic
  // for such n < 128 (test_tridiag_cuda checks that).
  auto lanes = [](auto t, std::int64_t n) {
    return form_or<tridiag_direct_plan>(
               form_of<decltype(t)>(layout::contiguous(n, 100), tridiag_algorithm::thomas_pcr, 227 * 1024))
        .lanes;
  };
  BOOST_TEST(lanes(0.0f, 64) == 4);
  BOOST_TEST(lanes(0.0f, 128) == 8);
  BOOST_TEST(lanes(0.0, 64) == 8);
  // Residuals with several right-hand sides (the sweep's own check).
  sweep<double>(tridiag_algorithm::thomas_pcr, {64}, {1, 5, 1000});
  sweep<float>(tridiag_algorithm::thomas_pcr, {32, 64}, {1, 5, 1000});
}

// Two solves of break_three's systems bitwise the same (x and info), and
// its systems broken down in the first.
template <class T>
void expect_same_three_broken(std::pair<std::vector<T>, std::vector<std::int32_t>> const& got,
                              std::pair<std::vector<T>, std::vector<std::int32_t>> const& want,
                              layout const& lay, std::string const& what) {
  BOOST_TEST((got.second == want.second), what);
  BOOST_TEST(std::memcmp(got.first.data(), want.first.data(), want.first.size() * sizeof(T)) == 0, what);
  expect_three_broken(got, lay);
}

// The direct form through shared memory, and the columns kernel's burst
// instance (the builders' plans).
auto const direct_columns_of = [](auto t, layout const& l, std::size_t smem) {
  using T = decltype(t);
  return detail::tridiag_plan_direct_columns<T>(l, smem, policy<T>::direct_min_fill);
};
auto const burst_of = [](auto t, layout const& l, std::size_t smem) {
  return detail::tridiag_plan_columns_burst<decltype(t)>(l, smem);
};

// The direct form through shared memory (tridiag_direct_columns_kernel:
// a 32-byte sector of systems a block, n <= Lanes R) on the contiguous
// layout: bitwise the direct form itself (the same chunks and arithmetic),
// with two right-hand sides 16 bytes apart (the direct form's condition),
// in place, partial blocks and breakdowns. f64 n = 512 (two warps a system,
// joined by spikes) against the tile, within expect_direct_tile's bound.
template <class T>
void direct_columns_match_direct(std::int64_t n, std::int64_t count) {
  layout const lay = layout::contiguous(n, count);
  std::int64_t const v = 16 / sizeof(T), span = span_of(lay);
  std::mt19937_64 g{std::uint64_t(n * 11 + count)};
  run_args r{tridiag_algorithm::thomas_pcr, lay, 2};
  r.rhs_pad = v + (v - span % v) % v;  // rhs_stride a multiple of 16 bytes, not the dense one
  system_set s = random_dominant(std::size_t(span), std::size_t(span + r.rhs_pad + span), g);
  break_three(s, lay);
  auto const pl = direct_columns_of(T{}, lay, device().max_smem);
  BOOST_TEST(pl.has_value(), "n " << n);
  bool const two_warps = form_or(pl).lanes > 32;
  for (bool in_place : {false, true}) {
    r.in_place = in_place;
    r.plan = plan_of<T>(direct_columns_of);
    auto const dc = solve_gpu<T>(s, r);
    std::string const what =
        "n " + std::to_string(n) + " count " + std::to_string(count) + (in_place ? " in place" : "");
    if (two_warps) {
      r.plan = plan_of<T>(tile_of(8, 512));
      expect_direct_tile(dc, solve_gpu<T>(s, r), lay, true, what);
      expect_three_broken(dc, lay);
    } else {
      r.plan = plan_of<T>(direct_of);
      BOOST_TEST((form_or<tridiag_direct_plan>(r.plan(lay, device().max_smem)).lanes == form_or(pl).lanes),
                 what);
      expect_same_three_broken(dc, solve_gpu<T>(s, r), lay, what);
    }
  }
}

// The columns kernel's burst instance (whole systems, chunks of 16 rows
// fetched at once) against the same kernel fetching a few rows ahead with
// the same chunks and blocks: bitwise, on an interleaved batch, in place,
// two right-hand sides, breakdowns.
template <class T>
void burst_matches_columns(std::int64_t n, std::int64_t count) {
  layout const lay = layout::interleaved(n, count);
  std::mt19937_64 g{std::uint64_t(n * 13 + count)};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(2 * (span_of(lay) + 3)), g);
  break_three(s, lay);
  auto const pb = form_or(burst_of(T{}, lay, device().max_smem));
  BOOST_TEST((pb.instance == detail::columns_instance::burst && pb.rows == 16 && pb.chunks == n / 16),
             "n " << n);
  // (The block's plan with the instance of its 16-row chunks.)
  auto const same = [pb](auto t, layout const&, std::size_t smem) -> std::optional<tridiag_columns_plan> {
    auto const block = detail::tridiag_plan_columns_block<decltype(t)>(smem, pb.chunks, 16, 1, pb.systems);
    if (!block) return std::nullopt;
    return tridiag_columns_plan{*block, detail::columns_instance::rows16};
  };
  auto const pc = form_or(same(T{}, lay, device().max_smem));
  BOOST_TEST((pc.chunks == pb.chunks && pc.systems == pb.systems), "n " << n);
  for (bool in_place : {false, true}) {
    auto const b =
        solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 2, in_place, plan_of<T>(burst_of)});
    auto const c =
        solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 2, in_place, plan_of<T>(same)});
    expect_same_three_broken(
        b, c, lay,
        "n " + std::to_string(n) + " count " + std::to_string(count) + (in_place ? " in place" : ""));
  }
}

BOOST_AUTO_TEST_CASE(thomas_pcr_small_interleaved) {
  for (std::int64_t n : {32, 64, 128, 256, 512}) {
    direct_columns_match_direct<float>(n, 37);
    direct_columns_match_direct<float>(n, 1001);
  }
  for (std::int64_t n : {16, 32, 64, 128, 256, 512}) direct_columns_match_direct<double>(n, 37);
  direct_columns_match_direct<double>(512, 1001);  // (two warps a system)
  // Any n (identity rows past n), bitwise the direct form with the same chunks.
  for (std::int64_t n : {20, 100, 300, 500}) direct_columns_match_direct<float>(n, 37);
  for (std::int64_t n : {9, 50, 200, 300}) direct_columns_match_direct<double>(n, 37);
  for (std::int64_t n : {16, 48, 96, 512}) burst_matches_columns<float>(n, 37);
  for (std::int64_t n : {48, 512}) burst_matches_columns<double>(n, 37);
  // Residuals on every layout (partial blocks, two right-hand sides, in
  // place: the sweep's own check).
  sweep<float>(tridiag_algorithm::thomas_pcr, {32, 64, 512}, {1, 37}, direct_columns_of);
  sweep<double>(tridiag_algorithm::thomas_pcr, {16, 256, 512}, {1, 37}, direct_columns_of);
  sweep<float>(tridiag_algorithm::thomas_pcr, {40, 300}, {1, 37}, direct_columns_of);
  sweep<double>(tridiag_algorithm::thomas_pcr, {21, 450}, {1, 37}, direct_columns_of);
  sweep<float>(tridiag_algorithm::thomas_pcr, {16, 96, 512}, {1, 37}, burst_of);
  sweep<double>(tridiag_algorithm::thomas_pcr, {48, 512}, {1, 37}, burst_of);
  expect_three_broken_both(layout::interleaved(512, 37), 519);  // direct columns (f64: two warps a system)
  expect_three_broken_both(layout::interleaved(256, 37), 257);
  expect_three_broken_both(layout::interleaved(96, 37), 97);  // burst
  // What is chosen: small interleaved batches only.
  auto plan = [](auto t, layout const& lay) {
    return form_of<decltype(t)>(lay, tridiag_algorithm::thomas_pcr, 227 * 1024);
  };
  // The direct columns kernel's threads a block: its systems a block times their lanes.
  auto threads = [](auto t, tridiag_direct_columns_plan const& pl) {
    return recur::kernels::tridiag_direct_columns_systems<decltype(t)>(pl.lanes) * pl.lanes;
  };
  auto const zhang = plan(0.0f, layout::interleaved(512, 512));
  BOOST_TEST(holds<tridiag_direct_columns_plan>(zhang));
  BOOST_TEST(form_or<tridiag_direct_columns_plan>(zhang).lanes == 32);
  BOOST_TEST(threads(0.0f, form_or<tridiag_direct_columns_plan>(zhang)) == 256);
  BOOST_TEST(holds<tridiag_direct_columns_plan>(plan(0.0, layout::interleaved(256, 512))));
  BOOST_TEST(form_or<tridiag_direct_columns_plan>(plan(0.0f, layout::interleaved(64, 100))).lanes == 4);
  auto const f64 = form_or<tridiag_direct_columns_plan>(plan(0.0, layout::interleaved(512, 512)));
  BOOST_TEST((holds<tridiag_direct_columns_plan>(plan(0.0, layout::interleaved(512, 512))) && f64.rows == 8 &&
              f64.lanes == 64 && threads(0.0, f64) == 256));
  auto const b64 = form_or<tridiag_columns_plan>(plan(0.0, layout::interleaved(96, 100)));
  BOOST_TEST((b64.instance == detail::columns_instance::burst && b64.systems == 4 && b64.chunks == 6));
  BOOST_TEST((form_or<tridiag_columns_plan>(plan(0.0f, layout::interleaved(48, 100))).instance ==
              detail::columns_instance::burst));
  auto const none = [&](auto t, layout const& lay) {
    auto const pl = plan(t, lay);
    return !holds<tridiag_direct_columns_plan>(pl) &&
           !(holds<tridiag_columns_plan>(pl) &&
             form_or<tridiag_columns_plan>(pl).instance == detail::columns_instance::burst);
  };
  BOOST_TEST(none(0.0f, layout::interleaved(512, 2048)));  // (the columns kernel)
  BOOST_TEST(none(0.0f, layout::contiguous(512, 512)));    // (the direct form)
  // Any n that fills half its rows (identity rows past n).
  auto const padded = plan(0.0f, layout::interleaved(300, 700));
  BOOST_TEST((holds<tridiag_direct_columns_plan>(padded) &&
              form_or<tridiag_direct_columns_plan>(padded).lanes == 32));
  BOOST_TEST(none(0.0f, layout::interleaved(1024, 512)));
  // Small batches of systems longer than 512 rows: the columns forms (not
  // the tile or the partitioned form), as wide ones.
  BOOST_TEST(holds<tridiag_segments_plan>(plan(0.0f, layout::interleaved(2047, 2047))));
  BOOST_TEST(holds<tridiag_segments_plan>(plan(0.0, layout::interleaved(600, 512))));
  BOOST_TEST(holds<tridiag_segments_plan>(plan(0.0f, layout::interleaved(1023, 100))));
  sweep<float>(tridiag_algorithm::thomas_pcr, {600, 2047}, {1, 37});
  sweep<double>(tridiag_algorithm::thomas_pcr, {1023}, {1, 37});
  BOOST_TEST(none(0.0f, layout::strided(512, 512, 1024, 2)));  // (systems not side by side)
}

// Thomas-PCR on adjacent systems with full-line rows
// (agent_tridiag_columns.cuh). With the tile's chunks (min(32, n / 2) of
// them) x and info are bitwise the tile's (tridiag_plan_thomas_pcr_tiled:
// what runs where the columns forms do not), in place and where systems
// break down (row 0, inside a chunk, the last row).
template <class T>
void columns_match_tile(std::int64_t n, std::int64_t count, int systems = 128 / sizeof(T)) {
  layout const lay = layout::interleaved(n, count);
  std::mt19937_64 g{std::uint64_t(n * 5 + count)};
  system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(2 * (span_of(lay) + 3)), g);
  bool const breaks = n >= 5;
  if (breaks) break_three(s, lay);
  auto const columns = [systems](auto t, layout const& l, std::size_t smem) {
    return detail::tridiag_plan_columns<decltype(t)>(l, smem, 1, systems);  // (1: as many chunks as allowed)
  };
  auto const tiled = [](auto t, layout const& l, std::size_t smem) {
    using U = decltype(t);
    return detail::tridiag_plan_thomas_pcr_tiled<U, policy<U>>(l, smem);
  };
  BOOST_TEST((form_or(columns(T{}, lay, device().max_smem)).chunks ==
              std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2))),
             "n " << n);
  for (bool in_place : {false, true}) {
    auto const cols =
        solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 2, in_place, plan_of<T>(columns)});
    auto const tile =
        solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 2, in_place, plan_of<T>(tiled)});
    BOOST_TEST((cols.second == tile.second), "n " << n);
    BOOST_TEST(std::memcmp(cols.first.data(), tile.first.data(), tile.first.size() * sizeof(T)) == 0,
               "n " << n << " count " << count << " systems " << systems << (in_place ? " in place" : ""));
    if (breaks) expect_three_broken(cols, lay);
  }
}

// The columns forms on any layout (only adjacent systems make full lines,
// but any layout is solved): what automatic ranks for a wide interleaved
// batch.
auto const columns_ranked = [](auto t, layout const& l, std::size_t smem) {
  using T = decltype(t);
  return detail::tridiag_plan_columns_ranked<T, policy<T>>(l, smem, true);
};

BOOST_AUTO_TEST_CASE(thomas_pcr_columns) {
  // (n = 1: the tile divides d by b, this kernel multiplies by 1 / b; the
  // sweeps below check it.)
  for (std::int64_t n : {2, 3, 5, 31, 33, 64, 100, 127, 256, 300, 512, 1000}) {
    columns_match_tile<float>(n, 37);
    columns_match_tile<double>(n, 37);
  }
  columns_match_tile<float>(512, 100, 8);  // 8 systems a block: 4 chunks per warp
  columns_match_tile<double>(256, 70, 4);
  // The default chunks and blocks, every layout, residuals.
  auto const whole = [](auto t, layout const& l, std::size_t smem) {
    return detail::tridiag_plan_columns<decltype(t)>(l, smem, sizeof(t) == 4 && l.n > 256 ? 32 : 16);
  };
  sweep<float>(tridiag_algorithm::thomas_pcr, {1, 2, 3, 5, 31, 32, 33, 64, 127, 256, 513, 1000, 1024},
               {1, 37}, whole);
  sweep<double>(tridiag_algorithm::thomas_pcr, {2, 33, 127, 512, 1024}, {1, 37}, whole);
  sweep<float>(tridiag_algorithm::thomas_pcr, {64, 700}, {37}, [](auto t, layout const& l, std::size_t smem) {
    return detail::tridiag_plan_columns<decltype(t)>(l, smem, 16, 8);
  });
  sweep<float>(tridiag_algorithm::thomas_pcr, {100, 256, 1000}, {1, 37}, columns_ranked);
  // Chosen by default for a large interleaved batch; a partial last block.
  layout const big = layout::interleaved(128, 2100);
  auto const pb = form_of<float>(big, tridiag_algorithm::thomas_pcr, 227 * 1024);
  BOOST_TEST((holds<tridiag_columns_plan>(pb) && form_or<tridiag_columns_plan>(pb).systems == 32));
  sweep<float>(tridiag_algorithm::thomas_pcr, {128}, {2100});
  sweep<double>(tridiag_algorithm::thomas_pcr, {512}, {2100});
}

// Segments of about `rows` rows joined by `join` (the builder's plan, the
// policy's most segments and long segments).
auto segments_of(int rows, int join, int systems = 0) {
  return [=](auto t, layout const& l, std::size_t smem) {
    using T = decltype(t);
    return detail::tridiag_plan_segments<T>(l, smem, rows, join, policy<T>::max_segments,
                                            policy<T>::segment_rows_long,
                                            systems ? systems : int(128 / sizeof(T)));
  };
}

// The joins a type's segmented kernel is built with.
template <class T>
std::vector<int> joins() {
  namespace K = recur::kernels;
  if constexpr (sizeof(T) == 8)
    return {K::segment_join_by_thomas, K::segment_join_by_pcr, K::segment_join_by_scatter};
  return {K::segment_join_by_thomas, K::segment_join_by_scatter};
}

// Systems cut into segments, a block each, a cluster per group of systems
// (agent_tridiag_segments.cuh): segments of unequal lengths, 1 to 32 chunks
// per segment, 2 to 16 segments, partial groups, every layout, several
// right-hand sides, in place; breakdown in any segment NaNs the whole
// system. Every join of each type.
template <class T>
void segments_sweeps(int join) {
  BOOST_TEST_CONTEXT("join " << join << " f" << 8 * sizeof(T)) {
    auto const plan = segments_of(64, join)(T{}, layout::interleaved(1000, 37), device().max_smem);
    BOOST_TEST(form_or(plan).segments == 16);
    BOOST_TEST(form_or(plan).chunks == 4);  // segments of 62 or 63 rows, chunks of 15 or 16
    BOOST_TEST(form_or(plan).rows == 16);
    BOOST_TEST(form_or(plan).join == join);
    sweep<T>(tridiag_algorithm::thomas_pcr, {65, 129, 200, 513, 1000, 4096}, {1, 37}, segments_of(64, join));
    // Chunks of 14 and 15 rows (the 15-row instance): n = 899, 15 segments
    // of 59 or 60 rows, 4 chunks each; all 15 rows at 900.
    BOOST_TEST(form_or(segments_of(64, join)(T{}, layout::interleaved(899, 37), device().max_smem)).rows ==
               15);
    sweep<T>(tridiag_algorithm::thomas_pcr, {899, 900}, {37}, segments_of(64, join));
    sweep<T>(tridiag_algorithm::thomas_pcr, {1025, 3000}, {37},
             segments_of(512, join, 8));  // 32 chunks of 16 rows
    if constexpr (sizeof(T) == 8)         // one chunk per segment (f32's twisted boundary solve needs two)
      sweep<T>(tridiag_algorithm::thomas_pcr, {33, 100, 4096}, {1, 37}, segments_of(16, join));
    else
      BOOST_TEST(!segments_of(16, join)(T{}, layout::interleaved(100, 37), device().max_smem).has_value());
    // Breakdowns (row 0, the middle segment, the last row) and in place.
    for (std::int64_t n : {1000, 4096}) {
      layout const lay = layout::interleaved(n, 37);
      std::mt19937_64 g{std::uint64_t(n)};
      system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(2 * (span_of(lay) + 3)), g);
      break_three(s, lay);
      for (bool in_place : {false, true}) {
        auto const got = solve_gpu<T>(
            s, run_args{tridiag_algorithm::thomas_pcr, lay, 2, in_place, plan_of<T>(segments_of(128, join))});
        expect_three_broken(got, lay);
        BOOST_TEST(
            std::isnan(double(got.first[lay.offset(0, 3)])));  // segment 0 of a system broken in the middle
        BOOST_TEST(
            (got.second[3] >= 1 && got.second[3] <= n / 2 + 2));  // the bad row or a boundary row before it
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(thomas_pcr_segments) {
  for (int join : joins<float>()) segments_sweeps<float>(join);
  for (int join : joins<double>()) segments_sweeps<double>(join);
  BOOST_TEST(
      !segments_of(64, recur::kernels::segment_join_by_pcr)(0.0f, layout::interleaved(1000, 37), 227 * 1024)
           .has_value());  // (not built for f32)
  // The join chosen: PCR in f64 up to 4 segments, the scatter from 9
  // segments, else the block Thomas.
  auto plan = [](auto t, std::int64_t n) {
    return form_of<decltype(t)>(layout::interleaved(n, n == 4096 ? 8192 : 4096),
                                tridiag_algorithm::thomas_pcr, 227 * 1024);
  };
  auto seg = [&](auto t, std::int64_t n) { return form_or<tridiag_segments_plan>(plan(t, n)); };
  namespace K = recur::kernels;
  BOOST_TEST(seg(0.0f, 1024).join == K::segment_join_by_thomas);
  BOOST_TEST(seg(0.0f, 512).join == K::segment_join_by_thomas);
  BOOST_TEST(seg(0.0, 512).join == K::segment_join_by_pcr);
  BOOST_TEST(seg(0.0f, 4096).join == K::segment_join_by_scatter);
  BOOST_TEST(seg(0.0, 4096).join == K::segment_join_by_scatter);
  BOOST_TEST(seg(0.0, 1024).join == K::segment_join_by_pcr);  // (4 segments of 256 rows)
  // Chosen by default for a large interleaved batch from n = 256.
  BOOST_TEST(seg(0.0f, 4096).segments == 16);
  BOOST_TEST(seg(0.0f, 1024).segments == 8);
  BOOST_TEST(seg(0.0f, 512).segments == 4);
  BOOST_TEST(seg(0.0f, 256).segments == 2);
  BOOST_TEST(holds<tridiag_columns_plan>(plan(0.0f, 128)));
  BOOST_TEST(seg(0.0, 256).segments == 2);
  BOOST_TEST(holds<tridiag_columns_plan>(plan(0.0, 128)));
  sweep<float>(tridiag_algorithm::thomas_pcr, {4096}, {2100});
}

// The same on small shapes, for compute-sanitizer (scripts/gpu-check):
// 2 to 5 segments, chunks of 14 to 16 rows, a partial group, breakdowns;
// d in registers on 128-row segments (f32 2 chunks of 64, f64 4 of 32).
BOOST_AUTO_TEST_CASE(thomas_pcr_segments_small) {
  auto small = [](auto t, int join) {
    using T = decltype(t);
    // (n = 299: 5 segments of 59 or 60 rows, chunks of 14 and 15; 300 all
    // 15; 310 15 and 16: the 15- and 16-row instances' constant lengths.)
    sweep<T>(tridiag_algorithm::thomas_pcr, {130, 299, 300, 310}, {37}, segments_of(64, join));
    layout const lay = layout::interleaved(300, 37);
    std::mt19937_64 g{300};
    system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
    break_three(s, lay);
    expect_three_broken(solve_gpu<T>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, true,
                                                 plan_of<T>(segments_of(64, join))}),
                        lay);
  };
  for (int join : joins<float>()) small(0.0f, join);
  for (int join : joins<double>()) small(0.0, join);
  auto const dregs = [](auto t, layout const& l, std::size_t smem) {
    return detail::tridiag_plan_segments_dregs<decltype(t)>(l, smem, int((l.n + 127) / 128));
  };
  BOOST_TEST((form_or(dregs(0.0f, layout::interleaved(512, 37), 227 * 1024)).instance ==
              detail::segments_instance::dregs));
  BOOST_TEST(form_or(dregs(0.0f, layout::interleaved(512, 37), 227 * 1024)).chunks == 2);
  BOOST_TEST(form_or(dregs(0.0, layout::interleaved(512, 37), 227 * 1024)).chunks == 4);
  BOOST_TEST(!dregs(0.0f, layout::interleaved(500, 37), 227 * 1024).has_value());  // (segments of 125 rows)
  sweep<float>(tridiag_algorithm::thomas_pcr, {256, 640}, {37}, dregs);
  sweep<double>(tridiag_algorithm::thomas_pcr, {256, 640}, {37}, dregs);
  expect_three_broken_both(layout::interleaved(512, 37), 517, dregs);
}

// f32's wide segments (8 or 4 chunks of 17-32 rows, 256 or 128 threads a
// block): chosen with 16 segments of 32-row chunks where d in registers is
// not (n = 2048), not with fewer segments nor where the chunks would be
// shorter; solved at sizes that are not a multiple of anything, with
// breakdowns, in place, with either join.
BOOST_AUTO_TEST_CASE(thomas_pcr_segments_wide) {
  // Automatic's segments plan (F{} where it runs another form).
  auto plan = [](std::int64_t n) {
    return form_or<tridiag_segments_plan>(
        form_of<float>(layout::interleaved(n, 8192), tridiag_algorithm::thomas_pcr, 227 * 1024));
  };
  auto wide = [](int segments, int chunks, int join = recur::kernels::segment_join_by_scatter) {
    return [=](auto t, layout const& l, std::size_t smem) {
      return detail::tridiag_plan_segments_wide<decltype(t)>(l, smem, segments, chunks, join);
    };
  };
  using detail::segments_instance;
  BOOST_TEST((plan(2048).instance == segments_instance::wide));  // 16 segments of 128 rows: 4 chunks of 32
  BOOST_TEST(plan(2048).chunks == 4);
  BOOST_TEST(plan(2048).threads == 128);
  BOOST_TEST((plan(4096).instance == segments_instance::dregs));
  BOOST_TEST((plan(1024).instance != segments_instance::wide));
  BOOST_TEST((plan(4000).instance != segments_instance::wide));  // chunks of 31-32 rows: 16 of 15-16 instead
  BOOST_TEST(plan(4000).chunks == 16);
  BOOST_TEST((form_or<tridiag_segments_plan>(
                  form_of<double>(layout::interleaved(2048, 8192), tridiag_algorithm::thomas_pcr, 227 * 1024))
                  .instance != segments_instance::wide));
  auto const w4096 = form_or(wide(16, 8)(0.0f, layout::interleaved(4096, 8192), 227 * 1024));
  BOOST_TEST((w4096.instance == segments_instance::wide && w4096.rows == 32 && w4096.threads == 256));
  BOOST_TEST(form_or(wide(16, 8)(0.0f, layout::interleaved(3841, 37), 227 * 1024)).rows == 31);
  BOOST_TEST(!wide(16, 8)(0.0, layout::interleaved(4096, 37), 227 * 1024).has_value());  // (f32 only)
  sweep<float>(tridiag_algorithm::thomas_pcr, {2048}, {1, 37, 100}, wide(16, 4));
  sweep<float>(tridiag_algorithm::thomas_pcr, {4096}, {1, 37, 100}, wide(16, 8));
  for (int join : joins<float>())
    sweep<float>(tridiag_algorithm::thomas_pcr, {3841, 4000}, {1, 37}, wide(16, 8, join));
  sweep<float>(tridiag_algorithm::thomas_pcr, {700, 1024}, {37}, wide(4, 8));  // fewer segments
  for (std::int64_t n : {3900, 4096}) {
    layout const lay = layout::interleaved(n, 37);
    std::mt19937_64 g{std::uint64_t(n)};
    system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
    break_three(s, lay);
    for (bool in_place : {false, true})
      expect_three_broken(solve_gpu<float>(s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, in_place,
                                                       plan_of<float>(wide(16, 8))}),
                          lay);
  }
}

// Between 16 segments of 128 rows (n = 2048) and of 256 (n = 4096): 256-row
// segments (9 to 16 of them), 16 chunks of at most 16 rows (15 and 16, or
// 14 and 15: the 16- and 15-row instances); f64's 256-row segments from
// n = 513. Plans, and solves at those sizes (f32, f64). (Where they are
// all 256 rows and 9 or more, d in registers takes them by default:
// thomas_pcr_segments_dregs; the plain ones are the builder's.)
BOOST_AUTO_TEST_CASE(thomas_pcr_segments_between) {
  // Automatic's segments plan (F{} where it runs another form), or the
  // plain one where that has d in registers.
  auto plan = [](auto t, std::int64_t n) {
    using T = decltype(t);
    layout const lay = layout::interleaved(n, 8192);
    auto const pl =
        form_or<tridiag_segments_plan>(form_of<T>(lay, tridiag_algorithm::thomas_pcr, 227 * 1024));
    if (pl.instance != detail::segments_instance::dregs) return pl;
    return form_or(detail::tridiag_plan_segments<T>(lay, 227 * 1024, 256,
                                                    recur::kernels::segment_join_by_scatter,
                                                    policy<T>::max_segments, policy<T>::segment_rows_long));
  };
  for (auto const& [n, G, rows] : std::vector<std::array<int, 3>>{{2049, 9, 15},
                                                                  {2560, 10, 16},
                                                                  {3072, 12, 16},
                                                                  {3584, 14, 16},
                                                                  {3600, 15, 15},
                                                                  {3841, 16, 16},
                                                                  {4000, 16, 16}}) {
    BOOST_TEST_CONTEXT("n " << n) {
      for (auto const& pl : {plan(0.0f, n), plan(0.0, n)}) {
        BOOST_TEST(pl.segments == G);
        BOOST_TEST(pl.chunks == 16);
        BOOST_TEST(pl.rows == rows);
        BOOST_TEST((pl.instance != detail::segments_instance::wide));
      }
    }
  }
  // f64 from n = 513 where the chunks are then 15-16 rows: 256-row
  // segments too (n = 1024: 4; 1500: 6 of 250 rows, chunks of 15 and 16;
  // 2048: 8); not at 1100 (5 segments would make chunks of 13 and 14) nor
  // 1800 (8 of 225 rows: 14 and 15; 15 of 120 rows instead, chunks of 15).
  for (auto const& [n, G, rows] :
       std::vector<std::array<int, 3>>{{1024, 4, 16}, {1500, 6, 16}, {2048, 8, 16}}) {
    BOOST_TEST_CONTEXT("f64 n " << n) {
      BOOST_TEST(plan(0.0, n).segments == G);
      BOOST_TEST(plan(0.0, n).chunks == 16);
      BOOST_TEST(plan(0.0, n).rows == rows);
    }
  }
  BOOST_TEST(plan(0.0, 1100).segments == 9);
  BOOST_TEST(plan(0.0, 1100).chunks == 8);
  BOOST_TEST(plan(0.0, 1800).segments == 15);
  BOOST_TEST(plan(0.0, 1800).rows == 15);
  BOOST_TEST(plan(0.0f, 1024).segments == 8);  // (f32 keeps 128-row segments)
  BOOST_TEST(plan(0.0f, 2048).segments == 16);
  BOOST_TEST(plan(0.0, 4096).chunks == 16);
  BOOST_TEST(plan(0.0f, 5000).segments == 16);  // (above 4096: n / 16 rows a segment)
  auto const seg256 = [](auto t, layout const& l, std::size_t smem) {
    using T = decltype(t);
    return detail::tridiag_plan_segments<T>(
        l, smem, 256,
        detail::tridiag_segments_join<T, policy<T>>(int(std::min<std::int64_t>(16, (l.n + 255) / 256))),
        policy<T>::max_segments, policy<T>::segment_rows_long);
  };
  // (Chunks of 14 and 15 rows at n = 2049, all 15 at 3600: the 15-row
  // instance; 15 and 16 at 3000.)
  sweep<float>(tridiag_algorithm::thomas_pcr, {2049, 2560, 3000, 3600}, {1, 37}, seg256);
  sweep<double>(tridiag_algorithm::thomas_pcr, {1024, 1500, 2048, 2049, 3072, 3600}, {1, 37}, seg256);
}

// Segments with each thread's d in registers (the segmented kernel's
// DRegs, 3 blocks per SM): chosen for 256-row segments, at least 9 of them
// (f32 4 chunks of 64 rows, f64 8 of 32, 128 threads, the scatter join);
// not at n = 2048 nor where the segments are not all 256 rows; solved on
// every layout, with partial groups, breakdowns and x in place (and on small
// shapes, for compute-sanitizer, in thomas_pcr_segments_small).
BOOST_AUTO_TEST_CASE(thomas_pcr_segments_dregs) {
  // Automatic's segments plan (F{} where it runs another form).
  auto plan = [](auto t, std::int64_t n) {
    return form_or<tridiag_segments_plan>(
        form_of<decltype(t)>(layout::interleaved(n, 8192), tridiag_algorithm::thomas_pcr, 227 * 1024));
  };
  for (int n : {2560, 3072, 3584, 4096}) {
    BOOST_TEST_CONTEXT("n " << n) {
      auto const p32 = plan(0.0f, n), p64 = plan(0.0, n);
      for (auto const& pl : {p32, p64}) {
        BOOST_TEST((pl.instance == detail::segments_instance::dregs));
        BOOST_TEST(pl.segments == n / 256);
        BOOST_TEST(pl.threads == 128);
        BOOST_TEST(pl.join == recur::kernels::segment_join_by_scatter);
      }
      BOOST_TEST(p32.chunks == 4);
      BOOST_TEST(p32.rows == 64);
      BOOST_TEST(p64.chunks == 8);
      BOOST_TEST(p64.rows == 32);
      BOOST_TEST(p32.smem < 76 * 1024);  // 3 blocks per SM
      BOOST_TEST(p64.smem < 76 * 1024);
    }
  }
  for (int n : {1024, 2048, 2049, 3600, 4000, 5120}) {
    BOOST_TEST_CONTEXT("n " << n) {
      BOOST_TEST((plan(0.0f, n).instance != detail::segments_instance::dregs));
      BOOST_TEST((plan(0.0, n).instance != detail::segments_instance::dregs));
    }
  }
  sweep<float>(tridiag_algorithm::thomas_pcr, {2560, 4096}, {1, 37}, columns_ranked);
  sweep<double>(tridiag_algorithm::thomas_pcr, {3072, 4096}, {1, 37}, columns_ranked);
  expect_three_broken_both(layout::interleaved(4096, 37), 4101, columns_ranked);
}

// In f32 the same a little short of such a split (fewer rows missing than
// a chunk has: 4095 = 16 x 256 - 1): d in registers with identity rows past
// n (pad_rows), not read or written. Plans; against the plain segments
// with 256-row segments (expect_near_plan: the chunks differ), with one
// and two right-hand sides; solved on every layout (gaps unwritten).
template <class T>
void dregs_pad_matches_segments(std::int64_t n, std::int64_t count) {
  auto const seg256 = [](auto t, layout const& l, std::size_t smem) {
    using U = decltype(t);
    return detail::tridiag_plan_segments<U>(l, smem, 256, recur::kernels::segment_join_by_scatter,
                                            policy<U>::max_segments, policy<U>::segment_rows_long);
  };
  expect_near_plan<T>(layout::interleaved(n, count), std::uint64_t(n * 17 + count), {1, 2}, seg256);
}

BOOST_AUTO_TEST_CASE(thomas_pcr_segments_dregs_padded) {
  // Automatic's segments plan (F{} where it runs another form).
  auto plan = [](auto t, std::int64_t n) {
    return form_or<tridiag_segments_plan>(
        form_of<decltype(t)>(layout::interleaved(n, 8192), tridiag_algorithm::thomas_pcr, 227 * 1024));
  };
  for (int n : {4095, 4090, 3583, 2559}) {
    BOOST_TEST_CONTEXT("n " << n) {
      auto const pl = plan(0.0f, n);
      BOOST_TEST((pl.instance == detail::segments_instance::dregs));
      BOOST_TEST(pl.segments == (n + 255) / 256);
      BOOST_TEST(pl.pad_rows == pl.segments * 256 - n);
      BOOST_TEST((plan(0.0, n).instance != detail::segments_instance::dregs));  // (f32 only)
    }
  }
  // Padded only by less than a chunk (64 rows).
  BOOST_TEST((plan(0.0f, 4033).pad_rows == 63));
  BOOST_TEST((plan(0.0f, 4032).instance != detail::segments_instance::dregs));
  BOOST_TEST(plan(0.0f, 4096).pad_rows == 0);
  for (std::int64_t n : {4095, 4033, 2559}) dregs_pad_matches_segments<float>(n, 37);
  dregs_pad_matches_segments<float>(3583, 300);
  sweep<float>(tridiag_algorithm::thomas_pcr, {4095, 3583}, {1, 37}, columns_ranked);
  sweep<double>(tridiag_algorithm::thomas_pcr, {4095, 2559}, {1, 37}, columns_ranked);
}

// Many tiles per block exercise the persistent walk.
BOOST_AUTO_TEST_CASE(many_tiles) {
  for (auto alg : {tridiag_algorithm::thomas, tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_pcr,
                   tridiag_algorithm::cr_packed, tridiag_algorithm::pscheme})
    sweep<float>(alg, {5, 64, 513}, {37, 3000});
  for (auto alg : {tridiag_algorithm::thomas, tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_pcr})
    sweep<double>(alg, {33, 64}, {20000});
}

// The partitioned form with chunks of about `chunk` rows, Thomas-PCR
// solving the reduced systems; regs: chunks in registers where the systems
// are contiguous (the policy's blocks and windows).
auto partition_of(int chunk, bool regs = false) {
  return [chunk, regs](auto t, layout const& l, std::size_t smem) {
    using T = decltype(t);
    return detail::tridiag_plan_partition<T>(l, smem, chunk, tridiag_algorithm::thomas_pcr, regs,
                                             policy<T>::partition_threads, policy<T>::partition_window_smem);
  };
}

// The partitioned Thomas-PCR (3 passes through global memory) on every
// layout; and where automatic takes it because a tile cannot hold the
// system (one system of 2^22 rows: the reduced batches recurse three
// levels).
BOOST_AUTO_TEST_CASE(partitioned) {
  sweep<float>(tridiag_algorithm::thomas_pcr, {4, 5, 63, 64, 65, 127, 513, 4096}, {1, 3, 37},
               partition_of(32));
  sweep<double>(tridiag_algorithm::thomas_pcr, {4, 100, 1000}, {1, 40}, partition_of(32));
  sweep<float>(tridiag_algorithm::thomas_pcr, {11, 1000}, {3, 33}, partition_of(5));
  BOOST_TEST(holds<tridiag_partition_plan>(form_of<double>(layout::contiguous(std::int64_t(1) << 22, 1),
                                                           tridiag_algorithm::thomas_pcr, 227 * 1024)));
  sweep<double>(tridiag_algorithm::thomas_pcr, {std::int64_t(1) << 22}, {1});
  sweep<float>(tridiag_algorithm::thomas_pcr, {300000}, {2});
  BOOST_TEST(!partition_of(32)(0.0f, layout::contiguous(3, 5), 227 * 1024).has_value());  // (n >= 4)
}

// Breakdown through the passes of the partitioned form: b_0 = 0 (pass 1),
// and a zero pivot inside a chunk; the other systems solved.
// The partitioned form with each thread's chunk in registers (contiguous
// systems; chunks of a 128-byte line, the last one's rows past n identity
// rows), which automatic runs on long contiguous systems: against the
// shared-memory windows (expect_near_plan), with breakdowns, one and two
// right-hand sides, in place; and by its residuals over every layout.
BOOST_AUTO_TEST_CASE(partition_regs) {
  auto const regs = partition_of(32, true);
  BOOST_TEST(form_or(regs(0.0f, layout::contiguous(100003, 1), 227 * 1024)).regs_rows == 32);
  BOOST_TEST(form_or(regs(0.0, layout::contiguous(100003, 1), 227 * 1024)).regs_rows == 16);
  BOOST_TEST(form_or(regs(0.0f, layout::interleaved(100003, 4), 227 * 1024)).regs_rows == 0);
  auto const auto_plan =
      form_of<float>(layout::contiguous(100003, 5), tridiag_algorithm::thomas_pcr, 227 * 1024);
  BOOST_TEST((holds<tridiag_partition_plan>(auto_plan) &&
              form_or<tridiag_partition_plan>(auto_plan).regs_rows == 32));
  for (std::int64_t n : {20000, 100003})
    expect_near_plan<float>(layout::contiguous(n, 5), std::uint64_t(n), {1, 2}, partition_of(32));
  for (std::int64_t n : {10000, 65537})
    expect_near_plan<double>(layout::contiguous(n, 5), std::uint64_t(n), {1, 2}, partition_of(32));
  sweep<float>(tridiag_algorithm::thomas_pcr, {14001, 40000}, {1, 3}, regs);
  sweep<double>(tridiag_algorithm::thomas_pcr, {7001}, {1, 3}, regs);
}

BOOST_AUTO_TEST_CASE(partitioned_breakdown) {
  for (layout lay : {layout::contiguous(1000, 5), layout::interleaved(1000, 5)}) {
    std::mt19937_64 g(5);
    system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
    s.b[lay.offset(0, 1)] = 0;
    s.a[lay.offset(500, 3)] = 0;
    s.b[lay.offset(500, 3)] = 0;
    auto const [x, info] = solve_gpu<double>(
        s, run_args{tridiag_algorithm::thomas_pcr, lay, 1, false, plan_of<double>(partition_of(32))});
    BOOST_TEST(info[1] == 1);
    BOOST_TEST(info[3] > 0);
    for (int k : {0, 2, 4}) BOOST_TEST(info[k] == 0);
    BOOST_TEST(std::isnan(x[lay.offset(999, 1)]));
    BOOST_TEST(std::isnan(x[lay.offset(0, 3)]));
    BOOST_TEST(std::isfinite(x[lay.offset(999, 4)]));
  }
}

BOOST_AUTO_TEST_CASE(long_systems) {
  // Longer than a tile's shared memory in f64: Thomas falls back to global memory.
  sweep<double>(tridiag_algorithm::thomas, {20000}, {3});
  sweep<float>(tridiag_algorithm::cr_pcr, {12000}, {2});
  sweep<float>(tridiag_algorithm::thomas_pcr, {12000}, {2});
}

// Breakdown: system 1 at row 1 (b_0 = 0, a divisor of every algorithm),
// system 3 at row 11; the others solved.
BOOST_AUTO_TEST_CASE(breakdown_info) {
  for (auto alg : {tridiag_algorithm::thomas, tridiag_algorithm::cr, tridiag_algorithm::pcr,
                   tridiag_algorithm::cr_pcr, tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_packed,
                   tridiag_algorithm::pscheme, tridiag_algorithm::cr_split}) {
    for (layout lay : {layout::contiguous(100, 5), layout::interleaved(100, 5)}) {
      std::mt19937_64 g(7);
      system_set s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
      s.b[lay.offset(0, 1)] = 0;
      // System 3: a_10 = b_10 = 0 makes row 10's Thomas pivot exactly zero,
      // and b_10 is a divisor of CR and PCR too.
      s.a[lay.offset(10, 3)] = 0;
      s.b[lay.offset(10, 3)] = 0;
      auto const [x, info] = solve_gpu<double>(s, run_args{alg, lay, 1});
      BOOST_TEST_CONTEXT(name(alg) << " strides " << lay.element_stride) {
        BOOST_TEST(info[1] == 1);
        for (std::int64_t i = 0; i < 100; ++i) BOOST_TEST(std::isnan(x[lay.offset(i, 1)]));
        for (int k : {0, 2, 4}) {
          BOOST_TEST(info[k] == 0);
          BOOST_TEST(std::isfinite(x[lay.offset(50, k)]));
        }
        if (alg == tridiag_algorithm::thomas || alg == tridiag_algorithm::pscheme) BOOST_TEST(info[3] == 11);
        BOOST_TEST(info[3] > 0);
        BOOST_TEST(std::isnan(x[lay.offset(99, 3)]));
      }
    }
  }
}

// Bitwise the same result from run to run.
BOOST_AUTO_TEST_CASE(reproducible) {
  layout const lay = layout::contiguous(1000, 40);
  std::mt19937_64 g(3);
  system_set const s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
  for (auto alg : {tridiag_algorithm::thomas, tridiag_algorithm::cr, tridiag_algorithm::pcr,
                   tridiag_algorithm::cr_pcr, tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_packed,
                   tridiag_algorithm::pscheme, tridiag_algorithm::cr_split}) {
    auto const first = solve_gpu<float>(s, run_args{alg, lay, 1}).first;
    for (int rep = 0; rep < 3; ++rep) BOOST_TEST((solve_gpu<float>(s, run_args{alg, lay, 1}).first == first));
  }
}

// Agreement with the references' solutions (not only a small residual).
BOOST_AUTO_TEST_CASE(matches_reference) {
  layout const lay = layout::interleaved(513, 7);
  std::mt19937_64 g(11);
  system_set const s = random_dominant(std::size_t(span_of(lay)), std::size_t(span_of(lay) + 3), g);
  std::vector<double> xr(s.d.size());
  std::vector<std::int32_t> ir(7);
  recur::reference::thomas(s.a.data(), s.b.data(), s.c.data(), s.d.data(), xr.data(), lay, 1, 0, ir.data());
  for (auto alg : {tridiag_algorithm::thomas, tridiag_algorithm::cr, tridiag_algorithm::pcr,
                   tridiag_algorithm::cr_pcr, tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_packed,
                   tridiag_algorithm::pscheme, tridiag_algorithm::cr_split}) {
    auto const x = solve_gpu<double>(s, run_args{alg, lay, 1}).first;
    double worst = 0, scale = 0;
    for (std::int64_t k = 0; k < 7; ++k)
      for (std::int64_t i = 0; i < 513; ++i) {
        worst = std::max(worst, std::abs(x[lay.offset(i, k)] - xr[lay.offset(i, k)]));
        scale = std::max(scale, std::abs(xr[lay.offset(i, k)]));
      }
    BOOST_TEST(worst <= 1e-12 * scale, name(alg) << ": max |x - x_ref| = " << worst);
  }
}

BOOST_AUTO_TEST_SUITE_END()
