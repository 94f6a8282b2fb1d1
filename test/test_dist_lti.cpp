// recur::dist's linear time-invariant filters and codecs under MPI (part
// of test_dist, run with 1 to 4 ranks): lfilter (IIR, FIR, a[0] != 1),
// sosfilt, linrec_order_k and the DPCM codecs (floating point, and integer
// samples bitwise), matrix chains, filtfilt and sosfiltfilt. Every rank builds the same global sequences from
// a fixed seed, takes its slice (splits even, uneven, with empty ranks; slices shorter than the state), calls
// the split function and compares with the one-device host call over the whole sequences (itself bitwise the
// sequential reference), state in (opt.init) and out (opt.final_state)
// included. Errors: the same exception on every rank, the output not
// written. The cuda suite runs the same cases on device memory.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <recur/chain.hpp>
#include <recur/dist.hpp>
#include <recur/filter.hpp>

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

// A facility as the tests drive it: its state size, the one-device host
// call (the reference) and the split call on memory of executor E.
template <class T, class E>
struct facility {
  std::string name;
  std::int64_t k;
  bool reverse;  // takes direction::reverse
  bool final;    // has opt.final_state
  std::function<void(T const* x, T* y, layout const&, T const* init, T* final, direction)> one;
  std::function<void(E const&, T const* x, T* y, layout const&, T const* init, T* final, direction)> split;
};

recur::dist::communicator world_comm() { return {MPI_COMM_WORLD}; }

template <class T, class E>
std::vector<facility<T, E>> real_facilities() {
  static std::vector<T> const b2 = {T(0.05), T(0.1), T(0.05)}, a2 = {T(1), T(-1.6), T(0.7)};
  static std::vector<T> const b3 = {T(1), T(0.5), T(0.25), T(0.1)}, a3 = {T(2), T(-1.2), T(0.3), T(-0.05)};
  static std::vector<T> const fir = {T(1), T(2), T(3)}, one = {T(1)};
  static std::vector<T> const sos = {T(0.1), T(0.2),  T(0.1), T(1), T(-1.2), T(0.5),
                                     T(1),   T(-0.3), T(0.2), T(2), T(-1.0), T(0.4)};
  static std::vector<T> const ak = {T(0.5), T(-0.3), T(0.1)}, c = {T(1.5), T(-0.6)};
  std::vector<facility<T, E>> f;
  auto add_lfilter = [&](std::string nm, std::vector<T> const& b, std::vector<T> const& a) {
    f.push_back({nm, recur::lfilter_order(std::int64_t(b.size()), std::int64_t(a.size())), true, true,
                 [&b, &a](T const* x, T* y, layout const& l, T const* i, T* z, direction d) {
                   recur::lfilter<T>(recur::host{}, b, a, x, y, l, {i, z, d});
                 },
                 [&b, &a](E const& ex, T const* x, T* y, layout const& l, T const* i, T* z, direction d) {
                   recur::dist::lfilter<T>(world_comm(), ex, b, a, x, y, l, {i, z, d});
                 }});
  };
  add_lfilter("lfilter order 2", b2, a2);
  add_lfilter("lfilter order 3, a[0] = 2", b3, a3);
  add_lfilter("lfilter FIR", fir, one);
  f.push_back({"sosfilt", 4, true, true,
               [](T const* x, T* y, layout const& l, T const* i, T* z, direction d) {
                 recur::sosfilt<T>(recur::host{}, sos, x, y, l, {i, z, d});
               },
               [](E const& ex, T const* x, T* y, layout const& l, T const* i, T* z, direction d) {
                 recur::dist::sosfilt<T>(world_comm(), ex, sos, x, y, l, {i, z, d});
               }});
  f.push_back({"linrec_order_k", 3, false, true,
               [](T const* x, T* y, layout const& l, T const* i, T* z, direction) {
                 recur::linrec_order_k<T>(recur::host{}, ak, x, y, l, {i, z});
               },
               [](E const& ex, T const* x, T* y, layout const& l, T const* i, T* z, direction) {
                 recur::dist::linrec_order_k<T>(world_comm(), ex, ak, x, y, l, {i, z});
               }});
  f.push_back({"dpcm_decode", 2, false, false,
               [](T const* x, T* y, layout const& l, T const* i, T*, direction) {
                 recur::dpcm_decode<T>(recur::host{}, c, x, y, l, {i});
               },
               [](E const& ex, T const* x, T* y, layout const& l, T const* i, T*, direction) {
                 recur::dist::dpcm_decode<T>(world_comm(), ex, c, x, y, l, {i});
               }});
  f.push_back({"dpcm_encode", 2, false, false,
               [](T const* x, T* y, layout const& l, T const* i, T*, direction) {
                 recur::dpcm_encode<T>(recur::host{}, c, x, y, l, {i});
               },
               [](E const& ex, T const* x, T* y, layout const& l, T const* i, T*, direction) {
                 recur::dist::dpcm_encode<T>(world_comm(), ex, c, x, y, l, {i});
               }});
  return f;
}

