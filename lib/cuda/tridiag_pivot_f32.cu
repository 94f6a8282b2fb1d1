// The pivoted tridiagonal form in float (agent_tridiag_pivot.cuh: pivoting,
// periodic systems, refinement) and pivoting = automatic's check beside
// the no-pivot forms and the periodic split around them, in a translation
// unit of its own so that builds parallelise; tridiag_launch
// (tridiag_f32.cu) calls them.
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

namespace recur::device {
extern template cudaError_t tridiag_launch<float>(tridiag_launch_plan const&, void*,
                                                  tridiag_args<float> const&, cudaStream_t);
template cudaError_t tridiag_launch_pivot<float>(tridiag_launch_plan const&, void*,
                                                 tridiag_args<float> const&, cudaStream_t, bool);
template cudaError_t tridiag_launch_checked<float>(tridiag_launch_plan const&, void*,
                                                   tridiag_args<float> const&, cudaStream_t);
template cudaError_t tridiag_launch_periodic<float>(tridiag_launch_plan const&, void*,
                                                    tridiag_args<float> const&, cudaStream_t);
}  // namespace recur::device
