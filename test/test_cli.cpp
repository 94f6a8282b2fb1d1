// The recur program's filter, sosfilt and dpcm commands, run as a user runs
// them: inputs written as .npy files (recur/io/npy.hpp, so no Python is
// needed), the built program run through std::system, its outputs read back
// and compared with the sequential references bit for bit, and its errors
// checked by exit status, message and the absence of an output file.
#define BOOST_TEST_MODULE recur_cli
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include <recur/io/npy.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>

#include "linrec_harness.hpp"

namespace fs = std::filesystem;
namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

// The program under test: RECUR_CLI from the environment, else the path
// CMake compiled in.
std::string cli_path() {
  char const* e = std::getenv("RECUR_CLI");
  return e ? e : RECUR_CLI_PATH;
}

// A scratch directory for the whole module, removed at the end.
struct scratch {
  fs::path dir;
  scratch() {
    dir = fs::temp_directory_path() / ("recur_cli_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

fs::path scratch_dir() {
  static scratch s;
  return s.dir;
}

std::string path(std::string const& name) { return (scratch_dir() / name).string(); }

struct run_result {
  int status = -1;
  std::string out, err;
};

std::string slurp(fs::path const& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs `recur ARGS` in the scratch directory (so file names are relative).
run_result recur_cli(std::string const& args) {
  fs::path const out = scratch_dir() / "stdout.txt", err = scratch_dir() / "stderr.txt";
  std::string const cmd = "cd '" + scratch_dir().string() + "' && '" + cli_path() + "' " + args + " >'" +
                          out.string() + "' 2>'" + err.string() + "'";
  int const rc = std::system(cmd.c_str());
  run_result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

template <class T>
void save(std::string const& name, std::vector<std::int64_t> shape, std::vector<T> const& data) {
  recur::write_npy(path(name), recur::make_npy<T>(std::move(shape), std::span<T const>(data)));
}

template <class T>
std::vector<T> load(std::string const& name, std::vector<std::int64_t> const& shape) {
  recur::npy_array const a = recur::read_npy(path(name));
  BOOST_TEST(a.shape == shape, boost::test_tools::per_element());
  auto const v = a.as<T>();  // throws unless the dtype is T's
  return {v.begin(), v.end()};
}

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// What the program should produce: f applied to every lane along `axis` of a
// C-order array of `shape`, each lane gathered into a vector first.
template <class T, class F>
std::vector<T> along_axis(std::vector<std::int64_t> const& shape, int axis, std::vector<T> const& x, F&& f) {
  std::size_t const a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<int>(shape.size()) : axis);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < a) outer *= shape[i];
    if (i > a) inner *= shape[i];
  }
  std::int64_t const n = shape[a];
  std::vector<T> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < inner; ++j) {
      std::vector<T> lane(static_cast<std::size_t>(n)), out(lane.size());
      for (std::int64_t i = 0; i < n; ++i) lane[i] = x[(o * n + i) * inner + j];
      f(lane, out);
      for (std::int64_t i = 0; i < n; ++i) y[(o * n + i) * inner + j] = out[i];
    }
  return y;
}

template <class T>
std::vector<T> random_reals(std::size_t size, std::uint64_t seed) {
  rng r(seed);
  std::vector<T> v(size);
  for (auto& x : v) x = static_cast<T>(r.symmetric());
  return v;
}

template <class S>
std::vector<S> random_samples(std::size_t size, std::uint64_t seed) {
  rng r(seed);
  std::vector<S> v(size);
  for (auto& x : v) x = static_cast<S>(r.next());
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_filter)

BOOST_AUTO_TEST_CASE(filter_last_axis_f32) {
  std::vector<std::int64_t> const shape = {3, 50};
  auto const x = random_reals<float>(150, seed_for(601));
  save("f32.npy", shape, x);
  auto const r = recur_cli("filter --b 0.5,0.25 --a 2,-0.6,0.2 f32.npy y.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<float> const b = {0.5f, 0.25f}, a = {2.0f, -0.6f, 0.2f};
  std::vector<float> want(x.size());
  ref::lfilter<float>(b, a, x.data(), want.data(), layout::contiguous(50, 3), nullptr, nullptr);
  BOOST_TEST(same_bits(load<float>("y.npy", shape), want));
  // --axis -1 and --axis 1 are the last axis too.
  BOOST_TEST_REQUIRE(recur_cli("filter --b 0.5,0.25 --a 2,-0.6,0.2 f32.npy y1.npy --axis 1").status == 0);
  BOOST_TEST(same_bits(load<float>("y1.npy", shape), want));
  BOOST_TEST_REQUIRE(recur_cli("filter --axis -1 --a 2,-0.6,0.2 --b 0.5,0.25 f32.npy y2.npy").status == 0);
  BOOST_TEST(same_bits(load<float>("y2.npy", shape), want));
}

BOOST_AUTO_TEST_CASE(filter_every_axis_f64) {
  std::vector<std::int64_t> const shape = {4, 7, 5};
  auto const x = random_reals<double>(140, seed_for(602));
  save("f64.npy", shape, x);
  std::vector<double> const b = {1, -2, 0.5}, a = {1, -0.5, 0.25, -0.125};
  for (int const axis : {0, 1, 2, -1, -2, -3}) {
    auto const r =
        recur_cli("filter --b 1,-2,0.5 --a 1,-0.5,0.25,-0.125 f64.npy y.npy --axis " + std::to_string(axis));
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    auto const want = along_axis<double>(shape, axis, x, [&](auto const& lane, auto& out) {
      ref::lfilter<double>(b, a, lane.data(), out.data(), layout::contiguous(std::ssize(lane)), nullptr,
                           nullptr);
    });
    BOOST_TEST(same_bits(load<double>("y.npy", shape), want), "axis " << axis);
  }
}

BOOST_AUTO_TEST_CASE(filter_fir_default_a) {
  save<double>("ramp.npy", {5}, {1, 2, 3, 4, 5});
  auto const r = recur_cli("filter --b 1,1 ramp.npy sum.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<double>("sum.npy", {5}) == (std::vector<double>{1, 3, 5, 7, 9}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sosfilt_matches_reference) {
  std::vector<double> const sos = {1, 2, 1, 1, -0.5, 0.1, 0.5, 0, -0.5, 2, 0.3, 0.2};
  save<double>("sos.npy", {2, 6}, sos);
  std::vector<std::int64_t> const shape = {4, 40};
  auto const x = random_reals<float>(160, seed_for(603));
  save("s32.npy", shape, x);
  auto const r = recur_cli("sosfilt --sos sos.npy s32.npy y.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<float> const sosf(sos.begin(), sos.end());  // rounded to the input's dtype
  std::vector<float> want(x.size());
  ref::sosfilt<float>(sosf, x.data(), want.data(), layout::contiguous(40, 4), nullptr, nullptr);
  BOOST_TEST(same_bits(load<float>("y.npy", shape), want));
  // float64 along the first axis.
  auto const xd = random_reals<double>(160, seed_for(604));
  save("s64.npy", shape, xd);
  BOOST_TEST_REQUIRE(recur_cli("sosfilt --sos sos.npy s64.npy y64.npy --axis 0").status == 0);
  auto const wantd = along_axis<double>(shape, 0, xd, [&](auto const& lane, auto& out) {
    ref::sosfilt<double>(sos, lane.data(), out.data(), layout::contiguous(std::ssize(lane)), nullptr,
                         nullptr);
  });
  BOOST_TEST(same_bits(load<double>("y64.npy", shape), wantd));
}

namespace {

template <class S>
void dpcm_round_trip(std::string const& tag, std::uint64_t seed) {
  std::vector<std::int64_t> const shape = {6, 80};
  auto const x = random_samples<S>(480, seed);
  std::string const in = "d" + tag + ".npy", enc = "e" + tag + ".npy", dec = "r" + tag + ".npy";
  save(in, shape, x);
  // --order 2: the fixed predictor 2 x_(i-1) - x_(i-2), along the last axis.
  auto r = recur_cli("dpcm encode --order 2 " + in + " " + enc);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<std::int64_t> const c2 = {2, -1};
  std::vector<S> want(x.size());
  ref::dpcm_encode<S>(c2, 0, x.data(), want.data(), layout::contiguous(80, 6));
  auto const e = load<S>(enc, shape);
  BOOST_TEST(e == want, boost::test_tools::per_element());
  r = recur_cli("dpcm decode --order 2 " + enc + " " + dec);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<S>(dec, shape) == x, boost::test_tools::per_element());
  // Fixed-point coefficients along the first axis: 1.5 x_(i-1) - 0.5 x_(i-2).
  r = recur_cli("dpcm encode --coeffs 3,-1 --shift 1 --axis 0 " + in + " " + enc);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<std::int64_t> const c = {3, -1};
  auto const want0 = along_axis<S>(shape, 0, x, [&](auto const& lane, auto& out) {
    ref::dpcm_encode<S>(c, 1, lane.data(), out.data(), layout::contiguous(std::ssize(lane)));
  });
  BOOST_TEST(load<S>(enc, shape) == want0, boost::test_tools::per_element());
  r = recur_cli("dpcm decode --order 2 --coeffs 3,-1 --shift 1 --axis 0 " + enc + " " + dec);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<S>(dec, shape) == x, boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_CASE(dpcm_int16) { dpcm_round_trip<std::int16_t>("i16", seed_for(605)); }
BOOST_AUTO_TEST_CASE(dpcm_int32) { dpcm_round_trip<std::int32_t>("i32", seed_for(606)); }
BOOST_AUTO_TEST_CASE(dpcm_uint8) { dpcm_round_trip<std::uint8_t>("u8", seed_for(607)); }

BOOST_AUTO_TEST_CASE(dpcm_float) {
  std::vector<std::int64_t> const shape = {3, 64};
  auto const x = random_reals<double>(192, seed_for(608));
  save("df64.npy", shape, x);
  auto r = recur_cli("dpcm encode --coeffs 1.5,-0.5 df64.npy de64.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<double> const c = {1.5, -0.5};
  std::vector<double> want(x.size()), back(x.size());
  ref::dpcm_encode<double>(c, x.data(), want.data(), layout::contiguous(64, 3));
  BOOST_TEST(same_bits(load<double>("de64.npy", shape), want));
  r = recur_cli("dpcm decode --coeffs 1.5,-0.5 de64.npy dr64.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  ref::dpcm_decode<double>(c, want.data(), back.data(), layout::contiguous(64, 3));
  auto const got = load<double>("dr64.npy", shape);
  BOOST_TEST(same_bits(got, back));
  for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(std::fabs(got[i] - x[i]) <= 1e-13);
  // float32 with the fixed order-1 predictor.
  std::vector<float> const xf(x.begin(), x.end());
  save("df32.npy", shape, xf);
  BOOST_TEST_REQUIRE(recur_cli("dpcm encode df32.npy de32.npy").status == 0);
  std::vector<float> const c1 = {1.0f};
  std::vector<float> wantf(xf.size());
  ref::dpcm_encode<float>(c1, xf.data(), wantf.data(), layout::contiguous(64, 3));
  BOOST_TEST(same_bits(load<float>("de32.npy", shape), wantf));
}

// Every failure: its exit status (1 an input or a run failed, 2 the command
// line is wrong), a message naming the problem, and no output file.
BOOST_AUTO_TEST_CASE(errors) {
  save<double>("ex.npy", {2, 8}, std::vector<double>(16, 1.0));
  save<std::int16_t>("ei16.npy", {2, 8}, std::vector<std::int16_t>(16, 3));
  save<std::int32_t>("ei32.npy", {2, 8}, std::vector<std::int32_t>(16, 3));
  save<double>("escalar.npy", {}, {1.0});
  save<double>("esos5.npy", {5}, {1, 0, 0, 1, 0});
  save<double>("esos_a0.npy", {1, 6}, {1, 0, 0, 0, 0.5, 0});
  save<std::int32_t>("esos_int.npy", {1, 6}, {1, 0, 0, 1, 0, 0});
  struct failure {
    std::string args;
    int status;
    std::string message;
  };
  std::vector<failure> const cases = {
      {"filter --b 1 ei16.npy OUT", 1, "ei16.npy holds int16; recur filter filters float32 or float64"},
      {"filter --b 1 --a 0,1 ex.npy OUT", 1, "a[0] = 0"},
      {"filter --b 1,nan ex.npy OUT", 1, "b[1] = nan is not finite"},
      {"filter ex.npy OUT", 2, "filter needs --b"},
      {"filter --b 1,,2 ex.npy OUT", 2, "--b needs numbers separated by commas"},
      {"filter --b 1 --a 1,x ex.npy OUT", 2, "--a needs numbers"},
      {"filter --b 1 ex.npy", 2, "filter takes two files, IN and OUT (1 given)"},
      {"filter --b 1 ex.npy OUT --axis 2", 1, "--axis 2 is out of range for ex.npy of shape (2, 8)"},
      {"filter --b 1 ex.npy OUT --axis -3", 1, "out of range"},
      {"filter --b 1 ex.npy OUT --axis one", 2, "--axis needs an integer"},
      {"filter --b 1 ex.npy OUT --axis", 2, "--axis needs a value"},
      {"filter --b 1 escalar.npy OUT", 1, "is a scalar"},
      {"filter --b 1 missing.npy OUT", 1, "missing.npy"},
      {"filter --b 1 --frobnicate ex.npy OUT", 2, "unknown option '--frobnicate' for filter"},
      {"sosfilt ex.npy OUT", 2, "sosfilt needs --sos"},
      {"sosfilt --sos esos5.npy ex.npy OUT", 1, "has shape (5,); (n_sections, 6)"},
      {"sosfilt --sos esos_int.npy ex.npy OUT", 1, "holds int32; float32 or float64 is needed"},
      {"sosfilt --sos esos_a0.npy ex.npy OUT", 1, "sos[0][3] = 0 (a0 of section 0)"},
      {"sosfilt --sos ex.npy ei16.npy OUT", 1, "has shape (2, 8)"},
      {"dpcm ei16.npy OUT", 2, "dpcm needs encode or decode, not 'ei16.npy'"},
      {"dpcm", 2, "dpcm needs encode or decode"},
      {"dpcm encode --order 7 ei16.npy OUT", 2, "--order 7 has no fixed predictor"},
      {"dpcm encode --order x ei16.npy OUT", 2, "--order needs an integer"},
      {"dpcm encode --order 3 --coeffs 1,2 ei16.npy OUT", 2, "--order 3 but --coeffs gives 2 coefficients"},
      {"dpcm encode --coeffs 0.5 ei16.npy OUT", 1, "whose codec needs integer coefficients"},
      {"dpcm encode --coeffs 1 --shift 63 ei16.npy OUT", 2, "--shift needs an integer from 0 to 62"},
      {"dpcm encode --coeffs 1 --shift 1 ex.npy OUT", 1, "--shift 1 applies to integer arrays"},
      {"dpcm decode --coeffs 2147483648,1 ei32.npy OUT", 1, "sum |c_j| exceeds 2^31"},
      {"dpcm encode --coeffs nan ex.npy OUT", 1, "c[0] = nan is not finite"},
      {"dpcm encode ei16.npy", 2, "dpcm takes two files"},
  };
  int k = 0;
  for (auto const& f : cases) {
    std::string const out = "out" + std::to_string(k++) + ".npy";
    std::string args = f.args;
    if (auto const at = args.find("OUT"); at != std::string::npos) args.replace(at, 3, out);
    auto const r = recur_cli(args);
    BOOST_TEST(r.status == f.status, "recur " << args << ": status " << r.status << ", stderr: " << r.err);
    BOOST_TEST(r.err.find(f.message) != std::string::npos,
               "recur " << args << ": stderr '" << r.err << "' lacks '" << f.message << "'");
    BOOST_TEST(!fs::exists(scratch_dir() / out), "recur " << args << " wrote " << out);
  }
}

BOOST_AUTO_TEST_CASE(help_lists_the_commands) {
  auto const r = recur_cli("help");
  BOOST_TEST(r.status == 0);
  for (char const* s : {"filter --b B0,B1,... [--a A0,A1,...] IN OUT [--axis N]", "sosfilt --sos SOS IN OUT",
                        "dpcm encode|decode [--order K] [--coeffs C1,...,CK] [--shift S] IN OUT"})
    BOOST_TEST(r.out.find(s) != std::string::npos, "help lacks '" << s << "'");
}

BOOST_AUTO_TEST_SUITE_END()
