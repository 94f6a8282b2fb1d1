#pragma once
// recur::scan over any associative operator, split along its length across
// MPI ranks (include/recur/dist.hpp for communicators and split calls):
//
//   struct compose_u32 { ... };  // an associative operator on T, as for recur::scan
//   recur::dist::scan(comm, recur::host{}, in, out, recur::layout::contiguous(n_r), compose_u32{});
//   // with nvcc, on device memory (the operator __host__ __device__):
//   recur::dist::scan(comm, recur::cuda{stream}, d_in, d_out, lay, op, opt);
//
// Rank r holds elements [first_r, first_r + n_r) of every sequence; ranks
// may hold different lengths, including zero. The result is the one-device
// scan of the concatenated sequences (include/recur/scan.hpp): inclusive or
// exclusive, with an initial value (opt.init, or opt.inits per sequence),
// in place allowed. The initial values (opt.init, or the values at
// opt.inits) are read on rank 0 alone; every rank passes the same options
// otherwise (exclusive, has_init, inits given or not: where given, in the
// executor's memory on every rank), count, value type and operator type.
//
// Reduce, exchange, scan: each rank reduces its slice of each sequence to
// one value (one read; recur::device::reduce on the GPU), the ranks agree
// (as every split call, dist.hpp), one MPI_Allgather carries each rank's
// totals (8 + count sizeof(T) bytes a rank), every rank folds the totals of
// the ranks before it, in rank order on the host, into its prefix, and
// scans its slice from that prefix (one read, one write). A rank moves
// each element three times where the one-device scan moves it twice. The
// fold is sequential in rank order, so results are reproducible for a
// fixed rank count; floating-point operators round as the grouping by
// ranks (and, on the host, by threads) dictates.
//
// Requirements: T trivially copyable (its bytes travel through MPI); on
// recur::cuda the operator is called on the host too (the fold), so it is
// __host__ __device__.
//
// Errors as every split call's: each rank checks its arguments as
// recur::scan does (device memory with recur::cuda), all ranks agree, and a
// bad argument or a disagreement on any rank is the same
// recur::invalid_argument on every rank, nothing written. With recur::cuda
// the stream is synchronised once (the totals come to the host) and the
// call returns with the scan enqueued; scratch is allocated on the stream.

#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <recur/dist.hpp>
#include <recur/scan.hpp>

#if defined(__CUDACC__)
#include <string>

#include <cuda_runtime.h>

#include <recur/error.hpp>
#include <recur/kernels/dispatch/dispatch_scan.cuh>
#endif

