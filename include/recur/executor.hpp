#pragma once
// Executors: where an algorithm runs. Every host-level call takes one as its
// first argument, and both have the same call shape.

#include <string>

struct CUstream_st;  // cudaStream_t is CUstream_st*; no CUDA header needed

namespace recur {

// The CPU backend. At most `threads` threads are used, OpenMP's maximum
// when 0; within that each call chooses how many (the recurrences by the
// P-scheme's cost model, doc/pscheme.md).
struct host {
  int threads = 0;
};

// The CUDA backend. Pointers passed with it are device pointers (or managed).
// Work is enqueued on `stream` and the call returns without synchronising;
// a null stream is the legacy default stream.
struct cuda {
  CUstream_st* stream = nullptr;
};

// True when this library was built with CUDA support.
bool cuda_compiled() noexcept;
// Number of usable CUDA devices (0 when not compiled or no driver/device).
int cuda_device_count() noexcept;
// One line naming the current device ("NVIDIA H100 80GB HBM3, 132 SMs, sm_90")
// or why there is none.
std::string cuda_device_description();

}  // namespace recur
