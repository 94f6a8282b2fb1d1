#pragma once
// How many cases a sweep ran and why it passed over others. Every sweep ends
// with require(at_least): a change that makes a sweep skip shapes (an
// algorithm that stops supporting them, a filter in the loop) fails the test
// instead of shrinking it while it stays green.
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/test/unit_test.hpp>
#include <recur/storage.hpp>

namespace recur_test {

// The value type in a case's description.
template <class T>
inline constexpr char const* type_name = std::is_same_v<T, recur::bfloat16>  ? "bf16"
                                         : std::is_same_v<T, recur::float16> ? "f16"
                                         : sizeof(T) == 4                    ? "f32"
                                                                             : "f64";

struct case_count {
  std::string what;
  std::int64_t ran = 0;
  std::map<std::string, std::int64_t> skipped;  // reason -> shapes

  explicit case_count(std::string name) : what(std::move(name)) {}
  void run() { ++ran; }
  void skip(std::string const& why) { ++skipped[why]; }
  std::int64_t skips() const {
    std::int64_t s = 0;
    for (auto const& [why, count] : skipped) s += count;
    return s;
  }
  // Logs the count and the skips (--log_level=message), and fails unless at
  // least `at_least` cases ran.
  void require(std::int64_t at_least) const {
    std::ostringstream why;
    for (auto const& [reason, count] : skipped) why << "\n  skipped " << count << ": " << reason;
    BOOST_TEST_MESSAGE(what << ": " << ran << " cases" << why.str());
    BOOST_TEST(ran >= at_least, what << ": " << ran << " cases ran, fewer than the " << at_least
                                     << " this sweep must run" << why.str());
  }
};

}  // namespace recur_test
