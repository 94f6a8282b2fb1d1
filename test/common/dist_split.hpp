#pragma once
// What the recur::dist tests share (test_dist.cpp, test_dist_tridiag.cpp):
// the rank, how a global length is cut over the ranks, and the check that
// an error is the same on every rank.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <recur/layout/layout.hpp>

namespace recur_test {

struct world {
  int rank = 0, size = 1;
  world() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
};

// How the N elements of a sequence are cut over the ranks: the lengths.
enum class split { even, uneven, empty_ranks };

inline std::vector<std::int64_t> lengths(split how, std::int64_t n, int ranks) {
  std::vector<std::int64_t> len(static_cast<std::size_t>(ranks), 0);
  if (how == split::even) {
    for (int r = 0; r < ranks; ++r) len[r] = n * (r + 1) / ranks - n * r / ranks;
  } else if (how == split::uneven) {  // weights 1, 3, 2, 5, ...
    std::int64_t total = 0, done = 0;
    for (int r = 0; r < ranks; ++r) total += 1 + (r * 7 + 1) % 5;
    for (int r = 0, acc = 0; r < ranks; ++r) {
      acc += 1 + (r * 7 + 1) % 5;
      std::int64_t const end = n * acc / total;
      len[r] = end - done;
      done = end;
    }
  } else {  // the first and the last rank empty where there are others
    int const lo = ranks > 2 ? 1 : 0, hi = ranks > 1 ? ranks - 1 : ranks;
    for (int r = lo; r < hi; ++r) len[r] = n * (r - lo + 1) / (hi - lo) - n * (r - lo) / (hi - lo);
  }
  return len;
}

// This rank's slice of count sequences of n elements cut `how`: its first
// element, and its layout (n_r elements a sequence, contiguous or
// interleaved).
struct rank_slice {
  std::int64_t first = 0;
  recur::layout lay;
};
inline rank_slice slice_of(split how, std::int64_t n, std::int64_t count, bool interleaved) {
  world const me;
  auto const len = lengths(how, n, me.size);
  rank_slice s;
  for (int r = 0; r < me.rank; ++r) s.first += len[r];
  std::int64_t const nr = len[me.rank];
  s.lay = interleaved ? recur::layout::interleaved(nr, count) : recur::layout::contiguous(nr, count);
  return s;
}

// The slice's values of the global sequences v (in layout `global`), in the
// slice's layout.
template <class T>
std::vector<T> take(rank_slice const& s, std::vector<T> const& v, recur::layout const& global) {
  std::vector<T> out(static_cast<std::size_t>(s.lay.n * s.lay.count));
  for (std::int64_t k = 0; k < s.lay.count; ++k)
    for (std::int64_t i = 0; i < s.lay.n; ++i) out[s.lay.offset(i, k)] = v[global.offset(s.first + i, k)];
  return out;
}

inline char const* name(split how) {
  return how == split::even ? "even" : how == split::uneven ? "uneven" : "empty ranks";
}

// Runs f on every rank; expects each to throw E whose message holds `has`,
// and the same message on every rank.
template <class E, class F>
void expect_same_error(F f, std::string const& has) {
  world const me;
  std::string msg;
  try {
    f();
  } catch (E const& e) {
    msg = e.what();
  } catch (std::exception const& e) {
    msg = std::string("wrong exception type: ") + e.what();
  }
  BOOST_TEST(msg.find(has) != std::string::npos,
             "rank " << me.rank << ": '" << msg << "' lacks '" << has << "'");
  // Every rank's message equals rank 0's.
  std::vector<char> mine(512, 0), first(512, 0);
  std::copy_n(msg.begin(), std::min<std::size_t>(msg.size(), 511), mine.begin());
  first = mine;
  MPI_Bcast(first.data(), 512, MPI_CHAR, 0, MPI_COMM_WORLD);
  BOOST_TEST(std::string(first.data()) == std::string(mine.data()),
             "rank " << me.rank << " threw '" << mine.data() << "', rank 0 '" << first.data() << "'");
}

}  // namespace recur_test
