#pragma once
// Outputs start poisoned, so that an element left unwritten fails the
// comparison and one written outside the layout changes a byte. The poison is
// all-ones bytes: a NaN in float and double, and what cudaMemset(p, 0xFF, n)
// writes.
#include <algorithm>
#include <cstring>

namespace recur_test {

template <class T>
T poison() {
  T v;
  std::memset(&v, 0xFF, sizeof v);
  return v;
}
template <class T>
bool is_poison(T v) {
  T const p = poison<T>();
  return std::memcmp(&v, &p, sizeof v) == 0;
}

// Bit for bit (a NaN equals itself; == would not).
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Two arrays (any containers with data() and size() of the same value type)
// hold the same bytes.
template <class A, class B>
bool same_bytes(A const& a, B const& b) {
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof a[0]) == 0);
}

// Every element of v is still the poison.
template <class V>
bool all_poison(V const& v) {
  return std::all_of(v.begin(), v.end(), [](auto x) { return is_poison(x); });
}

}  // namespace recur_test
