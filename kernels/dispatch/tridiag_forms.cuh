#pragma once
// The forms of the batched tridiagonal solve on the GPU: each form's plan
// (the fields its launch reads, nothing else) and its builder, which says
// whether the form runs a shape (an empty optional where it does not) and
// with what. Host code only. Which form runs for a shape is decided in one
// place, tridiag_resolve.cuh's ranked lists, from these builders and the
// tuning policy (kernels/tuning/tuning_tridiag.cuh); tests and tuning
// programs call the builders to run a form where the lists would not.
// Internal: none of this is API (recur::device::tridiag_solve is).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include <recur/layout/layout.hpp>
#include <recur/types.hpp>
#include "../agent/agent_tridiag_bondeli.cuh"
#include "../agent/agent_tridiag_columns.cuh"
#include "../agent/agent_tridiag_direct.cuh"
#include "../agent/agent_tridiag_partition.cuh"
#include "../agent/agent_tridiag_pivot.cuh"
#include "../agent/agent_tridiag_segments.cuh"
#include "../agent/agent_tridiag_tile.cuh"
#include "../tuning/tuning_tridiag.cuh"

namespace recur::detail {

// The device a plan is made for: its opt-in shared memory per block and
// its compute capability's major number.
struct tridiag_device {
  std::size_t max_smem = 0;
  int cc_major = 0;
};

// Systems in a shared-memory tile (agent_tridiag_tile.cuh), `systems` a
// tile, `group_threads` a system.
struct tridiag_tile_plan {
  kernels::tile_solver solver = kernels::tile_solver::thomas;
  int systems = 0, group_threads = 1, threads = 0;
  int ld = 0;           // a system's shared-memory column (odd, >= tridiag_pos(n))
  int red_ld = 0;       // per system 4 red_ld values of scratch (agent_tridiag_tile.cuh)
  int switch_size = 0;  // cr_pcr, cr_rd, cr_packed: PCR (RD) below this many equations
  std::size_t smem = 0;
  bool serial_join = false;  // thomas_pcr: the boundary system by Thomas (warp_boundary_thomas)
};

// One thread a system through global memory (agent_tridiag_global_thomas.cuh).
struct tridiag_global_thomas_plan {
  int threads = 0;
};

// Thomas-PCR in three passes over global memory (agent_tridiag_partition.cuh):
// `chunks` chunks a system, each thread's chunk in registers (regs_rows
// rows, contiguous systems) or in a shared-memory window of window_systems
// x window_chunks chunks; the reduced systems solved by `inner`.
struct tridiag_partition_plan {
  int chunks = 0, threads = 0;
  int regs_rows = 0;  // 0: windows
  int window_systems = 0, window_chunks = 0, ld = 0;
  std::size_t smem = 0;
  tridiag_algorithm inner = tridiag_algorithm::thomas_pcr;
};

// Thomas-PCR from global memory into registers (agent_tridiag_direct.cuh):
// `lanes` lanes a system (segments of a warp, up to 32), or `warps` warps
// a system of 32 lanes each (spike: the warps joined by spikes instead of
// warp 0), `rows` rows a lane; size() >= n, the rows past n identity rows.
struct tridiag_direct_plan {
  int rows = 0, lanes = 0, warps = 1;
  bool spike = false;
  std::int64_t size() const { return std::int64_t(lanes) * warps * rows; }
};

// The direct form fed through shared memory, interleaved batches: `lanes`
// lanes (f64 also 64: two warps) of `rows` rows a system.
struct tridiag_direct_columns_plan {
  int rows = 0, lanes = 0;
  std::int64_t size() const { return std::int64_t(lanes) * rows; }
};

// A block of the columns or segmented kernel (agent_tridiag_columns.cuh,
// agent_tridiag_segments.cuh): `systems` adjacent systems, `chunks` chunks
// of at most `rows` rows a system (or a segment).
struct tridiag_columns_block {
  int systems = 0, chunks = 0, rows = 0, threads = 0;
  std::size_t smem = 0;
};

// The columns kernel's instance: chunks of up to 16 or 32 rows; lone: f32
// blocks that have their SM to themselves (4 rows fetched ahead); burst:
// small batches, every row of a chunk fetched at once.
enum class columns_instance { rows16, rows16_lone, rows32, rows32_lone, burst };

struct tridiag_columns_plan : tridiag_columns_block {
  columns_instance instance = columns_instance::rows16;
};

// The segmented kernel's instance: chunks of up to 16 or 32 rows; near16
// and near15: chunks of R and R - 1 rows, both lengths constants; wide: f32,
// chunks of 17-32 rows; dregs: d in registers (tridiag_segments_instances).
enum class segments_instance { rows16, rows32, near16, near15, wide, dregs };

// Systems cut into `segments` segments joined in a thread-block cluster.
struct tridiag_segments_plan : tridiag_columns_block {
  int segments = 0;
  int join = kernels::segment_join_by_thomas;
  int pad_rows = 0;  // dregs: identity rows past n, so that n + pad_rows splits evenly
  segments_instance instance = segments_instance::rows16;
};

// Every option, one thread a system (agent_tridiag_pivot.cuh). refine:
// refinement = mixed (the workspace holds float and double factors);
// bounded: the workspace holds fewer systems than the batch
// (tridiag_pivot_slots).
struct tridiag_pivot_plan {
  int threads = 0;
  bool refine = false, bounded = false;
  std::size_t bounded_bytes = 0;  // bounded: the policy's pivot_bounded_bytes
};

// Bondeli's divide and conquer (agent_tridiag_bondeli.cuh): `blocks` blocks
// of rows a system, one thread each.
struct tridiag_bondeli_plan {
  std::int64_t blocks = 0;
  int threads = 0;
};

using tridiag_form = std::variant<tridiag_tile_plan, tridiag_global_thomas_plan, tridiag_partition_plan,
                                  tridiag_direct_plan, tridiag_direct_columns_plan, tridiag_columns_plan,
                                  tridiag_segments_plan, tridiag_pivot_plan, tridiag_bondeli_plan>;

namespace tridiag_shape {

inline int ceil_pow2(long long v) {
  return v <= 1 ? 1 : int(std::bit_ceil(static_cast<unsigned long long>(v)));
}
inline int round32(std::int64_t v) { return int(std::max<std::int64_t>(32, (v + 31) / 32 * 32)); }
inline bool pow2(std::int64_t v) { return v > 0 && std::has_single_bit(std::uint64_t(v)); }

// Rows are adjacent in memory (the contiguous layout, or n = 1).
inline bool rows_fast(layout const& lay) { return lay.element_stride == 1 || lay.n == 1; }

// The shared-memory column of one system (odd, tridiag_pos) and whether
// one system fits a block at all.
struct column {
  int ld = 0;
  bool fits = false;
};
template <class T>
column system_column(layout const& lay, std::size_t max_smem) {
  if (lay.n <= 0 || lay.n >= (std::int64_t(1) << 24)) return {};
  int const ld = kernels::tridiag_pos(int(lay.n)) | 1;
  return {ld, kernels::tridiag_tile_smem<T>(1, ld) <= max_smem};
}

// The direct forms' lanes of R = tridiag_direct_group_rows rows for n: the
// smallest power of two that holds n, 0 where n fills less than min_fill
// percent of its rows.
template <class T>
std::int64_t direct_lanes(std::int64_t n, int min_fill) {
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  if (n <= 0) return 0;
  std::int64_t const lanes = ceil_pow2((n + gr - 1) / gr);
  return n * 100 < lanes * gr * min_fill ? 0 : lanes;
}

// An interleaved tile takes whole 32-byte sectors of systems where it can:
// sys rounded up to a multiple of 32 / sizeof(T) when that fits, else down.
template <class T>
int align_systems(layout const& lay, int sys, int max_sys, std::size_t per, std::size_t max_smem) {
  int const unit = int(32 / sizeof(T));
  if (rows_fast(lay) || sys % unit == 0 || lay.count <= sys) return sys;
  int const up = (sys + unit - 1) / unit * unit;
  if (up <= max_sys && std::size_t(up) * per <= max_smem) return up;
  return sys > unit ? sys / unit * unit : sys;
}

}  // namespace tridiag_shape

// --- Tiles -----------------------------------------------------------------

// Thomas on a tile of as many systems as fit target_smem (at most
// max_systems), blocks of at least min_threads. None where fewer than
// min_systems fit.
template <class T>
std::optional<tridiag_tile_plan> tridiag_plan_thomas_tile(layout const& lay, std::size_t max_smem,
                                                          std::size_t target_smem, int max_systems,
                                                          int min_systems, int min_threads) {
  using namespace tridiag_shape;
  auto const col = system_column<T>(lay, max_smem);
  if (!col.fits) return {};
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld);
  std::size_t const budget = std::max(target_smem, per * std::size_t(min_systems));
  int const sys = int(std::min({std::size_t(max_systems), budget / per, max_smem / per}));
  if (sys < min_systems) return {};
  tridiag_tile_plan pl;
  pl.solver = kernels::tile_solver::thomas;
  pl.ld = col.ld;
  pl.systems = int(std::min<std::int64_t>(align_systems<T>(lay, sys, 1024, per, max_smem), lay.count));
  pl.threads = std::max(min_threads, (pl.systems + 31) / 32 * 32);
  pl.smem = kernels::tridiag_tile_smem<T>(pl.systems, pl.ld);
  return pl;
}

