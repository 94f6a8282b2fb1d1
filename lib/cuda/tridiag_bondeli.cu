// Bondeli's algorithm on the GPU (dispatch_tridiag_bondeli.cuh), float and
// double, in a translation unit of its own so that builds parallelise
// (tridiag_instances.cuh).
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch_bondeli<float>(tridiag_bondeli_plan const&, void*,
                                                   tridiag_args<float> const&, cudaStream_t);
template cudaError_t tridiag_launch_bondeli<double>(tridiag_bondeli_plan const&, void*,
                                                    tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::detail
