#pragma once
// Device-level batched tridiagonal solve, header-only, CUB's calling
// convention:
//
//   std::size_t bytes = 0;
//   recur::device::tridiag_solve(nullptr, bytes, a, b, c, d, x, lay, opts, stream);  // size only
//   cudaMallocAsync(&temp, bytes, stream);
//   recur::device::tridiag_solve(temp, bytes, a, b, c, d, x, lay, opts, stream);     // enqueue
//
// Conventions of include/recur/tridiag.hpp (layout, right-hand sides, a[0]
// and c[n-1] unread, x may be d, info, NaN on breakdown). Arguments are not
// checked here beyond what the launch needs (the host API checks them);
// an algorithm this backend cannot run for the shape returns
// cudaErrorNotSupported before anything is enqueued.
//
// Algorithms on the GPU:
// - thomas: a tile of systems per block in shared memory, one thread per
//   system (agent_tridiag_tile.cuh); systems too long for a useful tile
//   (fewer than thomas_min_systems fit) use the global-memory Thomas, which
//   needs n * count values of temporary storage.
// - thomas_pcr: a tile of systems per block, a warp per system
//   (block_tridiag.cuh's warp_thomas_pcr); any n whose system fits. Or,
//   where they apply: straight from global memory into registers for
//   contiguous batches (agent_tridiag_direct.cuh), chunks of adjacent
//   systems with full 128-byte rows for interleaved batches of n <= 1024
//   (agent_tridiag_columns.cuh), three passes through global memory for
//   long systems (agent_tridiag_partition.cuh).
// - cr, pcr, cr_pcr: a tile of systems per block, a group of threads per
//   system (block_tridiag.cuh; cr in place, or with Goeddeke and Strzodka's
//   split storage, block_tridiag_split.cuh, when tuning.cr_split is set). Need one system to fit in shared memory
//   (n up to ~14000 in f32, ~7000 in f64 on an H100); pcr and the PCR stage
//   of cr_pcr hold at most 4 equations per thread, 1024 threads: n <= 4096.
// - cr_packed: register-packed CR (block_tridiag_packed.cuh), 8 equations
//   per thread in registers, at most 512 threads: n <= 4096.
// - rd, cr_rd: recursive doubling, alone or on CR's intermediate system, a
//   Hillis-Steele scan over rescaled 3x3 matrices with 4 rows per thread
//   (block_tridiag_scan.cuh): rd needs n <= 4096. Both check their result
//   and report breakdown where RD's error would exceed its bound.
// - pscheme: Thomas' three recurrences (pivots, right-hand side, x), each a
//   P-scheme over a group of threads with runs of ~8 rows
//   (block_tridiag_scan.cuh); any n whose system fits.
// Nothing is allocated or synchronised; every launch is graph-capturable.

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include <recur/tridiag.hpp>
#include "../agent/agent_tridiag_columns.cuh"
#include "../agent/agent_tridiag_direct.cuh"
#include "../agent/agent_tridiag_partition.cuh"
#include "../agent/agent_tridiag_tile.cuh"

namespace recur::kernels {

template <class T>
__global__ void tridiag_tile_thomas_kernel(__grid_constant__ tridiag_tile_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_tile_agent<T>(p, smem).template run<tile_solver::thomas>();
}

// The group solvers: one kernel per solver, MaxThreads bounding the block.
template <class T, tile_solver Solver, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads)
    tridiag_tile_group_kernel(__grid_constant__ tridiag_tile_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_tile_agent<T>(p, smem).template run<Solver>();
}

// Threads per block at most, by solver (the register-packed CR holds 8
// equations per thread: 512 threads leave it 128 registers).
constexpr int tile_max_threads(tile_solver s) {
  return s == tile_solver::thomas_pcr || s == tile_solver::thomas_pcr_regs || s == tile_solver::cr_packed ? 512
                                                                                                          : 1024;
}

template <class T>
using tridiag_tile_kernel_t = void (*)(tridiag_tile_params<T>);

template <class T>
tridiag_tile_kernel_t<T> tridiag_tile_kernel(tile_solver s) {
  switch (s) {
    case tile_solver::thomas:
      return tridiag_tile_thomas_kernel<T>;
    case tile_solver::thomas_pcr:
      return tridiag_tile_group_kernel<T, tile_solver::thomas_pcr, tile_max_threads(tile_solver::thomas_pcr)>;
    case tile_solver::thomas_pcr_regs:
      return tridiag_tile_group_kernel<T, tile_solver::thomas_pcr_regs,
                                       tile_max_threads(tile_solver::thomas_pcr_regs)>;
    case tile_solver::cr_pcr:
      return tridiag_tile_group_kernel<T, tile_solver::cr_pcr, tile_max_threads(tile_solver::cr_pcr)>;
    case tile_solver::cr_packed:
      return tridiag_tile_group_kernel<T, tile_solver::cr_packed, tile_max_threads(tile_solver::cr_packed)>;
    case tile_solver::rd:
      return tridiag_tile_group_kernel<T, tile_solver::rd, tile_max_threads(tile_solver::rd)>;
    case tile_solver::cr_rd:
      return tridiag_tile_group_kernel<T, tile_solver::cr_rd, tile_max_threads(tile_solver::cr_rd)>;
    case tile_solver::pscheme:
      return tridiag_tile_group_kernel<T, tile_solver::pscheme, tile_max_threads(tile_solver::pscheme)>;
    case tile_solver::cr_split:
      return tridiag_tile_group_kernel<T, tile_solver::cr_split, tile_max_threads(tile_solver::cr_split)>;
  }
  return nullptr;
}

template <class T>
__global__ void tridiag_rhs_status_kernel(std::int32_t const* status, std::int32_t* info, T* x, layout lay,
                                          std::int64_t nrhs, std::int64_t rhs_stride) {
  tridiag_rhs_status(status, info, x, lay, nrhs, rhs_stride);
}

template <class T>
__global__ void tridiag_global_thomas_kernel(__grid_constant__ tridiag_global_thomas_params<T> const p) {
  tridiag_global_thomas(p);
}

}  // namespace recur::kernels

