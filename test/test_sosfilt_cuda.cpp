// recur::sosfilt through recur::cuda{stream} against reference::sosfilt in
// higher precision: 1, 2, 3, 4, 5 and 9 sections (more than 4 run in passes),
// every row's a0 != 1, f32 and f64, contiguous, interleaved and strided
// layouts, 1 to 64 lanes and 5000 short sequences (another kernel), lengths
// 0 to 300007, state in and out, none, in place, zf == zi; reproducibility;
// argument errors with nothing written. The cases and the tolerance:
// common/lti_cuda_cases.hpp.
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/lti_cuda_cases.hpp"

using namespace lti_cuda;

BOOST_AUTO_TEST_SUITE(sosfilt_cuda)

// 1, 2, 3, 4, 5, 9 sections x layouts x 1, 3, 64 lanes x lengths 0 to 20011, zi in and zf out.
BOOST_AUTO_TEST_CASE(f32) { sweep<float>(op::sosfilt, sections, kinds, sos_shapes, 801); }
BOOST_AUTO_TEST_CASE(f64) { sweep<double>(op::sosfilt, sections, kinds, sos_shapes, 802); }

// 5000 sequences of 50 (the one-thread-per-sequence kernel); one sequence of
// 300007 (many tiles) with state in and out, without, zf only; in place.
BOOST_AUTO_TEST_CASE(short_long_stateless_in_place) {
  sweep<float>(op::sosfilt, {1, 2, 4, 5, 9}, kinds, {{50, 5000}}, 803);
  sweep<double>(op::sosfilt, {1, 2, 4, 5, 9}, kinds, {{50, 5000}}, 804);
  int idx = 0;
  for (int sections : {1, 3, 4, 9})
    for (int mode = 0; mode < 3; ++mode, ++idx) {
      spec const sp{.order = sections,
                    .lay = layout::contiguous(300007),
                    .zi = mode == 0,
                    .zf = mode != 1,
                    .seed = seed_for(805, static_cast<std::uint64_t>(idx))};
      run_and_check<float>(sp);
      run_and_check<double>(sp);
    }
  in_place<float>(op::sosfilt, {1, 4, 5, 9}, 806);
  in_place<double>(op::sosfilt, {1, 4, 5, 9}, 807);
  report("sosfilt long, stateless, in place");
}

// Two runs of sosfilt (4 sections, 2^20 samples) give the same bits.
BOOST_AUTO_TEST_CASE(bitwise_reproducible) {
  auto twice = [](auto zero) {
    using T = decltype(zero);
    spec const sp{
        .order = 4, .lay = layout::contiguous(std::int64_t{1} << 20), .seed = seed_for(831, sizeof(T))};
    auto const p = make_problem<T>(sp);
    auto const r1 = run_gpu(p), r2 = run_gpu(p);
    BOOST_TEST(mismatch(p, r1).empty(), sp.describe() << ": " << mismatch(p, r1));
    BOOST_TEST((recur_test::same_bytes(r1.y, r2.y) && recur_test::same_bytes(r1.zf, r2.zf)),
               sp.describe() << ": two runs differ");
  };
  twice(0.0f);
  twice(0.0);
}

// Host memory for x, y or the state, device memory for sos, 7 values: each
// rejected, nothing written.
BOOST_AUTO_TEST_CASE(errors_nothing_written) {
  errors<float>({op::sosfilt});
  errors<double>({op::sosfilt});
}

BOOST_AUTO_TEST_SUITE_END()
