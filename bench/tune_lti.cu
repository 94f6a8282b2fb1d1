// Tile shapes of the LTI agent (kernels/agent/agent_lti.cuh) on the H100:
// lfilter orders 1 and 4, a 4-section sosfilt, DPCM decode (order 2) and
// long-memory order-1 and order-2 filters, f32, one lane of 2^24 samples and 64 lanes of 2^18, every policy
// checked against the default one, times as the median of 30 runs (CUDA
// events; the runs cycle through 4 copies of the input so it does not stay
// in L2), % of the device-to-device copy measured in the same run (8 bytes
// per sample).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <recur/kernels/dispatch/dispatch_lti.cuh>
#include "tune_util.cuh"

using recur::layout;
namespace k = recur::kernels;

template <int B, int I, int D, int M, bool C = false>
using pol = k::lti_shape<B, I, D, M, C>;

float* g_x;
// Copies of g_x the timed runs cycle through (with g_x), as bench_linrec's
// sets do, so that no run finds its input in L2 from the one before.
constexpr int g_copies = 3;
float* g_xs[g_copies];
float* g_y;
float* g_ref;
void* g_temp;
std::size_t g_temp_bytes = std::size_t(64) << 20;
double g_copy_gbs;
bool g_check = false;
bool g_long_only = false;

template <class Policy, class Sys>
void run(char const* name, char const* pname, Sys const& sys, layout lay, bool reference) {
  std::size_t bytes = 0;
  CK((k::dispatch_lti<float, Policy>(nullptr, bytes, sys, g_x, g_y, lay, nullptr, nullptr, Sys::K, 0)));
  if (bytes > g_temp_bytes) {
    std::printf("%s %s: temp too large\n", name, pname);
    return;
  }
  auto launch = [&] {
    std::size_t b = g_temp_bytes;
    CK((k::dispatch_lti<float, Policy>(g_temp, b, sys, g_x, g_y, lay, nullptr, nullptr, Sys::K, 0)));
  };
  std::size_t const total = std::size_t(lay.n * lay.count);
  CK(cudaMemset(g_y, 0xff, total * 4));
  launch();
  CK(cudaDeviceSynchronize());
  double worst = 0;
  if (reference) {
    CK(cudaMemcpy(g_ref, g_y, total * 4, cudaMemcpyDeviceToDevice));
  } else {
    std::vector<float> a(total), b(total);
    CK(cudaMemcpy(a.data(), g_y, total * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), g_ref, total * 4, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < total; ++i) {
      double const d = std::fabs(double(a[i]) - double(b[i]));
      if (!(d <= worst)) worst = d;
    }
  }
  {  // run to run: the same bits
    std::vector<float> a(total), b(total);
    CK(cudaMemcpy(a.data(), g_y, total * 4, cudaMemcpyDeviceToHost));
    for (int rep = 0; rep < 3; ++rep) {
      launch();
      CK(cudaMemcpy(b.data(), g_y, total * 4, cudaMemcpyDeviceToHost));
      std::size_t diff = 0, first = 0;
      for (std::size_t i = 0; i < total; ++i)
        if (std::memcmp(&a[i], &b[i], 4) != 0 && diff++ == 0) first = i;
      if (diff)
        std::printf("    NOT REPRODUCIBLE: run %d differs in %zu values, first at %zu\n", rep, diff, first);
    }
  }
  if (g_check) {  // against the sequential filter in double
    std::vector<float> hx(total), hy(total);
    CK(cudaMemcpy(hx.data(), g_x, total * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), g_y, total * 4, cudaMemcpyDeviceToHost));
    auto const hs = sys.template cast<double>();
    double err = 0, mag = 0;
    long long first_bad = -1;
    for (std::int64_t q = 0; q < lay.count; ++q) {
      double z[Sys::K] = {};
      for (std::int64_t i = 0; i < lay.n; ++i) {
        std::size_t const o = std::size_t(q * lay.n + i);
        double const y = hs.step(z, double(hx[o]));
        double const d = std::fabs(double(hy[o]) - y);
        if (!(d <= err)) err = d;
        if (first_bad < 0 && !(std::fabs(double(hy[o])) < 1e30)) first_bad = (long long)o;
        mag = std::fmax(mag, std::fabs(y));
      }
    }
    std::printf("    vs double reference: max error %.3g, max |y| %.3g, first non-finite at %lld\n", err, mag,
                first_bad);
  }
  int next = 0;
  float const ms = median_ms([&] {
    std::size_t b = g_temp_bytes;
    float const* const x = next == 0 ? g_x : g_xs[next - 1];
    next = (next + 1) % (g_copies + 1);
    CK((k::dispatch_lti<float, Policy>(g_temp, b, sys, x, g_y, lay, nullptr, nullptr, Sys::K, 0)));
  });
  double const gbs = 8.0 * double(total) / (ms * 1e6);
  std::printf("%-28s %-16s %8.4f ms %7.1f GB/s %5.1f%% of copy  max diff vs default %.3g\n", name, pname, ms,
              gbs, 100 * gbs / g_copy_gbs, worst);
}

