// Benchmarks for first-order linear recurrences w_i = s_i w_{i-1} + t_i:
// recur::device::linrec against the device-to-device copy ceiling and CUB,
// all measured in this one process, in this order (Google Benchmark runs
// entries in registration order):
//
//   copy_ceiling        cudaMemcpyAsync of 1 GiB; its median GB/s is the
//                       denominator of every later entry's pct_of_copy
//   cub_inclusive_sum   context: the plainest scan, f32
//   cub_affine_...      peers: cub::DeviceScan over affine pairs (s, t) under
//                       composition, read through a transform iterator and
//                       written through a transform-output iterator, as in
//                       shared/reference/anchors.cu; batches as one flat scan
//                       with a reset at each sequence start. by_key: the same
//                       through InclusiveScanByKey (one key per sequence),
//                       CUB's segmented form, which is also the faster CUB
//                       formulation for one sequence
//   linrec_...          recur: time-varying s and t, scalar s, the paper's
//                       three-kernel form, batched contiguous and interleaved;
//                       linrec_batched_contiguous_bf16 at accelerated-scan's
//                       shapes (bfloat16 storage, float arithmetic; bytes at
//                       2 per element; no peer in this process)
//   linrec_adjoint_...  recur::device::linrec_adjoint, the fused gradient of
//                       a forward linrec (lambda run backwards, dt and ds):
//                       f32 batches, contiguous and interleaved; bytes at 5
//                       words per element (s, w and g read, dt and ds
//                       written; no peer in this process)
//   cub_scan_..., scan_...  generic scans: CUB DeviceScan (InclusiveSum for
//                       the f32 sum, InclusiveScan otherwise) and
//                       recur::device::scan over the same values in memory:
//                       f32 sums, affine f32 maps, 3x3 f32 matrices
//   lfilter_f32         recur::device::lfilter, orders 1-8, one lane of 2^24,
//                       64 lanes of 2^18 and 4096 lanes of 2^16 (peers from
//                       Python: bench/peers)
//   sosfilt_f32, dpcm_decode_f32, filtfilt_f32, sosfiltfilt_f32  the other
//                       filters (the last two through the public API)
//   tridiag_...         batched tridiagonal solvers (bench_tridiag.cu, the
//                       second translation unit of this program): cuSPARSE
//                       and LAPACK peers, then recur's algorithms
//
// What both translation units share (errors, device buffers, the entry
// cache, the timing loop, counters, naming) is in bench_common.cuh.
//
// Timing: every iteration times one call with CUDA events on one stream. A
// spin kernel (4 times the entry's enqueue time, at least 40 us;
// RECUR_BENCH_SPIN_US fixes it) is queued ahead of the start event so that
// the host's enqueue of the call stays out of the measured GPU time (the
// same for peers and recur); each entry reports that enqueue time as host_us
// and its spin as spin_us. Inputs that would fit in L2 are rotated among
// several input sets.
// The reported time is the mean over an iteration run, and the program asks
// for repetitions by default, so the JSON holds a median aggregate per entry.
//
// Counters: bytes (moved per call, each input read once and each output
// written once), GBps (1e9 bytes/s), pct_of_copy, vs_best_peer (median time of
// the fastest CUB formulation of the same shape and type, measured earlier in
// this run, over this entry's time; absent on peers), vs_cub_scan (the same
// against the plain InclusiveScan peer, anchors.cu's formulation).
//
// Every entry checks its result once, before timing: the output is poisoned
// with NaN, every element must be written (finite), and samples (first and
// last 2^16 elements of a sequence; first, middle and last sequence of a
// batch) must match a host double-precision sequential reference. A wrong
// result or a failed CUDA call skips the entry with an error and makes the
// program exit non-zero.

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <recur/config.hpp>
#include <recur/detail/linrec_problem.hpp>
#include <recur/filter.hpp>
#include <recur/kernels/dispatch/dispatch_chain.cuh>
#include <recur/kernels/dispatch/dispatch_filters.cuh>
#include <recur/kernels/dispatch/dispatch_lfilter.cuh>
#include <recur/kernels/dispatch/dispatch_linrec.cuh>
#include <recur/kernels/dispatch/dispatch_scan.cuh>
#include <recur/layout/layout.hpp>
#include <recur/linrec.hpp>
#include <recur/ops/affine.hpp>
#include <recur/ops/matrix.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>

#include "bench_common.cuh"

