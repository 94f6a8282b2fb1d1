// The non-template half of the generic host scan (include/recur/scan.hpp):
// its argument checks, its plan and its threads.
#include <recur/scan.hpp>

#include <fmt/format.h>

#include "cpu/pscheme.hpp"
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"

namespace recur::detail {

void check_scan(char const* fn, scan_arguments const& a) {
  check_layout(fn, a.lay, a.value_bytes);
  if (a.threads < 0) bad_argument(fn, fmt::format("host.threads = {} is negative", a.threads));
  if (a.exclusive && !a.has_init) bad_argument(fn, "an exclusive scan needs an initial value (opt.has_init)");
  if (a.inits && !a.has_init) bad_argument(fn, "opt.inits is given without opt.has_init");
  if (a.lay.n == 0 || a.lay.count == 0) return;
  auto const pointer = [&](void const* p, char const* name) {
    if (!p) bad_argument(fn, fmt::format("{} is null", name));
    if (reinterpret_cast<std::uintptr_t>(p) % a.value_align != 0)
      bad_argument(fn, fmt::format("{} = {} is not aligned to {} bytes", name, p, a.value_align));
    if (a.device) check_device_pointer(fn, p, name);
  };
  pointer(a.in, "in");
  pointer(a.out, "out");
  if (a.inits && a.has_init) pointer(a.inits, "opt.inits");
  // The bytes each layout covers, as span_of counts them.
  auto const span = [&](void const* p) {
    auto const lo = reinterpret_cast<std::uintptr_t>(p);
    return byte_span{lo, lo + static_cast<std::uintptr_t>(layout_extent(a.lay)) * a.value_bytes};
  };
  if (a.in != a.out && span(a.in).intersects(span(a.out)))
    bad_argument(fn, "in and out overlap (only out == in, in place, is allowed)");
}

scan_plan host_scan_plan(host const& ex, layout const& lay) {
  int const max_threads = available_threads(ex.threads);
  // Chunking adds a reduction pass as long as the scan's (reduce_ratio 1).
  int const chunks = pscheme_chunk_count(lay.n, lay.count, ex.threads, pscheme_costs{1, 1});
  if (chunks == 1) return {thread_count(max_threads, lay.count, lay.n * lay.count), 1};
  std::int64_t const pieces = lay.count * chunks;
  return {static_cast<int>(std::min<std::int64_t>(max_threads, pieces)), chunks};
}

void host_parallel_for(int threads, std::int64_t items, void (*body)(void*, std::int64_t, std::int64_t),
                       void* ctx) {
  if (threads <= 1 || items <= 1) {
    body(ctx, 0, items);
    return;
  }
  int const blocks = static_cast<int>(std::min<std::int64_t>(threads, items));
#pragma omp parallel for schedule(static) num_threads(blocks)
  for (int t = 0; t < blocks; ++t) body(ctx, items * t / blocks, items * (t + 1) / blocks);
}

}  // namespace recur::detail