namespace recur::device {

// The shape of the tiles; the defaults are the tuned values
// (doc/performance.md, "Tridiagonal solvers", cites the run).
struct tridiag_tuning {
  int stages = 1;                           // tiles in flight per block (2: copy the next while solving)
  int phases = 2;                           // 1: load and store only (the differential per-phase timing)
  int max_steps = -1;  // group solvers: run only the first steps (the differential per-step timing; -1: all)
  std::size_t thomas_smem = 32 * 1024;      // target shared memory of a Thomas tile (one stage)
  int thomas_max_systems = 256;             // systems (threads) of a Thomas tile at most
  int thomas_min_systems = 16;              // below this the global-memory Thomas runs
  int cr_target_threads = 512;              // threads of a CR/PCR block, at least one group
  std::size_t cr_smem = 48 * 1024;          // target shared memory of a CR/PCR tile (one stage)
  // Target shared memory of a Thomas-PCR tile (one stage): 8 KB, i.e. one
  // system per tile from n = 512 (f32) or 256 (f64) up. Small tiles let more
  // blocks overlap their copies with other blocks' solves. bench/tune_tridiag
  // on the H100, 2026-11-23, contiguous, % of copy 48 KB -> 8 KB: f32 n = 256
  // 45 -> 51, 512 56 -> 62, 1024 57 -> 52 (the one loss), 4096 54 -> 54; f64
  // n = 256 76 -> 81, 512 74 -> 78, 1024 65 -> 65; interleaved tiles are
  // sized by their own target below.
  std::size_t thomas_pcr_smem = 8 * 1024;
  // The same for interleaved batches, whose tiles must also span whole
  // 32-byte sectors of systems: a larger target gives wider rows (f64
  // n = 256: 8 systems, 64-byte rows, 59% of copy; with 8 KB, 4 systems,
  // 32-byte rows, 53%).
  std::size_t thomas_pcr_smem_interleaved = 48 * 1024;
  int thomas_pcr_rows = 16;  // target rows per thread of a Thomas-PCR chunk (sets the warps per system)
  int thomas_pcr_max_threads = 256;  // threads per system at most
  // One warp per system, chunks in registers (f32, <= 16 rows): 0 never,
  // 1 where measured faster (below), 2 wherever they fit.
  int thomas_pcr_regs = 1;
  // Thomas-PCR on small contiguous batches (at most small_batch_tiles
  // tiles; 0: off): blocks of at least small_batch_threads threads.
  int small_batch_tiles = 1024;
  int small_batch_threads = 128;
  // Thomas-PCR from global memory into registers (agent_tridiag_direct.cuh)
  // where it applies: contiguous, systems and pointers on 16-byte
  // boundaries, n = 32 R with R in 4, 8, 16 (f32) or 2, 4, 8 (f64), or
  // n = 32 W R with W = 2, 4, 8 warps (f64 also 16) and R = 16 (f32) or 8
  // (f64), or n = Lanes R with Lanes = 2, 4, 8, 16 (segments of a warp).
  bool direct = true;
  // Lanes per system of the direct form: 0 chooses (segments of a warp with
  // 16 (f32) or 8 (f64) rows per lane where n = Lanes R, Lanes = 2, 4, 8,
  // 16; else a warp where n = 32 R with R as above); a power of two forces
  // that (when n and the rows per lane allow it). tune_tridiag on the H100,
  // 2026-11-24, contiguous, % of copy, segments against one warp per system:
  // f32 n = 128 95.8 / 72.4; f64 n = 64 97.1 / 59.3, n = 128 97.1 / 93.7.
  int direct_lanes = 0;
  // The several-warp direct form solves its boundary equations a warp each
  // with spikes (agent_tridiag_direct.cuh's Spike), or with warp 0 alone as
  // the tile does (x as the tile's; bitwise in f64): 0 chooses (spikes from 16 warps
  // per system: f64 n = 4096), 1 always, -1 never.
  // tune_tridiag on the H100, 2026-11-24, contiguous, % of copy, spikes /
  // warp 0: n = 4096 f64 (16 warps) 62.1 / 54.1; but n = 1024 f32 (2)
  // 91.2 / 92.8, f64 (4) 89.4 / 94.7, and f32 n = 4096 (8 warps) 75.5 /
  // 80.4 once warp 0's kernel was compiled for 3 blocks per SM
  // (tridiag_direct_group_min_blocks; 65.0 at 2).
  // (For latency-bound small batches, 4 rows per lane with several warps
  // did not beat one warp of 16 rows: 512 x 512 f32 7.5 us with spikes,
  // 7.3 us without, one warp 7.3 us; f64 9.5 / 8.9 / 9.5 us.)
  int direct_spike = 0;
  // Thomas-PCR on adjacent systems with full 128-byte rows
  // (agent_tridiag_columns.cuh): 0 never, 1 for interleaved batches of at
  // least columns_min_count systems and n <= 1024, 2 wherever it fits
  // (any layout; the tests force it).
  int columns = 1;
  std::int64_t columns_min_count = 2048;
  // Small interleaved batches (fewer than columns_min_count systems: the
  // solve is about one block's latency, and every block is resident at
  // once), measured with cold inputs (tune_tridiag TUNE_COLD=1: L2 evicted
  // before each call, as the bench's inputs are) on the H100, 2026-11-25,
  // us (bench/results/h100-tune-tridiag-small-cold.log):
  //
  // - direct_columns: n = Lanes R (R = 16 in f32, 8 in f64; Lanes a power
  //   of two 2..32; and f64 n = 512, Lanes = 64: two warps a system,
  //   joined as tridiag_direct_group_kernel's spikes join its warps): the
  //   direct form fed through shared memory
  //   (agent_tridiag_direct.cuh's tridiag_direct_columns_kernel). 0 there
  //   (with `columns` at its default 1; 0 or 2 leave the tile or the
  //   columns kernel as they were), 1 wherever n fits (any layout and
  //   count), -1 never. The tile / columns_burst / this: f32 512 x 512
  //   11.1 / 9.1 / 7.6, 256 x 512 10.4 / 7.5 / 6.1, 128 x 1024 8.4 / 7.2 /
  //   5.9, 64 x 512 7.0 / 6.6 / 5.5 (Thomas's tile 10.4), 512 x 128 10.8 /
  //   8.6 / 7.2, 512 x 2000 16.5 / 14.4 / 12.4; f64 256 x 512 10.6 / 8.7 /
  //   7.1; f64 512 x 512 (two warps) 16.1 / 10.9 / 9.9, 512 x 128 15.2 /
  //   8.8 / 8.1, 512 x 2000 45.2 / 25.0 / 24.4 (the log's run 3). (Two
  //   warps of 8-row chunks in f32 at n = 512: 8.1-8.4 against one warp's
  //   7.5-7.6.) With L2 warm, f32 512 x 512 6.6 us against the contiguous
  //   layout's direct form 5.2. At large batches the columns and segmented
  //   kernels win (f32 512 x 65536: 67.3% of copy against 88.0%). Also
  //   measured at f32 512 x 512 and not kept: 4 systems a block instead of
  //   8 (128 blocks of 128 threads) 7.8-8.1 us; the copy by 16-byte vectors
  //   (4 systems of a row a thread) 7.6-7.8, no change; a cluster of G
  //   blocks each copying n / G rows of 128-byte lines, the systems cut
  //   into segments joined through distributed shared memory, 8.1 (G = 2)
  //   to 9.9 us (doc/experiments/tridiag-small-cluster.patch).
  // - columns_burst: n a multiple of 16 up to 512 that direct_columns does
  //   not take (n = 48, 96, 160, ...): the columns kernel on whole
  //   systems, a 32-byte sector of systems a block (8 in f32, 4 in f64;
  //   columns_systems when set), chunks of 16 rows whose rows are all
  //   fetched at once (tridiag_launch_plan::columns_burst). 0 there (with
  //   `columns` 1, as above), 1 wherever it fits (any layout), -1 never.
  //   The tile / this: f32 48 x 1000 7.0 / 6.8, f64 8.2 / 7.5; f64 96 x
  //   1000 9.3 / 8.2. Chunks of runtime length fetched at once lost (f32
  //   n = 300, chunks of 15 and 16 rows: 17.2 against the tile's 11.5, the
  //   log's run 0), hence multiples of 16.
  int direct_columns = 0;
  int columns_burst = 0;
  // Target rows per chunk: 0 chooses (16; 32 for f32 n > 256, whose 512
  // threads of 32 rows beat 1024 of 16: n = 512 61.2% of copy against
  // 54.1%), -1 takes the tile's chunks (min(32, n / 2)).
  int columns_rows = 0;
  // Systems per block (0: 128 bytes of each row, fewer when shared memory
  // is short); the segmented kernel takes the power of two at or below it.
  int columns_systems = 0;
  bool columns_lone = true;  // f32 blocks alone on their SM: 128 registers, 4 rows fetched ahead
  // Systems cut into segments of about this many rows (at most 16), a
  // block per segment and group of systems, a cluster per group
  // (agent_tridiag_columns.cuh's tridiag_segments_kernel, sm_90): 0 chooses
  // (columns_segment_default rows from n = columns_segment_min_n up; 0:
  // 256), -1 never. Where the columns kernel applies (above).
  // tune_tridiag on the H100, 2026-11-24, interleaved, % of copy, segments
  // of 128 rows / whole systems: f32 n = 1024 61.2 / 53.6, 4096 (16
  // segments) 50.3 / 27.7 (partitioned); f64 n = 256 88.4 / 85.3, 512 82.7
  // / 73.7, 1024 78.8 / 53.9, 4096 59.9 / 33.6
  // (bench/results/h100-tune-tridiag-segments.log). f32 n = 256 and 512
  // kept whole systems (512: 64.5 / 71.8) until the segments were joined by
  // PCR (below): then 78.1 / 73.3 and 73.7 / 71.7; 64 or 256 rows lost
  // (bench/results/h100-tune-tridiag-join-segments.log).
  int columns_segment_rows = 0;
  int columns_segment_default = 128;
  // How a cluster's blocks join the segments (each for the two unknowns it
  // needs): 0 chooses (PCR in f64 up to 4 segments, the scatter from 9
  // segments, else the block Thomas), 1 PCR over the segments in every
  // block (a lane per segment), -1 the block Thomas in every block (a
  // thread per system), 2 the scatter (PCR once per system, in one block
  // of the cluster, which writes every block's two unknowns; then a second
  // cluster barrier). tune_tridiag on the H100, 2026-11-25, interleaved, %
  // of copy, block Thomas (PCR in f64 n = 256, 512) / scatter, two
  // processes: f32 n = 256 (2 segments) 88.8 / 87.5, 512 (4) 88.0 / 86.7,
  // 1024 (8) 84.7 / 83.7, 4096 (16) 66.6 / 68.8; f64 90.8 / 89.5, 89.2 /
  // 87.1, 84.1 / 83.8, 71.8 / 74.4 (bench/results/h100-tune-tridiag-scatter.log:
  // a cluster reads G x G links for the block Thomas, G for the scatter).
  // Earlier, PCR / block Thomas: tune_tridiag on the H100, 2026-11-25
  // (once the joins' reciprocals were join_rcp, block_tridiag.cuh),
  // interleaved, % of copy, PCR / block Thomas, two processes: f32 n = 256
  // (2 segments) 87.6 / 87.7, 512 (4) 84.6 / 84.9, 1024 (8) 77.9 / 81.0,
  // 4096 (16) 48.9 / 64.1; f64 n = 256 89.5 / 88.8, 512 85.2 / 84.7, 1024
  // 80.9 / 80.8, 4096 60.2 / 64.6 (bench/results/h100-tune-tridiag-join-rcp.log).
  // (Before, with f32's division, PCR had won at up to 8 segments in f32:
  // n = 1024 68.4 / 62.3; h100-tune-tridiag-join.log.) Also measured and
  // not kept: the join twisted (two threads per system eliminating from
  // both ends at once: each block reads every link twice, and lost 0.5-5
  // points; doc/experiments/tridiag-prefetch-twisted.patch).
  int columns_segment_join = 0;
  std::int64_t columns_segment_min_n = 0;
  // Rows the segmented kernel fetches ahead in f64: 0 its default
  // (tridiag_segments_ahead, 4), or 3 or 5 (segments of <= 16-row chunks).
  int columns_segment_ahead = 0;
  // The segmented kernel's boundary equations (2 per chunk and system): 0
  // chooses (tridiag_segments_boundary: Thomas in f32, PCR in f64), 1 Thomas
  // by one thread per system, 2 Thomas by two threads per system from both
  // ends (segment_boundary_twisted), -1 PCR with a lane per chunk (segments
  // of <= 16-row chunks).
  int columns_segment_boundary = 0;
  // f32's wide segments (tridiag_launch_plan::columns_wide): 0 where the
  // plan has 16 segments whose rows fit 8 chunks of 17-32 rows, 1 wherever
  // the segments' chunks are of 17-32 rows, at most 8 per system and 256
  // threads a block, -1 never.
  int columns_segment_wide = 0;
  // Segments with each thread's d in registers (tridiag_launch_plan::
  // columns_dregs; the segmented kernel's DRegs, 3 blocks per SM): 0 where
  // measured (256-row segments, at least 9 of them), 1 wherever its chunks
  // fit (64 rows in f32, 32 in f64, a power of two >= 2 of them a segment,
  // at most 128 threads a block, the scatter join), -1 never.
  int columns_segment_dregs = 0;
  // The segmented kernel's cluster scheduling policy (a launch attribute):
  // cudaClusterSchedulingPolicy, 0 the driver's default, 1 spread, 2 load
  // balancing (the default here). tune_tridiag (H100, 2026-11-25, two
  // processes, % of copy, driver default -> load balancing): interleaved
  // f32 n = 512 84.8 -> 86.2, 1024 81.1 -> 82.3, 4096 64.1 -> 65.1; f64 n =
  // 512 86.7 -> 87.7, 1024 82.6 -> 83.2, 4096 69.2 -> 70.6; spread within
  // 0.5 of the default (bench/results/h100-tune-tridiag-policy.log).
  int columns_segment_policy = 2;
  int partition = 0;                 // thomas_pcr in 3 passes: 0 when needed, 1 always, -1 never
  int partition_chunk = 32;          // rows per chunk of the partitioned form
  int cr_pcr_switch = 128;           // cr_pcr: PCR once the system has <= this many equations
  // cr with Goeddeke and Strzodka's split storage instead of in place. Off:
  // on the H100 it is slower (f32 512 x 2^16: 8.7% of copy against 15.0%;
  // every level costs 2-3x: the second copy halves the resident systems,
  // and bank conflicts, which it removes, are not what limits CR here).
  bool cr_split = false;
  int cr_rd_switch = 128;            // cr_rd: RD once the system has <= this many equations (Zhang: 128)
  int cr_packed_switch = 2;          // cr_packed: PCR on the reduced system below this size (2: all CR)
  int pscheme_rows = 8;              // pscheme: target rows per thread (sets the threads per system)
};

struct tridiag_launch_plan {
  bool supported = false;
  bool partition = false;  // thomas_pcr in 3 passes (agent_tridiag_partition.cuh)
  int window_systems = 0, window_chunks = 0, chunks = 0;
  std::size_t max_smem = 0;
  tridiag_tuning tune{};
  int stages = 1, phases = 2;
  bool global_thomas = false;
  kernels::tile_solver solver = kernels::tile_solver::thomas;
  int systems = 0, group_threads = 1, threads = 0, ld = 0, red_ld = 0, switch_size = 0;
  int direct_rows = 0;   // > 0: agent_tridiag_direct.cuh with this many rows per lane, when the pointers allow
  int direct_warps = 1;  // and this many warps per system
  int direct_lanes = 32;  // or (one warp) this many lanes per system
  bool direct_spike = false;  // several warps: each solves its boundary equations (spikes)
  // tridiag_direct_columns_kernel (direct_rows, direct_lanes; threads, smem).
  bool direct_columns = false;
  // > 0: agent_tridiag_columns.cuh with this many systems per block, chunks
  // per system and rows per chunk at most (<= 32).
  int columns_systems = 0, columns_chunks = 0, columns_rows = 0;
  int columns_segments = 1;  // > 1: tridiag_segments_kernel, this many segments per system
  int columns_join = 0;      // and its join of the segments (kernels::segment_join_kind)
  // f32: the segmented kernel's wide instance (chunks of 17-32 rows, <= 256
  // threads a block, 128 registers a thread: 6 rows fetched ahead).
  bool columns_wide = false;
  // The segmented kernel's DRegs instance: d in registers, 3 blocks per SM,
  // every chunk 64 rows (f32) or 32 (f64), the scatter join.
  bool columns_dregs = false;
  // The columns kernel's burst instance (whole systems, chunks of <= 16
  // rows fetched at once, <= 256 threads a block).
  bool columns_burst = false;
  std::size_t smem = 0;
};

inline int tridiag_ceil_pow2(long long v) {
  return v <= 1 ? 1 : int(std::bit_ceil(static_cast<unsigned long long>(v)));
}

// What runs for this shape; max_smem is the device's opt-in limit per block.
template <class T>
tridiag_launch_plan plan_tridiag(layout const& lay, tridiag_algorithm alg, std::size_t max_smem,
                                 tridiag_tuning const& tune = {}) {
  tridiag_launch_plan pl;
  std::int64_t const n = lay.n;
  if (n <= 0) return pl;
  pl.phases = tune.phases;
  pl.max_smem = max_smem;
  pl.tune = tune;
  // One system must fit in a stage; two stages when two fit.
  int const ld = n < (std::int64_t(1) << 24) ? kernels::tridiag_pos(int(n)) | 1 : 0;
  std::size_t const per_system = kernels::tridiag_tile_smem<T>(1, ld);
  bool const fits = n < (std::int64_t(1) << 24) && per_system <= max_smem;
  pl.ld = ld;
  pl.stages = tune.stages > 1 && 2 * per_system <= max_smem ? 2 : 1;
  std::size_t const stage_max = max_smem / pl.stages;
  bool const rows_fast = lay.element_stride == 1 || n == 1;
  // Interleaved tiles: whole 32-byte sectors of systems per row when possible.
  auto align_systems = [&](int sys, int max_sys, std::size_t per = 0) {
    int const unit = int(32 / sizeof(T));
    if (rows_fast || sys % unit == 0 || lay.count <= sys) return sys;
    int const up = (sys + unit - 1) / unit * unit;
    if (up <= max_sys && std::size_t(up) * (per ? per : per_system) <= stage_max) return up;
    return sys > unit ? sys / unit * unit : sys;
  };
  if (alg == tridiag_algorithm::automatic) alg = tridiag_algorithm::cr_pcr;  // resolved by the host layer
  if (alg == tridiag_algorithm::thomas) {
    std::size_t const budget = std::max(tune.thomas_smem, per_system * tune.thomas_min_systems);
    int const sys =
        fits ? int(std::min<std::size_t>(std::min<std::size_t>(tune.thomas_max_systems, budget / per_system),
                                         stage_max / per_system))
             : 0;
    if (sys >= tune.thomas_min_systems) {
      pl.solver = kernels::tile_solver::thomas;
      pl.systems = int(std::min<std::int64_t>(align_systems(sys, 1024), lay.count));
      pl.group_threads = 1;
      pl.threads = std::max(128, (pl.systems + 31) / 32 * 32);
    } else {
      pl.global_thomas = true;
      pl.threads = 128;
    }
    pl.supported = true;
    return pl;
  }
  if (alg == tridiag_algorithm::thomas_pcr) {
    // The partitioned form: windows of chunks, one thread per chunk.
    auto partitioned = [&] {
      if (n < 4 || n >= (std::int64_t(1) << 30)) return false;  // chunks of >= 2 rows; int row indices
      pl = {};
      pl.max_smem = max_smem;
      pl.tune = tune;
      pl.phases = tune.phases;
      pl.partition = true;
      pl.chunks = int(std::max<std::int64_t>(2, n / std::max(4, tune.partition_chunk)));  // 2 chunks < n rows
      int const base = int(n / pl.chunks);
      pl.threads = 128;
      pl.window_systems = rows_fast ? 1 : std::min<std::int64_t>(lay.count, 32 * 4 / std::int64_t(sizeof(T)));
      pl.window_chunks = std::max(1, std::min(pl.threads / pl.window_systems, pl.chunks));
      for (;;) {
        int const rows = pl.window_chunks * (base + 1);
        pl.ld = kernels::tridiag_pos(rows) | 1;
        pl.smem = kernels::tridiag_partition_smem<T>(pl.window_systems, pl.ld);
        if (pl.smem <= std::min<std::size_t>(max_smem, 100 * 1024) || pl.window_chunks == 1) break;
        pl.window_chunks /= 2;
      }
      if (pl.smem > max_smem) return false;
      pl.supported = true;
      return true;
    };
    if (tune.partition > 0) {
      partitioned();
      return pl;
    }
    // A small interleaved batch of n = Lanes R: the direct form through
    // shared memory (agent_tridiag_direct.cuh's tridiag_direct_columns_kernel).
    // f64 n = 512 as 2 warps of 8-row chunks a system (Lanes = 64).
    if (constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>; tune.direct_columns >= 0) {
      std::int64_t const lanes = n % gr == 0 ? n / gr : 0;
      bool const fit = lanes >= 2 && (lanes <= 32 || (lanes == 64 && gr == 8)) &&
                       std::has_single_bit(std::uint64_t(lanes)) && tune.phases > 1 && tune.max_steps < 0 &&
                       tune.stages == 1;
      bool const want = tune.direct_columns > 0 || (tune.columns == 1 && !rows_fast && lay.batch_stride == 1 &&
                                                    lay.count < tune.columns_min_count);
      int const S = kernels::tridiag_direct_columns_systems<T>(int(std::clamp<std::int64_t>(lanes, 1, 64)));
      std::size_t const smem = fit ? kernels::tridiag_direct_columns_smem<T>(int(gr), int(lanes), S) : 0;
      if (fit && want && smem <= max_smem) {
        pl.solver = kernels::tile_solver::thomas_pcr;
        pl.direct_rows = int(gr);
        pl.direct_lanes = int(lanes);
        pl.direct_columns = true;
        pl.threads = S * int(lanes);
        pl.smem = smem;
        pl.supported = true;
        return pl;
      }
    }
    // Adjacent systems, full 128-byte rows (agent_tridiag_columns.cuh).
    bool const columns_wanted = !rows_fast && lay.batch_stride == 1 && lay.count >= tune.columns_min_count;
    // A small interleaved batch: whole systems, every chunk's rows fetched
    // at once (the solve is about one block's latency).
    bool const burst = n % 16 == 0 && n <= 16 * 32 && tune.columns_burst >= 0 &&
                       (tune.columns_burst > 0 || (tune.columns == 1 && !rows_fast && lay.batch_stride == 1 &&
                                                   lay.count < tune.columns_min_count));
    bool const columns_ok = tune.columns > 0 && tune.phases >= 1 && tune.max_steps < 0 && tune.stages == 1 &&
                            (tune.columns > 1 || columns_wanted || burst);
    // sys systems of `rows` rows per chunk, `chunks` chunks per block.
    int max_rows = 32;  // (64: f32's segments with d in registers, 4 chunks)
    auto columns_block = [&](std::int64_t chunks, int rows, int segments, int line = 128) {
      int sys = tune.columns_systems > 0 ? tune.columns_systems : int(line / int(sizeof(T)));
      auto smem = [&](int s2) {
        return segments > 1 ? kernels::tridiag_segments_smem<T>(s2, int(chunks), rows, segments)
                         : kernels::tridiag_columns_smem<T>(s2, int(chunks), rows);
      };
      auto fits_block = [&](int s2) {
        return (s2 * chunks + 31) / 32 * 32 <= kernels::tridiag_columns_max_threads<T> && smem(s2) <= max_smem;
      };
      if (segments > 1) sys = int(std::bit_floor(unsigned(std::max(sys, 1))));  // the segmented kernel shifts by S
      while (sys > 1 && !fits_block(sys) && (tune.columns_systems == 0 || tune.columns > 1)) sys /= 2;
      if (rows > max_rows || !fits_block(sys)) return false;
      pl.solver = kernels::tile_solver::thomas_pcr;
      pl.columns_systems = sys;
      pl.columns_chunks = int(chunks);
      pl.columns_rows = rows;
      pl.threads = int((sys * chunks + 31) / 32 * 32);
      pl.smem = smem(sys);
      pl.supported = true;
      return true;
    };
    // Segments: G of about seg rows each (at most 16: a cluster), a
    // power-of-two count of chunks of 16 rows (columns_rows when set) per
    // segment, each >= 2 rows.
    // tune_tridiag on the H100 (doc/performance.md cites the run).
    std::int64_t const seg_min_n =
        tune.columns_segment_min_n > 0 ? tune.columns_segment_min_n : 256;
    int seg = tune.columns_segment_rows != 0 ? tune.columns_segment_rows
              : n >= seg_min_n               ? tune.columns_segment_default
                                             : -1;
    // Where 16 segments of the default length fall short (n > 2048), 256
    // rows a segment up to 16 of them, instead of 16 segments of n / 16:
    // at n = 2560, 3072 and 3584 those were 160-224 rows, cut into 8
    // chunks of 20-28 rows, which ran the 32-row instance with a runtime
    // chunk length; 256-row segments are 16 chunks of 16 rows (G = 10, 12,
    // 14). tune_tridiag (H100, 2026-11-25), interleaved, % of copy,
    // n / 16 -> 256-row segments: f32 n = 2560 48.1 -> 66.7, 3072 40.3 ->
    // 58.2, 3584 41.7 -> 57.0; f64 48.3 -> 68.6, 38.6 -> 65.2, 40.2 -> 64.3
    // (bench/results/h100-tune-tridiag-mid.log). From n = 3841 the count is
    // 16 either way.
    // f64 takes them from n = 513 wherever its chunks are then 15-16 rows
    // (n / G >= 240): 4 to 8 segments of 16 chunks (256 threads, 2 blocks
    // per SM) instead of 5 to 16 segments of 8 chunks of about 16 rows (128
    // threads). tune_tridiag (H100, 2026-11-25, two processes),
    // interleaved f64, % of copy, 128-row -> 256-row segments: n = 512
    // 89.1 -> 88.9 / 89.2 (not taken there), 1024 84.3 / 84.6 -> 87.1 / 87.2,
    // 1500 63.7 / 63.9 -> 75.9 / 75.0, 2000 52.7 / 52.8 -> 76.1 / 75.2, 2048
    // 72.2 / 72.1 -> 79.1 / 78.6 (there 16 segments of 4 chunks of 32 rows
    // before, which had beaten 8 chunks of 16: 66.5 -> 72.0,
    // h100-tune-tridiag-mid.log); but with chunks of 14 and 15 rows
    // (n = 1800: 8 segments of 225 rows) 71.0 -> 57.3, where 128-row
    // segments are 15 of 120 rows, chunks all 15. f32 lost 1-2 points at n
    // = 512-1500 and gained 4 at 2000, so f32 keeps 128
    // (bench/results/h100-tune-tridiag-f64-seg256.log).
    bool const seg256_f64 = sizeof(T) == 8 && tune.columns_segment_rows == 0 && seg > 0 && n > 512 &&
                            n <= 16 * 256 && n / ((n + 255) / 256) >= 240;
    bool const seg256 =
        seg256_f64 || (tune.columns_segment_rows == 0 && seg > 0 && n > 16 * std::int64_t(seg) && n <= 16 * 256);
    if (seg256) seg = 256;
    if (columns_ok && burst) {
      std::int64_t const chunks = n / 16;
      int const sys = tune.columns_systems > 0 ? tune.columns_systems : int(32 / sizeof(T));
      if ((sys * chunks + 31) / 32 * 32 <= 256 && columns_block(chunks, 16, 1, 32)) {
        pl.columns_burst = true;
        return pl;
      }
    }
    if (columns_ok && !burst && tune.phases > 1 && seg > 0 && n > seg && n < (std::int64_t(1) << 30)) {
      std::int64_t const G = std::min<std::int64_t>((n + seg - 1) / seg, 16), shortest = n / G;
      auto shape = [&](std::int64_t target) {  // (chunks, rows) for chunks of about target rows
        std::int64_t const want = std::clamp<std::int64_t>((shortest + target - 1) / target, 1, 32);
        std::int64_t const ch = std::int64_t(std::bit_floor(std::uint64_t(std::max<std::int64_t>(
            1, std::min(want, shortest / 2)))));
        return std::pair<std::int64_t, int>{ch, int(((n + G - 1) / G + ch - 1) / ch)};
      };
      auto [chunks, rows] = shape(tune.columns_rows > 0 ? tune.columns_rows : 16);
      // (With 256-row segments, 16 chunks of at most 16 rows: shape's
      // power of two at or below would cut a 229-255-row segment into 8
      // chunks of 29-32, n = 4000 42.3 against 49.6 (f32).)
      if (seg256 && tune.columns_rows == 0) chunks = 16, rows = int(((n + G - 1) / G + 15) / 16);
      // f32's wide segments: 8 (or 4) chunks of 17-32 rows in a block of
      // 256 (128) threads with 128 registers each, fetching 6 rows ahead
      // instead of 2 (shared memory holds 2 (4) blocks per SM either way).
      // tune_tridiag (H100, 2026-11-25, two processes), interleaved f32, %
      // of copy, 16 chunks of 16 rows (512 threads) -> wide: n = 4096
      // 70.3-70.8 -> 71.5-72.0; n = 1024 (4 segments) 85.0 -> 82.5, 512
      // 88.2 -> 84.0 (not chosen there; bench/results/h100-tune-tridiag-wide.log).
      // n = 2048 (16 segments of 128 rows), 8 chunks of 16 -> 4 of 32: 63.8
      // -> 75.5 / 75.9; but with chunks shorter than 32 rows (the runtime
      // length), n = 4000 42.3 against 49.6 for 16 chunks of 15-16 rows, and
      // n = 2560-3584 (10-14 segments) no better than the rest
      // (bench/results/h100-tune-tridiag-mid.log). So: 16 segments whose
      // chunks are all 32 rows.
      if constexpr (sizeof(T) == 4) {
        if (tune.columns_segment_wide >= 0 && (tune.columns_segment_wide > 0 || (G >= 16 && tune.columns_rows == 0))) {
          auto const [cw, rw] = tune.columns_segment_wide > 0 ? std::pair<std::int64_t, int>{chunks, rows} : shape(32);
          bool const measured = (cw == 8 || cw == 4) && rw == 32 && G * cw * rw == n;
          if (cw <= 8 && (measured || tune.columns_segment_wide > 0) && rw > 16 && rw <= 32)
            chunks = cw, rows = rw, pl.columns_wide = true;
        }
      }
      // Each thread's d in registers (the segmented kernel's DRegs): a
      // third less shared memory a block, so 3 blocks per SM instead of 2,
      // and a cluster of 16 blocks packs the GPU better (22 resident against
      // 15). Chunks of 64 rows in f32 (4 of them, 128 threads, 168
      // registers: 62 of them the chunk's d), 32 in f64 (8 chunks, 128
      // threads), every one full. tune_tridiag (H100, 2026-11-25),
      // interleaved, % of copy, the plan before -> DRegs: f32 n = 2560 67.0
      // -> 74.5, 3072 58.6 -> 78.9, 3584 58.8 -> 72.0, 4096 71.6 -> 78.7;
      // f64 68.9 -> 74.8, 65.1 -> 79.3, 64.9 -> 72.0, 74.4 -> 78.9; at
      // n = 2048 (f32: 16 segments of 2 chunks; f64: 8 segments) 75.6 ->
      // 76.0 and 79.1 -> 78.5, not taken (bench/results/h100-tune-tridiag-dregs.log).
      constexpr int dregs_rows = sizeof(T) == 4 ? 64 : 32;
      std::int64_t const dregs_chunks = shortest / dregs_rows;
      bool const dregs_fit = n % G == 0 && shortest % dregs_rows == 0 && dregs_chunks >= 2 &&
                             dregs_chunks <= (sizeof(T) == 4 ? 4 : 8) &&
                             std::has_single_bit(std::uint64_t(dregs_chunks)) &&
                             (tune.columns_segment_join == 0 || tune.columns_segment_join == 2);
      bool const dregs =
          dregs_fit && tune.columns_segment_dregs >= 0 &&
          (tune.columns_segment_dregs > 0 ||
           (shortest == 256 && G >= 9 && tune.columns_rows == 0 && tune.columns_segment_wide == 0));
      if (dregs) chunks = dregs_chunks, rows = dregs_rows, max_rows = 64, pl.columns_wide = false;
      if (chunks >= 1 && columns_block(chunks, rows, int(G))) {
        if (pl.columns_wide && pl.threads > 256) pl.columns_wide = false;
        if (dregs) {
          pl.columns_dregs = true;
          pl.smem = kernels::tridiag_segments_smem_dregs<T>(pl.columns_systems, int(chunks), rows, int(G));
        }
        pl.columns_segments = int(G);
        pl.columns_join = tune.columns_segment_join == 2 || dregs ? kernels::segment_join_by_scatter
                          : tune.columns_segment_join > 0 ? kernels::segment_join_by_pcr
                          : tune.columns_segment_join < 0 ? kernels::segment_join_by_thomas
                          : sizeof(T) == 8 && G <= 4      ? kernels::segment_join_by_pcr
                          : G > 8                         ? kernels::segment_join_by_scatter
                                                          : kernels::segment_join_by_thomas;
        return pl;
      }
      pl.columns_wide = false;
      pl.columns_dregs = false;
    }
    // Whole systems (n <= 1024).
    // bench/tune_tridiag on the H100, 2026-11-23, interleaved, % of copy,
    // this kernel / the tile: f32 n = 64 80.3 / 64.1 (Thomas), 256 70.1 /
    // 44.4, 512 61.2 (32-row chunks) / 48.6, 1024 49.4 / 37.2; f64 n = 64
    // 89.2 / 70.4 (Thomas), 256 82.5 / 59.3, 512 70.0 / 41.4, 1024 53.9 /
    // 39.8 (bench/results/h100-tune-tridiag-columns-4.log).
    if (columns_ok && !burst && n <= 1024) {
      std::int64_t const most = std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2));
      std::int64_t const target = tune.columns_rows != 0 ? tune.columns_rows : sizeof(T) == 4 && n > 256 ? 32 : 16;
      std::int64_t const chunks =
          target > 0 ? std::clamp<std::int64_t>((n + target - 1) / target, 1, most) : most;
      int const rows = int((n + chunks - 1) / chunks);
      if (columns_block(chunks, rows, 1)) return pl;
    }
    int const gt =
        std::clamp(int(std::bit_floor(std::uint64_t(std::max<std::int64_t>(1, n / tune.thomas_pcr_rows)))),
                   32, std::max(32, tune.thomas_pcr_max_threads));
    pl.solver = kernels::tile_solver::thomas_pcr;
    pl.group_threads = gt;
    constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
    bool const direct_ok = tune.direct && tune.phases > 1 && tune.max_steps < 0 && tune.stages == 1 &&
                           lay.element_stride == 1 && lay.batch_stride * sizeof(T) % 16 == 0;
    bool const segments =
        n % gr == 0 && n / gr >= 2 && n / gr <= 16 && std::has_single_bit(std::uint64_t(n / gr)) &&
        (tune.direct_lanes == 0 || tune.direct_lanes == n / gr);
    if (direct_ok && segments) {
      pl.direct_rows = int(gr);
      pl.direct_lanes = int(n / gr);
    } else if (direct_ok && n % 32 == 0 && (tune.direct_lanes == 0 || tune.direct_lanes == 32)) {
      if (kernels::tridiag_direct_rows<T>(n / 32)) {
        pl.direct_rows = int(n / 32);
        pl.direct_warps = 1;
      } else if (std::int64_t const w = n / (32 * gr); n % (32 * gr) == 0 && kernels::tridiag_direct_warps<T>(w)) {
        pl.direct_rows = int(gr);
        pl.direct_warps = int(w);
        pl.direct_spike = tune.direct_spike > 0 || (tune.direct_spike == 0 && w >= 16);
      }
    }
    // One warp per system, interleaved, chunks of 9-16 rows (f32, n in
    // 257..512): the register path, in its own kernel. bench/tune_tridiag on
    // the H100, 2026-11-23, f32, % of copy, registers / shared memory:
    // interleaved n = 512 49.0 / 39.2; but n = 256 (8 rows) 33.7 / 44.8, and
    // contiguous n = 256 42.4 / 51.5, n = 512 57.6 / 61.5: at 118 registers
    // against 60, fewer blocks fit an SM, which the one-system tiles of a
    // contiguous batch need more than the shorter solve.
    if (gt == 32 && tune.thomas_pcr_regs > 0 && n >= 2) {
      std::int64_t const chunks = std::min<std::int64_t>(32, n / 2), rows = (n + chunks - 1) / chunks;
      bool const wanted = tune.thomas_pcr_regs > 1 || (!rows_fast && rows > 8);
      if (wanted && rows <= kernels::chunk_reg_rows<T>) pl.solver = kernels::tile_solver::thomas_pcr_regs;
    }
    pl.red_ld = gt > 32 ? (kernels::tridiag_pos(2 * gt) | 1) : 0;
    std::size_t const per = kernels::tridiag_tile_smem<T>(1, ld, pl.red_ld);
    if (!fits || per > stage_max) {
      if (tune.partition == 0) partitioned();
      return pl;
    }
    int const sys = int(std::min<std::size_t>(
        {std::max<std::size_t>(1, (rows_fast ? tune.thomas_pcr_smem : tune.thomas_pcr_smem_interleaved) / per),
         stage_max / per, std::size_t(512 / gt)}));
    pl.systems = int(std::min<std::int64_t>(std::max(1, align_systems(sys, 512 / gt, per)), lay.count));
    pl.threads = gt * pl.systems;
    pl.supported = true;
    // A small contiguous batch (every tile resident at once, so the solve
    // takes about one tile's latency): the copy and the store spread over
    // more threads than the solver uses (the others idle through the solve).
    // bench/tune_tridiag, H100, 2026-11-23, f32 512 x 512 contiguous: 32
    // threads 11.6 us, 128 10.4, 256 10.8, 512 17.2. Interleaved 512 x 512
    // lost (12.4 us with its 256 threads, 13.7 with more) and so did cutting
    // its 8-system tiles narrower to spread them over more SMs.
    std::int64_t const tiles = (lay.count + pl.systems - 1) / pl.systems;
    if (rows_fast && tiles <= tune.small_batch_tiles)
      pl.threads = std::max(pl.threads, std::clamp(tune.small_batch_threads, 32, 512) / 32 * 32);
    // A tile too narrow for whole 32-byte sectors of an interleaved batch
    // copies 4 or 8 bytes per sector: the partitioned form reads twice but
    // coalesced.
    if (tune.partition == 0 && !rows_fast && pl.systems < lay.count && pl.systems * sizeof(T) < 32)
      partitioned();
    return pl;
  }
  if (!fits) return pl;
  int const cap = kernels::pcr_items_per_thread;
  auto round32 = [](std::int64_t v) { return int(std::max<std::int64_t>(32, (v + 31) / 32 * 32)); };
  int gt = 0, sw = 0;
  kernels::tile_solver solver = kernels::tile_solver::cr_pcr;
  switch (alg) {
    case tridiag_algorithm::rd:
      solver = kernels::tile_solver::rd;
      gt = round32((n + kernels::rd_items_per_thread - 1) / kernels::rd_items_per_thread);
      break;
    case tridiag_algorithm::cr_rd:
      solver = kernels::tile_solver::cr_rd;
      gt = std::clamp(tridiag_ceil_pow2(n / 2), 32, 512);
      sw = std::min(tune.cr_rd_switch, gt * kernels::rd_items_per_thread);
      break;
    case tridiag_algorithm::pscheme:
      solver = kernels::tile_solver::pscheme;
      gt = std::min<int>(1024, round32((n + tune.pscheme_rows - 1) / std::max(1, tune.pscheme_rows)));
      break;
    case tridiag_algorithm::cr_packed: {
      solver = kernels::tile_solver::cr_packed;
      std::int64_t const rows = kernels::cr_packed_rows;
      if ((n + rows - 1) / rows > kernels::tile_max_threads(solver)) return pl;
      gt = round32((n + rows - 1) / rows);
      sw = std::min(std::max(2, tune.cr_packed_switch), gt * cap);
      break;
    }
    case tridiag_algorithm::pcr:
      gt = std::max(32, tridiag_ceil_pow2((n + cap - 1) / cap));
      sw = int(n);
      break;
    case tridiag_algorithm::cr:
      gt = std::clamp(tridiag_ceil_pow2(n / 2), 32, 512);
      sw = 2;
      if (tune.cr_split) solver = kernels::tile_solver::cr_split;
      break;
    case tridiag_algorithm::cr_pcr:
      gt = std::clamp(tridiag_ceil_pow2(n / 2), 32, 512);
      sw = std::min(tune.cr_pcr_switch, gt * cap);
      break;
    default:
      return pl;
  }
  int const max_threads = kernels::tile_max_threads(solver);
  if (gt > max_threads) return pl;
  pl.solver = solver;
  pl.group_threads = gt;
  pl.switch_size = sw;
  // The group scans' scratch (rd, cr_rd, pscheme) in the tile's second area.
  if (solver == kernels::tile_solver::rd || solver == kernels::tile_solver::cr_rd ||
      solver == kernels::tile_solver::pscheme)
    pl.red_ld = int((kernels::tridiag_scan_scratch_bytes<T>(gt) + 4 * sizeof(T) - 1) / (4 * sizeof(T)));
  if (solver == kernels::tile_solver::cr_split)  // the reduced levels
    pl.red_ld = kernels::split_level::work_size(int(n)) | 1;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, ld, pl.red_ld);
  if (per > stage_max) return pl;
  int const by_threads = std::max(1, tune.cr_target_threads / gt);
  int const by_smem = int(std::max<std::size_t>(1, std::min(tune.cr_smem, stage_max) / per));
  int const sys = std::min({by_threads, by_smem, max_threads / gt});
  pl.systems = int(std::min<std::int64_t>(align_systems(sys, max_threads / gt, per), lay.count));
  pl.threads = pl.systems * gt;
  pl.supported = true;
  return pl;
}

