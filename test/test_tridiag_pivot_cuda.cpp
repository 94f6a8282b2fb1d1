// recur::solve_batched's pivoting, periodic and refinement options through
// recur::cuda: the shared cases of tridiag_pivot_harness.hpp on device
// memory, with the references in long double as the oracle (this executable
// does not link LAPACK; test_cpu's tridiag_pivot_thread runs the GPU form's
// per-thread solver against LAPACK), plus tridiag_plan with the options.
//
// What the GPU runs (kernels/dispatch/tridiag_resolve.cuh's plan_tridiag):
// every option. The pivoted form (one thread per system) solves partial
// pivoting on long batches, refinement and periodic systems with partial
// pivoting; periodic systems otherwise go through the Sherman-Morrison
// split around the algorithm's no-pivot form, or the direct form's one pass
// (periodic_split_*). automatic runs the algorithm's no-pivot form, which
// flags the systems that are not diagonally dominant or break down as it
// solves them and leaves them unwritten, then the pivoted form on the
// flagged ones (automatic_beside_fast_forms), in place or not, with or
// without pivoted, on every form; rd and cr_rd with several right-hand
// sides, which cannot screen as they solve, run the screen in a second
// pass, and in place the pivoted form alone.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/tridiag.hpp>

#include "common/cuda_memory.hpp"
#include "common/cuda_solver_memory.hpp"
#include "common/tridiag_pivot_harness.hpp"

using namespace pivot_test;