namespace {

using namespace recur_bench;
using recur::layout;
using recur::linrec_variant;
using recur::detail::linrec_problem;

// ---------------------------------------------------------------------------
// Settings. Sizes are elements per sequence (N) and sequences (lanes).

constexpr i64 sizes_f32[] = {i64(1) << 20, i64(1) << 22, i64(1) << 24, i64(1) << 26, i64(1) << 28};
constexpr i64 sizes_f64[] = {i64(1) << 20, i64(1) << 22, i64(1) << 24, i64(1) << 26, i64(1) << 28};
constexpr i64 sizes_three_kernel[] = {i64(1) << 24, i64(1) << 28};
struct batch_shape {
  i64 lanes, n;
};
constexpr batch_shape batch_shapes[] = {{4096, 65536}};
// f32 adds accelerated-scan's shape (B, C, T) = (8, 1536, 2^16) as 12288
// lanes, and a length that is not a power of two (bench/python_bench.py).
constexpr batch_shape batch_shapes_f32[] = {{4096, 65536}, {12288, 65536}, {4096, 60000}};
// accelerated-scan's benchmark shapes (batch x channels sequences of 2^16).
constexpr batch_shape batch_shapes_bf16[] = {{1536 * 8, 65536}, {4096, 65536}};
constexpr i64 sum_size = i64(1) << 28;

// Defaults handed to Google Benchmark unless the command line sets them.
constexpr char const* default_flags[] = {
    "--benchmark_repetitions=11",
    "--benchmark_min_time=0.02",
    "--benchmark_display_aggregates_only=true",
};

constexpr i64 sample_len = i64(1) << 16;       // elements compared per sample
constexpr i64 sample_warmup = 4096;            // reference starts this far before a sample (|s| < 1 forgets)
constexpr double s_min = -0.99, s_max = 0.99;  // time-varying s
// Long memory (the *_long entries): s in [0.999, 1), so a tile's composed
// map keeps a > 0 and every look-back walks to a predecessor's state; the
// reference starts 2^16 steps early (0.9995^65536 < 1e-14).
constexpr double s_long_min = 0.999, s_long_max = 1.0;
constexpr i64 sample_warmup_long = i64(1) << 16;
constexpr double scalar_s_value = 0.95;  // scalar s
constexpr double t_min = -1.0, t_max = 1.0;

// Per-element tolerance relative to the magnitude bound m_i = |s_i| m_{i-1} + |t_i|:
// about 1700 eps (f32) and 9000 eps (f64), far above rounding, far below a wrong element;
// 16-bit storage: about 2.5 units of the stored result's rounding (2^-8, 2^-11).
template <class T>
constexpr double tolerance = std::is_same_v<T, recur::bfloat16>  ? 1e-2
                             : std::is_same_v<T, recur::float16> ? 1.25e-3
                             : sizeof(T) == 4                    ? 1e-4
                                                                 : 1e-12;

// ---------------------------------------------------------------------------
// Correctness: samples of a linrec result against a host double-precision
// sequential reference.

struct sample {
  i64 k, i0, len;  // sequence k, elements [i0, i0 + len)
};

std::vector<sample> samples_for(layout const& lay) {
  std::vector<i64> ks{0};
  if (lay.count > 2) ks.push_back(lay.count / 2);
  if (lay.count > 1) ks.push_back(lay.count - 1);
  std::vector<sample> out;
  i64 const len = std::min(lay.n, sample_len);
  for (i64 k : ks) {
    out.push_back({k, 0, len});
    if (lay.n > len) out.push_back({k, lay.n - len, len});
  }
  return out;
}

// Throws bench_failure naming the first wrong element. The output must have
// been poisoned with NaN before the call; p.init must be null (host-side init).
template <class T>
void check_linrec(linrec_problem<T> const& p, i64 warmup = sample_warmup) {
  if (p.init) throw bench_failure("check_linrec: device init array not supported");
  // The benchmark layouts are dense.
  if (any_nonfinite(p.w, p.lay.size()))
    throw bench_failure("wrong result: some output element is not finite (unwritten?)");

  for (sample const& smp : samples_for(p.lay)) {
    // Far from the start the reference begins from 0 a few thousand steps early:
    // with |s| < 1 the forgotten history is below 1e-90 of the terms.
    i64 const start = smp.i0 == 0 ? 0 : std::max<i64>(0, smp.i0 - warmup);
    i64 const len = smp.i0 + smp.len - start;
    std::vector<T> const s = p.s ? gather(p.s, p.lay, smp.k, start, len) : std::vector<T>{};
    std::vector<T> const t = p.t ? gather(p.t, p.lay, smp.k, start, len) : std::vector<T>{};
    std::vector<T> const w = gather<T>(p.w, p.lay, smp.k, start, len);
    double x = start == 0 ? double(p.init_value) : 0.0;
    double mag = std::fabs(x);
    for (i64 j = 0; j < len; ++j) {
      double const si = p.s ? double(s[j]) : double(p.s_value);
      double const ti = p.t ? double(t[j]) : double(p.t_value);
      x = si * x + ti;
      mag = std::fabs(si) * mag + std::fabs(ti);
      i64 const i = start + j;
      if (i < smp.i0) continue;
      double const err = std::fabs(double(w[j]) - x);
      if (!(err <= tolerance<T> * mag + 1e-300)) {
        char buf[256];
        std::snprintf(
            buf, sizeof buf,
            "wrong result: sequence %lld element %lld: got %.9g, reference %.9g (|err| %.3g > %.3g)",
            (long long)smp.k, (long long)i, double(w[j]), x, err, tolerance<T> * mag);
        throw bench_failure(buf);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Linrec inputs: sets of (s, t, w) arrays in one layout, temp storage sized
// for the call under test, checked once.

template <class T>
struct linrec_case : case_base {
  layout lay{};
  bool scalar_s = false;
  struct set {
    dbuf<T> s, t, w;
  };
  std::vector<set> sets;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;

  linrec_problem<T> problem(std::size_t i) const {
    linrec_problem<T> p;
    p.s = scalar_s ? nullptr : sets[i].s.get();
    p.s_value = T(scalar_s_value);
    p.t = sets[i].t.get();
    p.w = sets[i].w.get();
    p.lay = lay;
    p.init = nullptr;
    p.init_value = T(0);
    p.final_state = nullptr;
    return p;
  }
};

template <class T>
double linrec_bytes(layout const& lay, bool scalar_s) {
  return double(lay.size()) * sizeof(T) * (scalar_s ? 2 : 3);
}

// Call: cudaError_t(void* temp, std::size_t& temp_bytes, linrec_problem<T> const&, cudaStream_t),
// CUB's convention (null temp: size only). Shared by recur and the CUB peers.
template <class T, class Call>
void run_linrec_entry(benchmark::State& st, std::string const& key, layout const& lay, bool scalar_s,
                      entry_info const& info, Call call, bool long_memory = false) {
  guarded(st, key, [&] {
    auto& c = acquire<linrec_case<T>>(key, [&] {
      auto c = std::make_unique<linrec_case<T>>();
      c->lay = lay;
      c->scalar_s = scalar_s;
      std::size_t const elems = std::size_t(lay.size());
      std::size_t const nsets = sets_for(i64(linrec_bytes<T>(lay, scalar_s)));
      for (std::size_t i = 0; i < nsets; ++i) {
        typename linrec_case<T>::set s;
        if (!scalar_s) s.s = dbuf<T>(elems);
        s.t = dbuf<T>(elems);
        s.w = dbuf<T>(elems);
        std::uint64_t const seed = splitmix64(0x5eed0000ull + i);
        if (!scalar_s)
          fill_uniform(s.s.get(), i64(elems), long_memory ? s_long_min : s_min,
                       long_memory ? s_long_max : s_max, seed ^ 1);
        fill_uniform(s.t.get(), i64(elems), t_min, t_max, seed ^ 2);
        check(cudaMemsetAsync(s.w.get(), 0xff, elems * sizeof(T), g_stream));  // NaN
        c->sets.push_back(std::move(s));
      }
      check(call(nullptr, c->temp_bytes, c->problem(0), g_stream));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(call(c->temp.get(), c->temp_bytes, c->problem(0), g_stream));
      check(cudaStreamSynchronize(g_stream));
      check_linrec(c->problem(0), long_memory ? sample_warmup_long : sample_warmup);
      return c;
    });
    time_calls(st, c.sets.size(), info, [&](std::size_t i) {
      std::size_t bytes = c.temp_bytes;
      check(call(c.temp.get(), bytes, c.problem(i), g_stream));
    });
  });
}

// ---------------------------------------------------------------------------
// recur.

template <class T>
auto recur_call(linrec_variant variant) {
  return [variant](void* temp, std::size_t& bytes, linrec_problem<T> const& p, cudaStream_t s) {
    return recur::device::linrec<T>(temp, bytes, p, s, variant);
  };
}

// ---------------------------------------------------------------------------
// CUB peers, written as anchors.cu writes them: affine pairs under composition.

template <class T>
struct peer_affine {
  T a, b;
};
template <class T>
struct peer_compose {
  __host__ __device__ peer_affine<T> operator()(peer_affine<T> l, peer_affine<T> r) const {
    return {r.a * l.a, r.a * l.b + r.b};
  }
};
template <class T>
struct peer_load {
  T const *s, *t;
  __host__ __device__ peer_affine<T> operator()(long long i) const { return {s[i], t[i]}; }
};
template <class T>
struct peer_load_scalar_s {
  T s;
  T const* t;
  __host__ __device__ peer_affine<T> operator()(long long i) const { return {s, t[i]}; }
};
template <class T>
struct peer_take_b {
  __host__ __device__ T operator()(peer_affine<T> v) const { return v.b; }
};

// A batch flattened sequence after sequence: flat index f = k n + i. Its
// element lives at f (contiguous) or at i count + k (interleaved).
template <bool Interleaved>
struct batch_index {
  long long n, count;
  int shift;  // n == 1 << shift, or -1 when n is not a power of two

  __host__ __device__ void split(long long f, long long& k, long long& i) const {
    if (shift >= 0) {
      k = f >> shift;
      i = f & ((1ll << shift) - 1);
    } else {
      k = f / n;
      i = f - k * n;
    }
  }
  __host__ __device__ long long address(long long f) const {
    if constexpr (!Interleaved) return f;
    long long k, i;
    split(f, k, i);
    return i * count + k;
  }
};
template <bool Interleaved>
batch_index<Interleaved> make_batch_index(layout const& lay) {
  int shift = -1;
  if (lay.n > 0 && (lay.n & (lay.n - 1)) == 0) shift = std::countr_zero(std::uint64_t(lay.n));
  return {lay.n, lay.count, shift};
}
template <bool Interleaved>
struct batch_address {
  batch_index<Interleaved> ix;
  __host__ __device__ long long operator()(long long f) const { return ix.address(f); }
};
template <bool Interleaved>
struct batch_key {
  batch_index<Interleaved> ix;
  __host__ __device__ long long operator()(long long f) const {
    long long k, i;
    ix.split(f, k, i);
    return k;
  }
};
// The first element of each sequence becomes (0, t): the scan forgets what
// came before, so one flat scan computes every sequence.
template <class T, bool Interleaved>
struct peer_load_reset {
  T const *s, *t;
  batch_index<Interleaved> ix;
  __host__ __device__ peer_affine<T> operator()(long long f) const {
    long long k, i;
    ix.split(f, k, i);
    long long const a = Interleaved ? i * ix.count + k : f;
    return {i == 0 ? T(0) : s[a], t[a]};
  }
};
template <class T, bool Interleaved>
struct peer_load_batch {
  T const *s, *t;
  batch_index<Interleaved> ix;
  __host__ __device__ peer_affine<T> operator()(long long f) const {
    long long const a = ix.address(f);
    return {s[a], t[a]};
  }
};

template <class T, bool Interleaved>
auto batch_output(T* w, batch_index<Interleaved> ix) {
  if constexpr (Interleaved) {
    auto addr = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                                batch_address<Interleaved>{ix});
    return thrust::make_transform_output_iterator(thrust::make_permutation_iterator(w, addr),
                                                  peer_take_b<T>{});
  } else {
    return thrust::make_transform_output_iterator(w, peer_take_b<T>{});
  }
}

// One sequence (count == 1), time-varying or scalar s. w_{-1} = 0. ByKey: the
// same scan through InclusiveScanByKey with one key for every element, which
// CUB's tuning runs faster than InclusiveScan over these pairs (H100, CCCL 3.0).
template <class T, bool ByKey, class In, class Out>
cudaError_t cub_scan(void* temp, std::size_t& bytes, In in, Out out, long long n, cudaStream_t st) {
  if constexpr (ByKey) {
    return cub::DeviceScan::InclusiveScanByKey(temp, bytes, thrust::make_constant_iterator(0), in, out,
                                               peer_compose<T>{}, n, cuda::std::equal_to<>{}, st);
  } else {
    return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, peer_compose<T>{}, n, st);
  }
}
template <class T, bool ByKey>
cudaError_t cub_affine_peer(void* temp, std::size_t& bytes, linrec_problem<T> const& p, cudaStream_t st) {
  long long const n = p.lay.size();
  auto out = thrust::make_transform_output_iterator(p.w, peer_take_b<T>{});
  if (p.s) {
    auto in =
        thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), peer_load<T>{p.s, p.t});
    return cub_scan<T, ByKey>(temp, bytes, in, out, n, st);
  }
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                            peer_load_scalar_s<T>{p.s_value, p.t});
  return cub_scan<T, ByKey>(temp, bytes, in, out, n, st);
}

