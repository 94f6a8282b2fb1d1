// Tuning programme of the batched tridiagonal solvers: the library's policy
// (kernels/tuning/tuning_tridiag.cuh) against candidate policies injected
// into the same ranked lists (kernels/dispatch/tridiag_resolve.cuh's
// tridiag_resolve_automatic<T, P> and tridiag_form_of<T, P>), on the
// benchmark's shapes or TUNE_SHAPES, f32 and f64, both layouts, with the
// device-to-device copy measured in the same process. A candidate that wins
// goes into the policy with one line naming the bench_linrec entry that
// confirms it.
//
//   build/bench/tune_tridiag [f32|f64] [candidate substring]
//   environment: TUNE_SHAPES="n:batch,..." (default: bench_tridiag.cu's
//   shapes), TUNE_LAYOUT=inter|contig, TUNE_COLD=1 (L2 evicted before each
//   timed call, as bench_linrec's rotated inputs are)
//
// Each plan is checked first (relative residual of 8 systems on the host),
// then timed (tune_util.cuh's median_ms). Bytes: 5 words per unknown.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

#include "tune_util.cuh"

namespace {

using recur::layout;
using recur::tridiag_algorithm;
namespace detail = recur::detail;
template <class T>
using base = recur::kernels::tridiag_policy_sm90<T>;

// The candidates: one field of the policy changed each.
template <class T>
struct seg64 : base<T> {
  static constexpr int segment_rows = 64;
};
template <class T>
struct seg256 : base<T> {
  static constexpr int segment_rows = 256;
};
template <class T>
struct no_dregs : base<T> {
  static constexpr int dregs_min_segments = 17;
};
template <class T>
struct no_wide : base<T> {
  static constexpr bool wide_segments = false;
};
template <class T>
struct tile16k : base<T> {
  static constexpr std::size_t thomas_pcr_smem = 16 * 1024;
};
template <class T>
struct columns4k : base<T> {
  static constexpr std::int64_t columns_min_count = 4096;
};
template <class T>
struct columns1k : base<T> {
  static constexpr std::int64_t columns_min_count = 1024;
};
template <class T>
struct columns512 : base<T> {
  static constexpr std::int64_t columns_min_count = 512;
};
// The partitioned form's shared-memory windows on contiguous systems too.
template <class T>
struct no_regs : base<T> {
  static constexpr bool partition_regs = false;
};
// The direct forms only where n fills their rows (the tile elsewhere), or 3/4.
template <class T>
struct no_pad : base<T> {
  static constexpr int direct_min_fill = 100;
};
template <class T>
struct pad75 : base<T> {
  static constexpr int direct_min_fill = 75;
};

double copy_gbs = 0;

__device__ double hash01(unsigned long long i, unsigned salt) {
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

// Diagonally dominant: a, c in (-1, 1), |b| in [|a| + |c| + 0.5, ... + 1.5).
template <class T>
__global__ void fill(T* a, T* b, T* c, T* d, std::size_t total) {
  for (std::size_t e = blockIdx.x * 256ull + threadIdx.x; e < total; e += 256ull * gridDim.x) {
    double const av = 2 * hash01(e, 1) - 1, cv = 2 * hash01(e, 2) - 1;
    double const m = fabs(av) + fabs(cv) + 0.5 + hash01(e, 3);
    a[e] = T(av), c[e] = T(cv);
    b[e] = T(hash01(e, 4) < 0.5 ? -m : m);
    d[e] = T(2 * hash01(e, 5) - 1);
  }
}

template <class T>
struct problem {
  layout lay;
  std::size_t total;
  T *a, *b, *c, *d, *x;
  explicit problem(layout l) : lay(l), total(std::size_t(l.n * l.count)) {
    for (T** p : {&a, &b, &c, &d, &x}) CK(cudaMalloc(p, total * sizeof(T)));
    fill<T><<<4096, 256>>>(a, b, c, d, total);
    CK(cudaDeviceSynchronize());
  }
  ~problem() {
    for (T* p : {a, b, c, d, x}) cudaFree(p);
  }
  // Worst relative residual over 8 systems spread over the batch.
  double residual() const {
    std::vector<T> ha(total), hb(total), hc(total), hd(total), hx(total);
    for (auto [h, dv] : {std::pair{&ha, a}, {&hb, b}, {&hc, c}, {&hd, d}, {&hx, x}})
      CK(cudaMemcpy(h->data(), dv, total * sizeof(T), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int s = 0; s < 8; ++s) {
      long long const k = (lay.count - 1) * s / 7;
      double rn = 0, xn = 0, an = 0;
      for (long long i = 0; i < lay.n; ++i) {
        auto at = [&](std::vector<T> const& v, long long j) { return double(v[lay.offset(j, k)]); };
        double r = at(hb, i) * at(hx, i) - at(hd, i);
        if (i > 0) r += at(ha, i) * at(hx, i - 1);
        if (i + 1 < lay.n) r += at(hc, i) * at(hx, i + 1);
        rn = std::max(rn, std::abs(r));
        xn = std::max(xn, std::abs(at(hx, i)));
        an = std::max(an, std::abs(i > 0 ? at(ha, i) : 0.0) + std::abs(at(hb, i)) +
                              std::abs(i + 1 < lay.n ? at(hc, i) : 0.0));
      }
      double const rel = rn / (an * xn);
      worst = std::isnan(rel) ? INFINITY : std::max(worst, rel);
    }
    return worst;
  }
};

char const* form_name(detail::tridiag_form const& form) {
  return std::visit(
      [](auto const& f) -> char const* {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, detail::tridiag_tile_plan>)
          return "tile";
        else if constexpr (std::is_same_v<F, detail::tridiag_global_thomas_plan>)
          return "global_thomas";
        else if constexpr (std::is_same_v<F, detail::tridiag_partition_plan>)
          return "partition";
        else if constexpr (std::is_same_v<F, detail::tridiag_direct_plan>)
          return "direct";
        else if constexpr (std::is_same_v<F, detail::tridiag_direct_columns_plan>)
          return "direct_columns";
        else if constexpr (std::is_same_v<F, detail::tridiag_columns_plan>)
          return "columns";
        else if constexpr (std::is_same_v<F, detail::tridiag_segments_plan>)
          return "segments";
        else if constexpr (std::is_same_v<F, detail::tridiag_pivot_plan>)
          return "pivot";
        else if constexpr (std::is_same_v<F, detail::tridiag_bondeli_plan>)
          return "bondeli";
        else
          return "?";
      },
      form);
}

// Solves the problem with policy P's automatic plan; prints time and % of copy.
template <class T, template <class> class P>
void run(problem<T>& pb, char const* name, char const* want) {
  if (want && !std::strstr(name, want)) return;
  detail::tridiag_device dev;
  CK(detail::tridiag_current_device(dev));
  tridiag_algorithm const alg = detail::tridiag_resolve_automatic<T, P<T>>(pb.lay, dev);
  auto const form = detail::tridiag_form_of<T, P<T>>(pb.lay, alg, dev);
  if (!form) CK(cudaErrorNotSupported);  // (no form runs the shape)
  detail::tridiag_solve_plan const pl{*form, dev};
  std::size_t const bytes = std::max<std::size_t>(1, detail::tridiag_workspace_bytes<T>(pb.lay, pl));
  void* ws = nullptr;
  CK(cudaMalloc(&ws, bytes));
  std::int64_t const rhs_stride = pb.lay.n * pb.lay.count;
  detail::tridiag_args<T> const args{pb.a, pb.b, pb.c, pb.d, pb.x, pb.lay, 1, rhs_stride, nullptr};
  auto launch = [&] { CK(detail::tridiag_launch<T>(pl, ws, args, nullptr)); };
  launch();
  CK(cudaDeviceSynchronize());
  double const res = pb.residual();
  float const ms = median_ms(launch);
  CK(cudaFree(ws));
  double const gbs = 5.0 * double(pb.total) * sizeof(T) / (ms * 1e-3) / 1e9;
  std::printf("%-10s %s %-6s n=%5lld batch=%8lld %-14s %9.4f ms %7.1f GB/s %5.1f%% copy  res %.1e%s\n", name,
              sizeof(T) == 4 ? "f32" : "f64", pb.lay.element_stride == 1 ? "contig" : "inter",
              (long long)pb.lay.n, (long long)pb.lay.count, form_name(pl.form), ms, gbs, 100 * gbs / copy_gbs,
              res, res < 64 * 1e-7 * (sizeof(T) == 4 ? 1 : 1e-9) ? "" : "  WRONG");
  std::fflush(stdout);
}

template <class T>
void shape(layout const& lay, char const* want) {
  problem<T> pb(lay);
  run<T, base>(pb, "policy", nullptr);
  run<T, seg64>(pb, "seg64", want);
  run<T, seg256>(pb, "seg256", want);
  run<T, no_dregs>(pb, "no_dregs", want);
  run<T, no_wide>(pb, "no_wide", want);
  run<T, tile16k>(pb, "tile16k", want);
  run<T, columns4k>(pb, "columns4k", want);
  run<T, columns1k>(pb, "columns1k", want);
  run<T, columns512>(pb, "columns512", want);
  run<T, no_pad>(pb, "no_pad", want);
  run<T, no_regs>(pb, "no_regs", want);
  run<T, pad75>(pb, "pad75", want);
}

}  // namespace

int main(int argc, char** argv) {
  char const* type = argc > 1 ? argv[1] : nullptr;
  char const* want = argc > 2 ? argv[2] : nullptr;
  if (std::getenv("TUNE_COLD")) tune_cold_enable();
  copy_gbs = tune_copy_ceiling_gbs();
  std::vector<std::pair<long long, long long>> shapes = {{64, 1 << 20},   {256, 1 << 17}, {512, 1 << 16},
                                                         {1024, 1 << 15}, {4096, 8192},   {512, 512}};
  if (char const* env = std::getenv("TUNE_SHAPES")) {
    shapes.clear();
    for (char const* p = env; *p;) {
      long long n = 0, b = 0;
      if (std::sscanf(p, "%lld:%lld", &n, &b) == 2) shapes.push_back({n, b});
      p = std::strchr(p, ',');
      if (!p) break;
      ++p;
    }
  }
  char const* only = std::getenv("TUNE_LAYOUT");
  for (auto [n, b] : shapes)
    for (bool inter : {false, true}) {
      if (only && std::strcmp(only, inter ? "inter" : "contig") != 0) continue;
      layout const lay = inter ? layout::interleaved(n, b) : layout::contiguous(n, b);
      if (!type || std::strcmp(type, "f32") == 0) shape<float>(lay, want);
      if (!type || std::strcmp(type, "f64") == 0) shape<double>(lay, want);
    }
  return 0;
}
