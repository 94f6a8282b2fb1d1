// linrec<bfloat16> on CUDA (float arithmetic): one translation unit per type so builds parallelise.
#include "linrec_cuda.cuh"

template void recur::detail::linrec_cuda<recur::bfloat16>(
    recur::detail::linrec_problem<recur::bfloat16> const&, CUstream_st*, recur::linrec_variant);
