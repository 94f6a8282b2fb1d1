// recur dpcm: DPCM encoding and decoding along one axis of a .npy array, on
// the CPU or the GPU.
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

// Integer samples: c fixed point with `shift` fractional bits.
template <class Ex, class S>
void call_dpcm(Ex const& ex, bool encode, std::vector<std::int64_t> const& c, int shift, S const* in, S* out,
               recur::layout const& lay) {
  std::span<std::int64_t const> const cs(c);
  if (encode)
    recur::dpcm_encode(ex, cs, shift, in, out, lay);
  else
    recur::dpcm_decode(ex, cs, shift, in, out, lay);
}

// Floating-point samples.
template <class Ex, class T>
void call_dpcm(Ex const& ex, bool encode, std::vector<T> const& c, T const* in, T* out,
               recur::layout const& lay) {
  std::span<T const> const cs(c);
  if (encode)
    recur::dpcm_encode(ex, cs, in, out, lay);
  else
    recur::dpcm_decode(ex, cs, in, out, lay);
}

// ------------------------------------------------------------- arrays --

template <class S>
recur::npy_array code_integers(device_kind kind, bool encode, recur::npy_array const& in, axis_view const& v,
                               std::vector<std::int64_t> const& c, int shift) {
  std::vector<S> const y =
      map_lanes<S>(kind, v, in.as<S>(), [&](auto const& ex, S const* x, S* out, auto const& lay) {
        call_dpcm(ex, encode, c, shift, x, out, lay);
      });
  return recur::make_npy<S>(in.shape, std::span<S const>(y));
}

template <class T>
recur::npy_array code_reals(device_kind kind, bool encode, recur::npy_array const& in, axis_view const& v,
                            std::vector<double> const& cd) {
  std::vector<T> const c(cd.begin(), cd.end());
  std::vector<T> const y = map_lanes<T>(
      kind, v, in.as<T>(),
      [&](auto const& ex, T const* x, T* out, auto const& lay) { call_dpcm(ex, encode, c, x, out, lay); });
  return recur::make_npy<T>(in.shape, std::span<T const>(y));
}

// The predictor's coefficients as typed: --coeffs, or the fixed polynomial
// predictor of --order K, (1 - z^-1)^K = 1 - sum_j c_j z^-j.
std::vector<std::string> predictor(arguments const& args) {
  auto const coeffs = args.get("--coeffs");
  std::int64_t const order = args.integer("--order", 1);
  if (coeffs) {
    std::vector<std::string> items = real_list(*coeffs, "--coeffs");
    if (args.has("--order") && order != static_cast<std::int64_t>(items.size()))
      usage_error("--order", fmt::format("{} but --coeffs gives {} coefficients", order, items.size()));
    return items;
  }
  if (order < 0 || order > 4)
    usage_error("--order",
                fmt::format("{} has no fixed predictor (0 to 4; give --coeffs for others)", order));
  std::vector<std::string> items;
  std::int64_t binom = 1;
  for (std::int64_t j = 1; j <= order; ++j) {
    binom = binom * (order - j + 1) / j;
    items.push_back(std::to_string(j % 2 ? binom : -binom));
  }
  return items;
}

