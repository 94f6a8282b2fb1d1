// One tridiagonal system on the CPU: LAPACK's ?gtsv on one core against
// recur::solve_batched(recur::host{t}): Thomas and CR on one thread, and the
// split of one system over t threads (automatic, the partition method;
// bondeli, Bondeli's algorithm). Prints a markdown table, one row per type, n,
// method and thread count: the best time over repetitions, and the speed-up
// over ?gtsv and over recur's one-thread Thomas. doc/tridiag-internals.md ("One system on many CPU threads")
// and the split threshold (lib/cpu/tridiag_split.hpp, tridiag_split_min_n)
// come from it.
//
//   bench_tridiag_cpu [--threads T] [--min-log2 A] [--max-log2 B] [--seconds S]
//
// threads: 2, 4, 8, ... up to T, and T (default: OpenMP's maximum); sizes
// n = 2^A .. 2^B, every power of two (default 2^12 .. 2^24); each entry is
// repeated until S seconds (default 0.5) and at least 5 times. The system:
// a, c uniform in [-1, 1), |b| uniform in [3, 4) with a random sign, d
// uniform in [-1, 1). ?gtsv overwrites its inputs, which are restored before
// each call, untimed. Every solution's relative residual is checked (16 n
// eps); a failure ends the program with status 1.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <recur/tridiag.hpp>

extern "C" void sgtsv_(int* n, int* nrhs, float* dl, float* d, float* du, float* b, int* ldb, int* info);
extern "C" void dgtsv_(int* n, int* nrhs, double* dl, double* d, double* du, double* b, int* ldb, int* info);

namespace {

struct options {
  int threads = omp_get_max_threads();
  int min_log2 = 12, max_log2 = 24;
  double seconds = 0.5;
};

template <class T>
struct system {
  std::vector<T> a, b, c, d, x;
  explicit system(std::int64_t n) : a(n), b(n), c(n), d(n), x(n) {
    std::mt19937_64 g(0x5eed + n);
    std::uniform_real_distribution<double> u(0, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(2 * u(g) - 1);
      c[i] = static_cast<T>(2 * u(g) - 1);
      b[i] = static_cast<T>((u(g) < 0.5 ? -1 : 1) * (3 + u(g)));
      d[i] = static_cast<T>(2 * u(g) - 1);
    }
    a[0] = c[n - 1] = 0;
  }
  double residual() const {  // ||A x - d|| / (||A|| ||x||), infinity norms
    std::int64_t const n = static_cast<std::int64_t>(b.size());
    double r = 0, xn = 0, an = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double v = double(b[i]) * x[i] - d[i], row = std::fabs(double(b[i]));
      if (i > 0) v += double(a[i]) * x[i - 1], row += std::fabs(double(a[i]));
      if (i + 1 < n) v += double(c[i]) * x[i + 1], row += std::fabs(double(c[i]));
      if (!std::isfinite(x[i])) return std::numeric_limits<double>::infinity();
      r = std::max(r, std::fabs(v)), xn = std::max(xn, std::fabs(double(x[i]))), an = std::max(an, row);
    }
    return r / (an * xn);
  }
};

// The best of at least 5 runs of f, and of as many as fit in `seconds`;
// prepare() runs untimed before each.
template <class F, class P>
double best_seconds(double seconds, P&& prepare, F&& f) {
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int rep = 0; rep < 5 || total < seconds; ++rep) {
    prepare();
    auto const t0 = std::chrono::steady_clock::now();
    f();
    double const t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, t), total += t;
  }
  return best;
}

bool failed = false;

template <class T>
void check(system<T> const& s, char const* what, std::int64_t n, int threads) {
  double const res = s.residual(), tol = 16.0 * double(n) * std::numeric_limits<T>::epsilon();
  if (!(res <= tol)) {
    std::fprintf(stderr, "bench_tridiag_cpu: %s n=%lld threads=%d: relative residual %g > %g\n", what,
                 static_cast<long long>(n), threads, res, tol);
    failed = true;
  }
}

