#pragma once
// How the ranks of a split call agree before anything is written: each rank
// runs its own checks and the work before the exchange (which writes
// nothing), catching what it throws; one MPI_Allgather of a fixed-size
// record then tells every rank every rank's outcome and the facts the ranks
// must share (count, type, options). If any rank failed, or the facts
// differ, every rank throws the same exception, so no rank goes on to a
// collective that another rank will never reach. The message is the same
// on every rank and names the first rank that failed; that rank throws a
// CUDA error as cuda_error, the others as recur::error.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include <recur/dist.hpp>
#include <recur/error.hpp>
#include <recur/executor.hpp>
#include <recur/storage.hpp>
#include "../detail/cuda_support.hpp"

namespace recur::dist::detail {

// What the ranks of one call must agree on; `names` labels the fields in
// the message of a disagreement (this rank's: the pointers travel with the
// record but are only read where they were made).
struct call_facts {
  static constexpr int fields = 8;
  std::int64_t value[fields] = {};
  char const* names[fields] = {};
  void set(int i, std::int64_t v, char const* name) {
    value[i] = v;
    names[i] = name;
  }
};

// The value type as one of call_facts' values, the same code in every call.
template <class T>
constexpr std::int64_t type_tag() {
  if constexpr (std::is_same_v<T, float>) return 1;
  if constexpr (std::is_same_v<T, double>) return 2;
  if constexpr (std::is_same_v<T, bfloat16>) return 3;
  if constexpr (std::is_same_v<T, float16>) return 4;
  if constexpr (std::is_same_v<T, std::int16_t>) return 5;
  if constexpr (std::is_same_v<T, std::int32_t>) return 6;
  if constexpr (std::is_same_v<T, std::uint8_t>) return 7;
  return 0;  // any other type: not one the split calls take
}

// The facts every split call starts with, fields 0-2: the batch's count
// (`what` names it), the value type and the executor; the call sets the
// fields from 3 on.
template <class T, class Executor>
call_facts batch_facts(std::int64_t count, char const* what = "the number of sequences (lay.count)") {
  call_facts f;
  f.set(0, count, what);
  f.set(1, type_tag<T>(), "the value type");
  f.set(2, std::is_same_v<Executor, cuda> ? 1 : 0, "the executor (0 host, 1 cuda)");
  return f;
}

// FNV-1a of coefficients' bytes (and `extra`), a call_facts value: ranks
// passing different coefficients disagree. With recur::cuda, coefficients
// the host cannot read hash to 0 unread; the split call's first run (the
// one-device call's checks, inside the agreement) refuses them.
template <class Executor, class C>
std::int64_t coefficient_hash(char const* fn, std::span<C const> c, std::int64_t extra = 0) {
  if constexpr (std::is_same_v<Executor, cuda>) {
    try {
      if (!c.empty()) recur::detail::check_host_pointer(fn, c.data(), "the coefficients");
    } catch (std::exception const&) {
      return 0;
    }
  }
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(extra);
  auto const* p = reinterpret_cast<unsigned char const*>(c.data());
  for (std::size_t i = 0; i < c.size_bytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);
}

// The communicator's size and this process's rank; throws invalid_argument
// (on this rank alone: no collective runs) where MPI is not initialised or
// the communicator is MPI_COMM_NULL.
struct rank_of {
  int rank = 0;
  int size = 1;
};
rank_of check_communicator(char const* fn, MPI_Comm comm);

namespace outcome {
enum : std::int32_t { ok = 0, invalid_argument = 1, cuda_error = 2, other = 3 };
}

struct agreement_record {
  std::int32_t outcome;
  std::int32_t code;  // cuda_error's code
  call_facts facts;
  char message[400];
};

static_assert(sizeof(agreement_record) == recur::dist::agreement_bytes, "dist.hpp's agreement_bytes");

// All-gathers this rank's record and throws where the call cannot go on.
void agree(char const* fn, MPI_Comm comm, rank_of const& me, agreement_record const& mine);

// Runs local(), records its outcome with facts, and agrees (above).
template <class Local>
void agree_after(char const* fn, MPI_Comm comm, rank_of const& me, call_facts const& facts, Local&& local) {
  agreement_record r{};
  r.facts = facts;
  auto keep = [&](std::int32_t o, char const* what, int code = 0) {
    r.outcome = o;
    r.code = code;
    std::strncpy(r.message, what, sizeof r.message - 1);
  };
  try {
    local();
  } catch (recur::invalid_argument const& e) {
    keep(outcome::invalid_argument, e.what());
  } catch (recur::cuda_error const& e) {
    keep(outcome::cuda_error, e.what(), e.code());
  } catch (std::exception const& e) {
    keep(outcome::other, e.what());
  }
  agree(fn, comm, me, r);
}

}  // namespace recur::dist::detail
