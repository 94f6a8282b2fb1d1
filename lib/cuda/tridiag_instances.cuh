#pragma once
// The batched tridiagonal launches that lib/cuda/tridiag_*.cu instantiate,
// one unit each so that builds parallelise, declared extern for the others:
// tridiag_launch (and the forms it does not find below) in tridiag_f32.cu
// and tridiag_f64.cu, the columns and segmented kernels in
// tridiag_columns_*.cu, the pivoted form and the screen in
// tridiag_pivot_*.cu, Bondeli's in tridiag_bondeli.cu.

#include <recur/kernels/dispatch/dispatch_tridiag.cuh>

namespace recur::detail {
extern template cudaError_t tridiag_launch<float>(tridiag_solve_plan const&, void*,
                                                  tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_columns<float>(tridiag_columns_plan const&,
                                                          tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_segments<float>(tridiag_segments_plan const&,
                                                           tridiag_device const&, void*,
                                                           tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_pivot<float>(tridiag_pivot_plan const&, void*,
                                                        tridiag_args<float> const&, cudaStream_t, bool);
extern template cudaError_t tridiag_launch_screened<float>(tridiag_solve_plan const&, void*,
                                                           tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_bondeli<float>(tridiag_bondeli_plan const&, void*,
                                                          tridiag_args<float> const&, cudaStream_t);
extern template cudaError_t tridiag_launch<double>(tridiag_solve_plan const&, void*,
                                                   tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_columns<double>(tridiag_columns_plan const&,
                                                           tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_segments<double>(tridiag_segments_plan const&,
                                                            tridiag_device const&, void*,
                                                            tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_pivot<double>(tridiag_pivot_plan const&, void*,
                                                         tridiag_args<double> const&, cudaStream_t, bool);
extern template cudaError_t tridiag_launch_screened<double>(tridiag_solve_plan const&, void*,
                                                            tridiag_args<double> const&, cudaStream_t);
extern template cudaError_t tridiag_launch_bondeli<double>(tridiag_bondeli_plan const&, void*,
                                                           tridiag_args<double> const&, cudaStream_t);
}  // namespace recur::detail
