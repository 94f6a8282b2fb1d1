// recur::linrec_summary with recur::host: linrec_summary_cases.hpp's cases
// on host memory (test_linrec_summary_cuda.cpp runs them on the GPU).
#include "common/linrec_summary_cases.hpp"

BOOST_AUTO_TEST_SUITE(linrec_summary_host)
RECUR_LINREC_SUMMARY_CASES(recur_test::dist_host)
BOOST_AUTO_TEST_SUITE_END()
