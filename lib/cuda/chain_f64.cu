// matrix_chain (K = 2..6) and mobius_recurrence on CUDA, double (lib/cuda/chain_cuda.cuh);
// K = 7 and 8, the slowest to compile, in chain_k7_8_f64.cu.
#include "chain_cuda.cuh"

namespace recur::detail {
RECUR_MATRIX_CHAIN_CUDA(2, double)
RECUR_MATRIX_CHAIN_CUDA(3, double)
RECUR_MATRIX_CHAIN_CUDA(4, double)
RECUR_MATRIX_CHAIN_CUDA(5, double)
RECUR_MATRIX_CHAIN_CUDA(6, double)
template void mobius_cuda<double>(double const*, double const*, double const*, double const*, double*,
                                  layout const&, double const*, double, double*, CUstream_st*);
}  // namespace recur::detail
