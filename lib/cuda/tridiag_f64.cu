// Batched tridiagonal solves in double on CUDA: tridiag_launch and the forms
// the other units do not instantiate (tridiag_instances.cuh), and the host
// backend (tridiag_cuda.cuh). No fmt here: it does not compile under nvcc
// (doc/design.md).
#include "tridiag_cuda.cuh"
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch<double>(tridiag_solve_plan const&, void*, tridiag_args<double> const&,
                                            cudaStream_t);

template void tridiag_cuda<double>(tridiag_problem<double> const&, CUstream_st*, void*);
template std::size_t tridiag_cuda_workspace<double>(tridiag_problem<double> const&);
}  // namespace recur::detail
