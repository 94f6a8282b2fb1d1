// matrix_chain (K = 2..6) and mobius_recurrence on CUDA, float (lib/cuda/chain_cuda.cuh);
// K = 7 and 8, the slowest to compile, in chain_k7_8_f32.cu.
#include "chain_cuda.cuh"

namespace recur::detail {
RECUR_MATRIX_CHAIN_CUDA(2, float)
RECUR_MATRIX_CHAIN_CUDA(3, float)
RECUR_MATRIX_CHAIN_CUDA(4, float)
RECUR_MATRIX_CHAIN_CUDA(5, float)
RECUR_MATRIX_CHAIN_CUDA(6, float)
template void mobius_cuda<float>(float const*, float const*, float const*, float const*, float*,
                                 layout const&, float const*, float, float*, CUstream_st*);
}  // namespace recur::detail
