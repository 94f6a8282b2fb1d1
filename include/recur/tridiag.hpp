#pragma once
// Batched tridiagonal solvers: many independent systems
//   a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i,   i = 0 .. n-1.
//
//   recur::solve_batched(recur::cuda{stream}, a, b, c, d, x,
//                        recur::layout::interleaved(n, count));
//
// Conventions (the same as include/recur/reference/tridiag.hpp, the oracle):
// - a, b, c, d and x all use the layout `lay`: element i of system k is at
//   offset lay.offset(i, k). Strides must be positive.
// - Several right-hand sides: right-hand side r of system k has element i at
//   d[lay.offset(i, k) + r * rhs_stride] (likewise x). rhs_stride = 0 means
//   the layout's span (the sets follow one another densely). Otherwise, when
//   nrhs > 1, |rhs_stride| must be at least that span, so that sets do not
//   overlap; a negative rhs_stride puts set r below set 0 (the pointers then
//   address set 0). All right-hand sides of a system share its matrix.
// - a[0] and c[n-1] of every system are never read (they may hold NaN),
//   unless periodic (below). The diagonals and d are never written, except
//   that x may be d itself (in place); any other overlap of x with an input
//   is an argument error.
// - info (count int32 values, may be null; host memory with recur::host,
//   device memory with recur::cuda): 0 when system k was solved, j > 0 when
//   it broke down at row j (1-based, LAPACK style): a zero or non-finite
//   pivot (divisor); in float also one outside 2^-126 <= |p| < 2^126 (a
//   subnormal pivot, or one of 2^126 or more). For rd and
//   cr_rd, j > 0 also means that recursive doubling is unstable for this
//   system: its own accuracy check failed at row j (below). Breakdown is not
//   an exception; x of a broken-down system (all its right-hand sides) is
//   NaN.
// - Pivoting (tridiag_options::pivoting; doc/tridiag.md, "Pivoting"):
//   - none: the algorithm's own elimination (no pivoting, except inside
//     bondeli's reduced system). Every algorithm but rd and cr_rd is stable
//     for diagonally dominant and symmetric positive definite matrices; RD
//     checks its own result and reports breakdown instead of a wrong answer.
//   - partial: Gaussian elimination with row partial pivoting, system by
//     system, in LAPACK ?gtsv's arithmetic (rows i and i+1 change places
//     where |a_(i+1)| > |u_i|). algorithm must be automatic or thomas (the
//     named parallel algorithms do not pivot).
//   - automatic (the default): the algorithm's no-pivot solve where the
//     system passes a stability test, the pivoted Thomas where it does not
//     or where the algorithm breaks down. Thomas's test: every Thomas pivot
//     u_i usable and the growth
//       gamma = max_i (|l_i| |c_(i-1)| + |u_i|) / max_i (|a_i| + |b_i| + |c_i|)
//     (l_i = a_i / u_(i-1)) at most 16, which bounds the backward error of the
//     no-pivot solve by a small multiple of gamma eps |A| (Higham, Accuracy
//     and Stability of Numerical Algorithms, ch. 9); diagonally dominant
//     matrices have gamma <= 2, symmetric positive definite ones gamma <= 1.
//     Both executors test every system. recur::host's Thomas (and its split
//     of a system over threads) tests the growth as it factors; its other
//     algorithms keep their answer where every row is diagonally dominant,
//     |b_i| >= |a_i| + |c_i|, and solve the other systems (and those they
//     break down on) by Thomas under the growth test. recur::cuda screens
//     every row as its no-pivot form solves it, whatever the algorithm (a
//     system with a row that is not diagonally dominant, |b_i| < |a_i| +
//     |c_i|, or a breakdown is flagged and left unwritten, since the forms
//     other than Thomas are stable on dominant rows), then solves the flagged
//     systems again with the pivoted form (Thomas where the growth test
//     passes, partial pivoting where not): on every form, periodic systems
//     and all algorithms included. rd and cr_rd with several right-hand
//     sides, whose breakdown depends on the right-hand side, run the screen
//     after the solve (reading a, b and c once more), or in place the pivoted
//     form for every system. The workspace holds room to solve the flagged
//     systems again (doc/tridiag-internals.md, "How the GPU screens"). On
//     diagonally dominant batches automatic gives the bits of pivoting =
//     none. pivoted (count int32 values, may be null; memory as info)
//     receives 1 for a system solved with partial pivoting, else 0.
//   A singular system (a zero pivot of the pivoted elimination) still gives
//   info > 0 (the row of U's zero diagonal entry, LAPACK's info) and NaN x.
// - Periodic systems (periodic = true): a[0]
//   multiplies x[n-1] in row 0 and c[n-1] multiplies x[0] in row n-1; n >= 3
//   (n = 1 and 2 are argument errors: such a system is a plain one with the
//   corners added to its other entries). Solved by Sherman-Morrison: the
//   matrix A' without its corners, b_0 and b_(n-1) modified, solves both d
//   and the rank-one correction's vector z, then x = y - s z.
//   algorithm must be automatic or thomas. info: the row where A' broke down,
//   or n where the correction's divisor 1 + v^T z is zero or not finite
//   (doc/tridiag-internals.md says when this split loses accuracy).
//   `pivoting` applies to A': recur::host factors it once per system (its
//   growth tested under automatic); recur::cuda, with pivoting none or
//   automatic, solves A' by the algorithm's no-pivot form over the whole
//   batch (automatic screens it as above), in place or not, in one pass
//   where the direct form holds each system in one segment of lanes
//   exactly (n its size, every array on a 16-byte boundary), else around
//   two solves; with partial or refinement the pivoted form, one system per
//   thread.
// - Mixed-precision refinement (refinement = mixed, double only): the
//   system is factored and solved in float and the solution corrected with
//   residuals r = d - A x computed in double until its
//   normwise backward error ||r|| / (||A|| ||x|| + ||d||) is at most 2 eps
//   (double), what the double solve reaches; at most max_refinement_steps
//   corrections per right-hand side, after which that right-hand side (and,
//   where the float factorisation breaks down, every one) is solved in
//   double instead.
//   refinement_steps (count int32 values, may be null; memory as info)
//   receives the corrections taken (the most over the system's right-hand
//   sides), -1 where the double solve took over; 0 without refinement.
//   algorithm must be automatic or thomas; pivoting and periodic apply to
//   the float factorisation.
// - RD's domain (rd, and cr_rd, which runs RD on CR's reduced system): RD
//   is a shooting method whose rounding errors grow with the recurrence's
//   growing solutions, so it accepts a result only where every row's
//   residual is within 2^6 eps (f32) or 2^13 eps (f64) of the row's terms,
//   and reports breakdown otherwise. It solves Zhang et al.'s systems with
//   close values in each row (a, b and c within 10% of one value in [1, 2])
//   with n <= 128 (f32) or n <= 512 (f64), d = A x with every |x_i| in
//   [1/2, 1], and kappa_inf(A) <= 2^17 (f32) or 2^39 (f64); outside that
//   domain it may refuse, and it refuses diagonally dominant systems beyond
//   a handful of rows (doc/tridiag.md).
// - bondeli on recur::cuda: about 2^16 blocks of rows in all, at most
//   sqrt(n) a system, one thread each (doc/tridiag-internals.md); several
//   right-hand sides are solved one after another.
// - Large systems on the GPU (doc/tridiag-internals.md, "Large systems on
//   the GPU"): a system larger than an algorithm's shared-memory tile runs
//   the partitioned form, chunks of 32 rows (16 in f64 on contiguous
//   systems) reduced by Thomas-PCR's elimination and the reduced systems
//   (n / 16 or n / 8 rows) solved by the named algorithm (automatic,
//   thomas_pcr: Thomas-PCR with its boundary system by Thomas), backward
//   stable for diagonally dominant and SPD systems at every n; thomas runs
//   such a system through global memory, one thread each, and bondeli its
//   own form. The partitioned form takes any 4 <= n < 2^30, so the
//   algorithms that need it refuse n >= 2^30 (thomas_pcr also n < 4 where
//   no tile holds the system); thomas, bondeli and automatic (the
//   global-memory Thomas there) run any n. rd and cr_rd report breakdown
//   where the reduced systems leave RD's domain.
// - recur::host gives each thread whole systems, except for batches of
//   fewer systems than threads with n >= 2^15: each system is then split
//   over the threads (thomas_pcr, and automatic on plain systems without
//   partial pivoting, periodic or refinement: the partition method,
//   reported as thomas_pcr; bondeli: one block per thread), and the result
//   depends on the thread count. The split keeps its scratch (2 n values,
//   and a copy of d, n nrhs values, for an in-place solve under automatic)
//   per calling thread for the next split solve.
// - Bad arguments throw recur::invalid_argument naming the argument, before
//   anything is written.
// - Results are bitwise identical from run to run for the same input,
//   device, build and algorithm (and, with recur::host, thread count).
//
// With recur::cuda the pointers are device pointers, the work is enqueued on
// the executor's stream and the call returns without synchronising.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

