// recur::scan on the host (include/recur/scan.hpp): every output against a
// sequential fold, bitwise, with exact operators (sums and affine maps
// modulo 2^32, the latter not commutative), whole sequences and sequences
// cut into chunks over threads; inclusive and exclusive, one initial value
// or one per sequence, in place, every layout; the errors.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/error.hpp>
#include <recur/scan.hpp>

namespace {

using recur::layout;
using recur::scan_options;

struct affine_u32 {
  std::uint32_t a, b;
  bool operator==(affine_u32 const&) const = default;
};
struct compose_u32 {
  affine_u32 operator()(affine_u32 l, affine_u32 r) const { return {r.a * l.a, r.a * l.b + r.b}; }
};

std::int64_t extent(layout const& l) {
  return l.n == 0 || l.count == 0 ? 0 : (l.n - 1) * l.element_stride + (l.count - 1) * l.batch_stride + 1;
}

void check(layout const& lay, int threads, bool exclusive, bool has_init, bool per_sequence, bool in_place) {
  std::mt19937 g(static_cast<unsigned>(lay.n * 3 + lay.count));
  auto const draw = [&] {
    return affine_u32{static_cast<std::uint32_t>(g() | 1u), static_cast<std::uint32_t>(g())};
  };
  std::vector<affine_u32> in(static_cast<std::size_t>(extent(lay)));
  for (auto& x : in) x = draw();
  std::vector<affine_u32> inits(static_cast<std::size_t>(lay.count));
  for (auto& x : inits) x = draw();
  scan_options<affine_u32> const opt{exclusive, has_init, affine_u32{3u, 5u},
                                     per_sequence ? inits.data() : nullptr};
  // The sequential fold.
  std::vector<affine_u32> want = in;
  compose_u32 const op;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    affine_u32 acc = opt.has_init ? (opt.inits ? inits[k] : opt.init) : affine_u32{};
    bool has = opt.has_init;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      auto const o = lay.offset(i, k);
      affine_u32 const x = in[o];
      if (opt.exclusive) want[o] = acc;
      acc = has ? op(acc, x) : x;
      has = true;
      if (!opt.exclusive) want[o] = acc;
    }
  }
  std::vector<affine_u32> out = in;
  recur::scan(recur::host{threads}, in.data(), in_place ? in.data() : out.data(), lay, op, opt);
  std::vector<affine_u32> const& got = in_place ? in : out;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += !(got[i] == want[i]);
  BOOST_TEST(bad == 0u, "n " << lay.n << " count " << lay.count << " threads " << threads
                             << (opt.exclusive ? " exclusive" : "") << (opt.has_init ? " init" : "")
                             << (opt.inits ? " per sequence" : "") << (in_place ? " in place" : "") << ": "
                             << bad << " wrong");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scan_host)

BOOST_AUTO_TEST_CASE(matches_sequential_fold) {
  for (std::int64_t n : {0, 1, 2, 1000, 1 << 20})
    for (std::int64_t count : {1, 3, 17})
      for (int threads : {1, 4})
        for (layout lay : {layout::contiguous(n, count), layout::interleaved(n, count),
                           layout::strided(n, count, 2, 2 * n + 1)}) {
          if (n == (1 << 20) && count == 17) continue;
          check(lay, threads, false, false, false, false);
          check(lay, threads, false, true, false, true);
          check(lay, threads, true, true, false, false);
          check(lay, threads, true, true, true, true);
          check(lay, threads, false, true, true, false);
        }
}

BOOST_AUTO_TEST_CASE(errors) {
  std::vector<float> x(100, 1.f), y(100, 7.f);
  auto const plus = [](float l, float r) { return l + r; };
  auto const untouched = [&] { return std::all_of(y.begin(), y.end(), [](float v) { return v == 7.f; }); };
  BOOST_CHECK_THROW(recur::scan(recur::host{}, x.data(), y.data(), layout::contiguous(100), plus,
                                scan_options<float>{true, false, 0.f, nullptr}),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::scan(recur::host{}, x.data(), y.data(), layout::contiguous(100), plus,
                                scan_options<float>{false, false, 0.f, x.data()}),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(
      recur::scan(recur::host{}, static_cast<float const*>(nullptr), y.data(), layout::contiguous(100), plus),
      recur::invalid_argument);
  BOOST_CHECK_THROW(recur::scan(recur::host{}, x.data(), x.data() + 1, layout::contiguous(99), plus),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::scan(recur::host{-1}, x.data(), y.data(), layout::contiguous(100), plus),
                    recur::invalid_argument);
  BOOST_CHECK_THROW(recur::scan(recur::host{}, x.data(), y.data(), layout{10, 2, 1, 5}, plus),
                    recur::invalid_argument);
  BOOST_TEST(untouched());
  // Empty batches do nothing, null pointers allowed.
  recur::scan(recur::host{}, static_cast<float const*>(nullptr), static_cast<float*>(nullptr),
              layout::contiguous(0, 4), plus);
}

BOOST_AUTO_TEST_SUITE_END()
