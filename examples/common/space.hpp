#pragma once
// Where an example's arrays live and its work runs: host_space (the CPU,
// recur::host) or cuda_space (the current CUDA device and a stream of its
// own, recur::cuda). The examples are written once, as templates over the
// space: a space gives the executor that the library's calls take, memory,
// and copies to and from the host; each example's grid operations are
// overloads on the space (CPU loops, or small kernels in a .cu file).
//
// cuda_space's members are defined in cuda_space.cpp, which only a build
// with CUDA compiles (RECUR_HAS_CUDA); without it nothing may use them.
#include <cstddef>
#include <utility>

#include <recur/executor.hpp>

struct CUgraphExec_st;  // cudaGraphExec_t is CUgraphExec_st*

namespace recur_examples {

class cuda_space;

// Work recorded from a cuda_space's stream once and launched as one CUDA
// graph after (cuda_space::capture): a graph's kernels start without the
// host's launch overhead, which dominates the small kernels of a V-cycle's
// coarse grids. Empty until captured.
class cuda_graph {
 public:
  cuda_graph() = default;
  ~cuda_graph();
  cuda_graph(cuda_graph&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  cuda_graph& operator=(cuda_graph&& o) noexcept {
    std::swap(exec_, o.exec_);
    return *this;
  }
  bool empty() const { return exec_ == nullptr; }

 private:
  friend class cuda_space;
  explicit cuda_graph(CUgraphExec_st* exec) : exec_(exec) {}
  CUgraphExec_st* exec_ = nullptr;
};

struct host_space {
  recur::host executor() const { return {}; }
  void* allocate(std::size_t bytes) const;
  void deallocate(void* p) const noexcept;
  void to_space(void* dst, void const* host, std::size_t bytes) const;
  void to_host(void* host, void const* src, std::size_t bytes) const;
  // Within the space's memory, spread over the OpenMP threads.
  void copy(void* dst, void const* src, std::size_t bytes) const;
  void synchronize() const {}
};

// Allocation and the stream's creation are setup, not the hot path: the
// examples allocate everything before they iterate. to_host waits for the
// stream; the other copies and all kernels are queued on it.
class cuda_space {
 public:
  cuda_space();
  ~cuda_space();
  cuda_space(cuda_space const&) = delete;
  cuda_space& operator=(cuda_space const&) = delete;

  recur::cuda executor() const { return {stream_}; }
  CUstream_st* stream() const { return stream_; }
  void* allocate(std::size_t bytes) const;
  void deallocate(void* p) const noexcept;
  void to_space(void* dst, void const* host, std::size_t bytes) const;
  void to_host(void* host, void const* src, std::size_t bytes) const;
  void copy(void* dst, void const* src, std::size_t bytes) const;  // device to device, queued
  void synchronize() const;

  // g = the work that queue() queues on the stream, recorded (not run);
  // launch(g) queues it. The recorded kernels keep their arguments: the
  // same pointers every launch. What queue() calls must queue work only
  // (no waits, no copies to the host).
  template <class Queue>
  void capture(cuda_graph& g, Queue&& queue) const {
    begin_capture();
    try {
      queue();
    } catch (...) {
      end_capture(nullptr);
      throw;
    }
    end_capture(&g);
  }
  void launch(cuda_graph const& g) const;

  // Device memory for the partial sums of reductions (defect).
  static constexpr int scratch_values = 1024;
  double* scratch() const { return scratch_; }

 private:
  void begin_capture() const;
  void end_capture(cuda_graph* g) const;  // null: discard the recording

  CUstream_st* stream_ = nullptr;
  double* scratch_ = nullptr;
};

// An array of `size` values of T in a space's memory, owned.
template <class T, class Space>
class buffer {
 public:
  buffer() = default;
  buffer(Space const& space, std::size_t size)
      : space_(&space), data_(static_cast<T*>(space.allocate(size * sizeof(T)))), size_(size) {}
  ~buffer() {
    if (data_) space_->deallocate(data_);
  }
  buffer(buffer&& o) noexcept
      : space_(o.space_), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  buffer& operator=(buffer&& o) noexcept {
    std::swap(space_, o.space_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  Space const* space_ = nullptr;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace recur_examples
