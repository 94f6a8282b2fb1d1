#pragma once
// Tuning policies of the batched tridiagonal solvers: the thresholds of the
// ranked lists (kernels/dispatch/tridiag_resolve.cuh) and the shapes the
// builders (kernels/dispatch/tridiag_forms.cuh) give each form, one
// constexpr struct per architecture and value type; and the compiled
// instances of the segmented and direct kernels. The entries cited are bench_linrec's
// tridiag benchmarks (bench/bench_tridiag.cu) and tune_tridiag's shapes on
// an H100; bench/tune_tridiag injects other policies to compare. Every
// number that a benchmark chose lives here; the ones left in the builders
// follow from a kernel's structure (a 128-byte line, a warp, an instance's
// compiled row count).

#include <cstddef>
#include <cstdint>

#include "../agent/agent_tridiag_columns.cuh"
#include "../agent/agent_tridiag_segments.cuh"

namespace recur::kernels {

// The compiled instances of the segmented kernel
// (agent_tridiag_segments.cuh's tridiag_segments_kernel) that a segments
// plan's instance names (rows a chunk at most, rows fetched ahead, the
// boundary solve, threads a block at most and blocks an SM that the launch
// bounds ask for), and the direct kernel's block.
template <class T>
struct tridiag_segments_instances {
  // near16 and near15 with the scatter join: f32 fetches 4 rows ahead (its
  // loads are otherwise hoisted less than the 16-row instance's):
  // tridiag_auto_f32_interleaved/n:4096.
  static constexpr int near_scatter_ahead = sizeof(T) == 4 ? 4 : tridiag_segments_ahead<T>;
  // wide (f32): chunks of up to 32 rows, 6 ahead, 256 threads, 2 blocks an
  // SM: tune_tridiag inter f32 n:4096.
  static constexpr int wide_rows = 32, wide_ahead = 6, wide_threads = 256, wide_blocks = 2;
  static constexpr int wide_boundary = segment_boundary_by_twisted;
  // dregs: d in registers, chunks of exactly dregs_rows rows, 128 threads,
  // 3 blocks an SM: tune_tridiag inter n:4096 (f32 and f64).
  static constexpr int dregs_rows = sizeof(T) == 4 ? 64 : 32;
  static constexpr int dregs_ahead = sizeof(T) == 4 ? 8 : 5;
  static constexpr int dregs_threads = 128, dregs_blocks = 3;
  static constexpr int dregs_boundary =
      sizeof(T) == 4 ? segment_boundary_by_twisted : segment_boundary_by_pcr;
  // The direct form's segments of lanes: blocks of 128 threads (four warps,
  // the exact instances' launch bound of 5 blocks an SM).
  static constexpr int direct_block = 128;
};

template <class T>
struct tridiag_policy_sm90 {
  // automatic runs Thomas's tile below this many rows where Thomas-PCR has
  // no full-line or exact register form (tridiag_auto_f32_contiguous/n:64,
  // tridiag_auto_f64_interleaved/n:64).
  static constexpr std::int64_t automatic_thomas_below = 128;

  // Thomas, one thread per system: a tile of up to thomas_max_systems
  // systems in about thomas_smem bytes, blocks of at least
  // thomas_min_threads; fewer than thomas_min_systems fit and the
  // global-memory Thomas runs instead.
  static constexpr std::size_t thomas_smem = 32 * 1024;
  static constexpr int thomas_max_systems = 256;
  static constexpr int thomas_min_systems = 16;
  static constexpr int thomas_min_threads = 128;

  // pivoting = partial on plain systems: Thomas's tile with the pivoted
  // elimination where the systems are at most partial_tile_bytes an array
  // or at most partial_tile_count of them, else the pivoted form: H100
  // tridiag_pivot_* (the tile ahead at 64 x 2^20 and 512 x 512, behind at
  // f32 512 x 2^16 and f64 256 x 2^17).
  static constexpr std::int64_t partial_tile_bytes = 1024;
  static constexpr std::int64_t partial_tile_count = 1024;

  // The one-thread-a-system forms (global-memory Thomas, the pivoted form,
  // Bondeli's blocks and correction): threads a block.
  static constexpr int system_threads = 128;
  // The pivoted form that re-solves the systems automatic's screen flags
  // factors at most as many at once as fit the larger of this and one array
  // of the batch (at least one system): its workspace, which every
  // automatic solve holds, stays near the batch's own size.
  static constexpr std::size_t pivot_bounded_bytes = std::size_t(64) << 20;
  // Bondeli's algorithm: about this many blocks of rows (a thread each) in
  // the whole batch.
  static constexpr std::int64_t bondeli_threads = std::int64_t(1) << 16;

  // The group solvers (cr, pcr, cr_pcr, rd, cr_rd, cr_packed, pscheme,
  // cr_split): about cr_target_threads threads and cr_smem bytes a tile.
  static constexpr int cr_target_threads = 512;
  static constexpr std::size_t cr_smem = 48 * 1024;
  static constexpr int cr_pcr_switch = 128;   // PCR once the reduced system has this many equations
  static constexpr int cr_rd_switch = 128;    // RD likewise (Zhang et al. 2010)
  static constexpr int cr_packed_switch = 2;  // register-packed CR all the way down
  static constexpr int pscheme_rows = 8;      // rows per thread of each recurrence's P-scheme

