// recur::device::scan: the device-wide scan over any associative operator.
// Every output element is checked against a sequential host fold, with exact
// (unsigned, wrap-around) operators, commutative and not, whose values take
// every status-record path (8- and 16-byte packed words, records of several
// tagged words); floating-point sums for reproducibility and accuracy.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/dispatch_scan.cuh>

#include "common/cuda_memory.hpp"
#include "common/layouts.hpp"

namespace {

using recur::layout;
using recur::device::scan_options;

struct plus_u32 {
  __host__ __device__ std::uint32_t operator()(std::uint32_t l, std::uint32_t r) const { return l + r; }
};
struct plus_f32 {
  __host__ __device__ float operator()(float l, float r) const { return l + r; }
};

// x -> a x + b modulo 2^32, composed in scan order: 8 bytes, not commutative.
struct affine_u32 {
  std::uint32_t a, b;
  bool operator==(affine_u32 const&) const = default;
};
struct compose_u32 {
  __host__ __device__ affine_u32 operator()(affine_u32 l, affine_u32 r) const {
    return {r.a * l.a, r.a * l.b + r.b};
  }
};

// affine_u32 with Pad words of padding (12, 16 and 24 bytes; 16, 20 and 28
// segmented: the sizes nvcc once miscompiled the look-back's fold for).
template <int Pad>
struct affine_pad_u32 {
  std::uint32_t a, b, pad[Pad];
  bool operator==(affine_pad_u32 const&) const = default;
};
template <int Pad>
struct compose_pad_u32 {
  __host__ __device__ affine_pad_u32<Pad> operator()(affine_pad_u32<Pad> l, affine_pad_u32<Pad> r) const {
    affine_pad_u32<Pad> o{};
    o.a = r.a * l.a;
    o.b = r.a * l.b + r.b;
    return o;
  }
};

// K x K matrices modulo 2^32, scan order (l first: the product r * l).
template <int K>
struct mat_u32 {
  std::uint32_t m[K][K];
  bool operator==(mat_u32 const&) const = default;
};
template <int K>
struct matmul_u32 {
  __host__ __device__ mat_u32<K> operator()(mat_u32<K> const& l, mat_u32<K> const& r) const {
    mat_u32<K> p{};
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) {
        std::uint32_t s = 0;
        for (int q = 0; q < K; ++q) s += r.m[i][q] * l.m[q][j];
        p.m[i][j] = s;
      }
    return p;
  }
};

template <class T>
T random_value(std::mt19937& g);
template <>
std::uint32_t random_value(std::mt19937& g) {
  return static_cast<std::uint32_t>(g());
}
template <>
float random_value(std::mt19937& g) {
  return std::uniform_real_distribution<float>(-1, 1)(g);
}
template <>
affine_u32 random_value(std::mt19937& g) {
  return {static_cast<std::uint32_t>(g() | 1u), static_cast<std::uint32_t>(g())};
}
template <class T>
requires requires(T t) { t.pad; }
T random_value(std::mt19937& g) {
  T v{};
  v.a = static_cast<std::uint32_t>(g() | 1u);
  v.b = static_cast<std::uint32_t>(g());
  return v;
}
template <int K>
mat_u32<K> random_mat(std::mt19937& g) {
  mat_u32<K> m{};
  for (auto& row : m.m)
    for (auto& x : row) x = static_cast<std::uint32_t>(g() % 7);
  return m;
}
template <>
mat_u32<2> random_value(std::mt19937& g) {
  return random_mat<2>(g);
}
template <>
mat_u32<3> random_value(std::mt19937& g) {
  return random_mat<3>(g);
}

using recur_test::extent;

template <class T, class Op>
std::vector<T> reference(std::vector<T> const& in, layout const& lay, Op op, scan_options<T> const& opt) {
  std::vector<T> out = in;
  for (std::int64_t k = 0; k < lay.count; ++k) {
    T acc{};
    bool has = opt.has_init;
    if (has) acc = opt.init;
    for (std::int64_t i = 0; i < lay.n; ++i) {
      std::int64_t const o = lay.offset(i, k);
      T const x = in[o];
      if (opt.exclusive) out[o] = acc;
      acc = has ? op(acc, x) : x;
      has = true;
      if (!opt.exclusive) out[o] = acc;
    }
  }
  return out;
}