// A batch as one flat scan with a reset at each sequence start.
template <class T, bool Interleaved>
cudaError_t cub_reset_peer(void* temp, std::size_t& bytes, linrec_problem<T> const& p, cudaStream_t st) {
  auto const ix = make_batch_index<Interleaved>(p.lay);
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                            peer_load_reset<T, Interleaved>{p.s, p.t, ix});
  return cub::DeviceScan::InclusiveScan(temp, bytes, in, batch_output<T>(p.w, ix), peer_compose<T>{},
                                        (long long)p.lay.size(), st);
}

// A batch as CUB's segmented form: a scan by key, the key being the sequence.
template <class T, bool Interleaved>
cudaError_t cub_by_key_peer(void* temp, std::size_t& bytes, linrec_problem<T> const& p, cudaStream_t st) {
  auto const ix = make_batch_index<Interleaved>(p.lay);
  auto keys =
      thrust::make_transform_iterator(thrust::counting_iterator<long long>(0), batch_key<Interleaved>{ix});
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                            peer_load_batch<T, Interleaved>{p.s, p.t, ix});
  return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, in, batch_output<T>(p.w, ix),
                                             peer_compose<T>{}, (long long)p.lay.size(),
                                             cuda::std::equal_to<>{}, st);
}

// ---------------------------------------------------------------------------
// Context entries.

struct copy_case : case_base {
  dbuf<char> a, b;
};

void bm_copy_ceiling(benchmark::State& st, std::string const& key) {
  guarded(st, key, [&] {
    i64 const bytes = st.range(0);
    auto& c = acquire<copy_case>(key, [&] {
      auto c = std::make_unique<copy_case>();
      c->a = dbuf<char>(std::size_t(bytes));
      c->b = dbuf<char>(std::size_t(bytes));
      fill_uniform(reinterpret_cast<float*>(c->a.get()), bytes / 4, -1.0, 1.0, 0xc0ffee);
      check(cudaMemsetAsync(c->b.get(), 0xff, std::size_t(bytes), g_stream));
      check(cudaMemcpyAsync(c->b.get(), c->a.get(), std::size_t(bytes), cudaMemcpyDeviceToDevice, g_stream));
      std::vector<char> ha(1 << 16), hb(1 << 16);
      check(cudaMemcpyAsync(ha.data(), c->a.get() + bytes - ha.size(), ha.size(), cudaMemcpyDeviceToHost,
                            g_stream));
      check(cudaMemcpyAsync(hb.data(), c->b.get() + bytes - hb.size(), hb.size(), cudaMemcpyDeviceToHost,
                            g_stream));
      check(cudaStreamSynchronize(g_stream));
      if (ha != hb) throw bench_failure("wrong result: the copy differs from its source");
      return c;
    });
    entry_info const info{2.0 * double(bytes), role::context, "", key, true};
    time_calls(st, 1, info, [&](std::size_t) {
      check(cudaMemcpyAsync(c.b.get(), c.a.get(), std::size_t(bytes), cudaMemcpyDeviceToDevice, g_stream));
    });
  });
}

struct sum_case : case_base {
  dbuf<float> in, out;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;
};

void bm_cub_inclusive_sum(benchmark::State& st, std::string const& key) {
  guarded(st, key, [&] {
    i64 const n = st.range(0);
    auto& c = acquire<sum_case>(key, [&] {
      auto c = std::make_unique<sum_case>();
      c->in = dbuf<float>(std::size_t(n));
      c->out = dbuf<float>(std::size_t(n));
      fill_uniform(c->in.get(), n, -1.0, 1.0, 0x5u);
      check(cub::DeviceScan::InclusiveSum(nullptr, c->temp_bytes, c->in.get(), c->out.get(), (long long)n,
                                          g_stream));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(cub::DeviceScan::InclusiveSum(c->temp.get(), c->temp_bytes, c->in.get(), c->out.get(),
                                          (long long)n, g_stream));
      std::size_t const m = std::size_t(std::min(n, sample_len));
      std::vector<float> hi(m), ho(m);
      check(cudaMemcpyAsync(hi.data(), c->in.get(), m * 4, cudaMemcpyDeviceToHost, g_stream));
      check(cudaMemcpyAsync(ho.data(), c->out.get(), m * 4, cudaMemcpyDeviceToHost, g_stream));
      check(cudaStreamSynchronize(g_stream));
      double sum = 0, mag = 0;
      for (std::size_t i = 0; i < m; ++i) {
        sum += hi[i];
        mag += std::fabs(hi[i]);
        if (!(std::fabs(ho[i] - sum) <= 1e-4 * mag)) throw bench_failure("wrong result: cub InclusiveSum");
      }
      return c;
    });
    entry_info info{8.0 * double(n), role::context, "", key};
    time_calls(st, 1, info, [&](std::size_t) {
      std::size_t bytes = c.temp_bytes;
      check(cub::DeviceScan::InclusiveSum(c.temp.get(), bytes, c.in.get(), c.out.get(), (long long)n,
                                          g_stream));
    });
  });
}

// ---------------------------------------------------------------------------
// Registration. Peers are registered before recur so that vs_best_peer can
// refer to them.

// One sequence of n elements: family "<prefix>_<type>", shape affine[_const]_<type>/N:n.
template <class T, class Call>
void register_single(std::string const& prefix, bool scalar_s, role kind, i64 n, Call call,
                     bool long_memory = false) {
  std::string const family = prefix + "_" + type_name<T>;
  std::string const key = arg_name(family, {{"N", n}});
  std::string const shape =
      arg_name(std::string(scalar_s ? "affine_const_" : "affine_") + type_name<T>, {{"N", n}});
  entry_info info{linrec_bytes<T>(layout::contiguous(n, 1), scalar_s), kind, shape, key};
  info.scan_peer = arg_name(
      std::string(scalar_s ? "cub_affine_linrec_const_" : "cub_affine_linrec_") + type_name<T>, {{"N", n}});
  finish(benchmark::RegisterBenchmark(family.c_str(),
                                      [=](benchmark::State& st) {
                                        run_linrec_entry<T>(st, key, layout::contiguous(st.range(0), 1),
                                                            scalar_s, info, call, long_memory);
                                      })
             ->Arg(n)
             ->ArgName("N"));
}

