#pragma once
// The harness's Backend (tridiag_harness.hpp) for recur::host: host memory,
// and LAPACK's ?gtsv as the independent oracle. Shared by
// test_tridiag_host.cpp and test_tridiag_split.cpp.
#include <cstdint>
#include <type_traits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

#include "host_memory.hpp"
#include "tridiag_harness.hpp"

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);

namespace tridiag_test {

struct host_backend : recur_test::host_memory {
  static char const* name() { return "host"; }
  // LAPACK's ?gtsv (partial pivoting) on system k, right-hand side r.
  template <class T>
  static std::vector<long double> oracle(problem<T> const& p, std::int64_t k, std::int64_t r) {
    int n = static_cast<int>(p.lay.n), one = 1, ldb = n, info = 0;
    std::vector<T> dl(n > 1 ? n - 1 : 1), dg(n), du(n > 1 ? n - 1 : 1), x(n);
    for (int i = 0; i < n; ++i) {
      dg[i] = p.b[p.mi(i, k)];
      x[i] = p.d[p.vi(i, k, r)];
      if (i > 0) dl[i - 1] = p.a[p.mi(i, k)];
      if (i + 1 < n) du[i] = p.c[p.mi(i, k)];
    }
    if constexpr (std::is_same_v<T, float>)
      sgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &ldb, &info);
    else
      dgtsv_(&n, &one, dl.data(), dg.data(), du.data(), x.data(), &ldb, &info);
    BOOST_REQUIRE_EQUAL(info, 0);
    return std::vector<long double>(x.begin(), x.end());
  }
  // Every algorithm runs every shape on the CPU.
  template <class T>
  static bool must_run(recur::tridiag_algorithm, recur::layout const&) {
    return true;
  }
};

}  // namespace tridiag_test
