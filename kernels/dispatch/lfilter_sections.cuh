#pragma once
// lfilter's (b, a) filter as a cascade of second-order sections, for the GPU
// (dispatch_lfilter.cuh). Host code only, no CUDA header.
//
// Why. The GPU runs a filter as a scan over its state matrix A: each tile's
// and each thread's run is combined with powers of A. For the direct form II
// transposed of a high-order (b, a) filter A is a companion matrix whose
// powers are far from normal (||A^k|| peaks in the thousands to millions for
// designed filters of orders 5-8 with poles near the unit circle), and every
// product with a power commits an error of eps ||A^k|| ||s|| where the
// sequential recurrence commits eps ||s||: the scan's error exceeds the
// sequential one by about that peak (butter(8, 0.1) in f32: 1e2 relative,
// where the sequential filter is off by 5e-2). The same filter as a cascade
// of second-order sections has a block-triangular state matrix of 2 x 2
// blocks whose powers stay small, and the scan is then as accurate as a
// sequential cascade, itself more accurate than the sequential (b, a) form.
//
// What. lfilter_cascade_of(b, a) factors the normalised polynomials in long
// double: the roots of each are the eigenvalues of its balanced companion
// matrix by the Francis double-shift QR (EISPACK's hqr: backward stable, so
// the product of the factors reproduces the coefficients to a small multiple
// of long double's precision even for clustered roots such as the zeros of
// butter at z = -1, and complex roots come as exactly conjugate pairs);
// poles and zeros are paired as scipy.signal.zpk2sos(pairing='nearest')
// pairs them (the poles nearest the unit circle first, each with the zeros
// nearest to it, the order reversed so those sections run last; an odd order
// gets one first-order section, first); the gain goes to the first section.
// It also gives the linear maps between the DF2T state of (b, a) (scipy's zi
// and zf, m values) and the cascade's section states (2 per section):
//
//   The zero-input response of the DF2T filter from state z is Z(q) / A(q)
//   with Z(q) = z_0 + z_1 q + ... + z_(m-1) q^(m-1) (q the unit delay); that
//   of the cascade from section states w_i = (w_i0, w_i1) is
//   sum_i P_i(q) prod_(j>i) B_j(q) prod_(j<i) A_j(q) / prod_j A_j(q), with
//   P_i = w_i0 + w_i1 q. So z = M w, M's column for w_ik holding the
//   coefficients of q^k prod_(j>i) B_j prod_(j<i) A_j; the states give the
//   same outputs forever after. M is square (m live section states: the
//   second state of a first-order section is always zero) and invertible
//   when no section's zero cancels an earlier section's pole; w = M^-1 z.
//
// When. lfilter_plan_sections: orders 3 and up whose companion matrix has
// a power with ||A^(2^s)||_inf above lfilter_section_bound (the CPU
// emulation of the scan, test/common/lti_emulation.hpp, measures the scan's
// error over the sequential one's growing with that peak, at about a 30th
// of it). Orders 1 and 2 are one section already; well-conditioned higher
// orders keep the companion form, bit for bit.

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <recur/config.hpp>
#include "../thread/lti_systems.cuh"

