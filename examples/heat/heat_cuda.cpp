// solve_heat on the GPU: the same body as the CPU's (adi.hpp) in a
// cuda_space. Compiled only in a build with CUDA.
#include <recur/error.hpp>
#include <recur/executor.hpp>

#include "heat/adi.hpp"

namespace recur_examples::detail {

heat_result solve_heat_on_gpu(heat_problem const& p, std::span<double const> u0, heat_options const& opt,
                              std::function<void(heat_report const&)> const& progress) {
  if (recur::cuda_device_count() == 0) throw recur::error("solve_heat: " + recur::cuda_device_description());
  cuda_space const space;
  return solve_heat_in(space, p, u0, opt, progress);
}

}  // namespace recur_examples::detail
