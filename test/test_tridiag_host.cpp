// recur::solve_batched through recur::host: the shared cases of
// tridiag_harness.hpp (every algorithm x layout x type, breakdown, argument
// errors, empty problems, reproducibility) with LAPACK's ?gtsv as the
// independent oracle, plus what only the host has: thread counts, the
// batched Thomas against its reference (info rows on matrices that break
// down anywhere), names of the algorithms, and the CUDA entry points of a
// CPU-only build.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/reference/tridiag.hpp>
#include <recur/tridiag.hpp>

#include "common/host_memory.hpp"
#include "common/tridiag_harness.hpp"
#include "common/tridiag_host_backend.hpp"

using recur::layout;
using recur::tridiag_algorithm;
using namespace tridiag_test;

BOOST_AUTO_TEST_SUITE(tridiag_host)

// Every algorithm: sweep_<alg>, breakdown_<alg>, deterministic_<alg> (tridiag_harness.hpp).
RECUR_TRIDIAG_ALL_CASES(host_backend)

BOOST_AUTO_TEST_CASE(bad_arguments_f32) { bad_arguments<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(bad_arguments_f64) { bad_arguments<host_backend, double>(); }

BOOST_AUTO_TEST_CASE(bad_thread_count) {
  arena<host_backend, float> m;
  expect_invalid(
      [&] {
        recur::solve_batched(recur::host{-1}, m.a(), m.b(), m.c(), m.d(), m.x(), layout::contiguous(4));
      },
      [&] { return m.snapshot(); }, {"host.threads = -1"});
}

BOOST_AUTO_TEST_CASE(empty_problems_f32) { empty_problems<host_backend, float>(); }
BOOST_AUTO_TEST_CASE(empty_problems_f64) { empty_problems<host_backend, double>(); }

// Systems go to threads whole, so the thread count changes nothing.
BOOST_AUTO_TEST_CASE(thread_counts_give_the_same_bits) {
  int idx = 0;
  for (tridiag_algorithm const alg : all_algorithms)
    for (layout const& lay : {layout::contiguous(127, 37), layout::interleaved(513, 37)}) {
      matrix_kind const mk = rd_like(alg) ? matrix_kind::close_values : matrix_kind::dominant;
      auto const p = make_problem<double>(lay, 2, 0, mk, seed_for(480, idx++));
      auto const ref = run<host_backend>(p, alg, false, recur::host{1});
      for (int const threads : {0, 2, 3, 7}) {
        auto const out = run<host_backend>(p, alg, false, recur::host{threads});
        BOOST_TEST((same_bytes(out.x, ref.x) && out.info == ref.info),
                   recur::to_string(alg)
                       << " host{" << threads << "} differs from host{1}: " << p.describe());
      }
    }
}

// The batched Thomas (lib/cpu/tridiag_cpu.cpp, its own code) against
// reference::thomas on matrices that break down at random rows: a row with
// a_i = b_i = 0 has the pivot 0 exactly. info must agree row for row, broken
// systems are NaN, and the solved ones agree to rounding.
template <class T>
void thomas_against_reference() {
  int idx = 0;
  for (layout_kind const kind : basic_layout_kinds)
    for (std::int64_t const n : {1, 2, 7, 64, 300})
      for (std::int64_t const nrhs : {1, 3}) {
        layout const lay = make_layout(kind, n, 41);
        auto p = make_problem<T>(lay, nrhs, nrhs == 3 ? -(extent(lay) + 1) : 0, matrix_kind::dominant,
                                 seed_for(490, idx++, sizeof(T)));
        rng r(p.seed ^ 0x5eed);
        for (std::int64_t k = 0; k < lay.count; ++k)
          for (std::int64_t i = 0; i < n; ++i)
            if (r.uniform() < 2.0 / static_cast<double>(n + 5)) {
              p.b[p.mi(i, k)] = 0;
              if (i > 0) p.a[p.mi(i, k)] = 0;
            }
        for (bool const in_place : {false, true}) {
          auto const out = run<host_backend>(p, tridiag_algorithm::thomas, in_place);
          std::vector<T> want = p.d;
          std::vector<std::int32_t> want_info(static_cast<std::size_t>(lay.count), -1);
          recur::reference::thomas(p.a.data() + problem<T>::guard, p.b.data() + problem<T>::guard,
                                   p.c.data() + problem<T>::guard, want.data() + p.d_base,
                                   want.data() + p.d_base, lay, nrhs, p.rhs_stride, want_info.data());
          int broke = 0;
          for (std::int64_t k = 0; k < lay.count; ++k) {
            std::int32_t const got = out.info[static_cast<std::size_t>(problem<T>::guard + k)];
            BOOST_TEST(got == want_info[k], "system " << k << ": " << p.describe());
            broke += want_info[k] != 0;
            for (std::int64_t rr = 0; rr < nrhs; ++rr)
              for (std::int64_t i = 0; i < n; ++i) {
                T const g = out.x[p.vi(i, k, rr)], w = want[p.vi(i, k, rr)];
                bool const ok =
                    want_info[k]
                        ? std::isnan(g) && !is_poison(g)
                        : std::fabs(g - w) <= 64 * n * std::numeric_limits<T>::epsilon() * (std::fabs(w) + 1);
                if (!ok) {
                  BOOST_TEST(ok, "system " << k << " rhs " << rr << " row " << i << ": " << g << " vs " << w
                                           << " " << p.describe());
                  break;
                }
              }
          }
          if (n >= 64) BOOST_TEST(broke > 0, "no breakdown drawn: " << p.describe());
        }
      }
}
BOOST_AUTO_TEST_CASE(thomas_against_reference_f32) { thomas_against_reference<float>(); }
BOOST_AUTO_TEST_CASE(thomas_against_reference_f64) { thomas_against_reference<double>(); }

// Split storage is a GPU memory layout: on the CPU cr_split runs CR's
// arithmetic, the same bits as cr.
BOOST_AUTO_TEST_CASE(cr_split_is_cr) {
  int idx = 0;
  for (layout_kind const kind : basic_layout_kinds)
    for (std::int64_t const n : {1, 2, 33, 513}) {
      auto const p =
          make_problem<double>(make_layout(kind, n, 5), 2, 0, matrix_kind::dominant, seed_for(485, idx++));
      auto const cr = run<host_backend>(p, tridiag_algorithm::cr, false);
      auto const split = run<host_backend>(p, tridiag_algorithm::cr_split, false);
      BOOST_TEST((same_bytes(split.x, cr.x) && split.info == cr.info), p.describe());
    }
}

BOOST_AUTO_TEST_CASE(algorithm_names) {
  BOOST_TEST(std::string(recur::to_string(tridiag_algorithm::automatic)) == "auto");
  BOOST_TEST(std::string(recur::to_string(tridiag_algorithm::cr_packed)) == "cr_packed");
  BOOST_TEST(std::string(recur::to_string(tridiag_algorithm::cr_split)) == "cr_split");
  for (tridiag_algorithm const alg : all_algorithms) {
    auto const back = recur::parse_tridiag_algorithm(recur::to_string(alg));
    BOOST_TEST((back && *back == alg), recur::to_string(alg));
  }
  BOOST_TEST((recur::parse_tridiag_algorithm("automatic") == tridiag_algorithm::automatic));  // an alias
  BOOST_TEST(std::string(recur::to_string(recur::tridiag_pivoting::automatic)) == "auto");
  BOOST_TEST((recur::parse_tridiag_pivoting("auto") == recur::tridiag_pivoting::automatic));
  BOOST_TEST((recur::parse_tridiag_pivoting("automatic") == recur::tridiag_pivoting::automatic));
  BOOST_TEST(!recur::parse_tridiag_pivoting("Auto"));
  BOOST_TEST(!recur::parse_tridiag_algorithm("Thomas"));
  BOOST_TEST(!recur::parse_tridiag_algorithm(""));
}

BOOST_AUTO_TEST_CASE(host_resolution) {
  layout const lay = layout::interleaved(512, 512);
  for (tridiag_algorithm const alg : all_algorithms) {
    tridiag_algorithm const got = recur::resolve_tridiag_algorithm<float>(recur::host{}, lay, alg);
    BOOST_TEST((got == (alg == tridiag_algorithm::automatic ? tridiag_algorithm::thomas : alg)),
               recur::to_string(alg));
  }
  expect_invalid(
      [&] {
        (void)recur::resolve_tridiag_algorithm<float>(recur::host{}, lay, static_cast<tridiag_algorithm>(-1));
      },
      [] { return std::vector<int>{}; }, {"algorithm = -1"}, "recur::resolve_tridiag_algorithm: ");
  expect_invalid(
      [&] {
        (void)recur::resolve_tridiag_algorithm<double>(recur::host{}, layout{-3, 1, 1, 0});
      },
      [] { return std::vector<int>{}; }, {"layout.n = -3"}, "recur::resolve_tridiag_algorithm: ");
}

#if RECUR_HAS_CUDA == 0
// A CPU-only build: every recur::cuda entry point throws not_compiled,
// whatever the shape, and writes nothing.
BOOST_AUTO_TEST_CASE(cuda_entry_points_not_compiled) {
  std::vector<float> a(8, 1), b(8, 4), c(8, 1), d(8, 1), x(8, poison<float>());
  std::vector<std::int32_t> info(2, info_poison);
  recur::tridiag_options opt;
  opt.info = info.data();
  recur::cuda const ex{};
  BOOST_CHECK_THROW(recur::solve_batched(ex, a.data(), b.data(), c.data(), d.data(), x.data(),
                                         layout::contiguous(4, 2), opt),
                    recur::not_compiled);
  BOOST_CHECK_THROW(recur::solve_batched(ex, a.data(), b.data(), c.data(), d.data(), x.data(),
                                         layout::contiguous(0, 2), opt),
                    recur::not_compiled);
  std::vector<double> ad(8, 1), xd(8);
  BOOST_CHECK_THROW(
      recur::solve_batched(ex, ad.data(), ad.data(), ad.data(), ad.data(), xd.data(), layout::contiguous(8)),
      recur::not_compiled);
  BOOST_CHECK_THROW((void)recur::resolve_tridiag_algorithm<float>(ex, layout::contiguous(4, 2)),
                    recur::not_compiled);
  BOOST_CHECK_THROW(recur::tridiag_plan<float>(layout::contiguous(4, 2)), recur::not_compiled);
  BOOST_CHECK_THROW(recur::tridiag_plan<double>(layout::contiguous(0, 2)), recur::not_compiled);
  for (float const v : x) BOOST_TEST(is_poison(v));
  for (std::int32_t const v : info) BOOST_TEST(v == info_poison);
}
#endif

BOOST_AUTO_TEST_SUITE_END()
