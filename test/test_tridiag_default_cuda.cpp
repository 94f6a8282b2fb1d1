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

#include "common/cuda_memory.hpp"
#include "common/tridiag_default_harness.hpp"

namespace {

struct cuda_backend {
  using executor_type = recur::cuda;
  static executor_type executor() { return recur::cuda{recur_test::test_stream()}; }
  static char const* name() { return "cuda"; }
  template <class T>
  struct array {
    recur_test::dbuf<T> buf;
    explicit array(std::vector<T> const& contents) : buf(recur_test::upload(contents)) {
      recur_test::settle();  // the solve runs on a non-blocking stream
    }
    T* data() const { return buf.p; }
    std::vector<T> read() const { return buf.read(); }
  };
  static void finish() { recur_test::finish(recur_test::test_stream()); }
  // In place, rd, cr_rd and bondeli may run the pivoted form alone (their
  // forms leave d overwritten where they break down), whose bits on
  // dominant systems are Thomas's.
  // automatic keeps a fast form's answer only for diagonally dominant
  // systems: the others are solved again by the pivoted form.
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tridiag_default_cuda)

RECUR_TRIDIAG_DEFAULT_CASES(cuda_backend)

BOOST_AUTO_TEST_SUITE_END()