// shift: the data start `shift` bytes past cudaMalloc's alignment (a
// multiple of 4: single sequences then take the agent's scalar path instead
// of its 16-byte vector path).
template <class T, class Op>
std::vector<T> run_scan(std::vector<T> const& in, layout const& lay, Op op, scan_options<T> const& opt,
                        bool in_place = false, std::size_t shift = 0) {
  std::size_t const bytes = in.size() * sizeof(T);
  char* base_in = nullptr;
  char* base_out = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&base_in, bytes + sizeof(T) + shift));
  T* const d_in = reinterpret_cast<T*>(base_in + shift);
  T* d_out = nullptr;
  RECUR_TEST_CUDA_OK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
  if (in_place) {
    d_out = d_in;
  } else {
    RECUR_TEST_CUDA_OK(cudaMalloc(&base_out, bytes + sizeof(T) + shift));
    d_out = reinterpret_cast<T*>(base_out + shift);
    RECUR_TEST_CUDA_OK(
        cudaMemcpy(d_out, in.data(), bytes, cudaMemcpyHostToDevice));  // gaps keep their values
  }
  std::size_t temp_bytes = 0;
  RECUR_TEST_CUDA_OK(recur::device::scan<T>(nullptr, temp_bytes, d_in, d_out, lay, op, opt));
  void* temp = nullptr;
  RECUR_TEST_CUDA_OK(cudaMalloc(&temp, temp_bytes));
  RECUR_TEST_CUDA_OK(recur::device::scan<T>(temp, temp_bytes, d_in, d_out, lay, op, opt));
  RECUR_TEST_CUDA_OK(cudaDeviceSynchronize());
  std::vector<T> out(in.size());
  RECUR_TEST_CUDA_OK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
  RECUR_TEST_CUDA_OK(cudaFree(temp));
  RECUR_TEST_CUDA_OK(cudaFree(base_in));
  if (!in_place) RECUR_TEST_CUDA_OK(cudaFree(base_out));
  return out;
}

template <class T, class Op>
void check_exact(layout const& lay, Op op, scan_options<T> const& opt, bool in_place = false,
                 std::size_t shift = 0) {
  std::mt19937 g(static_cast<unsigned>(lay.n * 31 + lay.count));
  std::vector<T> in(static_cast<std::size_t>(extent(lay)));
  for (auto& x : in) x = random_value<T>(g);
  auto const want = reference(in, lay, op, opt);
  auto const got = run_scan(in, lay, op, opt, in_place, shift);
  std::int64_t bad = 0, first_bad = -1;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (!(got[i] == want[i]) && bad++ == 0) first_bad = static_cast<std::int64_t>(i);
  BOOST_TEST(bad == 0, "n " << lay.n << " count " << lay.count << " strides " << lay.element_stride << "/"
                            << lay.batch_stride << (opt.exclusive ? " exclusive" : " inclusive")
                            << (opt.has_init ? " init" : "") << (shift ? " shifted" : "") << ": " << bad
                            << " wrong, first at " << first_bad);
}

// Initial values of the matrix scans.
std::mt19937 g_init(2026);

std::vector<std::int64_t> const lengths = {1,   2,    3,    31,   32,   33,     255,    256,
                                           257, 4095, 4096, 4097, 8191, 100003, 1 << 20};

}  // namespace

BOOST_AUTO_TEST_SUITE(device_scan)

BOOST_AUTO_TEST_CASE(single_sequence_every_status_path) {
  for (std::int64_t n : lengths) {
    check_exact<std::uint32_t>(layout::contiguous(n), plus_u32{}, {});
    check_exact<std::uint32_t>(layout::contiguous(n), plus_u32{}, {true, true, 7u});
    check_exact<affine_u32>(layout::contiguous(n), compose_u32{}, {});
    check_exact<affine_u32>(layout::contiguous(n), compose_u32{}, {true, true, {3u, 5u}});
    check_exact<affine_u32>(layout::contiguous(n), compose_u32{}, {false, true, {3u, 5u}});
    check_exact<mat_u32<2>>(layout::contiguous(n), matmul_u32<2>{}, {});
    check_exact<mat_u32<3>>(layout::contiguous(n), matmul_u32<3>{}, {});
    check_exact<mat_u32<3>>(layout::contiguous(n), matmul_u32<3>{}, {true, true, random_mat<3>(g_init)});
    check_exact<mat_u32<3>>(layout::contiguous(n), matmul_u32<3>{}, {false, true, random_mat<3>(g_init)});
  }
}

// Single sequences whose data are not 16-byte aligned run the scalar path
// (aligned ones move whole tiles in 16-byte chunks); in place too.
BOOST_AUTO_TEST_CASE(single_sequence_unaligned) {
  for (std::int64_t n : {std::int64_t{4097}, std::int64_t{100003}, std::int64_t{1} << 20}) {
    check_exact<std::uint32_t>(layout::contiguous(n), plus_u32{}, {}, false, 4);
    check_exact<std::uint32_t>(layout::contiguous(n), plus_u32{}, {true, true, 7u}, true, 8);
    check_exact<affine_u32>(layout::contiguous(n), compose_u32{}, {true, true, {3u, 5u}}, false, 8);
    check_exact<mat_u32<3>>(layout::contiguous(n), matmul_u32<3>{}, {true, true, random_mat<3>(g_init)},
                            false, 4);
    check_exact<mat_u32<3>>(layout::contiguous(n), matmul_u32<3>{}, {}, true, 12);
  }
}