// A group solver (cr, pcr, cr_pcr, rd, cr_rd, cr_packed, pscheme,
// cr_split) on a tile: group_threads threads a system, `switch_size` its
// switch to PCR or RD, about target_threads threads and target_smem bytes a
// tile.
template <class T>
std::optional<tridiag_tile_plan> tridiag_plan_group_tile(layout const& lay, std::size_t max_smem,
                                                         kernels::tile_solver solver, int group_threads,
                                                         int switch_size, int target_threads,
                                                         std::size_t target_smem) {
  using namespace tridiag_shape;
  auto const col = system_column<T>(lay, max_smem);
  int const max_threads = kernels::tile_max_threads(solver);
  if (!col.fits || group_threads > max_threads) return {};
  int red_ld = 0;
  if (solver == kernels::tile_solver::rd || solver == kernels::tile_solver::cr_rd ||
      solver == kernels::tile_solver::pscheme)  // the group scans' scratch
    red_ld =
        int((kernels::tridiag_scan_scratch_bytes<T>(group_threads) + 4 * sizeof(T) - 1) / (4 * sizeof(T)));
  if (solver == kernels::tile_solver::cr_split)  // the reduced levels
    red_ld = kernels::split_level::work_size(int(lay.n)) | 1;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld, red_ld);
  if (per > max_smem) return {};
  int const by_threads = std::max(1, target_threads / group_threads);
  int const by_smem = int(std::max<std::size_t>(1, std::min(target_smem, max_smem) / per));
  int const sys = std::min({by_threads, by_smem, max_threads / group_threads});
  tridiag_tile_plan pl;
  pl.solver = solver;
  pl.ld = col.ld;
  pl.red_ld = red_ld;
  pl.group_threads = group_threads;
  pl.switch_size = switch_size;
  pl.systems = int(std::min<std::int64_t>(
      align_systems<T>(lay, sys, max_threads / group_threads, per, max_smem), lay.count));
  pl.threads = pl.systems * group_threads;
  pl.smem = kernels::tridiag_tile_smem<T>(pl.systems, pl.ld, pl.red_ld);
  return pl;
}