namespace recur::kernels {

using lfilter_real = long double;

// Filters whose companion matrix's powers stay at most this large
// (||A^(2^s)||_inf for every s, A^0 = I included) scan accurately in
// companion form: the emulated scan's error stays within 2.2x the
// sequential one's up to this peak (the designs of test/data/, f32 and f64).
inline constexpr lfilter_real lfilter_section_bound = 64;

namespace lfs_detail {

using real = lfilter_real;
using cplx = std::complex<real>;
inline constexpr int max_order = 8;

// Balances an n x n matrix (1-based, a[1..n][1..n]) in place by diagonal
// similarity with powers of 2 (Parlett and Reinsch; exact), so that row and
// column norms are comparable and the QR iteration's errors, relative to
// the balanced norm, are small relative to the eigenvalues.
inline void balance(real (&a)[max_order + 1][max_order + 1], int n) {
  constexpr real radix = 2, sqrdx = radix * radix;
  bool done = false;
  while (!done) {
    done = true;
    for (int i = 1; i <= n; ++i) {
      real r = 0, c = 0;
      for (int j = 1; j <= n; ++j)
        if (j != i) {
          c += std::fabs(a[j][i]);
          r += std::fabs(a[i][j]);
        }
      if (c == 0 || r == 0) continue;
      real g = r / radix, f = 1;
      real const s = c + r;
      while (c < g) {
        f *= radix;
        c *= sqrdx;
      }
      g = r * radix;
      while (c > g) {
        f /= radix;
        c /= sqrdx;
      }
      if ((c + r) / f < real(0.95) * s) {
        done = false;
        for (int j = 1; j <= n; ++j) a[i][j] /= f;
        for (int j = 1; j <= n; ++j) a[j][i] *= f;
      }
    }
  }
}

// |v| with the sign of s. (No lambdas over long double in this header: nvcc
// takes an implicitly constexpr lambda for device code too, where long
// double is double.)
inline real sign(real v, real s) { return s >= 0 ? std::fabs(v) : -std::fabs(v); }

// The eigenvalues of an upper Hessenberg matrix (1-based, destroyed) by the
// Francis double-shift QR with exceptional shifts (EISPACK hqr). Complex
// eigenvalues come in exactly conjugate pairs. False when an eigenvalue
// takes more than 60 iterations.
inline bool hessenberg_eigenvalues(real (&a)[max_order + 1][max_order + 1], int n, std::vector<cplx>& out) {
  std::array<real, max_order + 1> wr{}, wi{};
  real anorm = 0;
  for (int i = 1; i <= n; ++i)
    for (int j = std::max(i - 1, 1); j <= n; ++j) anorm += std::fabs(a[i][j]);
  int nn = n, l = 1;
  real t = 0;
  while (nn >= 1) {
    int its = 0;
    do {
      for (l = nn; l >= 2; --l) {
        real s = std::fabs(a[l - 1][l - 1]) + std::fabs(a[l][l]);
        if (s == 0) s = anorm;
        if (std::fabs(a[l][l - 1]) + s == s) {
          a[l][l - 1] = 0;
          break;
        }
      }
      real x = a[nn][nn];
      if (l == nn) {  // one root
        wr[nn] = x + t;
        wi[nn--] = 0;
      } else {
        real y = a[nn - 1][nn - 1], w = a[nn][nn - 1] * a[nn - 1][nn];
        if (l == nn - 1) {  // two roots
          real const p = real(0.5) * (y - x), q = p * p + w;
          real z = std::sqrt(std::fabs(q));
          x += t;
          if (q >= 0) {
            z = p + sign(z, p);
            wr[nn - 1] = wr[nn] = x + z;
            if (z != 0) wr[nn] = x - w / z;
            wi[nn - 1] = wi[nn] = 0;
          } else {
            wr[nn - 1] = wr[nn] = x + p;
            wi[nn - 1] = -(wi[nn] = z);
          }
          nn -= 2;
        } else {
          if (its == 300) return false;
          if (its % 10 == 0 && its > 0) {  // exceptional shift
            t += x;
            for (int i = 1; i <= nn; ++i) a[i][i] -= x;
            real const s = std::fabs(a[nn][nn - 1]) + std::fabs(a[nn - 1][nn - 2]);
            y = x = real(0.75) * s;
            w = real(-0.4375) * s * s;
          }
          ++its;
          int m = nn - 2;
          real p = 0, q = 0, r = 0, z = 0;
          for (; m >= l; --m) {
            z = a[m][m];
            r = x - z;
            real s = y - z;
            p = (r * s - w) / a[m + 1][m] + a[m][m + 1];
            q = a[m + 1][m + 1] - z - r - s;
            r = a[m + 2][m + 1];
            s = std::fabs(p) + std::fabs(q) + std::fabs(r);
            p /= s;
            q /= s;
            r /= s;
            if (m == l) break;
            real const u = std::fabs(a[m][m - 1]) * (std::fabs(q) + std::fabs(r));
            real const v =
                std::fabs(p) * (std::fabs(a[m - 1][m - 1]) + std::fabs(z) + std::fabs(a[m + 1][m + 1]));
            if (u + v == v) break;
          }
          for (int i = m + 2; i <= nn; ++i) {
            a[i][i - 2] = 0;
            if (i != m + 2) a[i][i - 3] = 0;
          }
          for (int k = m; k <= nn - 1; ++k) {
            if (k != m) {
              p = a[k][k - 1];
              q = a[k + 1][k - 1];
              r = k != nn - 1 ? a[k + 2][k - 1] : 0;
              x = std::fabs(p) + std::fabs(q) + std::fabs(r);
              if (x != 0) {
                p /= x;
                q /= x;
                r /= x;
              }
            }
            real const s = sign(std::sqrt(p * p + q * q + r * r), p);
            if (s == 0) continue;
            if (k == m) {
              if (l != m) a[k][k - 1] = -a[k][k - 1];
            } else {
              a[k][k - 1] = -s * x;
            }
            p += s;
            x = p / s;
            y = q / s;
            z = r / s;
            q /= p;
            r /= p;
            for (int j = k; j <= nn; ++j) {
              p = a[k][j] + q * a[k + 1][j];
              if (k != nn - 1) {
                p += r * a[k + 2][j];
                a[k + 2][j] -= p * z;
              }
              a[k + 1][j] -= p * y;
              a[k][j] -= p * x;
            }
            int const mmin = nn < k + 3 ? nn : k + 3;
            for (int i = l; i <= mmin; ++i) {
              p = x * a[i][k] + y * a[i][k + 1];
              if (k != nn - 1) {
                p += z * a[i][k + 2];
                a[i][k + 2] -= p * r;
              }
              a[i][k + 1] -= p * q;
              a[i][k] -= p;
            }
          }
        }
      }
    } while (l < nn - 1);
  }
  for (int i = 1; i <= n; ++i) out.push_back({wr[i], wi[i]});
  return true;
}

// The product of two polynomials (coefficients of ascending powers).
inline std::vector<real> poly_mul(std::vector<real> const& p, std::vector<real> const& q) {
  std::vector<real> r(p.size() + q.size() - 1, real(0));
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < q.size(); ++j) r[i + j] += p[i] * q[j];
  return r;
}

}  // namespace lfs_detail

