// The columns and segmented tridiagonal kernels in double
// (agent_tridiag_columns.cuh, agent_tridiag_segments.cuh), in a translation
// unit of their own so that builds parallelise (tridiag_instances.cuh).
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch_columns<double>(tridiag_columns_plan const&, tridiag_args<double> const&,
                                                    cudaStream_t);
template cudaError_t tridiag_launch_segments<double>(tridiag_segments_plan const&, tridiag_device const&,
                                                     void*, tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::detail
