// recur::bfloat16 and recur::float16 (recur/storage.hpp): the host-side
// conversions, which the CPU backend uses and which must round as the CUDA
// intrinsics of the device side do (to nearest, ties to even; NaN stays NaN;
// overflow to infinity). Checked against a table of every finite value of the
// type: exact round trips of all 2^16 patterns, and float inputs (random bit
// patterns, midpoints between neighbours, the overflow boundary) rounded to
// the nearest table entry.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/storage.hpp>

#include "common/cases.hpp"
#include "common/random.hpp"

namespace {

template <class T>
T from_bits(std::uint16_t b) {
  T v;
  std::memcpy(&v, &b, 2);
  return v;
}
template <class T>
std::uint16_t bits_of(T v) {
  std::uint16_t b;
  std::memcpy(&b, &v, 2);
  return b;
}

// The positive finite values of T in increasing order (the bit patterns
// 0x0000 up to the largest finite one are increasing), then infinity's
// pattern standing at max + ulp(max), where IEEE rounding puts it.
template <class T>
struct table {
  std::uint16_t inf_bits;
  int mantissa_bits;
  std::vector<double> value;  // value[b] of pattern b, b = 0 .. inf_bits
};

template <class T>
table<T> make_table() {
  table<T> t;
  t.inf_bits = std::is_same_v<T, recur::bfloat16> ? 0x7f80 : 0x7c00;
  t.mantissa_bits = std::is_same_v<T, recur::bfloat16> ? 7 : 10;
  int const exp_bits = 15 - t.mantissa_bits, bias = (1 << (exp_bits - 1)) - 1;
  for (int b = 0; b <= t.inf_bits; ++b) {
    int const e = b >> t.mantissa_bits, m = b & ((1 << t.mantissa_bits) - 1);
    double const frac = static_cast<double>(m) / static_cast<double>(1 << t.mantissa_bits);
    t.value.push_back(e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1.0 + frac, e - bias));
  }
  return t;
}

// The nearest entry to |x| (x finite), ties to the even pattern.
template <class T>
std::uint16_t nearest(table<T> const& t, double x) {
  double const a = std::fabs(x);
  auto const it = std::lower_bound(t.value.begin(), t.value.end(), a);
  std::uint16_t hi = static_cast<std::uint16_t>(std::min<std::ptrdiff_t>(it - t.value.begin(), t.inf_bits));
  std::uint16_t const lo = hi > 0 && t.value[hi] != a ? hi - 1 : hi;
  double const dl = a - t.value[lo], dh = t.value[hi] - a;
  std::uint16_t const r = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint16_t>(r | (std::signbit(x) ? 0x8000 : 0));
}

template <class T>
void check_type() {
  auto const t = make_table<T>();
  char const* const name = recur_test::type_name<T>;

  // Every pattern converts to float exactly and back to itself (a NaN to a NaN).
  int bad = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    T const v = from_bits<T>(static_cast<std::uint16_t>(b));
    float const f = v;
    std::uint16_t const mag = b & 0x7fff;
    if (mag > t.inf_bits) {
      if (!std::isnan(f) || !std::isnan(static_cast<float>(T(f)))) ++bad;
      continue;
    }
    double const want = (b & 0x8000 ? -1.0 : 1.0) * (mag == t.inf_bits ? HUGE_VAL : t.value[mag]);
    if (static_cast<double>(f) != want || bits_of(T(f)) != b) ++bad;
  }
  BOOST_TEST(bad == 0, name << ": " << bad << " patterns do not round-trip");

  // Floats round to the nearest value, ties to even, past the largest to infinity.
  std::vector<float> xs;
  recur_test::rng r(recur_test::seed_for(900, t.mantissa_bits));
  for (int i = 0; i < 1000000; ++i) {
    auto const u = static_cast<std::uint32_t>(r.next());
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isfinite(f)) xs.push_back(f);
  }
  for (std::uint16_t b = 0; b + 1 < t.inf_bits; ++b) {                       // midpoints and their neighbours
    auto const mid = static_cast<float>((t.value[b] + t.value[b + 1]) / 2);  // exact in float
    for (float const f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, HUGE_VALF)}) {
      xs.push_back(f);
      xs.push_back(-f);
    }
  }
  double const max = t.value[t.inf_bits - 1], over = max + (t.value[t.inf_bits] - max) / 2;
  xs.push_back(static_cast<float>(over));
  xs.push_back(std::nextafter(static_cast<float>(over), 0.0f));
  xs.push_back(std::numeric_limits<float>::max());
  xs.push_back(-std::numeric_limits<float>::max());
  bad = 0;
  for (float const f : xs) {
    std::uint16_t const got = bits_of(T(f)), want = nearest(t, f);
    if (got != want && ++bad <= 5)
      BOOST_TEST_MESSAGE(name << ": " << f << " gave " << got << ", nearest is " << want);
  }
  BOOST_TEST(bad == 0, name << ": " << bad << " of " << xs.size() << " floats misrounded");
  BOOST_TEST(std::isnan(static_cast<float>(T(std::numeric_limits<float>::quiet_NaN()))));
  BOOST_TEST(std::isinf(static_cast<float>(T(HUGE_VALF))));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(storage)

BOOST_AUTO_TEST_CASE(bfloat16_conversions) { check_type<recur::bfloat16>(); }
BOOST_AUTO_TEST_CASE(float16_conversions) { check_type<recur::float16>(); }

BOOST_AUTO_TEST_SUITE_END()
