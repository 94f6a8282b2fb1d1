#pragma once
// A host emulation of the LTI agent (kernels/agent/agent_lti.cuh) on one
// sequence of unit stride: the same tiles, per-thread runs, lane and warp
// scans with the same rounded powers of A, the same look-back fold and
// determination, each matrix product an fma chain in the kernel's order. It
// reproduces the kernel's rounding errors (not its bits: nvcc contracts the
// System's step into fmas, the host compiler may not, which changes the
// per-sample errors but not how the scan amplifies them), so the CPU tests
// can measure how the scan over a state matrix amplifies them
// (test_lti_emulation.cpp). Test code, no CUDA header.
//
//   recur_test::emulate_lti<float>(sys, x, y, n, zi, zf);           // dispatch_lti's shape
//   recur_test::emulate_lti_shape<float, shape, W>(sys, x, y, n, zi, zf);
//   recur_test::emulate_lfilter<float>(sys, x, y, n, zi, zf);       // dispatch_lfilter's form
//
// W is the type of the composed maps (the powers, the runs' states between
// the lanes, the warps and the tiles): T as in the kernel, or a wider type
// to measure what a wider accumulator would give (each thread's incoming
// state is rounded to T before it re-runs its samples).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <recur/kernels/dispatch/lfilter_sections.cuh>
#include <recur/kernels/thread/lti_systems.cuh>
#include <recur/kernels/tuning/tuning_lti.cuh>

