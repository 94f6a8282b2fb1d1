// The warp and block scan collectives (kernels/warp/warp_scan.cuh,
// kernels/block/block_scan.cuh) from small kernels: every block (or warp)
// scans its own segment, inclusive and exclusive, and every thread stores
// both aggregates. Each output is checked against a sequential left fold on
// the host: bitwise for the exact operators (int sum, products of unsigned
// 2x2 matrices mod 2^32 and of signed 3x3 permutation matrices, the last two
// non-commutative), within a tolerance of a double fold for affine maps.
// Every case runs twice and must give the same bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime_api.h>
#include <boost/test/unit_test.hpp>
#include <recur/kernels/block/block_scan.cuh>
#include <recur/kernels/warp/warp_scan.cuh>
#include <recur/ops/affine.hpp>
#include <recur/ops/matrix.hpp>

#include "common/cuda_memory.hpp"

namespace {

using namespace recur;
using kernels::block_scan_algorithm;

// ---- element types: value, operator, host reference

struct plus {
  __host__ __device__ int operator()(int l, int r) const { return l + r; }
};

struct int_sum {
  using T = int;
  using R = int;
  using Op = plus;
  static constexpr char const* name = "int sum";
  static T identity() { return 0; }
  static T draw(std::mt19937& g) { return std::uniform_int_distribution<int>(-1000, 1000)(g); }
  static R widen(T v) { return v; }
  static R combine(R l, R r) { return l + r; }
  static bool matches(T got, R want) { return got == want; }
};

// Unsigned arithmetic is exact modulo 2^32. An odd determinant keeps every
// product invertible mod 2^32, so long chains do not collapse to zero.
struct matrix_u32 {
  using T = ops::matrix<unsigned, 2>;
  using R = T;
  using Op = ops::matrix_product;
  static constexpr char const* name = "2x2 unsigned matrix product";
  static T identity() { return ops::matrix_identity<unsigned, 2>(); }
  static T draw(std::mt19937& g) {
    auto u = [&g] { return unsigned(g()); };
    T m{};
    m.m[0][0] = u() | 1u;  // ad odd, bc even
    m.m[0][1] = u() & ~1u;
    m.m[1][0] = u();
    m.m[1][1] = u() | 1u;
    return m;
  }
  static R widen(T v) { return v; }
  static R combine(R const& l, R const& r) { return Op{}(l, r); }
  static bool matches(T const& got, R const& want) { return got == want; }
};

// Signed permutation matrices in floats: a non-abelian group whose products
// are exact, with a value of 9 words (36 bytes).
struct signed_permutation_f32 {
  using T = ops::matrix<float, 3>;
  using R = T;
  using Op = ops::matrix_product;
  static constexpr char const* name = "3x3 signed permutation product";
  static T identity() { return ops::matrix_identity<float, 3>(); }
  static T draw(std::mt19937& g) {
    int p[3] = {0, 1, 2};
    std::shuffle(p, p + 3, g);
    T m{};
    for (int i = 0; i < 3; ++i) m.m[i][p[i]] = g() % 2 ? 1.0f : -1.0f;
    return m;
  }
  static R widen(T v) { return v; }
  static R combine(R const& l, R const& r) { return Op{}(l, r); }
  static bool matches(T const& got, R const& want) { return got == want; }
};

// Contractive maps (|a| <= 1, |b| <= 1) keep the prefixes bounded, so an
// absolute-plus-relative tolerance fits every element of a long scan.
template <class F>
struct affine_compose {
  using T = ops::affine<F>;
  using R = ops::affine<double>;
  using Op = ops::compose;
  static constexpr char const* name = sizeof(F) == 4 ? "affine<float> compose" : "affine<double> compose";
  static constexpr double tolerance = sizeof(F) == 4 ? 5e-5 : 1e-11;
  static T identity() { return ops::affine_identity<F>(); }
  static T draw(std::mt19937& g) {
    return {std::uniform_real_distribution<F>(0.5, 1)(g), std::uniform_real_distribution<F>(-1, 1)(g)};
  }
  static R widen(T v) { return {double(v.a), double(v.b)}; }
  static R combine(R const& l, R const& r) { return Op{}(l, r); }
  static bool close(double got, double want) {
    return std::abs(got - want) <= tolerance * (1 + std::abs(want));
  }
  static bool matches(T const& got, R const& want) { return close(got.a, want.a) && close(got.b, want.b); }
};

// Values for failure messages. (No fmt in this file: nvcc 13 miscompiles its
// consteval format strings under --expt-relaxed-constexpr.)
void put(std::ostream& os, int v) { os << v; }

template <class F>
void put(std::ostream& os, ops::affine<F> const& m) {
  os << '(' << m.a << ", " << m.b << ')';
}

template <class F, int K>
void put(std::ostream& os, ops::matrix<F, K> const& m) {
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j) os << (j ? " " : i ? "; " : "[") << m.m[i][j];
  os << ']';
}

