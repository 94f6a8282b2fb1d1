#pragma once
// Everything public. Including it needs no CUDA headers.
#include <recur/config.hpp>
#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/chain.hpp>
#include <recur/filter.hpp>
#include <recur/io/npy.hpp>
#include <recur/layout/layout.hpp>
#include <recur/linrec.hpp>
#include <recur/ops/affine.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/tridiag.hpp>
