// Batched tridiagonal solves in double on CUDA (but the columns and
// segmented kernels: tridiag_columns_f64.cu; the pivoted form:
// tridiag_pivot_f64.cu; Bondeli's: tridiag_bondeli.cu).
#include "tridiag_cuda.cuh"

namespace recur::device {
extern template cudaError_t tridiag_launch_columns<double>(tridiag_launch_plan const&,
                                                           tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_segments<double>(tridiag_launch_plan const&, void*,
                                                            tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_checked<double>(tridiag_launch_plan const&, void*,
                                                           tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_bondeli<double>(tridiag_launch_plan const&, void*,
                                                           tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_pivot<double>(tridiag_launch_plan const&, void*,
                                                         tridiag_args<double> const&, cudaStream_t, bool);
extern template cudaError_t tridiag_launch_periodic<double>(tridiag_launch_plan const&, void*,
                                                            tridiag_args<double> const&, cudaStream_t);
// Defined here for the columns units' fallbacks and the tests that link the library.
template cudaError_t tridiag_launch<double>(tridiag_launch_plan const&, void*, tridiag_args<double> const&,
                                            cudaStream_t);
}  // namespace recur::device

template void recur::detail::tridiag_cuda<double>(recur::detail::tridiag_problem<double> const&, CUstream_st*,
                                                  void*);
template std::size_t recur::detail::tridiag_cuda_workspace<double>(
    recur::detail::tridiag_problem<double> const&);
