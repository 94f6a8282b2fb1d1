#pragma once
// The memory side of a CUDA Backend of the tridiagonal harnesses
// (tridiag_pivot_harness.hpp, tridiag_default_harness.hpp): recur::cuda on
// the tests' stream, arrays in device memory, the solve awaited before the
// outputs are read; host_memory.hpp's twin. A suite's backend adds its name
// and oracles.
#include <vector>

#include <recur/executor.hpp>

#include "cuda_memory.hpp"

namespace recur_test {

struct cuda_solver_memory {
  using executor_type = recur::cuda;
  static executor_type executor() { return recur::cuda{test_stream()}; }
  template <class T>
  struct array {
    dbuf<T> buf;
    explicit array(std::vector<T> const& contents) : buf(upload(contents)) {
      settle();  // the solve runs on a non-blocking stream
    }
    T* data() const { return buf.p; }
    std::vector<T> read() const { return buf.read(); }
  };
  static void finish() { recur_test::finish(test_stream()); }
};

}  // namespace recur_test