namespace recur_test {

namespace emulation_detail {

template <class W>
W fused(W a, W b, W c) {
  return std::fma(a, b, c);
}

template <class W, int K>
struct vec {
  W v[K] = {};
};

template <class W, int K>
struct mat {
  W m[K][K];
};

// agent_lti::mat_mul_add: v <- m v + w, rows in order, each an fma chain from w.
template <class System, class W, int K>
vec<W, K> mat_mul_add(W const (&m)[K][K], vec<W, K> const& v, vec<W, K> const& w) {
  vec<W, K> r;
  for (int i = 0; i < K; ++i) {
    W acc = w.v[i];
    for (int j = 0; j < K; ++j)
      if (recur::kernels::lti_nonzero<System>(i, j)) acc = fused(m[i][j], v.v[j], acc);
    r.v[i] = acc;
  }
  return r;
}

// agent_lti::mul: v <- m v, the first product rounded, then fmas.
template <class System, class W, int K>
vec<W, K> mat_mul(W const (&m)[K][K], vec<W, K> const& v) {
  vec<W, K> r;
  for (int i = 0; i < K; ++i) {
    W acc = W(0);
    bool first = true;
    for (int j = 0; j < K; ++j)
      if (recur::kernels::lti_nonzero<System>(i, j)) {
        acc = first ? m[i][j] * v.v[j] : fused(m[i][j], v.v[j], acc);
        first = false;
      }
    r.v[i] = acc;
  }
  return r;
}

}  // namespace emulation_detail

// agent_lti's arithmetic with tile shape Shape (lti_shape) on x[0, n), y may
// be x; zi and zf K values or null.
template <class T, class Shape, class W = T, class System>
void emulate_lti_shape(System const& sys, T const* x, T* y, std::int64_t n, T const* zi, T* zf) {
  using namespace emulation_detail;
  namespace k = recur::kernels;
  constexpr int K = System::K, Block = Shape::block, Items = Shape::items, warps = Block / 32;
  constexpr int tile_items = Block * Items, log_items = k::lti_log2(Items), log_block = k::lti_log2(Block),
                levels = log_block + 1;
  constexpr bool correct = Shape::correct && std::is_same_v<W, T>;
  using V = vec<W, K>;

  // The kernel parameters: powers (rounded to W), responses, forget.
  k::lti_power_chain<K> const chain(sys, log_items + levels - 1);
  std::vector<mat<W, K>> pow(levels);
  for (int s = 0; s < levels; ++s)
    for (int r = 0; r < K; ++r)
      for (int c = 0; c < K; ++c) pow[s].m[r][c] = k::lti_narrow<W>(chain.p[log_items + s].m[r][c]);
  bool const forget = chain.p[log_items + levels - 1].template zero_in<T>();
  std::vector<T> resp(correct ? Items * K : 0);
  if (correct) {
    auto const hs = sys.template cast<long double>();
    for (int c = 0; c < K; ++c) {
      long double s[K] = {};
      s[c] = 1;
      for (int j = 0; j < Items; ++j) resp[j * K + c] = k::lti_narrow<T>(hs.step(s, 0.0L));
    }
  }

  V carry;  // the previous tile's outgoing state (its inclusive state)
  std::vector<T> run(tile_items);
  std::vector<V> inc(Block), excl(Block);
  for (std::int64_t i0 = 0; i0 < n; i0 += tile_items) {
    int const valid = static_cast<int>(std::min<std::int64_t>(tile_items, n - i0));
    for (int q = 0; q < tile_items; ++q) run[q] = q < valid ? x[i0 + q] : T(0);
    T zf0[K] = {};  // correct: the zero-state run's state after the sequence's last sample
    int const last_t = i0 + tile_items >= n ? (valid - 1) / Items : -1, last_j = (valid - 1) % Items;
    // Pre-computation: each thread's run from a zero state.
    for (int t = 0; t < Block; ++t) {
      T z[K] = {};
      for (int j = 0; j < Items; ++j) {
        T const y0 = sys.step(z, run[t * Items + j]);
        if (correct) run[t * Items + j] = y0;
        if (correct && t == last_t && j == last_j) std::copy(z, z + K, zf0);
      }
      for (int e = 0; e < K; ++e) inc[t].v[e] = W(z[e]);
    }
    // Lane scans (Kogge-Stone, pow[S] at step S), per warp.
    auto scan = [&](V* v, int lanes, int base, int steps) {
      for (int s = 0; s < steps; ++s) {
        int const d = 1 << s;
        std::vector<V> const old(v, v + lanes);
        for (int l = d; l < lanes; ++l) v[l] = mat_mul_add<System>(pow[base + s].m, old[l - d], old[l]);
      }
    };
    for (int w = 0; w < warps; ++w) scan(&inc[w * 32], 32, 0, 5);
    for (int t = 0; t < Block; ++t) excl[t] = t % 32 == 0 ? V{} : inc[t - 1];
    // Warp 0: the warps' totals, the tile's aggregate, its incoming state.
    std::vector<V> tot(32);
    for (int w = 0; w < warps; ++w) tot[w] = inc[w * 32 + 31];
    scan(tot.data(), 32, 5, log_block - 5);
    V const agg = tot[warps - 1];
    V s_in;
    if (i0 > 0)
      s_in = carry;
    else if (zi)
      for (int e = 0; e < K; ++e) s_in.v[e] = W(zi[e]);
    carry = forget ? agg : mat_mul_add<System>(pow[log_block].m, s_in, agg);
    auto power = [&](V s, int base, int bits, unsigned q) {
      for (int b = 0; b < bits; ++b)
        if (q & (1u << b)) s = mat_mul<System>(pow[base + b].m, s);
      return s;
    };
    std::vector<V> warp_in(warps);
    for (int w = 0; w < warps; ++w) {
      warp_in[w] = power(s_in, 5, log_block - 5, unsigned(w));
      if (w > 0)
        for (int e = 0; e < K; ++e) warp_in[w].v[e] += tot[w - 1].v[e];
    }
    // Determination.
    for (int t = 0; t < Block; ++t) {
      V s = power(warp_in[t / 32], 0, 5, unsigned(t % 32));
      for (int e = 0; e < K; ++e) s.v[e] += excl[t].v[e];
      T st[K];
      for (int e = 0; e < K; ++e) st[e] = T(s.v[e]);
      if (correct) {
        for (int j = 0; j < Items; ++j) {
          T acc = run[t * Items + j];
          for (int e = 0; e < K; ++e) acc = fused(resp[j * K + e], st[e], acc);
          run[t * Items + j] = acc;
        }
        if (zf && t == last_t) {
          for (int j = 0; j <= last_j; ++j) (void)sys.step(st, T(0));
          for (int e = 0; e < K; ++e) zf[e] = st[e] + zf0[e];
        }
      } else {
        for (int j = 0; j < Items; ++j) {
          run[t * Items + j] = sys.step(st, run[t * Items + j]);
          if (zf && t == last_t && j == last_j) std::copy(st, st + K, zf);
        }
      }
    }
    for (int q = 0; q < valid; ++q) y[i0 + q] = run[q];
  }
  if (n == 0 && zf)
    for (int e = 0; e < K; ++e) zf[e] = zi ? zi[e] : T(0);
}

// dispatch_lti's tiles for one long sequence: the forgetting shape when its
// tile's power of A is zero in T, else the long-memory shape.
template <class T, class W = T, class System>
void emulate_lti(System const& sys, T const* x, T* y, std::int64_t n, T const* zi, T* zf) {
  namespace k = recur::kernels;
  constexpr int K = System::K;
  using forgetting = typename k::lti_policy<T, K>::forgetting;
  using long_memory = typename k::lti_policy<T, K>::long_memory;
  constexpr int log_forgetting = k::lti_log2(forgetting::block * forgetting::items);
  k::lti_power_chain<K> const chain(sys, log_forgetting);
  if (chain.p[log_forgetting].template zero_in<T>())
    emulate_lti_shape<T, forgetting, W>(sys, x, y, n, zi, zf);
  else
    emulate_lti_shape<T, long_memory, W>(sys, x, y, n, zi, zf);
}

// The companion system of (b, a) as recur::device::lfilter builds it: b
// and a normalised by a[0] in double, rounded to T.
template <class T, int K>
recur::kernels::lfilter_system<T, K> lfilter_companion(T const* b, T const* a) {
  recur::kernels::lfilter_system<T, K> s;
  for (int j = 0; j <= K; ++j) {
    s.b[j] = static_cast<T>(double(b[j]) / double(a[0]));
    s.a[j] = static_cast<T>(double(a[j]) / double(a[0]));
  }
  return s;
}

// dispatch_lfilter's form for one long sequence (tiles): the companion
// system, or the cascade of lfilter_plan_sections with zi and zf mapped by
// lfilter_map_row (through section states in T, as the GPU's temporary
// storage holds them). `sections` (may be null) tells which ran.
template <class T, int K>
void emulate_lfilter(recur::kernels::lfilter_system<T, K> const& sys, T const* x, T* y, std::int64_t n,
                     T const* zi, T* zf, bool* sections = nullptr) {
  namespace k = recur::kernels;
  using plan_t = k::lfilter_sections_plan<T, K>;
  plan_t const plan =
      k::lfilter_plan_sections<T, K>(sys, k::lti_power_chain<K>(sys, k::lti_power_top<T, K>()));
  bool const use = n > 0 && plan.use && (plan.maps || (!zi && !zf));
  if (sections) *sections = use;
  if (!use) return emulate_lti<T>(sys, x, y, n, zi, zf);
  constexpr int KS = 2 * plan_t::sections;
  T w[KS] = {};
  if (zi)
    for (int r = 0; r < KS; ++r) w[r] = k::lfilter_map_row(plan.to_sections, r, zi);
  emulate_lti<T>(plan.sys, x, y, n, zi ? w : nullptr, zf ? w : nullptr);
  if (zf)
    for (int r = 0; r < K; ++r) zf[r] = k::lfilter_map_row(plan.to_df2t, r, w);
}

}  // namespace recur_test
