// Batched tridiagonal solves in float on CUDA, and the algorithm choice
// (one translation unit per type so builds parallelise). No fmt here: it
// does not compile under nvcc (doc/design.md).
#include <string>

#include "tridiag_cuda.cuh"

namespace recur::detail {

template void tridiag_cuda<float>(tridiag_problem<float> const&, CUstream_st*, void*);
template std::size_t tridiag_cuda_workspace<float>(layout const&, std::int64_t, tridiag_algorithm);

// `automatic` (from bench/tune_tridiag on the H100, doc/performance.md,
// "Tridiagonal solvers"): Thomas on a shared-memory tile below 128 rows
// (n = 64: 56% of copy, Thomas-PCR 20%); Thomas-PCR when a system fits in
// shared memory (n = 256 .. 4096 contiguous: 47-61%, CR+PCR 17-35%), in its
// partitioned form when the system does not fit or an interleaved tile
// would be narrower than a 32-byte sector (n = 4096 interleaved: 27% against
// 5% for the tile); the global-memory Thomas beyond 2^30 rows.
tridiag_algorithm tridiag_cuda_resolve(layout const& lay, std::size_t value_bytes,
                                       tridiag_algorithm requested) {
  std::size_t const smem = tridiag_device_max_smem();
  auto plan = [&](tridiag_algorithm a) {
    return value_bytes == sizeof(float) ? device::plan_tridiag<float>(lay, a, smem)
                                        : device::plan_tridiag<double>(lay, a, smem);
  };
  if (lay.n <= 0) return requested == tridiag_algorithm::automatic ? tridiag_algorithm::thomas : requested;
  if (requested == tridiag_algorithm::automatic) {
    // Short systems: Thomas on a shared-memory tile (one thread per system),
    // but Thomas-PCR where it runs on adjacent systems with full-line rows
    // (agent_tridiag_columns.cuh; interleaved 64 x 2^20, tune_tridiag: f32
    // 80.3% of copy against Thomas's 64.1%, f64 89.2% against 70.4%) or on
    // segments of a warp from global memory (agent_tridiag_direct.cuh;
    // contiguous 64 x 2^20, 2026-11-24: f32 95.6%, f64 97.1%, where the
    // 2026-11-23 bench had Thomas at 67.0% and 74.8%); and for small
    // interleaved batches where n is a multiple of 16 (the direct form
    // through shared memory, or the columns kernel's burst instance:
    // tridiag_tuning::direct_columns; 64 x 512 f32, cold inputs, 5.4 us
    // against Thomas's 10.2).
    if (lay.n < 128) {
      auto const pl = plan(tridiag_algorithm::thomas_pcr);
      if (pl.columns_systems > 0 || (pl.direct_rows > 0 && pl.direct_lanes < 32)) return tridiag_algorithm::thomas_pcr;
    }
    if (lay.n < 128 && !plan(tridiag_algorithm::thomas).global_thomas) return tridiag_algorithm::thomas;
    // Otherwise Thomas-PCR, whose tile holds a system per warp group.
    if (plan(tridiag_algorithm::thomas_pcr).supported) return tridiag_algorithm::thomas_pcr;
    return tridiag_algorithm::thomas;
  }
  switch (requested) {
    case tridiag_algorithm::thomas:
    case tridiag_algorithm::cr:
    case tridiag_algorithm::pcr:
    case tridiag_algorithm::cr_pcr:
    case tridiag_algorithm::rd:
    case tridiag_algorithm::cr_rd:
    case tridiag_algorithm::cr_packed:
    case tridiag_algorithm::pscheme: {
      bool const capped = requested == tridiag_algorithm::pcr || requested == tridiag_algorithm::rd ||
                          requested == tridiag_algorithm::cr_packed;
      if (!plan(requested).supported)
        throw invalid_argument(std::string("recur::solve_batched: algorithm ") + to_string(requested) +
                               " needs one system (n = " + std::to_string(lay.n) +
                               ") to fit in shared memory on this device" + (capped ? " and n <= 4096" : ""));
      return requested;
    }
    case tridiag_algorithm::thomas_pcr:
      if (!plan(requested).supported)
        throw invalid_argument(
            std::string("recur::solve_batched: algorithm thomas_pcr needs 4 <= n < 2^30 (n = ") +
            std::to_string(lay.n) + ")");
      return requested;
    default:
      throw invalid_argument(std::string("recur::solve_batched: unknown algorithm ") +
                             std::to_string(static_cast<int>(requested)));
  }
}

}  // namespace recur::detail