template <class V>
std::string show(V const& v) {
  std::ostringstream os;
  os.precision(17);
  put(os, v);
  return os.str();
}

char const* name(block_scan_algorithm a) {
  return a == block_scan_algorithm::hillis_steele ? "hillis_steele" : "blelloch";
}

// ---- kernels: inclusive and exclusive scans of the same input (the second
// reusing the temp storage after a barrier), both aggregates per thread.

constexpr int warp_kernel_threads = 128;  // four independent warps per block

template <bool Blelloch, class T, class Op>
__global__ void __launch_bounds__(warp_kernel_threads)
    warp_scan_kernel(T const* in, T* inc, T* exc, T* agg, T identity, Op op) {
  unsigned const lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned const g = blockIdx.x * warp_kernel_threads + threadIdx.x;
  T const v = in[g];
  T a_inc, a_exc;
  if constexpr (Blelloch) {
    using scan = kernels::warp_scan_blelloch<T, Op>;
    __shared__ typename scan::temp_storage ts[warp_kernel_threads / 32];
    inc[g] = scan::inclusive(ts[warp], v, op, lane, a_inc);
    __syncwarp();
    exc[g] = scan::exclusive(ts[warp], v, identity, op, lane, a_exc);
  } else {
    using scan = kernels::warp_scan_hillis_steele<T, Op>;
    inc[g] = scan::inclusive(v, op, lane, a_inc);
    exc[g] = scan::exclusive(v, identity, op, lane, a_exc);
  }
  agg[2 * g] = a_inc;
  agg[2 * g + 1] = a_exc;
}

// Items == 1 goes through the one-value-per-thread functions, more through
// the register-packed ones (thread x holds items x*Items .. x*Items+Items-1).
template <class T, int Block, block_scan_algorithm Alg, int Items, class Op>
__global__ void __launch_bounds__(Block)
    block_scan_kernel(T const* in, T* inc, T* exc, T* agg, T identity, Op op) {
  using scan = kernels::block_scan<T, Block, Op, Alg, Items>;
  __shared__ typename scan::temp_storage ts;
  unsigned const t = blockIdx.x * Block + threadIdx.x;
  unsigned const first = t * Items;
  T a_inc, a_exc;
  if constexpr (Items == 1) {
    T const v = in[first];
    inc[first] = scan::inclusive(ts, v, op, a_inc);
    __syncthreads();
    exc[first] = scan::exclusive(ts, v, identity, op, a_exc);
  } else {
    T x[Items], y[Items];
#pragma unroll
    for (int j = 0; j < Items; ++j) x[j] = y[j] = in[first + j];
    scan::inclusive(ts, x, op, a_inc);
    __syncthreads();
    scan::exclusive(ts, y, identity, op, a_exc);
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      inc[first + j] = x[j];
      exc[first + j] = y[j];
    }
  }
  agg[2 * t] = a_inc;
  agg[2 * t + 1] = a_exc;
}

// ---- host side

using recur_test::cuda_ok;
using recur_test::dbuf;
using recur_test::upload;

template <class Case>
using scan_kernel = void (*)(typename Case::T const*, typename Case::T*, typename Case::T*, typename Case::T*,
                             typename Case::T, typename Case::Op);

// Runs `kernel` on `blocks` blocks of `threads` threads; each segment of
// `segment` consecutive elements is one scan, by segment / items threads
// holding `items` consecutive elements each.
template <class Case>
void check_scan(std::string const& what, scan_kernel<Case> kernel, int blocks, int threads, int segment,
                int items) {
  using T = typename Case::T;
  using R = typename Case::R;
  std::size_t const n = std::size_t(blocks) * threads * items;
  std::size_t const thread_count = std::size_t(blocks) * threads;
  std::mt19937 g(20240611);
  std::vector<T> in(n);
  for (T& v : in) v = Case::draw(g);

  auto const d_in = upload(in);
  dbuf<T> const d_inc(n), d_exc(n), d_agg(2 * thread_count);
  struct results {
    std::vector<T> inc, exc, agg;
  };
  auto run = [&] {
    // Unwritten outputs read as 0xFF bytes.
    for (auto const* d : {&d_inc, &d_exc, &d_agg})
      cuda_ok(cudaMemset(d->p, 0xff, d->size * sizeof(T)), (what + ": cudaMemset").c_str());
    kernel<<<blocks, threads>>>(d_in.p, d_inc.p, d_exc.p, d_agg.p, Case::identity(), typename Case::Op{});
    cuda_ok(cudaGetLastError(), (what + ": launch").c_str());
    cuda_ok(cudaDeviceSynchronize(), (what + ": kernel").c_str());
    return results{d_inc.read(), d_exc.read(), d_agg.read()};
  };
  results const r = run();

  std::size_t bad = 0;
  std::string first;
  auto expect = [&](char const* kind, std::size_t seg, std::size_t i, T const& got, R const& want) {
    if (Case::matches(got, want)) return;
    if (bad++ == 0)
      first = std::string(kind) + " of segment " + std::to_string(seg) + ", element " + std::to_string(i) +
              ": got " + show(got) + ", want " + show(want);
  };
  int const seg_threads = segment / items;
  for (std::size_t s = 0; s < n / segment; ++s) {
    R acc = Case::widen(Case::identity());
    for (std::size_t i = 0; i < std::size_t(segment); ++i) {
      std::size_t const k = s * segment + i;
      expect("exclusive", s, i, r.exc[k], acc);
      acc = Case::combine(acc, Case::widen(in[k]));
      expect("inclusive", s, i, r.inc[k], acc);
    }
    for (std::size_t x = 0; x < std::size_t(seg_threads); ++x) {
      std::size_t const t = s * seg_threads + x;
      expect("inclusive aggregate (thread)", s, x, r.agg[2 * t], acc);
      expect("exclusive aggregate (thread)", s, x, r.agg[2 * t + 1], acc);
    }
  }
  BOOST_TEST(bad == 0u, what << ": " << bad << " mismatches; first: " << first);

  results const again = run();
  bool const same = std::memcmp(r.inc.data(), again.inc.data(), n * sizeof(T)) == 0 &&
                    std::memcmp(r.exc.data(), again.exc.data(), n * sizeof(T)) == 0 &&
                    std::memcmp(r.agg.data(), again.agg.data(), r.agg.size() * sizeof(T)) == 0;
  BOOST_TEST(same, what << ": a second run gave different bytes");
}

