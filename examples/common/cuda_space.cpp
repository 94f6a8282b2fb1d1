// cuda_space (space.hpp): device memory and a stream through the CUDA
// runtime. Compiled only in a build with CUDA.
#include <string>

#include <cuda_runtime_api.h>

#include <recur/error.hpp>

#include "common/space.hpp"

namespace recur_examples {

namespace {

void check(cudaError_t e, char const* call) {
  if (e != cudaSuccess)
    throw recur::cuda_error(std::string(call) + " failed: " + cudaGetErrorString(e), static_cast<int>(e));
}

}  // namespace

cuda_space::cuda_space() {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cudaError_t const e = cudaMalloc(reinterpret_cast<void**>(&scratch_), scratch_values * sizeof(double));
  if (e != cudaSuccess) {
    cudaStreamDestroy(stream_);
    check(e, "cudaMalloc");
  }
}

cuda_space::~cuda_space() {
  cudaFree(scratch_);
  cudaStreamDestroy(stream_);
}

void* cuda_space::allocate(std::size_t bytes) const {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}

void cuda_space::deallocate(void* p) const noexcept {
  // The stream may still use p: wait for it before the memory is reused.
  cudaStreamSynchronize(stream_);
  cudaFree(p);
}

void cuda_space::to_space(void* dst, void const* host, std::size_t bytes) const {
  if (bytes) check(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
}

void cuda_space::to_host(void* host, void const* src, std::size_t bytes) const {
  if (bytes) check(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
  synchronize();
}

void cuda_space::copy(void* dst, void const* src, std::size_t bytes) const {
  if (bytes) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
}

void cuda_space::begin_capture() const {
  // Relaxed: the library's calls may ask the runtime about pointers
  // (cudaPointerGetAttributes) while the stream records.
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
}

void cuda_space::end_capture(cuda_graph* g) const {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  cudaGraphExec_t exec = nullptr;
  if (e == cudaSuccess && g) e = cudaGraphInstantiate(&exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  check(e, g ? "recording a CUDA graph" : "cudaStreamEndCapture");
  if (g) *g = cuda_graph(exec);
}

void cuda_space::launch(cuda_graph const& g) const {
  check(cudaGraphLaunch(g.exec_, stream_), "cudaGraphLaunch");
}

cuda_graph::~cuda_graph() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

void cuda_space::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

}  // namespace recur_examples