// Temporary storage the solve needs (0 for the tile algorithms). The
// partitioned form holds the reduced batch (4 arrays of 2 * chunks values per
// system), two ints per system and what the reduced batch's own solve needs.
template <class T>
std::size_t tridiag_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl);

template <class T>
struct tridiag_partition_workspace {
  layout reduced;
  std::size_t arrays = 0, ints = 0, nested = 0;
  tridiag_launch_plan nested_plan;
  tridiag_partition_workspace(layout const& lay, tridiag_launch_plan const& pl)
      : reduced(layout::contiguous(2 * std::int64_t(pl.chunks), lay.count)) {
    auto up = [](std::size_t v) { return (v + 255) / 256 * 256; };
    arrays = up(std::size_t(reduced.n) * reduced.count * sizeof(T));
    ints = up(std::size_t(lay.count) * sizeof(std::int32_t));
    // The reduced batch chooses its own form (never forced to partition:
    // it is shorter than the original, so the recursion ends).
    tridiag_tuning tune = pl.tune;
    tune.partition = 0;
    nested_plan = plan_tridiag<T>(reduced, tridiag_algorithm::thomas_pcr, pl.max_smem, tune);
    nested = tridiag_workspace_bytes<T>(reduced, nested_plan);
  }
  std::size_t total() const { return 4 * arrays + 2 * ints + nested; }
};

