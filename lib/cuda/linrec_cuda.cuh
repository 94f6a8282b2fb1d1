#pragma once
// Host-level CUDA backend of linrec: stream-ordered temporary storage around
// the device-level call. Included by one translation unit per value type.

#include <recur/kernels/dispatch/dispatch_linrec.cuh>

#include "../linrec_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

template <class T>
void linrec_cuda(linrec_problem<T> const& p, CUstream_st* stream, linrec_variant variant) {
  with_temp(
      "recur::device::linrec", stream,
      [&](std::size_t& b) { return device::linrec<T>(nullptr, b, p, stream, variant); },
      [&](void* t, std::size_t b) { return device::linrec<T>(t, b, p, stream, variant); });
}

}  // namespace recur::detail
