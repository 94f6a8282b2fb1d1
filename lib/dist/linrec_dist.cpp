// recur::dist::linrec (include/recur/dist.hpp): reduce, exchange, run.
//
//   1. every rank checks its arguments and composes its slice of each
//      sequence into one map (detail::linrec_split_summary); the rank where
//      the recurrence enters folds the initial state in, so its map is the
//      constant (0, state after its slice) and the initial state need not
//      travel;
//   2. the ranks agree (agree.hpp), then all-gather the maps;
//   3. each rank applies the maps of the ranks before it in the call's
//      direction, in rank order, to get its incoming state, and all the maps
//      to get the final state, and runs its slice from its incoming state
//      (detail::linrec_split_finish).
// The maps are applied as the recurrence steps (a == 0 forgets the state),
// in an order fixed by the rank count, so results are reproducible.
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include <recur/dist.hpp>
#include "../linrec_split.hpp"
#include "agree.hpp"

#if RECUR_HAS_NCCL
#include <nccl.h>
#endif

namespace recur::dist {
namespace {

constexpr char const* fn = "recur::dist::linrec";

// The state after map m from x, as a step of the recurrence (a == 0
// forgets x): the constant map x composed with m, the one-device rule.
template <class V>
V apply(ops::affine<V> const& m, V x) {
  return ops::compose_resetting{}(ops::affine<V>{V(0), x}, m).b;
}

#if RECUR_HAS_NCCL
// The NCCL path's exchange: the maps all-gathered on the stream.
void nccl_all_gather(void* ctx, void const* mine, void* all, std::size_t bytes, CUstream_st* stream) {
  ncclResult_t const r = ncclAllGather(mine, all, bytes, ncclUint8, static_cast<ncclComm_t>(ctx), stream);
  if (r != ncclSuccess) throw error(fmt::format("{}: ncclAllGather: {}", fn, ncclGetErrorString(r)));
}
#endif

// The NCCL path (comm.nccl with recur::cuda): the checks, the agreement,
// then everything enqueued (linrec_cuda_exchanged).
template <class T>
void run_nccl(communicator const& c, cuda const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
              linrec_options<T> const& opt, detail::rank_of const& me, detail::call_facts const& facts) {
  detail::agree_after(fn, c.comm, me, facts, [&] {
    if (!nccl_compiled())
      throw invalid_argument(
          fmt::format("{}: comm.nccl is given, but this build has no NCCL path "
                      "(configure with RECUR_ENABLE_NCCL=ON)",
                      fn));
    recur::detail::linrec_split_check(ex, s, t, w, lay, opt);
  });
#if RECUR_HAS_NCCL
  recur::detail::split_ranks const ranks{me.rank, me.size, opt.dir == direction::reverse};
  recur::detail::linrec_split_exchanged(ex, s, t, w, lay, opt, ranks,
                                        recur::detail::linrec_exchange{c.nccl, nccl_all_gather});
#endif
}

template <class Executor, class T>
void run(communicator const& c, Executor const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
         linrec_options<T> const& opt) {
  using V = compute_t<T>;
  using map = ops::affine<V>;
  auto const me = detail::check_communicator(fn, c.comm);
  bool const reverse = opt.dir == direction::reverse;
  int const entry = reverse ? me.size - 1 : 0;  // the rank the recurrence enters at
  bool const entering = me.rank == entry;
  linrec_options<T> local = opt;
  if (!entering) local.init = nullptr;  // read on the entering rank alone

  std::int64_t const count = lay.count > 0 ? lay.count : 0;
  std::vector<map> mine, all;
  std::vector<T> init;
  recur::detail::linrec_chunk_maps<V> kept;  // the host's chunk maps, from the summary to the finish
  auto facts = detail::batch_facts<T, Executor>(lay.count);
  facts.set(3, static_cast<std::int64_t>(opt.dir), "opt.dir");
  facts.set(4, static_cast<std::int64_t>(opt.variant), "opt.variant");
  bool const nccl = std::is_same_v<Executor, cuda> && c.nccl != nullptr;
  facts.set(5, nccl ? 1 : 0, "whether comm.nccl is given (recur::cuda)");
  if constexpr (std::is_same_v<Executor, cuda>)
    if (nccl) return run_nccl<T>(c, ex, s, t, w, lay, opt, me, facts);
  // Everything that can fail on one rank alone (the checks, the buffers,
  // the summary) runs before the agreement.
  detail::agree_after(fn, c.comm, me, facts, [&] {
    if (sizeof(map) * std::uint64_t(count) > std::uint64_t(std::numeric_limits<int>::max()))
      throw invalid_argument(
          fmt::format("{}: lay.count = {} is more sequences than one MPI_Allgather carries", fn, lay.count));
    mine.resize(static_cast<std::size_t>(count));
    all.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(me.size));
    init.resize(entering ? static_cast<std::size_t>(count) : 0);
    recur::detail::linrec_split_summary(ex, s, t, w, lay, local, mine.data(),
                                        entering ? init.data() : nullptr, &kept);
  });
  if (count == 0) return;
  if (entering)  // the initial state folded in: (0, state after this slice)
    for (std::int64_t k = 0; k < count; ++k) mine[k] = {V(0), apply(mine[k], to_compute(init[k]))};

  int const bytes = static_cast<int>(sizeof(map) * static_cast<std::size_t>(count));
  MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, c.comm);

  // Rank order along the recurrence: 0 .. size-1 forward, size-1 .. 0 in reverse.
  std::vector<T> in(static_cast<std::size_t>(count)), final(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    V x = V(0);  // replaced by the entering rank's constant map
    for (int step = 0; step < me.size; ++step) {
      int const r = reverse ? me.size - 1 - step : step;
      if (r == me.rank) in[k] = entering ? init[k] : to_storage<T>(x);
      x = apply(all[static_cast<std::size_t>(r) * static_cast<std::size_t>(count) + k], x);
    }
    final[k] = to_storage<T>(x);
  }
  recur::detail::linrec_split_finish(ex, s, t, w, lay, local, in.data(), final.data(), &kept);
}

}  // namespace

bool nccl_compiled() noexcept { return RECUR_HAS_NCCL != 0; }

template <linrec_value T>
void linrec(communicator const& comm, host const& ex, operand<std::type_identity_t<T>> s,
            operand<std::type_identity_t<T>> t, T* w, layout const& lay,
            linrec_options<std::type_identity_t<T>> const& opt) {
  run<host, T>(comm, ex, s, t, w, lay, opt);
}

template <linrec_value T>
void linrec(communicator const& comm, cuda const& ex, operand<std::type_identity_t<T>> s,
            operand<std::type_identity_t<T>> t, T* w, layout const& lay,
            linrec_options<std::type_identity_t<T>> const& opt) {
  run<cuda, T>(comm, ex, s, t, w, lay, opt);
}

#define RECUR_DIST_LINREC(E, T)                                                                     \
  template void linrec<T>(communicator const&, E const&, operand<T>, operand<T>, T*, layout const&, \
                          linrec_options<T> const&);
RECUR_DIST_LINREC(host, float)
RECUR_DIST_LINREC(host, double)
RECUR_DIST_LINREC(host, bfloat16)
RECUR_DIST_LINREC(host, float16)
RECUR_DIST_LINREC(cuda, float)
RECUR_DIST_LINREC(cuda, double)
RECUR_DIST_LINREC(cuda, bfloat16)
RECUR_DIST_LINREC(cuda, float16)
#undef RECUR_DIST_LINREC

}  // namespace recur::dist