// The roots of c[0] z^n + c[1] z^(n-1) + ... + c[n] (c[0] nonzero, n <= 8):
// trailing zero coefficients give exact zero roots, the rest the
// eigenvalues of the balanced companion matrix. Complex roots come in
// exactly conjugate pairs. Empty optional when the QR iteration does not
// converge.
inline std::optional<std::vector<std::complex<lfilter_real>>> polynomial_roots(
    std::span<lfilter_real const> c) {
  using namespace lfs_detail;
  int n = static_cast<int>(c.size()) - 1;
  std::vector<cplx> roots;
  while (n > 0 && c[n] == 0) {
    roots.push_back(0);
    --n;
  }
  if (n <= 0) return roots;
  real h[max_order + 1][max_order + 1] = {};
  for (int j = 1; j <= n; ++j) h[1][j] = -c[j] / c[0];
  for (int i = 2; i <= n; ++i) h[i][i - 1] = 1;
  balance(h, n);
  if (!hessenberg_eigenvalues(h, n, roots)) return std::nullopt;
  return roots;
}

// A cascade equal to a (b, a) filter of order m: section j's normalised
// coefficients b[j][0..2], a[j][0..2] (a[j][0] == 1), in long double, and
// (lfilter_cascade_maps) the maps between the filter's DF2T state (m values)
// and the sections' (2 per section, section j's at 2 j): z = to_df2t w,
// w = to_sections z (m x 2S and 2S x m).
struct lfilter_cascade {
  int order = 0;
  int sections = 0;
  lfilter_real b[4][3] = {}, a[4][3] = {};
  lfilter_real to_df2t[8][8] = {};
  lfilter_real to_sections[8][8] = {};
};

