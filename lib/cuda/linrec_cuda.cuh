#pragma once
// Host-level CUDA backend of linrec and linrec_adjoint: stream-ordered
// temporary storage around the device-level call. Included by one
// translation unit per algorithm and value type.

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

template <class T>
void linrec_adjoint_cuda(linrec_adjoint_problem<T> const& p, CUstream_st* stream, linrec_variant variant) {
  with_temp(
      "recur::device::linrec_adjoint", stream,
      [&](std::size_t& b) { return device::linrec_adjoint<T>(nullptr, b, p, stream, variant); },
      [&](void* t, std::size_t b) { return device::linrec_adjoint<T>(t, b, p, stream, variant); });
}

}  // namespace recur::detail
