#pragma once
// Where a test's arrays live: one interface over host memory (dist_host)
// and device memory on a non-blocking stream (dist_cuda, where the test is
// built with RECUR_TEST_DIST_CUDA), so each case is written once for both
// executors (test_dist, the linrec_summary suites). Buffers are shared
// handles: copying a handle aliases the buffer (in-place cases pass the same
// handle twice).
#include <cstdint>
#include <memory>
#include <vector>

#include <recur/executor.hpp>

#if RECUR_TEST_DIST_CUDA
#include "cuda_memory.hpp"
#endif

namespace recur_test {

struct dist_host {
  template <class T>
  using handle = std::shared_ptr<std::vector<T>>;

  template <class T>
  handle<T> upload(std::vector<T> const& v) {
    return std::make_shared<std::vector<T>>(v);
  }
  template <class T>
  T* ptr(handle<T> const& h) {
    return h->data();
  }
  template <class T>
  T const* cptr(handle<T> const& h) {
    return h->data();
  }
  template <class T>
  std::vector<T> download(handle<T> const& h, std::int64_t n) {
    return {h->begin(), h->begin() + n};
  }
  recur::host executor() const { return {}; }
};

#if RECUR_TEST_DIST_CUDA
struct dist_cuda {
  template <class T>
  using handle = std::shared_ptr<dbuf<T>>;

  static boost::test_tools::assertion_result available(boost::unit_test::test_unit_id) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      boost::test_tools::assertion_result r(false);
      r.message() << "no CUDA device";
      return r;
    }
    return true;
  }
  template <class T>
  handle<T> upload(std::vector<T> const& v) {
    auto h = std::make_shared<dbuf<T>>(recur_test::upload(v));
    settle();
    return h;
  }
  template <class T>
  T* ptr(handle<T> const& h) {
    return h->p;
  }
  template <class T>
  T const* cptr(handle<T> const& h) {
    return h->p;
  }
  template <class T>
  std::vector<T> download(handle<T> const& h, std::int64_t n) {
    finish();
    return h->read(static_cast<std::size_t>(n));
  }
  recur::cuda executor() const { return {test_stream()}; }
};
#endif

}  // namespace recur_test
