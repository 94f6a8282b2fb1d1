// Host API of the batched tridiagonal solvers: argument checks (before
// anything is written), empty problems, algorithm resolution, then the
// backend (lib/tridiag_backends.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include <recur/tridiag.hpp>
#include "detail/arg_check.hpp"
#include "detail/cuda_support.hpp"
#include "tridiag_backends.hpp"
#include "tridiag_checked.hpp"
#include "tridiag_options.hpp"

namespace recur {
namespace detail {

// Pointers that passed the device-memory check in recent runs of a plan
// (tridiag_plan's note): the last 16, shared by the plan's copies.
struct tridiag_checked_pointers {
  std::mutex m;
  std::array<void const*, 16> known{};
  std::size_t next = 0;
};

}  // namespace detail
namespace {

constexpr char const* fn = "recur::solve_batched";

bool is_algorithm(tridiag_algorithm a) {
  for (auto const x : tridiag_algorithms)
    if (x == a) return true;
  return false;
}

void check_algorithm(char const* f, tridiag_algorithm a) {
  if (!is_algorithm(a))
    detail::bad_argument(f, fmt::format("algorithm = {} is not a tridiag_algorithm", static_cast<int>(a)));
}

// The shape of a call once checked: rhs_stride resolved (0 -> the layout's
// extent) and whether anything is to be computed.
struct checked_shape {
  layout lay;
  std::int64_t nrhs = 1;
  std::int64_t rhs_stride = 0;
  bool solve = false;  // n * count * nrhs > 0
};

// Layout, nrhs, rhs_stride and algorithm; no pointers.
checked_shape check_shape(char const* f, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                          tridiag_algorithm algorithm, std::size_t value_bytes) {
  detail::check_layout(f, lay, value_bytes);
  if (nrhs < 0) detail::bad_argument(f, fmt::format("nrhs = {} is negative", nrhs));
  check_algorithm(f, algorithm);
  checked_shape s;
  s.lay = lay;
  // Unused strides of a degenerate layout: made well defined for the backends.
  if (lay.n <= 1) s.lay.element_stride = 1;
  if (lay.count <= 1) s.lay.batch_stride = lay.n * s.lay.element_stride;
  s.nrhs = nrhs;
  s.solve = lay.n > 0 && lay.count > 0 && nrhs > 0;
  std::int64_t const extent = detail::layout_extent(lay);
  // With one set (or none) the stride is unused: keep it harmless.
  s.rhs_stride = rhs_stride == 0 || nrhs <= 1 ? extent : rhs_stride;
  if (s.solve && nrhs > 1) {
    if (rhs_stride != 0 && (rhs_stride == std::numeric_limits<std::int64_t>::min() ||
                            (rhs_stride < 0 ? -rhs_stride : rhs_stride) < extent))
      detail::bad_argument(f,
                           fmt::format("rhs_stride = {} is smaller in magnitude than the layout's extent {} "
                                       "(right-hand side sets would overlap)",
                                       rhs_stride, extent));
    // All sets' bytes must fit 64-bit offsets.
    std::int64_t const mag = s.rhs_stride < 0 ? -s.rhs_stride : s.rhs_stride;
    std::int64_t const lim =
        std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(value_bytes);
    if (mag > (lim - extent) / (nrhs - 1))
      detail::bad_argument(f, fmt::format("rhs_stride = {} with nrhs = {} overflows", rhs_stride, nrhs));
  }
  return s;
}

// The per-system outputs (count int32 values each, any of them null).
struct system_outputs {
  std::int32_t* info = nullptr;
  std::int32_t* pivoted = nullptr;
  std::int32_t* refinement_steps = nullptr;
};

struct pointers_checked {
  bool device = false;              // recur::cuda: also device-accessible
  void const* workspace = nullptr;  // tridiag_plan::run: its workspace and size
  std::size_t workspace_bytes = 0;
  detail::tridiag_checked_pointers* known = nullptr;  // tridiag_plan::run: not asked again
};

// Null, misaligned and overlapping pointers (and, for recur::cuda, host
// memory), for a checked shape.
template <class T>
detail::tridiag_problem<T> check_pointers(char const* f, T const* a, T const* b, T const* c, T const* d, T* x,
                                          system_outputs const& out, checked_shape const& s,
                                          pointers_checked const& how) {
  layout const& lay = s.lay;
  bool const any = lay.count > 0;
  std::int32_t* const info = out.info;
  detail::check_pointer(f, a, "a", s.solve);
  detail::check_pointer(f, b, "b", s.solve);
  detail::check_pointer(f, c, "c", s.solve);
  detail::check_pointer(f, d, "d", s.solve);
  detail::check_pointer(f, x, "x", s.solve);
  detail::check_pointer(f, info, "info", false);
  detail::check_pointer(f, out.pivoted, "pivoted", false);
  detail::check_pointer(f, out.refinement_steps, "refinement_steps", false);
  if (s.solve) {
    using detail::span_of;
    auto const sa = span_of(a, lay), sb = span_of(b, lay), sc = span_of(c, lay);
    auto const sd = span_of(d, lay, s.nrhs, s.rhs_stride), sx = span_of<T>(x, lay, s.nrhs, s.rhs_stride);
    if (sx.intersects(sa))
      detail::bad_argument(f, fmt::format("x = {} overlaps a = {}", fmt::ptr(x), fmt::ptr(a)));
    if (sx.intersects(sb))
      detail::bad_argument(f, fmt::format("x = {} overlaps b = {}", fmt::ptr(x), fmt::ptr(b)));
    if (sx.intersects(sc))
      detail::bad_argument(f, fmt::format("x = {} overlaps c = {}", fmt::ptr(x), fmt::ptr(c)));
    if (x != d && sx.intersects(sd))
      detail::bad_argument(
          f,
          fmt::format("x = {} overlaps d = {} without being equal to it (only x == d, in place, is allowed)",
                      fmt::ptr(x), fmt::ptr(d)));
    // Each output against the arrays and the outputs before it.
    std::pair<std::int32_t const*, char const*> const outputs[] = {
        {info, "info"}, {out.pivoted, "pivoted"}, {out.refinement_steps, "refinement_steps"}};
    for (std::size_t j = 0; j < std::size(outputs); ++j) {
      auto const [o, name] = outputs[j];
      if (!o) continue;
      auto const so = span_of(o, lay.count);
      for (auto const& [sp, p, other] : {std::tuple{sx, static_cast<void const*>(x), "x"},
                                         std::tuple{sa, static_cast<void const*>(a), "a"},
                                         std::tuple{sb, static_cast<void const*>(b), "b"},
                                         std::tuple{sc, static_cast<void const*>(c), "c"},
                                         std::tuple{sd, static_cast<void const*>(d), "d"}})
        if (so.intersects(sp))
          detail::bad_argument(f, fmt::format("{} = {} overlaps {} = {}", name, fmt::ptr(o), other, p));
      for (std::size_t i = 0; i < j; ++i)
        if (outputs[i].first && so.intersects(span_of(outputs[i].first, lay.count)))
          detail::bad_argument(f, fmt::format("{} = {} overlaps {} = {}", name, fmt::ptr(o),
                                              outputs[i].second, fmt::ptr(outputs[i].first)));
    }
    if (how.workspace) {
      detail::byte_span const sw{reinterpret_cast<std::uintptr_t>(how.workspace),
                                 reinterpret_cast<std::uintptr_t>(how.workspace) + how.workspace_bytes};
      auto const si = span_of(info, lay.count);
      for (auto const& [sp, name] : {std::pair{sa, "a"}, std::pair{sb, "b"}, std::pair{sc, "c"},
                                     std::pair{sd, "d"}, std::pair{sx, "x"}, std::pair{si, "info"}})
        if (sw.intersects(sp))
          detail::bad_argument(f, fmt::format("workspace = {} overlaps {}", how.workspace, name));
    }
  } else if (info && any && how.workspace) {
    detail::byte_span const sw{reinterpret_cast<std::uintptr_t>(how.workspace),
                               reinterpret_cast<std::uintptr_t>(how.workspace) + how.workspace_bytes};
    if (sw.intersects(detail::span_of(info, lay.count)))
      detail::bad_argument(f, fmt::format("workspace = {} overlaps info", how.workspace));
  }
  if (how.device) {
    std::unique_lock<std::mutex> lock;
    if (how.known) lock = std::unique_lock<std::mutex>(how.known->m);
    auto device = [&](void const* p, char const* name) {
      if (how.known) {
        auto& k = how.known->known;
        if (std::find(k.begin(), k.end(), p) != k.end()) return;
        detail::check_device_pointer(f, p, name);
        k[how.known->next++ % k.size()] = p;
      } else {
        detail::check_device_pointer(f, p, name);
      }
    };
    if (s.solve) {
      device(a, "a");
      device(b, "b");
      device(c, "c");
      device(d, "d");
      device(x, "x");
    }
    if (info && any) device(info, "info");
    if (out.pivoted && any) device(out.pivoted, "pivoted");
    if (out.refinement_steps && any) device(out.refinement_steps, "refinement_steps");
    if (how.workspace) device(how.workspace, "workspace");
  }
  detail::tridiag_problem<T> p;
  p.a = a;
  p.b = b;
  p.c = c;
  p.d = d;
  p.x = x;
  p.lay = lay;
  p.nrhs = s.nrhs;
  p.rhs_stride = s.rhs_stride;
  p.info = info;
  p.pivoted = out.pivoted;
  p.refinement_steps = out.refinement_steps;
  return p;
}

// Every check solve_batched makes, for either executor, before anything is
// written: the problem with the options copied (the algorithm as given),
// and whether there is anything to solve.
template <class Executor, class T>
detail::tridiag_problem<T> check_call(char const* f, Executor const& ex, T const* a, T const* b, T const* c,
                                      T const* d, T* x, layout const& lay, tridiag_options const& opt,
                                      bool& solve) {
  pointers_checked how;
  if constexpr (std::is_same_v<Executor, cuda>) {
    detail::require_cuda(f);
    how.device = true;
  } else {
    detail::check_threads(f, ex);
  }
  checked_shape const s = check_shape(f, lay, opt.nrhs, opt.rhs_stride, opt.algorithm, sizeof(T));
  detail::check_tridiag_options(f, lay, opt, sizeof(T));
  auto p = check_pointers(f, a, b, c, d, x, {opt.info, opt.pivoted, opt.refinement_steps}, s, how);
  p.algorithm = opt.algorithm;
  p.pivoting = opt.pivoting;
  p.periodic = opt.periodic;
  p.refinement = opt.refinement;
  p.max_refinement_steps = opt.max_refinement_steps;
  solve = s.solve;
  return p;
}

}  // namespace

template <class Executor, class T>
detail::tridiag_problem<T> detail::tridiag_checked(char const* f, Executor const& ex, T const* a, T const* b,
                                                   T const* c, T const* d, T* x, layout const& lay,
                                                   tridiag_options const& opt) {
  bool solve = false;
  return check_call(f, ex, a, b, c, d, x, lay, opt, solve);
}

template <real_value T>
void solve_batched(host const& ex, std::type_identity_t<T> const* a, std::type_identity_t<T> const* b,
                   std::type_identity_t<T> const* c, std::type_identity_t<T> const* d, T* x,
                   layout const& lay, tridiag_options const& opt) {
  bool solve = false;
  auto p = check_call(fn, ex, a, b, c, d, x, lay, opt, solve);
  if (!solve) {
    for (std::int32_t* const out : {opt.info, opt.pivoted, opt.refinement_steps})
      if (out)
        for (std::int64_t k = 0; k < lay.count; ++k) out[k] = 0;
    return;
  }
  p.algorithm = detail::tridiag_cpu_resolve(p.lay, sizeof(T), opt, ex.threads);
  detail::tridiag_cpu(p, ex.threads);
}

template <real_value T>
void solve_batched(cuda const& ex, std::type_identity_t<T> const* a, std::type_identity_t<T> const* b,
                   std::type_identity_t<T> const* c, std::type_identity_t<T> const* d, T* x,
                   layout const& lay, tridiag_options const& opt) {
  bool solve = false;
  auto p = check_call(fn, ex, a, b, c, d, x, lay, opt, solve);
  if (lay.count == 0) return;
  if (!solve) {
    // The backend zeroes the outputs on the stream (tridiag_backends.hpp).
    if (!opt.info && !opt.pivoted && !opt.refinement_steps) return;
    p.algorithm = tridiag_algorithm::thomas;  // runs every shape: nothing to refuse
    detail::tridiag_cuda(p, ex.stream, nullptr);
    return;
  }
  // The backend plans the solve once and refuses a shape the algorithm
  // cannot run before anything is enqueued (tridiag_cuda_resolve's message).
  detail::tridiag_cuda(p, ex.stream, nullptr);
}

char const* to_string(tridiag_algorithm a) noexcept {
  switch (a) {
    case tridiag_algorithm::automatic:
      return "auto";
    case tridiag_algorithm::thomas:
      return "thomas";
    case tridiag_algorithm::cr:
      return "cr";
    case tridiag_algorithm::pcr:
      return "pcr";
    case tridiag_algorithm::rd:
      return "rd";
    case tridiag_algorithm::cr_pcr:
      return "cr_pcr";
    case tridiag_algorithm::cr_rd:
      return "cr_rd";
    case tridiag_algorithm::cr_packed:
      return "cr_packed";
    case tridiag_algorithm::pscheme:
      return "pscheme";
    case tridiag_algorithm::thomas_pcr:
      return "thomas_pcr";
    case tridiag_algorithm::cr_split:
      return "cr_split";
    case tridiag_algorithm::bondeli:
      return "bondeli";
  }
  return "unknown";
}

std::optional<tridiag_algorithm> parse_tridiag_algorithm(std::string_view name) noexcept {
  if (name == "automatic") return tridiag_algorithm::automatic;
  for (auto const a : tridiag_algorithms)
    if (name == to_string(a)) return a;
  return std::nullopt;
}

template void solve_batched<float>(host const&, float const*, float const*, float const*, float const*,
                                   float*, layout const&, tridiag_options const&);
template void solve_batched<double>(host const&, double const*, double const*, double const*, double const*,
                                    double*, layout const&, tridiag_options const&);
template void solve_batched<float>(cuda const&, float const*, float const*, float const*, float const*,
                                   float*, layout const&, tridiag_options const&);
template void solve_batched<double>(cuda const&, double const*, double const*, double const*, double const*,
                                    double*, layout const&, tridiag_options const&);

namespace {
constexpr char const* resolve_fn = "recur::resolve_tridiag_algorithm";
}

template <real_value T>
tridiag_algorithm resolve_tridiag_algorithm(host const& ex, layout const& lay, tridiag_algorithm requested) {
  detail::check_threads(resolve_fn, ex);
  detail::check_layout(resolve_fn, lay, sizeof(T));
  check_algorithm(resolve_fn, requested);
  tridiag_options opt;
  opt.algorithm = requested;
  return detail::tridiag_cpu_resolve(lay, sizeof(T), opt, ex.threads);
}

template <real_value T>
tridiag_algorithm resolve_tridiag_algorithm(cuda const&, layout const& lay, tridiag_algorithm requested) {
  detail::require_cuda(resolve_fn);
  detail::check_layout(resolve_fn, lay, sizeof(T));
  check_algorithm(resolve_fn, requested);
  tridiag_options opt;
  opt.algorithm = requested;
  return detail::tridiag_cuda_resolve(lay, sizeof(T), opt);
}

template detail::tridiag_problem<float> detail::tridiag_checked(char const*, host const&, float const*,
                                                                float const*, float const*, float const*,
                                                                float*, layout const&,
                                                                tridiag_options const&);
template detail::tridiag_problem<double> detail::tridiag_checked(char const*, host const&, double const*,
                                                                 double const*, double const*, double const*,
                                                                 double*, layout const&,
                                                                 tridiag_options const&);
template detail::tridiag_problem<float> detail::tridiag_checked(char const*, cuda const&, float const*,
                                                                float const*, float const*, float const*,
                                                                float*, layout const&,
                                                                tridiag_options const&);
template detail::tridiag_problem<double> detail::tridiag_checked(char const*, cuda const&, double const*,
                                                                 double const*, double const*, double const*,
                                                                 double*, layout const&,
                                                                 tridiag_options const&);

template tridiag_algorithm resolve_tridiag_algorithm<float>(host const&, layout const&, tridiag_algorithm);
template tridiag_algorithm resolve_tridiag_algorithm<double>(host const&, layout const&, tridiag_algorithm);
template tridiag_algorithm resolve_tridiag_algorithm<float>(cuda const&, layout const&, tridiag_algorithm);
template tridiag_algorithm resolve_tridiag_algorithm<double>(cuda const&, layout const&, tridiag_algorithm);

// ------------------------------------------------------------------ plan ----

namespace {
constexpr char const* plan_fn = "recur::tridiag_plan";
}

template <class T>
tridiag_plan<T>::tridiag_plan(layout const& lay, tridiag_options const& opt) {
  detail::require_cuda(plan_fn);
  checked_shape const s = check_shape(plan_fn, lay, opt.nrhs, opt.rhs_stride, opt.algorithm, sizeof(T));
  detail::check_tridiag_options(plan_fn, lay, opt, sizeof(T));
  if (opt.pivoted || opt.refinement_steps)
    detail::bad_argument(plan_fn,
                         fmt::format("{} is not implemented on the GPU yet for tridiag_plan (run takes "
                                     "info only; solve_batched takes it)",
                                     opt.pivoted ? "pivoted" : "refinement_steps"));
  checked_ = std::make_shared<detail::tridiag_checked_pointers>();
  lay_ = lay;  // as given (shape() returns it); run() normalises it again
  opt_ = opt;
  opt_.info = nullptr;  // run() takes it
  opt_.rhs_stride = s.rhs_stride;
  if (s.solve) {
    detail::tridiag_problem<T> shape;
    shape.lay = s.lay;
    shape.nrhs = s.nrhs;
    shape.pivoting = opt.pivoting;
    shape.periodic = opt.periodic;
    shape.refinement = opt.refinement;
    tridiag_options resolve = opt;
    resolve.nrhs = s.nrhs;
    shape.algorithm = detail::tridiag_cuda_resolve(s.lay, sizeof(T), resolve);
    opt_.algorithm = shape.algorithm;
    workspace_bytes_ = detail::tridiag_cuda_workspace<T>(shape);
  } else {
    // Nothing to solve: run() only zeroes info; no kernel, no workspace.
    opt_.algorithm =
        opt.algorithm == tridiag_algorithm::automatic ? tridiag_algorithm::thomas : opt.algorithm;
    workspace_bytes_ = 0;
  }
}

template <class T>
void tridiag_plan<T>::run(cuda const& ex, T const* a, T const* b, T const* c, T const* d, T* x,
                          void* workspace, std::int32_t* info) const {
  constexpr char const* f = "recur::tridiag_plan::run";
  detail::require_cuda(f);
  // Checked by the constructor; this only normalises (no allocation).
  checked_shape const s = check_shape(f, lay_, opt_.nrhs, opt_.rhs_stride, opt_.algorithm, sizeof(T));
  if (workspace_bytes_ > 0 && !workspace)
    detail::bad_argument(f, fmt::format("workspace is null, but this plan needs workspace_size() = {} bytes",
                                        workspace_bytes_));
  constexpr std::size_t workspace_alignment = 16;
  if (workspace && reinterpret_cast<std::uintptr_t>(workspace) % workspace_alignment != 0)
    detail::bad_argument(
        f, fmt::format("workspace = {} is not aligned to {} bytes", workspace, workspace_alignment));
  pointers_checked how;
  how.device = true;
  how.workspace = workspace_bytes_ > 0 ? workspace : nullptr;
  how.workspace_bytes = workspace_bytes_;
  how.known = checked_.get();
  auto p = check_pointers(f, a, b, c, d, x, {info}, s, how);
  if (lay_.count == 0) return;
  if (!s.solve && !info) return;
  p.algorithm = opt_.algorithm;
  p.pivoting = opt_.pivoting;
  p.periodic = opt_.periodic;
  p.refinement = opt_.refinement;
  p.max_refinement_steps = opt_.max_refinement_steps;
  detail::tridiag_cuda(p, ex.stream, workspace_bytes_ > 0 ? workspace : nullptr);
}

template class tridiag_plan<float>;
template class tridiag_plan<double>;

}  // namespace recur
