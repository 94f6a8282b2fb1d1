// The pivoted tridiagonal form in float (agent_tridiag_pivot.cuh: pivoting,
// periodic systems, refinement), in a translation unit of its own so that
// builds parallelise; tridiag_launch (tridiag_f32.cu) calls it.
#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

namespace recur::device {
template cudaError_t tridiag_launch_pivot<float>(tridiag_launch_plan const&, void*,
                                                 tridiag_args<float> const&, cudaStream_t);
}  // namespace recur::device
