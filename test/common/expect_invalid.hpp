#pragma once
// The argument-check tests' assertion: a call that must throw
// recur::invalid_argument, whose message starts with the entry point's name
// and names the argument, and must write nothing.
#include <exception>
#include <initializer_list>
#include <string>

#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>

#include "poison.hpp"

namespace recur_test {

// Runs call, which must throw recur::invalid_argument whose message starts
// with `prefix` (e.g. "recur::solve_batched: ") and contains every needle;
// snapshot() must read the same before and after (nothing written).
template <class CallT, class SnapshotT>
void expect_invalid(CallT&& call, SnapshotT&& snapshot, std::initializer_list<char const*> needles,
                    char const* prefix) {
  auto const before = snapshot();
  bool threw = false;
  std::string what;
  try {
    call();
  } catch (recur::invalid_argument const& e) {
    threw = true;
    what = e.what();
  } catch (std::exception const& e) {
    BOOST_ERROR("threw something other than recur::invalid_argument: " << e.what());
    return;
  }
  BOOST_TEST(threw, "no exception; expected one mentioning \"" << *needles.begin() << "\"");
  if (!threw) return;
  BOOST_TEST(what.rfind(prefix, 0) == 0,
             "message \"" << what << "\" does not start with \"" << prefix << "\"");
  for (char const* needle : needles)
    BOOST_TEST(what.find(needle) != std::string::npos,
               "message \"" << what << "\" lacks \"" << needle << "\"");
  BOOST_TEST(same_bytes(snapshot(), before), "memory changed by a call that threw: " << what);
}

}  // namespace recur_test
