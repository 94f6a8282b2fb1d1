// host_space (space.hpp): the CPU's memory, aligned for vector loads.
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

}  // namespace recur_examples
