// The CUDA executor as seen from a CPU-only build (RECUR_HAS_CUDA == 0, a
// compile definition exported by recur::recur): it exists in the API and
// throws recur::not_compiled, whatever the shape of the call.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/filter.hpp>
#include <recur/linrec.hpp>

#include "common/linrec_harness.hpp"

#ifndef RECUR_HAS_CUDA
#error "recur::recur must export RECUR_HAS_CUDA"
#endif

BOOST_AUTO_TEST_SUITE(cuda_executor)

#if RECUR_HAS_CUDA == 0

BOOST_AUTO_TEST_CASE(queries_report_no_cuda) {
  BOOST_TEST(!recur::cuda_compiled());
  BOOST_TEST(recur::cuda_device_count() == 0);
  BOOST_TEST(!recur::cuda_device_description().empty());
}

template <class T>
void throws_not_compiled() {
  std::int64_t const n = 10;
  std::vector<T> s(n, T(0.5)), t(n, T(1)), w(n, recur_test::poison<T>()), init(2, T(1)),
      final_state(2, recur_test::poison<T>());
  recur::linrec_options<T> o;
  o.final_state = final_state.data();
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{}, s.data(), t.data(), w.data(), n), recur::not_compiled);
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{}, s.data(), t.data(), w.data(), n, o), recur::not_compiled);
  BOOST_CHECK_THROW(recur::linrec(recur::cuda{}, recur::operand<T>(T(2)), recur::operand<T>(T(1)), w.data(),
                                  recur::layout::interleaved(5, 2), o),
                    recur::not_compiled);
  // Nothing to compute is no excuse: a CPU-only build has no CUDA backend.
  BOOST_CHECK_THROW(
      recur::linrec(recur::cuda{}, s.data(), t.data(), w.data(), recur::layout::contiguous(0, 2), o),
      recur::not_compiled);
  BOOST_CHECK_THROW(
      recur::linrec(recur::cuda{}, s.data(), t.data(), w.data(), recur::layout::contiguous(n, 0), o),
      recur::not_compiled);
  for (T const v : w) BOOST_TEST(recur_test::is_poison(v));
  for (T const v : final_state) BOOST_TEST(recur_test::is_poison(v));
}

BOOST_AUTO_TEST_CASE(linrec_throws_not_compiled) {
  throws_not_compiled<float>();
  throws_not_compiled<double>();
  try {
    std::vector<float> w(4);
    recur::linrec(recur::cuda{}, recur::operand<float>(1.0f), recur::operand<float>(1.0f), w.data(), 4);
  } catch (recur::not_compiled const& e) {
    BOOST_TEST(std::string(e.what()).find("CUDA") != std::string::npos, e.what());
  }
}

template <class T>
void lfilter_not_compiled() {
  std::int64_t const n = 10, count = 2;
  std::vector<T> const b = {T(0.5), T(0.5)}, a = {T(1), T(-0.5)}, x(n * count, T(1)), zi(count, T(1));
  std::vector<T> y(n * count, recur_test::poison<T>()), zf(count, recur_test::poison<T>());
  auto const lay = recur::layout::interleaved(n, count);
  std::span<T const> const sb(b), sa(a);
  recur::filter_options<T> const state{zi.data(), zf.data()};
  BOOST_CHECK_THROW(recur::lfilter(recur::cuda{}, sb, sa, x.data(), y.data(), lay, state),
                    recur::not_compiled);
  BOOST_CHECK_THROW(recur::lfilter(recur::cuda{}, sb, sa, x.data(), y.data(), lay), recur::not_compiled);
  // Empty batches and orders the GPU would reject: not_compiled all the same.
  BOOST_CHECK_THROW(
      recur::lfilter<T>(recur::cuda{}, sb, sa, nullptr, nullptr, recur::layout::contiguous(n, 0)),
      recur::not_compiled);
  BOOST_CHECK_THROW(
      recur::lfilter<T>(recur::cuda{}, sb, sa, nullptr, nullptr, recur::layout::contiguous(0, count), state),
      recur::not_compiled);
  std::vector<T> const b6(6, T(0.1));
  BOOST_CHECK_THROW(recur::lfilter(recur::cuda{}, std::span<T const>(b6), sa, x.data(), y.data(), lay),
                    recur::not_compiled);
  for (T const v : y) BOOST_TEST(recur_test::is_poison(v));
  for (T const v : zf) BOOST_TEST(recur_test::is_poison(v));
}

BOOST_AUTO_TEST_CASE(lfilter_throws_not_compiled) {
  lfilter_not_compiled<float>();
  lfilter_not_compiled<double>();
}

#else

BOOST_AUTO_TEST_CASE(queries_report_cuda) {
  BOOST_TEST(recur::cuda_compiled());
  BOOST_TEST_MESSAGE("CUDA devices: " << recur::cuda_device_count() << ": "
                                      << recur::cuda_device_description());
}

#endif

BOOST_AUTO_TEST_SUITE_END()