// A batch: family "<prefix>_batched_<layout>_<type>", shape batched_<layout>_<type>/lanes:c/N:n.
template <class T, class Call>
void register_batched(std::string const& prefix, bool interleaved, role kind, batch_shape bs, Call call,
                      bool long_memory = false) {
  std::string const lay_name = interleaved ? "interleaved" : "contiguous";
  std::string const family = prefix + "_batched_" + lay_name + "_" + type_name<T>;
  std::string const key = arg_name(family, {{"lanes", bs.lanes}, {"N", bs.n}});
  std::string const shape =
      arg_name("batched_" + lay_name + "_" + type_name<T>, {{"lanes", bs.lanes}, {"N", bs.n}});
  layout const lay = interleaved ? layout::interleaved(bs.n, bs.lanes) : layout::contiguous(bs.n, bs.lanes);
  entry_info info{linrec_bytes<T>(lay, false), kind, shape, key};
  info.scan_peer = arg_name("cub_affine_linrec_batched_" + lay_name + "_" + type_name<T>,
                            {{"lanes", bs.lanes}, {"N", bs.n}});
  finish(benchmark::RegisterBenchmark(
             family.c_str(),
             [=](benchmark::State& st) { run_linrec_entry<T>(st, key, lay, false, info, call, long_memory); })
             ->Args({bs.lanes, bs.n})
             ->ArgNames({"lanes", "N"}));
}

template <class T>
void register_peers(std::span<i64 const> sizes, std::span<batch_shape const> shapes) {
  for (i64 n : sizes)
    register_single<T>("cub_affine_linrec", false, role::peer, n, cub_affine_peer<T, false>);
  for (i64 n : sizes)
    register_single<T>("cub_affine_by_key_linrec", false, role::peer, n, cub_affine_peer<T, true>);
  for (i64 n : sizes)
    register_single<T>("cub_affine_linrec_const", true, role::peer, n, cub_affine_peer<T, false>);
  for (i64 n : sizes)
    register_single<T>("cub_affine_by_key_linrec_const", true, role::peer, n, cub_affine_peer<T, true>);
  for (batch_shape bs : shapes) {
    register_batched<T>("cub_affine_linrec", false, role::peer, bs, cub_reset_peer<T, false>);
    register_batched<T>("cub_affine_by_key_linrec", false, role::peer, bs, cub_by_key_peer<T, false>);
    register_batched<T>("cub_affine_linrec", true, role::peer, bs, cub_reset_peer<T, true>);
    register_batched<T>("cub_affine_by_key_linrec", true, role::peer, bs, cub_by_key_peer<T, true>);
  }
}

template <class T>
void register_ours(std::span<i64 const> sizes, std::span<batch_shape const> shapes) {
  for (i64 n : sizes)
    register_single<T>("linrec", false, role::ours, n, recur_call<T>(linrec_variant::automatic));
  for (i64 n : sizes)
    register_single<T>("linrec_const", true, role::ours, n, recur_call<T>(linrec_variant::automatic));
  if constexpr (sizeof(T) == 4) {
    for (i64 n : sizes_three_kernel) {
      // Its own family name; it competes with the time-varying peers of its size.
      std::string const family = std::string("linrec_three_kernel_") + type_name<T>;
      std::string const key = arg_name(family, {{"N", n}});
      entry_info info{linrec_bytes<T>(layout::contiguous(n, 1), false), role::ours,
                      arg_name(std::string("affine_") + type_name<T>, {{"N", n}}), key};
      info.scan_peer = arg_name(std::string("cub_affine_linrec_") + type_name<T>, {{"N", n}});
      auto const call = recur_call<T>(linrec_variant::three_kernel);
      finish(benchmark::RegisterBenchmark(family.c_str(),
                                          [=](benchmark::State& st) {
                                            run_linrec_entry<T>(st, key, layout::contiguous(st.range(0), 1),
                                                                false, info, call);
                                          })
                 ->Arg(n)
                 ->ArgName("N"));
    }
  }
  for (batch_shape bs : shapes) {
    register_batched<T>("linrec", false, role::ours, bs, recur_call<T>(linrec_variant::automatic));
    register_batched<T>("linrec", true, role::ours, bs, recur_call<T>(linrec_variant::automatic));
  }
  // Long memory (|s| in [0.999, 1)), at the largest size and batch shape;
  // their peers are the short-memory entries' (CUB's time does not depend
  // on the data).
  register_single<T>("linrec_long", false, role::ours, sizes.back(), recur_call<T>(linrec_variant::automatic),
                     true);
  for (bool const interleaved : {false, true})
    register_batched<T>("linrec_long", interleaved, role::ours, shapes.front(),
                        recur_call<T>(linrec_variant::automatic), true);
  // The opt-in pipelined variant (dense contiguous layouts), on short- and
  // long-memory data.
  for (i64 n : sizes)
    register_single<T>("linrec_pipelined", false, role::ours, n, recur_call<T>(linrec_variant::pipelined));
  for (batch_shape bs : shapes)
    register_batched<T>("linrec_pipelined", false, role::ours, bs, recur_call<T>(linrec_variant::pipelined));
  register_single<T>("linrec_pipelined_long", false, role::ours, sizes.back(),
                     recur_call<T>(linrec_variant::pipelined), true);
}

// ---------------------------------------------------------------------------
// linrec_adjoint: the gradient of a forward linrec with respect to s and t,
// given its w and g, the gradient of w; no final state or init gradient.
// Checked on samples against a host double-precision reference run
// backwards from a few thousand elements after each sample (|s| < 1
// forgets what lies beyond).

template <class T>
struct adjoint_case : case_base {
  layout lay{};
  struct set {
    dbuf<T> s, w, g, dt, ds;
  };
  std::vector<set> sets;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;

  // In the order the adjoint runs: a forward call's runs backwards.
  recur::detail::linrec_adjoint_problem<T> problem(std::size_t i) const {
    recur::detail::linrec_adjoint_problem<T> q;
    q.scan.s = sets[i].s.get();
    q.scan.t = sets[i].g.get();
    q.scan.w = sets[i].dt.get();
    q.scan.lay = lay;
    q.w = sets[i].w.get();
    q.ds = sets[i].ds.get();
    return recur::detail::mirrored(q);
  }
};

template <class T>
double adjoint_bytes(layout const& lay) {
  return double(lay.size()) * sizeof(T) * 5;
}

// Throws bench_failure naming the first wrong element of set 0.
template <class T>
void check_adjoint(adjoint_case<T> const& c) {
  auto const& st = c.sets[0];
  i64 const n = c.lay.n;
  if (any_nonfinite(st.dt.get(), c.lay.size()) || any_nonfinite(st.ds.get(), c.lay.size()))
    throw bench_failure("wrong result: some dt or ds element is not finite (unwritten?)");
  for (sample const& smp : samples_for(c.lay)) {
    i64 const lo = std::max<i64>(0, smp.i0 - 1), end = std::min(n, smp.i0 + smp.len + sample_warmup);
    i64 const len = end - lo;
    auto const s = gather(st.s.get(), c.lay, smp.k, lo, len), w = gather(st.w.get(), c.lay, smp.k, lo, len);
    auto const g = gather(st.g.get(), c.lay, smp.k, lo, len), dt = gather(st.dt.get(), c.lay, smp.k, lo, len);
    auto const ds = gather(st.ds.get(), c.lay, smp.k, lo, len);
    double lambda = 0, mag = 0;
    for (i64 i = end - 1; i >= smp.i0; --i) {
      std::size_t const j = std::size_t(i - lo);
      double const a = i + 1 < end ? double(s[j + 1]) : 0.0;  // s_{i+1}; at n - 1 no successor
      lambda = double(g[j]) + a * lambda;
      mag = std::fabs(double(g[j])) + std::fabs(a) * mag;
      if (i >= smp.i0 + smp.len) continue;
      double const prev = i == 0 ? 0.0 : double(w[j - 1]);  // w_{-1} = init = 0
      double const e_dt = std::fabs(double(dt[j]) - lambda), e_ds = std::fabs(double(ds[j]) - lambda * prev);
      if (!(e_dt <= tolerance<T> * mag + 1e-300) ||
          !(e_ds <= tolerance<T> * mag * std::fabs(prev) + 1e-300)) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "wrong result: sequence %lld element %lld: dt %.9g ds %.9g, reference %.9g %.9g",
                      (long long)smp.k, (long long)i, double(dt[j]), double(ds[j]), lambda, lambda * prev);
        throw bench_failure(buf);
      }
    }
  }
}

