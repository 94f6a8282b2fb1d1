// The columns and segmented tridiagonal kernels in float
// (agent_tridiag_columns.cuh, agent_tridiag_segments.cuh), in a translation
// unit of their own so that builds parallelise (tridiag_instances.cuh).
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch_columns<float>(tridiag_columns_plan const&, tridiag_args<float> const&,
                                                   cudaStream_t);
template cudaError_t tridiag_launch_segments<float>(tridiag_segments_plan const&, tridiag_device const&,
                                                    void*, tridiag_args<float> const&, cudaStream_t);
}  // namespace recur::detail
