// sosfilt and the predictor recurrences on CUDA, float (lib/cuda/filters_cuda.cuh).
#include "filters_cuda.cuh"

namespace recur::detail {
template void sosfilt_cuda<float>(float const*, std::int64_t, float const*, float*, layout const&,
                                  float const*, float*, CUstream_st*);
template void dpcm_float_cuda<float>(bool, float const*, std::int64_t, float const*, float*, layout const&,
                                     float const*, CUstream_st*);
template void linrec_order_k_cuda<float>(float const*, std::int64_t, float const*, float*, layout const&,
                                         float const*, float*, CUstream_st*);
}  // namespace recur::detail
