// The recur program's commands, run as a user runs them: inputs written as
// .npy files (recur/io/npy.hpp, so no Python is needed), the built program
// run through std::system, its outputs read back and compared with the
// sequential references (include/recur/reference/), and its errors checked
// by exit status, message and the absence of an output file.
//
// Every command runs with --device cpu, or with --device gpu when the
// program is given "--device gpu" before Boost.Test's own arguments (the
// gpu-labelled CTest entry; without a CUDA device it returns 77, skipped).
// On the CPU filter, sosfilt, dpcm and tridiag with a named algorithm give
// the references' results bit for bit; on the GPU they agree to rounding
// (see expect_reference), as linrec does on both.
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <recur/executor.hpp>
#include <recur/io/npy.hpp>
#include <recur/reference/dpcm.hpp>
#include <recur/reference/lfilter.hpp>
#include <recur/reference/linrec.hpp>
#include <recur/reference/tridiag.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include <recur/types.hpp>

#include "common/device_main.hpp"
#include "common/linrec_harness.hpp"

namespace fs = std::filesystem;
namespace ref = recur::reference;
using recur::layout;
using recur_test::rng;
using recur_test::seed_for;

namespace {

// "cpu" or "gpu": the --device every command of the tests runs with.
std::string device = "cpu";
bool on_gpu() { return device == "gpu"; }

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

// `recur ARGS --device D`, D the tests' device.
run_result run(std::string const& args) { return recur_cli(args + " --device " + device); }

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

// The GPU's results agree with the references to rounding, not bitwise.
// These tests check the command line's work (which lanes, which axis, which
// block, which device buffer), whose mistakes are errors of the size of the
// values, so they allow 4096 eps S, S the size of the terms: above the
// accuracy bounds of the GPU filters (16 eps (K + 1) G S, test_lfilter_cuda.cpp;
// K <= 4 and error gains G < 4 here), of linrec (8 eps (memory + log2 N) S,
// memory 1 / (1 - max|s|) = 10 here) and of the diagonally dominant solves;
// test_gpu checks those bounds themselves.
template <class T>
double tolerance(double scale) {
  return 4096 * static_cast<double>(std::numeric_limits<T>::epsilon()) * scale;
}

template <class T>
double max_abs(std::vector<T> const& v) {
  double m = 0;
  for (T const x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
  return m;
}

// got within tolerance<T>(scale) of want, element by element (NaN where
// want holds NaN).
template <class T>
void expect_close(std::vector<T> const& got, std::vector<T> const& want, double scale,
                  std::string const& what) {
  BOOST_TEST_REQUIRE(got.size() == want.size());
  double const tol = tolerance<T>(scale);
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool const ok =
        std::isnan(want[i]) ? std::isnan(got[i]) : std::fabs(static_cast<double>(got[i]) - want[i]) <= tol;
    if (!ok) {
      BOOST_TEST(ok, what << ": element " << i << " is " << got[i] << ", the reference's " << want[i]
                          << " (tolerance " << tol << ")");
      return;
    }
  }
}

// The reference's bits on the CPU; on the GPU within tolerance of them, S
// = max(1, max |want|) (1 + cmax), cmax the largest coefficient.
template <class T>
void expect_reference(std::vector<T> const& got, std::vector<T> const& want, double cmax,
                      std::string const& what) {
  if (!on_gpu())
    BOOST_TEST(same_bits(got, want), what << ": not the reference's bits");
  else
    expect_close(got, want, std::max(1.0, max_abs(want)) * (1 + cmax), what);
}

// The lanes of a C-order array along one axis: lane k (numbered in C order
// of the other axes) has element i at at(k, i).
struct lanes {
  std::int64_t outer = 1, n = 1, inner = 1;
  lanes(std::vector<std::int64_t> const& shape, int axis) {
    std::size_t const a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<int>(shape.size()) : axis);
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (i < a) outer *= shape[i];
      if (i > a) inner *= shape[i];
    }
    n = shape[a];
  }
  std::int64_t count() const { return outer * inner; }
  std::size_t at(std::int64_t k, std::int64_t i) const {
    return static_cast<std::size_t>((k / inner * n + i) * inner + k % inner);
  }
};

// What the program should produce: f applied to every lane along `axis` of
// a C-order array of `shape`, each lane gathered into a vector first.
template <class T, class F>
std::vector<T> along_axis(std::vector<std::int64_t> const& shape, int axis, std::vector<T> const& x, F&& f) {
  lanes const l(shape, axis);
  std::vector<T> y(x.size());
  for (std::int64_t k = 0; k < l.count(); ++k) {
    std::vector<T> lane(static_cast<std::size_t>(l.n)), out(lane.size());
    for (std::int64_t i = 0; i < l.n; ++i) lane[i] = x[l.at(k, i)];
    f(lane, out, k);
    for (std::int64_t i = 0; i < l.n; ++i) y[l.at(k, i)] = out[i];
  }
  return y;
}

template <class T>
std::vector<T> random_reals(std::size_t size, std::uint64_t seed, double scale = 1.0) {
  rng r(seed);
  std::vector<T> v(size);
  for (auto& x : v) x = static_cast<T>(scale * r.symmetric());
  return v;
}

template <class S>
std::vector<S> random_samples(std::size_t size, std::uint64_t seed) {
  rng r(seed);
  std::vector<S> v(size);
  for (auto& x : v) x = static_cast<S>(r.next());
  return v;
}

// "auto, thomas, cr, ...": every algorithm, as recur::to_string spells it.
std::string algorithm_names() {
  std::string s;
  for (auto const a : recur::tridiag_algorithms)
    s += (s.empty() ? "" : ", ") + std::string(recur::to_string(a));
  return s;
}

// A failing run: its exit status, the prefix "recur CMD: SUBJECT: " and a
// message on stderr, no C++ function name in it, and no output file.
struct failure {
  std::string args;
  int status;
  std::string message;  // "SUBJECT: what", found after "recur CMD: "
};

void expect_failures(std::vector<failure> const& cases, std::string const& device_flag) {
  int k = 0;
  for (auto const& f : cases) {
    std::string const out = "out" + std::to_string(k++) + ".npy";
    std::string args = f.args;
    if (auto const at = args.find("OUT"); at != std::string::npos) args.replace(at, 3, out);
    std::string const cmd = args.substr(0, args.find(' '));
    auto const r = recur_cli(args + device_flag);
    BOOST_TEST(r.status == f.status, "recur " << args << ": status " << r.status << ", stderr: " << r.err);
    std::string const want = "recur " + cmd + ": " + f.message;
    BOOST_TEST(r.err.find(want) != std::string::npos,
               "recur " << args << ": stderr '" << r.err << "' lacks '" << want << "'");
    BOOST_TEST(r.err.find("recur::") == std::string::npos, "recur " << args << ": stderr '" << r.err << "'");
    BOOST_TEST(!fs::exists(scratch_dir() / out), "recur " << args << " wrote " << out);
  }
}

}  // namespace

// ------------------------------------------------------------ filters --

BOOST_AUTO_TEST_SUITE(cli_filter)