  // Thomas-PCR's shared-memory tile: a system per group of threads, about
  // thomas_pcr_rows rows a thread, at most thomas_pcr_max_threads a system.
  // tridiag_auto_f64_contiguous/n:256: 8 KB tiles (one system each from
  // n = 512 in f32) let blocks overlap their copies with others' solves.
  static constexpr std::size_t thomas_pcr_smem = 8 * 1024;
  // Interleaved tiles also span whole 32-byte sectors of systems, so they
  // need room for several: tridiag_auto_f64_interleaved/n:256.
  static constexpr std::size_t thomas_pcr_smem_interleaved = 48 * 1024;
  static constexpr int thomas_pcr_rows = 16;
  static constexpr int thomas_pcr_max_threads = 256;
  // One warp a system with its chunks in registers where an interleaved
  // tile's chunks have more than this many rows (contiguous tiles need the
  // occupancy more): tune_tridiag inter n:300.
  static constexpr int thomas_pcr_regs_min_rows = 8;
  // The direct forms (Thomas-PCR from registers) run systems that fill at
  // least this percentage of their rows (identity rows past n), the tile
  // shorter ones: tune_tridiag contig no_pad, n:2049 (the tile faster),
  // n:300 and n:3001 (the direct form faster).
  static constexpr int direct_min_fill = 55;
  // Small contiguous batches (at most this many tiles, all resident at
  // once): blocks of at least this many threads share the copy;
  // tridiag_auto_f32_contiguous/n:512/batch:512.
  static constexpr std::int64_t small_batch_tiles = 1024;
  static constexpr int small_batch_threads = 128;

  // Interleaved batches of at least columns_min_count systems run the
  // columns or segmented kernels; smaller ones (latency-bound) the direct
  // columns or burst forms. tridiag_auto_f32_interleaved/n:512/batch:512.
  static constexpr std::int64_t columns_min_count = 2048;
  // The columns kernel's chunks: about columns_rows rows, columns_rows_long
  // from n > columns_long_n (tune_tridiag inter f32 n:512 and n:1024).
  static constexpr int columns_rows = 16;
  static constexpr int columns_rows_long = sizeof(T) == 4 ? 32 : 16;
  static constexpr std::int64_t columns_long_n = 256;
  // Segments of about segment_rows rows from n = segment_min_n, at most
  // max_segments (a thread-block cluster); 256-row segments where those
  // fall short. tridiag_auto_f32_interleaved/n:1024 and n:4096.
  static constexpr int segment_rows = 128;
  static constexpr int segment_rows_long = 256;
  static constexpr std::int64_t segment_min_n = 256;
  static constexpr int max_segments = 16;
  // f64 takes 256-row segments from n = 513 wherever their chunks are
  // 15 or 16 rows: tridiag_auto_f64_interleaved/n:1024.
  static constexpr bool long_segments_early = sizeof(T) == 8;
  // ... and only where the segments are at least this many rows (chunks of
  // 15-16 rows): tune_tridiag f64 inter n:1800.
  static constexpr std::int64_t long_segments_min_rows = 240;
  // f32's wide segments: 4 or 8 chunks of 32 rows at 16 segments
  // (256 threads, 6 rows fetched ahead).
  static constexpr bool wide_segments = sizeof(T) == 4;
  // Segments with d in registers (3 blocks an SM) where 9 or more 256-row
  // segments hold chunks of dregs_rows rows:
  // tridiag_auto_f32_interleaved/n:4096/batch:8192.
  static constexpr int dregs_rows = tridiag_segments_instances<T>::dregs_rows;
  static constexpr int dregs_max_chunks = sizeof(T) == 4 ? 4 : 8;
  static constexpr int dregs_min_segments = 9;
  // And in f32 up to this many rows short of such a split (identity rows
  // past n; f64's ran no faster than the plain segments): tune_tridiag inter n:4090.
  static constexpr int dregs_max_pad = sizeof(T) == 4 ? dregs_rows - 1 : 0;
  // The join of the segments: PCR in f64 up to 4 segments, the scatter
  // from 9, else the block Thomas.
  static constexpr int join_pcr_max_segments = sizeof(T) == 8 ? 4 : 0;
  static constexpr int join_scatter_min_segments = 9;

  // The partitioned form: chunks of about this many rows a thread; for
  // contiguous systems, chunks of a 128-byte line in registers instead
  // (partition_regs): tune_tridiag contig n:16777216/batch:1.
  static constexpr int partition_chunk = 32;
  static constexpr bool partition_regs = true;
  // Its shared-memory windows: blocks of partition_threads threads, windows
  // halved until they fit partition_window_smem (c315a13's sweep, contiguous
  // n:2^20).
  static constexpr int partition_threads = 128;
  static constexpr std::size_t partition_window_smem = 100 * 1024;
};

// sm_80 runs the H100's choices (not measured on an sm_80 chip). Its
// segmented kernel has no clusters and falls back to whole systems at launch.
template <class T>
struct tridiag_policy_sm80 : tridiag_policy_sm90<T> {};

}  // namespace recur::kernels