namespace lfs_detail {

// A root list as scipy's zpk2sos sees it: real roots, and complex pairs by
// their member of positive imaginary part.
struct root_set {
  std::vector<real> reals;
  std::vector<cplx> pairs;
  std::size_t size() const { return reals.size() + pairs.size(); }
};

inline root_set split_roots(std::vector<cplx> const& r) {
  root_set s;
  for (cplx const& v : r) {
    if (v.imag() == 0)
      s.reals.push_back(v.real());
    else if (v.imag() > 0)
      s.pairs.push_back(v);
  }
  return s;
}

// |1 - |p||: how near a pole is to the unit circle (scipy's "worst" first).
inline real circle_distance(cplx p) { return std::fabs(real(1) - std::abs(p)); }

// The real root (index) nearest to `to`, or -1.
inline int nearest_real(std::vector<real> const& v, cplx to) {
  int best = -1;
  for (int i = 0; i < int(v.size()); ++i)
    if (best < 0 || std::abs(cplx(v[i]) - to) < std::abs(cplx(v[best]) - to)) best = i;
  return best;
}
inline int nearest_pair(std::vector<cplx> const& v, cplx to) {
  int best = -1;
  for (int i = 0; i < int(v.size()); ++i)
    if (best < 0 || std::abs(v[i] - to) < std::abs(v[best] - to)) best = i;
  return best;
}

// One section's polynomial in q (ascending, 3 values) from its roots in z:
// (z - r1)(z - r2) / z^2, with fewer roots giving the factor z^-1 (a root
// at infinity, a delay) for each one missing.
struct quad {
  real c[3] = {0, 0, 1};  // no root: q^2
};
inline quad quad_of_reals(real r1, real r2) { return {{1, -(r1 + r2), r1 * r2}}; }
inline quad quad_of_real(real r) { return {{0, 1, -r}}; }
inline quad quad_of_pair(cplx r) { return {{1, -2 * r.real(), std::norm(r)}}; }

// Removes and returns v[i].
inline real take_real(std::vector<real>& v, int i) {
  real const r = v[i];
  v.erase(v.begin() + i);
  return r;
}

// Whether p (ascending) equals ref (padded with zeros) to `tolerance`
// relative to ref's largest coefficient.
inline bool close(std::vector<real> const& p, std::span<real const> ref, real tolerance) {
  real scale = 0;
  for (real v : ref)
    if (std::fabs(v) > scale) scale = std::fabs(v);
  for (std::size_t i = 0; i < p.size(); ++i) {
    real const r = i < ref.size() ? ref[i] : 0;
    if (!(std::fabs(p[i] - r) <= tolerance * scale)) return false;
  }
  for (std::size_t i = p.size(); i < ref.size(); ++i)
    if (!(std::fabs(ref[i]) <= tolerance * scale)) return false;
  return true;
}

// Solves the n x n system whose augmented n x (n + 1) matrix (row-major,
// right-hand side last) is m, by Gaussian elimination with partial
// pivoting; false when a pivot is zero.
inline bool solve(std::vector<real> m, std::vector<real>& x, int n) {
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(m[r * (n + 1) + c]) > std::fabs(m[piv * (n + 1) + c])) piv = r;
    if (m[piv * (n + 1) + c] == 0) return false;
    for (int j = 0; j <= n; ++j) std::swap(m[c * (n + 1) + j], m[piv * (n + 1) + j]);
    for (int r = c + 1; r < n; ++r) {
      real const f = m[r * (n + 1) + c] / m[c * (n + 1) + c];
      for (int j = c; j <= n; ++j) m[r * (n + 1) + j] -= f * m[c * (n + 1) + j];
    }
  }
  x.assign(n, 0);
  for (int r = n - 1; r >= 0; --r) {
    real v = m[r * (n + 1) + n];
    for (int j = r + 1; j < n; ++j) v -= m[r * (n + 1) + j] * x[j];
    x[r] = v / m[r * (n + 1) + r];
  }
  return true;
}

}  // namespace lfs_detail

