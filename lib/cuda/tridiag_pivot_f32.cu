// The pivoted tridiagonal form in float (agent_tridiag_pivot.cuh: pivoting,
// periodic systems, refinement) and pivoting = automatic's screen around
// the no-pivot solves, in a translation unit of their own so that builds
// parallelise (tridiag_instances.cuh).
#include "tridiag_instances.cuh"

namespace recur::detail {
template cudaError_t tridiag_launch_pivot<float>(tridiag_pivot_plan const&, void*, tridiag_args<float> const&,
                                                 cudaStream_t, bool);
template cudaError_t tridiag_launch_screened<float>(tridiag_solve_plan const&, void*,
                                                    tridiag_args<float> const&, cudaStream_t);
}  // namespace recur::detail
