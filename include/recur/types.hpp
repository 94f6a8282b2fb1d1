#pragma once
// The small types the public API shares: the value types each facility takes,
// the enums, operand<T> and the option structs. Plain data: the device-level
// dispatch (kernels/dispatch/) includes this header, never the host API
// headers above it. The only functions here are to_string and the
// parse_tridiag_* functions (defined in the library). Including it needs no
// CUDA headers.
//
// State, in every facility: the options struct, the last argument, holds
// pointers `init` (a null one means zero initial state, or `init_value`
// where the facility has a scalar default) and `final_state` (null: not
// wanted). Their sizes follow from the layout's count and the facility's
// state size per sequence (doc/design.md, "The API convention").

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>

#include <recur/storage.hpp>

namespace recur {

// ---------------------------------------------------------- value types --

// The floating-point types of every facility.
template <class T>
concept real_value = std::same_as<T, float> || std::same_as<T, double>;

// The value types of linrec: the floating-point types, and the 16-bit
// storage types (recur/storage.hpp) computed in float.
template <class T>
concept linrec_value = real_value<T> || storage16<T>;

// The sample types of the integer DPCM codecs.
template <class S>
concept dpcm_sample =
    std::same_as<S, std::int16_t> || std::same_as<S, std::int32_t> || std::same_as<S, std::uint8_t>;

// ------------------------------------------------------------- linrec --

// An input that is either an array (laid out like the output) or one scalar
// shared by every step.
template <class T>
struct operand {
  T const* data = nullptr;
  T value{};

