// recur::dist::solve_batched under MPI (part of test_dist, run with 1 to 4
// ranks): every rank builds the same global systems from a fixed seed,
// takes its block of rows (splits even, uneven, with empty ranks, and ranks
// of one or two rows), solves, and compares with the sequential reference
// (reference::solve_batched, partial pivoting) over the whole systems. info
// and pivoted must be the same on every rank, info the reference's, and
// every system's backward error within 64 eps (x itself too on the well
// conditioned matrices). Random matrices (not diagonally dominant) exercise
// the fallback that gathers a system onto rank 0; a block whose interior is
// singular is solved that way under automatic and reported under none.
// Errors: the same exception on every rank, x not written. The cuda suite runs the same cases on device
// memory.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <recur/dist.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include <recur/tridiag.hpp>

#include "common/dist_split.hpp"
#include "common/either_memory.hpp"

namespace {

using recur::layout;
using recur::tridiag_options;
using recur::tridiag_pivoting;
using recur_test::dist_host;
using recur_test::expect_same_error;
using recur_test::lengths;
using recur_test::name;
using recur_test::split;
using recur_test::world;

enum class matrix { dominant, poisson, random };

struct tri_case {
  std::int64_t n;  // rows of each system over all ranks
  std::int64_t count;
  split how;
  bool interleaved;
  matrix kind;
  std::int64_t nrhs = 1;
  bool periodic = false;
  bool in_place = false;
  tridiag_pivoting pivoting = tridiag_pivoting::automatic;
};

// x against the reference (dominant and Poisson matrices; random ones are
// checked by their backward error alone).
template <class T>
double tolerance(matrix kind) {
  bool const f64 = std::is_same_v<T, double>;
  if (kind == matrix::dominant) return f64 ? 1e-12 : 2e-5;
  return f64 ? 1e-9 : 2e-2;  // Poisson with b = 2.01: kappa about 400
}

template <class M, class T>
void check_tridiag(tri_case const& c, M& mem) {
  world const me;
  std::mt19937 gen(static_cast<unsigned>(c.n * 31 + c.count * 7 + int(c.kind) * 5 + c.nrhs));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  layout const global = layout::contiguous(c.n, c.count);
  std::size_t const size = static_cast<std::size_t>(c.n * c.count);
  std::vector<T> a(size), b(size), cc(size), d(size * c.nrhs);
  for (std::size_t i = 0; i < size; ++i) {
    if (c.kind == matrix::dominant) {
      a[i] = T(u(gen)), cc[i] = T(u(gen));
      b[i] = T((u(gen) > 0 ? 1 : -1) * (2.5 + u(gen)));
    } else if (c.kind == matrix::poisson) {
      a[i] = T(-1), cc[i] = T(-1), b[i] = T(2.01);
    } else {
      a[i] = T(u(gen)), b[i] = T(u(gen)), cc[i] = T(u(gen));
    }
  }
  for (auto& v : d) v = T(u(gen));
  tridiag_options ropt;
  ropt.nrhs = c.nrhs;
  ropt.periodic = c.periodic;
  ropt.pivoting = tridiag_pivoting::partial;
  std::vector<T> ref(d.size());
  std::vector<std::int32_t> ref_info(c.count);
  ropt.info = ref_info.data();
  recur::reference::solve_batched<T>(a.data(), b.data(), cc.data(), d.data(), ref.data(), global, ropt);

  auto const len = lengths(c.how, c.n, me.size);
  std::int64_t first = 0;
  for (int r = 0; r < me.rank; ++r) first += len[r];
  std::int64_t const n = len[me.rank];
  layout const lay = c.interleaved ? layout::interleaved(n, c.count) : layout::contiguous(n, c.count);
  std::size_t const lsize = static_cast<std::size_t>(n * c.count);
  std::vector<T> la(lsize), lb(lsize), lc(lsize), ld(lsize * c.nrhs);
  for (std::int64_t k = 0; k < c.count; ++k)
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t const o = lay.offset(i, k), g = global.offset(first + i, k);
      la[o] = a[g], lb[o] = b[g], lc[o] = cc[g];
      for (std::int64_t r = 0; r < c.nrhs; ++r)
        ld[o + r * std::int64_t(lsize)] = d[g + r * std::int64_t(size)];
    }
  auto da = mem.upload(la), db = mem.upload(lb), dc = mem.upload(lc), dd = mem.upload(ld);
  auto dx = c.in_place ? dd : mem.upload(std::vector<T>(ld.size(), T(-7)));
  auto dinfo = mem.upload(std::vector<std::int32_t>(c.count, -5));
  auto dpiv = mem.upload(std::vector<std::int32_t>(c.count, -5));
  tridiag_options opt;
  opt.nrhs = c.nrhs;
  opt.periodic = c.periodic;
  opt.pivoting = c.pivoting;
  opt.info = mem.ptr(dinfo);
  opt.pivoted = mem.ptr(dpiv);
  recur::dist::solve_batched<T>(recur::dist::communicator{MPI_COMM_WORLD}, mem.executor(), mem.cptr(da),
                                mem.cptr(db), mem.cptr(dc), mem.cptr(dd), mem.ptr(dx), lay, opt);
  auto const x = mem.download(dx, static_cast<std::int64_t>(ld.size()));
  auto const info = mem.download(dinfo, c.count);
  auto const piv = mem.download(dpiv, c.count);