template <class T>
cudaError_t adjoint_call(void* temp, std::size_t& bytes, recur::detail::linrec_adjoint_problem<T> const& q) {
  return recur::device::linrec_adjoint<T>(temp, bytes, q, g_stream);
}

template <class T>
void run_adjoint_entry(benchmark::State& st, std::string const& key, layout const& lay,
                       entry_info const& info) {
  guarded(st, key, [&] {
    auto& c = acquire<adjoint_case<T>>(key, [&] {
      auto c = std::make_unique<adjoint_case<T>>();
      c->lay = lay;
      std::size_t const elems = std::size_t(lay.size());
      std::size_t const nsets = sets_for(i64(adjoint_bytes<T>(lay)));
      for (std::size_t i = 0; i < nsets; ++i) {
        typename adjoint_case<T>::set a{dbuf<T>(elems), dbuf<T>(elems), dbuf<T>(elems), dbuf<T>(elems),
                                        dbuf<T>(elems)};
        std::uint64_t const seed = splitmix64(0xad70000ull + i);
        fill_uniform(a.s.get(), i64(elems), s_min, s_max, seed ^ 1);
        fill_uniform(a.w.get(), i64(elems), t_min, t_max, seed ^ 2);
        fill_uniform(a.g.get(), i64(elems), t_min, t_max, seed ^ 3);
        check(cudaMemsetAsync(a.dt.get(), 0xff, elems * sizeof(T), g_stream));  // NaN
        check(cudaMemsetAsync(a.ds.get(), 0xff, elems * sizeof(T), g_stream));
        c->sets.push_back(std::move(a));
      }
      check(adjoint_call(nullptr, c->temp_bytes, c->problem(0)));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(adjoint_call(c->temp.get(), c->temp_bytes, c->problem(0)));
      check(cudaStreamSynchronize(g_stream));
      check_adjoint(*c);
      return c;
    });
    time_calls(st, c.sets.size(), info, [&](std::size_t i) {
      std::size_t bytes = c.temp_bytes;
      check(adjoint_call(c.temp.get(), bytes, c.problem(i)));
    });
  });
}

// Family "linrec_adjoint_batched_<layout>_<type>", shape
// adjoint_batched_<layout>_<type>/lanes:c/N:n.
template <class T>
void register_adjoint(bool interleaved, batch_shape bs) {
  std::string const lay_name = interleaved ? "interleaved" : "contiguous";
  std::string const family = "linrec_adjoint_batched_" + lay_name + "_" + type_name<T>;
  std::string const key = arg_name(family, {{"lanes", bs.lanes}, {"N", bs.n}});
  std::string const shape =
      arg_name("adjoint_batched_" + lay_name + "_" + type_name<T>, {{"lanes", bs.lanes}, {"N", bs.n}});
  layout const lay = interleaved ? layout::interleaved(bs.n, bs.lanes) : layout::contiguous(bs.n, bs.lanes);
  entry_info const info{adjoint_bytes<T>(lay), role::ours, shape, key};
  finish(benchmark::RegisterBenchmark(family.c_str(),
                                      [=](benchmark::State& st) { run_adjoint_entry<T>(st, key, lay, info); })
             ->Args({bs.lanes, bs.n})
             ->ArgNames({"lanes", "N"}));
}

// ---------------------------------------------------------------------------
// Generic scans (recur::device::scan) against CUB's DeviceScan on the same
// values and operator: sums of f32, affine maps of f32 under composition,
// 3x3 f32 matrices under the product (rotations, so long products stay
// finite). Bytes: one value read and one written per element.

using mat3f = recur::ops::matrix<float, 3>;

struct gen_float {
  __device__ float operator()(std::uint64_t h) const { return float(double(h >> 11) * 0x1.0p-53 * 2 - 1); }
};
struct gen_affine {
  __device__ recur::ops::affine<float> operator()(std::uint64_t h) const {
    double const u = double(h >> 11) * 0x1.0p-53, v = double(splitmix64(h) >> 11) * 0x1.0p-53;
    return {float(0.99 * (2 * u - 1)), float(2 * v - 1)};
  }
};
// A rotation by a small angle about a random axis (Rodrigues), times `scale`
// (below 1: a damped rotation, the state matrix of a stable system).
struct gen_rotation {
  double scale = 1;
  __device__ mat3f operator()(std::uint64_t h) const {
    double a[3], n2 = 0;
    for (auto& x : a) {
      h = splitmix64(h);
      x = double(h >> 11) * 0x1.0p-53 * 2 - 1;
      n2 += x * x;
    }
    double const inv = rsqrt(n2 + 1e-30), theta = 0.1 * (double(splitmix64(h) >> 11) * 0x1.0p-53);
    for (auto& x : a) x *= inv;
    double const c = cos(theta), sn = sin(theta), C = 1 - c;
    mat3f m;
    m.m[0][0] = float(c + a[0] * a[0] * C);
    m.m[0][1] = float(a[0] * a[1] * C - a[2] * sn);
    m.m[0][2] = float(a[0] * a[2] * C + a[1] * sn);
    m.m[1][0] = float(a[1] * a[0] * C + a[2] * sn);
    m.m[1][1] = float(c + a[1] * a[1] * C);
    m.m[1][2] = float(a[1] * a[2] * C - a[0] * sn);
    m.m[2][0] = float(a[2] * a[0] * C - a[1] * sn);
    m.m[2][1] = float(a[2] * a[1] * C + a[0] * sn);
    m.m[2][2] = float(c + a[2] * a[2] * C);
    for (auto& row : m.m)
      for (auto& x : row) x = float(scale * x);
    return m;
  }
};

template <class V, class Gen>
__global__ void fill_values_kernel(V* p, i64 n, std::uint64_t seed, Gen gen) {
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += i64(gridDim.x) * blockDim.x)
    p[i] = gen(splitmix64(seed ^ splitmix64(std::uint64_t(i))));
}

// Host-side double-precision views of the values, for the check.
double as_double(float x) { return x; }
struct affine_d {
  double a, b;
};
affine_d as_double(recur::ops::affine<float> const& x) { return {x.a, x.b}; }
struct mat3_d {
  double m[3][3];
};
mat3_d as_double(mat3f const& x) {
  mat3_d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i][j] = x.m[i][j];
  return r;
}
double combine_d(double l, double r) { return l + r; }
affine_d combine_d(affine_d l, affine_d r) { return {r.a * l.a, r.a * l.b + r.b}; }
mat3_d combine_d(mat3_d const& l, mat3_d const& r) {
  mat3_d p{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int q = 0; q < 3; ++q) p.m[i][j] += r.m[i][q] * l.m[q][j];
  return p;
}
double max_abs_diff(double x, double y) { return std::fabs(x - y); }
double max_abs_diff(affine_d x, affine_d y) { return std::max(std::fabs(x.a - y.a), std::fabs(x.b - y.b)); }
double max_abs_diff(mat3_d const& x, mat3_d const& y) {
  double d = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d = std::max(d, std::fabs(x.m[i][j] - y.m[i][j]));
  return d;
}
double magnitude(double x) { return std::fabs(x); }
double magnitude(affine_d x) { return std::max(std::fabs(x.a), std::fabs(x.b)); }
double magnitude(mat3_d const&) { return 1; }

template <class V>
struct scan_case : case_base {
  std::vector<dbuf<V>> in;
  dbuf<V> out;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;
};

// Ours (recur::device::scan) or the CUB peer (InclusiveSum for sums,
// InclusiveScan otherwise), CUB's calling convention both.
template <class V, class Op>
cudaError_t scan_call(bool ours, void* temp, std::size_t& bytes, V const* in, V* out, i64 n) {
  if (ours) return recur::device::scan<V>(temp, bytes, in, out, layout::contiguous(n), Op{}, {}, g_stream);
  if constexpr (std::is_same_v<V, float>)
    return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, (long long)n, g_stream);
  else
    return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, Op{}, (long long)n, g_stream);
}

