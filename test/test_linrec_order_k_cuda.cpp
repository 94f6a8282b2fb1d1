// recur::linrec_order_k through recur::cuda{stream} against
// reference::linrec_order_k in higher precision: orders 0-8, f32 and f64,
// contiguous, interleaved and strided layouts, 1 to 64 lanes, lengths 0 to
// 100003 (n < k included: the final state holds initial values), init and
// final_state or not, in place, final_state == init; argument errors with
// nothing written. The cases and the tolerance: common/lti_cuda_cases.hpp.
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/lti_cuda_cases.hpp"

using namespace lti_cuda;

BOOST_AUTO_TEST_SUITE(linrec_order_k_cuda)

// Orders 0-8 x layouts x lengths 0 to 100003 (n < k included: the final
// state holds initial values), init and final_state or not.
BOOST_AUTO_TEST_CASE(f32) { sweep<float>(op::order_k, orders_0_8, kinds, order_k_shapes, 821); }
BOOST_AUTO_TEST_CASE(f64) { sweep<double>(op::order_k, orders_0_8, kinds, order_k_shapes, 822); }

// y == x, final_state == init, and both at once.
BOOST_AUTO_TEST_CASE(in_place) {
  lti_cuda::in_place<float>(op::order_k, dpcm_orders, 823);
  lti_cuda::in_place<double>(op::order_k, dpcm_orders, 824);
  report("linrec_order_k in place");
}

// Host memory for x, y or the state, device memory for a, order 9: each
// rejected, nothing written.
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  errors<float>({op::order_k});
  errors<double>({op::order_k});
}

BOOST_AUTO_TEST_SUITE_END()
