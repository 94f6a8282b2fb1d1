// recur::solve_batched with the defaults (pivoting = automatic, only info
// requested) through recur::cuda: tridiag_default_harness.hpp's cases on
// device memory (test_tridiag_default_host.cpp runs them on the CPU). Every
// GPU form must screen the systems as it solves them or have the default
// run automatic's check after it: the partitioned form (random_large and
// the named algorithms past their tiles), the periodic one-pass and split
// forms (random_periodic), the rd and cr_rd tiles, Bondeli's form and the
// global-memory Thomas (random_named), and give pivoting = none's bits on
// diagonally dominant batches there (dominant_*).
//
// The systems the screen flags are solved again by the pivoted form, one
// thread per system over its n rows, so the non-dominant batches past 10^4
// rows hold one to three systems. Host code only.
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/executor.hpp>

#include "common/cuda_solver_memory.hpp"
#include "common/tridiag_default_harness.hpp"

namespace {

struct cuda_backend : recur_test::cuda_solver_memory {
  static char const* name() { return "cuda"; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_default_cuda)

RECUR_TRIDIAG_DEFAULT_CASES(cuda_backend)

BOOST_AUTO_TEST_SUITE_END()