// Thomas-PCR on a tile, group_threads (a power of two >= 32) threads a
// system, about target_smem bytes a tile, blocks of at least min_threads.
// regs: one warp a system with its chunks in registers, where they fit.
template <class T>
std::optional<tridiag_tile_plan> tridiag_plan_thomas_pcr_tile(layout const& lay, std::size_t max_smem,
                                                              int group_threads, std::size_t target_smem,
                                                              int min_threads, bool regs) {
  using namespace tridiag_shape;
  auto const col = system_column<T>(lay, max_smem);
  int const gt = group_threads;
  int const red_ld = gt > 32 ? (kernels::tridiag_pos(2 * gt) | 1) : 0;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld, red_ld);
  if (!col.fits || per > max_smem) return {};
  tridiag_tile_plan pl;
  pl.solver = kernels::tile_solver::thomas_pcr;
  if (regs && gt == 32 && lay.n >= 2) {
    std::int64_t const chunks = std::min<std::int64_t>(32, lay.n / 2), rows = (lay.n + chunks - 1) / chunks;
    if (rows <= kernels::chunk_reg_rows<T>) pl.solver = kernels::tile_solver::thomas_pcr_regs;
  }
  pl.ld = col.ld;
  pl.red_ld = red_ld;
  pl.group_threads = gt;
  int const sys = int(std::min<std::size_t>(
      {std::max<std::size_t>(1, target_smem / per), max_smem / per, std::size_t(512 / gt)}));
  pl.systems = int(
      std::min<std::int64_t>(std::max(1, align_systems<T>(lay, sys, 512 / gt, per, max_smem)), lay.count));
  pl.threads = std::max(gt * pl.systems, std::clamp(min_threads, 32, 512) / 32 * 32);
  pl.smem = kernels::tridiag_tile_smem<T>(pl.systems, pl.ld, pl.red_ld);
  return pl;
}

