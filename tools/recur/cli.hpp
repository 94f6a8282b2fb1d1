#pragma once
// What the recur program's commands share: exit statuses, errors that name
// the option or file they concern, the command table's entry type, the
// command line parser, numbers, and .npy arrays seen along one axis.
//
// Every error reaches the user as "recur CMD: SUBJECT: MESSAGE" on stderr,
// SUBJECT being the option (--coeffs) or the file (s.npy) it concerns, and
// the program exits non-zero: exit_usage for a wrong command line, exit_failed
// for an input or a run that failed. Nothing is written on an error.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <recur/error.hpp>
#include <recur/io/npy.hpp>
#include <recur/layout/layout.hpp>

namespace recur_cli {

// Exit statuses, the same for every command.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;     // an input, a check or a run failed
inline constexpr int exit_usage = 2;      // the command line is wrong
inline constexpr int exit_breakdown = 3;  // tridiag: a system broke down
inline constexpr int exit_nonfinite = 4;  // tridiag: a right-hand side holds NaN or Inf

// An error about one option or file.
struct cli_error : std::runtime_error {
  cli_error(int status, std::string subject, std::string const& message)
      : std::runtime_error(message), status(status), subject(std::move(subject)) {}
  int status;
  std::string subject;
};

[[noreturn]] inline void usage_error(std::string subject, std::string const& message) {
  throw cli_error(exit_usage, std::move(subject), message);
}
[[noreturn]] inline void input_error(std::string subject, std::string const& message) {
  throw cli_error(exit_failed, std::move(subject), message);
}

// --------------------------------------------------------- command line --

// Whether an option takes a value ("--axis 0" or "--axis=0") or is a flag
// ("--reverse").
enum class option_kind { value, flag };

// An option a command accepts: "--axis", its kind, optionally a short alias
// ("-o"). A command's table of these is the one place that says which of its
// options take a value; the parser decides by it alone.
struct option_spec {
  std::string_view name;
  option_kind kind = option_kind::value;
  std::string_view alias = {};
};

// A parsed command line: options by name, the other arguments in order.
class arguments {
 public:
  std::vector<std::string> positional;
  bool help = false;

  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The option's value, or nullopt when it was not given.
  std::optional<std::string> get(std::string_view name) const;
  std::string value_or(std::string_view name, std::string fallback) const;
  // The option's value as an integer (usage error naming it otherwise).
  std::int64_t integer(std::string_view name, std::int64_t fallback) const;
  // Exactly `count` positional arguments, called `names` in the usage error
  // about too few; the first one too many is named in the error about it.
  void expect_positional(std::size_t count, std::string_view names) const;

  void set(std::string name, std::string value) { values_.emplace_back(std::move(name), std::move(value)); }