namespace recur {

// Defined in the library for T = float and double.
template <real_value T>
void solve_batched(host const& ex, std::type_identity_t<T> const* a, std::type_identity_t<T> const* b,
                   std::type_identity_t<T> const* c, std::type_identity_t<T> const* d, T* x,
                   layout const& lay, tridiag_options const& opt = {});
template <real_value T>
void solve_batched(cuda const& ex, std::type_identity_t<T> const* a, std::type_identity_t<T> const* b,
                   std::type_identity_t<T> const* c, std::type_identity_t<T> const* d, T* x,
                   layout const& lay, tridiag_options const& opt = {});

// One system of n unknowns.
template <class Executor, real_value T>
void solve_batched(Executor const& ex, std::type_identity_t<T> const* a, std::type_identity_t<T> const* b,
                   std::type_identity_t<T> const* c, std::type_identity_t<T> const* d, T* x, std::int64_t n,
                   tridiag_options const& opt = {}) {
  solve_batched(ex, a, b, c, d, x, layout::contiguous(n, 1), opt);
}

// The algorithm `automatic` resolves to for systems of type T in this layout
// on this executor (recur::cuda: the current device); `requested` other than
// automatic is returned when the executor runs it for this shape, and an
// invalid_argument saying why otherwise.
template <real_value T>
tridiag_algorithm resolve_tridiag_algorithm(host const& ex, layout const& lay,
                                            tridiag_algorithm requested = tridiag_algorithm::automatic);
template <real_value T>
tridiag_algorithm resolve_tridiag_algorithm(cuda const& ex, layout const& lay,
                                            tridiag_algorithm requested = tridiag_algorithm::automatic);

namespace detail {
struct tridiag_checked_pointers;  // lib/tridiag.cpp
}

// Repeated GPU solves of one shape: the algorithm is chosen and the
// workspace sized once; run() allocates nothing, synchronises nothing, and
// can be captured in a CUDA graph. opt.info is ignored here (run takes it);
// opt.pivoted and opt.refinement_steps are refused (solve_batched takes
// them); the other options are checked as solve_batched checks them and kept
// (options()). pivoting = automatic screens every system here too (see
// pivoting above); run() cannot say which systems it pivoted.
//
// run() checks every argument as solve_batched does, except that a pointer
// which passed the device-memory check (cudaPointerGetAttributes, which can
// take longer than a small solve's kernels) in a recent run of this plan or
// a copy of it is not asked again; a buffer freed after such a run must not
// be passed to it again.
template <class T>
class tridiag_plan {
 public:
  tridiag_plan(layout const& lay, tridiag_options const& opt = {});
  std::size_t workspace_size() const noexcept { return workspace_bytes_; }
  tridiag_algorithm algorithm() const noexcept { return opt_.algorithm; }  // resolved, never automatic
  tridiag_options const& options() const noexcept { return opt_; }         // algorithm resolved, info null
  layout const& shape() const noexcept { return lay_; }
  // workspace: device memory of at least workspace_size() bytes, aligned to
  // 16 bytes (may be null when that is 0), not used by anything else while
  // the solve runs.
  void run(cuda const& ex, T const* a, T const* b, T const* c, T const* d, T* x, void* workspace,
           std::int32_t* info = nullptr) const;

 private:
  layout lay_;
  tridiag_options opt_;
  std::size_t workspace_bytes_ = 0;
  std::shared_ptr<detail::tridiag_checked_pointers> checked_;
};

extern template class tridiag_plan<float>;
extern template class tridiag_plan<double>;

}  // namespace recur