// --- Global memory ---------------------------------------------------------

// One thread a system through global memory: any shape.
inline tridiag_global_thomas_plan tridiag_plan_global_thomas(int threads) { return {threads}; }

// The pivoted form: any shape.
inline tridiag_pivot_plan tridiag_plan_pivot(int threads, bool refine, bool bounded = false,
                                             std::size_t bounded_bytes = 0) {
  return {threads, refine, bounded, bounded_bytes};
}

// The systems the pivoted form factors at once (its workspace's slots):
// every system; bounded, as many as keep the workspace within the larger of
// bounded_bytes and one array of the batch (n count values), at least one.
// A bounded form runs on fewer threads, each solving several systems in
// turn.
template <class T>
std::int64_t tridiag_pivot_slots(layout const& lay, tridiag_pivot_plan const& pl) {
  if (lay.count <= 0 || !pl.bounded) return std::max<std::int64_t>(0, lay.count);
  std::size_t const row = kernels::tridiag_pivot_row_bytes<T>(pl.refine);
  std::size_t const per_system = row * std::size_t(std::max<std::int64_t>(1, lay.n));
  std::int64_t const by_size = std::int64_t(pl.bounded_bytes / per_system);
  std::int64_t const by_array = std::int64_t(std::size_t(lay.count) * sizeof(T) / row);
  return std::clamp<std::int64_t>(std::max(by_size, by_array), 1, lay.count);
}

// Bondeli's algorithm: about `threads` threads in all, one per block of
// rows, and at most sqrt(n) blocks a system, since the reduced system's
// 2p - 2 rows are solved by one thread a system (agent_tridiag_bondeli.cuh).
inline tridiag_bondeli_plan tridiag_plan_bondeli(layout const& lay, std::int64_t threads, int block_threads) {
  std::int64_t const count = std::max<std::int64_t>(1, lay.count);
  std::int64_t root = std::int64_t(std::sqrt(double(std::max<std::int64_t>(1, lay.n))));
  while (root * root > lay.n) --root;
  while ((root + 1) * (root + 1) <= lay.n) ++root;
  return {std::clamp<std::int64_t>((threads + count - 1) / count, 1, std::max<std::int64_t>(1, root)),
          block_threads};
}

