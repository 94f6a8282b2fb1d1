// explicit_part (adi.hpp) on the CPU: the rows spread over OpenMP threads,
// each value computed by one thread in a fixed order.
#include <cstdint>

#include "common/space.hpp"
#include "heat/adi.hpp"

namespace recur_examples {

template <class T>
void explicit_part(host_space const&, std::int64_t nx, std::int64_t my, double sx, double sy, T const* u,
                   T* w) {
  T const ax = static_cast<T>(sx), ay = static_cast<T>(sy);
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < my; ++j) {
    T const* const row = u + j * nx;
    T const* const below = j > 0 ? row - nx : nullptr;
    T const* const above = j + 1 < my ? row + nx : nullptr;
    for (std::int64_t i = 0; i < nx; ++i) {
      T const c = row[i];
      T const west = row[i > 0 ? i - 1 : nx - 1], east = row[i + 1 < nx ? i + 1 : 0];
      T const south = below ? below[i] : T(0), north = above ? above[i] : T(0);
      w[j * nx + i] = c + ax * ((west - c) + (east - c)) + ay * ((south - c) + (north - c));
    }
  }
}

RECUR_EXAMPLES_HEAT_INSTANCES(host_space)

}  // namespace recur_examples