// What the segmented form falls back to where clusters of its size do not
// fit (devices before sm_90): whole systems, or the partitioned form.
template <class T>
tridiag_launch_plan tridiag_segments_fallback(layout const& lay, tridiag_launch_plan const& pl) {
  tridiag_tuning tune = pl.tune;
  tune.columns_segment_rows = -1;
  return plan_tridiag<T>(lay, tridiag_algorithm::thomas_pcr, pl.max_smem, tune);
}

// rd and cr_rd: their breakdown depends on the right-hand side.
inline bool tridiag_rhs_breakdown(tridiag_launch_plan const& pl) {
  return pl.supported && !pl.partition && !pl.global_thomas &&
         (pl.solver == kernels::tile_solver::rd || pl.solver == kernels::tile_solver::cr_rd);
}

template <class T>
std::size_t tridiag_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl) {
  if (pl.global_thomas) return std::size_t(lay.n) * std::size_t(lay.count) * sizeof(T);
  if (pl.partition) return tridiag_partition_workspace<T>(lay, pl).total();
  if (pl.columns_segments > 1) return tridiag_workspace_bytes<T>(lay, tridiag_segments_fallback<T>(lay, pl));
  if (tridiag_rhs_breakdown(pl)) return std::size_t(lay.count) * sizeof(std::int32_t);  // the status
  return 0;
}

