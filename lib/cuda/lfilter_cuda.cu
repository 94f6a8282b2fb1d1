// lfilter on CUDA, float and double: stream-ordered temporary storage
// around the device-level call (kernels/dispatch/dispatch_lfilter.cuh); the
// kernels it launches come from the dispatch_lti instances in units of their
// own (lib/CMakeLists.txt). No fmt here: it does not compile under nvcc
// (doc/design.md).
#include <span>

#include <recur/kernels/dispatch/dispatch_lfilter.cuh>
#include <recur/kernels/dispatch/lti_instances.cuh>

#include "../filter_backends.hpp"
#include "cuda_check.hpp"

RECUR_LTI_ALL_INSTANCES(extern, float)
RECUR_LTI_ALL_INSTANCES(extern, double)

namespace recur::detail {

template <class T>
void lfilter_cuda(T const* b, std::int64_t nb, T const* a, std::int64_t na, T const* x, T* y,
                  layout const& lay, T const* init, T* final_state, CUstream_st* stream) {
  std::span<T const> const bs(b, static_cast<std::size_t>(nb)), as(a, static_cast<std::size_t>(na));
  with_temp(
      "recur::device::lfilter", stream,
      [&](std::size_t& bytes) {
        return device::lfilter<T>(nullptr, bytes, bs, as, x, y, lay, init, final_state, stream);
      },
      [&](void* t, std::size_t bytes) {
        return device::lfilter<T>(t, bytes, bs, as, x, y, lay, init, final_state, stream);
      });
}

template void lfilter_cuda<float>(float const*, std::int64_t, float const*, std::int64_t, float const*,
                                  float*, layout const&, float const*, float*, CUstream_st*);
template void lfilter_cuda<double>(double const*, std::int64_t, double const*, std::int64_t, double const*,
                                   double*, layout const&, double const*, double*, CUstream_st*);

}  // namespace recur::detail
