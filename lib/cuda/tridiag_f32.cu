// Batched tridiagonal solves in float on CUDA: tridiag_launch and the forms
// the other units do not instantiate (tridiag_instances.cuh), and the host
// backend (tridiag_cuda.cuh). No fmt here: it does not compile under nvcc
// (doc/design.md).
#include "tridiag_cuda.cuh"
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch<float>(tridiag_solve_plan const&, void*, tridiag_args<float> const&,
                                           cudaStream_t);

template void tridiag_cuda<float>(tridiag_problem<float> const&, CUstream_st*, void*);
template std::size_t tridiag_cuda_workspace<float>(tridiag_problem<float> const&);

tridiag_algorithm tridiag_cuda_resolve(layout const& lay, std::size_t value_bytes,
                                       tridiag_options const& opt) {
  return value_bytes == sizeof(float) ? tridiag_cuda_resolve_as<float>(lay, opt)
                                      : tridiag_cuda_resolve_as<double>(lay, opt);
}
}  // namespace recur::detail