inline cudaError_t tridiag_max_smem(std::size_t& bytes) {
  int dev = 0, v = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
      e != cudaSuccess)
    return e;
  bytes = std::size_t(v);
  return cudaSuccess;
}

// Blocks of `kernel` resident on the device at once (per SM, at least one,
// times the SMs): the grid of a persistent launch. Cached per (kernel,
// device, threads, shared memory): the occupancy query took 0.5 us of each
// launch (bench/probe_enqueue, H100 host, 2026-11-24), a tenth of a small
// solve's enqueue.
template <class Kernel>
cudaError_t tridiag_resident_blocks(Kernel kernel, int threads, std::size_t smem, std::int64_t& blocks) {
  struct entry {
    void const* kernel;
    int dev, threads;
    std::size_t smem;
    std::int64_t blocks;
  };
  static std::mutex m;
  static std::vector<entry> cache;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  void const* const key = reinterpret_cast<void const*>(kernel);
  {
    std::lock_guard<std::mutex> lock(m);
    for (entry const& c : cache)
      if (c.kernel == key && c.dev == dev && c.threads == threads && c.smem == smem) {
        blocks = c.blocks;
        return cudaSuccess;
      }
  }
  int sms = 0, per_sm = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem); e != cudaSuccess)
    return e;
  blocks = std::int64_t(std::max(1, per_sm)) * sms;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, threads, smem, blocks});
  return cudaSuccess;
}

