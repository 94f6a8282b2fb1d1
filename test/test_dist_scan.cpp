// recur::dist::scan under MPI (in test_dist): every rank builds the same
// global sequences from a fixed seed, takes its slice (even, uneven, empty
// ranks), scans it across the ranks with an exact operator (sums and
// affine maps modulo 2^32, the latter not commutative), and compares each
// output with a sequential fold over the whole sequences, bitwise. Inclusive
// and exclusive, one initial value or one per sequence, in place, batches
// contiguous and interleaved. Floating-point sums: the same bits twice. Bad
// arguments on one rank, and ranks that disagree, throw the same error on
// every rank and write nothing. Built as CUDA where the build has it, so
// that the cuda suite (the same cases on device memory, the operators
// __host__ __device__) runs recur::dist::scan's device path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <recur/config.hpp>
#include <recur/dist_scan.hpp>
#include <recur/error.hpp>

#include "common/dist_split.hpp"
#include "common/either_memory.hpp"

namespace {

using recur::layout;
using recur::scan_options;
using recur_test::dist_host;
using recur_test::expect_same_error;
using recur_test::split;
using recur_test::world;

struct plus_u32 {
  RECUR_HD std::uint32_t operator()(std::uint32_t l, std::uint32_t r) const { return l + r; }
};
struct plus_f32 {
  RECUR_HD float operator()(float l, float r) const { return l + r; }
};
// x -> a x + b modulo 2^32, composed in scan order (l first).
struct affine_u32 {
  std::uint32_t a, b;
  bool operator==(affine_u32 const&) const = default;
};
struct compose_u32 {
  RECUR_HD affine_u32 operator()(affine_u32 l, affine_u32 r) const { return {r.a * l.a, r.a * l.b + r.b}; }
};

template <class T>
T value(std::mt19937& g) {
  if constexpr (std::is_same_v<T, affine_u32>)
    return {static_cast<std::uint32_t>(g() | 1u), static_cast<std::uint32_t>(g())};
  else
    return static_cast<T>(g());
}

struct scan_case {
  std::int64_t n, count;
  split how;
  bool interleaved, exclusive, has_init, per_sequence, in_place;
};

template <class T, class Op>
std::vector<T> reference(std::vector<T> const& in, layout const& lay, Op op, bool exclusive,
                         std::vector<T> const& init, bool has_init) {
  std::vector<T> out(in.size());
  for (std::int64_t k = 0; k < lay.count; ++k) {
    T acc = has_init ? init[k] : T{};
    bool has = has_init;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      T const x = in[lay.offset(i, k)];
      if (exclusive) out[lay.offset(i, k)] = acc;
      acc = has ? op(acc, x) : x;
      has = true;
      if (!exclusive) out[lay.offset(i, k)] = acc;
    }
  }
  return out;
}

template <class M, class T, class Op>
void check(scan_case const& c, Op op, M& mem) {
  world const me;
  std::mt19937 g(static_cast<unsigned>(c.n * 7 + c.count * 31 + int(c.how)));
  layout const global = layout::contiguous(c.n, c.count);
  std::vector<T> in(c.n * c.count), init(c.count);
  for (auto& x : in) x = value<T>(g);
  for (auto& x : init) x = value<T>(g);
  if (!c.per_sequence) std::fill(init.begin(), init.end(), init[0]);
  auto const want = reference(in, global, op, c.exclusive, init, c.has_init);

  auto const slice = recur_test::slice_of(c.how, c.n, c.count, c.interleaved);
  std::int64_t const first = slice.first, n = slice.lay.n;
  layout const lay = slice.lay;
  std::vector<T> const mine = recur_test::take(slice, in, global);
  auto din = mem.upload(mine), dinit = mem.upload(init);
  auto dout = c.in_place ? din : mem.upload(std::vector<T>(mine.size()));
  scan_options<T> opt{c.exclusive, c.has_init, init[0], c.per_sequence ? mem.cptr(dinit) : nullptr};
  recur::dist::scan(recur::dist::communicator{MPI_COMM_WORLD}, mem.executor(), mem.cptr(din), mem.ptr(dout),
                    lay, op, opt);
  auto const got = mem.download(dout, n * c.count);
  std::int64_t bad = 0, first_bad = -1;
  for (std::int64_t k = 0; k < c.count; ++k)
    for (std::int64_t i = 0; i < n; ++i)
      if (!(got[lay.offset(i, k)] == want[global.offset(first + i, k)]) && bad++ == 0) first_bad = first + i;
  BOOST_TEST(bad == 0, "rank " << me.rank << "/" << me.size << " n=" << c.n << " count=" << c.count << " "
                               << recur_test::name(c.how) << (c.interleaved ? " interleaved" : "")
                               << (c.exclusive ? " exclusive" : "") << (c.has_init ? " init" : "")
                               << (c.per_sequence ? " per sequence" : "") << (c.in_place ? " in place" : "")
                               << ": " << bad << " wrong, first at " << first_bad);
}

