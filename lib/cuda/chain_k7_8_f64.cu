// matrix_chain with K = 7 and 8 on CUDA, double (lib/cuda/chain_cuda.cuh): the
// slowest instances to compile, in a unit apart from chain_f64.cu's.
#include "chain_cuda.cuh"

namespace recur::detail {
RECUR_MATRIX_CHAIN_CUDA(7, double)
RECUR_MATRIX_CHAIN_CUDA(8, double)
}  // namespace recur::detail