// Enqueues the planned solve. workspace: tridiag_workspace_bytes of device
// memory (null when that is 0).
// agent_tridiag_direct.cuh's kernel for `rows` rows per lane: persistent
// blocks of 4 warps, as many as are resident at once.
template <class T>
cudaError_t tridiag_launch_direct(int rows, int warps, bool spike, int lanes, T const* a, T const* b, T const* c, T const* d, T* x,
                                  layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                                  std::int32_t* info, cudaStream_t stream) {
  kernels::tridiag_direct_params<T> const p{a, b, c, d, x, info, lay, nrhs, rhs_stride};
  if (warps > 1) {  // one system per block of `warps` warps
    constexpr int gr = kernels::tridiag_direct_group_rows<T>;
    if (rows != gr) return cudaErrorNotSupported;
    auto go = [&]<int W, bool Spike>() -> cudaError_t {
      auto const kernel = kernels::tridiag_direct_group_kernel<T, gr, W, Spike>;
      constexpr int threads = 32 * W;
      std::int64_t resident = 0;
      if (cudaError_t e = tridiag_resident_blocks(kernel, threads, 0, resident); e != cudaSuccess) return e;
      std::int64_t const blocks = std::min({lay.count * nrhs, resident, std::int64_t(1) << 30});
      kernel<<<unsigned(blocks), threads, 0, stream>>>(p);
      return cudaGetLastError();
    };
    switch (warps) {
      case 2:
        return spike ? go.template operator()<2, true>() : go.template operator()<2, false>();
      case 4:
        return spike ? go.template operator()<4, true>() : go.template operator()<4, false>();
      case 8:
        return spike ? go.template operator()<8, true>() : go.template operator()<8, false>();
      case 16:
        if constexpr (kernels::tridiag_direct_warps<T>(16))
          return spike ? go.template operator()<16, true>() : go.template operator()<16, false>();
        break;
    }
    return cudaErrorNotSupported;
  }
  constexpr int block = 128;
  auto go = [&](auto kernel) -> cudaError_t {
    std::int64_t resident = 0;
    if (cudaError_t e = tridiag_resident_blocks(kernel, block, 0, resident); e != cudaSuccess) return e;
    std::int64_t const per_warp = 32 / lanes, items = (lay.count * nrhs + per_warp - 1) / per_warp,
                       warps = block / 32;
    std::int64_t const blocks =
        std::min({(items + warps - 1) / warps, resident, std::int64_t(1) << 30});
    kernel<<<unsigned(blocks), block, 0, stream>>>(p);
    return cudaGetLastError();
  };
  if (lanes < 32) {  // segments of a warp, gr rows per lane
    constexpr int gr = kernels::tridiag_direct_group_rows<T>;
    if (rows != gr) return cudaErrorNotSupported;
    switch (lanes) {
      case 2:
        return go(kernels::tridiag_direct_kernel<T, gr, 2, block>);
      case 4:
        return go(kernels::tridiag_direct_kernel<T, gr, 4, block>);
      case 8:
        return go(kernels::tridiag_direct_kernel<T, gr, 8, block>);
      case 16:
        return go(kernels::tridiag_direct_kernel<T, gr, 16, block>);
    }
    return cudaErrorNotSupported;
  }
  switch (rows) {
    case 2:
      if constexpr (sizeof(T) == 8) return go(kernels::tridiag_direct_kernel<T, 2, 32, block>);
      break;
    case 4:
      return go(kernels::tridiag_direct_kernel<T, 4, 32, block>);
    case 8:
      return go(kernels::tridiag_direct_kernel<T, 8, 32, block>);
    case 16:
      if constexpr (sizeof(T) == 4) return go(kernels::tridiag_direct_kernel<T, 16, 32, block>);
      break;
  }
  return cudaErrorNotSupported;
}

// agent_tridiag_direct.cuh's tridiag_direct_columns_kernel: persistent
// blocks of S systems, as many as are resident at once.
template <class T>
cudaError_t tridiag_launch_direct_columns(tridiag_launch_plan const& pl, T const* a, T const* b, T const* c,
                                          T const* d, T* x, layout const& lay, std::int64_t nrhs,
                                          std::int64_t rhs_stride, std::int32_t* info, cudaStream_t stream) {
  constexpr int GR = kernels::tridiag_direct_group_rows<T>;
  bool const two_warps = pl.direct_rows == 8 && pl.direct_lanes == 64;
  if (pl.direct_rows != GR && !two_warps) return cudaErrorNotSupported;
  kernels::tridiag_direct_params<T> const p{a, b, c, d, x, info, lay, nrhs, rhs_stride};
  auto go = [&]<int Lanes, int R = kernels::tridiag_direct_group_rows<T>>() -> cudaError_t {
    constexpr int S = kernels::tridiag_direct_columns_systems<T>(Lanes), threads = S * Lanes;
    auto const kernel = kernels::tridiag_direct_columns_kernel<T, R, Lanes>;
    constexpr std::size_t smem = kernels::tridiag_direct_columns_smem<T>(R, Lanes, S);
    if constexpr (smem > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
          e != cudaSuccess)
        return e;
    std::int64_t resident = 0;
    if (cudaError_t e = tridiag_resident_blocks(kernel, threads, smem, resident); e != cudaSuccess) return e;
    std::int64_t const groups = (lay.count + S - 1) / S;
    std::int64_t const blocks = std::min({groups * nrhs, resident, std::int64_t(1) << 30});
    kernel<<<unsigned(blocks), threads, smem, stream>>>(p);
    return cudaGetLastError();
  };
  switch (pl.direct_lanes) {
    case 2:
      return go.template operator()<2>();
    case 4:
      return go.template operator()<4>();
    case 8:
      return go.template operator()<8>();
    case 16:
      return go.template operator()<16>();
    case 32:
      return go.template operator()<32>();
    case 64:
      if constexpr (sizeof(T) == 8)
        if (two_warps) return go.template operator()<64, 8>();
      break;
  }
  return cudaErrorNotSupported;
}

// Whether the columns kernel's block has its SM to itself (shared memory
// over half the device's opt-in limit) with at most 512 threads.
inline bool tunes_lone(tridiag_launch_plan const& pl) {
  return pl.tune.columns_lone && pl.threads <= 512 && 2 * pl.smem > pl.max_smem;
}

// agent_tridiag_columns.cuh's kernel: persistent blocks, as many as are
// resident at once.
template <class T>
cudaError_t tridiag_launch_columns(tridiag_launch_plan const& pl, T const* a, T const* b, T const* c, T const* d,
                                   T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                                   std::int32_t* info, cudaStream_t stream) {
  int const S = pl.columns_systems, C = pl.columns_chunks;
  kernels::tridiag_columns_params<T> const p{
      a, b, c, d, x, info, lay, nrhs, rhs_stride, S, C, tridiag_ceil_pow2(C),
      kernels::tridiag_columns_pitch(pl.columns_rows), pl.phases, 1, int(lay.n)};
  // One block per SM by shared memory, at most 512 threads: the lone
  // kernel (more registers, more rows in flight), f32 only.
  auto kernel = pl.columns_rows <= 16 ? kernels::tridiag_columns_kernel<T, 16, false>
                                      : kernels::tridiag_columns_kernel<T, 32, false>;
  if constexpr (sizeof(T) == 4)
    if (tunes_lone(pl))
      kernel = pl.columns_rows <= 16 ? kernels::tridiag_columns_kernel<T, 16, true>
                                     : kernels::tridiag_columns_kernel<T, 32, true>;
  if (pl.columns_burst) kernel = kernels::tridiag_columns_kernel<T, 16, false, true>;
  if (pl.smem > 48 * 1024)
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(pl.max_smem));
        e != cudaSuccess)
      return e;
  std::int64_t resident = 0;
  if (cudaError_t e = tridiag_resident_blocks(kernel, pl.threads, pl.smem, resident); e != cudaSuccess) return e;
  std::int64_t const groups = (lay.count + S - 1) / S;
  std::int64_t const blocks = std::min({groups * nrhs, resident, std::int64_t(1) << 30});
  kernel<<<unsigned(blocks), pl.threads, pl.smem, stream>>>(p);
  return cudaGetLastError();
}