template <class S, class E>
std::vector<facility<S, E>> integer_facilities() {
  static std::vector<std::int64_t> const c = {3, -1}, c3 = {5, -2, 1};
  return {{"dpcm_decode shift 0", 2, false, false,
           [](S const* x, S* y, layout const& l, S const* i, S*, direction) {
             recur::dpcm_decode<S>(recur::host{}, c, 0, x, y, l, {i});
           },
           [](E const& ex, S const* x, S* y, layout const& l, S const* i, S*, direction) {
             recur::dist::dpcm_decode<S>(world_comm(), ex, c, 0, x, y, l, {i});
           }},
          {"dpcm_encode shift 2", 3, false, false,
           [](S const* x, S* y, layout const& l, S const* i, S*, direction) {
             recur::dpcm_encode<S>(recur::host{}, c3, 2, x, y, l, {i});
           },
           [](E const& ex, S const* x, S* y, layout const& l, S const* i, S*, direction) {
             recur::dist::dpcm_encode<S>(world_comm(), ex, c3, 2, x, y, l, {i});
           }}};
}

struct lti_case {
  std::int64_t n, count;
  split how;
  bool interleaved;
  direction dir;
  bool init, in_place;
};

template <class T>
T draw(std::mt19937& gen) {
  if constexpr (std::is_floating_point_v<T>)
    return T(std::uniform_real_distribution<double>(-1.0, 1.0)(gen));
  else
    return T(std::uniform_int_distribution<int>(std::is_signed_v<T> ? -1000 : 0, 1000)(gen));
}

template <class T>
bool close(T got, T want) {
  if constexpr (std::is_floating_point_v<T>) {
    double const tol = std::is_same_v<T, double> ? 1e-10 : 2e-4;
    return std::abs(double(got) - double(want)) <= tol * (1 + std::abs(double(want)));
  } else {
    return got == want;
  }
}