BOOST_AUTO_TEST_CASE(long_sequences_cross_many_tiles) {
  for (std::int64_t n : {std::int64_t{1} << 24, (std::int64_t{1} << 24) + 12345}) {
    check_exact<std::uint32_t>(layout::contiguous(n), plus_u32{}, {true, true, 1u});
    check_exact<affine_u32>(layout::contiguous(n), compose_u32{}, {});
  }
  check_exact<mat_u32<3>>(layout::contiguous(3 << 20), matmul_u32<3>{}, {});
}

BOOST_AUTO_TEST_CASE(batches_in_every_layout) {
  struct shape {
    std::int64_t n, count;
  };
  for (auto [n, count] : {shape{1, 5}, shape{3, 1000}, shape{33, 77}, shape{4097, 9}, shape{1000, 1000},
                          shape{65536, 40}, shape{5, 100003}}) {
    for (layout lay : {layout::contiguous(n, count), layout::interleaved(n, count),
                       layout::strided(n, count, 2, 2 * n + 3)}) {
      check_exact<std::uint32_t>(lay, plus_u32{}, {});
      check_exact<affine_u32>(lay, compose_u32{}, {true, true, {3u, 5u}});
      check_exact<affine_u32>(lay, compose_u32{}, {false, true, {3u, 5u}});
      check_exact<mat_u32<2>>(lay, matmul_u32<2>{}, {true, true, {{{1u, 2u}, {3u, 4u}}}});
    }
  }
}

// Segmented scans of padded values over sequences of many tiles: nvcc 13.0
// unrolled the look-back's fold loop wrongly for segmented values of 16, 20
// and 28 bytes (whole tiles wrong from a sequence's sixth tile on; found
// through integer DPCM's order-1 decode); agent_scan.cuh's scan_fold keeps
// that loop rolled.
BOOST_AUTO_TEST_CASE(segmented_padded_values) {
  for (layout lay :
       {layout::contiguous(20000, 3), layout::contiguous(100003, 3), layout::interleaved(70001, 2)}) {
    check_exact<affine_pad_u32<1>>(lay, compose_pad_u32<1>{}, {});
    check_exact<affine_pad_u32<2>>(lay, compose_pad_u32<2>{}, {});
    check_exact<affine_pad_u32<4>>(lay, compose_pad_u32<4>{}, {});
  }
  check_exact<affine_pad_u32<1>>(layout::contiguous(1 << 20), compose_pad_u32<1>{}, {});
}

BOOST_AUTO_TEST_CASE(in_place) {
  check_exact<affine_u32>(layout::contiguous(1 << 20), compose_u32{}, {}, true);
  check_exact<std::uint32_t>(layout::contiguous(5000, 300), plus_u32{}, {true, true, 2u}, true);
}

