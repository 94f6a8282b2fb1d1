// recur filter and recur sosfilt: scipy.signal.lfilter and sosfilt along
// one axis of a .npy array, on the CPU or the GPU.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <recur/filter.hpp>

#include "commands.hpp"
#include "device.hpp"

namespace recur_cli {
namespace {

// ------------------------------------------------------- library calls --

template <class Ex, class T>
void call_lfilter(Ex const& ex, std::vector<T> const& b, std::vector<T> const& a, T const* x, T* y,
                  recur::layout const& lay) {
  recur::lfilter(ex, std::span<T const>(b), std::span<T const>(a), x, y, lay);
}

template <class Ex, class T>
void call_sosfilt(Ex const& ex, std::vector<T> const& sos, T const* x, T* y, recur::layout const& lay) {
  recur::sosfilt(ex, std::span<T const>(sos), x, y, lay);
}

// -------------------------------------------------------------- filter --

template <class T>
recur::npy_array filter_array(device_kind kind, recur::npy_array const& in, axis_view const& v,
                              std::vector<double> const& bd, std::vector<double> const& ad) {
  std::vector<T> const b(bd.begin(), bd.end()), a(ad.begin(), ad.end());
  std::vector<T> const y = map_lanes<T>(
      kind, v, in.as<T>(),
      [&](auto const& ex, T const* x, T* out, auto const& lay) { call_lfilter(ex, b, a, x, out, lay); });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

int run_filter(arguments const& args) {
  args.expect_positional(2, "IN OUT");
  std::string const& in_file = args.positional[0];
  auto const b_text = args.get("--b");
  if (!b_text) usage_error("--b", "is required (the numerator coefficients B0,B1,...)");
  std::vector<double> const b = to_reals(real_list(*b_text, "--b"));
  std::vector<double> const a = to_reals(real_list(args.value_or("--a", "1"), "--a"));
  std::int64_t const axis = args.integer("--axis", -1);
  std::int64_t const order = static_cast<std::int64_t>(std::max(a.size(), b.size())) - 1;
  std::string const unsupported =
      order > gpu_max_order
          ? fmt::format("the GPU filters orders 0 to {}; --b and --a give order {}", gpu_max_order, order)
          : std::string();
  device_kind const kind = select_device(args, unsupported);

  recur::npy_array const in = load(in_file);
  require_float(in, in_file);
  axis_view const v = view_along(in.shape, axis, in_file);
  recur::npy_array out;
  naming_arguments({{"b", "--b"}, {"a", "--a"}}, in_file, [&] {
    out = in.dtype == recur::npy_dtype::f32 ? filter_array<float>(kind, in, v, b, a)
                                            : filter_array<double>(kind, in, v, b, a);
  });
  save(args.positional[1], out);
  return exit_ok;
}

constexpr option_spec filter_options[] = {{"--b"}, {"--a"}, {"--axis"}};

// ------------------------------------------------------------- sosfilt --

template <class T>
recur::npy_array sosfilt_array(device_kind kind, recur::npy_array const& in, axis_view const& v,
                               recur::npy_array const& sos_array) {
  std::vector<T> const sos = converted<T>(sos_array);
  std::vector<T> const y = map_lanes<T>(
      kind, v, in.as<T>(),
      [&](auto const& ex, T const* x, T* out, auto const& lay) { call_sosfilt(ex, sos, x, out, lay); });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

int run_sosfilt(arguments const& args) {
  args.expect_positional(2, "IN OUT");
  std::string const& in_file = args.positional[0];
  auto const sos_file = args.get("--sos");
  if (!sos_file) usage_error("--sos", "is required (a .npy array of shape (n_sections, 6))");
  std::int64_t const axis = args.integer("--axis", -1);
  device_kind const kind = select_device(args);

  recur::npy_array const sos = load(*sos_file);
  require_float(sos, *sos_file);
  if (sos.shape.size() != 2 || sos.shape[1] != 6 || sos.shape[0] < 1)
    input_error(*sos_file, fmt::format("has shape {}; (n_sections, 6) with n_sections >= 1 is needed",
                                       shape_string(sos.shape)));
  recur::npy_array const in = load(in_file);
  require_float(in, in_file);
  axis_view const v = view_along(in.shape, axis, in_file);
  recur::npy_array out;
  naming_arguments({{"sos", *sos_file}, {"section", *sos_file}}, in_file, [&] {
    out = in.dtype == recur::npy_dtype::f32 ? sosfilt_array<float>(kind, in, v, sos)
                                            : sosfilt_array<double>(kind, in, v, sos);
  });
  save(args.positional[1], out);
  return exit_ok;
}

constexpr option_spec sosfilt_options[] = {{"--sos"}, {"--axis"}};

}  // namespace

command const filter_command{
    "filter",
    "y = scipy.signal.lfilter(b, a, x) along one axis of a .npy array",
    "filter --b B0,B1,... [--a A0,A1,...] [--axis N] [--device D] IN OUT",
    "y = scipy.signal.lfilter(b, a, x, axis=N): b and a divided by a[0] (a defaults to 1, an FIR\n"
    "filter), zero initial state, direct form II transposed. IN is a float32 or float64 .npy array\n"
    "in C order (convert integer arrays first); the coefficients are rounded to its dtype; OUT gets\n"
    "IN's shape and dtype. On the CPU the result is the sequential filter's, bit for bit; on the GPU\n"
    "it agrees with it to rounding (a small multiple of eps times the filter's error gain). The GPU\n"
    "runs orders max(len(a), len(b)) - 1 up to 8: --device auto runs higher orders on the CPU.",
    "  --b B0,B1,...       the numerator coefficients (required)\n"
    "  --a A0,A1,...       the denominator coefficients (default 1)\n"
    "  --axis N            the axis to filter along, negative counting from the end (default -1)\n",
    "recur filter --b 0.0675,0.135,0.0675 --a 1,-1.143,0.4128 --axis 0 x.npy y.npy",
    "",
    filter_options,
    run_filter,
};

command const sosfilt_command{
    "sosfilt",
    "y = scipy.signal.sosfilt(sos, x) along one axis of a .npy array",
    "sosfilt --sos SOS [--axis N] [--device D] IN OUT",
    "y = scipy.signal.sosfilt(sos, x, axis=N): the cascade of second-order sections. SOS is a .npy\n"
    "array of shape (n_sections, 6), rows [b0 b1 b2 a0 a1 a2] (float32 or float64, rounded to IN's\n"
    "dtype; each row is divided by its a0). IN and OUT as for recur filter.",
    "  --sos SOS           the sections, a .npy file (required)\n"
    "  --axis N            the axis to filter along, negative counting from the end (default -1)\n",
    "recur sosfilt --sos sos.npy x.npy y.npy",
    "",
    sosfilt_options,
    run_sosfilt,
};

}  // namespace recur_cli