template <class Sys>
void sweep(char const* name, Sys const& sys, layout lay) {
  run<void>(name, "default", sys, lay, true);
  run<pol<128, 32, 128, 6, true>>(name, "128x32 mb6 corr", sys, lay, false);
  run<pol<128, 32, 128, 3>>(name, "128x32 mb3", sys, lay, false);
  run<pol<128, 32, 128, 5>>(name, "128x32 mb5", sys, lay, false);
  run<pol<128, 32, 128, 2>>(name, "128x32 mb2", sys, lay, false);
  run<pol<256, 32, 128, 3>>(name, "256x32 mb3", sys, lay, false);
  run<pol<256, 16, 128, 6, true>>(name, "256x16 mb6 corr", sys, lay, false);
  run<pol<128, 16, 128, 8, true>>(name, "128x16 mb8 corr", sys, lay, false);
  run<pol<128, 16, 128, 6>>(name, "128x16 mb6", sys, lay, false);
}

int main(int argc, char** argv) {
  g_long_only = argc > 1 && std::strcmp(argv[1], "long") == 0;
  std::size_t const n = std::size_t(1) << 24;
  CK(cudaMalloc(&g_x, n * 4));
  CK(cudaMalloc(&g_y, n * 4));
  CK(cudaMalloc(&g_ref, n * 4));
  CK(cudaMalloc(&g_temp, g_temp_bytes));
  {
    std::vector<float> h(n);
    unsigned s = 1;
    for (auto& v : h) {
      s = s * 1664525u + 1013904223u;
      v = float(s >> 8) / float(1 << 24) * 2 - 1;
    }
    CK(cudaMemcpy(g_x, h.data(), n * 4, cudaMemcpyHostToDevice));
    for (auto& c : g_xs) {
      CK(cudaMalloc(&c, n * 4));
      CK(cudaMemcpy(c, h.data(), n * 4, cudaMemcpyHostToDevice));
    }
  }
  {
    std::size_t const cb = std::size_t(1) << 30;
    void *a, *b;
    CK(cudaMalloc(&a, cb / 2));
    CK(cudaMalloc(&b, cb / 2));
    float const ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, cb / 2, cudaMemcpyDeviceToDevice)); });
    g_copy_gbs = double(cb) / (ms * 1e6);
    std::printf("copy ceiling %.0f GB/s\n", g_copy_gbs);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  // Poles 0.9, 0.9 e^(+-0.5i), -0.8 (bench_linrec's lfilter entries).
  k::lfilter_system<float, 1> o1{{0.5f, 0.25f}, {1.0f, -0.9f}};
  double const c = std::cos(0.5);
  // (1 - 0.9 z)(1 - 1.8 c z + 0.81 z^2)(1 + 0.8 z)
  double p[5] = {1, 0, 0, 0, 0};
  auto mul = [&](double a1, double a2) {
    double q[5] = {};
    for (int i = 0; i < 5; ++i) {
      q[i] += p[i];
      if (i + 1 < 5) q[i + 1] += a1 * p[i];
      if (i + 2 < 5) q[i + 2] += a2 * p[i];
    }
    for (int i = 0; i < 5; ++i) p[i] = q[i];
  };
  mul(-0.9, 0);
  mul(-1.8 * c, 0.81);
  mul(0.8, 0);
  k::lfilter_system<float, 4> o4;
  for (int j = 0; j <= 4; ++j) o4.a[j] = float(p[j]), o4.b[j] = float(0.5 / (j + 1));
  k::sos_system<float, 4> s4;
  for (int j = 0; j < 4; ++j) {
    double const r = 0.9 - 0.05 * j, t = 0.3 + 0.4 * j;
    s4.b[j][0] = 0.2f, s4.b[j][1] = 0.3f, s4.b[j][2] = 0.1f;
    s4.a[j][0] = 1, s4.a[j][1] = float(-2 * r * std::cos(t)), s4.a[j][2] = float(r * r);
  }
  // Long memory: real poles 0.9999 and 0.999 (order 2), 0.99999 (order 1).
  k::lfilter_system<float, 2> slow{{0.01f, 0.0f, 0.0f},
                                   {1.0f, float(-(0.9999 + 0.999)), float(0.9999 * 0.999)}};
  k::lfilter_system<float, 1> slow1{{0.01f, 0.0f}, {1.0f, -0.99999f}};
  // DPCM decode of bench_linrec's order-2 predictor 1.6 x_(i-1) - 0.64 x_(i-2).
  k::order_k_system<float, 2> dpcm2{{1.6f, -0.64f}};
  for (layout lay : {layout::contiguous(std::int64_t(n)), layout::contiguous(std::int64_t(n) / 64, 64)}) {
    std::printf("--- lanes %lld x N %lld\n", (long long)lay.count, (long long)lay.n);
    if (!g_long_only) {
      sweep("lfilter order 1", o1, lay);
      sweep("lfilter order 4", o4, lay);
      sweep("sosfilt 4 sections", s4, lay);
      sweep("dpcm decode order 2", dpcm2, lay);
    }
    g_check = true;
    sweep("order 2, poles .9999 .999", slow, lay);
    sweep("order 1, pole 0.99999", slow1, lay);
    g_check = false;
  }
  return 0;
}
