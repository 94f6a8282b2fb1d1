// recur::dpcm_encode and dpcm_decode (floating point) through
// recur::cuda{stream} against the references in higher precision: orders 0,
// 1, 2, 3, 5, 8, f32 and f64, contiguous and interleaved layouts, 1, 7 and
// 4100 lanes, lengths 1 to 100003, with and without init, in place, the
// round trip; argument errors with nothing written. The cases and the
// tolerances: common/lti_cuda_cases.hpp. (Integer DPCM: test_dpcm_int_cuda.cpp.)
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/lti_cuda_cases.hpp"

using namespace lti_cuda;

namespace {

// encode, then decode what the GPU encoded (separate buffers, or both in
// place): x back within G tol_encode + 16 eps (k + 1) G S (see the top).
template <class T>
void round_trip(std::uint64_t salt) {
  recur_test::case_count cases(fmt::format("dpcm round trip {}", recur_test::type_name<T>));
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
        BOOST_TEST(worst <= tol, recur_test::type_name<T> << " " << p.sp.describe()
                                                          << ": decode(encode(x)) off by " << worst
                                                          << ", tolerance " << tol);
        cases.run();
      }
  cases.require(static_cast<std::int64_t>(dpcm_orders.size()) * 2 * 3);  // x layouts x shapes
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dpcm_cuda)

// Orders 0, 1, 2, 3, 5, 8 x init or not x layouts x 1, 7, 4100 lanes x lengths 1 to 100003.
BOOST_AUTO_TEST_CASE(encode_f32) { sweep<float>(op::encode, dpcm_orders, dense, dpcm_shapes, 811); }
BOOST_AUTO_TEST_CASE(encode_f64) { sweep<double>(op::encode, dpcm_orders, dense, dpcm_shapes, 812); }
BOOST_AUTO_TEST_CASE(decode_f32) { sweep<float>(op::decode, dpcm_orders, dense, dpcm_shapes, 813); }
BOOST_AUTO_TEST_CASE(decode_f64) { sweep<double>(op::decode, dpcm_orders, dense, dpcm_shapes, 814); }
BOOST_AUTO_TEST_CASE(round_trip) {
  ::round_trip<float>(815);
  ::round_trip<double>(816);
}

// e == x (in place).
BOOST_AUTO_TEST_CASE(in_place) {
  lti_cuda::in_place<float>(op::decode, {0, 2, 8}, 825);
  lti_cuda::in_place<double>(op::encode, {0, 2, 8}, 826);
  report("dpcm in place");
}

// Host memory for the samples or init, device memory for c, order 9: each
// rejected, nothing written.
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  errors<float>({op::encode, op::decode});
  errors<double>({op::encode, op::decode});
}

BOOST_AUTO_TEST_SUITE_END()