template <class T>
cudaError_t tridiag_launch(tridiag_launch_plan const& pl, void* workspace, T const* a, T const* b, T const* c,
                           T const* d, T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                           std::int32_t* info, cudaStream_t stream);

// Whether the device runs clusters of cfg's size of this kernel (sm_90 and
// room on a GPC), cached per kernel, device and shape; dynamic shared
// memory up to max_smem is allowed first.
template <class Kernel>
cudaError_t tridiag_cluster_fits(Kernel kernel, cudaLaunchConfig_t const& cfg, std::size_t max_smem, bool& fits) {
  struct entry {
    void const* kernel;
    int dev;
    unsigned threads, G;
    std::size_t smem;
    bool fits;
  };
  static std::mutex m;
  static std::vector<entry> cache;
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  void const* const key = reinterpret_cast<void const*>(kernel);
  unsigned const G = cfg.attrs[0].val.clusterDim.x;
  {
    std::lock_guard<std::mutex> lock(m);
    for (entry const& c : cache)
      if (c.kernel == key && c.dev == dev && c.threads == cfg.blockDim.x && c.G == G && c.smem == cfg.dynamicSmemBytes) {
        fits = c.fits;
        return cudaSuccess;
      }
  }
  int major = 0, clusters = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev); e != cudaSuccess)
    return e;
  if (major >= 9) {
    if (cfg.dynamicSmemBytes > 48 * 1024)
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_smem));
          e != cudaSuccess)
        return e;
    if (G > 8)
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
          e != cudaSuccess)
        return e;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // (an unsupported cluster size: not fitting)
      clusters = 0;
    }
  }
  fits = clusters > 0;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, cfg.blockDim.x, G, cfg.dynamicSmemBytes, fits});
  return cudaSuccess;
}