template <class V, class Op, class Gen>
void bm_scan(benchmark::State& st, std::string const& key, entry_info const& info, bool ours, double tol) {
  guarded(st, key, [&] {
    i64 const n = st.range(0);
    std::size_t const sets = sets_for(i64(sizeof(V)) * n);
    auto& c = acquire<scan_case<V>>(key, [&] {
      auto c = std::make_unique<scan_case<V>>();
      for (std::size_t k = 0; k < sets; ++k) {
        c->in.emplace_back(std::size_t(n));
        fill_values_kernel<<<grid_for(n), 256, 0, g_stream>>>(c->in.back().get(), n, 0x77u + k, Gen{});
        check(cudaGetLastError());
      }
      c->out = dbuf<V>(std::size_t(n));
      check(scan_call<V, Op>(ours, nullptr, c->temp_bytes, c->in[0].get(), c->out.get(), n));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(cudaMemsetAsync(c->out.get(), 0xff, std::size_t(n) * sizeof(V), g_stream));  // NaN poison
      check(scan_call<V, Op>(ours, c->temp.get(), c->temp_bytes, c->in[0].get(), c->out.get(), n));
      // Check the first and the last 2^12 elements (the last against a
      // double-precision fold of everything before them).
      std::vector<V> hi(static_cast<std::size_t>(n)), ho(static_cast<std::size_t>(n));
      check(cudaMemcpyAsync(hi.data(), c->in[0].get(), hi.size() * sizeof(V), cudaMemcpyDeviceToHost,
                            g_stream));
      check(
          cudaMemcpyAsync(ho.data(), c->out.get(), ho.size() * sizeof(V), cudaMemcpyDeviceToHost, g_stream));
      check(cudaStreamSynchronize(g_stream));
      auto acc = as_double(hi[0]);
      double mag = magnitude(acc), worst = 0;
      i64 const window = std::min<i64>(n, 4096);
      for (i64 i = 0; i < n; ++i) {
        if (i > 0) acc = combine_d(acc, as_double(hi[i]));
        mag = std::max(mag, magnitude(acc));
        if (i < window || i >= n - window) worst = std::max(worst, max_abs_diff(as_double(ho[i]), acc));
      }
      if (!(worst <= tol * std::max(mag, 1.0)))
        throw bench_failure("wrong result: max abs error " + std::to_string(worst));
      return c;
    });
    time_calls(st, sets, info, [&](std::size_t k) {
      std::size_t bytes = c.temp_bytes;
      check(scan_call<V, Op>(ours, c.temp.get(), bytes, c.in[k].get(), c.out.get(), n));
    });
  });
}

template <class V, class Op, class Gen>
void register_scan(std::string const& what, i64 n, double tol) {
  std::string const shape = arg_name("scan_" + what, {{"N", n}});
  for (bool ours : {false, true}) {
    std::string const family = (ours ? "scan_" : "cub_scan_") + what;
    std::string const key = arg_name(family, {{"N", n}});
    entry_info info{2.0 * double(sizeof(V)) * double(n), ours ? role::ours : role::peer, shape, key};
    finish(benchmark::RegisterBenchmark(
               family.c_str(), [=](benchmark::State& st) { bm_scan<V, Op, Gen>(st, key, info, ours, tol); })
               ->Arg(n)
               ->ArgName("N"));
  }
}

// ---------------------------------------------------------------------------
// Matrix chains x_i = M_i x_(i-1) + u_i (recur::device::matrix_chain<3>),
// f32, one sequence: M damped rotations (gen_rotation, scale 0.99: a stable
// system, so f32 rounding does not accumulate over 2^24 steps as it does for
// a pure rotation's random walk), u uniform in [-1, 1].
// Bytes: M and u read, x written, 60 B per step. No peer runs this shape in
// the same program (CUB's scan of the 3x3 matrices alone is scan_matrix3).

struct chain_case : case_base {
  std::vector<dbuf<mat3f>> M;
  std::vector<dbuf<float>> u;
  dbuf<float> x;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;
};

void bm_chain3(benchmark::State& st, std::string const& key, entry_info const& info) {
  guarded(st, key, [&] {
    i64 const n = st.range(1);
    std::size_t const sets = sets_for(60 * n);
    auto call = [&](chain_case& c, void* temp, std::size_t& bytes, std::size_t k) {
      return recur::device::matrix_chain<3, float>(temp, bytes, &c.M[k].get()->m[0][0], c.u[k].get(),
                                                   c.x.get(), layout::contiguous(n), nullptr, nullptr,
                                                   g_stream);
    };
    auto& c = acquire<chain_case>(key, [&] {
      auto c = std::make_unique<chain_case>();
      for (std::size_t k = 0; k < sets; ++k) {
        c->M.emplace_back(std::size_t(n));
        fill_values_kernel<<<grid_for(n), 256, 0, g_stream>>>(c->M.back().get(), n, 0x91u + k,
                                                              gen_rotation{0.99});
        c->u.emplace_back(std::size_t(3 * n));
        fill_values_kernel<<<grid_for(3 * n), 256, 0, g_stream>>>(c->u.back().get(), 3 * n, 0x93u + k,
                                                                  gen_float{});
        check(cudaGetLastError());
      }
      c->x = dbuf<float>(std::size_t(3 * n));
      check(call(*c, nullptr, c->temp_bytes, 0));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(cudaMemsetAsync(c->x.get(), 0xff, std::size_t(3 * n) * sizeof(float), g_stream));  // NaN poison
      check(call(*c, c->temp.get(), c->temp_bytes, 0));
      // The whole chain in double; the first and last 2^12 steps checked.
      std::vector<mat3f> hm(static_cast<std::size_t>(n));
      std::vector<float> hu(static_cast<std::size_t>(3 * n)), hx(static_cast<std::size_t>(3 * n));
      check(cudaMemcpyAsync(hm.data(), c->M[0].get(), hm.size() * sizeof(mat3f), cudaMemcpyDeviceToHost,
                            g_stream));
      check(cudaMemcpyAsync(hu.data(), c->u[0].get(), hu.size() * 4, cudaMemcpyDeviceToHost, g_stream));
      check(cudaMemcpyAsync(hx.data(), c->x.get(), hx.size() * 4, cudaMemcpyDeviceToHost, g_stream));
      check(cudaStreamSynchronize(g_stream));
      double v[3] = {0, 0, 0}, mag = 1, worst = 0;
      i64 const window = std::min<i64>(n, 4096);
      for (i64 i = 0; i < n; ++i) {
        double w[3];
        for (int r = 0; r < 3; ++r) {
          w[r] = hu[3 * i + r];
          for (int q = 0; q < 3; ++q) w[r] += double(hm[i].m[r][q]) * v[q];
        }
        for (int r = 0; r < 3; ++r) {
          v[r] = w[r];
          mag = std::max(mag, std::fabs(v[r]));
          if (i < window || i >= n - window) worst = std::max(worst, std::fabs(double(hx[3 * i + r]) - v[r]));
        }
      }
      if (!(worst <= 1e-3 * mag)) throw bench_failure("wrong result: max abs error " + std::to_string(worst));
      return c;
    });
    time_calls(st, sets, info, [&](std::size_t k) {
      std::size_t bytes = c.temp_bytes;
      check(call(c, c.temp.get(), bytes, k));
    });
  });
}

void register_chain3(i64 n) {
  std::string const key = arg_name("chain_f32", {{"K", 3}, {"N", n}});
  entry_info info{60.0 * double(n), role::ours, key, key};
  finish(benchmark::RegisterBenchmark("chain_f32", [=](benchmark::State& st) { bm_chain3(st, key, info); })
             ->Args({3, n})
             ->ArgNames({"K", "N"}));
}

// ---------------------------------------------------------------------------
// IIR filters (recur::device::lfilter), f32, 8 bytes per sample (x read, y
// written). Peers (cupyx, torchaudio) are measured from Python by
// bench/peers/ in the same session on the same machine. Filter: poles at
// 0.9 (real), 0.9 e^(+-0.5i), -0.8, then 0.7, -0.6, 0.5, -0.4, in that order,
// up to the order asked for (the real part of the polynomial).

