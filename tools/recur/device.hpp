#pragma once
// Where a command runs: --device cpu|gpu|auto resolved, and the arrays of
// one run staged in the memory of the executor that runs it. On the CPU the
// library works on the host arrays themselves; on the GPU inputs are copied
// to device buffers, outputs computed in device buffers and copied back.
// Commands write their library calls once, for either executor:
//
//   device dev(kind);
//   float const* x = dev.input(std::span<float const>(host_x));
//   float* y = dev.output(std::span<float>(host_y));
//   dev.run([&](auto const& ex) { recur::lfilter(ex, b, a, x, y, lay); });
//   dev.fetch();  // host_y now holds the result
//
// The CUDA runtime is used here only (device buffers, a stream, events).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <recur/executor.hpp>

#include "cli.hpp"

struct CUevent_st;  // cudaEvent_t is CUevent_st*; no CUDA header needed

namespace recur_cli {

enum class device_kind { cpu, gpu };

// The highest order recur::cuda runs lfilter and the DPCM codecs with
// (include/recur/filter.hpp: orders 0-8; recur::host has no limit).
inline constexpr std::int64_t gpu_max_order = 8;

// --device's value (cpu, gpu or auto; default auto) resolved to a device:
// auto is the GPU when there is one and `gpu_unsupported` is empty, else the
// CPU; gpu is an input error naming --device when there is no CUDA device or
// `gpu_unsupported` says why the GPU cannot run this. A value other than the
// three is a usage error.
device_kind select_device(arguments const& args, std::string const& gpu_unsupported = {});

// One line for the demo: the device, or the CPU and its threads.
std::string device_line(device_kind kind);

// The arrays of one run and the executor that runs it.
class device {
 public:
  explicit device(device_kind kind);
  ~device();
  device(device const&) = delete;
  device& operator=(device const&) = delete;

  bool is_gpu() const { return kind_ == device_kind::gpu; }

  // An input: the host array itself on the CPU, a device copy on the GPU.
  template <class T>
  T const* input(std::span<T const> host) {
    return static_cast<T const*>(stage(host.data(), host.size_bytes(), false));
  }
  // An output: the host array itself on the CPU; on the GPU a device array
  // that starts as a copy of it and that fetch() copies back.
  template <class T>
  T* output(std::span<T> host) {
    return static_cast<T*>(stage(host.data(), host.size_bytes(), true));
  }

  // f(recur::host{}) or f(recur::cuda{stream}); on the GPU the work is
  // queued on the stream.
  template <class F>
  void run(F&& f) {
    if (is_gpu())
      f(recur::cuda{stream_});
    else
      f(recur::host{});
  }

  // Waits for the queued work and copies every output back to its host array.
  void fetch();

  // run(f) timed: milliseconds between CUDA events around it on the GPU,
  // std::chrono on the CPU.
  template <class F>
  double time_ms(F&& f) {
    if (!is_gpu()) {
      auto const t0 = std::chrono::steady_clock::now();
      run(f);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    start_timer();
    run(f);
    return stop_timer();
  }

 private:
  struct staged {
    void* host;
    void* dev;
    std::size_t bytes;
    bool output;
  };
  void* stage(void const* host, std::size_t bytes, bool output);
  void start_timer();
  double stop_timer();

  device_kind kind_;
  CUstream_st* stream_ = nullptr;
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
  std::vector<staged> buffers_;
};

// y[lane] = call(x[lane]) for every lane along the view's axis, on `kind`:
// call(ex, x, y, layout) for each block of lanes (for_each_block), with x and
// y the block's arrays in the executor's memory. Returns y, x's shape.
template <class T, class Call>
std::vector<T> map_lanes(device_kind kind, axis_view const& v, std::span<T const> x, Call&& call) {
  std::vector<T> y(x.size());
  device dev(kind);
  T const* dx = dev.input(x);
  T* dy = dev.output(std::span<T>(y));
  for_each_block(v, [&](std::int64_t offset, recur::layout const& lay, std::int64_t) {
    dev.run([&](auto const& ex) { call(ex, dx + offset, dy + offset, lay); });
  });
  dev.fetch();
  return y;
}

}  // namespace recur_cli