BOOST_AUTO_TEST_CASE(filter_last_axis_f32) {
  std::vector<std::int64_t> const shape = {3, 50};
  auto const x = random_reals<float>(150, seed_for(601));
  save("f32.npy", shape, x);
  auto const r = run("filter --b 0.5,0.25 --a 2,-0.6,0.2 f32.npy y.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<float> const b = {0.5f, 0.25f}, a = {2.0f, -0.6f, 0.2f};
  std::vector<float> want(x.size());
  ref::lfilter<float>(b, a, x.data(), want.data(), layout::contiguous(50, 3), nullptr, nullptr);
  expect_reference(load<float>("y.npy", shape), want, 1, "--axis -1");
  // --axis 1, --axis=-1 and options in any order are the last axis too.
  BOOST_TEST_REQUIRE(run("filter --b 0.5,0.25 --a 2,-0.6,0.2 f32.npy y1.npy --axis 1").status == 0);
  expect_reference(load<float>("y1.npy", shape), want, 1, "--axis 1");
  BOOST_TEST_REQUIRE(run("filter --axis=-1 --a 2,-0.6,0.2 --b=0.5,0.25 f32.npy y2.npy").status == 0);
  expect_reference(load<float>("y2.npy", shape), want, 1, "--axis=-1");
}

BOOST_AUTO_TEST_CASE(filter_every_axis_f64) {
  std::vector<std::int64_t> const shape = {4, 7, 5};
  auto const x = random_reals<double>(140, seed_for(602));
  save("f64.npy", shape, x);
  std::vector<double> const b = {1, -2, 0.5}, a = {1, -0.5, 0.25, -0.125};
  for (int const axis : {0, 1, 2, -1, -2, -3}) {
    auto const r =
        run("filter --b 1,-2,0.5 --a 1,-0.5,0.25,-0.125 f64.npy y.npy --axis " + std::to_string(axis));
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    auto const want = along_axis<double>(shape, axis, x, [&](auto const& lane, auto& out, std::int64_t) {
      ref::lfilter<double>(b, a, lane.data(), out.data(), layout::contiguous(std::ssize(lane)), nullptr,
                           nullptr);
    });
    expect_reference(load<double>("y.npy", shape), want, 2, "axis " + std::to_string(axis));
  }
}

// An option that takes a value takes the next word even when it starts with
// a minus sign, as getopt and argparse do; "--b=..." says the same.
BOOST_AUTO_TEST_CASE(filter_negative_coefficients) {
  std::vector<std::int64_t> const shape = {2, 40};
  auto const x = random_reals<double>(80, seed_for(610));
  save("fneg.npy", shape, x);
  std::vector<double> const b = {-0.5, 0.25, -0.125}, a = {-2, 0.6, -0.2};
  std::vector<double> want(x.size());
  ref::lfilter<double>(b, a, x.data(), want.data(), layout::contiguous(40, 2), nullptr, nullptr);
  for (std::string const args :
       {"--b -0.5,0.25,-0.125 --a -2,0.6,-0.2", "--b=-0.5,0.25,-0.125 --a=-2,0.6,-0.2",
        "--axis -1 --a=-2,0.6,-0.2 --b -0.5,0.25,-0.125"}) {
    auto const r = run("filter " + args + " fneg.npy yneg.npy");
    BOOST_TEST_REQUIRE(r.status == 0, args << ": " << r.err);
    expect_reference(load<double>("yneg.npy", shape), want, 1, args);
  }
}

BOOST_AUTO_TEST_CASE(filter_fir_default_a) {
  save<double>("ramp.npy", {5}, {1, 2, 3, 4, 5});
  auto const r = run("filter --b 1,1 ramp.npy sum.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<double>("sum.npy", {5}) == (std::vector<double>{1, 3, 5, 7, 9}),
             boost::test_tools::per_element());
}

// The GPU filters orders up to 8: --device auto runs order 9 on the CPU,
// --device gpu refuses it (tested in cli_device).
BOOST_AUTO_TEST_CASE(filter_order_9_auto) {
  std::vector<std::int64_t> const shape = {2, 30};
  auto const x = random_reals<double>(60, seed_for(609));
  save("o9.npy", shape, x);
  std::string const b = "1,0,0,0,0,0,0,0,0,0.5";
  auto const r = recur_cli("filter --b " + b + " o9.npy y9.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<double> const bv = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0.5}, av = {1};
  std::vector<double> want(x.size());
  ref::lfilter<double>(bv, av, x.data(), want.data(), layout::contiguous(30, 2), nullptr, nullptr);
  BOOST_TEST(same_bits(load<double>("y9.npy", shape), want));
}

BOOST_AUTO_TEST_CASE(sosfilt_matches_reference) {
  std::vector<double> const sos = {1, 2, 1, 1, -0.5, 0.1, 0.5, 0, -0.5, 2, 0.3, 0.2};
  save<double>("sos.npy", {2, 6}, sos);
  std::vector<std::int64_t> const shape = {4, 40};
  auto const x = random_reals<float>(160, seed_for(603));
  save("s32.npy", shape, x);
  auto const r = run("sosfilt --sos sos.npy s32.npy y.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<float> const sosf(sos.begin(), sos.end());  // rounded to the input's dtype
  std::vector<float> want(x.size());
  ref::sosfilt<float>(sosf, x.data(), want.data(), layout::contiguous(40, 4), nullptr, nullptr);
  expect_reference(load<float>("y.npy", shape), want, 4, "float32, last axis");
  // float64 along the first axis and along the middle one.
  auto const xd = random_reals<double>(160, seed_for(604));
  save("s64.npy", shape, xd);
  BOOST_TEST_REQUIRE(run("sosfilt --sos sos.npy s64.npy y64.npy --axis 0").status == 0);
  auto const wantd = along_axis<double>(shape, 0, xd, [&](auto const& lane, auto& out, std::int64_t) {
    ref::sosfilt<double>(sos, lane.data(), out.data(), layout::contiguous(std::ssize(lane)), nullptr,
                         nullptr);
  });
  expect_reference(load<double>("y64.npy", shape), wantd, 4, "float64, axis 0");
  std::vector<std::int64_t> const shape3 = {2, 20, 4};
  save("s64m.npy", shape3, xd);
  BOOST_TEST_REQUIRE(run("sosfilt --sos sos.npy s64m.npy y64m.npy --axis 1").status == 0);
  auto const wantm = along_axis<double>(shape3, 1, xd, [&](auto const& lane, auto& out, std::int64_t) {
    ref::sosfilt<double>(sos, lane.data(), out.data(), layout::contiguous(std::ssize(lane)), nullptr,
                         nullptr);
  });
  expect_reference(load<double>("y64m.npy", shape3), wantm, 4, "float64, axis 1");
}

BOOST_AUTO_TEST_SUITE_END()

// --------------------------------------------------------------- dpcm --

BOOST_AUTO_TEST_SUITE(cli_dpcm)

namespace {

// Integer DPCM is exact on both devices: the reference's bits.
template <class S>
void dpcm_round_trip(std::string const& tag, std::uint64_t seed) {
  std::vector<std::int64_t> const shape = {6, 80};
  auto const x = random_samples<S>(480, seed);
  std::string const in = "d" + tag + ".npy", enc = "e" + tag + ".npy", dec = "r" + tag + ".npy";
  save(in, shape, x);
  // --order 2: the fixed predictor 2 x_(i-1) - x_(i-2), along the last axis.
  auto r = run("dpcm encode --order 2 " + in + " " + enc);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<std::int64_t> const c2 = {2, -1};
  std::vector<S> want(x.size());
  ref::dpcm_encode<S>(c2, 0, x.data(), want.data(), layout::contiguous(80, 6));
  auto const e = load<S>(enc, shape);
  BOOST_TEST(e == want, boost::test_tools::per_element());
  r = run("dpcm decode --order 2 " + enc + " " + dec);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<S>(dec, shape) == x, boost::test_tools::per_element());
  // Fixed-point coefficients along the first axis: 1.5 x_(i-1) - 0.5 x_(i-2).
  r = run("dpcm encode --coeffs 3,-1 --shift 1 --axis 0 " + in + " " + enc);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<std::int64_t> const c = {3, -1};
  auto const want0 = along_axis<S>(shape, 0, x, [&](auto const& lane, auto& out, std::int64_t) {
    ref::dpcm_encode<S>(c, 1, lane.data(), out.data(), layout::contiguous(std::ssize(lane)));
  });
  BOOST_TEST(load<S>(enc, shape) == want0, boost::test_tools::per_element());
  r = run("dpcm decode --order 2 --coeffs 3,-1 --shift 1 --axis 0 " + enc + " " + dec);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(load<S>(dec, shape) == x, boost::test_tools::per_element());
}

}  // namespace

BOOST_AUTO_TEST_CASE(dpcm_int16) { dpcm_round_trip<std::int16_t>("i16", seed_for(605)); }
BOOST_AUTO_TEST_CASE(dpcm_int32) { dpcm_round_trip<std::int32_t>("i32", seed_for(606)); }
BOOST_AUTO_TEST_CASE(dpcm_uint8) { dpcm_round_trip<std::uint8_t>("u8", seed_for(607)); }

// Predictor coefficients that start with a minus sign, as the next word and
// after '=': -x_(i-1) + x_(i-2), the reference's bits and the round trip.
BOOST_AUTO_TEST_CASE(dpcm_negative_coefficients) {
  std::vector<std::int64_t> const shape = {4, 50};
  auto const x = random_samples<std::int16_t>(200, seed_for(611));
  save("dneg.npy", shape, x);
  std::vector<std::int64_t> const c = {-1, 1};
  std::vector<std::int16_t> want(x.size());
  ref::dpcm_encode<std::int16_t>(c, 0, x.data(), want.data(), layout::contiguous(50, 4));
  for (std::string const coeffs : {"--coeffs -1,1", "--coeffs=-1,1"}) {
    auto r = run("dpcm encode " + coeffs + " dneg.npy eneg.npy");
    BOOST_TEST_REQUIRE(r.status == 0, coeffs << ": " << r.err);
    BOOST_TEST(load<std::int16_t>("eneg.npy", shape) == want, boost::test_tools::per_element());
    r = run("dpcm decode " + coeffs + " eneg.npy rneg.npy");
    BOOST_TEST_REQUIRE(r.status == 0, coeffs << ": " << r.err);
    BOOST_TEST(load<std::int16_t>("rneg.npy", shape) == x, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(dpcm_float) {
  std::vector<std::int64_t> const shape = {3, 64};
  auto const x = random_reals<double>(192, seed_for(608));
  save("df64.npy", shape, x);
  auto r = run("dpcm encode --coeffs 1.5,-0.5 df64.npy de64.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::vector<double> const c = {1.5, -0.5};
  std::vector<double> want(x.size()), back(x.size());
  ref::dpcm_encode<double>(c, x.data(), want.data(), layout::contiguous(64, 3));
  auto const e = load<double>("de64.npy", shape);
  expect_reference(e, want, 1.5, "encode");
  r = run("dpcm decode --coeffs 1.5,-0.5 de64.npy dr64.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  ref::dpcm_decode<double>(c, e.data(), back.data(), layout::contiguous(64, 3));
  auto const got = load<double>("dr64.npy", shape);
  expect_reference(got, back, 1.5, "decode");
  for (std::size_t i = 0; i < x.size(); ++i) BOOST_TEST(std::fabs(got[i] - x[i]) <= 1e-12);
  // float32 with the fixed order-1 predictor.
  std::vector<float> const xf(x.begin(), x.end());
  save("df32.npy", shape, xf);
  BOOST_TEST_REQUIRE(run("dpcm encode df32.npy de32.npy").status == 0);
  std::vector<float> const c1 = {1.0f};
  std::vector<float> wantf(xf.size());
  ref::dpcm_encode<float>(c1, xf.data(), wantf.data(), layout::contiguous(64, 3));
  expect_reference(load<float>("de32.npy", shape), wantf, 1, "float32 encode");
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------- linrec --

BOOST_AUTO_TEST_SUITE(cli_linrec)

namespace {

// w along `axis` of `shape` by the reference, s or t an array or a scalar
// (an empty vector), init an array of one value per lane or a scalar.
template <class T>
std::vector<T> linrec_reference(std::vector<std::int64_t> const& shape, int axis, std::vector<T> const& s,
                                T s_value, std::vector<T> const& t, T t_value, std::vector<T> const& init,
                                T init_value, bool reverse) {
  std::vector<T> const& shaped = s.empty() ? t : s;
  lanes const l(shape, axis);
  std::vector<T> w(shaped.size());
  for (std::int64_t k = 0; k < l.count(); ++k) {
    std::vector<T> sl(static_cast<std::size_t>(l.n)), tl(sl.size()), wl(sl.size());
    for (std::int64_t i = 0; i < l.n; ++i) {
      if (!s.empty()) sl[i] = s[l.at(k, i)];
      if (!t.empty()) tl[i] = t[l.at(k, i)];
    }
    ref::linrec_sequence<T>(s.empty() ? nullptr : sl.data(), s_value, t.empty() ? nullptr : tl.data(),
                            t_value, wl.data(), layout::contiguous(l.n), 0,
                            init.empty() ? init_value : init[k], reverse);
    for (std::int64_t i = 0; i < l.n; ++i) w[l.at(k, i)] = wl[i];
  }
  return w;
}

// |s| <= 0.9, |t|, |init| <= 1: |w| <= 10 + 1, the size of the terms.
constexpr double linrec_scale = 11;

}  // namespace

BOOST_AUTO_TEST_CASE(arrays_last_axis_f32) {
  std::vector<std::int64_t> const shape = {5, 300};
  auto const s = random_reals<float>(1500, seed_for(701), 0.9), t = random_reals<float>(1500, seed_for(702));
  save("ls.npy", shape, s);
  save("lt.npy", shape, t);
  auto const r = run("linrec ls.npy lt.npy lw.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const want = linrec_reference<float>(shape, -1, s, 0, t, 0, {}, 0, false);
  expect_close(load<float>("lw.npy", shape), want, linrec_scale, "s, t arrays");
  // --reverse with a scalar init.
  BOOST_TEST_REQUIRE(run("linrec --reverse --init -0.5 ls.npy lt.npy lwr.npy").status == 0);
  auto const wantr = linrec_reference<float>(shape, -1, s, 0, t, 0, {}, -0.5f, true);
  expect_close(load<float>("lwr.npy", shape), wantr, linrec_scale, "--reverse --init -0.5");
}

// A flag takes no value: the negative number after --reverse is S, and a
// value option takes a negative number both ways.
BOOST_AUTO_TEST_CASE(flag_before_a_negative_number) {
  std::vector<std::int64_t> const shape = {3, 40};
  auto const t = random_reals<double>(120, seed_for(706));
  save("ft.npy", shape, t);
  auto const want = linrec_reference<double>(shape, -1, {}, -0.5, t, 0, {}, -0.25, true);
  for (std::string const args :
       {"--reverse -0.5 ft.npy fw.npy --init -0.25", "--init=-0.25 --reverse -0.5 ft.npy fw.npy"}) {
    auto const r = run("linrec " + args);
    BOOST_TEST_REQUIRE(r.status == 0, args << ": " << r.err);
    expect_close(load<double>("fw.npy", shape), want, linrec_scale, args);
  }
}

BOOST_AUTO_TEST_CASE(scalars_and_axes_f64) {
  std::vector<std::int64_t> const shape = {40, 3, 6};
  auto const s = random_reals<double>(720, seed_for(703), 0.9), t = random_reals<double>(720, seed_for(704));
  save("ms.npy", shape, s);
  save("mt.npy", shape, t);
  // A scalar s (negative: a number, not an option) along the first axis.
  auto r = run("linrec -0.75 mt.npy mw.npy --axis 0");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const want0 = linrec_reference<double>(shape, 0, {}, -0.75, t, 0, {}, 0, false);
  expect_close(load<double>("mw.npy", shape), want0, linrec_scale, "scalar s, axis 0");
  // A scalar t along the middle axis, in reverse, one init per lane (the
  // shape without the axis).
  std::vector<std::int64_t> const lane_shape = {40, 6};
  auto const init = random_reals<double>(240, seed_for(705));
  save("mi.npy", lane_shape, init);
  r = run("linrec ms.npy 0.25 mw1.npy --axis 1 --reverse --init mi.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const want1 = linrec_reference<double>(shape, 1, s, 0, {}, 0.25, init, 0, true);
  expect_close(load<double>("mw1.npy", shape), want1, linrec_scale, "scalar t, axis 1, --init array");
  // Both arrays, the last axis, init per lane.
  save("mi2.npy", {40, 3}, std::vector<double>(init.begin(), init.begin() + 120));
  r = run("linrec ms.npy mt.npy mw2.npy --init mi2.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const want2 = linrec_reference<double>(
      shape, -1, s, 0, t, 0, std::vector<double>(init.begin(), init.begin() + 120), 0, false);
  expect_close(load<double>("mw2.npy", shape), want2, linrec_scale, "arrays, --init array");
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------ tridiag --

BOOST_AUTO_TEST_SUITE(cli_tridiag)

namespace {

// Diagonally dominant systems along `axis` of `shape` (dl, d, du) and nrhs
// right-hand sides, stacked first when nrhs > 1.
template <class T>
struct systems {
  std::vector<std::int64_t> shape, rhs_shape;
  std::vector<T> dl, d, du, rhs;
  std::int64_t nrhs = 1;

  systems(std::vector<std::int64_t> s, std::int64_t k, std::uint64_t seed) : shape(std::move(s)), nrhs(k) {
    std::size_t size = 1;
    for (auto const v : shape) size *= static_cast<std::size_t>(v);
    dl = random_reals<T>(size, seed);
    du = random_reals<T>(size, seed + 1);
    d = random_reals<T>(size, seed + 2);
    for (std::size_t i = 0; i < size; ++i)
      d[i] =
          static_cast<T>((d[i] < 0 ? -1 : 1) * (std::fabs(dl[i]) + std::fabs(du[i]) + 1 + std::fabs(d[i])));
    rhs = random_reals<T>(size * static_cast<std::size_t>(k), seed + 3);
    rhs_shape = shape;
    if (k > 1) rhs_shape.insert(rhs_shape.begin(), k);
  }
  void save_all(std::string const& tag) const {
    save("dl" + tag + ".npy", shape, dl);
    save("d" + tag + ".npy", shape, d);
    save("du" + tag + ".npy", shape, du);
    save("b" + tag + ".npy", rhs_shape, rhs);
  }
  std::string files(std::string const& tag) const {
    return "dl" + tag + ".npy d" + tag + ".npy du" + tag + ".npy b" + tag + ".npy";
  }
  // x by solve_lane(a, b, c, r, lay) -> info on each system (r: its
  // right-hand sides in, its x out), and info.
  template <class F>
  std::vector<T> per_lane(int axis, std::vector<std::int32_t>* info, F&& solve_lane) const {
    lanes const l(shape, axis);
    std::vector<T> x(rhs.size());
    std::size_t const size = dl.size(), n = static_cast<std::size_t>(l.n);
    if (info) info->assign(static_cast<std::size_t>(l.count()), 0);
    for (std::int64_t k = 0; k < l.count(); ++k) {
      std::vector<T> a(n), b(n), c(n), r(n * nrhs);
      for (std::int64_t i = 0; i < l.n; ++i) {
        a[i] = dl[l.at(k, i)];
        b[i] = d[l.at(k, i)];
        c[i] = du[l.at(k, i)];
        for (std::int64_t j = 0; j < nrhs; ++j) r[j * n + i] = rhs[j * size + l.at(k, i)];
      }
      std::int32_t const one = solve_lane(a, b, c, r, layout::contiguous(l.n));
      if (info) (*info)[static_cast<std::size_t>(k)] = one;
      for (std::int64_t i = 0; i < l.n; ++i)
        for (std::int64_t j = 0; j < nrhs; ++j) x[j * size + l.at(k, i)] = r[j * n + i];
    }
    return x;
  }
  // x by reference::thomas (or cyclic_reduction), system by system, and info.
  std::vector<T> solve(int axis, bool cr, std::vector<std::int32_t>* info = nullptr) const {
    return per_lane(axis, info, [&](auto& a, auto& b, auto& c, auto& r, layout const& lay) {
      std::int32_t one = 0;
      if (cr)
        ref::cyclic_reduction<T>(a.data(), b.data(), c.data(), r.data(), r.data(), lay, nrhs, lay.n, &one);
      else
        ref::thomas<T>(a.data(), b.data(), c.data(), r.data(), r.data(), lay, nrhs, lay.n, &one);
      return one;
    });
  }
  // x by reference::solve_batched with `opt` (pivoting, periodic,
  // refinement), system by system, and info.
  std::vector<T> solve_with(int axis, recur::tridiag_options opt,
                            std::vector<std::int32_t>* info = nullptr) const {
    return per_lane(axis, info, [&](auto& a, auto& b, auto& c, auto& r, layout const& lay) {
      std::int32_t one = 0;
      opt.nrhs = nrhs;
      opt.info = &one;
      ref::solve_batched<T>(a.data(), b.data(), c.data(), r.data(), r.data(), lay, opt);
      return one;
    });
  }
  // Every system along `axis` gets a tiny first pivot: d_0 = 1e-14,
  // du_0 = dl_1 = 1 (the rest stays dominant).
  void tiny_first_pivot(int axis) {
    lanes const l(shape, axis);
    for (std::int64_t k = 0; k < l.count(); ++k) {
      d[l.at(k, 0)] = static_cast<T>(1e-14);
      du[l.at(k, 0)] = dl[l.at(k, 1)] = 1;
      d[l.at(k, 1)] = 3 + std::fabs(du[l.at(k, 1)]);
    }
  }
};

// x: the reference's bits on the CPU for a named algorithm, within
// tolerance of them otherwise (|x| <= max|rhs| for these rows, |d| > |dl| +
// |du| + 1).
template <class T>
void expect_solution(std::vector<T> const& got, std::vector<T> const& want, bool bitwise,
                     std::string const& what) {
  if (bitwise && !on_gpu())
    BOOST_TEST(same_bits(got, want), what << ": not the reference's bits");
  else
    expect_close(got, want, 1, what);
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_axis) {
  systems<double> const p({3, 40, 5}, 1, seed_for(801));
  p.save_all("a");
  for (int const axis : {2, 1, 0, -1, -2, -3}) {
    std::string const ax = " --axis " + std::to_string(axis);
    auto r = run("tridiag --algorithm thomas " + p.files("a") + " -o xa.npy" + ax);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    expect_solution(load<double>("xa.npy", p.shape), p.solve(axis, false), true, "thomas" + ax);
    r = run("tridiag --algorithm cr " + p.files("a") + " --output xc.npy" + ax);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    expect_solution(load<double>("xc.npy", p.shape), p.solve(axis, true), true, "cr" + ax);
    r = run("tridiag " + p.files("a") + " -o xd.npy" + ax);  // --algorithm auto
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    expect_solution(load<double>("xd.npy", p.shape), p.solve(axis, false), false, "auto" + ax);
  }
}

// --algorithm takes every name of recur::tridiag_algorithms, and each one
// solves these dominant systems (rd refuses them; --pivoting auto then
// solves them pivoted). Both options take "automatic" for "auto".
BOOST_AUTO_TEST_CASE(every_algorithm_by_name) {
  systems<double> const p({3, 64}, 1, seed_for(809));
  p.save_all("al");
  auto const want = p.solve(-1, false);
  std::vector<std::string> options;
  for (auto const a : recur::tridiag_algorithms)
    options.push_back(std::string("--algorithm ") + recur::to_string(a));
  options.push_back("--algorithm automatic --pivoting automatic");
  for (std::string const& o : options) {
    auto const r = run("tridiag " + o + " " + p.files("al") + " -o xal.npy");
    BOOST_TEST_REQUIRE(r.status == 0, o << ": " << r.err);
    expect_solution(load<double>("xal.npy", p.shape), want, false, o);
  }
}

BOOST_AUTO_TEST_CASE(one_system_and_several_rhs_f32) {
  systems<float> const one({64}, 1, seed_for(802));
  one.save_all("1");
  auto r = run("tridiag --algorithm thomas " + one.files("1") + " -o x1.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  expect_solution(load<float>("x1.npy", one.shape), one.solve(0, false), true, "one system");
  // Three right-hand sides per system, stacked first: (3, 6, 32) with the
  // systems along the last axis, and along the first (axis 0 of D's shape).
  systems<float> const many({6, 32}, 3, seed_for(803));
  many.save_all("k");
  r = run("tridiag --algorithm thomas " + many.files("k") + " -o xk.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  expect_solution(load<float>("xk.npy", many.rhs_shape), many.solve(-1, false), true, "3 rhs, axis -1");
  r = run("tridiag --algorithm thomas --axis 0 " + many.files("k") + " -o xk0.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  expect_solution(load<float>("xk0.npy", many.rhs_shape), many.solve(0, false), true, "3 rhs, axis 0");
}

// A zero pivot: that system is listed and NaN, the others solved, exit 3.
// A NaN or Inf in a right-hand side: listed and NaN likewise, exit 4.
BOOST_AUTO_TEST_CASE(breakdown_and_nonfinite_rhs) {
  systems<double> p({4, 3, 20}, 1, seed_for(804));
  p.d[static_cast<std::size_t>((1 * 3 + 2) * 20)] = 0;  // system [1, 2]: b_0 = 0
  p.save_all("z");
  auto r = run("tridiag --algorithm thomas --pivoting none " + p.files("z") + " -o xz.npy");
  BOOST_TEST(r.status == 3, r.err);
  BOOST_TEST(r.err.find("recur tridiag: system [1, 2]: broke down at index 0 along axis 2 (info 1") !=
                 std::string::npos,
             r.err);
  BOOST_TEST(r.err.find("xz.npy: written; 1 of 12 systems broke down") != std::string::npos, r.err);
  std::vector<std::int32_t> info;
  auto const want = p.solve(-1, false, &info);
  BOOST_TEST(info[5] == 1);
  auto const x = load<double>("xz.npy", p.shape);
  expect_solution(x, want, true, "a broken-down system");
  for (int i = 0; i < 20; ++i) BOOST_TEST(std::isnan(x[100 + i]));

  systems<double> q({4, 3, 20}, 1, seed_for(805));
  q.rhs[static_cast<std::size_t>((2 * 3 + 0) * 20 + 7)] = std::numeric_limits<double>::quiet_NaN();
  q.rhs[static_cast<std::size_t>((3 * 3 + 1) * 20 + 19)] = -std::numeric_limits<double>::infinity();
  q.save_all("n");
  r = run("tridiag " + q.files("n") + " -o xn.npy");
  BOOST_TEST(r.status == 4, r.err);
  BOOST_TEST(
      r.err.find("recur tridiag: bn.npy: system [2, 0]: element 7 along axis 2 is nan; its x is NaN") !=
          std::string::npos,
      r.err);
  BOOST_TEST(r.err.find("recur tridiag: bn.npy: system [3, 1]: element 19 along axis 2 is -inf") !=
                 std::string::npos,
             r.err);
  auto const xn = load<double>("xn.npy", q.shape);
  auto wantn = q.solve(-1, false);
  for (std::size_t i : {120, 200})
    for (std::size_t j = i; j < i + 20; ++j) wantn[j] = std::numeric_limits<double>::quiet_NaN();
  expect_solution(xn, wantn, false, "non-finite right-hand sides");

  // Both at once: the breakdown's status, 3.
  p.rhs[3] = std::numeric_limits<double>::infinity();
  p.save_all("zn");
  r = run("tridiag --pivoting none " + p.files("zn") + " -o xzn.npy");
  BOOST_TEST(r.status == 3, r.err);
  BOOST_TEST(
      r.err.find("1 of 12 systems broke down, 1 of 12 right-hand sides hold NaN or Inf") != std::string::npos,
      r.err);
}

// RD refuses long diagonally dominant systems by its own accuracy check,
// and the message says so (not "a zero pivot"); Thomas's breakdown names
// the pivot. (--pivoting none: auto would re-solve them pivoted.)
BOOST_AUTO_TEST_CASE(rd_breakdown_names_its_cause) {
  systems<double> const p({3, 64}, 1, seed_for(806));
  p.save_all("rd");
  for (char const* alg : {"rd", "cr_rd"}) {
    auto const r =
        run(std::string("tridiag --pivoting none --algorithm ") + alg + " " + p.files("rd") + " -o xrd.npy");
    BOOST_TEST(r.status == 3, alg << ": " << r.err);
    BOOST_TEST(r.err.find("recursive doubling is unstable for this system") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("zero or non-finite pivot") == std::string::npos, r.err);
  }
  systems<double> q({2, 20}, 1, seed_for(807));
  q.d[0] = 0;
  q.save_all("th");
  auto r = run("tridiag --pivoting none --algorithm thomas " + q.files("th") + " -o xth.npy");
  BOOST_TEST(r.status == 3, r.err);
  BOOST_TEST(r.err.find("(info 1: a zero or non-finite pivot)") != std::string::npos, r.err);
  // Under --pivoting auto (the default) the systems RD refuses are solved
  // again pivoted, and a breakdown is partial pivoting's: system 0 with a
  // zero first column (b_0 = a_1 = 0) is singular.
  for (char const* alg : {"rd", "cr_rd"}) {
    r = run(std::string("tridiag --algorithm ") + alg + " " + p.files("rd") + " -o xrda.npy");
    BOOST_TEST_REQUIRE(r.status == 0, alg << ": " << r.err);
    expect_solution(load<double>("xrda.npy", p.shape), p.solve(-1, false), false, alg);
  }
  q.dl[1] = 0;
  q.save_all("sg");
  r = run("tridiag --algorithm rd " + q.files("sg") + " -o xsg.npy");
  BOOST_TEST(r.status == 3, r.err);
  BOOST_TEST(
      r.err.find("recur tridiag: system [0]: broke down at index 0 along axis 1 (info 1: a zero or "
                 "non-finite pivot with partial pivoting: the matrix is singular to working precision)") !=
          std::string::npos,
      r.err);
  BOOST_TEST(r.err.find("recursive doubling") == std::string::npos, r.err);
}

// Bondeli's algorithm: both devices solve with it (to rounding Thomas's
// solution).
BOOST_AUTO_TEST_CASE(bondeli) {
  systems<double> const p({5, 300}, 2, seed_for(808));
  p.save_all("bo");
  auto const r = run("tridiag --algorithm bondeli " + p.files("bo") + " -o xbo.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  expect_solution(load<double>("xbo.npy", p.rhs_shape), p.solve(-1, false), false, "bondeli");
}

// --pivoting: the default (auto) pivots the systems with a tiny first
// pivot and gives the pivoted reference's x; none gives Thomas' (far off);
// partial the pivoted reference's too (on the GPU: to rounding).
BOOST_AUTO_TEST_CASE(pivoting) {
  systems<double> p({3, 40}, 2, seed_for(806));
  p.tiny_first_pivot(-1);
  p.save_all("t");
  recur::tridiag_options partial;
  partial.pivoting = recur::tridiag_pivoting::partial;
  auto const pivoted = p.solve_with(-1, partial), plain = p.solve(-1, false);
  auto r = run("tridiag " + p.files("t") + " -o xt.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const xt = load<double>("xt.npy", p.rhs_shape);
  r = run("tridiag --pivoting none " + p.files("t") + " -o xn.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto const xn = load<double>("xn.npy", p.rhs_shape);
  if (on_gpu()) {
    expect_solution(xt, pivoted, true, "auto");
  } else {
    BOOST_TEST(same_bits(xt, pivoted), "auto: not the pivoted reference's bits");
    BOOST_TEST(same_bits(xn, plain), "none: not Thomas' bits");
  }
  double off = 0;
  for (std::size_t i = 0; i < xn.size(); ++i) off = std::max(off, std::fabs(xn[i] - pivoted[i]));
  BOOST_TEST(off > 1e-6 * max_abs(pivoted), "pivoting none is accurate here: not the tiny-pivot case");
  r = run("tridiag --pivoting partial --algorithm thomas " + p.files("t") + " -o xp.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  expect_solution(load<double>("xp.npy", p.rhs_shape), pivoted, true, "partial");
  // A singular system (a zero column) breaks down with pivoting too: exit 3.
  systems<double> q({2, 5, 12}, 1, seed_for(807));
  lanes const l(q.shape, -1);
  std::int64_t const k = 7;  // system [1, 2]
  q.du[l.at(k, 5)] = q.d[l.at(k, 6)] = q.dl[l.at(k, 7)] = 0;
  q.save_all("s");
  r = run("tridiag " + q.files("s") + " -o xs.npy");
  BOOST_TEST(r.status == 3, r.err);
  // LAPACK's row on the CPU; the GPU's parallel forms may name an earlier one.
  std::string const said = on_gpu()
                               ? "recur tridiag: system [1, 2]: broke down at index "
                               : "recur tridiag: system [1, 2]: broke down at index 6 along axis 2 (info 7";
  BOOST_TEST(r.err.find(said) != std::string::npos, r.err);
}

// --periodic and --refine: the reference's x (reference::solve_batched), on
// both devices.
BOOST_AUTO_TEST_CASE(periodic_and_refine) {
  systems<double> p({4, 50}, 3, seed_for(808));
  p.save_all("p");
  for (std::string const flags : {"--periodic", "--refine", "--periodic --refine --pivoting partial"}) {
    recur::tridiag_options opt;
    opt.periodic = flags.find("--periodic") != std::string::npos;
    if (flags.find("--refine") != std::string::npos) opt.refinement = recur::tridiag_refinement::mixed;
    if (flags.find("partial") != std::string::npos) opt.pivoting = recur::tridiag_pivoting::partial;
    auto const r = run("tridiag " + flags + " --axis 0 " + p.files("p") + " -o xper.npy");
    BOOST_TEST_REQUIRE(r.status == 0, flags << ": " << r.err);
    expect_solution(load<double>("xper.npy", p.rhs_shape), p.solve_with(0, opt), true, flags);
  }
  // --device auto: the GPU where there is one, to rounding the reference's x.
  auto const r = recur_cli("tridiag --periodic " + p.files("p") + " -o xauto.npy --device auto");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  recur::tridiag_options periodic;
  periodic.periodic = true;
  expect_close(load<double>("xauto.npy", p.rhs_shape), p.solve_with(-1, periodic), 1, "--device auto");
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------- poisson --

BOOST_AUTO_TEST_SUITE(cli_poisson)

// The manufactured solution of recur poisson (examples/multigrid/poisson.hpp)
// on an nx x ny grid, row by row.
std::vector<double> poisson_exact(std::int64_t nx, std::int64_t ny) {
  double const pi = 3.14159265358979323846;
  std::vector<double> u(static_cast<std::size_t>(nx * ny), 0.0);
  for (std::int64_t j = 1; j + 1 < ny; ++j)
    for (std::int64_t i = 1; i + 1 < nx; ++i) {
      double const x = static_cast<double>(i) / static_cast<double>(nx - 1);
      double const y = static_cast<double>(j) / static_cast<double>(ny - 1);
      u[static_cast<std::size_t>(j * nx + i)] = std::sin(pi * x) * std::sin(pi * y) * std::exp(x + 2 * y);
    }
  return u;
}

double max_difference(std::vector<double> const& a, std::vector<double> const& b) {
  double m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) m = std::max(m, std::fabs(a[k] - b[k]));
  return m;
}

// Converged solutions within the discretisation error of the exact one
// (about 1.5 h^2 max |u| for this u: below 5e-3 at 33 points), double and
// mixed precision the same to far less than that; one progress line per
// V-cycle, one per outer step for mixed (one float V-cycle each by default).
BOOST_AUTO_TEST_CASE(converges_to_the_manufactured_solution) {
  std::vector<double> const exact = poisson_exact(33, 17);
  std::vector<double> u[2];
  char const* const precisions[] = {"double", "mixed"};
  for (int k = 0; k < 2; ++k) {
    std::string const out = std::string("poisson_") + precisions[k] + ".npy";
    auto const r = run("poisson --n 33 --ny 17 --eps 0.01 --smoother alternating --precision " +
                       std::string(precisions[k]) + " -o " + out);
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
    BOOST_TEST(
        r.out.find("33 x 17 points (465 unknowns), eps = 0.01, alternating smoother") != std::string::npos,
        r.out);
    BOOST_TEST(r.out.find("\nconverged: ") != std::string::npos, r.out);
    BOOST_TEST(r.out.find(k == 0 ? "\ncycle    1  residual " : "\ncycle    1  outer   1  residual ") !=
                   std::string::npos,
               r.out);
    u[k] = load<double>(out, {17, 33});
    BOOST_TEST(max_difference(u[k], exact) < 5e-3, precisions[k]);
  }
  BOOST_TEST(max_difference(u[0], u[1]) < 1e-7);
  auto const r = run("poisson --n 33 --ny 17 --eps 0.01 --precision mixed --inner-cycles 2 -o inner2.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.out.find("\ncycle    2  outer   1  residual ") != std::string::npos, r.out);
  BOOST_TEST(max_difference(load<double>("inner2.npy", {17, 33}), u[0]) < 1e-7);
}

// --profile: the finest grid's x-line and y-line solves timed (4 + 4 per
// V-cycle with the alternating smoother, as many x as y) against a copy of
// their bytes (4 values per unknown).
BOOST_AUTO_TEST_CASE(profile) {
  auto const r = run("poisson --n 33 --precision double --tol 1e-6 --profile -o prof.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.out.find("\nfinest-grid line solves (double, 31 x 31 unknowns; 0.0 MB") != std::string::npos,
             r.out);
  int const cycles = std::stoi(r.out.substr(r.out.find("converged: ") + 11));
  for (char const* what : {"  x-lines ", "  y-lines "}) {
    auto const at = r.out.find(what);
    BOOST_TEST_REQUIRE(at != std::string::npos, r.out);
    std::string const rest = r.out.substr(at);
    char count[32];
    std::snprintf(count, sizeof count, "(median of %3d)", 2 * cycles);
    BOOST_TEST(rest.find(count) < rest.find('\n'), rest);
    BOOST_TEST(rest.find("% of copy") < rest.find('\n'), rest);
  }
  BOOST_TEST(r.out.find("\n  copy ") != std::string::npos, r.out);
}

// Not converged within --max-cycles: status 3, the solution written anyway.
BOOST_AUTO_TEST_CASE(not_converged) {
  auto const r =
      run("poisson --n 65 --eps 0.001 --smoother jacobi --precision double --max-cycles 3 -o pj.npy");
  BOOST_TEST(r.status == 3, r.err);
  BOOST_TEST(r.out.find("not converged: --max-cycles 3 reached") != std::string::npos, r.out);
  BOOST_TEST(load<double>("pj.npy", {65, 65}).size() == 65u * 65u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------- heat --

BOOST_AUTO_TEST_SUITE(cli_heat)

// recur heat from the mode sin(2 pi x) sin(pi y): u after N steps is g^N
// times the mode, g the Peaceman-Rachford factor (examples/heat/heat.hpp),
// to rounding; a progress line every --every steps and after the last.
BOOST_AUTO_TEST_CASE(mode_decays_by_the_schemes_factor) {
  std::int64_t const nx = 16, ny = 9, steps = 10;
  double const dt = 1e-3, pi = 3.14159265358979323846, hx = 1.0 / nx, hy = 1.0 / (ny - 1);
  auto const r = run("heat --nx 16 --ny 9 --dt 1e-3 --steps 10 --every 4 --kx 1 --ky 0.5 -o heat.npy");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.out.find("recur heat: 16 x 9 points, kx = 1, ky = 0.5, dt = 0.001") != std::string::npos,
             r.out);
  for (char const* s : {"\nstep      4  t 4.0000e-03  max|u| ", "\nstep      8  ", "\nstep     10  "})
    BOOST_TEST(r.out.find(s) != std::string::npos, "lacks '" << s << "': " << r.out);
  BOOST_TEST(r.out.find("\nstep     12") == std::string::npos, r.out);
  double const sx = 4 * std::pow(std::sin(pi * hx), 2), sy = 4 * std::pow(std::sin(pi * hy / 2), 2);
  double const rx = dt / (2 * hx * hx) * sx, ry = 0.5 * dt / (2 * hy * hy) * sy;
  double const g = std::pow((1 - rx) * (1 - ry) / ((1 + rx) * (1 + ry)), steps);
  std::vector<double> expected(static_cast<std::size_t>(nx * ny), 0.0);
  for (std::int64_t j = 1; j + 1 < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i)
      expected[static_cast<std::size_t>(j * nx + i)] =
          g * std::sin(2 * pi * static_cast<double>(i) * hx) * std::sin(pi * static_cast<double>(j) * hy);
  BOOST_TEST(cli_poisson::max_difference(load<double>("heat.npy", {ny, nx}), expected) < 1e-13);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------- errors and help --

BOOST_AUTO_TEST_SUITE(cli_errors)

// Every failure: its exit status (1 an input or a run failed, 2 the command
// line is wrong), "recur CMD: SUBJECT: message" naming the option or file,
// and no output file.
BOOST_AUTO_TEST_CASE(errors) {
  save<double>("ex.npy", {2, 8}, std::vector<double>(16, 1.0));
  save<float>("ex32.npy", {2, 8}, std::vector<float>(16, 1.0f));
  save<double>("ex3.npy", {3, 8}, std::vector<double>(24, 1.0));
  save<std::int16_t>("ei16.npy", {2, 8}, std::vector<std::int16_t>(16, 3));
  save<std::int32_t>("ei32.npy", {2, 8}, std::vector<std::int32_t>(16, 3));
  save<double>("escalar.npy", {}, {1.0});
  save<double>("esos5.npy", {5}, {1, 0, 0, 1, 0});
  save<double>("esos_a0.npy", {1, 6}, {1, 0, 0, 0, 0.5, 0});
  save<std::int32_t>("esos_int.npy", {1, 6}, {1, 0, 0, 1, 0, 0});
  save<double>("ei2.npy", {3}, {0, 0, 0});
  save<double>("erhs.npy", {2, 2, 9}, std::vector<double>(36, 1.0));
  std::string const tri = "ex.npy ex.npy ex.npy ex.npy";
  std::vector<failure> const cases = {
      {"filter --b 1 ei16.npy OUT", 1, "ei16.npy: holds int16; float32 or float64 is needed"},
      {"filter --b 1 --a 0,1 ex.npy OUT", 1, "--a: a[0] = 0"},
      {"filter --b 1,nan ex.npy OUT", 1, "--b: b[1] = nan is not finite"},
      {"filter ex.npy OUT", 2, "--b: is required"},
      {"filter --b 1,,2 ex.npy OUT", 2, "--b: needs numbers separated by commas"},
      {"filter --b 1 --a 1,x ex.npy OUT", 2, "--a: needs numbers"},
      {"filter --b 1 ex.npy", 2, "IN OUT: 2 arguments are needed, 1 given"},
      {"filter --b 1 ex.npy OUT extra", 2, "extra: unexpected argument"},
      {"filter --b 1 ex.npy OUT --axis 2", 1, "--axis: 2 is out of range for ex.npy of shape (2, 8)"},
      {"filter --b 1 ex.npy OUT --axis -3", 1, "--axis: -3 is out of range"},
      {"filter --b 1 ex.npy OUT --axis one", 2, "--axis: needs an integer, not 'one'"},
      // An option that needs a value and is the last word (--device first:
      // the device flag appended after it would be its value).
      {"filter --device cpu --b 1 ex.npy OUT --axis", 2, "--axis: needs a value, and no word follows it"},
      {"filter --device cpu ex.npy OUT --b", 2, "--b: needs a value, and no word follows it"},
      {"tridiag --device cpu " + tri + " -o", 2, "--output: needs a value, and no word follows it"},
      // The word after an option that needs a value is its value.
      {"filter --b 1 --axis --a ex.npy OUT", 2, "--axis: needs an integer, not '--a'"},
      {"filter --b 1 --axis 0 --axis 1 ex.npy OUT", 2, "--axis: given twice"},
      {"filter --b 1 escalar.npy OUT", 1, "escalar.npy: is a scalar"},
      {"filter --b 1 missing.npy OUT", 1, "missing.npy: cannot open"},
      {"filter --b 1 --frobnicate ex.npy OUT", 2, "--frobnicate: unknown option"},
      {"sosfilt ex.npy OUT", 2, "--sos: is required"},
      {"sosfilt --sos esos5.npy ex.npy OUT", 1, "esos5.npy: has shape (5,); (n_sections, 6)"},
      {"sosfilt --sos esos_int.npy ex.npy OUT", 1, "esos_int.npy: holds int32; float32 or float64 is needed"},
      {"sosfilt --sos esos_a0.npy ex.npy OUT", 1, "esos_a0.npy: sos[0][3] = 0 (a0 of section 0)"},
      {"sosfilt --sos ex.npy ei16.npy OUT", 1, "ex.npy: has shape (2, 8)"},
      {"dpcm ei16.npy OUT", 2, "ei16.npy: is not encode or decode"},
      {"dpcm", 2, "MODE: encode or decode is needed"},
      {"dpcm encode --order 7 ei16.npy OUT", 2, "--order: 7 has no fixed predictor"},
      {"dpcm encode --order x ei16.npy OUT", 2, "--order: needs an integer"},
      {"dpcm encode --order 3 --coeffs 1,2 ei16.npy OUT", 2, "--order: 3 but --coeffs gives 2 coefficients"},
      {"dpcm encode --coeffs 0.5 ei16.npy OUT", 1,
       "--coeffs: ei16.npy holds int16, whose codec needs integer"},
      {"dpcm encode --coeffs 1 --shift 63 ei16.npy OUT", 2, "--shift: must be 0 to 62, not 63"},
      {"dpcm encode --coeffs 1 --shift 1 ex.npy OUT", 1, "--shift: 1 applies to integer arrays"},
      {"dpcm decode --coeffs 2147483648,1 ei32.npy OUT", 1, "--coeffs: sum |c_j| exceeds 2^31"},
      {"dpcm encode --coeffs nan ex.npy OUT", 1, "--coeffs: c[0] = nan is not finite"},
      {"dpcm encode ei16.npy", 2, "MODE IN OUT: 3 arguments are needed, 2 given"},
      {"linrec 0.5 1 OUT", 2, "S T: both are numbers"},
      {"linrec ex.npy ex32.npy OUT", 1, "ex32.npy: holds float32 but ex.npy holds float64"},
      {"linrec ex.npy ex3.npy OUT", 1, "ex3.npy: has shape (3, 8) but ex.npy has (2, 8)"},
      {"linrec ei16.npy 1 OUT", 1, "ei16.npy: holds int16; float32 or float64 is needed"},
      {"linrec 0.5 ex.npy OUT --init ei2.npy", 1,
       "--init: ei2.npy has shape (3,); one value per sequence, shape (2,)"},
      {"linrec 0.5 ex.npy OUT --axis 0 --init ei2.npy", 1,
       "--init: ei2.npy has shape (3,); one value per sequence, shape (8,)"},
      {"linrec 0.5 nothere.npy OUT", 1, "nothere.npy: cannot open"},
      {"linrec --reverse=1 0.5 ex.npy OUT", 2, "--reverse: takes no value"},
      {"linrec 0.5 ex.npy", 2, "S T OUT: 3 arguments are needed, 2 given"},
      {"tridiag " + tri, 2, "--output: is required"},
      {"tridiag ex.npy ex.npy ex.npy -o OUT", 2, "DL D DU RHS: 4 arguments are needed, 3 given"},
      {"tridiag --algorithm gauss " + tri + " -o OUT", 2,
       "--algorithm: must be one of " + algorithm_names() + ", not 'gauss'"},
      {"tridiag ex32.npy ex.npy ex.npy ex.npy -o OUT", 1,
       "ex32.npy: holds float32 but ex.npy (D) holds float64"},
      {"tridiag ex.npy ex.npy ex3.npy ex.npy -o OUT", 1,
       "ex3.npy: has shape (3, 8) but ex.npy (D) has (2, 8)"},
      {"tridiag ex.npy ex.npy ex.npy ex3.npy -o OUT", 1,
       "ex3.npy: has shape (3, 8); with diagonals of shape (2, 8)"},
      {"tridiag ex.npy ex.npy ex.npy erhs.npy -o OUT", 1, "erhs.npy: has shape (2, 2, 9)"},
      {"tridiag ei16.npy ex.npy ex.npy ex.npy -o OUT", 1, "ei16.npy: holds int16"},
      {"tridiag " + tri + " -o OUT --axis 5", 1, "--axis: 5 is out of range for ex.npy of shape (2, 8)"},
      {"tridiag " + tri + " -o OUT --device tpu", 2, "--device: must be cpu, gpu or auto, not 'tpu'"},
      {"tridiag --pivoting sideways " + tri + " -o OUT", 2,
       "--pivoting: must be one of auto, none, partial, not 'sideways'"},
      {"tridiag --periodic=1 " + tri + " -o OUT", 2, "--periodic: takes no value"},
      {"tridiag --refine ex32.npy ex32.npy ex32.npy ex32.npy -o OUT --device cpu", 1,
       "--refine: needs float64 arrays; ex32.npy holds float32"},
      {"tridiag --pivoting partial --algorithm cr " + tri + " -o OUT --device cpu", 1,
       "--pivoting: pivoting = partial needs algorithm = auto or thomas (algorithm = cr)"},
      {"tridiag --periodic --algorithm pcr " + tri + " -o OUT --device cpu", 1,
       "--periodic: periodic = true needs algorithm = auto or thomas (algorithm = pcr)"},
      {"tridiag --periodic --axis 0 " + tri + " -o OUT --device cpu", 1,
       "--periodic: periodic = true needs n >= 3 (n = 2)"},
      {"poisson --n 30 -o OUT", 1, "--n: nx = 30: the points per side must be 2^k + 1"},
      {"poisson --n 33 --ny 10 -o OUT", 1, "--ny: ny = 10: the points per side must be 2^k + 1"},
      {"poisson --n x -o OUT", 2, "--n: needs an integer, not 'x'"},
      {"poisson --n 33 --eps 0 -o OUT", 1, "--eps: eps = 0"},
      {"poisson --n 33 --eps abc -o OUT", 2, "--eps: needs a number, not 'abc'"},
      {"poisson --n 33 --smoother gauss -o OUT", 2,
       "--smoother: must be one of jacobi, x, y, alternating, not 'gauss'"},
      {"poisson --n 33 --precision half -o OUT", 2, "--precision: must be one of double, single, mixed"},
      {"poisson --n 33 --steps 0 -o OUT", 1, "--steps: pre_steps = 0, post_steps = 0"},
      {"poisson --n 33 --tol 2 -o OUT", 1, "--tol: tol = 2"},
      {"poisson --n 33 --max-cycles 0 -o OUT", 1, "--max-cycles: max_cycles = 0"},
      {"poisson --n 33 --guess one -o OUT", 2, "--guess: must be zero or random, not 'one'"},
      {"poisson --n 33 --inner-cycles 0 -o OUT", 1, "--inner-cycles: inner_cycles = 0"},
      {"poisson extra -o OUT", 2, "extra: unexpected argument"},
      {"heat --nx 2 -o OUT", 1, "--nx: nx = 2: the periodic direction needs at least 3 points"},
      {"heat --ny 2 -o OUT", 1, "--ny: ny = 2: needs at least 3 points"},
      {"heat --nx x -o OUT", 2, "--nx: needs an integer, not 'x'"},
      {"heat --nx 16 --ny 9 --dt 0 -o OUT", 1, "--dt: dt = 0: must be positive and finite"},
      {"heat --nx 16 --ny 9 --dt abc -o OUT", 2, "--dt: needs a number, not 'abc'"},
      {"heat --nx 16 --ny 9 --kx -1 -o OUT", 1, "--kx: kx = -1: must be non-negative and finite"},
      {"heat --nx 16 --ny 9 --ky nan -o OUT", 1, "--ky: ky = nan"},
      {"heat --nx 16 --ny 9 --p 8 -o OUT", 1, "--p: p = 8: must satisfy 1 <= p < nx / 2"},
      {"heat --nx 16 --ny 9 --q 0 -o OUT", 1, "--q: q = 0: must lie in 1 .. ny - 2 = 7"},
      {"heat --nx 16 --ny 9 --steps -1 -o OUT", 1, "--steps: steps = -1: must not be negative"},
      {"heat --nx 16 --ny 9 --every -2 -o OUT", 1, "--every: every = -2: must not be negative"},
      {"heat --nx 16 --ny 9 --precision mixed -o OUT", 2,
       "--precision: must be one of double, single, not 'mixed'"},
      {"heat extra -o OUT", 2, "extra: unexpected argument"},
      {"demo extra", 2, "extra: unexpected argument"},
      {"demo --cpu", 2, "--cpu: unknown option"},
  };
  // The tests' device, except for the case that names another.
  std::vector<failure> on_device, fixed;
  for (auto const& f : cases) (f.args.find("--device") == std::string::npos ? on_device : fixed).push_back(f);
  expect_failures(on_device, " --device " + device);
  expect_failures(fixed, "");
}

BOOST_AUTO_TEST_CASE(unknown_commands) {
  auto r = recur_cli("frobnicate");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("recur: frobnicate: unknown command") != std::string::npos, r.err);
  r = recur_cli("--frobnicate");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("recur: --frobnicate: unknown option") != std::string::npos, r.err);
  r = recur_cli("");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("recur: no command given") != std::string::npos, r.err);
  r = recur_cli("help frobnicate");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err.find("recur: frobnicate: unknown command") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(help) {
  auto const top = recur_cli("--help");
  BOOST_TEST(top.status == 0);
  BOOST_TEST(recur_cli("help").out == top.out);
  for (char const* cmd : {"demo", "linrec", "filter", "sosfilt", "dpcm", "tridiag", "poisson", "heat"}) {
    std::string const c = cmd;
    BOOST_TEST(top.out.find("\n  " + c + " ") != std::string::npos, "recur --help lacks " << c);
    auto const h = recur_cli(c + " --help");
    BOOST_TEST(h.status == 0);
    // Its own text: the usage line, its options, an example, the exit statuses.
    for (std::string const& part :
         std::vector<std::string>{"usage: recur " + c, "\noptions:\n", "--device D",
                                  "\nexample:\n  recur " + c, "\nexit status:\n  0  "})
      BOOST_TEST(h.out.find(part) != std::string::npos, "recur " << c << " --help lacks '" << part << "'");
    BOOST_TEST(recur_cli("help " + c).out == h.out);
    BOOST_TEST(recur_cli(c + " -h").out == h.out);
  }
  BOOST_TEST(recur_cli("filter --help").out.find("--b B0,B1,...") != std::string::npos);
  BOOST_TEST(recur_cli("linrec --help").out.find("--reverse") != std::string::npos);
  auto const t = recur_cli("tridiag --help").out;
  for (char const* s : {"--axis N", "--pivoting P", "--periodic", "--refine", "  3  some system broke down",
                        "  4  no system broke down"})
    BOOST_TEST(t.find(s) != std::string::npos, "recur tridiag --help lacks '" << s << "'");
  // The algorithms' names, wrapped over lines: compared with the words of
  // the help joined by single spaces.
  std::string words;
  for (char const c : t)
    if (!std::isspace(static_cast<unsigned char>(c)))
      words += c;
    else if (!words.empty() && words.back() != ' ')
      words += ' ';
  BOOST_TEST(words.find(algorithm_names()) != std::string::npos,
             "recur tridiag --help lacks '" << algorithm_names() << "'");
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------- device --

BOOST_AUTO_TEST_SUITE(cli_device)

// auto (the default) is the GPU when there is one, else the CPU: its output
// is that device's, bit for bit. --device gpu without a device (or for what
// the GPU does not run) is an error naming --device gpu.
BOOST_AUTO_TEST_CASE(auto_and_gpu) {
  bool const gpu_present = recur::cuda_device_count() > 0;
  std::vector<std::int64_t> const shape = {4, 33};
  save("dx.npy", shape, random_reals<float>(132, seed_for(901)));
  BOOST_TEST_REQUIRE(recur_cli("filter --b 1,2 --a 1,-0.5 dx.npy dauto.npy").status == 0);
  BOOST_TEST_REQUIRE(recur_cli("filter --b 1,2 --a 1,-0.5 dx.npy dexp.npy --device " +
                               std::string(gpu_present ? "gpu" : "cpu"))
                         .status == 0);
  BOOST_TEST(same_bits(load<float>("dauto.npy", shape), load<float>("dexp.npy", shape)));
  BOOST_TEST_REQUIRE(recur_cli("filter --b 1,2 --a 1,-0.5 dx.npy dauto2.npy --device auto").status == 0);
  BOOST_TEST(same_bits(load<float>("dauto2.npy", shape), load<float>("dexp.npy", shape)));
  std::string const nine = "filter --b 1,0,0,0,0,0,0,0,0,1 dx.npy OUT --device gpu";
  if (!gpu_present) {
    expect_failures({{"filter --b 1 dx.npy OUT --device gpu", 1, "--device gpu: "},
                     {"tridiag dx.npy dx.npy dx.npy dx.npy -o OUT --device gpu", 1, "--device gpu: "},
                     {"demo --device gpu", 1, "--device gpu: "},
                     {"poisson --n 33 -o OUT --device gpu", 1, "--device gpu: "},
                     {"heat --nx 16 --ny 9 -o OUT --device gpu", 1, "--device gpu: "}},
                    "");
  } else {
    expect_failures({{nine, 1, "--device gpu: the GPU filters orders 0 to 8; --b and --a give order 9"},
                     {"dpcm encode --coeffs 1,1,1,1,1,1,1,1,1 dx.npy OUT --device gpu", 1,
                      "--device gpu: the GPU codes with orders 0 to 8; --coeffs gives order 9"}},
                    "");
  }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

bool init_unit_test() {
  boost::unit_test::framework::master_test_suite().p_name.value = "recur_cli";
  return true;
}

}  // namespace

// "--device gpu" or "--device cpu" (default) before Boost.Test's arguments
// picks the device every command runs on (common/device_main.hpp).
int main(int argc, char* argv[]) {
  return recur_test::device_test_main(argc, argv, "test_cli", &init_unit_test,
                                      [](bool gpu) { device = gpu ? "gpu" : "cpu"; });
}