int run_dpcm(arguments const& args) {
  if (args.positional.empty()) usage_error("MODE", "encode or decode is needed");
  std::string const& mode = args.positional[0];
  if (mode != "encode" && mode != "decode")
    usage_error(mode, "is not encode or decode (recur dpcm encode|decode [options] IN OUT)");
  args.expect_positional(3, "MODE IN OUT");
  bool const encode = mode == "encode";
  std::string const& in_file = args.positional[1];
  std::int64_t const shift = args.integer("--shift", 0);
  if (shift < 0 || shift > 62) usage_error("--shift", fmt::format("must be 0 to 62, not {}", shift));
  std::int64_t const axis = args.integer("--axis", -1);
  std::vector<std::string> const items = predictor(args);
  std::string const coeffs_subject = args.has("--coeffs") ? "--coeffs" : "--order";
  std::int64_t const order = static_cast<std::int64_t>(items.size());
  std::string const unsupported = order > gpu_max_order
                                      ? fmt::format("the GPU codes with orders 0 to {}; {} gives order {}",
                                                    gpu_max_order, coeffs_subject, order)
                                      : std::string();
  device_kind const kind = select_device(args, unsupported);

  recur::npy_array const in = load(in_file);
  axis_view const v = view_along(in.shape, axis, in_file);
  recur::npy_array out;
  auto const names = {argument_name{"c", coeffs_subject}, argument_name{"sum |c_j|", coeffs_subject},
                      argument_name{"shift", "--shift"}};
  if (is_float(in.dtype)) {
    if (shift != 0)
      input_error("--shift", fmt::format("{} applies to integer arrays; {} holds {}", shift, in_file,
                                         recur::npy_dtype_name(in.dtype)));
    std::vector<double> const c = to_reals(items);
    naming_arguments(names, in_file, [&] {
      out = in.dtype == recur::npy_dtype::f32 ? code_reals<float>(kind, encode, in, v, c)
                                              : code_reals<double>(kind, encode, in, v, c);
    });
  } else {
    std::vector<std::int64_t> c;
    for (auto const& item : items) {
      std::int64_t value = 0;
      if (!parse_integer(item, value))
        input_error(
            coeffs_subject,
            fmt::format("{} holds {}, whose codec needs integer coefficients (fixed point with --shift), "
                        "not '{}'",
                        in_file, recur::npy_dtype_name(in.dtype), item));
      c.push_back(value);
    }
    int const sh = static_cast<int>(shift);
    naming_arguments(names, in_file, [&] {
      switch (in.dtype) {
        case recur::npy_dtype::i16:
          out = code_integers<std::int16_t>(kind, encode, in, v, c, sh);
          break;
        case recur::npy_dtype::i32:
          out = code_integers<std::int32_t>(kind, encode, in, v, c, sh);
          break;
        default:
          out = code_integers<std::uint8_t>(kind, encode, in, v, c, sh);
          break;
      }
    });
  }
  save(args.positional[2], out);
  return exit_ok;
}

constexpr option_spec dpcm_options[] = {{"--order"}, {"--coeffs"}, {"--shift"}, {"--axis"}};

}  // namespace

command const dpcm_command{
    "dpcm",
    "DPCM encode or decode along one axis of a .npy array",
    "dpcm encode|decode [--order K] [--coeffs C1,...] [--shift S] [--axis N] [--device D] IN OUT",
    "DPCM along axis N with the predictor p_i = (C1 x_(i-1) + ... + CK x_(i-K)) >> S: encode writes\n"
    "the residuals e_i = x_i - p_i, decode rebuilds x from them; samples before the first are 0.\n"
    "int16, int32 and uint8 arrays are coded losslessly (residuals wrap around modulo 2^bits, so\n"
    "decode(encode(x)) == x exactly, on the CPU and the GPU alike, and OUT has IN's dtype); float32\n"
    "and float64 arrays with real coefficients (no shift), exact to rounding (on the GPU to a small\n"
    "multiple of eps). The GPU codes orders K up to 8: --device auto runs higher ones on the CPU.",
    "  --order K           0 to 4: the fixed polynomial predictor of order K (1: x_(i-1);\n"
    "                      2: 2 x_(i-1) - x_(i-2); 3: 3, -3, 1; 4: 4, -6, 4, -1); default 1.\n"
    "                      With --coeffs, K must be their number\n"
    "  --coeffs C1,...,CK  the predictor's coefficients (integers for integer arrays)\n"
    "  --shift S           0 to 62 fractional bits of integer coefficients (default 0)\n"
    "  --axis N            the axis to code along, negative counting from the end (default -1)\n",
    "recur dpcm encode --coeffs 3,-1 --shift 1 image.npy residuals.npy",
    "",
    dpcm_options,
    run_dpcm,
};

}  // namespace recur_cli
