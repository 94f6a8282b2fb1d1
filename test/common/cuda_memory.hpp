#pragma once
// Device memory, streams and preconditions for the GPU tests (host-API
// suites built by the C++ compiler and device-level suites built by nvcc
// alike: no fmt here).
//
// The work runs on non-blocking streams: the library must order what it does
// on the stream it is given, not on the legacy default stream. Uploads from
// pageable memory may still be in flight when cudaMemcpy returns and
// cudaMemset runs on the legacy stream, so a test calls settle() before
// handing buffers to a call on such a stream, and finish(stream) after it.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <boost/test/unit_test.hpp>

namespace recur_test {

// Throws std::runtime_error naming the call and the CUDA error: the test case
// fails with that message.
inline void cuda_ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA call failed: ") + what + ": " + cudaGetErrorString(e) + " (" +
                             std::to_string(static_cast<int>(e)) + ")");
}

// cuda_ok with the call's own text as the name.
#define RECUR_TEST_CUDA_OK(call) ::recur_test::cuda_ok((call), #call)

// Where a buffer lives. All three are valid for recur::cuda.
enum class memory { device, managed, pinned };

// `size` values of T (at least one element is allocated, so the pointer is
// never null), freed on scope exit.
template <class T>
struct dbuf {
  T* p = nullptr;
  std::size_t size = 0;
  memory kind = memory::device;

  dbuf() = default;
  explicit dbuf(std::size_t elements, memory m = memory::device) : size(elements), kind(m) {
    void* v = nullptr;
    std::size_t const bytes = (elements ? elements : 1) * sizeof(T);
    switch (m) {
      case memory::device:
        cuda_ok(cudaMalloc(&v, bytes), "cudaMalloc");
        break;
      case memory::managed:
        cuda_ok(cudaMallocManaged(&v, bytes), "cudaMallocManaged");
        break;
      case memory::pinned:
        cuda_ok(cudaMallocHost(&v, bytes), "cudaMallocHost");
        break;
    }
    p = static_cast<T*>(v);
  }
  dbuf(dbuf&& o) noexcept : p(std::exchange(o.p, nullptr)), size(o.size), kind(o.kind) {}
  dbuf& operator=(dbuf&& o) noexcept {
    std::swap(p, o.p);
    std::swap(size, o.size);
    std::swap(kind, o.kind);
    return *this;
  }
  dbuf(dbuf const&) = delete;
  dbuf& operator=(dbuf const&) = delete;
  ~dbuf() {
    if (p) (void)(kind == memory::pinned ? cudaFreeHost(p) : cudaFree(p));
  }

  // The first `elements` values (all of them by default), copied to the host.
  std::vector<T> read(std::size_t elements) const {
    std::vector<T> h(elements);
    if (elements)
      cuda_ok(cudaMemcpy(h.data(), p, elements * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
    return h;
  }
  std::vector<T> read() const { return read(size); }
};

// A copy of a host array (any container with data() and size()).
template <class C>
dbuf<typename C::value_type> upload(C const& h, memory m = memory::device) {
  using T = typename C::value_type;
  dbuf<T> d(h.size(), m);
  if (!h.empty())
    cuda_ok(cudaMemcpy(d.p, h.data(), h.size() * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (upload)");
  return d;
}

// `elements` values with every byte `byte` (0xFF: poison.hpp's poison, a NaN).
template <class T>
dbuf<T> poisoned(std::size_t elements, memory m = memory::device, int byte = 0xFF) {
  dbuf<T> d(elements, m);
  if (elements == 0) return d;
  if (m == memory::pinned)
    std::memset(d.p, byte, elements * sizeof(T));
  else
    cuda_ok(cudaMemset(d.p, byte, elements * sizeof(T)), "cudaMemset");
  return d;
}

inline cudaStream_t make_stream() {
  cudaStream_t s = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}
// The stream the tests' work runs on, and a second one (for "the same bits
// on another stream").
inline cudaStream_t test_stream() {
  static cudaStream_t const s = make_stream();
  return s;
}
inline cudaStream_t other_stream() {
  static cudaStream_t const s = make_stream();
  return s;
}

// Before a call on a non-blocking stream: uploads and memsets done.
inline void settle() { cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before the call)"); }

// After a call: its work done, and any asynchronous error raised.
inline void finish(cudaStream_t s = test_stream()) {
  cuda_ok(cudaStreamSynchronize(s), "cudaStreamSynchronize (after the call)");
  cuda_ok(cudaGetLastError(), "the call's kernels");
}

// ------------------------------------------------------- preconditions ----

inline std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kb = 0;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// A Boost.Test precondition for the big cases: enough free device and host
// memory, and RECUR_TEST_SKIP_HUGE not set (e.g. under compute-sanitizer). A
// case that fails it is reported as skipped, with the reason.
struct enough_memory {
  double device_gib, host_gib;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result r(true);
    if (char const* e = std::getenv("RECUR_TEST_SKIP_HUGE"); e && *e && std::string(e) != "0") {
      r = false;
      r.message() << "RECUR_TEST_SKIP_HUGE is set";
      return r;
    }
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      r = false;
      r.message() << "cudaMemGetInfo failed";
      return r;
    }
    double const gib = double(1ull << 30);
    double const dev_free = double(free) / gib, host_free = double(host_available_bytes()) / gib;
    if (dev_free < device_gib || host_free < host_gib) {
      r = false;
      r.message() << "needs " << device_gib << " GiB of device memory (" << dev_free << " free) and "
                  << host_gib << " GiB of host memory (" << host_free << " available)";
    }
    return r;
  }
};

}  // namespace recur_test
