// solve_poisson on the GPU: the same body as the CPU's (poisson_solve.hpp)
// in a cuda_space. Compiled only in a build with CUDA.
#include <recur/error.hpp>
#include <recur/executor.hpp>

#include "multigrid/poisson_solve.hpp"

namespace recur_examples::detail {

poisson_result solve_on_gpu(poisson_problem const& p, std::span<double const> f, std::span<double const> u0,
                            poisson_options const& opt,
                            std::function<void(cycle_report const&)> const& progress) {
  if (recur::cuda_device_count() == 0)
    throw recur::error("solve_poisson: " + recur::cuda_device_description());
  cuda_space const space;
  return solve_in(space, p, f, u0, opt, progress);
}

}  // namespace recur_examples::detail
