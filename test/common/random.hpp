#pragma once
// Seeded random inputs for every test: the same stream on every platform (std
// distributions are not), so a seed printed by a failure reproduces it
// anywhere. RECUR_TEST_SEED=<n> draws other inputs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace recur_test {

// splitmix64.
struct rng {
  std::uint64_t state;
  explicit rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double symmetric() { return 2.0 * uniform() - 1.0; }                        // [-1, 1)
  double sign() { return (next() >> 63) ? -1.0 : 1.0; }
};

// The splitmix64 output for a counter: a draw that depends on (key, counter)
// alone, so arrays can be filled in any order, on any number of threads.
inline std::uint64_t draw(std::uint64_t key, std::uint64_t counter) {
  std::uint64_t z = key + (counter + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)

// Base of every seed; RECUR_TEST_SEED overrides it to explore other inputs.
inline std::uint64_t base_seed() {
  static std::uint64_t const seed = [] {
    char const* e = std::getenv("RECUR_TEST_SEED");
    return e ? std::strtoull(e, nullptr, 0) : 20261122ull;
  }();
  return seed;
}
inline std::uint64_t seed_for(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
  rng r(base_seed() ^ (a * 0x100000001b3ull) ^ (b << 20) ^ (c << 40));
  return r.next();
}

// `size` values scale * [-1, 1), in T.
template <class T>
std::vector<T> random_values(rng& r, std::size_t size, double scale = 1.0) {
  std::vector<T> v(size);
  for (auto& x : v) x = static_cast<T>(scale * r.symmetric());
  return v;
}

}  // namespace recur_test
