// recur tridiag: batched tridiagonal systems stored in .npy arrays, solved on
// the CPU or the GPU, with the library's pivoting, periodic and refinement
// options. Breakdown (a zero or non-finite pivot: under --pivoting auto and
// partial only in a matrix singular to working precision; under none also
// recursive doubling's own accuracy check, with rd and cr_rd) and
// right-hand sides holding NaN or Inf are reported per system, with their
// own exit statuses; x is written either way, NaN for those systems.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <recur/tridiag.hpp>

#include "commands.hpp"
#include "device.hpp"

namespace recur_cli {
namespace {

// ------------------------------------------------------- library calls --

// The options the command line sets: algorithm, pivoting, periodic,
// refinement.
template <class Ex, class T>
void call_solve(Ex const& ex, T const* dl, T const* d, T const* du, T const* rhs, T* x,
                recur::layout const& lay, recur::tridiag_options opt, std::int64_t nrhs,
                std::int64_t rhs_stride, std::int32_t* info) {
  opt.nrhs = nrhs;
  opt.rhs_stride = rhs_stride;
  opt.info = info;
  recur::solve_batched(ex, dl, d, du, rhs, x, lay, opt);
}

// ------------------------------------------------------------- options --

// The values --pivoting names (types.hpp lists the algorithms, not these).
constexpr recur::tridiag_pivoting pivotings[] = {
    recur::tridiag_pivoting::automatic, recur::tridiag_pivoting::none, recur::tridiag_pivoting::partial};

// "auto, thomas, cr, ...": the values as recur::to_string spells them.
template <class E, std::size_t N>
std::string names(E const (&values)[N]) {
  std::string s;
  for (E const v : values) s += fmt::format("{}{}", s.empty() ? "" : ", ", recur::to_string(v));
  return s;
}

// The value of `option` read by `parse` (recur::parse_tridiag_algorithm or
// _pivoting, which also take "automatic" for "auto"), `fallback` where it
// is not given; a usage error listing `values` where parse refuses it.
template <class E, std::size_t N, class Parse>
E named_option(arguments const& args, std::string_view option, E fallback, E const (&values)[N],
               Parse&& parse) {
  auto const text = args.get(option);
  if (!text) return fallback;
  if (auto const v = parse(*text)) return *v;
  usage_error(std::string(option), fmt::format("must be one of {}, not '{}'", names(values), *text));
}

// -------------------------------------------------------------- inputs --

struct problem {
  std::vector<std::string> files;  // DL D DU RHS
  recur::npy_array dl, d, du, rhs;
  axis_view v;            // the systems: D's shape along --axis
  std::int64_t nrhs = 1;  // right-hand sides per system
  std::int64_t size = 0;  // elements of D: the distance between right-hand side sets
};

problem read_problem(arguments const& args, std::int64_t axis) {
  problem p;
  p.files = args.positional;
  recur::npy_array* const arrays[] = {&p.dl, &p.d, &p.du, &p.rhs};
  for (int j = 0; j < 4; ++j) {
    *arrays[j] = load(p.files[j]);
    require_float(*arrays[j], p.files[j]);
  }
  for (int j : {0, 2, 3})
    if (arrays[j]->dtype != p.d.dtype)
      input_error(p.files[j], fmt::format("holds {} but {} (D) holds {}; all four must have one dtype",
                                          recur::npy_dtype_name(arrays[j]->dtype), p.files[1],
                                          recur::npy_dtype_name(p.d.dtype)));
  for (int j : {0, 2})
    if (arrays[j]->shape != p.d.shape)
      input_error(p.files[j],
                  fmt::format("has shape {} but {} (D) has {}; the diagonals must have one shape",
                              shape_string(arrays[j]->shape), p.files[1], shape_string(p.d.shape)));
  p.v = view_along(p.d.shape, axis, p.files[1]);
  if (p.rhs.shape != p.d.shape) {
    bool const stacked = p.rhs.shape.size() == p.d.shape.size() + 1 &&
                         std::equal(p.d.shape.begin(), p.d.shape.end(), p.rhs.shape.begin() + 1);
    if (!stacked)
      input_error(p.files[3], fmt::format("has shape {}; with diagonals of shape {} it must be {} or (k, {}",
                                          shape_string(p.rhs.shape), shape_string(p.d.shape),
                                          shape_string(p.d.shape), shape_string(p.d.shape).substr(1)));
    p.nrhs = p.rhs.shape[0];
  }
  p.size = p.d.size();
  return p;
}

// A right-hand side holding NaN or Inf: its system, set and first such
// element along the axis.
struct bad_rhs {
  std::int64_t lane, set, index;
  double value;
};

// Element i of lane k's set r, in C order.
std::int64_t element(problem const& p, std::int64_t k, std::int64_t r, std::int64_t i) {
  std::int64_t const o = k / p.v.inner, j = k % p.v.inner;
  return r * p.size + (o * p.v.n + i) * p.v.inner + j;
}

// ---------------------------------------------------------------- solve --

struct solution {
  recur::npy_array x;
  std::vector<std::int32_t> info;  // per system, in C order of the other axes
  std::vector<bad_rhs> bad;
};

template <class T>
solution solve(device_kind kind, problem const& p, recur::tridiag_options const& opt) {
  solution s;
  std::span<T const> const rhs = p.rhs.as<T>();
  for (std::int64_t k = 0; k < p.v.lanes(); ++k)
    for (std::int64_t r = 0; r < p.nrhs; ++r)
      for (std::int64_t i = 0; i < p.v.n; ++i)
        if (T const value = rhs[static_cast<std::size_t>(element(p, k, r, i))]; !std::isfinite(value)) {
          s.bad.push_back({k, r, i, static_cast<double>(value)});
          break;
        }

  std::vector<T> x(rhs.size());
  s.info.assign(static_cast<std::size_t>(p.v.lanes()), 0);
  {
    device dev(kind);
    T const *const dl = dev.input(p.dl.as<T>()), *const d = dev.input(p.d.as<T>()),
                   *const du = dev.input(p.du.as<T>()), *const b = dev.input(rhs);
    T* const dx = dev.output(std::span<T>(x));
    std::int32_t* const info = dev.output(std::span<std::int32_t>(s.info));
    std::int64_t const rhs_stride = p.nrhs > 1 ? p.size : 0;
    for_each_block(p.v, [&](std::int64_t offset, recur::layout const& lay, std::int64_t first_lane) {
      dev.run([&](auto const& ex) {
        call_solve(ex, dl + offset, d + offset, du + offset, b + offset, dx + offset, lay, opt, p.nrhs,
                   rhs_stride, info + first_lane);
      });
    });
    dev.fetch();
  }
  // A right-hand side with NaN or Inf gives no solution: its x is NaN, as
  // for a breakdown, whatever the arithmetic made of it.
  for (bad_rhs const& e : s.bad)
    for (std::int64_t i = 0; i < p.v.n; ++i)
      x[static_cast<std::size_t>(element(p, e.lane, e.set, i))] = std::numeric_limits<T>::quiet_NaN();
  s.x = recur::make_npy<T>(p.rhs.shape, std::span<T const>(x));
  return s;
}

std::string system_name(axis_view const& v, std::int64_t k) {
  return v.lane_shape().empty() ? "the system" : "system " + v.lane_index(k);
}

// What info = row > 0 means for what ran (doc/tridiag.md, "Breakdown").
// Under --pivoting auto and partial the system's last solve pivoted, and
// partial pivoting meets an unusable pivot only in a matrix singular to
// working precision; for a periodic system that matrix is the split's, not
// A, so the message does not call A singular.
// Under none, RD (rd, and cr_rd on its reduced system) refuses a result
// that fails its accuracy check, with the row that failed, far more often
// than it meets an unusable divisor; the others name an unusable pivot. A
// periodic system's row n also says that the Sherman-Morrison correction's
// divisor is unusable.
std::string breakdown_cause(recur::tridiag_options const& opt, std::int32_t row, std::int64_t n) {
  bool const rd =
      opt.algorithm == recur::tridiag_algorithm::rd || opt.algorithm == recur::tridiag_algorithm::cr_rd;
  bool const pivots = opt.pivoting != recur::tridiag_pivoting::none;
  std::string cause = "a zero or non-finite pivot";
  if (pivots && !opt.periodic) cause += " with partial pivoting: the matrix is singular to working precision";
  if (rd && !pivots)
    cause = "recursive doubling is unstable for this system (or a divisor is zero or not finite)";
  if (opt.periodic && row == n) cause += ", or a zero or non-finite divisor in the periodic correction";
  return cause;
}

// Prints the breakdowns and bad right-hand sides (20 of each at most) and
// returns the exit status.
int report(problem const& p, solution const& s, std::string const& output, recur::tridiag_options const& opt,
           device_kind kind) {
  constexpr std::int64_t shown = 20;
  std::int64_t broke = 0;
  for (std::int64_t k = 0; k < p.v.lanes(); ++k) {
    std::int32_t const row = s.info[static_cast<std::size_t>(k)];
    if (row != 0 && ++broke <= shown)
      fmt::print(stderr,
                 "recur tridiag: {}: broke down at index {} along axis {} (info {}: {}); its x is NaN\n",
                 system_name(p.v, k), row - 1, p.v.axis, row, breakdown_cause(opt, row, p.v.n));
  }
  if (broke > shown) fmt::print(stderr, "recur tridiag: ... and {} more systems broke down\n", broke - shown);
  for (std::size_t e = 0; e < s.bad.size() && e < shown; ++e) {
    bad_rhs const& b = s.bad[e];
    std::string const set = p.nrhs > 1 ? fmt::format(", right-hand side {}", b.set) : "";
    fmt::print(stderr, "recur tridiag: {}: {}{}: element {} along axis {} is {}; its x is NaN\n", p.files[3],
               system_name(p.v, b.lane), set, b.index, p.v.axis, b.value);
  }
  std::int64_t const bad = static_cast<std::int64_t>(s.bad.size());
  if (bad > shown)
    fmt::print(stderr, "recur tridiag: {}: ... and {} more right-hand sides hold NaN or Inf\n", p.files[3],
               bad - shown);
  if (!broke && !bad) return exit_ok;
  fmt::print(stderr,
             "recur tridiag: {}: written; {} of {} systems broke down, {} of {} right-hand sides hold NaN or "
             "Inf ({} on the {})\n",
             output, broke, p.v.lanes(), bad, p.v.lanes() * p.nrhs, recur::to_string(opt.algorithm),
             kind == device_kind::gpu ? "gpu" : "cpu");
  return broke ? exit_breakdown : exit_nonfinite;
}

int run_tridiag(arguments const& args) {
  args.expect_positional(4, "DL D DU RHS");
  auto const output = args.get("--output");
  if (!output) usage_error("--output", "is required (-o X: where to write the solution)");
  recur::tridiag_options opt;
  opt.algorithm = named_option(args, "--algorithm", opt.algorithm, recur::tridiag_algorithms,
                               recur::parse_tridiag_algorithm);
  opt.pivoting = named_option(args, "--pivoting", opt.pivoting, pivotings, recur::parse_tridiag_pivoting);
  opt.periodic = args.has("--periodic");
  if (args.has("--refine")) opt.refinement = recur::tridiag_refinement::mixed;
  std::int64_t const axis = args.integer("--axis", -1);
  device_kind const kind = select_device(args);

  problem const p = read_problem(args, axis);
  if (opt.refinement == recur::tridiag_refinement::mixed && p.d.dtype != recur::npy_dtype::f64)
    input_error("--refine",
                fmt::format("needs float64 arrays; {} holds {} (refinement factors in float32 and "
                            "corrects in float64)",
                            p.files[1], recur::npy_dtype_name(p.d.dtype)));
  solution s;
  naming_arguments({{"algorithm", "--algorithm"},
                    {"pivoting", "--pivoting"},
                    {"periodic", "--periodic"},
                    {"refinement", "--refine"},
                    {"nrhs", p.files[3]},
                    {"d", p.files[3]},
                    {"a", p.files[0]},
                    {"b", p.files[1]},
                    {"c", p.files[2]}},
                   p.files[1], [&] {
                     s = p.d.dtype == recur::npy_dtype::f32 ? solve<float>(kind, p, opt)
                                                            : solve<double>(kind, p, opt);
                   });
  save(*output, s.x);
  return report(p, s, *output, opt, kind);
}

constexpr option_spec tridiag_options[] = {{"--output", option_kind::value, "-o"},
                                           {"--algorithm"},
                                           {"--axis"},
                                           {"--pivoting"},
                                           {"--periodic", option_kind::flag},
                                           {"--refine", option_kind::flag}};

// `head` ("  --algorithm NAME    ") and the words of `text` after it, in
// lines of at most 98 columns, the later ones indented as far as the head.
std::string wrapped(std::string_view head, std::string_view text) {
  constexpr std::size_t width = 98;
  std::string out(head);
  std::size_t column = head.size(), start = 0;
  bool line_empty = true;
  while (start < text.size()) {
    std::size_t const space = std::min(text.find(' ', start), text.size());
    std::string_view const word = text.substr(start, space - start);
    start = space + 1;
    if (word.empty()) continue;
    if (!line_empty && column + 1 + word.size() > width) {
      out += '\n' + std::string(head.size(), ' ');
      column = head.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out + '\n';
}

// The options' help; the algorithms' names come from
// recur::tridiag_algorithms, the one list of them.
std::string_view options_help() {
  static std::string const text =
      "  -o, --output X      where to write the solution (required)\n" +
      wrapped(
          "  --algorithm NAME    ",
          fmt::format("one of {}; auto (the default) chooses one for the shape, dtype and device. A named "
                      "algorithm that the device does not run for the shape is an error saying why",
                      names(recur::tridiag_algorithms))) +
      "  --pivoting P        auto (the default above: no pivoting where the stability test passes,\n"
      "                      partial pivoting where it does not), none (the algorithm's own\n"
      "                      elimination, untested: accurate for diagonally dominant and symmetric\n"
      "                      positive definite systems, possibly far off for others with no\n"
      "                      breakdown reported), or partial (every system, as LAPACK's gtsv;\n"
      "                      --algorithm auto or thomas). --algorithm and --pivoting also take\n"
      "                      automatic for auto\n"
      "  --periodic          periodic (cyclic) systems, n >= 3, solved by a Sherman-Morrison split\n"
      "                      whose plain solves follow --pivoting (--algorithm auto or thomas);\n"
      "                      accurate to rounding on diagonally dominant systems, and on others\n"
      "                      unless the split's matrix is nearly singular (doc/tridiag.md)\n"
      "  --refine            float64 systems factored in float32 (as --pivoting and --periodic say)\n"
      "                      and corrected with float64 residuals until the backward error is what a\n"
      "                      float64 solve reaches; a system not there within 10 corrections, or\n"
      "                      whose float32 factors break down, is solved in float64 (--algorithm\n"
      "                      auto or thomas)\n"
      "  --axis N            the axis the systems lie along, negative counting from the end\n"
      "                      (default -1)\n";
  return text;
}

}  // namespace

command const tridiag_command{
    "tridiag",
    "solve batched tridiagonal systems stored in .npy arrays",
    "tridiag [--algorithm NAME] [--pivoting P] [--periodic] [--refine] [--axis N] [--device D] DL D DU RHS "
    "-o X",
    "Solves the systems dl_i x_(i-1) + d_i x_i + du_i x_(i+1) = rhs_i stored in .npy files (float32\n"
    "or float64, C order, all of one dtype). Each system lies along axis N and the other axes number\n"
    "the systems: DL, D and DU of shape (..., n) hold prod(...) systems of n unknowns with the\n"
    "default N = -1; dl[0] and du[n-1] of each system are not read (with --periodic they are the\n"
    "corners: dl[0] multiplies x[n-1] in row 0, du[n-1] multiplies x[0] in row n-1). RHS has their\n"
    "shape, or (k, ...) for k right-hand sides per system (N still counts D's axes). X is written\n"
    "with RHS's shape. By default each system is solved without pivoting where a stability test\n"
    "passes (usable pivots, small growth in its LU factors) and with partial pivoting, as LAPACK's\n"
    "gtsv, where it does not. A system breaks down where its elimination meets a zero or non-finite\n"
    "pivot: by default and with --pivoting partial only a system singular to working precision; with\n"
    "--pivoting none any system whose elimination meets one, and with rd and cr_rd also one for\n"
    "which recursive doubling is unstable. A right-hand side holding NaN or Inf has no solution.\n"
    "Both are listed on stderr, their x is NaN, and the exit status says so. The CPU and the GPU run\n"
    "every option with the guarantees said here; doc/tridiag.md says how each device runs them and\n"
    "what that costs.",
    options_help(),
    "recur tridiag --axis 0 dl.npy d.npy du.npy rhs.npy -o x.npy",
    "  0  solved, X written\n"
    "  1  an input or the run failed; nothing written\n"
    "  2  bad command line\n"
    "  3  some system broke down: X written, NaN for those systems\n"
    "  4  no system broke down, but some right-hand side holds NaN or Inf: X written, NaN for\n"
    "     those right-hand sides\n",
    tridiag_options,
    run_tridiag,
};

}  // namespace recur_cli
