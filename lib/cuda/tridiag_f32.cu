// Batched tridiagonal solves in float on CUDA (but the columns and
// segmented kernels: tridiag_columns_f32.cu; the pivoted form:
// tridiag_pivot_f32.cu; Bondeli's: tridiag_bondeli.cu). No fmt here: it does not
// compile under nvcc (doc/design.md).
#include "tridiag_cuda.cuh"

namespace recur::device {
extern template cudaError_t tridiag_launch_columns<float>(tridiag_launch_plan const&,
                                                          tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_segments<float>(tridiag_launch_plan const&, void*,
                                                           tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_checked<float>(tridiag_launch_plan const&, void*,
                                                          tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_bondeli<float>(tridiag_launch_plan const&, void*,
                                                          tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_pivot<float>(tridiag_launch_plan const&, void*,
                                                        tridiag_args<float> const&, cudaStream_t, bool);
extern template cudaError_t tridiag_launch_periodic<float>(tridiag_launch_plan const&, void*,
                                                           tridiag_args<float> const&, cudaStream_t);
// Defined here for the columns units' fallbacks and the tests that link the library.
template cudaError_t tridiag_launch<float>(tridiag_launch_plan const&, void*, tridiag_args<float> const&,
                                           cudaStream_t);
}  // namespace recur::device

namespace recur::detail {

template void tridiag_cuda<float>(tridiag_problem<float> const&, CUstream_st*, void*);
template std::size_t tridiag_cuda_workspace<float>(tridiag_problem<float> const&);

tridiag_algorithm tridiag_cuda_resolve(layout const& lay, std::size_t value_bytes,
                                       tridiag_algorithm requested) {
  return value_bytes == sizeof(float) ? tridiag_cuda_resolve_as<float>(lay, requested)
                                      : tridiag_cuda_resolve_as<double>(lay, requested);
}

}  // namespace recur::detail