// One initial value per sequence (device memory), and the reduction.
BOOST_AUTO_TEST_CASE(per_sequence_inits_and_reduce) {
  for (layout lay : {layout::contiguous(4097, 9), layout::interleaved(33, 77), layout::contiguous(100003, 1),
                     layout::strided(5000, 3, 2, 10007)}) {
    std::mt19937 g(static_cast<unsigned>(lay.n + lay.count));
    std::vector<affine_u32> in(static_cast<std::size_t>(extent(lay))), inits(lay.count);
    for (auto& x : in) x = random_value<affine_u32>(g);
    for (auto& x : inits) x = random_value<affine_u32>(g);
    affine_u32* d_inits = nullptr;
    RECUR_TEST_CUDA_OK(cudaMalloc(&d_inits, inits.size() * sizeof(affine_u32)));
    RECUR_TEST_CUDA_OK(
        cudaMemcpy(d_inits, inits.data(), inits.size() * sizeof(affine_u32), cudaMemcpyHostToDevice));
    for (bool exclusive : {false, true}) {
      // The reference from a sequence-by-sequence fold with each initial value.
      std::vector<affine_u32> want = in;
      for (std::int64_t k = 0; k < lay.count; ++k) {
        std::vector<affine_u32> one(lay.n);
        for (std::int64_t i = 0; i < lay.n; ++i) one[i] = in[lay.offset(i, k)];
        auto const r = reference(one, layout::contiguous(lay.n), compose_u32{},
                                 scan_options<affine_u32>{exclusive, true, inits[k]});
        for (std::int64_t i = 0; i < lay.n; ++i) want[lay.offset(i, k)] = r[i];
      }
      auto const got =
          run_scan(in, lay, compose_u32{}, scan_options<affine_u32>{exclusive, true, {}, d_inits});
      std::int64_t bad = 0;
      for (std::int64_t k = 0; k < lay.count; ++k)
        for (std::int64_t i = 0; i < lay.n; ++i) bad += !(got[lay.offset(i, k)] == want[lay.offset(i, k)]);
      BOOST_TEST(bad == 0, "inits: n " << lay.n << " count " << lay.count << (exclusive ? " exclusive" : "")
                                       << ": " << bad << " wrong");
    }
    RECUR_TEST_CUDA_OK(cudaFree(d_inits));
    // reduce: each sequence's total, against the inclusive reference's last element.
    auto const incl = reference(in, lay, compose_u32{}, scan_options<affine_u32>{});
    affine_u32* d_in = nullptr;
    affine_u32* d_tot = nullptr;
    RECUR_TEST_CUDA_OK(cudaMalloc(&d_in, in.size() * sizeof(affine_u32)));
    RECUR_TEST_CUDA_OK(cudaMalloc(&d_tot, lay.count * sizeof(affine_u32)));
    RECUR_TEST_CUDA_OK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(affine_u32), cudaMemcpyHostToDevice));
    std::size_t bytes = 0;
    RECUR_TEST_CUDA_OK(recur::device::reduce(nullptr, bytes, d_in, d_tot, lay, compose_u32{}));
    void* temp = nullptr;
    RECUR_TEST_CUDA_OK(cudaMalloc(&temp, bytes));
    RECUR_TEST_CUDA_OK(recur::device::reduce(temp, bytes, d_in, d_tot, lay, compose_u32{}));
    std::vector<affine_u32> tot(lay.count);
    RECUR_TEST_CUDA_OK(
        cudaMemcpy(tot.data(), d_tot, tot.size() * sizeof(affine_u32), cudaMemcpyDeviceToHost));
    std::int64_t bad = 0;
    for (std::int64_t k = 0; k < lay.count; ++k) bad += !(tot[k] == incl[lay.offset(lay.n - 1, k)]);
    BOOST_TEST(bad == 0, "reduce: n " << lay.n << " count " << lay.count << ": " << bad << " wrong");
    RECUR_TEST_CUDA_OK(cudaFree(temp));
    RECUR_TEST_CUDA_OK(cudaFree(d_in));
    RECUR_TEST_CUDA_OK(cudaFree(d_tot));
  }
}

BOOST_AUTO_TEST_CASE(float_sum_reproducible_and_accurate) {
  std::int64_t const n = (std::int64_t{1} << 24) + 3;
  std::mt19937 g(5);
  std::vector<float> in(n);
  for (auto& x : in) x = random_value<float>(g);
  auto const a = run_scan(in, layout::contiguous(n), plus_f32{}, {});
  auto const b = run_scan(in, layout::contiguous(n), plus_f32{}, {});
  BOOST_TEST((a == b), "two runs differ");
  double s = 0, sum_abs = 0, worst = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    s += in[i];
    sum_abs += std::fabs(in[i]);
    worst = std::max(worst, std::fabs(a[i] - s) / (sum_abs + 1));
  }
  BOOST_TEST(worst < 1e-4, "relative error " << worst);
}

BOOST_AUTO_TEST_CASE(bad_arguments) {
  std::size_t bytes = 0;
  float* p = nullptr;
  BOOST_TEST(recur::device::scan<float>(nullptr, bytes, p, p, layout::contiguous(10), plus_f32{},
                                        {true, false, 0.f}) == cudaErrorInvalidValue);
  BOOST_TEST(recur::device::scan<float>(nullptr, bytes, p, p, layout{-1, 1, 1, 0}, plus_f32{}) ==
             cudaErrorInvalidValue);
  // Too little temporary storage is refused before anything is written.
  BOOST_TEST(recur::device::scan<float>(nullptr, bytes, p, p, layout::contiguous(1 << 20), plus_f32{}) ==
             cudaSuccess);
  std::size_t small = bytes - 1;
  void* temp = reinterpret_cast<void*>(256);
  BOOST_TEST(recur::device::scan<float>(temp, small, p, p, layout::contiguous(1 << 20), plus_f32{}) ==
             cudaErrorInvalidValue);
  // Empty shapes do nothing.
  bytes = 0;
  BOOST_TEST(recur::device::scan<float>(nullptr, bytes, p, p, layout::contiguous(0, 5), plus_f32{}) ==
             cudaSuccess);
  BOOST_TEST(recur::device::scan<float>(temp, bytes, p, p, layout::contiguous(0, 5), plus_f32{}) ==
             cudaSuccess);
}

BOOST_AUTO_TEST_SUITE_END()
