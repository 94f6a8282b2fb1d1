// host_space (space.hpp): the CPU's memory, aligned for vector loads.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "common/space.hpp"

namespace recur_examples {

namespace {
constexpr std::align_val_t alignment{64};
}

void* host_space::allocate(std::size_t bytes) const { return ::operator new(bytes ? bytes : 1, alignment); }

void host_space::deallocate(void* p) const noexcept { ::operator delete(p, alignment); }

void host_space::to_space(void* dst, void const* host, std::size_t bytes) const {
  if (bytes) std::memcpy(dst, host, bytes);
}

void host_space::to_host(void* host, void const* src, std::size_t bytes) const {
  if (bytes) std::memcpy(host, src, bytes);
}

void host_space::copy(void* dst, void const* src, std::size_t bytes) const {
  // Chunks of 1 MiB, each copied by one thread.
  constexpr std::int64_t chunk = 1 << 20;
  auto const total = static_cast<std::int64_t>(bytes);
#pragma omp parallel for schedule(static)
  for (std::int64_t at = 0; at < total; at += chunk)
    std::memcpy(static_cast<char*>(dst) + at, static_cast<char const*>(src) + at,
                static_cast<std::size_t>(std::min(chunk, total - at)));
}

}  // namespace recur_examples
