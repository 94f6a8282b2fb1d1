// linrec_adjoint<double> on CUDA: one translation unit per type so builds parallelise.
#include "linrec_cuda.cuh"

template void recur::detail::linrec_adjoint_cuda<double>(recur::detail::linrec_adjoint_problem<double> const&,
                                                         CUstream_st*, recur::linrec_variant);
