// linrec_adjoint<bfloat16> on CUDA: one translation unit per type so builds parallelise.
#include "linrec_cuda.cuh"

template void recur::detail::linrec_adjoint_cuda<recur::bfloat16>(
    recur::detail::linrec_adjoint_problem<recur::bfloat16> const&, CUstream_st*, recur::linrec_variant);
