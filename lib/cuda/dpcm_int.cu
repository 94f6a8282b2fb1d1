// Integer DPCM on CUDA (int16_t, int32_t, uint8_t): stream-ordered temporary
// storage around the device-level codecs (kernels/dispatch/dispatch_dpcm_int.cuh,
// one set of kernels for every sample type).
#include <span>

#include <recur/kernels/dispatch/dispatch_dpcm_int.cuh>

#include "../filter_backends.hpp"
#include "cuda_check.hpp"

namespace recur::detail {

template <class S>
void dpcm_int_cuda(bool encode, std::int64_t const* c, std::int64_t k, int shift, S const* in, S* out,
                   layout const& lay, S const* init, CUstream_st* stream) {
  std::span<std::int64_t const> const cs(c, static_cast<std::size_t>(k));
  auto call = [&](void* t, std::size_t& b) {
    return encode ? device::dpcm_encode<S>(t, b, cs, shift, in, out, lay, init, stream)
                  : device::dpcm_decode<S>(t, b, cs, shift, in, out, lay, init, stream);
  };
  with_temp(
      encode ? "recur::device::dpcm_encode" : "recur::device::dpcm_decode", stream,
      [&](std::size_t& b) { return call(nullptr, b); }, [&](void* t, std::size_t b) { return call(t, b); });
}

#define RECUR_DPCM_INT_CUDA(S)                                                                              \
  template void dpcm_int_cuda<S>(bool, std::int64_t const*, std::int64_t, int, S const*, S*, layout const&, \
                                 S const*, CUstream_st*);
RECUR_DPCM_INT_CUDA(std::int16_t)
RECUR_DPCM_INT_CUDA(std::int32_t)
RECUR_DPCM_INT_CUDA(std::uint8_t)
#undef RECUR_DPCM_INT_CUDA

}  // namespace recur::detail