// agent_tridiag_columns.cuh's segmented kernel: a cluster of G blocks per
// group of systems, right-hand sides along y. Where the device cannot run
// clusters of G such blocks, the fallback plan (whose workspace the caller
// was asked for).
template <class T>
cudaError_t tridiag_launch_segments(tridiag_launch_plan const& pl, void* workspace, T const* a, T const* b,
                                    T const* c, T const* d, T* x, layout const& lay, std::int64_t nrhs,
                                    std::int64_t rhs_stride, std::int32_t* info, cudaStream_t stream) {
  int const S = pl.columns_systems, C = pl.columns_chunks, G = pl.columns_segments;
  // The instance for the plan's join (a template argument: the three joins
  // are different programs between the cluster barriers).
  auto by_join = [&](auto pick) {
    using J = std::integral_constant<int, kernels::segment_join_by_thomas>;
    using P = std::integral_constant<int, kernels::segment_join_by_pcr>;
    using X = std::integral_constant<int, kernels::segment_join_by_scatter>;
    return pl.columns_join == X::value ? pick(X{}) : pl.columns_join == P::value ? pick(P{}) : pick(J{});
  };
  // Chunks of 15 and 16 rows (a segment's rows not a multiple of its
  // chunks): the instance that runs both lengths as constants (a 15-row
  // chunk took the runtime-length path). tune_tridiag (H100, 2026-11-25,
  // two processes each), interleaved, % of copy, without -> with: f32 n =
  // 500 63.2 -> 85.9, 1000 60.6 -> 82.1, 2000 45.1 -> 52.7, 3000 46.3 ->
  // 52.2, 4000 49.8 -> 56.5; f64 60.5 -> 79.5, 56.2 -> 71.8, 41.7 -> 53.1,
  // 47.4 -> 63.5, 51.6 -> 72.5 (bench/results/h100-tune-tridiag-near.log).
  // f32's with the scatter join (G > 8 segments) fetches 4 rows ahead, not
  // 2: ptxas had hoisted fewer of its loads than the 16-row instance's
  // (21 against 29 ahead of the first row's elimination in the SASS), and
  // ncu counted the L1TEX scoreboard as its first stall (10.9 of 28.6
  // cycles between issues, n = 4000) where the 16-row instance's was the
  // barrier. tune_tridiag (H100, 2026-11-25, two processes), interleaved
  // f32, % of copy, 2 -> 4 rows ahead: n = 1500 62.9 -> 73.4 / 74.3, 2000
  // 52.5 -> 68.3 / 68.9, 3000 50.3 -> 53.1 / 53.6, 4000 56.3 -> 68.8 /
  // 69.6; with the block Thomas join (G <= 8) it lost: n = 500 86.0 ->
  // 83.8, 1000 82.0 -> 77.2 (bench/results/h100-tune-tridiag-near-ahead.log).
  int const n = int(lay.n), shortest = n / G / C, longest = ((n + G - 1) / G + C - 1) / C;
  bool const near = pl.columns_rows == 16 && longest == 16 && shortest == 15;
  bool const near15 = pl.columns_rows == 15 && longest == 15 && shortest >= 14;  // EXPERIMENT
  auto kernel = by_join([&](auto J) {
    namespace K = kernels;
    constexpr int near_ahead =
        sizeof(T) == 4 && J == K::segment_join_by_scatter ? 4 : K::tridiag_segments_ahead<T>;
    return near                  ? K::tridiag_segments_kernel<T, 16, J, near_ahead,
                                                              K::tridiag_segments_boundary<T>,
                                                              K::tridiag_columns_max_threads<T>, 0, true>
           : near15              ? K::tridiag_segments_kernel<T, 15, J, near_ahead,
                                                              K::tridiag_segments_boundary<T>,
                                                              K::tridiag_columns_max_threads<T>, 0, true>
           : pl.columns_rows <= 16 ? K::tridiag_segments_kernel<T, 16, J>
                                   : K::tridiag_segments_kernel<T, 32, J>;
  });
  // The boundary solve other than the type's default (the A/B instances,
  // 16-row chunks). The twisted one needs 2 S threads (not there with one
  // chunk per system): Thomas instead, or where that instance is not
  // compiled (longer chunks) the fallback plan.
  namespace K = kernels;
  constexpr int bdef = K::tridiag_segments_boundary<T>;
  int const bt = pl.tune.columns_segment_boundary;
  int bd = bt == 0 ? bdef
           : bt == 2 ? K::segment_boundary_by_twisted
           : bt > 0  ? K::segment_boundary_by_thomas
                     : K::segment_boundary_by_pcr;
  bool const twist_short = pl.threads < K::tridiag_boundary_twisted_threads(S);
  if (bd == K::segment_boundary_by_twisted && twist_short) bd = K::segment_boundary_by_thomas;
  if (bd != bdef && pl.columns_rows <= 16) {
    using Kf = decltype(kernel);
    auto pick = [&](auto B) -> Kf {
      return by_join([](auto J) -> Kf {
        return K::tridiag_segments_kernel<T, 16, J, K::tridiag_segments_ahead<T>, decltype(B)::value>;
      });
    };
    using BP = std::integral_constant<int, K::segment_boundary_by_pcr>;
    using BT = std::integral_constant<int, K::segment_boundary_by_thomas>;
    using BW = std::integral_constant<int, K::segment_boundary_by_twisted>;
    kernel = bd == BW::value ? pick(BW{}) : bd == BT::value ? pick(BT{}) : pick(BP{});
  }
  bool const no_instance = bdef == K::segment_boundary_by_twisted && twist_short && pl.columns_rows > 16;
  if constexpr (sizeof(T) == 8) {
    int const ahead = pl.tune.columns_segment_ahead;
    if (pl.columns_rows <= 16 && (ahead == 3 || ahead == 5))
      kernel = by_join([ahead](auto J) {
        return ahead == 3 ? kernels::tridiag_segments_kernel<T, 16, J, 3>
                          : kernels::tridiag_segments_kernel<T, 16, J, 5>;
      });
  }
  if constexpr (sizeof(T) == 4) {
    // The wide instance (the plan's columns_wide: chunks of 17-32 rows,
    // <= 256 threads, twisted boundary, which needs 2 S <= threads).
    if (pl.columns_wide && pl.columns_rows > 16 && pl.threads <= 256 && !twist_short)
      kernel = by_join([](auto J) {
        return kernels::tridiag_segments_kernel<T, 32, J, 6, kernels::segment_boundary_by_twisted, 256, 2>;
      });
  }
  // d in registers (the plan's columns_dregs: 3 blocks per SM, the scatter
  // join; f32 twisted boundary, f64 PCR, as their defaults). Rows fetched
  // ahead, tune_tridiag (H100, 2026-11-25), interleaved n = 4096, % of
  // copy: f32 8 78.0, 12 78.0, 16 75.2; f64 3 77.4, 4 79.2, 5 79.8, 6
  // 78.7, 8 67.0 (n = 3072: 4 78.4, 5 78.8); f64's boundary by Thomas 77.5,
  // twisted 79.0 (bench/results/h100-tune-tridiag-dregs.log).
  bool dregs_bad = false;
  if (pl.columns_dregs) {
    constexpr int X = K::segment_join_by_scatter;
    if constexpr (sizeof(T) == 4)
      kernel = K::tridiag_segments_kernel<T, 64, X, 8, K::segment_boundary_by_twisted, 128, 3, false, true>;
    else
      kernel = K::tridiag_segments_kernel<T, 32, X, 5, K::segment_boundary_by_pcr, 128, 3, false, true>;
    dregs_bad = pl.columns_rows != (sizeof(T) == 4 ? 64 : 32) || pl.threads > 128 || pl.columns_join != X ||
                lay.n % G != 0 || lay.n / G != std::int64_t(C) * pl.columns_rows || (sizeof(T) == 4 && twist_short);
  }
  std::int64_t const blocks = (lay.count + S - 1) / S * G;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(std::min<std::int64_t>(blocks, INT_MAX)), unsigned(std::min<std::int64_t>(nrhs, 65535)));
  cfg.blockDim = dim3(unsigned(pl.threads));
  cfg.dynamicSmemBytes = pl.smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(G);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicy(pl.tune.columns_segment_policy);
  cfg.attrs = attr;
  cfg.numAttrs = pl.tune.columns_segment_policy != 0 ? 2 : 1;
  bool fits = false;
  if (!no_instance && !dregs_bad)
    if (cudaError_t e = tridiag_cluster_fits(kernel, cfg, pl.max_smem, fits); e != cudaSuccess) return e;
  fits = fits && blocks <= INT_MAX;
  if (!fits)
    return tridiag_launch<T>(tridiag_segments_fallback<T>(lay, pl), workspace, a, b, c, d, x, lay, nrhs, rhs_stride,
                             info, stream);
  for (std::int64_t r0 = 0; r0 < nrhs; r0 += 65535) {  // right-hand sides along y
    std::int64_t const nr = std::min<std::int64_t>(nrhs - r0, 65535);
    cfg.gridDim.y = unsigned(nr);
    kernels::tridiag_columns_params<T> const p{a,
                                               b,
                                               c,
                                               d + r0 * rhs_stride,
                                               x + r0 * rhs_stride,
                                               r0 + nr == nrhs ? info : nullptr,
                                               lay,
                                               nr,
                                               rhs_stride,
                                               S,
                                               C,
                                               C,
                                               kernels::tridiag_columns_pitch(pl.columns_rows),
                                               pl.phases,
                                               G,
                                               int(lay.n / G)};
    if (cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p); e != cudaSuccess) return e;
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t tridiag_launch(tridiag_launch_plan const& pl, void* workspace, T const* a, T const* b, T const* c,
                           T const* d, T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                           std::int32_t* info, cudaStream_t stream) {
  if (lay.count <= 0) return cudaSuccess;
  if (lay.n <= 0 || nrhs <= 0)
    return info ? cudaMemsetAsync(info, 0, std::size_t(lay.count) * sizeof(std::int32_t), stream)
                : cudaSuccess;
  if (!pl.supported) return cudaErrorNotSupported;
  constexpr std::int64_t max_grid = 1 << 30;
  if (pl.partition) {
    tridiag_partition_workspace<T> const ws(lay, pl);
    auto* base = static_cast<unsigned char*>(workspace);
    T* ra = reinterpret_cast<T*>(base);
    T* rb = reinterpret_cast<T*>(base + ws.arrays);
    T* rc = reinterpret_cast<T*>(base + 2 * ws.arrays);
    T* rd = reinterpret_cast<T*>(base + 3 * ws.arrays);
    auto* row_info = reinterpret_cast<unsigned*>(base + 4 * ws.arrays);
    auto* rinfo = reinterpret_cast<std::int32_t*>(base + 4 * ws.arrays + ws.ints);
    void* nested = base + 4 * ws.arrays + 2 * ws.ints;
    kernels::chunk_split const split{int(lay.n / pl.chunks), int(lay.n % pl.chunks)};
    std::int64_t const windows = (lay.count + pl.window_systems - 1) / pl.window_systems *
                                 ((pl.chunks + pl.window_chunks - 1) / pl.window_chunks);
    auto reduce = kernels::tridiag_partition_reduce_kernel<T>;
    auto substitute = kernels::tridiag_partition_substitute_kernel<T>;
    // The limit goes to the device's maximum, not this launch's size: the
    // nested solve of the reduced batch launches these kernels too, and a
    // smaller limit set there would reject this level's second launch.
    if (pl.smem > 48 * 1024)
      for (auto k : {reduce, substitute})
        if (cudaError_t e =
                cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(pl.max_smem));
            e != cudaSuccess)
          return e;
    std::int64_t resident = 0;
    if (cudaError_t e = tridiag_resident_blocks(reduce, pl.threads, pl.smem, resident); e != cudaSuccess) return e;
    std::int64_t const blocks = std::min({windows, resident, max_grid});
    for (std::int64_t r = 0; r < nrhs; ++r) {
      kernels::tridiag_partition_params<T> p{a,
                                             b,
                                             c,
                                             d + r * rhs_stride,
                                             x + r * rhs_stride,
                                             lay,
                                             split,
                                             pl.chunks,
                                             pl.window_systems,
                                             pl.window_chunks,
                                             pl.ld,
                                             windows,
                                             ra,
                                             rb,
                                             rc,
                                             rd,
                                             row_info,
                                             rinfo,
                                             r + 1 == nrhs ? info : nullptr};
      if (cudaError_t e = cudaMemsetAsync(row_info, 0xff, std::size_t(lay.count) * sizeof(unsigned), stream);
          e != cudaSuccess)
        return e;
      reduce<<<unsigned(blocks), pl.threads, pl.smem, stream>>>(p);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      if (cudaError_t e = tridiag_launch<T>(ws.nested_plan, nested, ra, rb, rc, rd, rd, ws.reduced, 1,
                                            ws.reduced.n * ws.reduced.count, rinfo, stream);
          e != cudaSuccess)
        return e;
      substitute<<<unsigned(blocks), pl.threads, pl.smem, stream>>>(p);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  if (pl.global_thomas) {
    kernels::tridiag_global_thomas_params<T> p{a,    b,   c,    d,         x, static_cast<T*>(workspace),
                                               info, lay, nrhs, rhs_stride};
    std::int64_t const blocks = std::min((lay.count + pl.threads - 1) / pl.threads, max_grid);
    kernels::tridiag_global_thomas_kernel<T><<<unsigned(blocks), pl.threads, 0, stream>>>(p);
    return cudaGetLastError();
  }
  if (pl.direct_columns)
    return tridiag_launch_direct_columns<T>(pl, a, b, c, d, x, lay, nrhs, rhs_stride, info, stream);
  if (pl.columns_segments > 1)
    return tridiag_launch_segments<T>(pl, workspace, a, b, c, d, x, lay, nrhs, rhs_stride, info, stream);
  if (pl.columns_systems > 0) return tridiag_launch_columns<T>(pl, a, b, c, d, x, lay, nrhs, rhs_stride, info, stream);
  if (pl.direct_rows > 0) {
    auto aligned = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
    if (aligned(a) && aligned(b) && aligned(c) && aligned(d) && aligned(x) &&
        (nrhs == 1 || rhs_stride * sizeof(T) % 16 == 0))
      return tridiag_launch_direct<T>(pl.direct_rows, pl.direct_warps, pl.direct_spike, pl.direct_lanes, a, b, c,
                                      d, x, lay, nrhs,
                                      rhs_stride, info,
                                      stream);
  }
  // Several right-hand sides whose breakdown may differ: a status per system.
  std::int32_t* const status =
      tridiag_rhs_breakdown(pl) && nrhs > 1 ? static_cast<std::int32_t*>(workspace) : nullptr;
  if (status)
    if (cudaError_t e = cudaMemsetAsync(status, 0x7f, std::size_t(lay.count) * sizeof(std::int32_t), stream);
        e != cudaSuccess)
      return e;
  kernels::tridiag_tile_params<T> p{a,
                                    b,
                                    c,
                                    d,
                                    x,
                                    info,
                                    status,
                                    lay,
                                    nrhs,
                                    rhs_stride,
                                    (lay.count + pl.systems - 1) / pl.systems,
                                    pl.systems,
                                    pl.group_threads,
                                    pl.ld,
                                    pl.red_ld,
                                    pl.switch_size,
                                    lay.element_stride == 1 || lay.n == 1,
                                    pl.stages,
                                    pl.phases,
                                    pl.tune.max_steps};
  std::size_t const smem = pl.stages * kernels::tridiag_tile_smem<T>(pl.systems, pl.ld, pl.red_ld);
  auto const kernel = kernels::tridiag_tile_kernel<T>(pl.solver);
  if (smem > 48 * 1024)  // the device's maximum, as for the partitioned kernels above
    if (cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(pl.max_smem));
        e != cudaSuccess)
      return e;
  // Persistent blocks: as many as are resident at once (the blocks walk the
  // tiles; a second wave would only delay the first wave's overlap).
  std::int64_t resident = 0;
  if (cudaError_t e = tridiag_resident_blocks(kernel, pl.threads, smem, resident); e != cudaSuccess) return e;
  std::int64_t const blocks = std::min({p.tiles * nrhs, resident, max_grid});
  kernel<<<unsigned(blocks), pl.threads, smem, stream>>>(p);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess || !status) return e;
  std::int64_t const fix_blocks = std::min((lay.count + 255) / 256, max_grid);
  kernels::tridiag_rhs_status_kernel<T><<<unsigned(fix_blocks), 256, 0, stream>>>(status, info, x, lay, nrhs,
                                                                                   rhs_stride);
  return cudaGetLastError();
}

// CUB-style entry: null temp reports temp_bytes (at least 1) and enqueues
// nothing.
template <class T>
cudaError_t tridiag_solve(void* temp, std::size_t& temp_bytes, T const* a, T const* b, T const* c, T const* d,
                          T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                          std::int32_t* info, tridiag_algorithm alg, cudaStream_t stream,
                          tridiag_tuning const& tune = {}) {
  std::size_t max_smem = 0;
  if (cudaError_t e = tridiag_max_smem(max_smem); e != cudaSuccess) return e;
  tridiag_launch_plan const pl = plan_tridiag<T>(lay, alg, max_smem, tune);
  std::size_t const need = tridiag_workspace_bytes<T>(lay, pl);
  if (!temp) {
    temp_bytes = std::max<std::size_t>(need, 1);
    return cudaSuccess;
  }
  if (temp_bytes < need) return cudaErrorInvalidValue;
  if (rhs_stride == 0) rhs_stride = lay.n * lay.count;
  return tridiag_launch<T>(pl, temp, a, b, c, d, x, lay, nrhs, rhs_stride, info, stream);
}

}  // namespace recur::device
