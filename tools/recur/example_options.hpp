#pragma once
// Option parsing shared by the commands that run the examples (poisson.cpp,
// heat.cpp): numbers and named choices, usage errors naming the option.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "cli.hpp"

namespace recur_cli {

// An integer option that must fit an int (the examples' checks say which
// values are valid).
inline int int_option(arguments const& args, std::string_view name, int fallback) {
  std::int64_t const v = args.integer(name, fallback);
  if (v < INT_MIN || v > INT_MAX) usage_error(std::string(name), fmt::format("{} is out of range", v));
  return static_cast<int>(v);
}

inline double real_option(arguments const& args, std::string_view name, double fallback) {
  auto const text = args.get(name);
  if (!text) return fallback;
  double v = 0;
  if (!parse_real(*text, v)) usage_error(std::string(name), fmt::format("needs a number, not '{}'", *text));
  return v;
}

// The value of an option that names one of `values`, spelled by to_string
// (found by argument-dependent lookup in the enum's namespace).
template <class E, std::size_t N>
E choice(arguments const& args, std::string_view option, E fallback, E const (&values)[N]) {
  auto const text = args.get(option);
  if (!text) return fallback;
  std::string known;
  for (E const v : values) {
    if (to_string(v) == *text) return v;
    known += fmt::format("{}{}", known.empty() ? "" : ", ", to_string(v));
  }
  usage_error(std::string(option), fmt::format("must be one of {}, not '{}'", known, *text));
}

}  // namespace recur_cli
