#pragma once
// Where test_examples runs the examples: the CPU, or the GPU with --device gpu
// (test_examples_main.cpp).
#include "multigrid/poisson.hpp"

namespace recur_test {

extern recur_examples::backend examples_backend;

inline bool examples_on_gpu() { return examples_backend == recur_examples::backend::gpu; }

}  // namespace recur_test
