#pragma once
// The systems of the LTI recurrences (kernels/dispatch/dispatch_lti.cuh) and
// the long-double state matrix of a system with its powers: plain C++ (host
// and device), no CUDA header needed, so host code and the CPU tests use the
// same steps and the same powers the kernels do.
//
// A System provides
//   static constexpr int K;                          // state values
//   template <class U> RECUR_HD U step(U (&s)[K], U x) const;
//   template <class U> System<U> cast() const;       // coefficients in U
// returning y_i and updating s in place; its coefficients are stored in T
// and converted to U, so the host can run the same step in long double to
// build A (one column per unit state). It may declare
//   static constexpr bool nonzero(int i, int j);
// when entry (i, j) of A and of its powers is zero for every coefficient
// value (lti_nonzero).

#include <cstddef>
#include <limits>
#include <vector>

#include <recur/config.hpp>

namespace recur::kernels {

constexpr int lti_log2(int v) { return v <= 1 ? 0 : 1 + lti_log2(v / 2); }

// Whether entry (i, j) of the powers of a System's state matrix can be
// nonzero: a System may declare `static constexpr bool nonzero(int, int)`
// (a cascade's matrix is block lower triangular, and so are its powers:
// the products skip the other entries at compile time).
template <class System>
constexpr bool lti_nonzero(int i, int j) {
  if constexpr (requires { System::nonzero(0, 0); })
    return System::nonzero(i, j);
  else
    return true;
}

// Unrolled in device code; the host compiler (which also compiles the steps,
// to build the state matrix) does not know the pragma.
#if defined(__CUDA_ARCH__)
#define RECUR_LTI_UNROLL _Pragma("unroll")
#else
#define RECUR_LTI_UNROLL
#endif

// --- systems ----------------------------------------------------------------

template <class T, int Order>
struct lfilter_system {
  static constexpr int K = Order;
  T b[K + 1];  // normalised by a[0]
  T a[K + 1];  // normalised, a[0] == 1 (unused)
  template <class U>
  RECUR_HD U step(U (&z)[K], U x) const {
    U const y = z[0] + U(b[0]) * x;
    RECUR_LTI_UNROLL
    for (int j = 0; j + 1 < K; ++j) z[j] = z[j + 1] + x * U(b[j + 1]) - y * U(a[j + 1]);
    z[K - 1] = x * U(b[K]) - y * U(a[K]);
    return y;
  }
  template <class U>
  lfilter_system<U, Order> cast() const {
    lfilter_system<U, Order> r;
    for (int j = 0; j <= K; ++j) r.b[j] = U(b[j]), r.a[j] = U(a[j]);
    return r;
  }
};

// y = b0 x with no state (order 0): one dummy state value that stays 0.
template <class T>
struct gain_system {
  static constexpr int K = 1;
  T b0;
  template <class U>
  RECUR_HD U step(U (&)[K], U x) const {
    return U(b0) * x;
  }
  template <class U>
  gain_system<U> cast() const {
    return {U(b0)};
  }
};

template <class T, int Sections>
struct sos_system {
  static constexpr int K = 2 * Sections;
  // Section i's state depends on sections up to i only.
  static constexpr bool nonzero(int i, int j) { return j / 2 <= i / 2; }
  T b[Sections][3];  // each section normalised by its a0
  T a[Sections][3];
  template <class U>
  RECUR_HD U step(U (&z)[K], U x) const {
    U v = x;
    RECUR_LTI_UNROLL
    for (int j = 0; j < Sections; ++j) {
      U const y = z[2 * j] + U(b[j][0]) * v;
      z[2 * j] = z[2 * j + 1] + v * U(b[j][1]) - y * U(a[j][1]);
      z[2 * j + 1] = v * U(b[j][2]) - y * U(a[j][2]);
      v = y;
    }
    return v;
  }
  template <class U>
  sos_system<U, Sections> cast() const {
    sos_system<U, Sections> r;
    for (int j = 0; j < Sections; ++j)
      for (int c = 0; c < 3; ++c) r.b[j][c] = U(b[j][c]), r.a[j][c] = U(a[j][c]);
    return r;
  }
};

template <class T, int Order>
struct order_k_system {
  static constexpr int K = Order;
  T a[K];  // a_1 .. a_K
  template <class U>
  RECUR_HD U step(U (&h)[K], U x) const {
    U p = U(a[0]) * h[0];
    RECUR_LTI_UNROLL
    for (int j = 1; j < K; ++j) p += U(a[j]) * h[j];
    U const y = p + x;
    RECUR_LTI_UNROLL
    for (int j = K - 1; j > 0; --j) h[j] = h[j - 1];
    h[0] = y;
    return y;
  }
  template <class U>
  order_k_system<U, Order> cast() const {
    order_k_system<U, Order> r;
    for (int j = 0; j < K; ++j) r.a[j] = U(a[j]);
    return r;
  }
};

template <class T, int Order>
struct predictor_system {
  static constexpr int K = Order;
  T c[K];  // c_1 .. c_K
  template <class U>
  RECUR_HD U step(U (&h)[K], U x) const {
    U p = U(c[0]) * h[0];
    RECUR_LTI_UNROLL
    for (int j = 1; j < K; ++j) p += U(c[j]) * h[j];
    RECUR_LTI_UNROLL
    for (int j = K - 1; j > 0; --j) h[j] = h[j - 1];
    h[0] = x;
    return x - p;
  }
  template <class U>
  predictor_system<U, Order> cast() const {
    predictor_system<U, Order> r;
    for (int j = 0; j < K; ++j) r.c[j] = U(c[j]);
    return r;
  }
};

// --- the state matrix -------------------------------------------------------

// long double -> T, with the values too small for T's smallest denormal
// (half of it or less: those round to zero) given as zero without the
// conversion. The result is the same; the point is the host's time: on x86
// an x87 conversion that underflows takes a microcode assist (hundreds of
// cycles), and the high powers of a decaying A are full of such values
// (A^4096 of a filter with poles at 0.9 holds entries near 1e-188).
template <class T>
inline T lti_narrow(long double v) {
  long double const m = v < 0 ? -v : v;
  if (m <= static_cast<long double>(std::numeric_limits<T>::denorm_min()) / 2) return v < 0 ? -T(0) : T(0);
  return static_cast<T>(v);
}

// The state matrix A of a system in long double, and its powers.
template <int K>
struct lti_matrix {
  using H = long double;
  H m[K][K];
  template <class System>
  explicit lti_matrix(System const& sys) {
    // Extended precision because squaring a non-normal A (poles clustered
    // near the unit circle) commits errors of order eps ||A^p||^2, not
    // eps ||A^(2p)||; 11 more bits than double on x86 keep that below f64's
    // own rounding for filters of modest gain.
    auto const hs = sys.template cast<H>();
    for (int c = 0; c < K; ++c) {  // column c: one zero sample from unit state c
      H s[K] = {};
      s[c] = 1;
      (void)hs.step(s, H(0));
      for (int r = 0; r < K; ++r) m[r][c] = s[r];
    }
  }
  // Structural zeros (lti_nonzero) are skipped: a sum that starts at +0
  // is unchanged by adding zeros, so the results are those of the full
  // product (8 x 8 long double squarings are a few us of host time each).
  template <class System>
  void square() {
    H q[K][K] = {};
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c)
        if (lti_nonzero<System>(r, c))
          for (int j = 0; j < K; ++j)
            if (lti_nonzero<System>(r, j) && lti_nonzero<System>(j, c)) q[r][c] += m[r][j] * m[j][c];
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c) m[r][c] = q[r][c];
  }
  template <class T>
  bool zero_in() const {
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c)
        if (lti_narrow<T>(m[r][c]) != T(0)) return false;
    return true;
  }
};

// A, A^2, A^4, ..., A^(2^top) by repeated squaring: the powers every tile
// shape needs (agent_lti's pow[s] = A^(Items 2^s) is entry log2(Items) + s),
// computed once per call (an 8 x 8 squaring in long double is a few us of
// host time).
template <int K>
struct lti_power_chain {
  std::vector<lti_matrix<K>> p;
  template <class System>
  lti_power_chain(System const& sys, int top) {
    p.reserve(static_cast<std::size_t>(top) + 1);
    p.emplace_back(sys);
    for (int i = 1; i <= top; ++i) {
      p.push_back(p.back());
      p.back().template square<System>();
    }
  }
};

}  // namespace recur::kernels