// The partitioned Thomas-PCR: chunks of about `chunk` rows, a thread each,
// windows of systems x chunks per block of `threads` (halved until a window
// fits window_smem), the reduced systems solved by `inner`. Any 4 <= n <
// 2^30. regs: contiguous systems take chunks of exactly
// kernels::tridiag_partition_regs_rows<T> rows in registers instead (no
// windows).
template <class T>
std::optional<tridiag_partition_plan> tridiag_plan_partition(layout const& lay, std::size_t max_smem,
                                                             int chunk, tridiag_algorithm inner, bool regs,
                                                             int threads, std::size_t window_smem) {
  using namespace tridiag_shape;
  tridiag_partition_plan pl;
  pl.inner = inner;
  pl.threads = threads;
  std::int64_t const n = lay.n;
  if (n < 4 || n >= (std::int64_t(1) << 30)) return {};  // chunks of >= 2 rows; int row indices
  if (constexpr int R = kernels::tridiag_partition_regs_rows<T>; regs && rows_fast(lay) && n >= 2 * R) {
    pl.regs_rows = R;
    pl.chunks = int((n + R - 1) / R);
    return pl;
  }
  pl.chunks = int(std::max<std::int64_t>(2, n / std::max(4, chunk)));
  int const base = int(n / pl.chunks);
  // A 128-byte line of adjacent systems where the layout interleaves them.
  pl.window_systems =
      rows_fast(lay) ? 1 : int(std::min<std::int64_t>(lay.count, 32 * 4 / std::int64_t(sizeof(T))));
  pl.window_chunks = std::max(1, std::min(pl.threads / pl.window_systems, pl.chunks));
  for (;;) {
    pl.ld = kernels::tridiag_pos(pl.window_chunks * (base + 1)) | 1;
    pl.smem = kernels::tridiag_partition_smem<T>(pl.window_systems, pl.ld);
    if (pl.smem <= std::min(max_smem, window_smem) || pl.window_chunks == 1) break;
    pl.window_chunks /= 2;
  }
  if (pl.smem > max_smem) return {};
  return pl;
}

// --- Registers -------------------------------------------------------------

// Thomas-PCR from global memory into registers: n <= Lanes R (segments of a
// warp, R = tridiag_direct_group_rows, Lanes a power of two 2..32), or n <=
// 32 W R (W warps; f64's 16 warps joined by spikes, fewer by warp 0), the
// smallest that holds n, where n fills at least min_fill percent of its rows
// (the rest are identity rows, solved but neither read nor written).
// Contiguous rows, any alignment.
template <class T>
std::optional<tridiag_direct_plan> tridiag_plan_direct(layout const& lay, int min_fill) {
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  std::int64_t const n = lay.n;
  if (lay.element_stride != 1 || n > 32 * 16 * gr) return {};
  std::int64_t const lanes = tridiag_shape::direct_lanes<T>(n, min_fill);
  if (lanes < 2) return {};
  if (lanes <= 32) return tridiag_direct_plan{int(gr), int(lanes), 1, false};
  if (std::int64_t const w = lanes / 32; kernels::tridiag_direct_warps<T>(w))
    return tridiag_direct_plan{int(gr), 32, int(w), w == 16};
  return {};
}

// The direct form through shared memory: n <= Lanes R (R =
// tridiag_direct_group_rows, Lanes a power of two 2..32; f64 also
// Lanes = 64, two warps a system), the smallest that holds n, filled as
// tridiag_plan_direct requires. Any layout.
template <class T>
std::optional<tridiag_direct_columns_plan> tridiag_plan_direct_columns(layout const& lay,
                                                                       std::size_t max_smem, int min_fill) {
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  if (lay.n <= 0 || lay.n > 64 * gr) return {};
  std::int64_t const lanes = tridiag_shape::direct_lanes<T>(lay.n, min_fill);
  if (!(lanes >= 2 && (lanes <= 32 || (lanes == 64 && gr == 8)))) return {};
  int const S = kernels::tridiag_direct_columns_systems<T>(int(lanes));
  if (kernels::tridiag_direct_columns_smem<T>(int(gr), int(lanes), S) > max_smem) return {};
  return tridiag_direct_columns_plan{int(gr), int(lanes)};
}

// The longest system the direct form through shared memory takes.
template <class T>
constexpr std::int64_t tridiag_direct_columns_max_n =
    std::int64_t(32) * kernels::tridiag_direct_group_rows<T>*(kernels::tridiag_direct_group_rows<T> == 8 ? 2
                                                                                                         : 1);

// --- Columns and segments --------------------------------------------------