namespace {

struct cuda_backend : recur_test::cuda_solver_memory {
  static char const* name() { return "cuda"; }
  template <class T>
  static oracle_solution oracle(system_values<T> const& s, std::vector<T> const& d) {
    return long_double_solution(s, d);
  }
  static constexpr bool automatic_tests_growth = true;
  static constexpr bool unscreened_in_place_is_thomas = true;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_pivot_cuda)

BOOST_AUTO_TEST_CASE(partial_f32) { pivot_sweep<cuda_backend, float>(tridiag_pivoting::partial, false); }
BOOST_AUTO_TEST_CASE(partial_f64) { pivot_sweep<cuda_backend, double>(tridiag_pivoting::partial, false); }
BOOST_AUTO_TEST_CASE(automatic_with_pivoted_f32) {
  pivot_sweep<cuda_backend, float>(tridiag_pivoting::automatic, false);
}
BOOST_AUTO_TEST_CASE(automatic_with_pivoted_f64) {
  pivot_sweep<cuda_backend, double>(tridiag_pivoting::automatic, false);
}
BOOST_AUTO_TEST_CASE(periodic_f32) { pivot_sweep<cuda_backend, float>(tridiag_pivoting::automatic, true); }
BOOST_AUTO_TEST_CASE(periodic_f64) { pivot_sweep<cuda_backend, double>(tridiag_pivoting::partial, true); }
BOOST_AUTO_TEST_CASE(periodic_partial_f32) {
  pivot_sweep<cuda_backend, float>(tridiag_pivoting::partial, true);
}
BOOST_AUTO_TEST_CASE(periodic_automatic_f64) {
  pivot_sweep<cuda_backend, double>(tridiag_pivoting::automatic, true);
}
BOOST_AUTO_TEST_CASE(periodic_none_dominant) {
  pivot_sweep<cuda_backend, float>(tridiag_pivoting::none, true, true);
  pivot_sweep<cuda_backend, double>(tridiag_pivoting::none, true, true);
}
// Periodic systems through the Sherman-Morrison split around the fast
// no-pivot forms (pivoting none, and automatic without pivoted or
// refinement_steps), and its breakdowns beside the pivoted form's.
BOOST_AUTO_TEST_CASE(periodic_split_f32) { periodic_split_sweep<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_split_f64) { periodic_split_sweep<cuda_backend, double>(); }
BOOST_AUTO_TEST_CASE(periodic_breakdown_f32) { periodic_breakdown<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_breakdown_f64) { periodic_breakdown<cuda_backend, double>(); }
BOOST_AUTO_TEST_CASE(periodic_zero_b0_f32) { periodic_zero_b0<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(periodic_zero_b0_f64) { periodic_zero_b0<cuda_backend, double>(); }
BOOST_AUTO_TEST_CASE(refinement) { refinement_sweep<cuda_backend>(); }
BOOST_AUTO_TEST_CASE(refinement_gives_up) { refinement_limits<cuda_backend>(); }

// automatic gives none's bits on dominant batches: without the outputs the
// algorithm's own solve, with them (algorithm auto or thomas) the pivoted
// form's Thomas, the arithmetic of the Thomas forms.
BOOST_AUTO_TEST_CASE(automatic_matches_none_every_algorithm) {
  for (recur::tridiag_algorithm const alg : tridiag_test::all_algorithms) {
    automatic_matches_none<cuda_backend, float>(alg);
    automatic_matches_none<cuda_backend, double>(alg);
  }
}
BOOST_AUTO_TEST_CASE(tiny_pivot_f32) { tiny_pivot<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(tiny_pivot_f64) { tiny_pivot<cuda_backend, double>(); }

// pivoting = automatic, the default: the algorithm's no-pivot form with its
// screen and the pivoted form on the systems it flags. A dominant batch with
// every fourth system (and the first) given a tiny first pivot, through
// every layout kind, with and without info and pivoted (the flags then live
// in the workspace), in place and not, and a batch large enough that the
// pivoted form's workspace holds fewer systems than the batch: the
// tiny-pivot systems pivoted (pivoted 1 where asked), info 0, accurate to
// 4 eps against the long-double oracle; the others none's bits and
// pivoted 0.
template <class T>
void automatic_beside_fast_forms() {
  constexpr std::int64_t g = problem<T>::guard;
  double const eps = std::numeric_limits<T>::epsilon();
  struct shape {
    std::int64_t n, count;
  };
  recur_test::case_count cases(fmt::format("cuda {} automatic beside the fast forms", type_name<T>));
  int idx = 0;
  for (layout_kind const kind : all_layout_kinds)
    for (shape const sh : {shape{100, 37}, shape{7, 300}, shape{2048, 2000}})
      for (int const mode : {0, 1, 2}) {  // outputs; in place
        bool const outputs = mode == 1, in_place = mode == 2;
        if (sh.n * sh.count > 1000000 && kind != layout_kind::interleaved) continue;
        layout const lay = make_layout(kind, sh.n, sh.count);
        std::uint64_t const seed = seed_for(640, static_cast<std::uint64_t>(idx++), sizeof(T));
        auto p = make_system_batch<T>(lay, 2, 0, matrix_class::dominant, false, seed);
        auto const tiny = make_system_batch<T>(lay, 2, 0, matrix_class::tiny_first, false, seed + 1);
        auto const mixed = [](std::int64_t k) { return k % 4 == 0; };
        for (std::int64_t k = 0; k < lay.count; ++k)
          if (mixed(k))
            for (std::int64_t i = 0; i < lay.n; ++i) {
              std::size_t const o = p.mi(i, k);
              p.a[o] = tiny.a[o], p.b[o] = tiny.b[o], p.c[o] = tiny.c[o];
            }
        tridiag_options none, automatic;
        none.pivoting = tridiag_pivoting::none;
        std::string const what =
            describe("cuda", automatic, type_name<T>, matrix_class::tiny_first, lay, 2, 0, in_place, seed);
        cases.run();
        auto const a = run_options<cuda_backend>(p, none, false, false);
        auto const b = run_options<cuda_backend>(p, automatic, in_place, outputs);
        BOOST_TEST_REQUIRE((!a.refused && !b.refused), what << ": " << a.what << b.what);
        BOOST_TEST(b.inputs_written.empty(), what << ": wrote " << b.inputs_written);
        failures f;
        for (std::int64_t k = 0; k < lay.count; ++k) {
          if (b.info[g + k] != 0) f.add([&] { return fmt::format("system {}: info {}", k, b.info[g + k]); });
          if (outputs && b.pivoted[g + k] != (mixed(k) ? 1 : 0))
            f.add([&] { return fmt::format("system {}: pivoted {}", k, b.pivoted[g + k]); });
          if (outputs && b.steps[g + k] != 0)
            f.add([&] { return fmt::format("system {}: refinement_steps {}", k, b.steps[g + k]); });
          for (std::int64_t r = 0; r < 2; ++r) {
            if (!mixed(k)) {
              bool same = true;
              for (std::int64_t i = 0; i < lay.n; ++i)
                same = same && recur_test::same_bits(a.x[p.vi(i, k, r)], b.x[p.vi(i, k, r)]);
              if (!same) f.add([&] { return fmt::format("system {} rhs {}: not none's bits", k, r); });
              continue;
            }
            if (k % 16 != 0 && sh.count > 100) continue;  // a sample of the large batches' oracles
            oracle_solution const o = cuda_backend::oracle(values(p, k, false), rhs_values(p, k, r));
            long double err = 0, xn = 0;
            for (std::int64_t i = 0; i < lay.n; ++i)
              err = std::max(err, std::fabs(static_cast<long double>(b.x[p.vi(i, k, r)]) - o.x[i])),
              xn = std::max(xn, std::fabs(o.x[i]));
            double const e = static_cast<double>(err / xn);
            if (!(e <= 4 * eps))
              f.add([&] { return fmt::format("system {} rhs {}: error {} against the oracle", k, r, e); });
          }
        }
        BOOST_TEST(f.count == 0, what << (outputs ? " with pivoted" : "") << "\n" << f.report());
      }
  cases.require(27);
}

BOOST_AUTO_TEST_CASE(automatic_beside_fast_forms_f32) { automatic_beside_fast_forms<float>(); }
BOOST_AUTO_TEST_CASE(automatic_beside_fast_forms_f64) { automatic_beside_fast_forms<double>(); }

// The same with pivoted but without info, and with neither (the default
// options, as a first call would be), out of place and in place, on
// contiguous and interleaved batches of tiny-pivot systems: they still come
// out right.
template <class T>
void automatic_without_info() {
  for (layout const lay :
       {layout::interleaved(64, 40), layout::contiguous(64, 40), layout::contiguous(1000, 9)})
    for (int const mode : {0, 1, 2}) {  // pivoted; neither; neither, in place
      auto p =
          make_system_batch<T>(lay, 1, 0, matrix_class::tiny_first, false, seed_for(641, mode, sizeof(T)));
      constexpr std::int64_t g = problem<T>::guard;
      cuda_backend::array<T> const da(p.a), db(p.b), dc(p.c), dd(p.d), dx(std::vector<T>(p.d.size(), T(0)));
      cuda_backend::array<std::int32_t> const piv(
          std::vector<std::int32_t>(static_cast<std::size_t>(lay.count), -1));
      tridiag_options opt;
      if (mode == 0) opt.pivoted = piv.data();
      T* const x_out = (mode == 2 ? dd.data() : dx.data()) + p.d_base;
      recur::solve_batched(cuda_backend::executor(), da.data() + g, db.data() + g, dc.data() + g,
                           dd.data() + p.d_base, x_out, lay, opt);
      cuda_backend::finish();
      auto const x = mode == 2 ? dd.read() : dx.read();
      double const eps = std::numeric_limits<T>::epsilon();
      for (std::int64_t k = 0; k < lay.count; ++k) {
        oracle_solution const o = cuda_backend::oracle(values(p, k, false), rhs_values(p, k, 0));
        long double err = 0, xn = 0;
        for (std::int64_t i = 0; i < lay.n; ++i)
          err = std::max(err, std::fabs(static_cast<long double>(x[p.vi(i, k, 0)]) - o.x[i])),
          xn = std::max(xn, std::fabs(o.x[i]));
        BOOST_TEST(static_cast<double>(err / xn) <= 4 * eps,
                   type_name<T> << " n " << lay.n << " mode " << mode << " system " << k);
      }
      if (mode == 0) {
        auto const flags = piv.read();
        BOOST_TEST(std::count(flags.begin(), flags.end(), 1) == lay.count);
      }
    }
}

BOOST_AUTO_TEST_CASE(automatic_without_info_both) {
  automatic_without_info<float>();
  automatic_without_info<double>();
}

BOOST_AUTO_TEST_CASE(option_errors_f32) { option_errors<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(option_errors_f64) { option_errors<cuda_backend, double>(); }
BOOST_AUTO_TEST_CASE(empty_outputs_f32) { empty_outputs<cuda_backend, float>(); }
BOOST_AUTO_TEST_CASE(empty_outputs_f64) { empty_outputs<cuda_backend, double>(); }

// tridiag_plan checks the options as solve_batched does, keeps them and
// runs them: the bits of solve_batched with the same options. Its
// algorithm: thomas for the pivoted form, the shape's resolved algorithm
// for periodic systems through the split (`split`). Its workspace: some
// for the pivoted form and the split, none for partial pivoting's tile
// (`tile`).
template <class T>
void plan_runs(tridiag_options opt, matrix_class cls, bool split = false, bool tile = false) {
  constexpr std::int64_t g = problem<T>::guard;
  layout const lay = layout::interleaved(50, 7);
  auto const p = make_system_batch<T>(lay, 1, 0, cls, opt.periodic, recur_test::seed_for(670, int(cls)));
  recur::tridiag_plan<T> const plan(lay, opt);
  tridiag_algorithm const want =
      split ? recur::resolve_tridiag_algorithm<T>(cuda_backend::executor(), lay) : tridiag_algorithm::thomas;
  BOOST_TEST((plan.algorithm() == want));
  BOOST_TEST((tile ? plan.workspace_size() == 0u : plan.workspace_size() > 0u));
  auto const ref = run_options<cuda_backend>(p, opt, false, false);
  recur_test::dbuf<T> const da = recur_test::upload(p.a), db = recur_test::upload(p.b),
                            dc = recur_test::upload(p.c), dd = recur_test::upload(p.d),
                            dx = recur_test::upload(std::vector<T>(p.d.size()));
  recur_test::dbuf<std::int32_t> const info = recur_test::upload(std::vector<std::int32_t>(lay.count, -5));
  recur_test::dbuf<unsigned char> const ws(plan.workspace_size());
  recur_test::settle();
  auto const s = cuda_backend::executor();
  plan.run(s, da.p + g, db.p + g, dc.p + g, dd.p + p.d_base, dx.p + p.d_base, ws.p, info.p);
  cuda_backend::finish();
  auto const x = dx.read();
  auto const in = info.read();
  for (std::int64_t k = 0; k < lay.count; ++k) {
    BOOST_TEST(in[k] == ref.info[g + k]);
    for (std::int64_t i = 0; i < lay.n; ++i)
      BOOST_TEST(recur_test::same_bits(x[p.vi(i, k, 0)], ref.x[p.vi(i, k, 0)]));
  }
}

BOOST_AUTO_TEST_CASE(plan_options) {
  layout const lay = layout::interleaved(64, 100);
  tridiag_options opt;
  opt.pivoting = tridiag_pivoting::none;
  opt.max_refinement_steps = 3;
  recur::tridiag_plan<float> const plan(lay, opt);
  BOOST_TEST((plan.options().pivoting == tridiag_pivoting::none));
  BOOST_TEST(plan.options().max_refinement_steps == 3);
  BOOST_TEST((plan.options().algorithm == plan.algorithm()));
  auto const refused = [&](tridiag_options const& o, char const* needle) {
    std::string what;
    try {
      recur::tridiag_plan<double> const p(lay, o);
    } catch (recur::invalid_argument const& e) {
      what = e.what();
    }
    BOOST_TEST(what.rfind("recur::tridiag_plan: ", 0) == 0, "\"" << what << "\"");
    BOOST_TEST(what.find(needle) != std::string::npos, "\"" << what << "\" lacks \"" << needle << "\"");
  };
  tridiag_options o;
  o.pivoting = static_cast<tridiag_pivoting>(7);
  refused(o, "pivoting = 7 is not a tridiag_pivoting");
  o = {};
  o.pivoting = tridiag_pivoting::partial;
  o.algorithm = tridiag_algorithm::pcr;
  refused(o, "pivoting = partial needs algorithm = auto or thomas");
  std::int32_t probe = 0;
  o = {};
  o.pivoted = &probe;
  refused(o, "pivoted is not implemented on the GPU yet for tridiag_plan");
  o = {};
  o.refinement_steps = &probe;
  refused(o, "refinement_steps is not implemented on the GPU yet for tridiag_plan");
  o = {};
  o.pivoting = tridiag_pivoting::partial;
  plan_runs<float>(o, matrix_class::tiny_first, false, true);
  plan_runs<double>(o, matrix_class::random, false, true);
  o = {};
  o.periodic = true;
  plan_runs<float>(o, matrix_class::dominant, true);
  o.pivoting = tridiag_pivoting::partial;
  plan_runs<float>(o, matrix_class::random);
  o.pivoting = tridiag_pivoting::automatic;
  o.refinement = tridiag_refinement::mixed;
  plan_runs<double>(o, matrix_class::dominant);
}

BOOST_AUTO_TEST_SUITE_END()
