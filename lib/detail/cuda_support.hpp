#pragma once
// What the entry points check before they call a CUDA backend: that the
// build has one, where memory lives, and the GPU's limit on the state of
// linear time-invariant recurrences. The pointer checks are defined in
// lib/cuda/cuda_runtime.cpp, or in lib/cuda_disabled.cpp (where they throw
// not_compiled). Each message starts with the calling function's name
// (`fn`). Included by host .cpp files only (fmt).

#include <cstdint>

#include <fmt/format.h>

#include <recur/error.hpp>
#include <recur/executor.hpp>

namespace recur::detail {

// Throws not_compiled when this build has no CUDA backend; called by every
// recur::cuda entry point first, even for an empty batch, so that code run in
// a CPU-only build does not appear to work until its first non-empty batch.
inline void require_cuda(char const* fn) {
  if (!cuda_compiled())
    throw not_compiled(
        fmt::format("{}: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)", fn));
}

// Throws invalid_argument when ptr is not device-accessible (host memory, or
// a pointer CUDA does not know).
void check_device_pointer(char const* fn, void const* ptr, char const* name);

// The state arrays of a recur::cuda call, where given: device-accessible
// (final_state asked once when it is init itself).
inline void check_device_state(char const* fn, void const* init, void const* final_state) {
  if (init) check_device_pointer(fn, init, "opt.init");
  if (final_state && final_state != init) check_device_pointer(fn, final_state, "opt.final_state");
}

// Throws invalid_argument when ptr is memory the host cannot read (device
// memory): for arrays the host API reads itself, such as the coefficients of
// the filters with recur::cuda.
void check_host_pointer(char const* fn, void const* ptr, char const* name);

// The GPU runs lfilter, the DPCM codecs and linrec_order_k as linear
// time-invariant recurrences on a state of at most 8 values
// (kernels/dispatch/dispatch_lti.cuh); `order` above that is an
// invalid_argument naming `what` ("max(len(a), len(b)) - 1", "c.size()", ...).
inline constexpr std::int64_t lti_cuda_max_order = 8;
inline void check_lti_cuda_order(char const* fn, std::int64_t order, char const* what) {
  if (order > lti_cuda_max_order)
    throw invalid_argument(
        fmt::format("{}: order {} ({}) is not supported with recur::cuda: the CUDA backend "
                    "supports orders 0-{} (recur::host has no limit)",
                    fn, order, what, lti_cuda_max_order));
}

}  // namespace recur::detail