template <class M, class T, class E>
void check_lti(facility<T, E> const& f, lti_case const& c, M& mem) {
  world const me;
  std::mt19937 gen(static_cast<unsigned>(c.n * 131 + c.count * 7 + int(c.how) * 3 + int(c.dir)));
  layout const global = layout::contiguous(c.n, c.count);
  std::vector<T> x(c.n * c.count), init(c.count * f.k), ref(x.size()), ref_final(init.size());
  for (auto& v : x) v = draw<T>(gen);
  for (auto& v : init) v = draw<T>(gen);
  f.one(x.data(), ref.data(), global, c.init ? init.data() : nullptr, f.final ? ref_final.data() : nullptr,
        c.dir);

  auto const slice = recur_test::slice_of(c.how, c.n, c.count, c.interleaved);
  std::int64_t const first = slice.first, n = slice.lay.n;
  layout const lay = slice.lay;
  std::vector<T> const lx = recur_test::take(slice, x, global);
  auto dx = mem.upload(lx), dinit = mem.upload(init);
  auto dy = c.in_place ? dx : mem.upload(std::vector<T>(lx.size(), T(77)));
  auto dfinal = mem.upload(std::vector<T>(init.size(), T(77)));
  f.split(mem.executor(), mem.cptr(dx), mem.ptr(dy), lay, c.init ? mem.cptr(dinit) : nullptr,
          f.final ? mem.ptr(dfinal) : nullptr, c.dir);
  auto const y = mem.download(dy, n * c.count);
  auto const fin = mem.download(dfinal, std::int64_t(init.size()));
  std::string bad;
  for (std::int64_t k = 0; k < c.count && bad.empty(); ++k)
    for (std::int64_t i = 0; i < n && bad.empty(); ++i)
      if (!close(y[lay.offset(i, k)], ref[global.offset(first + i, k)]))
        bad = "y[" + std::to_string(first + i) + "] of sequence " + std::to_string(k) + ": " +
              std::to_string(double(y[lay.offset(i, k)])) + " against " +
              std::to_string(double(ref[global.offset(first + i, k)]));
  for (std::size_t q = 0; q < fin.size() && bad.empty() && f.final; ++q)
    if (!close(fin[q], ref_final[q]))
      bad = "final state " + std::to_string(q) + ": " + std::to_string(double(fin[q])) + " against " +
            std::to_string(double(ref_final[q]));
  BOOST_TEST(bad.empty(),
             f.name << ", rank " << me.rank << "/" << me.size << " n=" << c.n << " count=" << c.count << " "
                    << name(c.how) << (c.interleaved ? " interleaved" : " contiguous")
                    << (c.dir == direction::reverse ? " reverse" : " forward") << (c.init ? " init" : "")
                    << (c.in_place ? " in place" : "") << ": " << bad);
}

template <class M, class T, class E>
void sweep_facilities(std::vector<facility<T, E>> const& fs) {
  M mem;
  for (auto const& f : fs)
    for (split how : {split::even, split::uneven, split::empty_ranks})
      for (direction dir : {direction::forward, direction::reverse}) {
        if (dir == direction::reverse && !f.reverse) continue;
        for (auto [n, count, inter] : {std::tuple{std::int64_t(1), std::int64_t(1), false},
                                       {5, 3, false},
                                       {1000, 2, false},
                                       {20000, 1, false},
                                       {3000, 33, true}})
          for (bool init : {false, true})
            check_lti<M, T, E>(f, {n, count, how, inter, dir, init, init && count == 2}, mem);
      }
}

template <class M, class T>
void sweep_real() {
  sweep_facilities<M, T>(real_facilities<T, decltype(M{}.executor())>());
}
template <class M, class S>
void sweep_integer() {
  sweep_facilities<M, S>(integer_facilities<S, decltype(M{}.executor())>());
}

