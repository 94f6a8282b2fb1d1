// Which agent recur::device::linrec runs (choose_linrec_agent), host logic
// only: `automatic` takes the rows agent from linrec_rows_min_count(SMs)
// sequences of at least linrec_rows_min_n() elements, each contiguous in
// memory (element stride 1, or -1 for a mirrored reverse call; any batch
// stride), with s, t and w congruent modulo 16 bytes; the stripes agent
// interleaved batches of a stripe per SM or more where the policy has
// stripes; the look-back forms everywhere else. linrec_adjoint's problems by
// the same rules, every array it reads or writes congruent. The problems'
// arrays are addresses only, never read.
#include <cstdint>

#include <boost/test/unit_test.hpp>
#include <recur/kernels/dispatch/dispatch_linrec.cuh>

namespace {

using recur::layout;
using recur::linrec_variant;
using recur::detail::linrec_adjoint_problem;
using recur::detail::linrec_problem;
namespace k = recur::kernels;

// s, t and w at 1 MiB boundaries, w shifted by `w_shift` bytes.
template <class T>
linrec_problem<T> at(layout lay, std::uintptr_t w_shift = 0) {
  linrec_problem<T> p;
  p.s = reinterpret_cast<T const*>(std::uintptr_t{1} << 20);
  p.t = reinterpret_cast<T const*>(std::uintptr_t{2} << 20);
  p.w = reinterpret_cast<T*>((std::uintptr_t{3} << 20) + w_shift);
  p.lay = lay;
  return p;
}

template <class T>
void rows_reach() {
  for (int const sms : {78, 108, 114, 132}) {
    std::int64_t const c = k::linrec_rows_min_count<T>(sms), m = k::linrec_rows_min_n<T>();
    auto const agent = [&](linrec_problem<T> const& p, linrec_variant v = linrec_variant::automatic) {
      return k::choose_linrec_agent(p, v, sms);
    };
    auto const rows = k::linrec_agent::rows;
    BOOST_TEST((agent(at<T>(layout::contiguous(m, c))) == rows));
    BOOST_TEST((agent(at<T>(layout::contiguous(m + 3, 2 * c + 1))) == rows));
    BOOST_TEST((agent(at<T>(layout::contiguous(m, c - 1))) == k::linrec_agent::tiles));
    BOOST_TEST((agent(at<T>(layout::contiguous(m - 1, c))) == k::linrec_agent::tiles));
    BOOST_TEST((agent(at<T>(layout::strided(m + 1, c, 1, m + 6))) == rows));                    // gaps
    BOOST_TEST((agent(recur::detail::mirrored(at<T>(layout::contiguous(m + 1, c)))) == rows));  // reverse
    BOOST_TEST((agent(at<T>(layout::strided(m, c, 2, 2 * m))) == k::linrec_agent::tiles));
    BOOST_TEST((agent(at<T>(layout::contiguous(m, c), sizeof(T))) == k::linrec_agent::tiles));  // w's phase
    BOOST_TEST((agent(at<T>(layout::contiguous(m, c), 16)) == rows));
    auto scalar_s = at<T>(layout::contiguous(m, c));
    scalar_s.s = nullptr;
    scalar_s.s_value = T(0.5);
    BOOST_TEST((agent(scalar_s) == rows));
    BOOST_TEST(
        (agent(at<T>(layout::contiguous(m, c)), linrec_variant::single_pass) == k::linrec_agent::tiles));
    BOOST_TEST((agent(at<T>(layout::contiguous(m, c)), linrec_variant::pipelined) == k::linrec_agent::pipe));
    BOOST_TEST((agent(at<T>(layout::interleaved(m, c))) == k::linrec_agent::lanes));
  }
}

// Interleaved batches (batch stride 1): stripes from one stripe per SM on,
// lanes below, whatever the variant but three_kernel.
template <class T>
void stripes_reach() {
  if constexpr (!k::linrec_has_stripes<k::linrec_policy<T>>) {
    // No stripes policy: interleaved batches of any width take the lanes agent.
    BOOST_TEST((k::choose_linrec_agent(at<T>(layout::interleaved(1000, 1 << 20)), linrec_variant::automatic,
                                       132) == k::linrec_agent::lanes));
    return;
  }
  for (int const sms : {78, 108, 114, 132}) {
    std::int64_t const c = k::linrec_stripes_min_count<T>(sms);
    auto const agent = [&](linrec_problem<T> const& p, linrec_variant v = linrec_variant::automatic) {
      return k::choose_linrec_agent(p, v, sms);
    };
    BOOST_TEST((agent(at<T>(layout::interleaved(1000, c))) == k::linrec_agent::stripes));
    BOOST_TEST((agent(at<T>(layout::interleaved(3, 2 * c + 1))) == k::linrec_agent::stripes));
    BOOST_TEST((agent(at<T>(layout::interleaved(1000, c - 1))) == k::linrec_agent::lanes));
    BOOST_TEST(
        (agent(at<T>(layout::strided(1000, c, c + 7, 1))) == k::linrec_agent::stripes));  // padded rows
    BOOST_TEST(
        (agent(recur::detail::mirrored(at<T>(layout::interleaved(1000, c)))) == k::linrec_agent::stripes));
    BOOST_TEST(
        (agent(at<T>(layout::interleaved(1000, c)), linrec_variant::pipelined) == k::linrec_agent::stripes));
    BOOST_TEST((agent(at<T>(layout::interleaved(1000, c)), linrec_variant::three_kernel) ==
                k::linrec_agent::three_kernel));
    BOOST_TEST((agent(at<T>(layout::interleaved(1, c))) == k::linrec_agent::tiles));  // n = 1
  }
}

// An adjoint in the order it runs (a reverse call's; mirrored: a forward
// call's): s, g, dt, w and ds at 1 MiB boundaries, ds shifted by `ds_shift`
// bytes.
template <class T>
linrec_adjoint_problem<T> adjoint_at(layout lay, std::uintptr_t ds_shift = 0) {
  linrec_adjoint_problem<T> q;
  q.scan = at<T>(lay);
  q.w = reinterpret_cast<T const*>(std::uintptr_t{4} << 20);
  q.ds = reinterpret_cast<T*>((std::uintptr_t{5} << 20) + ds_shift);
  return q;
}

template <class T>
void adjoint_choices() {
  using recur::detail::mirrored;
  using policy = k::linrec_adjoint_policy<T>;
  for (int const sms : {78, 132}) {
    std::int64_t const c = k::linrec_rows_min_count<T, policy>(sms), m = k::linrec_rows_min_n<T, policy>();
    auto const agent = [&](linrec_adjoint_problem<T> const& q, linrec_variant v = linrec_variant::automatic) {
      return k::choose_linrec_agent(k::linrec_adjoint_params<T>{q}, v, sms);
    };
    BOOST_TEST((agent(mirrored(adjoint_at<T>(layout::contiguous(m, c)))) == k::linrec_agent::rows));
    BOOST_TEST((agent(adjoint_at<T>(layout::contiguous(m + 1, c))) == k::linrec_agent::rows));
    BOOST_TEST((agent(adjoint_at<T>(layout::contiguous(m, c - 1))) == k::linrec_agent::tiles));
    BOOST_TEST((agent(adjoint_at<T>(layout::contiguous(m, c), sizeof(T))) == k::linrec_agent::tiles));  // ds
    auto no_ds = adjoint_at<T>(layout::contiguous(m, c));
    no_ds.ds = nullptr;
    no_ds.w = reinterpret_cast<T const*>((std::uintptr_t{4} << 20) + sizeof(T));  // not read without ds
    BOOST_TEST((agent(no_ds) == k::linrec_agent::rows));
    // pipelined: the pipe agent where the adjoint runs forward over a dense batch.
    BOOST_TEST(
        (agent(adjoint_at<T>(layout::contiguous(m, c)), linrec_variant::pipelined) == k::linrec_agent::pipe));
    BOOST_TEST((agent(mirrored(adjoint_at<T>(layout::contiguous(m, c))), linrec_variant::pipelined) ==
                k::linrec_agent::tiles));
    BOOST_TEST((agent(adjoint_at<T>(layout::contiguous(m, c), sizeof(T)), linrec_variant::pipelined) ==
                k::linrec_agent::tiles));  // ds not 16-byte aligned
    BOOST_TEST((agent(adjoint_at<T>(layout::interleaved(m, c))) == k::linrec_agent::lanes));
    BOOST_TEST((agent(adjoint_at<T>(layout::contiguous(m, c)), linrec_variant::three_kernel) ==
                k::linrec_agent::three_kernel));
    auto forgets = adjoint_at<T>(layout::contiguous(1000, 7));
    forgets.scan.s = nullptr;
    forgets.scan.s_value = T(0.5);
    BOOST_TEST((agent(forgets) == k::linrec_agent::pipe));
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linrec_dispatch)

BOOST_AUTO_TEST_CASE(rows_reach_f32) { rows_reach<float>(); }
BOOST_AUTO_TEST_CASE(rows_reach_f64) { rows_reach<double>(); }
BOOST_AUTO_TEST_CASE(stripes_reach_f32) { stripes_reach<float>(); }
BOOST_AUTO_TEST_CASE(stripes_reach_f64) { stripes_reach<double>(); }
BOOST_AUTO_TEST_CASE(adjoint_f32) { adjoint_choices<float>(); }
BOOST_AUTO_TEST_CASE(adjoint_f64) { adjoint_choices<double>(); }

BOOST_AUTO_TEST_SUITE_END()
