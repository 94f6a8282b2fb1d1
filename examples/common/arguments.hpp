#pragma once
// The examples' argument checks: the error they throw and how a value reads
// in its message.
#include <sstream>
#include <string>

#include <recur/error.hpp>

namespace recur_examples {

[[noreturn]] inline void bad(std::string const& message) { throw recur::invalid_argument(message); }

// A number as a user writes it: 0, -1, 1e-12, nan.
template <class V>
std::string str(V v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace recur_examples
