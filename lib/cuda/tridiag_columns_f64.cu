// The columns and segmented tridiagonal kernels in double
// (agent_tridiag_columns.cuh), in a translation unit of their own so that
// builds parallelise; their fallbacks call tridiag_launch, compiled in
// tridiag_f64.cu.
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

namespace recur::device {
extern template cudaError_t tridiag_launch<double>(tridiag_launch_plan const&, void*,
                                                   tridiag_args<double> const&, cudaStream_t);
template cudaError_t tridiag_launch_columns<double>(tridiag_launch_plan const&, tridiag_args<double> const&,
                                                    cudaStream_t);
template cudaError_t tridiag_launch_segments<double>(tridiag_launch_plan const&, void*,
                                                     tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::device
