// recur::dist under MPI: run by CTest with 1, 2, 3 and 4 ranks (mpirun,
// oversubscribed on small machines). Every rank builds the same global
// problem from a fixed seed, takes its slice along the sequences' length
// (splits even, uneven and with empty ranks), calls recur::dist::linrec on
// the slice, and compares it with the sequential reference over the whole
// sequences. The errors: a bad argument on one rank, and ranks that
// disagree, throw the same exception on every rank and write nothing. The
// cuda suite runs the same cases on device memory (ranks share the device),
// reported skipped without one.
#define BOOST_TEST_MODULE recur_dist
#define BOOST_TEST_NO_MAIN
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <recur/dist.hpp>
#include <recur/linrec.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/storage.hpp>

#include "common/dist_split.hpp"
#include "common/either_memory.hpp"

namespace {

using recur::direction;
using recur::layout;
using recur_test::dist_host;
using recur_test::expect_same_error;
using recur_test::lengths;
using recur_test::name;
using recur_test::split;
using recur_test::world;

// One case: count sequences of n elements split over the ranks, in a local
// layout (contiguous or interleaved), with its options.
struct linrec_case {
  std::int64_t n;
  std::int64_t count;
  split how;
  bool interleaved;
  direction dir;
  bool init_array;
  bool scalar_s;
  bool in_place;
};

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, double>) return 1e-12;
  if constexpr (std::is_same_v<T, float>) return 2e-5;
  return 0.05;  // 16-bit storage: each w rounded, and the carry at each rank boundary
}

// Runs one case with memory M (dist_host or dist_cuda) and checks it.
template <class M, class T>
void check_linrec(linrec_case const& c, M& mem) {
  world const me;
  using V = recur::compute_t<T>;
  std::mt19937 gen(static_cast<unsigned>(c.n * 131 + c.count * 7 + int(c.how) * 3 + int(c.dir)));
  std::uniform_real_distribution<double> us(-0.95, 0.95), ut(-1.0, 1.0);
  layout const global = layout::contiguous(c.n, c.count);
  std::vector<T> s(c.n * c.count), t(c.n * c.count), init(c.count);
  for (auto& v : s) v = T(static_cast<V>(us(gen)));
  for (auto& v : t) v = T(static_cast<V>(ut(gen)));
  for (auto& v : init) v = T(static_cast<V>(ut(gen)));
  T const s_scalar = T(V(0.9)), init_value = T(V(0.25));

  // The reference in the compute type, over the whole sequences.
  std::vector<V> sv(s.size()), tv(t.size()), iv(init.size()), ref(s.size()), ref_final(c.count);
  for (std::size_t i = 0; i < s.size(); ++i) sv[i] = recur::to_compute(s[i]), tv[i] = recur::to_compute(t[i]);
  for (std::size_t i = 0; i < init.size(); ++i) iv[i] = recur::to_compute(init[i]);
  recur::reference::linrec<V>(c.scalar_s ? nullptr : sv.data(), recur::to_compute(s_scalar), tv.data(), V(0),
                              ref.data(), global, c.init_array ? iv.data() : nullptr,
                              recur::to_compute(init_value), ref_final.data(), c.dir == direction::reverse);

  auto const len = lengths(c.how, c.n, me.size);
  std::int64_t first = 0;
  for (int r = 0; r < me.rank; ++r) first += len[r];
  std::int64_t const n = len[me.rank];
  layout const lay = c.interleaved ? layout::interleaved(n, c.count) : layout::contiguous(n, c.count);
  std::vector<T> ls(n * c.count), lt(n * c.count);
  for (std::int64_t k = 0; k < c.count; ++k)
    for (std::int64_t i = 0; i < n; ++i) {
      ls[lay.offset(i, k)] = s[global.offset(first + i, k)];
      lt[lay.offset(i, k)] = t[global.offset(first + i, k)];
    }
  auto ds = mem.upload(ls), dt = mem.upload(lt), dinit = mem.upload(init);
  auto dw = c.in_place ? dt : mem.upload(std::vector<T>(n * c.count, T(V(-7))));
  auto dfinal = mem.upload(std::vector<T>(c.count, T(V(-7))));
  recur::linrec_options<T> opt;
  opt.dir = c.dir;
  opt.init = c.init_array ? mem.ptr(dinit) : nullptr;
  opt.init_value = init_value;
  opt.final_state = mem.ptr(dfinal);
  recur::operand<T> const so = c.scalar_s ? recur::operand<T>(s_scalar) : recur::operand<T>(mem.cptr(ds));
  recur::dist::linrec<T>(recur::dist::communicator{MPI_COMM_WORLD}, mem.executor(), so, mem.cptr(dt),
                         mem.ptr(dw), lay, opt);
  auto const w = mem.download(dw, n * c.count);
  auto const fin = mem.download(dfinal, c.count);

  double const tol = tolerance<T>();
  std::string bad;
  for (std::int64_t k = 0; k < c.count && bad.empty(); ++k) {
    for (std::int64_t i = 0; i < n; ++i) {
      double const want = ref[global.offset(first + i, k)];
      double const got = recur::to_compute(w[lay.offset(i, k)]);
      if (!(std::abs(got - want) <= tol * (1 + std::abs(want)))) {
        bad = "w[" + std::to_string(first + i) + "] of sequence " + std::to_string(k) + ": " +
              std::to_string(got) + " against " + std::to_string(want);
        break;
      }
    }
    double const want = ref_final[k], got = recur::to_compute(fin[k]);
    if (bad.empty() && !(std::abs(got - want) <= tol * (1 + std::abs(want))))
      bad = "final state of sequence " + std::to_string(k) + ": " + std::to_string(got) + " against " +
            std::to_string(want);
  }
  BOOST_TEST(bad.empty(), "rank " << me.rank << "/" << me.size << " n=" << c.n << " count=" << c.count << " "
                                  << name(c.how) << (c.interleaved ? " interleaved" : " contiguous")
                                  << (c.dir == direction::reverse ? " reverse" : " forward")
                                  << (c.scalar_s ? " scalar s" : "") << (c.in_place ? " in place" : "")
                                  << ": " << bad);
}