// The cascade's state maps (lfilter_cascade::to_df2t, to_sections) from its
// sections' coefficients (as the GPU runs them, rounded to T, so that the
// maps describe that cascade). False when the cascade does not represent
// every DF2T state (a section's zero cancelling an earlier section's pole,
// or a second-order section with a2 = b2 = 0).
inline bool lfilter_cascade_maps(lfilter_cascade& c) {
  using namespace lfs_detail;
  int const m = c.order, S = c.sections;
  // Live section states: the second state of a section with a2 = b2 = 0
  // is zero after every sample, and must start at zero.
  std::vector<int> live;
  for (int i = 0; i < S; ++i) {
    live.push_back(2 * i);
    if (c.a[i][2] != 0 || c.b[i][2] != 0) live.push_back(2 * i + 1);
  }
  if (int(live.size()) != m) return false;
  // Column for state (i, k): q^k prod_(j>i) B_j prod_(j<i) A_j; entries
  // beyond q^(m-1) are zero by degree counting when m states are live.
  std::vector<real> mat(static_cast<std::size_t>(m * (m + 1)), 0);
  for (int col = 0; col < m; ++col) {
    int const i = live[col] / 2, k = live[col] % 2;
    std::vector<real> p(static_cast<std::size_t>(k + 1), 0);
    p[k] = 1;
    for (int j = 0; j < S; ++j)
      if (j != i)
        p = poly_mul(p,
                     j > i ? std::vector<real>(c.b[j], c.b[j] + 3) : std::vector<real>(c.a[j], c.a[j] + 3));
    for (int r = 0; r < int(p.size()); ++r) {
      if (r < m)
        mat[r * (m + 1) + col] = p[r];
      else if (p[r] != 0)
        return false;
    }
  }
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < m; ++col) c.to_df2t[r][live[col]] = mat[r * (m + 1) + col];
  // to_sections column by column: the solution for each unit DF2T state.
  for (int e = 0; e < m; ++e) {
    for (int r = 0; r < m; ++r) mat[r * (m + 1) + m] = r == e ? 1 : 0;
    std::vector<real> w;
    if (!solve(mat, w, m)) return false;
    for (int col = 0; col < m; ++col) c.to_sections[live[col]][e] = w[col];
  }
  return true;
}