// filtfilt and sosfiltfilt: every padtype, the default and a given padlen,
// in place, against the one-device host call on the whole sequences; end
// ranks shorter than padlen are an error on every rank, nothing written.
template <class M, class T>
void forward_backward() {
  world const me;
  M mem;
  std::vector<T> const b = {T(0.05), T(0.1), T(0.05)}, a = {T(1), T(-1.6), T(0.7)};
  std::vector<T> const sos = {T(0.1), T(0.2),  T(0.1), T(1), T(-1.2), T(0.5),
                              T(1),   T(-0.3), T(0.2), T(2), T(-1.0), T(0.4)};
  double const tol = std::is_same_v<T, double> ? 1e-10 : 2e-4;
  std::int64_t const n = 300, count = 3;
  std::mt19937 gen(3);
  std::vector<T> x(n * count);
  for (auto& v : x) v = draw<T>(gen);
  layout const global = layout::contiguous(n, count);
  for (bool sections : {false, true})
    for (split how : {split::even, split::uneven})
      for (auto pad : {recur::filtfilt_pad::odd, recur::filtfilt_pad::even, recur::filtfilt_pad::constant,
                       recur::filtfilt_pad::none})
        for (int padlen : {-1, 5}) {
          recur::filtfilt_options opt;
          opt.padtype = pad;
          if (padlen >= 0) opt.padlen = padlen;
          std::vector<T> ref(x.size());
          if (sections)
            recur::sosfiltfilt<T>(recur::host{}, sos, x.data(), ref.data(), global, opt);
          else
            recur::filtfilt<T>(recur::host{}, b, a, x.data(), ref.data(), global, opt);
          auto const len = lengths(how, n, me.size);
          std::int64_t first = 0;
          for (int r = 0; r < me.rank; ++r) first += len[r];
          std::int64_t const nr = len[me.rank];
          layout const lay = layout::interleaved(nr, count);
          std::vector<T> lx(nr * count);
          for (std::int64_t k = 0; k < count; ++k)
            for (std::int64_t i = 0; i < nr; ++i) lx[lay.offset(i, k)] = x[global.offset(first + i, k)];
          auto dx = mem.upload(lx);
          bool const in_place = padlen < 0;
          auto dy = in_place ? dx : mem.upload(std::vector<T>(lx.size(), T(77)));
          if (sections)
            recur::dist::sosfiltfilt<T>(world_comm(), mem.executor(), sos, mem.cptr(dx), mem.ptr(dy), lay,
                                        opt);
          else
            recur::dist::filtfilt<T>(world_comm(), mem.executor(), b, a, mem.cptr(dx), mem.ptr(dy), lay, opt);
          auto const y = mem.download(dy, nr * count);
          double worst = 0;
          for (std::int64_t k = 0; k < count; ++k)
            for (std::int64_t i = 0; i < nr; ++i) {
              double const want = ref[global.offset(first + i, k)];
              worst = std::max(worst, std::abs(double(y[lay.offset(i, k)]) - want) / (1 + std::abs(want)));
            }
          BOOST_TEST(worst <= tol, (sections ? "sosfiltfilt" : "filtfilt")
                                       << " rank " << me.rank << "/" << me.size << " " << name(how) << " pad "
                                       << int(pad) << " padlen " << padlen << ": error " << worst);
        }
  // End ranks that hold padlen samples or fewer.
  std::int64_t const nr = me.rank == 0 ? 9 : 100;
  auto dx = mem.upload(std::vector<T>(nr, T(1)));
  auto dy = mem.upload(std::vector<T>(nr, T(-7)));
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::filtfilt<T>(world_comm(), mem.executor(), b, a, mem.cptr(dx), mem.ptr(dy),
                                 layout::contiguous(nr, 1));
      },
      "rank 0 of " + std::to_string(me.size) + ": recur::dist::filtfilt: this rank holds 9 samples");
  auto const y = mem.download(dy, nr);
  BOOST_TEST(std::all_of(y.begin(), y.end(), [](T v) { return v == T(-7); }));
}