std::vector<double> lfilter_a(int order) {
  std::vector<std::complex<double>> poly{1.0};
  std::complex<double> const poles[] = {
      0.9, std::polar(0.9, 0.5), std::polar(0.9, -0.5), -0.8, 0.7, -0.6, 0.5, -0.4};
  for (int k = 0; k < order; ++k) {
    std::vector<std::complex<double>> q(poly.size() + 1, 0.0);
    for (std::size_t i = 0; i < poly.size(); ++i) {
      q[i] += poly[i];
      q[i + 1] -= poly[i] * poles[k];
    }
    poly = q;
  }
  std::vector<double> a;
  for (auto c : poly) a.push_back(c.real());
  return a;
}

struct stream_filter_case : case_base {
  std::vector<dbuf<float>> x;
  dbuf<float> y;
  dbuf<char> temp;
  std::size_t temp_bytes = 0;
};

// call(temp, bytes, x, y, lay) runs ours; reference(xd, yd, m) the sequential
// filter in double on one lane's first m samples.
template <class Call, class Reference>
void bm_stream_filter(benchmark::State& st, std::string const& key, entry_info const& info, i64 lanes, i64 n,
                      unsigned seed, Call call, Reference reference) {
  guarded(st, key, [&] {
    layout const lay = layout::contiguous(n, lanes);
    i64 const total = n * lanes;
    std::size_t const sets = sets_for(4 * total);
    auto& c = acquire<stream_filter_case>(key, [&] {
      auto c = std::make_unique<stream_filter_case>();
      for (std::size_t k = 0; k < sets; ++k) {
        c->x.emplace_back(std::size_t(total));
        fill_uniform(c->x.back().get(), total, -1.0, 1.0, seed + k);
      }
      c->y = dbuf<float>(std::size_t(total));
      check(call(nullptr, c->temp_bytes, c->x[0].get(), c->y.get(), lay));
      c->temp = dbuf<char>(std::max<std::size_t>(c->temp_bytes, 1));
      check(cudaMemsetAsync(c->y.get(), 0xff, std::size_t(total) * 4, g_stream));
      std::size_t bytes = c->temp_bytes;
      check(call(c->temp.get(), bytes, c->x[0].get(), c->y.get(), lay));
      i64 const m = std::min(n, sample_len);
      for (i64 lane : {i64(0), lanes - 1}) {
        std::vector<float> hx(m), hy(m);
        check(cudaMemcpyAsync(hx.data(), c->x[0].get() + lane * n, m * 4, cudaMemcpyDeviceToHost, g_stream));
        check(cudaMemcpyAsync(hy.data(), c->y.get() + lane * n, m * 4, cudaMemcpyDeviceToHost, g_stream));
        check(cudaStreamSynchronize(g_stream));
        std::vector<double> xd(hx.begin(), hx.end()), yd(m);
        reference(xd, yd, m);
        double worst = 0, scale = 1;
        for (i64 i = 0; i < m; ++i) {
          worst = std::max(worst, std::fabs(double(hy[i]) - yd[i]));
          scale = std::max(scale, std::fabs(yd[i]));
        }
        if (!(worst <= 1e-3 * scale)) throw bench_failure("wrong result: error " + std::to_string(worst));
      }
      return c;
    });
    time_calls(st, sets, info, [&](std::size_t k) {
      std::size_t bytes = c.temp_bytes;
      check(call(c.temp.get(), bytes, c.x[k].get(), c.y.get(), lay));
    });
  });
}

void register_lfilter() {
  struct shape {
    i64 lanes, n;
  };
  // One lane of 1024 samples, order 2: the host time of a call on a small
  // input (host_loop_us; bench/python_bench.py's overhead entries). 4096
  // lanes of 2^16: a batch wide enough for whole sequences per block.
  for (shape sh :
       {shape{1, i64(1) << 24}, shape{64, i64(1) << 18}, shape{4096, i64(1) << 16}, shape{1, 1024}})
    for (int order = 1; order <= 8; ++order) {
      if (sh.n == 1024 && order != 2) continue;
      std::string const family = "lfilter_f32";
      std::string const key = arg_name(family, {{"order", order}, {"lanes", sh.lanes}, {"N", sh.n}});
      entry_info info{8.0 * double(sh.lanes * sh.n), role::ours, key, key};
      std::vector<float> a, b;
      for (double v : lfilter_a(order)) a.push_back(float(v));
      for (int k = 0; k <= order; ++k) b.push_back(float(0.5 / (k + 1)));
      auto call = [a, b](void* t, std::size_t& bytes, float const* x, float* y, layout const& lay) {
        return recur::device::lfilter<float>(t, bytes, b, a, x, y, lay, nullptr, nullptr, g_stream);
      };
      auto ref = [a, b](std::vector<double> const& x, std::vector<double>& y, i64 m) {
        std::vector<double> bd(b.begin(), b.end()), ad(a.begin(), a.end());
        recur::reference::lfilter<double>(bd, ad, x.data(), y.data(), layout::contiguous(m), nullptr,
                                          nullptr);
      };
      finish(benchmark::RegisterBenchmark(family.c_str(),
                                          [=](benchmark::State& st) {
                                            bm_stream_filter(st, key, info, sh.lanes, sh.n, 0x1f00u, call,
                                                             ref);
                                          })
                 ->Args({order, sh.lanes, sh.n})
                 ->ArgNames({"order", "lanes", "N"}));
    }
}

// sosfilt (4 sections, resonant biquads of pole radii 0.9,
// 0.85, 0.8, 0.75) and DPCM decoding (order-2 predictor 1.6 x_(i-1) -
// 0.64 x_(i-2), poles 0.8, 0.8), f32, 8 bytes per sample; checked against the
// sequential references in double on the first 2^16 samples of the first
// and last lanes.
std::vector<float> bench_sos() {
  std::vector<float> sos;
  for (int j = 0; j < 4; ++j) {
    double const r = 0.9 - 0.05 * j, t = 0.3 + 0.4 * j;
    for (float v : {0.2f, 0.3f, 0.1f, 1.0f, float(-2 * r * std::cos(t)), float(r * r)}) sos.push_back(v);
  }
  return sos;
}

void register_filters() {
  struct shape {
    i64 lanes, n;
  };
  static std::vector<float> const sos = bench_sos();
  static std::vector<float> const pred = {1.6f, -0.64f};
  for (shape sh :
       {shape{1, i64(1) << 24}, shape{64, i64(1) << 18}, shape{4096, i64(1) << 16}, shape{1, 1024}}) {
    {
      std::string const family = "sosfilt_f32";
      std::string const key = arg_name(family, {{"sections", 4}, {"lanes", sh.lanes}, {"N", sh.n}});
      entry_info info{8.0 * double(sh.lanes * sh.n), role::ours, key, key};
      auto call = [](void* t, std::size_t& b, float const* x, float* y, layout const& lay) {
        return recur::device::sosfilt<float>(t, b, sos, x, y, lay, nullptr, nullptr, g_stream);
      };
      auto ref = [](std::vector<double> const& x, std::vector<double>& y, i64 m) {
        std::vector<double> sd(sos.begin(), sos.end());
        recur::reference::sosfilt<double>(sd, x.data(), y.data(), layout::contiguous(m), nullptr, nullptr);
      };
      finish(benchmark::RegisterBenchmark(family.c_str(),
                                          [=](benchmark::State& st) {
                                            bm_stream_filter(st, key, info, sh.lanes, sh.n, 0x2f00u, call,
                                                             ref);
                                          })
                 ->Args({4, sh.lanes, sh.n})
                 ->ArgNames({"sections", "lanes", "N"}));
    }
    {
      std::string const family = "dpcm_decode_f32";
      std::string const key = arg_name(family, {{"order", 2}, {"lanes", sh.lanes}, {"N", sh.n}});
      entry_info info{8.0 * double(sh.lanes * sh.n), role::ours, key, key};
      auto call = [](void* t, std::size_t& b, float const* x, float* y, layout const& lay) {
        return recur::device::dpcm_decode<float>(t, b, pred, x, y, lay, nullptr, g_stream);
      };
      auto ref = [](std::vector<double> const& e, std::vector<double>& x, i64 m) {
        std::vector<double> c(pred.begin(), pred.end());
        recur::reference::dpcm_decode<double>(c, e.data(), x.data(), layout::contiguous(m), nullptr);
      };
      finish(benchmark::RegisterBenchmark(family.c_str(),
                                          [=](benchmark::State& st) {
                                            bm_stream_filter(st, key, info, sh.lanes, sh.n, 0x2f00u, call,
                                                             ref);
                                          })
                 ->Args({2, sh.lanes, sh.n})
                 ->ArgNames({"order", "lanes", "N"}));
    }
  }
}