template <class T>
void run(options const& o) {
  char const* const type = sizeof(T) == 4 ? "f32" : "f64";
  std::vector<int> threads;
  for (int t = 2; t < o.threads; t *= 2) threads.push_back(t);
  if (o.threads >= 2) threads.push_back(o.threads);
  for (int lg = o.min_log2; lg <= o.max_log2; ++lg) {
    std::int64_t const n = std::int64_t{1} << lg;
    system<T> s(n);
    std::vector<T> dl(s.a.begin() + 1, s.a.end()), dg(s.b), du(s.c.begin(), s.c.end() - 1);
    auto const restore = [&] {
      std::copy(s.a.begin() + 1, s.a.end(), dl.begin());
      std::copy(s.b.begin(), s.b.end(), dg.begin());
      std::copy(s.c.begin(), s.c.end() - 1, du.begin());
      std::copy(s.d.begin(), s.d.end(), s.x.begin());
    };
    int nn = static_cast<int>(n), one = 1, info = 0;
    double const gtsv = best_seconds(o.seconds, restore, [&] {
      if constexpr (sizeof(T) == 4)
        sgtsv_(&nn, &one, dl.data(), dg.data(), du.data(), s.x.data(), &nn, &info);
      else
        dgtsv_(&nn, &one, dl.data(), dg.data(), du.data(), s.x.data(), &nn, &info);
    });
    check(s, "gtsv", n, 1);
    std::printf("| %s | 2^%d | LAPACK ?gtsv | 1 | %.3f | 1.00 | |\n", type, lg, 1e3 * gtsv);
    auto const solve = [&](recur::tridiag_algorithm alg, int t) {
      recur::tridiag_options opt;
      opt.algorithm = alg;
      return best_seconds(
          o.seconds, [] {},
          [&] {
            recur::solve_batched(recur::host{t}, s.a.data(), s.b.data(), s.c.data(), s.d.data(), s.x.data(),
                                 n, opt);
          });
    };
    double const thomas = solve(recur::tridiag_algorithm::thomas, 1);
    check(s, "thomas", n, 1);
    std::printf("| %s | 2^%d | thomas | 1 | %.3f | %.2f | 1.00 |\n", type, lg, 1e3 * thomas, gtsv / thomas);
    double const cr = solve(recur::tridiag_algorithm::cr, 1);
    check(s, "cr", n, 1);
    std::printf("| %s | 2^%d | cr | 1 | %.3f | %.2f | %.2f |\n", type, lg, 1e3 * cr, gtsv / cr, thomas / cr);
    for (auto const alg : {recur::tridiag_algorithm::automatic, recur::tridiag_algorithm::bondeli})
      for (int const t : threads) {
        double const sec = solve(alg, t);
        check(s, recur::to_string(alg), n, t);
        std::printf("| %s | 2^%d | %s (%s) | %d | %.3f | %.2f | %.2f |\n", type, lg, recur::to_string(alg),
                    recur::to_string(recur::resolve_tridiag_algorithm<T>(recur::host{t},
                                                                         recur::layout::contiguous(n), alg)),
                    t, 1e3 * sec, gtsv / sec, thomas / sec);
      }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; i += 2) {
    std::string const k = argv[i];
    if (i + 1 == argc) {
      std::fprintf(stderr, "bench_tridiag_cpu: %s needs a value\n", k.c_str());
      return 2;
    }
    double const v = std::atof(argv[i + 1]);
    if (k == "--threads")
      o.threads = static_cast<int>(v);
    else if (k == "--min-log2")
      o.min_log2 = static_cast<int>(v);
    else if (k == "--max-log2")
      o.max_log2 = static_cast<int>(v);
    else if (k == "--seconds")
      o.seconds = v;
    else {
      std::fprintf(stderr, "bench_tridiag_cpu: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::printf(
      "| type | n | method (runs) | threads | ms | vs ?gtsv | vs thomas |\n|---|---|---|---|---|---|---|\n");
  run<float>(o);
  run<double>(o);
  return failed ? 1 : 0;
}
