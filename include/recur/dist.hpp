#pragma once
// Recurrences and tridiagonal systems split along their length across processes (MPI ranks): each
// rank holds one slice of every sequence and calls the same function, with
// the same communicator, on its slice and its usual executor.
//
//   MPI_Init(&argc, &argv);
//   recur::dist::communicator const comm{MPI_COMM_WORLD};
//   // rank r holds elements [first_r, first_r + n_r) of each sequence
//   recur::dist::linrec(comm, recur::host{}, s, t, w, recur::layout::contiguous(n_r, count), opt);
//
// Rank order is the order along the split axis: rank 0 holds the first
// slice. Ranks may hold different lengths, including zero; every rank passes
// the same count, type and options (direction, variant). Results equal the
// one-device call on the concatenated sequences to rounding (the slices'
// maps are composed in a different order).
//
// The algorithm is the one-device P-scheme one level up (reduce, exchange,
// run): each rank composes its slice of each sequence into one affine map
// (its summary, the reduction half of reduce-then-scan; s and t are read
// once, nothing written), the summaries are all-gathered (one MPI_Allgather
// of 2 x count values a rank, after one of a fixed-size header that checks
// that the ranks agree), every rank folds the summaries of the ranks before
// it (after it, in reverse) into its incoming state, and runs its slice from
// there with recur::linrec. A rank moves its slice 5 words an element
// (s and t read twice, w written once) against the one-device call's 3.
//
// State: opt.init and opt.init_value are read on the rank where the
// recurrence enters (rank 0 forward, the last rank in reverse) and ignored
// elsewhere; opt.final_state, on every rank that gives it, receives the last
// state of the whole sequence (the last rank's forward, rank 0's in reverse),
// the ranks' maps folded: equal to that rank's last w to rounding, not
// bitwise. The maps are folded in compute_t<T> (float for the 16-bit
// storage types); each rank's incoming state and the final state are
// rounded to T once.
//
// Errors: every rank checks its own arguments as recur::linrec does, and
// the ranks agree before anything is written: when any rank's arguments are
// bad, or the ranks disagree on count, type or options, every rank throws
// the same recur::invalid_argument (naming the first bad rank), nothing is
// written, and no rank waits on another. A CUDA error on one rank before
// the exchange is thrown there as cuda_error and on the other ranks as
// recur::error naming that rank. An error after the exchange (running the
// slice: a CUDA error, memory) is thrown on its rank alone, the other ranks'
// slices written.
//
// With recur::cuda the slices are device memory; the summaries cross
// through the host (the stream is synchronised once, before the exchange),
// and the call returns with the slice's run enqueued on the stream. Where
// comm.nccl is given, the summaries stay on the device: the summary, one
// ncclAllGather of the maps (2 x count values of compute_t<T> a rank), the
// fold (one thread a sequence) and the run are all enqueued, and the call
// returns without waiting; a CUDA error after the agreement is thrown on
// its rank alone or surfaces on the stream. MPI
// needs no CUDA awareness. Batches split along the batch axis need no
// communication at all: each rank calls recur::linrec on its sequences.
//
// The generic scan over a user operator, split the same way, is
// header-only: recur::dist::scan in <recur/dist_scan.hpp>.
//
// Built where CMake finds MPI (RECUR_ENABLE_MPI), as the library
// recur::dist (librecur_dist), which links MPI; this header includes mpi.h.

#include <mpi.h>

#include <span>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/types.hpp>

struct ncclComm;  // NCCL's communicator (nccl.h: typedef struct ncclComm* ncclComm_t)

