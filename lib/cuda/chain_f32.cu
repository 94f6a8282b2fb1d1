// matrix_chain (K = 2..8) and mobius_recurrence on CUDA, float (lib/cuda/chain_cuda.cuh).
#include "chain_cuda.cuh"

namespace recur::detail {
#define RECUR_CHAIN_CUDA(K)                                                                                  \
  template void matrix_chain_cuda<K, float>(float const*, float const*, float*, layout const&, float const*, \
                                            float*, CUstream_st*);
RECUR_CHAIN_CUDA(2)
RECUR_CHAIN_CUDA(3)
RECUR_CHAIN_CUDA(4)
RECUR_CHAIN_CUDA(5)
RECUR_CHAIN_CUDA(6)
RECUR_CHAIN_CUDA(7)
RECUR_CHAIN_CUDA(8)
#undef RECUR_CHAIN_CUDA
template void mobius_cuda<float>(float const*, float const*, float const*, float const*, float*,
                                 layout const&, float const*, float, float*, CUstream_st*);
}  // namespace recur::detail
