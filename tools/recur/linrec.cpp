// recur linrec: the first-order linear recurrence w_i = s_i w_(i-1) + t_i
// along one axis of .npy arrays, on the CPU or the GPU.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <recur/linrec.hpp>

#include "commands.hpp"
#include "device.hpp"

namespace recur_cli {
namespace {

// ------------------------------------------------------- library calls --

// init: one value per sequence of the block, or null for init_value.
template <class Ex, class T>
void call_linrec(Ex const& ex, recur::operand<T> s, recur::operand<T> t, T* w, recur::layout const& lay,
                 T const* init, T init_value, bool reverse) {
  recur::linrec_options<T> opt;
  opt.dir = reverse ? recur::direction::reverse : recur::direction::forward;
  opt.init = init;
  opt.init_value = init_value;
  recur::linrec(ex, s, t, w, lay, opt);
}

// ------------------------------------------------------------ operands --

// S, T or --init as given: a number, or a .npy array read from `name`.
struct value_or_array {
  std::string name;
  double value = 0;
  std::optional<recur::npy_array> array;
};

value_or_array read_value_or_array(std::string const& text) {
  value_or_array v;
  v.name = text;
  if (!parse_real(text, v.value)) {
    v.array = load(text);
    require_float(*v.array, text);
  }
  return v;
}

// An operand in the executor's memory: the array's elements converted to T
// (staged on `dev`), or the number.
template <class T>
struct staged_operand {
  std::vector<T> host;
  T const* data = nullptr;
  T value{};

  staged_operand(device& dev, value_or_array const& v) : value(static_cast<T>(v.value)) {
    if (!v.array) return;
    host = converted<T>(*v.array);
    data = dev.input(std::span<T const>(host));
  }
  // The operand of the block at `offset`.
  recur::operand<T> at(std::int64_t offset) const {
    return data ? recur::operand<T>(data + offset) : recur::operand<T>(value);
  }
};

template <class T>
recur::npy_array solve(device_kind kind, axis_view const& v, value_or_array const& s_in,
                       value_or_array const& t_in, value_or_array const& init_in, bool reverse) {
  device dev(kind);
  staged_operand<T> const s(dev, s_in), t(dev, t_in), init(dev, init_in);
  std::vector<T> w(static_cast<std::size_t>(v.outer * v.n * v.inner));
  T* const dw = dev.output(std::span<T>(w));
  for_each_block(v, [&](std::int64_t offset, recur::layout const& lay, std::int64_t first_lane) {
    dev.run([&](auto const& ex) {
      call_linrec(ex, s.at(offset), t.at(offset), dw + offset, lay,
                  init.data ? init.data + first_lane : nullptr, init.value, reverse);
    });
  });
  dev.fetch();
  return recur::make_npy<T>(v.shape, std::span<T const>(w));
}

int run_linrec(arguments const& args) {
  args.expect_positional(3, "S T OUT");
  std::int64_t const axis = args.integer("--axis", -1);
  bool const reverse = args.has("--reverse");
  device_kind const kind = select_device(args);

  value_or_array const s = read_value_or_array(args.positional[0]);
  value_or_array const t = read_value_or_array(args.positional[1]);
  if (!s.array && !t.array)
    usage_error("S T", "both are numbers; at least one must be a .npy array (it gives the shape)");
  value_or_array const& shaped = s.array ? s : t;
  recur::npy_array const& a = *shaped.array;
  if (s.array && t.array) {
    if (t.array->dtype != a.dtype)
      input_error(t.name,
                  fmt::format("holds {} but {} holds {}; S and T must have one dtype",
                              recur::npy_dtype_name(t.array->dtype), s.name, recur::npy_dtype_name(a.dtype)));
    if (t.array->shape != a.shape)
      input_error(t.name, fmt::format("has shape {} but {} has {}; S and T must have one shape",
                                      shape_string(t.array->shape), s.name, shape_string(a.shape)));
  }
  axis_view const v = view_along(a.shape, axis, shaped.name);

  value_or_array init;
  if (auto const text = args.get("--init")) {
    init = read_value_or_array(*text);
    if (init.array && init.array->shape != v.lane_shape())
      input_error("--init", fmt::format("{} has shape {}; one value per sequence, shape {}, is needed", *text,
                                        shape_string(init.array->shape), shape_string(v.lane_shape())));
  }

  recur::npy_array out;
  std::string const& fallback = shaped.name;
  naming_arguments({{"s", s.name}, {"t", t.name}, {"init", "--init"}}, fallback, [&] {
    out = a.dtype == recur::npy_dtype::f32 ? solve<float>(kind, v, s, t, init, reverse)
                                           : solve<double>(kind, v, s, t, init, reverse);
  });
  save(args.positional[2], out);
  return exit_ok;
}

constexpr option_spec linrec_options[] = {{"--init"}, {"--reverse", option_kind::flag}, {"--axis"}};

}  // namespace

command const linrec_command{
    "linrec",
    "w_i = s_i w_(i-1) + t_i along one axis of .npy arrays",
    "linrec [--init V] [--reverse] [--axis N] [--device D] S T OUT",
    "The first-order linear recurrence w_i = s_i w_(i-1) + t_i along axis N, from w_(-1) = init;\n"
    "with --reverse w_i = s_i w_(i+1) + t_i from w_n = init, i running down. S and T are each a\n"
    ".npy array (float32 or float64, C order) or a number shared by every step; at least one is an\n"
    "array, and two arrays have one shape and dtype. OUT gets their shape and dtype. The results\n"
    "agree with the sequential recurrence to rounding (the parallel algorithms reassociate the\n"
    "products) and are bitwise the same from run to run on one device.",
    "  --init V            the initial state: a number, or a .npy array of one value per sequence\n"
    "                      (the shape of S or T without the axis); default 0\n"
    "  --reverse           run from the last element to the first\n"
    "  --axis N            the axis to run along, negative counting from the end (default -1)\n",
    "recur linrec --reverse --axis 0 0.9 t.npy w.npy",
    "",
    linrec_options,
    run_linrec,
};

}  // namespace recur_cli