template <class M>
void sweep() {
  M mem;
  for (std::int64_t n :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{200003}})
    for (std::int64_t count : {std::int64_t{1}, std::int64_t{3}})
      for (split how : {split::even, split::uneven, split::empty_ranks})
        for (int form = 0; form < 5; ++form) {
          bool const interleaved = form % 2 == 1 && count > 1;
          bool const exclusive = form >= 3, has_init = form >= 1, per_sequence = form == 2 || form == 4;
          bool const in_place = form == 1 || form == 4;
          scan_case const c{n, count, how, interleaved, exclusive, has_init, per_sequence, in_place};
          check<M, affine_u32>(c, compose_u32{}, mem);
          if (n <= 1000) check<M, std::uint32_t>(c, plus_u32{}, mem);
        }
}

// Floating-point sums: two calls give the same bits (the fold's order is
// fixed by the rank count).
template <class M>
void reproducible() {
  world const me;
  M mem;
  std::int64_t const n = 300000 + 11 * me.rank;
  std::vector<float> x(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(0.01 * double(i + 7 * me.rank)));
  auto din = mem.upload(x), a = mem.upload(std::vector<float>(n)), b = mem.upload(std::vector<float>(n));
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  recur::dist::scan(comm, mem.executor(), mem.cptr(din), mem.ptr(a), layout::contiguous(n), plus_f32{});
  recur::dist::scan(comm, mem.executor(), mem.cptr(din), mem.ptr(b), layout::contiguous(n), plus_f32{});
  BOOST_TEST((mem.download(a, n) == mem.download(b, n)), "rank " << me.rank << ": two calls differ");
}

template <class M>
void errors() {
  world const me;
  M mem;
  recur::dist::communicator const comm{MPI_COMM_WORLD};
  std::int64_t const n = 100;
  auto din = mem.upload(std::vector<std::uint32_t>(n, 1u)),
       dout = mem.upload(std::vector<std::uint32_t>(n, 7u));
  auto const untouched = [&] {
    auto const out = mem.download(dout, n);
    BOOST_TEST(std::all_of(out.begin(), out.end(), [](std::uint32_t v) { return v == 7u; }),
               "rank " << me.rank << ": out written on error");
  };
  // Exclusive without an initial value, on every rank.
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::scan(comm, mem.executor(), mem.cptr(din), mem.ptr(dout), layout::contiguous(n),
                          plus_u32{}, scan_options<std::uint32_t>{true, false, 0u, nullptr});
      },
      "an exclusive scan needs an initial value");
  untouched();
  // A null input on the last rank alone.
  expect_same_error<recur::invalid_argument>(
      [&] {
        std::uint32_t const* in = me.rank == me.size - 1 ? nullptr : mem.cptr(din);
        recur::dist::scan(comm, mem.executor(), in, mem.ptr(dout), layout::contiguous(n), plus_u32{});
      },
      "rank " + std::to_string(me.size - 1) + " of " + std::to_string(me.size) +
          ": recur::dist::scan: in is null");
  untouched();
  if (me.size > 1) {
    // The ranks disagree on the number of sequences, and on the options.
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::dist::scan(comm, mem.executor(), mem.cptr(din), mem.ptr(dout),
                            layout::contiguous(n / 2, me.rank == 1 ? 1 : 2), plus_u32{});
        },
        "the ranks disagree on the number of sequences");
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::dist::scan(comm, mem.executor(), mem.cptr(din), mem.ptr(dout), layout::contiguous(n),
                            plus_u32{}, scan_options<std::uint32_t>{false, me.rank == 0, 0u, nullptr});
        },
        "the ranks disagree on opt.has_init");
    untouched();
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_scan_host)
BOOST_AUTO_TEST_CASE(matches_sequential_fold) { sweep<dist_host>(); }
BOOST_AUTO_TEST_CASE(float_sums_reproducible) { reproducible<dist_host>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<dist_host>(); }
BOOST_AUTO_TEST_SUITE_END()

#if RECUR_TEST_DIST_CUDA && defined(__CUDACC__)
BOOST_AUTO_TEST_SUITE(dist_scan_cuda, *boost::unit_test::precondition(recur_test::dist_cuda::available))
BOOST_AUTO_TEST_CASE(matches_sequential_fold) { sweep<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_CASE(float_sums_reproducible) { reproducible<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_SUITE_END()
#endif