// filtfilt (lfilter's order-2 filter) and sosfiltfilt (sosfilt's sections)
// through the public API on the stream, 256 lanes of 2^16 (the Python
// benchmark's shape), 8 bytes per sample; whole lanes (n <= sample_len)
// checked against recur::host's in double.
void register_filtfilt() {
  constexpr i64 lanes = 256, n = i64(1) << 16;
  static_assert(n <= sample_len, "a filtfilt sample depends on the whole lane: compare whole lanes");
  static std::vector<float> const sos = bench_sos();
  std::vector<float> a, b;
  for (double v : lfilter_a(2)) a.push_back(float(v));
  for (int k = 0; k <= 2; ++k) b.push_back(float(0.5 / (k + 1)));
  // The public API allocates its own temporary storage: no temp bytes.
  auto const ff = [a, b](void* t, std::size_t& bytes, float const* x, float* y, layout const& lay) {
    bytes = 0;
    if (t) recur::filtfilt<float>(recur::cuda{g_stream}, b, a, x, y, lay);
    return cudaGetLastError();
  };
  auto const ff_ref = [a, b](std::vector<double> const& x, std::vector<double>& y, i64 m) {
    std::vector<double> bd(b.begin(), b.end()), ad(a.begin(), a.end());
    recur::filtfilt<double>(recur::host{}, bd, ad, x.data(), y.data(), layout::contiguous(m));
  };
  auto const sff = [](void* t, std::size_t& bytes, float const* x, float* y, layout const& lay) {
    bytes = 0;
    if (t) recur::sosfiltfilt<float>(recur::cuda{g_stream}, sos, x, y, lay);
    return cudaGetLastError();
  };
  auto const sff_ref = [](std::vector<double> const& x, std::vector<double>& y, i64 m) {
    std::vector<double> sd(sos.begin(), sos.end());
    recur::sosfiltfilt<double>(recur::host{}, sd, x.data(), y.data(), layout::contiguous(m));
  };
  std::string const key = arg_name("filtfilt_f32", {{"order", 2}, {"lanes", lanes}, {"N", n}});
  entry_info const info{8.0 * double(lanes * n), role::ours, key, key};
  finish(benchmark::RegisterBenchmark(
             "filtfilt_f32",
             [=](benchmark::State& st) { bm_stream_filter(st, key, info, lanes, n, 0x3f00u, ff, ff_ref); })
             ->Args({2, lanes, n})
             ->ArgNames({"order", "lanes", "N"}));
  std::string const skey = arg_name("sosfiltfilt_f32", {{"sections", 4}, {"lanes", lanes}, {"N", n}});
  entry_info const sinfo{8.0 * double(lanes * n), role::ours, skey, skey};
  finish(benchmark::RegisterBenchmark("sosfiltfilt_f32",
                                      [=](benchmark::State& st) {
                                        bm_stream_filter(st, skey, sinfo, lanes, n, 0x3f00u, sff, sff_ref);
                                      })
             ->Args({4, lanes, n})
             ->ArgNames({"sections", "lanes", "N"}));
}

void register_all() {
  {
    std::string const key = arg_name("copy_ceiling", {{"bytes", copy_bytes}});
    finish(benchmark::RegisterBenchmark("copy_ceiling",
                                        [key](benchmark::State& st) { bm_copy_ceiling(st, key); })
               ->Arg(copy_bytes)
               ->ArgName("bytes"));
  }
  {
    std::string const key = arg_name("cub_inclusive_sum_f32", {{"N", sum_size}});
    finish(benchmark::RegisterBenchmark("cub_inclusive_sum_f32",
                                        [key](benchmark::State& st) { bm_cub_inclusive_sum(st, key); })
               ->Arg(sum_size)
               ->ArgName("N"));
  }
  register_peers<float>(sizes_f32, batch_shapes_f32);
  register_peers<double>(sizes_f64, batch_shapes);
  register_ours<float>(sizes_f32, batch_shapes_f32);
  register_ours<double>(sizes_f64, batch_shapes);
  // The host time of a call on a small input (bench/python_bench.py's overhead entries).
  register_single<float>("linrec", false, role::ours, 1024, recur_call<float>(linrec_variant::automatic));
  for (batch_shape bs : batch_shapes_bf16)
    register_batched<recur::bfloat16>("linrec", false, role::ours, bs,
                                      recur_call<recur::bfloat16>(linrec_variant::automatic));
  for (bool const interleaved : {false, true}) register_adjoint<float>(interleaved, batch_shapes[0]);
  register_scan<float, cuda::std::plus<>, gen_float>("sum_f32", i64(1) << 28, 1e-3);
  register_scan<recur::ops::affine<float>, recur::ops::compose, gen_affine>("affine_f32", i64(1) << 27, 1e-4);
  register_scan<mat3f, recur::ops::matrix_product, gen_rotation>("matrix3_f32", i64(1) << 24, 1e-2);
  register_chain3(i64(1) << 24);
  register_lfilter();
  register_filters();
  register_filtfilt();
  register_tridiag();
}

void add_context() {
  int dev = 0, runtime = 0, driver = 0;
  check(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, dev));
  check(cudaRuntimeGetVersion(&runtime));
  check(cudaDriverGetVersion(&driver));
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  g_l2_bytes = std::size_t(l2);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  benchmark::AddCustomContext("gpu_name", prop.name);
  benchmark::AddCustomContext("gpu_compute_capability",
                              std::to_string(prop.major) + "." + std::to_string(prop.minor));
  benchmark::AddCustomContext("gpu_sm_count", std::to_string(prop.multiProcessorCount));
  benchmark::AddCustomContext("gpu_memory_bytes", std::to_string(prop.totalGlobalMem));
  benchmark::AddCustomContext("gpu_l2_bytes", std::to_string(l2));
  benchmark::AddCustomContext("cuda_runtime", ver(runtime));
  benchmark::AddCustomContext("cuda_driver", ver(driver));
  benchmark::AddCustomContext("cub_version", std::to_string(CUB_VERSION));
  benchmark::AddCustomContext("recur_version", RECUR_VERSION_STRING);
  benchmark::AddCustomContext(
      "timing",
      "CUDA events around one call per iteration, a spin kernel ahead of the start event; "
      "time = mean per iteration run, median over repetitions; GB = 1e9 bytes");
}

bool init_device() {
  try {
    int devices = 0;
    check(cudaGetDeviceCount(&devices));
    if (devices == 0) throw bench_failure("no CUDA device");
    check(cudaSetDevice(0));
    check(cudaFree(nullptr));  // create the context outside any measurement
    check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    check(cudaEventCreate(&g_start));
    check(cudaEventCreate(&g_stop));
    add_context();
    return true;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "bench_linrec: %s\n", e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  for (char const* flag : default_flags) {
    std::string_view const name(flag, std::string_view(flag).find('='));
    bool given = false;
    for (int i = 1; i < argc; ++i) given |= std::string_view(argv[i]).starts_with(name);
    if (!given) args.insert(args.begin() + 1, const_cast<char*>(flag));
  }
  int nargs = int(args.size());
  args.push_back(nullptr);

  bool listing = false;  // --benchmark_list_tests needs no device
  for (int i = 1; i < nargs; ++i) {
    std::string_view const a(args[i]);
    listing |= a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true";
  }
  if (!listing && !init_device()) return 1;

  register_all();
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  g_case.reset();
  if (g_stream) {
    cudaEventDestroy(g_start);
    cudaEventDestroy(g_stop);
    cudaStreamDestroy(g_stream);
  }
  if (g_failures) std::fprintf(stderr, "bench_linrec: %d entries FAILED (see above)\n", g_failures);
  return g_failures ? 1 : 0;
}