template <bool Blelloch, class Case>
void check_warp() {
  using T = typename Case::T;
  using Op = typename Case::Op;
  check_scan<Case>(std::string(Blelloch ? "warp_scan_blelloch " : "warp_scan_hillis_steele ") + Case::name,
                   warp_scan_kernel<Blelloch, T, Op>, 3, warp_kernel_threads, 32, 1);
}

template <class Case, int Block, block_scan_algorithm Alg, int Items>
void check_block() {
  using T = typename Case::T;
  using Op = typename Case::Op;
  std::ostringstream what;
  what << "block_scan<" << Block << ", " << name(Alg) << ", " << Items << "> " << Case::name;
  check_scan<Case>(what.str(), block_scan_kernel<T, Block, Alg, Items, Op>, 5, Block, Block * Items, Items);
}

constexpr auto hs = block_scan_algorithm::hillis_steele;
constexpr auto blelloch = block_scan_algorithm::blelloch;

}  // namespace

BOOST_AUTO_TEST_SUITE(collectives)

BOOST_AUTO_TEST_CASE(warp_hillis_steele) {
  check_warp<false, int_sum>();
  check_warp<false, matrix_u32>();
  check_warp<false, signed_permutation_f32>();
  check_warp<false, affine_compose<float>>();
}

BOOST_AUTO_TEST_CASE(warp_blelloch) {
  check_warp<true, int_sum>();
  check_warp<true, matrix_u32>();
  check_warp<true, signed_permutation_f32>();
  check_warp<true, affine_compose<float>>();
}

BOOST_AUTO_TEST_CASE(block_int_sum) {
  check_block<int_sum, 32, hs, 1>();
  check_block<int_sum, 64, hs, 3>();
  check_block<int_sum, 256, hs, 4>();
  check_block<int_sum, 1024, hs, 7>();
  check_block<int_sum, 32, blelloch, 4>();
  check_block<int_sum, 64, blelloch, 1>();
  check_block<int_sum, 256, blelloch, 7>();
  check_block<int_sum, 1024, blelloch, 1>();
  check_block<int_sum, 1024, blelloch, 3>();
}

BOOST_AUTO_TEST_CASE(block_matrix_product) {
  check_block<matrix_u32, 32, hs, 1>();
  check_block<matrix_u32, 64, hs, 3>();
  check_block<matrix_u32, 256, hs, 4>();
  check_block<matrix_u32, 1024, hs, 7>();
  check_block<matrix_u32, 32, blelloch, 4>();
  check_block<matrix_u32, 64, blelloch, 1>();
  check_block<matrix_u32, 256, blelloch, 7>();
  check_block<matrix_u32, 1024, blelloch, 1>();
  check_block<matrix_u32, 1024, blelloch, 3>();
  check_block<signed_permutation_f32, 64, hs, 3>();
  check_block<signed_permutation_f32, 256, blelloch, 3>();
  check_block<signed_permutation_f32, 1024, blelloch, 1>();
}

BOOST_AUTO_TEST_CASE(block_affine) {
  check_block<affine_compose<float>, 256, hs, 4>();
  check_block<affine_compose<float>, 1024, hs, 1>();
  check_block<affine_compose<float>, 64, blelloch, 3>();
  check_block<affine_compose<float>, 1024, blelloch, 4>();
  check_block<affine_compose<double>, 32, hs, 7>();
  check_block<affine_compose<double>, 256, blelloch, 3>();
}

BOOST_AUTO_TEST_SUITE_END()