 private:
  std::string const* find(std::string_view name) const;
  std::vector<std::pair<std::string, std::string>> values_;
};

// Parses args against the command's options (-h and --help are always
// accepted, as flags). An option that takes a value takes the word after it
// whatever that word is ("--b -0.5,1", as getopt and argparse do), or the
// text after '=' ("--b=-0.5,1"); a flag takes nothing and refuses "=". Of
// the other words, one that starts with '-' and is not a number (nor "-")
// is an option, the rest are positional. Unknown options, options given
// twice, a flag given "=value" and a value option that is the last word are
// usage errors naming the option.
arguments parse_arguments(std::span<char* const> args, std::span<option_spec const> options);

// One command of the program. main.cpp parses its command line with
// `accepts` and the options every command takes (--device, --help), and
// prints its help from these parts.
struct command {
  std::string_view name;
  std::string_view summary;      // one line, for `recur --help`
  std::string_view usage;        // what follows "usage: recur "
  std::string_view description;  // what it computes, its inputs and outputs
  std::string_view options;      // one line per option of its own, "  --axis N  ..."
  std::string_view example;
  std::string_view exit_status;  // lines "  3  meaning"; empty: the common ones (0, 1, 2)
  std::span<option_spec const> accepts;
  int (*run)(arguments const& args);
};

// ------------------------------------------------------------- numbers --

// A whole number in base 10 within int64; a finite or non-finite real
// (strtod's syntax). False when text is not one, entirely.
bool parse_integer(std::string_view text, std::int64_t& v);
bool parse_real(std::string_view text, double& v);
// "1,-0.5,2e-3": the items as typed (usage error naming `option` when one
// is empty or not a number).
std::vector<std::string> real_list(std::string const& text, std::string_view option);
std::vector<double> to_reals(std::vector<std::string> const& items);

// ----------------------------------------------------------- .npy files --

// read_npy, write_npy, their errors naming the file.
recur::npy_array load(std::string const& file);
void save(std::string const& file, recur::npy_array const& a);

std::string shape_string(std::vector<std::int64_t> const& shape);
bool is_float(recur::npy_dtype t);
// An input error naming `file` unless a holds float32 or float64.
void require_float(recur::npy_array const& a, std::string const& file);
// The elements of a float32 or float64 array converted to T.
template <class T>
std::vector<T> converted(recur::npy_array const& a) {
  std::vector<T> v;
  v.reserve(static_cast<std::size_t>(a.size()));
  if (a.dtype == recur::npy_dtype::f32)
    for (float const x : a.as<float>()) v.push_back(static_cast<T>(x));
  else
    for (double const x : a.as<double>()) v.push_back(static_cast<T>(x));
  return v;
}

// A C-order array seen as `outer` blocks of n x inner elements: axis `axis`
// of length n, the axes before it flattened into outer, those after it into
// inner. The sequences (or systems) along the axis are the outer * inner
// lanes, numbered in C order of the other axes.
struct axis_view {
  std::vector<std::int64_t> shape;
  std::size_t axis = 0;
  std::int64_t outer = 1, n = 1, inner = 1;

  std::int64_t lanes() const { return outer * inner; }
  // The shape without the axis (the lanes' shape).
  std::vector<std::int64_t> lane_shape() const;
  // Lane k's index over the other axes, "[2, 0]".
  std::string lane_index(std::int64_t k) const;
};

// The view along --axis `axis` (negative counts from the end); an input
// error naming --axis when it is out of range for `file`'s shape.
axis_view view_along(std::vector<std::int64_t> const& shape, std::int64_t axis, std::string const& file);

// Calls f(offset, layout, first_lane) for every block of lanes that one
// layout describes without copying: one call when the axis is the last
// (contiguous lanes) or the first (interleaved), one per outer index
// otherwise. offset is in elements; the block's lanes are first_lane ...
template <class F>
void for_each_block(axis_view const& v, F&& f) {
  if (v.inner == 1) {
    f(std::int64_t{0}, recur::layout::contiguous(v.n, v.outer), std::int64_t{0});
    return;
  }
  for (std::int64_t o = 0; o < v.outer; ++o)
    f(o * v.n * v.inner, recur::layout::interleaved(v.n, v.inner), o * v.inner);
}

// ---------------------------------------------- errors of the library --

// Which option or file gives the library argument `argument` ("b", "init",
// "layout"): an argument named in a recur::invalid_argument's message.
struct argument_name {
  std::string_view argument;
  std::string subject;
};

// The input error for a recur::invalid_argument: the library's function
// name dropped from its message, the subject the option or file of the
// argument the message starts with (the first of `names` that matches), or
// `fallback`.
[[noreturn]] void rethrow_named(recur::invalid_argument const& e, std::initializer_list<argument_name> names,
                                std::string const& fallback);

// Runs f, turning the recur::invalid_argument it throws into rethrow_named's
// error.
template <class F>
void naming_arguments(std::initializer_list<argument_name> names, std::string const& fallback, F&& f) {
  try {
    f();
  } catch (recur::invalid_argument const& e) {
    rethrow_named(e, names, fallback);
  }
}

}  // namespace recur_cli