  // The whole x on every rank (each rank adds its rows to zeros), for the
  // residual.
  std::vector<double> whole(d.size(), 0.0);
  for (std::int64_t k = 0; k < c.count; ++k)
    for (std::int64_t r = 0; r < c.nrhs; ++r)
      for (std::int64_t i = 0; i < n; ++i)
        whole[global.offset(first + i, k) + r * std::int64_t(size)] =
            x[lay.offset(i, k) + r * std::int64_t(lsize)];
  MPI_Allreduce(MPI_IN_PLACE, whole.data(), static_cast<int>(whole.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);

  std::string bad;
  for (std::int64_t k = 0; k < c.count && bad.empty(); ++k) {
    // info and pivoted agree over the ranks.
    std::int32_t lo[2] = {info[k], piv[k]}, hi[2] = {info[k], piv[k]};
    MPI_Allreduce(MPI_IN_PLACE, lo, 2, MPI_INT32_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi, 2, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD);
    if (lo[0] != hi[0] || lo[1] != hi[1]) {
      bad = "info or pivoted of system " + std::to_string(k) + " differ across ranks";
      break;
    }
    if (info[k] != ref_info[k]) {
      bad = "system " + std::to_string(k) + ": info " + std::to_string(info[k]) + ", the reference's " +
            std::to_string(ref_info[k]);
      break;
    }
    if (c.pivoting == tridiag_pivoting::none && piv[k] != 0) {
      bad = "system " + std::to_string(k) + " pivoted under pivoting = none";
      break;
    }
    // Backward error, normwise: ||d - A x|| / (||A|| ||x|| + ||d||).
    for (std::int64_t r = 0; r < c.nrhs && bad.empty(); ++r) {
      double res = 0, norm_a = 0, norm_x = 0, norm_d = 0;
      auto xg = [&](std::int64_t i) { return whole[global.offset(i, k) + r * std::int64_t(size)]; };
      for (std::int64_t i = 0; i < c.n; ++i) {
        std::int64_t const g = global.offset(i, k);
        bool const lo_corner = i == 0, hi_corner = i + 1 == c.n;
        double const ai = lo_corner && !c.periodic ? 0.0 : double(a[g]);
        double const ci = hi_corner && !c.periodic ? 0.0 : double(cc[g]);
        double const xl = c.n == 1 ? 0.0 : xg(lo_corner ? c.n - 1 : i - 1);
        double const xr = c.n == 1 ? 0.0 : xg(hi_corner ? 0 : i + 1);
        double const di = d[g + r * std::int64_t(size)];
        res = std::max(res, std::abs(di - ai * xl - double(b[g]) * xg(i) - ci * xr));
        norm_a = std::max(norm_a, std::abs(ai) + std::abs(double(b[g])) + std::abs(ci));
        norm_x = std::max(norm_x, std::abs(xg(i)));
        norm_d = std::max(norm_d, std::abs(di));
      }
      double const eps = std::is_same_v<T, double> ? 0x1p-52 : 0x1p-23;
      double const backward = res / (norm_a * norm_x + norm_d);
      if (!(backward <= 64 * eps)) {
        bad = "system " + std::to_string(k) + " rhs " + std::to_string(r) + ": backward error " +
              std::to_string(backward / eps) + " eps";
        break;
      }
    }
    // Dominant systems are well conditioned: x itself against the reference.
    double const tol = tolerance<T>(c.kind);
    for (std::int64_t r = 0; r < c.nrhs && bad.empty() && c.kind != matrix::random; ++r)
      for (std::int64_t i = 0; i < n; ++i) {
        double const got = x[lay.offset(i, k) + r * std::int64_t(lsize)];
        double const want = ref[global.offset(first + i, k) + r * std::int64_t(size)];
        if (!(std::abs(got - want) <= tol * (1 + std::abs(want)))) {
          bad = "x[" + std::to_string(first + i) + "] of system " + std::to_string(k) + " rhs " +
                std::to_string(r) + ": " + std::to_string(got) + " against " + std::to_string(want);
          break;
        }
      }
  }
  BOOST_TEST(bad.empty(), "rank " << me.rank << "/" << me.size << " n=" << c.n << " count=" << c.count << " "
                                  << name(c.how) << (c.interleaved ? " interleaved" : " contiguous")
                                  << " kind " << int(c.kind) << " nrhs " << c.nrhs
                                  << (c.periodic ? " periodic" : "") << (c.in_place ? " in place" : "")
                                  << " pivoting " << int(c.pivoting) << ": " << bad);
}

template <class M, class T>
void sweep() {
  M mem;
  for (split how : {split::even, split::uneven, split::empty_ranks}) {
    for (auto [n, count, inter] : {std::tuple{std::int64_t(1), std::int64_t(1), false},
                                   {2, 3, false},
                                   {5, 3, true},
                                   {9, 2, false},
                                   {1000, 1, false},
                                   {2000, 17, true},
                                   {70001, 1, false}})
      for (matrix kind : {matrix::dominant, matrix::poisson})
        check_tridiag<M, T>({n, count, how, inter, kind}, mem);
    check_tridiag<M, T>({300, 5, how, false, matrix::dominant, 3}, mem);              // nrhs
    check_tridiag<M, T>({300, 5, how, true, matrix::dominant, 2, false, true}, mem);  // in place
    check_tridiag<M, T>({7, 2, how, false, matrix::dominant, 1, true}, mem);          // periodic
    check_tridiag<M, T>({1000, 3, how, true, matrix::poisson, 2, true}, mem);         // periodic
    check_tridiag<M, T>({500, 4, how, false, matrix::dominant, 1, false, false, tridiag_pivoting::none}, mem);
    check_tridiag<M, T>({500, 4, how, false, matrix::dominant, 1, false, false, tridiag_pivoting::partial},
                        mem);
    check_tridiag<M, T>({64, 40, how, false, matrix::random}, mem);  // many gathered onto rank 0
    check_tridiag<M, T>({200, 9, how, true, matrix::random, 2, false, false, tridiag_pivoting::partial}, mem);
    check_tridiag<M, T>({30, 9, how, false, matrix::random, 1, true}, mem);
  }
}

// A block whose interior is one row with a zero diagonal (rows 0..2 on
// rank 0, the middle one's b zero; every other row dominant): the split
// cannot eliminate it. Under automatic the system is gathered and solved
// as one device solves it (x and pivoted the reference's); under none it is
// reported at that row (info 2, x NaN), on every rank.
template <class M>
void singular_interior() {
  world const me;
  M mem;
  std::int64_t const n_rank = 3, n = n_rank * me.size;
  std::vector<double> a(n_rank, 1.0), b(n_rank, 4.0), c(n_rank, 1.0), d(n_rank, 1.0);
  if (me.rank == 0) b[1] = 0.0;  // A_II = [0] on rank 0
  std::vector<double> ga(n, 1.0), gb(n, 4.0), gc(n, 1.0), gd(n, 1.0), ref(n);
  gb[1] = 0.0;
  std::int32_t ref_pivoted = -1;
  tridiag_options ropt;  // automatic, as one device solves it
  ropt.pivoted = &ref_pivoted;
  recur::reference::solve_batched<double>(ga.data(), gb.data(), gc.data(), gd.data(), ref.data(),
                                          layout::contiguous(n, 1), ropt);
  for (auto pivoting : {tridiag_pivoting::automatic, tridiag_pivoting::none}) {
    auto da = mem.upload(a), db = mem.upload(b), dc = mem.upload(c), dd = mem.upload(d),
         dx = mem.upload(std::vector<double>(n_rank, -7.0));
    auto dinfo = mem.upload(std::vector<std::int32_t>(1, -5)),
         dpiv = mem.upload(std::vector<std::int32_t>(1, -5));
    tridiag_options opt;
    opt.info = mem.ptr(dinfo);
    opt.pivoted = mem.ptr(dpiv);
    opt.pivoting = pivoting;
    recur::dist::solve_batched<double>(recur::dist::communicator{MPI_COMM_WORLD}, mem.executor(),
                                       mem.cptr(da), mem.cptr(db), mem.cptr(dc), mem.cptr(dd), mem.ptr(dx),
                                       n_rank, opt);
    auto const x = mem.download(dx, n_rank);
    auto const info = mem.download(dinfo, 1);
    auto const piv = mem.download(dpiv, 1);
    if (pivoting == tridiag_pivoting::none) {
      BOOST_TEST(info[0] == 2, "rank " << me.rank << ": info " << info[0]);
      BOOST_TEST(std::all_of(x.begin(), x.end(), [](double v) { return std::isnan(v); }), "rank " << me.rank);
    } else {
      BOOST_TEST(info[0] == 0, "rank " << me.rank << ": info " << info[0]);
      BOOST_TEST(piv[0] == ref_pivoted, "rank " << me.rank << ": pivoted " << piv[0]);
      for (std::int64_t i = 0; i < n_rank; ++i)
        BOOST_TEST(
            std::abs(x[i] - ref[n_rank * me.rank + i]) <= 1e-14 * (1 + std::abs(ref[n_rank * me.rank + i])),
            "rank " << me.rank << " x[" << i << "] " << x[i] << " against " << ref[n_rank * me.rank + i]);
    }
  }
}

template <class M>
void errors() {
  world const me;
  M mem;
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  std::int64_t const n = 20;
  auto one = mem.upload(std::vector<float>(n * 2, 1.0f)), four = mem.upload(std::vector<float>(n * 2, 4.0f));
  auto dx = mem.upload(std::vector<float>(n * 2, -7.0f));
  auto untouched = [&] {
    auto const x = mem.download(dx, n * 2);
    BOOST_TEST(std::all_of(x.begin(), x.end(), [](float v) { return v == -7.0f; }),
               "rank " << me.rank << ": x was written by a call that threw");
  };
  auto call = [&](layout const& lay, tridiag_options const& opt, float* x) {
    recur::dist::solve_batched<float>(comm, mem.executor(), mem.cptr(one), mem.cptr(four), mem.cptr(one),
                                      mem.cptr(one), x, lay, opt);
  };
  expect_same_error<recur::invalid_argument>(
      [&] { call(layout::contiguous(n, 2), {}, me.rank == me.size - 1 ? nullptr : mem.ptr(dx)); },
      "rank " + std::to_string(me.size - 1) + " of " + std::to_string(me.size) +
          ": recur::dist::solve_batched: x");
  untouched();
  if (me.size > 1) {
    expect_same_error<recur::invalid_argument>(
        [&] { call(layout::contiguous(n, me.rank == 1 ? 1 : 2), {}, mem.ptr(dx)); },
        "disagree on the number of systems");
    untouched();
    expect_same_error<recur::invalid_argument>(
        [&] {
          tridiag_options opt;
          opt.periodic = me.rank == 0;
          call(layout::contiguous(n, 2), opt, mem.ptr(dx));
        },
        "disagree on opt.periodic");
    untouched();
  }
  expect_same_error<recur::invalid_argument>(
      [&] {
        tridiag_options opt;
        opt.periodic = true;
        call(layout::contiguous(me.rank == 0 ? 2 : 0, 2), opt, mem.ptr(dx));
      },
      "opt.periodic needs n >= 3");
  untouched();
  if constexpr (std::is_same_v<M, dist_host>) {
    auto d1 = mem.upload(std::vector<double>(n, 1.0)), d4 = mem.upload(std::vector<double>(n, 4.0));
    auto dy = mem.upload(std::vector<double>(n, -7.0));
    expect_same_error<recur::invalid_argument>(
        [&] {
          tridiag_options opt;
          opt.refinement = recur::tridiag_refinement::mixed;
          recur::dist::solve_batched<double>(comm, mem.executor(), mem.cptr(d1), mem.cptr(d4), mem.cptr(d1),
                                             mem.cptr(d1), mem.ptr(dy), n, opt);
        },
        "refinement = mixed is not available");
  }
}

// The same call twice gives the same bits; empty batches write nothing.
template <class M>
void reproducible_and_empty_case() {
  world const me;
  M mem;
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  std::int64_t const n = 50000 + 17 * me.rank;
  std::vector<double> a(n), b(n), c(n), d(n);
  for (std::int64_t i = 0; i < n; ++i)
    a[i] = std::sin(0.01 * (i + me.rank)), c[i] = std::cos(0.003 * i), b[i] = 3.0, d[i] = std::sin(0.02 * i);
  auto da = mem.upload(a), db = mem.upload(b), dc = mem.upload(c), dd = mem.upload(d),
       x1 = mem.upload(std::vector<double>(n)), x2 = mem.upload(std::vector<double>(n));
  recur::dist::solve_batched<double>(comm, mem.executor(), mem.cptr(da), mem.cptr(db), mem.cptr(dc),
                                     mem.cptr(dd), mem.ptr(x1), n);
  recur::dist::solve_batched<double>(comm, mem.executor(), mem.cptr(da), mem.cptr(db), mem.cptr(dc),
                                     mem.cptr(dd), mem.ptr(x2), n);
  BOOST_TEST((mem.download(x1, n) == mem.download(x2, n)), "rank " << me.rank << ": two calls differ");
  recur::dist::solve_batched<double>(comm, mem.executor(), mem.cptr(da), mem.cptr(db), mem.cptr(dc),
                                     mem.cptr(dd), mem.ptr(x1), layout::contiguous(n, 0));
  auto dinfo = mem.upload(std::vector<std::int32_t>(3, -5));
  tridiag_options opt;
  opt.info = mem.ptr(dinfo);
  recur::dist::solve_batched<double>(comm, mem.executor(), nullptr, nullptr, nullptr, nullptr, nullptr,
                                     layout::contiguous(0, 3), opt);
  auto const info = mem.download(dinfo, 3);
  BOOST_TEST((info == std::vector<std::int32_t>(3, 0)), "rank " << me.rank << ": info of an empty batch");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_tridiag_host)
BOOST_AUTO_TEST_CASE(matches_reference_f32) { sweep<dist_host, float>(); }
BOOST_AUTO_TEST_CASE(matches_reference_f64) { sweep<dist_host, double>(); }
BOOST_AUTO_TEST_CASE(singular_interior_block) { singular_interior<dist_host>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<dist_host>(); }
BOOST_AUTO_TEST_CASE(reproducible_and_empty) { reproducible_and_empty_case<dist_host>(); }
BOOST_AUTO_TEST_SUITE_END()

#if RECUR_TEST_DIST_CUDA
BOOST_AUTO_TEST_SUITE(dist_tridiag_cuda, *boost::unit_test::precondition(recur_test::dist_cuda::available))
BOOST_AUTO_TEST_CASE(matches_reference_f32) { sweep<recur_test::dist_cuda, float>(); }
BOOST_AUTO_TEST_CASE(matches_reference_f64) { sweep<recur_test::dist_cuda, double>(); }
BOOST_AUTO_TEST_CASE(singular_interior_block) { singular_interior<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_CASE(reproducible_and_empty) { reproducible_and_empty_case<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_SUITE_END()
#endif