// matrix_chain<3>: M_i near 0.6 I, every layout and split, init and
// final_state, in place (x == u), against the one-device host call.
template <class M, class T>
void chains() {
  constexpr int K = 3;
  world const me;
  M mem;
  double const tol = std::is_same_v<T, double> ? 1e-10 : 2e-4;
  for (split how : {split::even, split::uneven, split::empty_ranks})
    for (auto [n, count, inter] :
         {std::tuple{std::int64_t(5), std::int64_t(2), false}, {1000, 3, true}, {4000, 1, false}})
      for (bool init : {false, true}) {
        std::mt19937 gen(static_cast<unsigned>(n + count + int(how)));
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        layout const global = layout::contiguous(n, count);
        std::vector<T> mg(n * count * K * K), ug(n * count * K), ig(count * K), ref(ug.size()), rf(ig.size());
        for (std::size_t e = 0; e < mg.size(); ++e)
          mg[e] = T((e % (K * K)) % (K + 1) == 0 ? 0.6 : 0.15 * u(gen));
        for (auto& v : ug) v = T(u(gen));
        for (auto& v : ig) v = T(u(gen));
        recur::matrix_chain<K, T>(recur::host{}, mg.data(), ug.data(), ref.data(), global,
                                  {init ? ig.data() : nullptr, rf.data()});
        auto const len = lengths(how, n, me.size);
        std::int64_t first = 0;
        for (int r = 0; r < me.rank; ++r) first += len[r];
        std::int64_t const nr = len[me.rank];
        layout const lay = inter ? layout::interleaved(nr, count) : layout::contiguous(nr, count);
        std::vector<T> lm(nr * count * K * K), lu(nr * count * K);
        for (std::int64_t k = 0; k < count; ++k)
          for (std::int64_t i = 0; i < nr; ++i) {
            std::int64_t const o = lay.offset(i, k), g = global.offset(first + i, k);
            std::copy_n(mg.begin() + g * K * K, K * K, lm.begin() + o * K * K);
            std::copy_n(ug.begin() + g * K, K, lu.begin() + o * K);
          }
        auto dm = mem.upload(lm), du = mem.upload(lu), di = mem.upload(ig);
        auto dx = init ? du : mem.upload(std::vector<T>(lu.size(), T(77)));  // in place with init
        auto df = mem.upload(std::vector<T>(ig.size(), T(77)));
        recur::dist::matrix_chain<K, T>(world_comm(), mem.executor(), mem.cptr(dm), mem.cptr(du), mem.ptr(dx),
                                        lay, {init ? mem.cptr(di) : nullptr, mem.ptr(df)});
        auto const x = mem.download(dx, std::int64_t(lu.size()));
        auto const fin = mem.download(df, std::int64_t(ig.size()));
        double worst = 0;
        for (std::int64_t k = 0; k < count; ++k)
          for (std::int64_t i = 0; i < nr; ++i)
            for (int c = 0; c < K; ++c) {
              double const want = ref[global.offset(first + i, k) * K + c];
              worst = std::max(worst,
                               std::abs(double(x[lay.offset(i, k) * K + c]) - want) / (1 + std::abs(want)));
            }
        for (std::size_t q = 0; q < rf.size(); ++q)
          worst = std::max(worst, std::abs(double(fin[q]) - double(rf[q])) / (1 + std::abs(double(rf[q]))));
        BOOST_TEST(worst <= tol, "matrix_chain rank " << me.rank << "/" << me.size << " n=" << n << " "
                                                      << name(how) << (init ? " init, in place" : "")
                                                      << ": error " << worst);
      }
}