// The cascade of (b, a) (normalised by a[0], the same length m + 1, m from
// 1 to 8), or nothing when the factorisation does not reproduce b and a to
// `tolerance` (relative to their largest coefficient) or b is zero.
inline std::optional<lfilter_cascade> lfilter_cascade_of(std::span<lfilter_real const> b,
                                                         std::span<lfilter_real const> a,
                                                         lfilter_real tolerance) {
  using namespace lfs_detail;
  int const m = static_cast<int>(a.size()) - 1;
  if (m < 1 || m > max_order || b.size() != a.size()) return std::nullopt;
  int d = 0;  // leading zeros of b: a delay (zeros at infinity)
  while (d <= m && b[d] == 0) ++d;
  if (d > m) return std::nullopt;
  auto const zr = polynomial_roots(b.subspan(d));
  auto const pr = polynomial_roots(a);
  if (!zr || !pr) return std::nullopt;
  root_set zeros = split_roots(*zr), poles = split_roots(*pr);

  lfilter_cascade c;
  c.order = m;
  c.sections = (m + 1) / 2;
  std::vector<std::pair<quad, quad>> secs;  // (numerator, denominator), in the order found
  // Odd order: a first-order section for the real pole farthest from the
  // unit circle, with the real zero nearest to it (scipy pads a pole and a
  // zero at the origin; this keeps the pair in one section).
  std::optional<std::pair<quad, quad>> first_order;
  if (m % 2 == 1) {
    int best = 0;
    for (int i = 1; i < int(poles.reals.size()); ++i)
      if (circle_distance(poles.reals[i]) > circle_distance(poles.reals[best])) best = i;
    real const p = take_real(poles.reals, best);
    quad const den{{1, -p, 0}};
    quad num{{0, 1, 0}};
    int const zi = nearest_real(zeros.reals, p);
    if (zi >= 0) num = {{1, -take_real(zeros.reals, zi), 0}};
    first_order = std::make_pair(num, den);
  }
  while (poles.size() > 0) {
    // The pole nearest the unit circle, and its partner.
    bool p_real = false;
    int pi = -1;
    real best = std::numeric_limits<real>::infinity();
    for (int i = 0; i < int(poles.pairs.size()); ++i)
      if (circle_distance(poles.pairs[i]) < best) best = circle_distance(poles.pairs[i]), pi = i;
    for (int i = 0; i < int(poles.reals.size()); ++i)
      if (circle_distance(poles.reals[i]) < best)
        best = circle_distance(poles.reals[i]), pi = i, p_real = true;
    quad den;
    cplx p1;
    if (p_real) {  // with the next real pole nearest the unit circle (an even count is left)
      p1 = take_real(poles.reals, pi);
      int p2i = 0;
      for (int i = 1; i < int(poles.reals.size()); ++i)
        if (circle_distance(poles.reals[i]) < circle_distance(poles.reals[p2i])) p2i = i;
      den = quad_of_reals(p1.real(), take_real(poles.reals, p2i));
    } else {
      p1 = poles.pairs[pi];
      poles.pairs.erase(poles.pairs.begin() + pi);
      den = quad_of_pair(p1);
    }
    // The zeros nearest to it: a complex pair, two reals, one real, none.
    quad num;
    int const zr_i = nearest_real(zeros.reals, p1), zp_i = nearest_pair(zeros.pairs, p1);
    bool const use_pair =
        zp_i >= 0 && (zr_i < 0 || std::abs(zeros.pairs[zp_i] - p1) < std::abs(cplx(zeros.reals[zr_i]) - p1));
    if (use_pair) {
      num = quad_of_pair(zeros.pairs[zp_i]);
      zeros.pairs.erase(zeros.pairs.begin() + zp_i);
    } else if (zr_i >= 0) {
      real const z1 = take_real(zeros.reals, zr_i);
      int const z2 = nearest_real(zeros.reals, p1);
      num = z2 >= 0 ? quad_of_reals(z1, take_real(zeros.reals, z2)) : quad_of_real(z1);
    }
    secs.emplace_back(num, den);
  }
  if (zeros.size() != 0) return std::nullopt;  // more zeros than sections hold: not a (b, a) of this order
  if (first_order) secs.push_back(*first_order);
  std::reverse(secs.begin(), secs.end());
  for (int j = 0; j < c.sections; ++j)
    for (int k = 0; k < 3; ++k) c.b[j][k] = secs[j].first.c[k], c.a[j][k] = secs[j].second.c[k];
  for (int k = 0; k < 3; ++k) c.b[0][k] *= b[d];

  // The factorisation reproduces b and a (q-polynomials: b's delay d is in
  // the sections' numerators of fewer than two zeros).
  std::vector<real> pb{1}, pa{1};
  for (int j = 0; j < c.sections; ++j) {
    pb = poly_mul(pb, std::vector<real>(c.b[j], c.b[j] + 3));
    pa = poly_mul(pa, std::vector<real>(c.a[j], c.a[j] + 3));
  }
  if (!close(pb, b, tolerance) || !close(pa, a, tolerance)) return std::nullopt;
  return c;
}

// ||A^(2^s)||_inf over s, with A^0 = I: the peak of a chain of powers.
template <int K, class Chain>
lfilter_real lfilter_power_peak(Chain const& chain) {
  lfilter_real peak = 1;
  for (auto const& p : chain.p)
    for (int r = 0; r < K; ++r) {
      lfilter_real row = 0;
      for (int c = 0; c < K; ++c) row += std::fabs(p.m[r][c]);
      if (row > peak) peak = row;
    }
  return peak;
}

// A state map as the GPU applies it: rows x cols, each entry the sum hi + lo
// of two doubles (the long-double map to its 64 bits).
struct lfilter_state_map {
  int rows = 0, cols = 0;
  double hi[8][8] = {}, lo[8][8] = {};
};

inline lfilter_state_map lfilter_state_map_of(lfilter_real const (&m)[8][8], int rows, int cols) {
  lfilter_state_map r;
  r.rows = rows;
  r.cols = cols;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      r.hi[i][j] = static_cast<double>(m[i][j]);
      r.lo[i][j] = static_cast<double>(m[i][j] - r.hi[i][j]);
    }
  return r;
}