namespace recur::dist {

// The processes a call spans, in rank order along the split axis. recur
// never creates, duplicates or frees it: the caller owns it, and every rank
// of it must make the same calls in the same order (as with any MPI
// collective).
//
// nccl (optional): NCCL's communicator (ncclComm_t) over the same processes
// in the same rank order, one GPU each. Where it is given, recur::cuda calls
// that have an NCCL path (recur::dist::linrec) keep their summaries in
// device memory and all-gather them with ncclAllGather on the call's
// stream: nothing waits on the stream (the ranks' agreement on their
// arguments still passes through MPI, host to host, before anything is
// enqueued). recur::host calls, and calls without an NCCL path, use MPI.
// Needs a build with RECUR_ENABLE_NCCL (nccl_compiled()); elsewhere a call
// given one throws invalid_argument on every rank.
struct communicator {
  MPI_Comm comm = MPI_COMM_NULL;
  ncclComm* nccl = nullptr;
};

// Whether this build has recur::dist's NCCL path.
bool nccl_compiled() noexcept;

// The bytes a rank sends in the agreement that starts every split call
// (one MPI_Allgather before the summaries'): for cost models
// (doc/distributed.md).
inline constexpr std::int64_t agreement_bytes = 536;

// recur::linrec split along its length (include/recur/linrec.hpp for the
// recurrence, operands and options). Defined for T = float, double,
// bfloat16 and float16, with recur::host or recur::cuda.
template <linrec_value T>
void linrec(communicator const& comm, host const& ex, operand<std::type_identity_t<T>> s,
            operand<std::type_identity_t<T>> t, T* w, layout const& lay,
            linrec_options<std::type_identity_t<T>> const& opt = {});
template <linrec_value T>
void linrec(communicator const& comm, cuda const& ex, operand<std::type_identity_t<T>> s,
            operand<std::type_identity_t<T>> t, T* w, layout const& lay,
            linrec_options<std::type_identity_t<T>> const& opt = {});

// One sequence of n elements on this rank.
template <linrec_value T, class Executor>
void linrec(communicator const& comm, Executor const& ex, operand<std::type_identity_t<T>> s,
            operand<std::type_identity_t<T>> t, T* w, std::int64_t n,
            linrec_options<std::type_identity_t<T>> const& opt = {}) {
  linrec(comm, ex, s, t, w, layout::contiguous(n, 1), opt);
}

// recur::solve_batched split along the systems' length
// (include/recur/tridiag.hpp for the systems, operands and options): rank r
// holds rows [first_r, first_r + n_r) of every system in its layout (n =
// n_r), rank order the order of the rows. Defined for T = float and double,
// with recur::host or recur::cuda.
//
// The partition method one level up (lib/dist/tridiag_dist.cpp): each rank
// solves its block's interior rows for d and for the two unit columns that
// couple them to the block's first and last rows (recur::solve_batched on
// its executor, into scratch), reduces its block to those two rows, the
// rows are all-gathered (one MPI_Allgather of 3 + 2 (3 + nrhs) values per
// system a rank, after the agreement), every rank solves the reduced
// systems (at most 2 P rows each) on the host, and finishes its rows
// (x = y - alpha u - beta w on the interior). A rank moves about 18 words
// an unknown (nrhs = 1: two local solves, the unit columns, the finish)
// where one Thomas solve moves 5.
//
// Options: every field of tridiag_options but refinement (mixed is refused).
// algorithm names the local solves' algorithm. periodic closes the ring
// across the last and the first rank (n >= 3 over all ranks). info,
// pivoted and refinement_steps (0) are written on every rank, the same
// values: info is the 1-based row over the whole system.
//
// Pivoting: the local solves and the reduced system follow opt.pivoting, so
// each is as stable as its one-device solve; the block elimination between
// them is stable where each block's interior responds boundedly to its
// boundary values. Under partial and automatic a system is therefore
// gathered onto rank 0 and solved there by the pivoted Thomas (opt's
// pivoting, as one device solves it), its rows sent back, where the split
// cannot vouch for it: a block's interior is singular, its response, max
// over the interior's two ends of |a_(f+1) u| + |c_(l-1) w|, exceeds
// Thomas's growth bound of 16, or the reduced system is singular.
// Diagonally dominant and symmetric positive definite systems never are
// (the response is at most 1 on dominant rows); the gathered solve moves
// the system's rows through rank 0's host memory. With pivoting = none
// nothing is tested and a breakdown is reported (info, x NaN).

// Errors, state and streams as recur::dist::linrec (above): the ranks agree
// before anything is written; with recur::cuda the stream is synchronised
// once before the exchange and the finish is enqueued.
template <real_value T>
void solve_batched(communicator const& comm, host const& ex, std::type_identity_t<T> const* a,
                   std::type_identity_t<T> const* b, std::type_identity_t<T> const* c,
                   std::type_identity_t<T> const* d, T* x, layout const& lay,
                   tridiag_options const& opt = {});
template <real_value T>
void solve_batched(communicator const& comm, cuda const& ex, std::type_identity_t<T> const* a,
                   std::type_identity_t<T> const* b, std::type_identity_t<T> const* c,
                   std::type_identity_t<T> const* d, T* x, layout const& lay,
                   tridiag_options const& opt = {});

// One system of n rows on this rank.
template <real_value T, class Executor>
void solve_batched(communicator const& comm, Executor const& ex, std::type_identity_t<T> const* a,
                   std::type_identity_t<T> const* b, std::type_identity_t<T> const* c,
                   std::type_identity_t<T> const* d, T* x, std::int64_t n, tridiag_options const& opt = {}) {
  solve_batched(comm, ex, a, b, c, d, x, layout::contiguous(n, 1), opt);
}

// --- Linear time-invariant filters and codecs ------------------------------
//
// The filters of include/recur/filter.hpp and chain.hpp whose state passes
// linearly from one sample to the next, split along their length
// (lib/dist/lti_dist.cpp): lfilter, sosfilt (forward and reverse),
// linrec_order_k, and the DPCM codecs (floating point; integer decoding
// with shift 0, linear modulo 2^bits; integer encoding, a stencil). The same
// arguments as the one-device call, semantics and results as the one-device
// call on the concatenated sequences, to rounding for floating point and
// bitwise for integers.
//
// State, as for linrec: opt.init enters at the first rank in the call's
// direction (the last in reverse) and is ignored elsewhere; opt.final_state,
// on every rank that passes it, receives the state after the whole
// sequences (the same values on every rank). The DPCM codecs carry their k
// previous samples across the ranks, so a rank shorter than k still sees
// the samples of the ranks before it.
//
// The algorithm: each rank runs its slice from a zero state (the entering
// rank from opt.init) into scratch, its final state c being the slice's
// state map's constant part; the map's linear part is A^n_r, A the step's
// state matrix (the same on every rank: A is taken from one step of the
// host filter from each unit state, so it is the arithmetic the filter
// does). One MPI_Allgather of (1 + count * k) values a rank exchanges n_r
// and c (k the state size); every rank folds z <- A^n_r z + c in rank order
// (long double for double data, double for float; uint64 wrap-around for
// integer samples), and runs its slice again from its incoming state into
// the output. A rank reads its slice twice and writes it twice (one
// scratch slice of the layout's extent on the executor), against the
// one-device call's one read and one write. The fold costs every rank
// O(P k^3 log n) on the host (A^n_r by squaring for each rank): meant for
// the state sizes of IIR filters and predictors (up to a few dozen), not
// for FIR filters of thousands of taps.
//
// Errors as for linrec: every rank checks its arguments (the first run
// makes the one-device call's checks on x, the coefficients and the state;
// y and final_state are checked beside it), the ranks agree, and only then
// is anything written. The ranks must pass the same coefficients: a hash of
// them is part of the agreement. recur::cuda: the limits of the one-device
// call (orders 0-8 but sosfilt); integer DPCM decoding with shift > 0 is an
// invalid_argument (its floor is not linear). Defined for Executor =
// recur::host and recur::cuda, T = float and double, S = int16_t, int32_t
// and uint8_t.
template <real_value T, class Executor>
void lfilter(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> b,
             std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
             layout const& lay, filter_options<std::type_identity_t<T>> const& opt = {});
template <real_value T, class Executor>
void sosfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> sos,
             std::type_identity_t<T> const* x, T* y, layout const& lay,
             filter_options<std::type_identity_t<T>> const& opt = {});