template <class M>
void errors() {
  world const me;
  M mem;
  auto const comm = world_comm();
  std::int64_t const n = 50;
  auto dx = mem.upload(std::vector<float>(n * 2, 1.0f));
  auto dy = mem.upload(std::vector<float>(n * 2, -7.0f));
  auto untouched = [&] {
    auto const y = mem.download(dy, n * 2);
    BOOST_TEST(std::all_of(y.begin(), y.end(), [](float v) { return v == -7.0f; }),
               "rank " << me.rank << ": y was written by a call that threw");
  };
  std::vector<float> const b = {1.0f, 0.5f}, a = {1.0f, -0.5f}, a0 = {0.0f, 1.0f}, other = {1.0f, -0.25f};
  layout const lay = layout::contiguous(n, 2);
  bool const last = me.rank == me.size - 1;
  std::string const who = "rank " + std::to_string(me.size - 1) + " of " + std::to_string(me.size);
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::lfilter<float>(comm, mem.executor(), b, last ? a0 : a, mem.cptr(dx), mem.ptr(dy), lay);
      },
      who + ": recur::lfilter: a[0] = 0");
  untouched();
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::lfilter<float>(comm, mem.executor(), b, a, mem.cptr(dx), last ? nullptr : mem.ptr(dy),
                                    lay);
      },
      who + ": recur::dist::lfilter: y");
  untouched();
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::sosfilt<float>(comm, mem.executor(), std::span<float const>(b), mem.cptr(dx),
                                    mem.ptr(dy), lay);
      },
      "not a positive multiple of 6");
  untouched();
  if (me.size > 1) {
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::dist::lfilter<float>(comm, mem.executor(), b, me.rank == 1 ? other : a, mem.cptr(dx),
                                      mem.ptr(dy), lay);
        },
        "disagree on the coefficients");
    untouched();
    expect_same_error<recur::invalid_argument>(
        [&] {
          recur::filter_options<float> opt;
          opt.dir = me.rank == 0 ? direction::reverse : direction::forward;
          recur::dist::lfilter<float>(comm, mem.executor(), b, a, mem.cptr(dx), mem.ptr(dy), lay, opt);
        },
        "disagree on opt.dir");
    untouched();
  }
  std::vector<std::int64_t> const c = {3, -1};
  auto de = mem.upload(std::vector<std::int16_t>(n, 1));
  auto dd = mem.upload(std::vector<std::int16_t>(n, -7));
  expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::dpcm_decode<std::int16_t>(comm, mem.executor(), c, 2, mem.cptr(de), mem.ptr(dd),
                                               layout::contiguous(n, 1));
      },
      "is not linear");
  auto const d = mem.download(dd, n);
  BOOST_TEST(std::all_of(d.begin(), d.end(), [](std::int16_t v) { return v == -7; }));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_lti_host)
BOOST_AUTO_TEST_CASE(filters_f32) { sweep_real<dist_host, float>(); }
BOOST_AUTO_TEST_CASE(filters_f64) { sweep_real<dist_host, double>(); }
BOOST_AUTO_TEST_CASE(dpcm_int16) { sweep_integer<dist_host, std::int16_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_int32) { sweep_integer<dist_host, std::int32_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_uint8) { sweep_integer<dist_host, std::uint8_t>(); }
BOOST_AUTO_TEST_CASE(chains_f32) { chains<dist_host, float>(); }
BOOST_AUTO_TEST_CASE(chains_f64) { chains<dist_host, double>(); }
BOOST_AUTO_TEST_CASE(filtfilt_f32) { forward_backward<dist_host, float>(); }
BOOST_AUTO_TEST_CASE(filtfilt_f64) { forward_backward<dist_host, double>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<dist_host>(); }
BOOST_AUTO_TEST_SUITE_END()

#if RECUR_TEST_DIST_CUDA
BOOST_AUTO_TEST_SUITE(dist_lti_cuda, *boost::unit_test::precondition(recur_test::dist_cuda::available))
BOOST_AUTO_TEST_CASE(filters_f32) { sweep_real<recur_test::dist_cuda, float>(); }
BOOST_AUTO_TEST_CASE(filters_f64) { sweep_real<recur_test::dist_cuda, double>(); }
BOOST_AUTO_TEST_CASE(dpcm_int16) { sweep_integer<recur_test::dist_cuda, std::int16_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_int32) { sweep_integer<recur_test::dist_cuda, std::int32_t>(); }
BOOST_AUTO_TEST_CASE(dpcm_uint8) { sweep_integer<recur_test::dist_cuda, std::uint8_t>(); }
BOOST_AUTO_TEST_CASE(chains_f32) { chains<recur_test::dist_cuda, float>(); }
BOOST_AUTO_TEST_CASE(chains_f64) { chains<recur_test::dist_cuda, double>(); }
BOOST_AUTO_TEST_CASE(filtfilt_f32) { forward_backward<recur_test::dist_cuda, float>(); }
BOOST_AUTO_TEST_CASE(filtfilt_f64) { forward_backward<recur_test::dist_cuda, double>(); }
BOOST_AUTO_TEST_CASE(errors_on_every_rank) { errors<recur_test::dist_cuda>(); }
BOOST_AUTO_TEST_SUITE_END()
#endif
