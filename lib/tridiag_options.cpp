// tridiag_options' pivoting, periodic and refinement fields: names, parsing
// and the argument checks (lib/tridiag_options.hpp).
#include "tridiag_options.hpp"

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "detail/arg_check.hpp"

namespace recur {

char const* to_string(tridiag_pivoting p) noexcept {
  switch (p) {
    case tridiag_pivoting::automatic:
      return "auto";
    case tridiag_pivoting::none:
      return "none";
    case tridiag_pivoting::partial:
      return "partial";
  }
  return "unknown";
}

char const* to_string(tridiag_refinement r) noexcept {
  switch (r) {
    case tridiag_refinement::none:
      return "none";
    case tridiag_refinement::mixed:
      return "mixed";
  }
  return "unknown";
}

std::optional<tridiag_pivoting> parse_tridiag_pivoting(std::string_view name) noexcept {
  if (name == "automatic") return tridiag_pivoting::automatic;
  for (auto const p : {tridiag_pivoting::automatic, tridiag_pivoting::none, tridiag_pivoting::partial})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

namespace detail {

void check_tridiag_options(char const* fn, layout const& lay, tridiag_options const& opt,
                           std::size_t value_bytes) {
  if (std::string_view(to_string(opt.pivoting)) == "unknown")
    bad_argument(fn, fmt::format("pivoting = {} is not a tridiag_pivoting", static_cast<int>(opt.pivoting)));
  if (std::string_view(to_string(opt.refinement)) == "unknown")
    bad_argument(
        fn, fmt::format("refinement = {} is not a tridiag_refinement", static_cast<int>(opt.refinement)));
  if (opt.max_refinement_steps < 0)
    bad_argument(fn, fmt::format("max_refinement_steps = {} is negative", opt.max_refinement_steps));
  bool const mixed = opt.refinement == tridiag_refinement::mixed;
  if (mixed && value_bytes != sizeof(double))
    bad_argument(fn,
                 "refinement = mixed needs double-precision systems (these are float): it factors in float "
                 "and corrects in double");
  if (opt.periodic && (lay.n == 1 || lay.n == 2))
    bad_argument(fn, fmt::format("periodic = true needs n >= 3 (n = {}); a periodic system of 1 or 2 "
                                 "unknowns is a plain one with a[0] and c[n-1] added to its other entries",
                                 lay.n));
  bool const thomas =
      opt.algorithm == tridiag_algorithm::automatic || opt.algorithm == tridiag_algorithm::thomas;
  if (thomas) return;
  auto const needs_thomas = [&](std::string const& option, char const* why) {
    bad_argument(fn, fmt::format("{} needs algorithm = auto or thomas (algorithm = {}): {}", option,
                                 to_string(opt.algorithm), why));
  };
  if (opt.pivoting == tridiag_pivoting::partial)
    needs_thomas("pivoting = partial", "the named parallel algorithms do not pivot");
  if (opt.periodic) needs_thomas("periodic = true", "the periodic split wraps the Thomas factorisation");
  if (mixed) needs_thomas("refinement = mixed", "the refinement loop wraps the Thomas factorisation");
}

}  // namespace detail
}  // namespace recur
