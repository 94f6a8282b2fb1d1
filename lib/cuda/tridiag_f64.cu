// Batched tridiagonal solves in double on CUDA.
#include "tridiag_cuda.cuh"

template void recur::detail::tridiag_cuda<double>(recur::detail::tridiag_problem<double> const&, CUstream_st*,
                                                  void*);
template std::size_t recur::detail::tridiag_cuda_workspace<double>(recur::layout const&, std::int64_t,
                                                                   recur::tridiag_algorithm);