// A block of the columns kernel (segments = 1) or the segmented kernel:
// `systems` adjacent systems (at most; halved until the block fits), chunks
// of at most `rows` rows (max_rows: the instances').
template <class T>
std::optional<tridiag_columns_block> tridiag_plan_columns_block(std::size_t max_smem, std::int64_t chunks,
                                                                int rows, int segments, int systems,
                                                                int max_rows = 32) {
  auto smem = [&](int s) {
    return segments > 1 ? kernels::tridiag_segments_smem<T>(s, int(chunks), rows, segments)
                        : kernels::tridiag_columns_smem<T>(s, int(chunks), rows);
  };
  auto fits = [&](int s) {
    return (s * chunks + 31) / 32 * 32 <= kernels::tridiag_columns_max_threads<T> && smem(s) <= max_smem;
  };
  int sys = segments > 1 ? int(std::bit_floor(unsigned(std::max(systems, 1)))) : systems;  // S shifts there
  while (sys > 1 && !fits(sys)) sys /= 2;
  if (chunks < 1 || rows > max_rows || !fits(sys)) return {};
  return tridiag_columns_block{sys, int(chunks), rows, int((sys * chunks + 31) / 32 * 32), smem(sys)};
}

// Whole systems a block: chunks of about target_rows rows (at most 32 of
// them, each >= 2 rows), a 128-byte line of systems. The lone f32 instance
// where the block has its SM to itself.
template <class T>
std::optional<tridiag_columns_plan> tridiag_plan_columns(layout const& lay, std::size_t max_smem,
                                                         int target_rows,
                                                         int systems = int(128 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (n < 1 || n > 1024) return {};  // 32 chunks of 32 rows
  std::int64_t const most = std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2));
  std::int64_t const chunks = std::clamp<std::int64_t>((n + target_rows - 1) / target_rows, 1, most);
  auto const b = tridiag_plan_columns_block<T>(max_smem, chunks, int((n + chunks - 1) / chunks), 1, systems);
  if (!b) return {};
  tridiag_columns_plan pl{*b};
  pl.instance = pl.rows <= 16 ? columns_instance::rows16 : columns_instance::rows32;
  if (sizeof(T) == 4 && pl.threads <= 512 && 2 * pl.smem > max_smem)
    pl.instance = pl.rows > 16 ? columns_instance::rows32_lone : columns_instance::rows16_lone;
  return pl;
}

