#pragma once
// Every public header of recur: the host API (executors, layouts, linrec,
// generic scans, chains, filters, tridiagonal solvers, .npy I/O), the algebra of
// include/recur/ops/ and the sequential references of
// include/recur/reference/, all but tridiag_bondeli.hpp (include it on its
// own). Including it needs no CUDA headers. The device-level headers
// (<recur/kernels/...>, CUDA only) are not included.
#include <recur/config.hpp>
#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/storage.hpp>
#include <recur/types.hpp>

#include <recur/layout/layout.hpp>

#include <recur/ops/affine.hpp>
#include <recur/ops/matrix.hpp>
#include <recur/ops/mobius.hpp>

#include <recur/detail/linrec_problem.hpp>

#include <recur/chain.hpp>
#include <recur/filter.hpp>
#include <recur/linrec.hpp>
#include <recur/scan.hpp>
#include <recur/tridiag.hpp>

#include <recur/io/npy.hpp>

#include <recur/reference/arguments.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/reference/linrec_order_k.hpp>
#include <recur/reference/matrix_chain.hpp>
#include <recur/reference/mobius.hpp>
#include <recur/reference/tridiag.hpp>
#include <recur/reference/tridiag_batch.hpp>
#include <recur/reference/tridiag_solve.hpp>