template <class M, class T>
void sweep() {
  M mem;
  for (split how : {split::even, split::uneven, split::empty_ranks})
    for (direction dir : {direction::forward, direction::reverse})
      for (auto [n, count, inter] : {std::tuple{std::int64_t(1), std::int64_t(1), false},
                                     {7, 3, false},
                                     {1000, 1, false},
                                     {300001, 1, false},
                                     {5000, 40, true},
                                     {4096, 300, false},
                                     {2000, 17, true}})
        for (bool init_array : {false, true})
          check_linrec<M, T>({n, count, how, inter, dir, init_array, n == 7, init_array && count == 40}, mem);
}

template <class M>
void errors() {
  world const me;
  M mem;
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  std::int64_t const n = 50;
  auto dt = mem.upload(std::vector<float>(n * 2, 1.0f));
  auto dw = mem.upload(std::vector<float>(n * 2, -7.0f));
  auto untouched = [&] {
    auto const w = mem.download(dw, n * 2);
    BOOST_TEST(std::all_of(w.begin(), w.end(), [](float v) { return v == -7.0f; }),
               "rank " << me.rank << ": w was written by a call that threw");
  };
  // The last rank passes a null w: every rank reports it and writes nothing.
  expect_same_error<recur::invalid_argument>(
      [&] {
        float* w = me.rank == me.size - 1 ? nullptr : mem.ptr(dw);
        recur::dist::linrec<float>(comm, mem.executor(), 0.5f, mem.cptr(dt), w, layout::contiguous(n, 2));
      },
      "rank " + std::to_string(me.size - 1) + " of " + std::to_string(me.size) + ": recur::linrec: w");
  untouched();
  if (me.size > 1) {  // rank 1 has one sequence fewer
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::dist::linrec<float>(comm, mem.executor(), 0.5f, mem.cptr(dt), mem.ptr(dw),
                                     layout::contiguous(n, me.rank == 1 ? 1 : 2));
        },
        "disagree on the number of sequences");
    untouched();
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::linrec_options<float> opt;
          opt.dir = me.rank == 0 ? direction::reverse : direction::forward;
          recur::dist::linrec<float>(comm, mem.executor(), 0.5f, mem.cptr(dt), mem.ptr(dw),
                                     layout::contiguous(n, 2), opt);
        },
        "disagree on opt.dir");
    untouched();
  }
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::linrec<float>(recur::dist::communicator{}, mem.executor(), 0.5f, mem.cptr(dt),
                                   mem.ptr(dw), layout::contiguous(n, 2));
      },
      "MPI_COMM_NULL");
  untouched();
}

// The same call twice gives the same bits; an empty batch does nothing.
template <class M>
void reproducible_and_empty_case() {
  world const me;
  M mem;
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  std::int64_t const n = 100000 + 17 * me.rank;
  std::vector<double> s(n), t(n);
  for (std::int64_t i = 0; i < n; ++i) s[i] = std::sin(0.001 * (i + me.rank)), t[i] = std::cos(0.003 * i);
  auto ds = mem.upload(s), dt = mem.upload(t), w1 = mem.upload(std::vector<double>(n)),
       w2 = mem.upload(std::vector<double>(n));
  recur::dist::linrec<double>(comm, mem.executor(), mem.cptr(ds), mem.cptr(dt), mem.ptr(w1), n);
  recur::dist::linrec<double>(comm, mem.executor(), mem.cptr(ds), mem.cptr(dt), mem.ptr(w2), n);
  BOOST_TEST((mem.download(w1, n) == mem.download(w2, n)), "rank " << me.rank << ": two calls differ");
  recur::dist::linrec<double>(comm, mem.executor(), mem.cptr(ds), mem.cptr(dt), mem.ptr(w1),
                              layout::contiguous(n, 0));
  recur::dist::linrec<double>(comm, mem.executor(), mem.cptr(ds), mem.cptr(dt), nullptr,
                              layout::contiguous(0, 3));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_linrec_host)
BOOST_AUTO_TEST_CASE(matches_reference_f32) { sweep<dist_host, float>(); }
BOOST_AUTO_TEST_CASE(matches_reference_f64) { sweep<dist_host, double>(); }
BOOST_AUTO_TEST_CASE(matches_reference_bf16) { sweep<dist_host, recur::bfloat16>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<dist_host>(); }
BOOST_AUTO_TEST_CASE(reproducible_and_empty) { reproducible_and_empty_case<dist_host>(); }
BOOST_AUTO_TEST_SUITE_END()

#if RECUR_TEST_DIST_CUDA
BOOST_AUTO_TEST_SUITE(dist_linrec_cuda, *boost::unit_test::precondition(recur_test::dist_cuda::available))
BOOST_AUTO_TEST_CASE(matches_reference_f32) { sweep<recur_test::dist_cuda, float>(); }
BOOST_AUTO_TEST_CASE(matches_reference_f64) { sweep<recur_test::dist_cuda, double>(); }
BOOST_AUTO_TEST_CASE(matches_reference_f16) { sweep<recur_test::dist_cuda, recur::float16>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_CASE(reproducible_and_empty) { reproducible_and_empty_case<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_SUITE_END()
#endif

// MPI around Boost.Test; the exit status is the worst rank's, so that CTest
// sees a failure on any rank.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