// Row r of a state map applied to v (m.cols values), rounded to T once: a
// compensated dot product (Ogita, Rump and Oishi's Dot2), as accurate as
// one in twice double's precision. The map from a DF2T state to the
// sections' is ill-conditioned for high orders (its entries cancel), so a
// plain dot product in T or even in double would lose digits the sections
// then carry forever; the map back is benign. Error-free products and sums
// need their roundings as written: the device intrinsics forbid
// contraction (host code is compiled without it).
template <class T>
RECUR_HD T lfilter_map_row(lfilter_state_map const& m, int r, T const* v) {
#if defined(__CUDA_ARCH__)
#define RECUR_LFS_MUL(a, b) __dmul_rn(a, b)
#define RECUR_LFS_ADD(a, b) __dadd_rn(a, b)
#define RECUR_LFS_SUB(a, b) __dsub_rn(a, b)
#else
#define RECUR_LFS_MUL(a, b) ((a) * (b))
#define RECUR_LFS_ADD(a, b) ((a) + (b))
#define RECUR_LFS_SUB(a, b) ((a) - (b))
#endif
  double s = 0, c = 0;
  for (int j = 0; j < m.cols; ++j) {
    double const x = static_cast<double>(v[j]);
    double const p = RECUR_LFS_MUL(m.hi[r][j], x);
    double const ep = fma(m.hi[r][j], x, -p);  // p + ep == hi x exactly
    double const t = RECUR_LFS_ADD(s, p);
    double const z = RECUR_LFS_SUB(t, s);
    double const es =
        RECUR_LFS_ADD(RECUR_LFS_SUB(s, RECUR_LFS_SUB(t, z)), RECUR_LFS_SUB(p, z));  // s + p == t + es
    s = t;
    c = fma(m.lo[r][j], x, c + (ep + es));
  }
#undef RECUR_LFS_MUL
#undef RECUR_LFS_ADD
#undef RECUR_LFS_SUB
  return static_cast<T>(s + c);
}

// What the GPU runs for lfilter_system `sys` (order K): the cascade
// (use), its sections rounded to T, and whether the initial and final
// states map (maps; when not, calls with a state keep the companion form).
template <class T, int K>
struct lfilter_sections_plan {
  static constexpr int sections = (K + 1) / 2;
  bool use = false, maps = false;
  sos_system<T, sections> sys{};
  lfilter_state_map to_sections, to_df2t;
};

// The plan for `sys` given its chain of powers (lti_power_chain, as
// dispatch_lti squares them): the cascade when the order is 3 or more, the
// chain's peak exceeds lfilter_section_bound, and the factorisation
// reproduces the coefficients to T's precision; the maps from the sections
// as rounded to T, so that they describe the cascade the GPU runs.
template <class T, int K>
lfilter_sections_plan<T, K> lfilter_plan_sections(lfilter_system<T, K> const& sys,
                                                  lti_power_chain<K> const& chain) {
  lfilter_sections_plan<T, K> p;
  if constexpr (K >= 3) {
    if (lfilter_power_peak<K>(chain) <= lfilter_section_bound) return p;
    lfilter_real b[K + 1], a[K + 1];
    for (int j = 0; j <= K; ++j) b[j] = sys.b[j], a[j] = sys.a[j];
    auto c = lfilter_cascade_of(b, a, std::numeric_limits<T>::epsilon());
    if (!c) return p;
    constexpr int S = lfilter_sections_plan<T, K>::sections;
    for (int j = 0; j < S; ++j)
      for (int k = 0; k < 3; ++k) {
        p.sys.b[j][k] = static_cast<T>(c->b[j][k]);
        p.sys.a[j][k] = static_cast<T>(c->a[j][k]);
        if (!std::isfinite(p.sys.b[j][k]) || !std::isfinite(p.sys.a[j][k])) return p;
        c->b[j][k] = p.sys.b[j][k];
        c->a[j][k] = p.sys.a[j][k];
      }
    p.use = true;
    if (lfilter_cascade_maps(*c)) {
      p.maps = true;
      p.to_sections = lfilter_state_map_of(c->to_sections, 2 * S, K);
      p.to_df2t = lfilter_state_map_of(c->to_df2t, K, 2 * S);
    }
  }
  return p;
}

}  // namespace recur::kernels
