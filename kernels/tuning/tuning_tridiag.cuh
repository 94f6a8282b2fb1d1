#pragma once
// Tuning policies of the batched tridiagonal solvers: the shapes the plan
// (kernels/dispatch/tridiag_plan.cuh) gives each form, one constexpr struct
// per architecture and value type. The entries cited are bench_linrec's
// tridiag_auto benchmarks (bench/bench_tridiag.cu) on an H100;
// bench/tune_tridiag injects other policies to compare.

#include <cstddef>
#include <cstdint>

namespace recur::kernels {

template <class T>
struct tridiag_policy_sm90 {
  // Thomas, one thread per system: a tile of up to thomas_max_systems
  // systems in about thomas_smem bytes; fewer than thomas_min_systems fit
  // and the global-memory Thomas runs instead.
  static constexpr std::size_t thomas_smem = 32 * 1024;
  static constexpr int thomas_max_systems = 256;
  static constexpr int thomas_min_systems = 16;

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
  // f32's wide segments: 4 or 8 chunks of 32 rows at 16 segments
  // (256 threads, 6 rows fetched ahead).
  static constexpr bool wide_segments = sizeof(T) == 4;
  // Segments with d in registers (3 blocks an SM) where 9 or more 256-row
  // segments hold chunks of dregs_rows rows:
  // tridiag_auto_f32_interleaved/n:4096/batch:8192.
  static constexpr int dregs_rows = sizeof(T) == 4 ? 64 : 32;
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
};

// sm_80 runs the H100's choices (not measured on an sm_80 chip). Its
// segmented kernel has no clusters and falls back to whole systems at launch.
template <class T>
struct tridiag_policy_sm80 : tridiag_policy_sm90<T> {};

}  // namespace recur::kernels
