// linrec_adjoint<float> on CUDA: one translation unit per type so builds parallelise.
#include "linrec_cuda.cuh"

template void recur::detail::linrec_adjoint_cuda<float>(recur::detail::linrec_adjoint_problem<float> const&,
                                                        CUstream_st*, recur::linrec_variant);
