// sosfilt and the predictor recurrences on CUDA, double (lib/cuda/filters_cuda.cuh).
#include "filters_cuda.cuh"

namespace recur::detail {
template void sosfilt_cuda<double>(double const*, std::int64_t, double const*, double*, layout const&,
                                   double const*, double*, CUstream_st*);
template void dpcm_float_cuda<double>(bool, double const*, std::int64_t, double const*, double*,
                                      layout const&, double const*, CUstream_st*);
template void linrec_order_k_cuda<double>(double const*, std::int64_t, double const*, double*, layout const&,
                                          double const*, double*, CUstream_st*);
}  // namespace recur::detail