namespace recur::dist {
namespace detail {

// The non-template half (lib/dist/scan_dist.cpp). Checks the communicator,
// runs local(totals) (this rank's checks and its reduction: count values
// of value_bytes each, written to totals, with has_totals saying whether
// this rank contributes any), agrees on facts (names as call_facts'), and
// all-gathers every rank's record. local gets this rank's number.
struct scan_facts {
  std::int64_t value[8];
  char const* names[8];
};
struct scan_exchange {
  int rank = 0, size = 1;
  std::vector<unsigned char> records;  // per rank: an int64 flag (totals present), then its totals
  std::size_t record_bytes = 0;
  bool present(int r) const;
  unsigned char const* totals(int r) const { return records.data() + std::size_t(r) * record_bytes + 8; }
};
scan_exchange exchange_scan_totals(char const* fn, MPI_Comm comm, scan_facts const& facts, std::int64_t count,
                                   std::size_t value_bytes,
                                   std::function<bool(int rank, unsigned char* totals)> const& local);

// A type's name as a fact: the same program's ranks agree.
std::int64_t type_hash(std::type_info const& t);

template <class T, class Op, class Executor>
scan_facts facts_of(layout const& lay, scan_options<T> const& opt) {
  return {{lay.count, type_hash(typeid(T)), static_cast<std::int64_t>(sizeof(T)),
           std::is_same_v<Executor, cuda> ? 1 : 0, opt.exclusive ? 1 : 0, opt.has_init ? 1 : 0,
           opt.has_init && opt.inits ? 1 : 0, type_hash(typeid(Op))},
          {"the number of sequences (lay.count)", "the value type", "the value size",
           "the executor (0 host, 1 cuda)", "opt.exclusive", "opt.has_init", "whether opt.inits is given",
           "the operator type"}};
}

// Rank 0 folds the initial values into its totals (and contributes where
// its slice is empty), so that they need not travel separately.
template <class T, class Op>
bool fold_initial(scan_options<T> const& opt, T const* inits, std::int64_t count, bool has_totals,
                  Op const& op, T* totals) {
  if (!opt.has_init) return has_totals;
  for (std::int64_t k = 0; k < count; ++k) {
    T const init = inits ? inits[k] : opt.init;
    totals[k] = has_totals ? op(init, totals[k]) : init;
  }
  return true;
}

// This rank's prefix of each sequence: the totals of the ranks before it,
// folded in rank order. Returns whether there is one (the same for every
// sequence: a rank's totals are present for all or none).
template <class T, class Op>
bool rank_prefixes(scan_exchange const& x, std::int64_t count, Op const& op, T* prefix) {
  bool has = false;
  for (int r = 0; r < x.rank; ++r) {
    if (!x.present(r)) continue;
    for (std::int64_t k = 0; k < count; ++k) {
      T t;
      std::memcpy(&t, x.totals(r) + std::size_t(k) * sizeof(T), sizeof(T));
      prefix[k] = has ? op(prefix[k], t) : t;
    }
    has = true;
  }
  return has;
}

}  // namespace detail

template <class T, class Op>
void scan(communicator const& comm, host const& ex, T const* in, T* out, layout const& lay, Op op,
          scan_options<std::type_identity_t<T>> const& opt = {}) {
  static_assert(std::is_trivially_copyable_v<T>, "recur::dist::scan: T travels as bytes");
  using state = recur::detail::scan_state<T>;
  constexpr char const* fn = "recur::dist::scan";
  std::int64_t const count = lay.count > 0 ? lay.count : 0;
  auto const local = [&](int rank, unsigned char* bytes) {
    recur::detail::scan_arguments const args{
        in, out, lay, sizeof(T), alignof(T), opt.exclusive, opt.has_init, opt.inits, false, ex.threads};
    recur::detail::check_scan(fn, args);
    bool const has = lay.n > 0 && count > 0;
    std::vector<state> s(static_cast<std::size_t>(has ? count : 0));
    if (has)
      recur::detail::host_reduce(
          ex, in, lay, op, [](std::int64_t) { return state{}; }, s.data());
    std::vector<T> totals(static_cast<std::size_t>(count));
    for (std::size_t k = 0; k < s.size(); ++k) totals[k] = s[k].value;
    bool const present =
        rank == 0 ? detail::fold_initial(opt, opt.inits, count, has, op, totals.data()) : has;
    std::memcpy(bytes, totals.data(), totals.size() * sizeof(T));
    return present;
  };
  auto const x = detail::exchange_scan_totals(fn, comm.comm, detail::facts_of<T, Op, host>(lay, opt), count,
                                              sizeof(T), local);
  if (count == 0 || lay.n == 0) return;
  std::vector<T> prefix(static_cast<std::size_t>(count));
  bool const has = detail::rank_prefixes(x, count, op, prefix.data());
  recur::detail::host_scan(ex, in, out, lay, op, opt.exclusive, [&](std::int64_t k) {
    return x.rank == 0 ? recur::detail::initial_state(opt, k) : state{has ? prefix[k] : T{}, has};
  });
}

#if defined(__CUDACC__)
namespace detail {
inline void cuda_ok(char const* fn, cudaError_t e, char const* what) {
  if (e != cudaSuccess)
    throw cuda_error(std::string(fn) + ": " + what + ": " + cudaGetErrorString(e), static_cast<int>(e));
}
}  // namespace detail

template <class T, class Op>
void scan(communicator const& comm, cuda const& ex, T const* in, T* out, layout const& lay, Op op,
          scan_options<std::type_identity_t<T>> const& opt = {}) {
  static_assert(std::is_trivially_copyable_v<T>, "recur::dist::scan: T travels as bytes");
  constexpr char const* fn = "recur::dist::scan";
  auto const stream = reinterpret_cast<cudaStream_t>(ex.stream);
  std::int64_t const count = lay.count > 0 ? lay.count : 0;
  auto const local = [&](int rank, unsigned char* bytes) {
    recur::detail::scan_arguments const args{
        in, out, lay, sizeof(T), alignof(T), opt.exclusive, opt.has_init, opt.inits, true};
    recur::detail::check_scan(fn, args);
    bool const has = lay.n > 0 && count > 0;
    std::vector<T> totals(static_cast<std::size_t>(count)), inits;
    if (rank == 0 && opt.has_init && opt.inits) {  // read on the call's stream, after the caller's work
      inits.resize(static_cast<std::size_t>(count));
      detail::cuda_ok(
          fn,
          cudaMemcpyAsync(inits.data(), opt.inits, inits.size() * sizeof(T), cudaMemcpyDeviceToHost, stream),
          "reading opt.inits");
    }
    if (has) {  // device::reduce into scratch, then to the host
      std::size_t temp_bytes = 0;
      detail::cuda_ok(fn, device::reduce<T>(nullptr, temp_bytes, in, nullptr, lay, op, stream), "sizing");
      std::size_t const at = (temp_bytes + 255) / 256 * 256;
      void* temp = nullptr;
      detail::cuda_ok(fn, cudaMallocAsync(&temp, at + totals.size() * sizeof(T), stream), "scratch");
      T* const d_totals = reinterpret_cast<T*>(static_cast<char*>(temp) + at);
      cudaError_t e = device::reduce<T>(temp, temp_bytes, in, d_totals, lay, op, stream);
      if (e == cudaSuccess)
        e = cudaMemcpyAsync(totals.data(), d_totals, totals.size() * sizeof(T), cudaMemcpyDeviceToHost,
                            stream);
      cudaError_t const f = cudaFreeAsync(temp, stream);
      detail::cuda_ok(fn, e == cudaSuccess ? f : e, "the slice's reduction");
    }
    detail::cuda_ok(fn, cudaStreamSynchronize(stream),
                    "cudaStreamSynchronize");  // totals and inits on the host
    bool const present = rank == 0 ? detail::fold_initial(opt, inits.empty() ? nullptr : inits.data(), count,
                                                          has, op, totals.data())
                                   : has;
    std::memcpy(bytes, totals.data(), totals.size() * sizeof(T));
    return present;
  };
  auto const x = detail::exchange_scan_totals(fn, comm.comm, detail::facts_of<T, Op, cuda>(lay, opt), count,
                                              sizeof(T), local);
  if (count == 0 || lay.n == 0) return;
  // The slice's scan from its prefix: rank 0 from opt as given, the others
  // from their folded prefixes (one value: by value; several: uploaded).
  scan_options<T> run = opt;
  std::vector<T> prefix(static_cast<std::size_t>(count));
  if (x.rank != 0) {
    run.has_init = detail::rank_prefixes(x, count, op, prefix.data());
    run.init = prefix[0];
    run.inits = nullptr;
  }
  std::size_t temp_bytes = 0;
  detail::cuda_ok(fn, device::scan<T>(nullptr, temp_bytes, in, out, lay, op, run, stream), "sizing");
  std::size_t const at = (temp_bytes + 255) / 256 * 256;
  bool const upload = run.has_init && count > 1 && x.rank != 0;
  void* temp = nullptr;
  detail::cuda_ok(fn, cudaMallocAsync(&temp, at + (upload ? prefix.size() * sizeof(T) : 0), stream),
                  "scratch");
  cudaError_t e = cudaSuccess;
  if (upload) {  // pageable memory: the copy is staged before cudaMemcpyAsync returns
    run.inits = reinterpret_cast<T const*>(static_cast<char*>(temp) + at);
    e = cudaMemcpyAsync(const_cast<T*>(run.inits), prefix.data(), prefix.size() * sizeof(T),
                        cudaMemcpyHostToDevice, stream);
  }
  if (e == cudaSuccess) e = device::scan<T>(temp, temp_bytes, in, out, lay, op, run, stream);
  cudaError_t const f = cudaFreeAsync(temp, stream);
  detail::cuda_ok(fn, e == cudaSuccess ? f : e, "the slice's scan");
}
#endif

}  // namespace recur::dist
