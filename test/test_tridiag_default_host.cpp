// recur::solve_batched with the defaults (pivoting = automatic, only info
// requested) through recur::host: tridiag_default_harness.hpp's cases, the
// CPU twin of test_tridiag_default_cuda.cpp. The CPU's automatic runs its
// stability test on every path (the batched Thomas, the named algorithms'
// per-system solves, the split of long systems over threads, periodic
// systems), so these cases pass here and check the checks themselves.
#include <boost/test/unit_test.hpp>

#include "common/host_memory.hpp"
#include "common/tridiag_default_harness.hpp"

namespace {

struct host_backend : recur_test::host_memory {
  static char const* name() { return "host"; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_default_host)

RECUR_TRIDIAG_DEFAULT_CASES(host_backend)

BOOST_AUTO_TEST_SUITE_END()