template <real_value T, class Executor>
void linrec_order_k(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> a,
                    std::type_identity_t<T> const* x, T* y, layout const& lay,
                    chain_options<std::type_identity_t<T>> const& opt = {});
template <real_value T, class Executor>
void dpcm_encode(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* x, T* e, layout const& lay,
                 dpcm_options<std::type_identity_t<T>> const& opt = {});
template <real_value T, class Executor>
void dpcm_decode(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> c,
                 std::type_identity_t<T> const* e, T* x, layout const& lay,
                 dpcm_options<std::type_identity_t<T>> const& opt = {});
template <dpcm_sample S, class Executor>
void dpcm_encode(communicator const& comm, Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* x, S* e, layout const& lay,
                 dpcm_options<std::type_identity_t<S>> const& opt = {});
template <dpcm_sample S, class Executor>
void dpcm_decode(communicator const& comm, Executor const& ex, std::span<std::int64_t const> c, int shift,
                 std::type_identity_t<S> const* e, S* x, layout const& lay,
                 dpcm_options<std::type_identity_t<S>> const& opt = {});

// recur::matrix_chain split along its length (include/recur/chain.hpp; the
// same lti_dist.cpp routine): x_i = M_i x_(i-1) + u_i, whose map over a
// slice is x -> P x + c with P = M_(n-1) ... M_0 varying from sequence to
// sequence. A rank past the first gets each sequence's P from K more runs
// of its slice from the unit states with u = 0 (K + 2 runs in all), and
// the all-gather carries P too (1 + count (K + K^2) values a rank). State
// and errors as above (init at rank 0, final_state on every rank). Defined
// for K = 2..8, T = float and double, host and cuda.
template <int K, real_value T, class Executor>
requires(K >= 2 && K <= 8) void matrix_chain(communicator const& comm, Executor const& ex,
                                             std::type_identity_t<T> const* M,
                                             std::type_identity_t<T> const* u, T* x, layout const& lay,
                                             chain_options<std::type_identity_t<T>> const& opt = {});

// filtfilt and sosfiltfilt (include/recur/filter.hpp) over sequences split
// along their length (lib/dist/filtfilt_dist.cpp): the forward and the
// backward pass are each a split filter (above), their initial states made
// from the extensions at the two ends (scipy's method 'pad'), which rank 0
// and the last rank filter on the host. The extensions mirror the end
// ranks' samples, so the first and the last rank must each hold more than
// padlen samples (an invalid_argument otherwise; with one rank, scipy's own
// rule). Results agree with the one-device call on the whole sequences to
// rounding; y may be x. A rank reads and writes its slice four times each.
template <real_value T, class Executor>
void filtfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> b,
              std::span<std::type_identity_t<T> const> a, std::type_identity_t<T> const* x, T* y,
              layout const& lay, filtfilt_options const& opt = {});
template <real_value T, class Executor>
void sosfiltfilt(communicator const& comm, Executor const& ex, std::span<std::type_identity_t<T> const> sos,
                 std::type_identity_t<T> const* x, T* y, layout const& lay, filtfilt_options const& opt = {});

}  // namespace recur::dist
