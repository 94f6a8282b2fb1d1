// The host-side math of lfilter's sections form
// (kernels/dispatch/lfilter_sections.cuh): polynomial roots by the Francis
// QR, the factorisation of (b, a) into second-order sections paired as
// scipy's zpk2sos pairs them, the maps between the DF2T state and the
// sections' states, the compensated map rows the GPU applies, and the plan
// (when the sections form runs). Filters: the designs of
// test/data/lfilter_designs.hpp and hand-made polynomials.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/lfilter_sections.cuh>
#include <recur/kernels/tuning/tuning_lti.cuh>
#include <recur/reference/lfilter.hpp>

#include "common/random.hpp"
#include "data/lfilter_designs.hpp"

namespace {

namespace k = recur::kernels;
using recur::layout;
using real = k::lfilter_real;
using cplx = std::complex<real>;
namespace designs = recur_test::lfilter_designs;

constexpr real eps_ld = std::numeric_limits<real>::epsilon();

// Ascending product of (z - r) over the roots, as coefficients of z^n .. z^0.
std::vector<real> poly_of_roots(std::vector<cplx> const& roots) {
  std::vector<cplx> p{1};
  for (cplx r : roots) {
    std::vector<cplx> q(p.size() + 1, 0);
    for (std::size_t i = 0; i < p.size(); ++i) {
      q[i] += p[i];
      q[i + 1] -= p[i] * r;
    }
    p = q;
  }
  std::vector<real> out;
  for (cplx v : p) out.push_back(v.real());
  return out;
}

real max_abs(std::span<real const> v) {
  real m = 0;
  for (real x : v) m = std::max(m, std::fabs(x));
  return m;
}

// The roots reproduce c (descending) to `tol` relative, complex ones in
// exactly conjugate pairs.
void check_roots(std::vector<real> const& c, real tol) {
  auto const r = k::polynomial_roots(c);
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST(r->size() == c.size() - 1);
  for (cplx z : *r)
    if (z.imag() != 0)
      BOOST_TEST(std::count(r->begin(), r->end(), std::conj(z)) == std::count(r->begin(), r->end(), z));
  auto const p = poly_of_roots(*r);
  real const scale = max_abs(c) / std::fabs(c[0]);
  for (std::size_t i = 0; i < c.size(); ++i)
    BOOST_TEST(std::fabs(p[i] - c[i] / c[0]) <= tol * scale,
               "coefficient " << i << ": " << p[i] << " vs " << c[i] / c[0]);
}

std::vector<real> normalised(double const* v, double a0, int m) {
  std::vector<real> r;
  for (int j = 0; j <= m; ++j) r.push_back(real(v[j]) / real(a0));
  return r;
}

// The product of the cascade's sections, ascending in q (gain included).
std::pair<std::vector<real>, std::vector<real>> cascade_product(k::lfilter_cascade const& c) {
  std::vector<real> pb{1}, pa{1};
  auto mul = [](std::vector<real> const& p, real const* q) {
    std::vector<real> r(p.size() + 2, 0);
    for (std::size_t i = 0; i < p.size(); ++i)
      for (int j = 0; j < 3; ++j) r[i + j] += p[i] * q[j];
    return r;
  };
  for (int j = 0; j < c.sections; ++j) {
    pb = mul(pb, c.b[j]);
    pa = mul(pa, c.a[j]);
  }
  return {pb, pa};
}

// The sequences of every design in f64 and rounded to f32 (what
// recur::lfilter<float> is given).
template <class F>
void for_each_design(F&& f) {
  for (auto const& d : designs::designs) {
    std::vector<double> b32(d.b, d.b + d.order + 1), a32(d.a, d.a + d.order + 1);
    for (double& v : b32) v = float(v);
    for (double& v : a32) v = float(v);
    f(d, normalised(d.b, d.a[0], d.order), normalised(d.a, d.a[0], d.order), false);
    f(d, normalised(b32.data(), a32[0], d.order), normalised(a32.data(), a32[0], d.order), true);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lfilter_sections)

BOOST_AUTO_TEST_CASE(roots_of_hand_made_polynomials) {
  check_roots({1, -3, 2}, 8 * eps_ld);                         // 1, 2
  check_roots({1, 0, 1}, 8 * eps_ld);                          // +-i
  check_roots({1, 2, 3, 4, 5}, 16 * eps_ld);                   // two complex pairs
  check_roots({1, 8, 28, 56, 70, 56, 28, 8, 1}, 64 * eps_ld);  // (z + 1)^8: a cluster
  check_roots({1, 0, -4, 0, 6, 0, -4, 0, 1}, 64 * eps_ld);     // (z^2 - 1)^4: needs the exceptional shifts
  check_roots({1, -0.5, 0, 0}, 8 * eps_ld);                    // 0.5 and a double root at 0
  check_roots({2, 1}, 8 * eps_ld);                             // degree 1
  auto const z = k::polynomial_roots(std::vector<real>{1, -0.5, 0, 0});
  BOOST_TEST(std::count(z->begin(), z->end(), cplx(0)) == 2);  // exact, from the trailing zeros
  // Random monic polynomials of degree 1 to 8 from roots of radius up to 2.
  recur_test::rng r(recur_test::seed_for(0x5ec));
  for (int trial = 0; trial < 200; ++trial) {
    int const n = 1 + trial % 8;
    std::vector<cplx> roots;
    while (int(roots.size()) < n) {
      cplx const v = std::polar<real>(2 * r.uniform(), 3.14159L * r.uniform());
      if (n - int(roots.size()) >= 2 && r.uniform() < 0.5) {
        roots.push_back(v);
        roots.push_back(std::conj(v));
      } else {
        roots.push_back(v.real());
      }
    }
    check_roots(poly_of_roots(roots), 256 * eps_ld);
  }
}

// Every design, in f64 and rounded to f32: the sections reproduce b and a
// to a small multiple of long double's precision (far below either
// type's), an odd order has its first-order section first, every section of
// a stable filter is stable, and the sections run with their poles nearest
// the unit circle last (scipy's order).
BOOST_AUTO_TEST_CASE(cascades_reproduce_the_designs) {
  for_each_design([](designs::design const& d, std::vector<real> const& b, std::vector<real> const& a,
                     bool f32) {
    auto const c = k::lfilter_cascade_of(b, a, 256 * eps_ld);
    BOOST_TEST_REQUIRE(c.has_value(), d.name << (f32 ? " f32" : " f64"));
    int const m = d.order;
    BOOST_TEST(c->sections == (m + 1) / 2);
    auto const [pb, pa] = cascade_product(*c);
    real const sb = max_abs(b), sa = max_abs(a);
    for (int j = 0; j < int(pb.size()); ++j) {
      BOOST_TEST(std::fabs(pb[j] - (j <= m ? b[j] : 0)) <= 256 * eps_ld * sb, d.name << " b[" << j << "]");
      BOOST_TEST(std::fabs(pa[j] - (j <= m ? a[j] : 0)) <= 256 * eps_ld * sa, d.name << " a[" << j << "]");
    }
    if (m % 2 == 1) BOOST_TEST((c->a[0][2] == 0 && c->b[0][2] == 0), d.name << ": first section first order");
    real nearest = 2;
    for (int j = 0; j < c->sections; ++j) {
      real const a1 = c->a[j][1], a2 = c->a[j][2];
      if (!f32)
        BOOST_TEST((std::fabs(a2) < 1 && std::fabs(a1) < 1 + a2), d.name << " section " << j << " stable");
      // The largest pole radius of the section.
      real const disc = a1 * a1 - 4 * a2;
      real const rad = disc < 0 ? std::sqrt(a2) : (std::fabs(a1) + std::sqrt(disc)) / 2;
      nearest = std::min(nearest, std::fabs(1 - rad));
      if (j == c->sections - 1) BOOST_TEST(std::fabs(1 - rad) == nearest, d.name << ": worst pole last");
    }
  });
}

// The maps keep the meaning of the state: to_df2t to_sections z gives z
// back; from a random DF2T state zi and from the sections' to_sections zi,
// lfilter and the cascade agree on y, with and without input, and to_df2t
// of the cascade's final state is lfilter's zf (all in long double, on the
// designs of orders 3 to 8).
BOOST_AUTO_TEST_CASE(state_maps_preserve_the_filter) {
  recur_test::rng r(recur_test::seed_for(0x3a9));
  int mapped = 0;
  for_each_design([&](designs::design const& d, std::vector<real> const& b, std::vector<real> const& a,
                      bool f32) {
    int const m = d.order;
    if (m < 3) return;
    auto c = k::lfilter_cascade_of(b, a, 256 * eps_ld);
    BOOST_TEST_REQUIRE(c.has_value());
    BOOST_TEST_REQUIRE(k::lfilter_cascade_maps(*c), d.name << ": no maps");
    ++mapped;
    int const S = c->sections;
    std::vector<real> sos;
    for (int j = 0; j < S; ++j) {
      sos.insert(sos.end(), c->b[j], c->b[j] + 3);
      sos.insert(sos.end(), c->a[j], c->a[j] + 3);
    }
    std::int64_t const n = 200;
    std::vector<real> x(n), zi(m);
    for (real& v : x) v = r.symmetric();
    for (real& v : zi) v = r.symmetric();
    std::vector<real> w(2 * S, 0);
    for (int i = 0; i < 2 * S; ++i)
      for (int e = 0; e < m; ++e) w[i] += c->to_sections[i][e] * zi[e];
    real back = 0;
    for (int e = 0; e < m; ++e) {
      real v = 0;
      for (int i = 0; i < 2 * S; ++i) v += c->to_df2t[e][i] * w[i];
      back = std::max(back, std::fabs(v - zi[e]));
    }
    real ey = 0, ez = 0;
    for (bool input : {false, true}) {
      std::vector<real> xs = input ? x : std::vector<real>(n, 0), y1(n), y2(n), zf1(m), wf(2 * S);
      recur::reference::lfilter<real>(b, a, xs.data(), y1.data(), layout::contiguous(n), zi.data(),
                                      zf1.data());
      recur::reference::sosfilt<real>(sos, xs.data(), y2.data(), layout::contiguous(n), w.data(), wf.data());
      real const ys = max_abs(y1), zs = max_abs(zf1);
      for (std::int64_t i = 0; i < n; ++i) ey = std::max(ey, std::fabs(y1[i] - y2[i]) / ys);
      for (int e = 0; e < m; ++e) {
        real z = 0;
        for (int i = 0; i < 2 * S; ++i) z += c->to_df2t[e][i] * wf[i];
        ez = std::max(ez, std::fabs(z - zf1[e]) / zs);
      }
    }
    // A wrong map is off by O(1); the long-double filters of the worst
    // designs (ellip(8, 1, 40, 0.1)) disagree by 1e-10 from rounding alone.
    BOOST_TEST(back <= 1e-10L, d.name << (f32 ? " f32" : " f64") << ": to_df2t to_sections z - z = " << back);
    BOOST_TEST(ey <= 1e-8L, d.name << (f32 ? " f32" : " f64") << ": y error " << ey);
    BOOST_TEST(ez <= 1e-8L, d.name << (f32 ? " f32" : " f64") << ": zf error " << ez);
  });
  BOOST_TEST(mapped > 100);
}

// lfilter_map_row is a compensated dot product: it keeps the low part of a
// map entry and the error of each product, which a plain dot product in
// double loses (here the whole result).
BOOST_AUTO_TEST_CASE(map_rows_are_compensated) {
  real m[8][8] = {};
  m[0][0] = 1 + 0x1p-60L;
  m[0][1] = -1;
  m[1][0] = 1 + 0x1p-30L;
  m[1][1] = -(1 + 0x1p-30L);
  m[1][2] = 0x1p-58L;
  auto const map = k::lfilter_state_map_of(m, 2, 3);
  double const v[3] = {1, 1, 3};
  BOOST_TEST(k::lfilter_map_row(map, 0, v) == 0x1p-60);
  BOOST_TEST(k::lfilter_map_row(map, 1, v) == 3 * 0x1p-58);
  double const plain = map.hi[0][0] * v[0] + map.hi[0][1] * v[1];
  BOOST_TEST(plain == 0.0);
  // Against long double on random ill-conditioned rows: within one
  // rounding of the long-double result for f64, and exact-rounded for f32.
  recur_test::rng r(recur_test::seed_for(0xd07));
  for (int trial = 0; trial < 1000; ++trial) {
    real big[8][8] = {};
    double x[8];
    for (int j = 0; j < 8; ++j) {
      big[0][j] = (r.symmetric() * 1e6L) * (1 + r.symmetric() * 0x1p-55L);
      x[j] = r.symmetric();
    }
    real exact = 0;  // long double products are exact to 64 bits; sums lose little against the cancellation
    for (int j = 0; j < 8; ++j) exact += big[0][j] * real(x[j]);
    auto const mp = k::lfilter_state_map_of(big, 1, 8);
    double const got = k::lfilter_map_row(mp, 0, x);
    real sum_abs = 0;
    for (int j = 0; j < 8; ++j) sum_abs += std::fabs(big[0][j] * real(x[j]));
    BOOST_TEST(std::fabs(real(got) - exact) <= std::fabs(exact) * 0x1p-52L + 16 * eps_ld * sum_abs);
  }
}

// The plan: orders 1 and 2 and filters whose companion powers stay small
// keep the companion form; butter(8, 0.1) runs as 4 sections with maps.
BOOST_AUTO_TEST_CASE(plans_choose_the_sections_form_by_the_power_peak) {
  auto plan_of = [](designs::design const& d) {
    bool use = false;
    double peak = 0;
    auto go = [&]<int K>(std::integral_constant<int, K>) {
      k::lfilter_system<double, K> s;
      for (int j = 0; j <= K; ++j) s.b[j] = d.b[j] / d.a[0], s.a[j] = d.a[j] / d.a[0];
      k::lti_power_chain<K> const chain(s, k::lti_power_top<double, K>());
      peak = double(k::lfilter_power_peak<K>(chain));
      auto const p = k::lfilter_plan_sections<double, K>(s, chain);
      use = p.use;
      if (use) BOOST_TEST(p.maps, d.name);
    };
    [&]<int... I>(std::integer_sequence<int, I...>) {
      ((d.order == I + 1 ? (go(std::integral_constant<int, I + 1>{}), 0) : 0), ...);
    }
    (std::make_integer_sequence<int, 8>{});
    return std::pair{use, peak};
  };
  int used = 0;
  for (auto const& d : designs::designs) {
    auto const [use, peak] = plan_of(d);
    BOOST_TEST(use == (d.order >= 3 && peak > double(k::lfilter_section_bound)), d.name << ": peak " << peak);
    used += use;
  }
  for (auto const& d : designs::designs)
    if (std::string(d.name) == "butter(8, 0.1, 'lowpass')")
      BOOST_TEST(plan_of(d).first);
    else if (std::string(d.name) == "butter(3, 0.3, 'lowpass')")
      BOOST_TEST(!plan_of(d).first);
  BOOST_TEST_MESSAGE(used << " of the designs run as sections in f64");
  BOOST_TEST(used > 50);
}

BOOST_AUTO_TEST_SUITE_END()
