#pragma once
// How the dispatches cut a caller's workspace into pieces: laid end to end,
// each (but the last) rounded up to 256 bytes so that the next starts
// aligned for any type and for coalesced access. A dispatch sizes its
// pieces with workspace_piece and hands them out, in the same order, with
// a workspace_cursor.

#include <cstddef>

namespace recur::kernels {

constexpr std::size_t workspace_piece(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

class workspace_cursor {
 public:
  explicit workspace_cursor(void* base) : at_(static_cast<unsigned char*>(base)) {}
  // The next piece, `bytes` long (as sized: workspace_piece for all but the last), as U*.
  template <class U = void>
  U* take(std::size_t bytes) {
    unsigned char* const p = at_;
    at_ += bytes;
    return reinterpret_cast<U*>(p);
  }

 private:
  unsigned char* at_;
};

}  // namespace recur::kernels
