// correlate_lags on CUDA, float and double: stream-ordered temporary storage
// (the tiles' partial sums) around the device-level call
// (kernels/dispatch/dispatch_correlate.cuh). No fmt here: it does not
// compile under nvcc (doc/design.md).
#include <recur/kernels/dispatch/dispatch_correlate.cuh>

#include "../filter_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

static_assert(correlate_cuda_max_lags == kernels::correlate_max_lags &&
              correlate_cuda_max_arrays == kernels::correlate_max_arrays);

template <class T>
void correlate_cuda(T const* u, T const* const* v, std::int64_t nv, T* c, std::int64_t lags,
                    layout const& lay, CUstream_st* stream) {
  int const nvi = static_cast<int>(nv), li = static_cast<int>(lags);
  with_temp(
      "recur::device::correlate_lags", stream,
      [&](std::size_t& bytes) {
        return device::correlate_lags<T>(nullptr, bytes, u, v, nvi, c, li, lay, stream);
      },
      [&](void* t, std::size_t bytes) {
        return device::correlate_lags<T>(t, bytes, u, v, nvi, c, li, lay, stream);
      });
}

template void correlate_cuda<float>(float const*, float const* const*, std::int64_t, float*, std::int64_t,
                                    layout const&, CUstream_st*);
template void correlate_cuda<double>(double const*, double const* const*, std::int64_t, double*, std::int64_t,
                                     layout const&, CUstream_st*);

}  // namespace recur::detail
