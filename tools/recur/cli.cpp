// The shared parts of the recur program (cli.hpp): the parser, numbers,
// .npy files and the translation of the library's errors.
#include "cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace recur_cli {

// --------------------------------------------------------- command line --

std::string const* arguments::find(std::string_view name) const {
  for (auto const& [n, v] : values_)
    if (n == name) return &v;
  return nullptr;
}

std::optional<std::string> arguments::get(std::string_view name) const {
  if (std::string const* v = find(name)) return *v;
  return std::nullopt;
}

std::string arguments::value_or(std::string_view name, std::string fallback) const {
  std::string const* v = find(name);
  return v ? *v : std::move(fallback);
}

std::int64_t arguments::integer(std::string_view name, std::int64_t fallback) const {
  std::string const* v = find(name);
  if (!v) return fallback;
  std::int64_t r = 0;
  if (!parse_integer(*v, r)) usage_error(std::string(name), fmt::format("needs an integer, not '{}'", *v));
  return r;
}

void arguments::expect_positional(std::size_t count, std::string_view names) const {
  if (positional.size() > count) usage_error(positional[count], "unexpected argument");
  if (positional.size() < count)
    usage_error(std::string(names),
                fmt::format("{} {} needed, {} given", count, count == 1 ? "argument is" : "arguments are",
                            positional.size()));
}

arguments parse_arguments(std::span<char* const> args, std::span<option_spec const> options) {
  // Outside an option's value, "-" and negative numbers are positional,
  // anything else starting with '-' an option.
  auto is_option = [](std::string_view arg) {
    double number = 0;
    return arg.size() >= 2 && arg[0] == '-' && !parse_real(arg, number);
  };
  arguments out;
  std::vector<std::string_view> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (!is_option(arg)) {
      out.positional.emplace_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    std::optional<std::string_view> inline_value;  // --axis=0
    if (std::size_t const eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    option_spec const* spec = nullptr;
    for (option_spec const& o : options)
      if (arg == o.name || (!o.alias.empty() && arg == o.alias)) spec = &o;
    if (!spec) usage_error(std::string(arg), "unknown option");
    std::string const name(spec->name);
    for (std::string_view const s : seen)
      if (s == spec->name) usage_error(name, "given twice");
    seen.push_back(spec->name);
    if (spec->kind == option_kind::flag) {
      if (inline_value) usage_error(name, "takes no value");
      out.set(name, "");
    } else if (inline_value) {
      out.set(name, std::string(*inline_value));
    } else {
      // The next word is the value, even one that starts with '-'.
      if (i + 1 >= args.size()) usage_error(name, "needs a value, and no word follows it");
      out.set(name, args[++i]);
    }
  }
  return out;
}

// ------------------------------------------------------------- numbers --

bool parse_integer(std::string_view text, std::int64_t& v) {
  std::string const item(text);
  if (item.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long const r = std::strtoll(item.c_str(), &end, 10);
  if (end != item.c_str() + item.size() || errno == ERANGE) return false;
  v = r;
  return true;
}

bool parse_real(std::string_view text, double& v) {
  std::string const item(text);
  if (item.empty()) return false;
  char* end = nullptr;
  double const r = std::strtod(item.c_str(), &end);
  if (end != item.c_str() + item.size()) return false;
  v = r;
  return true;
}

std::vector<std::string> real_list(std::string const& text, std::string_view option) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t const comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    double v = 0;
    if (!parse_real(items.back(), v))
      usage_error(std::string(option), fmt::format("needs numbers separated by commas, not '{}'", text));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::vector<double> to_reals(std::vector<std::string> const& items) {
  std::vector<double> v;
  for (auto const& s : items) v.push_back(std::strtod(s.c_str(), nullptr));
  return v;
}

// ----------------------------------------------------------- .npy files --

namespace {

// The npy library's message without its "npy: " prefix and " (in 'path')"
// suffix: the subject names the file already.
std::string npy_message(std::string m, std::string const& file) {
  if (m.starts_with("npy: ")) m.erase(0, 5);
  std::string const in = " (in '" + file + "')";
  if (m.ends_with(in)) m.erase(m.size() - in.size());
  return m;
}

}  // namespace

recur::npy_array load(std::string const& file) {
  try {
    return recur::read_npy(file);
  } catch (recur::error const& e) {
    input_error(file, npy_message(e.what(), file));
  }
}

void save(std::string const& file, recur::npy_array const& a) {
  try {
    recur::write_npy(file, a);
  } catch (recur::error const& e) {
    input_error(file, npy_message(e.what(), file));
  }
}

std::string shape_string(std::vector<std::int64_t> const& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

bool is_float(recur::npy_dtype t) { return t == recur::npy_dtype::f32 || t == recur::npy_dtype::f64; }

void require_float(recur::npy_array const& a, std::string const& file) {
  if (!is_float(a.dtype))
    input_error(file, fmt::format("holds {}; float32 or float64 is needed (convert it first, e.g. with "
                                  "numpy's x.astype(np.float32))",
                                  recur::npy_dtype_name(a.dtype)));
}

std::vector<std::int64_t> axis_view::lane_shape() const {
  std::vector<std::int64_t> s = shape;
  s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
  return s;
}

std::string axis_view::lane_index(std::int64_t k) const {
  std::vector<std::int64_t> const s = lane_shape();
  std::vector<std::int64_t> idx(s.size());
  for (std::size_t i = s.size(); i-- > 0;) {
    idx[i] = k % s[i];
    k /= s[i];
  }
  std::string r = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) r += fmt::format("{}{}", i ? ", " : "", idx[i]);
  return r + "]";
}

axis_view view_along(std::vector<std::int64_t> const& shape, std::int64_t axis, std::string const& file) {
  std::int64_t const dims = static_cast<std::int64_t>(shape.size());
  if (dims == 0) input_error(file, "is a scalar; an array with an axis to run along is needed");
  if (axis < -dims || axis >= dims)
    input_error("--axis", fmt::format("{} is out of range for {} of shape {} ({} axes)", axis, file,
                                      shape_string(shape), dims));
  axis_view v;
  v.shape = shape;
  v.axis = static_cast<std::size_t>(axis < 0 ? axis + dims : axis);
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < v.axis) v.outer *= shape[i];
    if (i > v.axis) v.inner *= shape[i];
  }
  v.n = shape[v.axis];
  return v;
}

// ---------------------------------------------- errors of the library --

void rethrow_named(recur::invalid_argument const& e, std::initializer_list<argument_name> names,
                   std::string const& fallback) {
  std::string m = e.what();
  // "recur::lfilter: a[0] = 0: ..." -> "a[0] = 0: ..."
  if (m.starts_with("recur::"))
    if (std::size_t const colon = m.find(": "); colon != std::string::npos) m.erase(0, colon + 2);
  for (argument_name const& n : names) {
    if (!m.starts_with(n.argument)) continue;
    char const next = m.size() > n.argument.size() ? m[n.argument.size()] : ' ';
    if (next == ' ' || next == '[' || next == '.') input_error(n.subject, m);
  }
  input_error(fallback, m);
}

}  // namespace recur_cli
