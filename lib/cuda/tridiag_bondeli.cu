// Bondeli's algorithm on the GPU (dispatch_tridiag_bondeli.cuh), float and
// double, in a translation unit of its own so that builds parallelise;
// tridiag_launch (tridiag_f32.cu, tridiag_f64.cu) calls it.
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

namespace recur::device {
extern template cudaError_t tridiag_launch_pivot<float>(tridiag_launch_plan const&, void*,
                                                        tridiag_args<float> const&, cudaStream_t, bool);
extern template cudaError_t tridiag_launch_pivot<double>(tridiag_launch_plan const&, void*,
                                                         tridiag_args<double> const&, cudaStream_t, bool);
template cudaError_t tridiag_launch_bondeli<float>(tridiag_launch_plan const&, void*,
                                                   tridiag_args<float> const&, cudaStream_t);
template cudaError_t tridiag_launch_bondeli<double>(tridiag_launch_plan const&, void*,
                                                    tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::device
