// recur::linrec_summary with recur::cuda: linrec_summary_cases.hpp's cases
// on device memory (the tiles and columns kernels, several levels of
// folding past 2048 x 2048 elements).
#define RECUR_TEST_DIST_CUDA 1
#include "common/linrec_summary_cases.hpp"

BOOST_AUTO_TEST_SUITE(linrec_summary_cuda)
RECUR_LINREC_SUMMARY_CASES(recur_test::dist_cuda)
BOOST_AUTO_TEST_SUITE_END()