// Small batches: whole systems of n = 16 C rows (C <= 32) with every row of
// a chunk fetched at once, a 32-byte sector of systems a block, <= 256
// threads (the instance's launch bound).
template <class T>
std::optional<tridiag_columns_plan> tridiag_plan_columns_burst(layout const& lay, std::size_t max_smem,
                                                               int systems = int(32 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (n % 16 != 0 || n <= 0 || n > 16 * 32) return {};
  std::int64_t const chunks = n / 16;
  if ((systems * chunks + 31) / 32 * 32 > 256) return {};
  auto const b = tridiag_plan_columns_block<T>(max_smem, chunks, 16, 1, systems);
  if (!b) return {};
  return tridiag_columns_plan{*b, columns_instance::burst};
}

template <class T>
constexpr bool tridiag_segments_join_compiled(int join) {
  return join == kernels::segment_join_by_thomas || join == kernels::segment_join_by_scatter ||
         (sizeof(T) == 8 && join == kernels::segment_join_by_pcr);
}

// The segmented plan of block b, G segments joined by `join`, with its
// instance (near16/near15 where the chunks are R and R - 1 rows). None
// where f32's twisted boundary solve (two threads a system) has too few
// threads: segments of one chunk.
template <class T>
std::optional<tridiag_segments_plan> tridiag_segments_of(layout const& lay, tridiag_columns_block const& b,
                                                         int G, int join) {
  if (!tridiag_segments_join_compiled<T>(join)) return {};
  int const n = int(lay.n), C = b.chunks;
  int const shortest = n / G / C, longest = ((n + G - 1) / G + C - 1) / C;
  bool const twisted = kernels::tridiag_segments_boundary<T> == kernels::segment_boundary_by_twisted;
  if (twisted && b.threads < kernels::tridiag_boundary_twisted_threads(b.systems)) return {};
  tridiag_segments_plan pl{b};
  pl.segments = G;
  pl.join = join;
  if (b.rows == 16 && longest == 16 && shortest == 15)
    pl.instance = segments_instance::near16;
  else if (b.rows == 15 && longest == 15 && shortest >= 14)
    pl.instance = segments_instance::near15;
  else
    pl.instance = b.rows <= 16 ? segments_instance::rows16 : segments_instance::rows32;
  return pl;
}

// Segments of about segment_rows rows (at most max_segments; 16 chunks of
// <= 16 rows for segments of long_rows rows, else a power of two of about
// 16 rows), `join` joining them. sm_90's clusters; the launch falls back
// elsewhere.
template <class T>
std::optional<tridiag_segments_plan> tridiag_plan_segments(layout const& lay, std::size_t max_smem,
                                                           int segment_rows, int join, int max_segments,
                                                           int long_rows,
                                                           int systems = int(128 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (segment_rows < 1 || n <= segment_rows || n >= (std::int64_t(1) << 30)) return {};
  std::int64_t const G = std::min<std::int64_t>((n + segment_rows - 1) / segment_rows, max_segments);
  std::int64_t const shortest = n / G;
  std::int64_t chunks = std::bit_floor(std::uint64_t(std::max<std::int64_t>(
      1, std::min(std::clamp<std::int64_t>((shortest + 15) / 16, 1, 32), shortest / 2))));
  int rows = int(((n + G - 1) / G + chunks - 1) / chunks);
  if (segment_rows == long_rows) chunks = 16, rows = int(((n + G - 1) / G + 15) / 16);
  auto const b = tridiag_plan_columns_block<T>(max_smem, chunks, rows, int(G), systems);
  if (!b) return {};
  return tridiag_segments_of<T>(lay, *b, int(G), join);
}

// f32's wide segments: `segments` segments of `chunks` (<= 8) chunks of
// 17-32 rows (the instance's), at most the instance's threads.
template <class T>
std::optional<tridiag_segments_plan> tridiag_plan_segments_wide(layout const& lay, std::size_t max_smem,
                                                                int segments, int chunks, int join) {
  using I = kernels::tridiag_segments_instances<T>;
  std::int64_t const n = lay.n;
  if (sizeof(T) != 4 || segments < 2 || chunks > 8 || n >= (std::int64_t(1) << 30)) return {};
  int const rows = int(((n + segments - 1) / segments + chunks - 1) / chunks);
  if (rows <= 16 || rows > I::wide_rows) return {};
  auto const b = tridiag_plan_columns_block<T>(max_smem, chunks, rows, segments, int(128 / sizeof(T)));
  if (!b) return {};
  auto pl = tridiag_segments_of<T>(lay, *b, segments, join);
  if (!pl || pl->threads > I::wide_threads) return pl;
  pl->instance = segments_instance::wide;
  return pl;
}

// Segments with d in registers: G segments of (n + pad) / G rows, each
// `chunks` (a power of two, >= 2) chunks of exactly the instance's rows, at
// most its threads a block, the scatter join; in f32, pad (less than a
// chunk) identity rows past n, solved but neither read nor written.
template <class T>
std::optional<tridiag_segments_plan> tridiag_plan_segments_dregs(layout const& lay, std::size_t max_smem,
                                                                 int segments, int pad = 0) {
  using I = kernels::tridiag_segments_instances<T>;
  constexpr int rows = I::dregs_rows;
  std::int64_t const n = lay.n + pad, G = segments;
  if (G < 2 || pad < 0 || pad >= rows || (pad > 0 && sizeof(T) != 4) || n % G != 0 || (n / G) % rows != 0)
    return {};
  std::int64_t const chunks = n / G / rows;
  if (chunks < 2 || !tridiag_shape::pow2(chunks)) return {};
  auto const b = tridiag_plan_columns_block<T>(max_smem, chunks, rows, int(G), int(128 / sizeof(T)), rows);
  if (!b || b->threads > I::dregs_threads) return {};
  if (sizeof(T) == 4 && b->threads < kernels::tridiag_boundary_twisted_threads(b->systems)) return {};
  tridiag_segments_plan pl{*b};
  pl.segments = int(G);
  pl.join = kernels::segment_join_by_scatter;
  pl.instance = segments_instance::dregs;
  pl.pad_rows = pad;
  pl.smem = kernels::tridiag_segments_smem_dregs<T>(pl.systems, int(chunks), rows, int(G));
  return pl;
}

}  // namespace recur::detail