  operand(T const* p) : data(p) {}  // NOLINT: implicit on purpose
  operand(T v) : value(v) {}        // NOLINT
  bool is_scalar() const { return data == nullptr; }
};

enum class direction { forward, reverse };

// Which GPU algorithm runs linrec (recur::host ignores it). All are the
// P-scheme (doc/pscheme.md); doc/performance.md compares them. Interleaved
// batches (batch_stride 1) of 32 sequences or more run one sequence per
// thread or a stripe of adjacent sequences per block with every variant but
// three_kernel.
enum class linrec_variant {
  automatic,     // single_pass; on batches of sequences contiguous in memory wide enough to fill
                 // the device, one block per whole sequence and no look-back (bitwise
                 // reproducible, not the same bits as single_pass); pipelined when s is a scalar
                 // whose power over one tile's length lies far below the smallest subnormal, so
                 // that every tile provably forgets
  single_pass,   // a tile on chip, decoupled look-back: memory read once, written once
  three_kernel,  // the paper's literal form: transposed arrays in global memory, 3 kernels
  // One pass by a persistent grid that keeps the next tile's loads in flight
  // during each look-back. For dense contiguous layouts with 16-byte aligned
  // arrays (others run single_pass). Faster than single_pass when the
  // recurrence forgets within a tile (|s| bounded away from 1), slower when
  // it does not (|s| close to 1); bitwise reproducible run to run, but not
  // the same bits as single_pass.
  pipelined,
};

template <class T>
struct linrec_options {
  direction dir = direction::forward;
  T const* init = nullptr;   // per-sequence initial state (count values), or null
  T init_value = T(0);       // initial state of every sequence when init is null
  T* final_state = nullptr;  // if set, receives each sequence's last w (count values)
  linrec_variant variant = linrec_variant::automatic;  // GPU only
};

// The options of linrec_adjoint (include/recur/linrec.hpp): the forward
// call's direction, initial state and variant, and the gradient reaching its
// final state. init_gradient receives the gradient of the forward's initial
// state; it may be final_gradient exactly (the state's gradient updated in
// place).
template <class T>
struct linrec_adjoint_options {
  direction dir = direction::forward;  // the forward recurrence's direction
  T const* init = nullptr;             // the forward's per-sequence initial state (count values), or null
  T init_value = T(0);                 // the forward's initial state of every sequence when init is null
  T const* final_gradient = nullptr;   // gradient of the forward's final state (count values); null: zero
  T* init_gradient = nullptr;          // if set, receives the gradient of each sequence's initial state
  linrec_variant variant = linrec_variant::automatic;  // GPU only, as for linrec
};

// -------------------------------------------------------------- chains --

// State of matrix_chain<K> and linrec_order_k: K (or k) values per sequence,
// sequence s's at init + s * K.
template <class T>
struct chain_options {
  T const* init = nullptr;   // initial state, count * K values; null: zero
  T* final_state = nullptr;  // if set, receives each sequence's last state (count * K values)
};

template <class T>
struct mobius_options {
  T const* init = nullptr;   // p_{-1} per sequence (count values), or null
  T init_value = T(0);       // p_{-1} of every sequence when init is null
  T* final_state = nullptr;  // if set, receives each sequence's p_{n-1} (count values)
};

// ------------------------------------------------------------- filters --

// State of lfilter and sosfilt: scipy's zi (init) and zf (final_state), with
// the sequence axis first: `order` values per sequence (lfilter:
// max(len(a), len(b)) - 1; sosfilt: 2 per section), sequence k's at
// init + k * order. init may equal final_state (the state updated in place).
// direction::reverse filters each sequence from its last element to its
// first (include/recur/filter.hpp).
template <class T>
struct filter_options {
  T const* init = nullptr;   // count * order values; null: zero (scipy's default)
  T* final_state = nullptr;  // count * order values; null: not wanted
  direction dir = direction::forward;
};

// How filtfilt and sosfiltfilt extend each sequence at both ends before the
// forward-backward pass (scipy.signal.filtfilt's padtype): odd, even or
// constant extensions of padlen samples, or none.
enum class filtfilt_pad { odd, even, constant, none };

// The options of filtfilt and sosfiltfilt (scipy's method 'pad'). padlen is
// the samples added at each end; unset means scipy's default, 3 * ntaps
// (filtfilt: ntaps = max(len(a), len(b)); sosfiltfilt: 2 n_sections + 1,
// less the sections whose b2 and a2 are both zero, counted as scipy counts
// them). padtype none adds nothing, whatever padlen says.
struct filtfilt_options {
  filtfilt_pad padtype = filtfilt_pad::odd;
  std::optional<std::int64_t> padlen;
};

// State of the DPCM codecs: the k samples before each sequence's first,
// newest first, sequence s's at init + s * k (k the predictor's order).
template <class S>
struct dpcm_options {
  S const* init = nullptr;  // count * k samples; null: zero
};

// ------------------------------------------------------------- tridiag --

enum class tridiag_algorithm {
  automatic,   // chosen by the executor from the shape, layout and type (resolve_tridiag_algorithm)
  thomas,      // Gaussian elimination without pivoting, one thread per system
  cr,          // cyclic reduction (Hockney; Zhang et al. 2010 sec. 2.1)
  pcr,         // parallel cyclic reduction (sec. 2.2)
  rd,          // recursive doubling: a scan over 3x3 matrices (sec. 2.3); its domain: tridiag.hpp
  cr_pcr,      // CR down to a small system, PCR on it, CR back substitution
  cr_rd,       // CR down to a small system, RD on it
  cr_packed,   // register-packed CR (Davidson and Owens 2011)
  pscheme,     // forward elimination as Moebius and affine recurrences (Wakatani 2012)
  thomas_pcr,  // chunks of rows by Thomas, their boundary rows by PCR (Laszlo et al. 2016)
  cr_split,    // cyclic reduction with Goeddeke and Strzodka's split storage (conflict-free levels)
  bondeli,     // Bondeli's divide and conquer: blocks solved apart, joined by a system of their ends
};

// Every algorithm, automatic first: the one list the library, the recur
// program and the Python package take their names from (to_string).
inline constexpr tridiag_algorithm tridiag_algorithms[] = {
    tridiag_algorithm::automatic,  tridiag_algorithm::thomas,    tridiag_algorithm::cr,
    tridiag_algorithm::pcr,        tridiag_algorithm::rd,        tridiag_algorithm::cr_pcr,
    tridiag_algorithm::cr_rd,      tridiag_algorithm::cr_packed, tridiag_algorithm::pscheme,
    tridiag_algorithm::thomas_pcr, tridiag_algorithm::cr_split,  tridiag_algorithm::bondeli,
};

// "auto", "thomas", "cr", ...; parse_tridiag_algorithm also takes "automatic"
// for "auto" (the spelling of tridiag_pivoting's enum).
char const* to_string(tridiag_algorithm a) noexcept;
std::optional<tridiag_algorithm> parse_tridiag_algorithm(std::string_view name) noexcept;

// How a system's elimination chooses its pivots (include/recur/tridiag.hpp,
// doc/tridiag.md "Pivoting").
enum class tridiag_pivoting {
  automatic,  // the no-pivot solve, each system checked (recur::host's Thomas: its LU growth; recur::cuda
              // and the other algorithms: its rows' dominance); those that fail solved again pivoted
              // (tridiag.hpp)
  none,       // no pivoting: stable for diagonally dominant and symmetric positive definite matrices
  partial,    // row partial pivoting, as LAPACK's ?gtsv (algorithm automatic or thomas)
};

// Iterative refinement of double-precision systems (doc/tridiag.md, "Mixed-precision refinement").
enum class tridiag_refinement {
  none,   // solved in the data's precision
  mixed,  // double only: factored and solved in float, corrected with double residuals
};

// "auto", "none", "partial"; "none", "mixed". parse_tridiag_pivoting also
// takes "automatic" for "auto".
char const* to_string(tridiag_pivoting p) noexcept;
char const* to_string(tridiag_refinement r) noexcept;
std::optional<tridiag_pivoting> parse_tridiag_pivoting(std::string_view name) noexcept;

struct tridiag_options {
  std::int64_t nrhs = 1;         // right-hand sides per system
  std::int64_t rhs_stride = 0;   // elements between right-hand side sets; 0: the layout's span
  std::int32_t* info = nullptr;  // per-system breakdown row, or null
  tridiag_algorithm algorithm = tridiag_algorithm::automatic;
  tridiag_pivoting pivoting = tridiag_pivoting::automatic;
  bool periodic = false;  // a[0] multiplies x[n-1] in row 0, c[n-1] multiplies x[0] in row n-1; n >= 3
  tridiag_refinement refinement = tridiag_refinement::none;
  int max_refinement_steps = 10;  // corrections per right-hand side before the double solve takes over
  // Per system (count int32 values each, memory as info's), or null:
  // pivoted, 1 where the system was solved with partial pivoting, else 0;
  // refinement_steps, the refinement's corrections, -1 where the double
  // solve took over, 0 without refinement.
  std::int32_t* pivoted = nullptr;
  std::int32_t* refinement_steps = nullptr;
};

}  // namespace recur
