#pragma once
// Big cases are generated and checked on every core. RECUR_TEST_THREADS=<n>
// sets the number of threads.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace recur_test {

// The threads for a case of `elements` elements: one below 2^20.
inline int worker_count(std::int64_t elements) {
  if (elements < (std::int64_t{1} << 20)) return 1;
  static int const n = [] {
    char const* e = std::getenv("RECUR_TEST_THREADS");
    unsigned const v = e ? static_cast<unsigned>(std::atoi(e)) : std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp<unsigned>(v, 1, 64));
  }();
  return n;
}

// body(task, worker) for every task in [0, tasks), on `workers` threads.
template <class F>
void parallel_for(std::int64_t tasks, int workers, F&& body) {
  std::int64_t const nt = std::min<std::int64_t>(workers, tasks);
  if (nt <= 1) {
    for (std::int64_t t = 0; t < tasks; ++t) body(t, 0);
    return;
  }
  std::vector<std::thread> pool;
  for (std::int64_t id = 0; id < nt; ++id)
    pool.emplace_back([&, id] {
      for (std::int64_t t = id; t < tasks; t += nt) body(t, static_cast<int>(id));
    });
  for (auto& th : pool) th.join();
}

}  // namespace recur_test
