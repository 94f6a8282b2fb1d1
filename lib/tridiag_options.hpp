#pragma once
// The checks of tridiag_options' pivoting, periodic and refinement fields
// (lib/tridiag_options.cpp), shared by solve_batched and tridiag_plan
// (lib/tridiag.cpp): they throw recur::invalid_argument naming the option
// and its value, before anything is written.

#include <cstddef>

#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur::detail {

// Values of the enums, max_refinement_steps, periodic's n >= 3,
// refinement = mixed on double only, and the algorithms each option runs
// with: pivoting = partial, periodic and refinement = mixed need algorithm
// automatic or thomas (the named parallel algorithms do not pivot, and the
// periodic split and the refinement loop wrap the Thomas factorisation).
void check_tridiag_options(char const* fn, layout const& lay, tridiag_options const& opt,
                           std::size_t value_bytes);

}  // namespace recur::detail
