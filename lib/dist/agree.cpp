// The agreement of lib/dist/agree.hpp.
#include "agree.hpp"

namespace recur::dist::detail {

rank_of check_communicator(char const* fn, MPI_Comm comm) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (!initialised || finalised)
    throw invalid_argument(fmt::format("{}: MPI is not initialised (call MPI_Init first)", fn));
  if (comm == MPI_COMM_NULL) throw invalid_argument(fmt::format("{}: comm is MPI_COMM_NULL", fn));
  rank_of r;
  MPI_Comm_rank(comm, &r.rank);
  MPI_Comm_size(comm, &r.size);
  return r;
}

void agree(char const* fn, MPI_Comm comm, rank_of const& me, agreement_record const& mine) {
  std::vector<agreement_record> all(static_cast<std::size_t>(me.size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
  for (int r = 0; r < me.size; ++r) {
    agreement_record const& a = all[static_cast<std::size_t>(r)];
    if (a.outcome == outcome::ok) continue;
    std::string const what(a.message, strnlen(a.message, sizeof a.message));
    std::string const msg = fmt::format("{}: rank {} of {}: {}", fn, r, me.size, what);
    if (r == me.rank && a.outcome == outcome::cuda_error) throw cuda_error(msg, a.code);
    if (a.outcome == outcome::invalid_argument) throw invalid_argument(msg);
    throw error(msg);
  }
  call_facts const& f0 = all[0].facts;
  for (int i = 0; i < call_facts::fields; ++i)
    for (int r = 1; r < me.size; ++r)
      if (all[static_cast<std::size_t>(r)].facts.value[i] != f0.value[i])
        throw invalid_argument(fmt::format("{}: the ranks disagree on {}: rank 0 has {}, rank {} has {}", fn,
                                           mine.facts.names[i] ? mine.facts.names[i] : "the call",
                                           f0.value[i], r, all[static_cast<std::size_t>(r)].facts.value[i]));
}

}  // namespace recur::dist::detail
