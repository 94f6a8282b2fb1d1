#pragma once
// The memory side of a host Backend of the tridiagonal harnesses
// (tridiag_harness.hpp, tridiag_pivot_harness.hpp): recur::host, arrays in
// plain vectors, nothing to wait for. A suite's backend adds its name and
// oracles.
#include <vector>

#include <recur/executor.hpp>

namespace recur_test {

struct host_memory {
  using executor_type = recur::host;
  static executor_type executor() { return recur::host{}; }
  template <class T>
  struct array {
    mutable std::vector<T> v;
    explicit array(std::vector<T> const& contents) : v(contents) {}
    T* data() const { return v.data(); }
    std::vector<T> read() const { return v; }
  };
  static void finish() {}
};

}  // namespace recur_test
