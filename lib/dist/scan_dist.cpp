// The non-template half of recur::dist::scan (include/recur/dist_scan.hpp):
// the agreement and the one all-gather of the ranks' totals.
#include <cstring>
#include <limits>
#include <string_view>

#include <recur/dist_scan.hpp>
#include "agree.hpp"

namespace recur::dist::detail {

bool scan_exchange::present(int r) const {
  std::int64_t flag = 0;
  std::memcpy(&flag, records.data() + std::size_t(r) * record_bytes, sizeof flag);
  return flag != 0;
}

std::int64_t type_hash(std::type_info const& t) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : std::string_view(t.name())) h = (h ^ c) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);
}

scan_exchange exchange_scan_totals(char const* fn, MPI_Comm comm, scan_facts const& facts, std::int64_t count,
                                   std::size_t value_bytes,
                                   std::function<bool(int rank, unsigned char* totals)> const& local) {
  auto const me = check_communicator(fn, comm);
  call_facts f;
  for (int i = 0; i < call_facts::fields; ++i) f.set(i, facts.value[i], facts.names[i]);
  scan_exchange x;
  x.rank = me.rank;
  x.size = me.size;
  std::vector<unsigned char> mine;
  agree_after(fn, comm, me, f, [&] {
    if (8 + value_bytes * std::uint64_t(count) > std::uint64_t(std::numeric_limits<int>::max()))
      throw invalid_argument(
          fmt::format("{}: lay.count = {} is more sequences than one MPI_Allgather carries", fn, count));
    x.record_bytes = 8 + value_bytes * static_cast<std::size_t>(count);
    mine.assign(x.record_bytes, 0);
    x.records.resize(x.record_bytes * static_cast<std::size_t>(me.size));
    std::int64_t const flag = local(me.rank, mine.data() + 8) ? 1 : 0;
    std::memcpy(mine.data(), &flag, sizeof flag);
  });
  int const bytes = static_cast<int>(x.record_bytes);
  MPI_Allgather(mine.data(), bytes, MPI_BYTE, x.records.data(), bytes, MPI_BYTE, comm);
  return x;
}

}  // namespace recur::dist::detail
