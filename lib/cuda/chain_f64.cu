// matrix_chain (K = 2..8) and mobius_recurrence on CUDA, double (lib/cuda/chain_cuda.cuh).
#include "chain_cuda.cuh"

namespace recur::detail {
#define RECUR_CHAIN_CUDA(K)                                                                        \
  template void matrix_chain_cuda<K, double>(double const*, double const*, double*, layout const&, \
                                             double const*, double*, CUstream_st*);
RECUR_CHAIN_CUDA(2)
RECUR_CHAIN_CUDA(3)
RECUR_CHAIN_CUDA(4)
RECUR_CHAIN_CUDA(5)
RECUR_CHAIN_CUDA(6)
RECUR_CHAIN_CUDA(7)
RECUR_CHAIN_CUDA(8)
#undef RECUR_CHAIN_CUDA
template void mobius_cuda<double>(double const*, double const*, double const*, double const*, double*,
                                  layout const&, double const*, double, double*, CUstream_st*);
}  // namespace recur::detail
