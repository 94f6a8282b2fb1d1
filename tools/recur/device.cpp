// Device selection and device buffers (device.hpp): the recur program's one
// use of the CUDA runtime.
#include "device.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#if RECUR_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace recur_cli {

device_kind select_device(arguments const& args, std::string const& gpu_unsupported) {
  std::string const value = args.value_or("--device", "auto");
  if (value != "cpu" && value != "gpu" && value != "auto")
    usage_error("--device", fmt::format("must be cpu, gpu or auto, not '{}'", value));
  if (value == "cpu") return device_kind::cpu;
  bool const present = recur::cuda_device_count() > 0;
  if (value == "auto") return present && gpu_unsupported.empty() ? device_kind::gpu : device_kind::cpu;
  if (!recur::cuda_compiled())
    input_error("--device gpu", "this build of recur has no CUDA backend (use --device cpu or auto)");
  if (!present)  // the description says why: "no CUDA device (...)"
    input_error("--device gpu",
                fmt::format("{} (use --device cpu or auto)", recur::cuda_device_description()));
  if (!gpu_unsupported.empty())
    input_error("--device gpu", fmt::format("{} (use --device cpu or auto)", gpu_unsupported));
  return device_kind::gpu;
}

std::string device_line(device_kind kind) {
  if (kind == device_kind::gpu) return fmt::format("cuda, {}", recur::cuda_device_description());
  std::string const why = !recur::cuda_compiled()          ? "this build has no CUDA backend"
                          : recur::cuda_device_count() > 0 ? "--device cpu given"
                                                           : recur::cuda_device_description();
  return fmt::format("host, {} hardware threads (running on the CPU: {})",
                     std::max(1u, std::thread::hardware_concurrency()), why);
}

#if RECUR_HAS_CUDA

namespace {

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) input_error("gpu", fmt::format("{} failed: {}", what, cudaGetErrorString(e)));
}

}  // namespace

device::device(device_kind kind) : kind_(kind) {
  if (!is_gpu()) return;
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

device::~device() {
  for (staged const& b : buffers_) cudaFree(b.dev);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

void* device::stage(void const* host, std::size_t bytes, bool output) {
  if (!is_gpu()) return const_cast<void*>(host);
  staged b{const_cast<void*>(host), nullptr, bytes, output};
  // At least one byte: an empty array still gets a valid, distinct pointer.
  check(cudaMalloc(&b.dev, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
  buffers_.push_back(b);
  if (bytes) check(cudaMemcpyAsync(b.dev, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpy");
  return b.dev;
}

void device::fetch() {
  if (!is_gpu()) return;
  for (staged const& b : buffers_)
    if (b.output && b.bytes)
      check(cudaMemcpyAsync(b.host, b.dev, b.bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpy");
  check(cudaStreamSynchronize(stream_), "the queued work");
}

void device::start_timer() {
  if (!start_) check(cudaEventCreate(&start_), "cudaEventCreate");
  if (!stop_) check(cudaEventCreate(&stop_), "cudaEventCreate");
  check(cudaEventRecord(start_, stream_), "cudaEventRecord");
}

double device::stop_timer() {
  check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  check(cudaEventSynchronize(stop_), "the timed work");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

#else  // a build without CUDA: select_device never picks the GPU

device::device(device_kind kind) : kind_(kind) {
  if (is_gpu()) throw std::logic_error("recur: no CUDA backend in this build");
}
device::~device() = default;
void* device::stage(void const* host, std::size_t, bool) { return const_cast<void*>(host); }
void device::fetch() {}
void device::start_timer() {}
double device::stop_timer() { return 0; }

#endif

}  // namespace recur_cli
