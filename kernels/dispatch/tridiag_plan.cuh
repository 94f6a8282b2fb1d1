#pragma once
// What runs for a batch of tridiagonal systems: the plan of a form (which
// kernel, its instance and launch shape), chosen for an algorithm, a layout,
// a value type and the device's shared memory. Host code only; the launches
// are in dispatch_tridiag.cuh.
//
// Each form has a builder that says whether it can run a shape and with
// what (tridiag_plan_thomas_tile, _group_tile, _thomas_pcr_tile,
// _global_thomas, _pivot, _partition, _direct, _direct_columns, _columns,
// _columns_burst, _segments, _segments_wide, _segments_dregs): tests and
// tuning programs call them to run a form where `automatic` would not.
// plan_tridiag is the ranked list that `automatic` and the named
// algorithms use; its shapes come from a policy
// (kernels/tuning/tuning_tridiag.cuh).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <recur/layout/layout.hpp>
#include <recur/types.hpp>
#include "../agent/agent_tridiag_columns.cuh"
#include "../agent/agent_tridiag_direct.cuh"
#include "../agent/agent_tridiag_partition.cuh"
#include "../agent/agent_tridiag_pivot.cuh"
#include "../agent/agent_tridiag_segments.cuh"
#include "../agent/agent_tridiag_tile.cuh"
#include "../tuning/tuning_tridiag.cuh"

namespace recur::device {

enum class tridiag_form {
  none,            // the algorithm cannot run this shape here
  tile,            // systems in a shared-memory tile (agent_tridiag_tile.cuh)
  global_thomas,   // one thread per system through global memory
  partition,       // Thomas-PCR in three passes (agent_tridiag_partition.cuh)
  direct,          // Thomas-PCR from global memory into registers (agent_tridiag_direct.cuh)
  direct_columns,  // the same fed through shared memory, interleaved batches
  columns,         // Thomas-PCR on adjacent systems, full-line rows (agent_tridiag_columns.cuh)
  segments,        // the same, systems cut into segments joined by a cluster
  pivot,           // one thread per system with every option (agent_tridiag_pivot.cuh)
  bondeli,         // Bondeli's divide and conquer, one thread per block (agent_tridiag_bondeli.cuh)
};

// The instance of the columns kernel: chunks of up to 16 or 32 rows; lone:
// f32 blocks that have their SM to themselves (128 registers, 4 rows
// fetched ahead); burst: small batches, every row of a chunk fetched at once.
enum class columns_instance { rows16, rows16_lone, rows32, rows32_lone, burst };

// The instance of the segmented kernel: chunks of up to 16 or 32 rows;
// near16 and near15: chunks of R and R - 1 rows, both lengths constants;
// wide: f32, chunks of 17-32 rows, 256 threads, 6 rows ahead; dregs: d in
// registers, 3 blocks an SM. The joins: the block Thomas and the scatter,
// and in f64 PCR too.
enum class segments_instance { rows16, rows32, near16, near15, wide, dregs };

template <class T>
constexpr bool tridiag_segments_join_compiled(int join) {
  return join == kernels::segment_join_by_thomas || join == kernels::segment_join_by_scatter ||
         (sizeof(T) == 8 && join == kernels::segment_join_by_pcr);
}

struct tridiag_launch_plan {
  tridiag_form form = tridiag_form::none;
  std::size_t max_smem = 0;  // the device's opt-in shared memory per block
  int cc_major = 0;          // its compute capability (plan_tridiag_for; 0: not known)
  int threads = 0;           // per block
  std::size_t smem = 0;      // dynamic shared memory per block
  // tile (and the tile a direct plan runs where its arrays are not aligned)
  kernels::tile_solver solver = kernels::tile_solver::thomas;
  int systems = 0, group_threads = 1, ld = 0, red_ld = 0, switch_size = 0;
  // direct, direct_columns: rows per lane, lanes per system (segments of a
  // warp up to 32; 64: two warps), or warps per system (several-warp form)
  int direct_rows = 0, direct_lanes = 0, direct_warps = 1;
  bool direct_spike = false;  // several warps joined by spikes instead of warp 0
  // columns, segments
  int columns_systems = 0, columns_chunks = 0, columns_rows = 0;
  int segments = 1;
  int pad_rows = 0;  // segments (dregs): identity rows past n, so that n + pad_rows splits evenly
  int join = kernels::segment_join_by_thomas;
  columns_instance columns_kind = columns_instance::rows16;
  segments_instance segments_kind = segments_instance::rows16;
  // partition; inner: the algorithm that solves its reduced systems
  // (tridiag_plan_reduced)
  int chunks = 0, window_systems = 0, window_chunks = 0;
  // partition: each thread's chunk of this many rows in registers
  // (contiguous systems; tridiag_partition_regs_rows), 0: shared-memory windows
  int partition_regs = 0;
  tridiag_algorithm inner = tridiag_algorithm::thomas_pcr;
  // tile, thomas_pcr: the boundary system by Thomas instead of PCR
  // (block_tridiag_thomas_pcr.cuh's warp_boundary_thomas)
  bool serial_join = false;
  // pivot: refinement = mixed (its workspace holds float and double factors);
  // bounded: its workspace holds fewer systems than the batch
  // (tridiag_pivot_slots; pivoting = automatic)
  bool pivot_refine = false, pivot_bounded = false;
  // pivoting = automatic around this no-pivot form: its check and the
  // pivoted form's solve of the systems that fail it
  // (dispatch_tridiag.cuh's tridiag_launch_checked)
  bool pivot_check = false;
  // bondeli: blocks a system
  std::int64_t bondeli_blocks = 0;
  // Periodic systems through this no-pivot form: the Sherman-Morrison split
  // around two of its solves (dispatch_tridiag_periodic.cuh)
  bool periodic_split = false;

  bool supported() const { return form != tridiag_form::none; }
  // direct, direct_columns: the rows the form solves (n, or more: identity rows past n)
  std::int64_t direct_size() const { return std::int64_t(direct_lanes) * direct_warps * direct_rows; }
};

namespace tridiag_detail {

inline int ceil_pow2(long long v) {
  return v <= 1 ? 1 : int(std::bit_ceil(static_cast<unsigned long long>(v)));
}
inline int round32(std::int64_t v) { return int(std::max<std::int64_t>(32, (v + 31) / 32 * 32)); }
inline bool pow2(std::int64_t v) { return v > 0 && std::has_single_bit(std::uint64_t(v)); }

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

inline bool rows_fast(layout const& lay) { return lay.element_stride == 1 || lay.n == 1; }

// The direct forms' chunks of R = tridiag_direct_group_rows rows for n:
// the smallest power of two that holds n, 0 where n fills less than
// P::direct_min_fill percent of its rows.
template <class T, class P>
std::int64_t direct_lanes(std::int64_t n) {
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  if (n <= 0) return 0;
  std::int64_t const lanes = ceil_pow2((n + gr - 1) / gr);
  return n * 100 < lanes * gr * P::direct_min_fill ? 0 : lanes;
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

}  // namespace tridiag_detail

// --- Builders: whether a form runs this shape, and with what --------------

// Thomas on a tile of `systems` systems (0: as many as fit target_smem, at
// most max_systems). Unsupported when fewer than min_systems fit.
template <class T>
tridiag_launch_plan tridiag_plan_thomas_tile(layout const& lay, std::size_t max_smem, std::size_t target_smem,
                                             int max_systems, int min_systems) {
  using namespace tridiag_detail;
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  auto const col = system_column<T>(lay, max_smem);
  if (!col.fits) return pl;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld);
  std::size_t const budget = std::max(target_smem, per * std::size_t(min_systems));
  int const sys = int(std::min({std::size_t(max_systems), budget / per, max_smem / per}));
  if (sys < min_systems) return pl;
  pl.form = tridiag_form::tile;
  pl.solver = kernels::tile_solver::thomas;
  pl.ld = col.ld;
  pl.systems = int(std::min<std::int64_t>(align_systems<T>(lay, sys, 1024, per, max_smem), lay.count));
  pl.threads = std::max(128, (pl.systems + 31) / 32 * 32);
  pl.smem = kernels::tridiag_tile_smem<T>(pl.systems, pl.ld);
  return pl;
}

inline tridiag_launch_plan tridiag_plan_global_thomas(std::size_t max_smem) {
  tridiag_launch_plan pl;
  pl.form = tridiag_form::global_thomas;
  pl.max_smem = max_smem;
  pl.threads = 128;
  return pl;
}

// The pivoted form: pivoting, periodic systems and refinement, one thread
// per system through global memory (agent_tridiag_pivot.cuh); any shape.
// bounded: its workspace as tridiag_pivot_slots bounds it.
inline tridiag_launch_plan tridiag_plan_pivot(std::size_t max_smem, bool refine, bool bounded = false) {
  tridiag_launch_plan pl;
  pl.form = tridiag_form::pivot;
  pl.max_smem = max_smem;
  pl.threads = 128;
  pl.pivot_refine = refine;
  pl.pivot_bounded = bounded;
  return pl;
}

// The systems the pivoted form factors at once (its workspace's slots):
// every system; bounded, as many as keep the workspace within the larger of
// 64 MiB and one array of the batch (n count values), at least one. A
// bounded form runs on fewer threads, each solving several systems in turn.
template <class T>
std::int64_t tridiag_pivot_slots(layout const& lay, bool refine, bool bounded) {
  if (lay.count <= 0 || !bounded) return std::max<std::int64_t>(0, lay.count);
  std::size_t const row = kernels::tridiag_pivot_row_bytes<T>(refine);
  std::size_t const per_system = row * std::size_t(std::max<std::int64_t>(1, lay.n));
  std::int64_t const by_size = std::int64_t((std::size_t(64) << 20) / per_system);
  std::int64_t const by_array = std::int64_t(std::size_t(lay.count) * sizeof(T) / row);
  return std::clamp<std::int64_t>(std::max(by_size, by_array), 1, lay.count);
}

// Bondeli's algorithm: about 2^16 threads in all, one per block of rows,
// and at most sqrt(n) blocks a system, since the reduced system's 2p - 2
// rows are solved by one thread a system (agent_tridiag_bondeli.cuh).
inline tridiag_launch_plan tridiag_plan_bondeli(layout const& lay, std::size_t max_smem) {
  constexpr std::int64_t threads = std::int64_t(1) << 16;
  std::int64_t const count = std::max<std::int64_t>(1, lay.count);
  std::int64_t root = std::int64_t(std::sqrt(double(std::max<std::int64_t>(1, lay.n))));
  while (root * root > lay.n) --root;
  while ((root + 1) * (root + 1) <= lay.n) ++root;
  tridiag_launch_plan pl;
  pl.form = tridiag_form::bondeli;
  pl.max_smem = max_smem;
  pl.threads = 128;
  pl.bondeli_blocks =
      std::clamp<std::int64_t>((threads + count - 1) / count, 1, std::max<std::int64_t>(1, root));
  return pl;
}

// A group solver (cr, pcr, cr_pcr, rd, cr_rd, cr_packed, pscheme,
// cr_split) on a tile: group_threads threads a system, `switch_size` its
// switch to PCR or RD, about target_threads threads and target_smem bytes a
// tile.
template <class T>
tridiag_launch_plan tridiag_plan_group_tile(layout const& lay, std::size_t max_smem,
                                            kernels::tile_solver solver, int group_threads, int switch_size,
                                            int target_threads, std::size_t target_smem) {
  using namespace tridiag_detail;
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  auto const col = system_column<T>(lay, max_smem);
  int const max_threads = kernels::tile_max_threads(solver);
  if (!col.fits || group_threads > max_threads) return pl;
  int red_ld = 0;
  if (solver == kernels::tile_solver::rd || solver == kernels::tile_solver::cr_rd ||
      solver == kernels::tile_solver::pscheme)  // the group scans' scratch
    red_ld =
        int((kernels::tridiag_scan_scratch_bytes<T>(group_threads) + 4 * sizeof(T) - 1) / (4 * sizeof(T)));
  if (solver == kernels::tile_solver::cr_split)  // the reduced levels
    red_ld = kernels::split_level::work_size(int(lay.n)) | 1;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld, red_ld);
  if (per > max_smem) return pl;
  int const by_threads = std::max(1, target_threads / group_threads);
  int const by_smem = int(std::max<std::size_t>(1, std::min(target_smem, max_smem) / per));
  int const sys = std::min({by_threads, by_smem, max_threads / group_threads});
  pl.form = tridiag_form::tile;
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
tridiag_launch_plan tridiag_plan_thomas_pcr_tile(layout const& lay, std::size_t max_smem, int group_threads,
                                                 std::size_t target_smem, int min_threads, bool regs) {
  using namespace tridiag_detail;
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  auto const col = system_column<T>(lay, max_smem);
  int const gt = group_threads;
  int const red_ld = gt > 32 ? (kernels::tridiag_pos(2 * gt) | 1) : 0;
  std::size_t const per = kernels::tridiag_tile_smem<T>(1, col.ld, red_ld);
  if (!col.fits || per > max_smem) return pl;
  pl.form = tridiag_form::tile;
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

// The partitioned Thomas-PCR: chunks of about `chunk` rows, a thread each,
// windows of systems x chunks per block, the reduced systems solved by
// `inner` (tridiag_plan_reduced). Any 4 <= n < 2^30. regs: contiguous
// systems take chunks of exactly kernels::tridiag_partition_regs_rows<T>
// rows in registers instead (no windows).
template <class T>
tridiag_launch_plan tridiag_plan_partition(layout const& lay, std::size_t max_smem, int chunk,
                                           tridiag_algorithm inner = tridiag_algorithm::thomas_pcr,
                                           bool regs = false) {
  using namespace tridiag_detail;
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  pl.inner = inner;
  std::int64_t const n = lay.n;
  if (n < 4 || n >= (std::int64_t(1) << 30)) return pl;  // chunks of >= 2 rows; int row indices
  if (constexpr int R = kernels::tridiag_partition_regs_rows<T>; regs && rows_fast(lay) && n >= 2 * R) {
    pl.form = tridiag_form::partition;
    pl.partition_regs = R;
    pl.chunks = int((n + R - 1) / R);
    pl.threads = 128;
    return pl;
  }
  pl.chunks = int(std::max<std::int64_t>(2, n / std::max(4, chunk)));
  int const base = int(n / pl.chunks);
  pl.threads = 128;
  pl.window_systems =
      rows_fast(lay) ? 1 : int(std::min<std::int64_t>(lay.count, 32 * 4 / std::int64_t(sizeof(T))));
  pl.window_chunks = std::max(1, std::min(pl.threads / pl.window_systems, pl.chunks));
  for (;;) {
    pl.ld = kernels::tridiag_pos(pl.window_chunks * (base + 1)) | 1;
    pl.smem = kernels::tridiag_partition_smem<T>(pl.window_systems, pl.ld);
    if (pl.smem <= std::min<std::size_t>(max_smem, 100 * 1024) || pl.window_chunks == 1) break;
    pl.window_chunks /= 2;
  }
  if (pl.smem <= max_smem) pl.form = tridiag_form::partition;
  return pl;
}

// Thomas-PCR from global memory into registers, over `tile`: n <= Lanes R
// (segments of a warp, R = tridiag_direct_group_rows, Lanes a power of two
// 2..32), or n <= 32 W R (W warps; f64's 16 warps joined by spikes, fewer
// by warp 0), the smallest that holds n, where n fills at least
// P::direct_min_fill percent of its rows (the rest are identity rows, solved
// but neither read nor written). Contiguous rows, any alignment.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_direct(layout const& lay, tridiag_launch_plan tile) {
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  std::int64_t const n = lay.n;
  if (!tile.supported() || tile.solver == kernels::tile_solver::thomas_pcr_regs || lay.element_stride != 1 ||
      n > 32 * 16 * gr)
    return tile;
  std::int64_t const lanes = tridiag_detail::direct_lanes<T, P>(n);
  if (lanes < 2) return tile;
  if (lanes <= 32) {
    tile.direct_rows = int(gr);
    tile.direct_lanes = int(lanes);
  } else if (std::int64_t const w = lanes / 32; kernels::tridiag_direct_warps<T>(w)) {
    tile.direct_rows = int(gr);
    tile.direct_lanes = 32;
    tile.direct_warps = int(w);
    tile.direct_spike = w == 16;
  } else {
    return tile;
  }
  tile.form = tridiag_form::direct;
  return tile;
}

// The direct form through shared memory: n <= Lanes R (R =
// tridiag_direct_group_rows, Lanes a power of two 2..32; f64 also
// Lanes = 64, two warps a system), the smallest that holds n, filled as
// tridiag_plan_direct requires. Any layout.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_direct_columns(layout const& lay, std::size_t max_smem) {
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  constexpr std::int64_t gr = kernels::tridiag_direct_group_rows<T>;
  if (lay.n <= 0 || lay.n > 64 * gr) return pl;
  std::int64_t const lanes = tridiag_detail::direct_lanes<T, P>(lay.n);
  if (!(lanes >= 2 && (lanes <= 32 || (lanes == 64 && gr == 8)))) return pl;
  int const S = kernels::tridiag_direct_columns_systems<T>(int(lanes));
  std::size_t const smem = kernels::tridiag_direct_columns_smem<T>(int(gr), int(lanes), S);
  if (smem > max_smem) return pl;
  pl.form = tridiag_form::direct_columns;
  pl.solver = kernels::tile_solver::thomas_pcr;
  pl.direct_rows = int(gr);
  pl.direct_lanes = int(lanes);
  pl.threads = S * int(lanes);
  pl.smem = smem;
  return pl;
}

// The columns kernel (segments = 1) or the segmented kernel: `systems`
// adjacent systems a block (at most; halved until the block fits), chunks
// of at most `rows` rows. Any layout (only adjacent systems make full
// lines).
template <class T>
tridiag_launch_plan tridiag_plan_columns_block(std::size_t max_smem, std::int64_t chunks, int rows,
                                               int segments, int systems, int max_rows = 32) {
  tridiag_launch_plan pl;
  pl.max_smem = max_smem;
  auto smem = [&](int s) {
    return segments > 1 ? kernels::tridiag_segments_smem<T>(s, int(chunks), rows, segments)
                        : kernels::tridiag_columns_smem<T>(s, int(chunks), rows);
  };
  auto fits = [&](int s) {
    return (s * chunks + 31) / 32 * 32 <= kernels::tridiag_columns_max_threads<T> && smem(s) <= max_smem;
  };
  int sys = segments > 1 ? int(std::bit_floor(unsigned(std::max(systems, 1)))) : systems;  // S shifts there
  while (sys > 1 && !fits(sys)) sys /= 2;
  if (chunks < 1 || rows > max_rows || !fits(sys)) return pl;
  pl.form = segments > 1 ? tridiag_form::segments : tridiag_form::columns;
  pl.solver = kernels::tile_solver::thomas_pcr;
  pl.columns_systems = sys;
  pl.columns_chunks = int(chunks);
  pl.columns_rows = rows;
  pl.segments = segments;
  pl.threads = int((sys * chunks + 31) / 32 * 32);
  pl.smem = smem(sys);
  pl.columns_kind = rows <= 16 ? columns_instance::rows16 : columns_instance::rows32;
  return pl;
}

// Whole systems a block: chunks of about target_rows rows (at most 32 of
// them, each >= 2 rows), a 128-byte line of systems. Lone f32 instance where
// the block has its SM to itself.
template <class T>
tridiag_launch_plan tridiag_plan_columns(layout const& lay, std::size_t max_smem, int target_rows,
                                         int systems = int(128 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (n < 1 || n > 1024) return {};
  std::int64_t const most = std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2));
  std::int64_t const chunks = std::clamp<std::int64_t>((n + target_rows - 1) / target_rows, 1, most);
  tridiag_launch_plan pl =
      tridiag_plan_columns_block<T>(max_smem, chunks, int((n + chunks - 1) / chunks), 1, systems);
  if (sizeof(T) == 4 && pl.supported() && pl.threads <= 512 && 2 * pl.smem > max_smem)
    pl.columns_kind = pl.columns_rows > 16 ? columns_instance::rows32_lone : columns_instance::rows16_lone;
  return pl;
}

// Small batches: whole systems of n = 16 C rows (C <= 32) with every row of
// a chunk fetched at once, a 32-byte sector of systems a block, <= 256
// threads.
template <class T>
tridiag_launch_plan tridiag_plan_columns_burst(layout const& lay, std::size_t max_smem,
                                               int systems = int(32 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (n % 16 != 0 || n <= 0 || n > 16 * 32) return {};
  std::int64_t const chunks = n / 16;
  if ((systems * chunks + 31) / 32 * 32 > 256) return {};
  tridiag_launch_plan pl = tridiag_plan_columns_block<T>(max_smem, chunks, 16, 1, systems);
  pl.columns_kind = columns_instance::burst;
  return pl;
}

// The instance of the segmented kernel for a plan's chunks (near16/near15
// where the chunks are R and R - 1 rows). Unsupported where f32's twisted
// boundary solve (two threads a system) has too few threads: segments of
// one chunk.
template <class T>
tridiag_launch_plan tridiag_segments_instance(layout const& lay, tridiag_launch_plan pl) {
  if (!pl.supported() || !tridiag_segments_join_compiled<T>(pl.join)) return {};
  int const n = int(lay.n), G = pl.segments, C = pl.columns_chunks, S = pl.columns_systems;
  int const shortest = n / G / C, longest = ((n + G - 1) / G + C - 1) / C;
  bool const twisted = kernels::tridiag_segments_boundary<T> == kernels::segment_boundary_by_twisted;
  if (twisted && pl.threads < kernels::tridiag_boundary_twisted_threads(S)) return {};
  if (pl.columns_rows == 16 && longest == 16 && shortest == 15)
    pl.segments_kind = segments_instance::near16;
  else if (pl.columns_rows == 15 && longest == 15 && shortest >= 14)
    pl.segments_kind = segments_instance::near15;
  else
    pl.segments_kind = pl.columns_rows <= 16 ? segments_instance::rows16 : segments_instance::rows32;
  return pl;
}

// The join of G segments for a policy.
template <class T, class P>
int tridiag_segments_join(int G) {
  return G <= P::join_pcr_max_segments       ? kernels::segment_join_by_pcr
         : G >= P::join_scatter_min_segments ? kernels::segment_join_by_scatter
                                             : kernels::segment_join_by_thomas;
}

// Segments of about segment_rows rows (at most max_segments; 16 chunks of
// <= 16 rows for 256-row segments, else a power of two of about 16 rows),
// `join` joining them. sm_90's clusters; the launch falls back elsewhere.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_segments(layout const& lay, std::size_t max_smem, int segment_rows, int join,
                                          int systems = int(128 / sizeof(T))) {
  std::int64_t const n = lay.n;
  if (segment_rows < 1 || n <= segment_rows || n >= (std::int64_t(1) << 30)) return {};
  std::int64_t const G = std::min<std::int64_t>((n + segment_rows - 1) / segment_rows, P::max_segments);
  std::int64_t const shortest = n / G;
  std::int64_t chunks = std::bit_floor(std::uint64_t(std::max<std::int64_t>(
      1, std::min(std::clamp<std::int64_t>((shortest + 15) / 16, 1, 32), shortest / 2))));
  int rows = int(((n + G - 1) / G + chunks - 1) / chunks);
  if (segment_rows == P::segment_rows_long) chunks = 16, rows = int(((n + G - 1) / G + 15) / 16);
  tridiag_launch_plan pl = tridiag_plan_columns_block<T>(max_smem, chunks, rows, int(G), systems);
  pl.join = join;
  return tridiag_segments_instance<T>(lay, pl);
}

// f32's wide segments: G segments of `chunks` (<= 8) chunks of 17-32 rows, 256
// threads at most.
template <class T>
tridiag_launch_plan tridiag_plan_segments_wide(layout const& lay, std::size_t max_smem, int segments,
                                               int chunks, int join) {
  std::int64_t const n = lay.n;
  if (sizeof(T) != 4 || segments < 2 || chunks > 8 || n >= (std::int64_t(1) << 30)) return {};
  int const rows = int(((n + segments - 1) / segments + chunks - 1) / chunks);
  if (rows <= 16 || rows > 32) return {};
  tridiag_launch_plan pl =
      tridiag_plan_columns_block<T>(max_smem, chunks, rows, segments, int(128 / sizeof(T)));
  pl.join = join;
  pl = tridiag_segments_instance<T>(lay, pl);
  if (!pl.supported() || pl.threads > 256) return pl;
  pl.segments_kind = segments_instance::wide;
  return pl;
}

// Segments with d in registers: G segments of (n + pad) / G rows, each
// `chunks` (a power of two, >= 2) chunks of exactly `rows` rows (64 in f32,
// 32 in f64: the instances), at most 128 threads a block, the scatter
// join; in f32, pad (less than a chunk) identity rows past n, solved but
// neither read nor written.
template <class T>
tridiag_launch_plan tridiag_plan_segments_dregs(layout const& lay, std::size_t max_smem, int segments,
                                                int pad = 0) {
  constexpr int rows = sizeof(T) == 4 ? 64 : 32;
  std::int64_t const n = lay.n + pad, G = segments;
  if (G < 2 || pad < 0 || pad >= rows || (pad > 0 && sizeof(T) != 4) || n % G != 0 || (n / G) % rows != 0)
    return {};
  std::int64_t const chunks = n / G / rows;
  if (chunks < 2 || !tridiag_detail::pow2(chunks)) return {};
  tridiag_launch_plan pl =
      tridiag_plan_columns_block<T>(max_smem, chunks, rows, int(G), int(128 / sizeof(T)), 64);
  if (!pl.supported() || pl.threads > 128) return {};
  pl.join = kernels::segment_join_by_scatter;
  pl.segments_kind = segments_instance::dregs;
  pl.pad_rows = pad;
  if (sizeof(T) == 4 && pl.threads < kernels::tridiag_boundary_twisted_threads(pl.columns_systems)) return {};
  pl.smem = kernels::tridiag_segments_smem_dregs<T>(pl.columns_systems, int(chunks), rows, int(G));
  return pl;
}

// --- The ranked lists ------------------------------------------------------

// The columns forms for this shape (any layout; only adjacent systems make
// full lines): segments joined in a cluster (d in registers, f32's wide
// chunks, or plain) where the systems are long, else whole systems.
// allow_segments false gives what the segmented form falls back to where
// its clusters cannot run.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_columns_ranked(layout const& lay, std::size_t max_smem,
                                                bool allow_segments = true) {
  std::int64_t const n = lay.n;
  if (allow_segments && n >= P::segment_min_n && n > P::segment_rows) {
    bool const long_f64 = P::long_segments_early && n > 512 && n <= P::max_segments * P::segment_rows_long &&
                          n / ((n + P::segment_rows_long - 1) / P::segment_rows_long) >= 240;
    bool const long_any = n > P::max_segments * std::int64_t(P::segment_rows) &&
                          n <= P::max_segments * std::int64_t(P::segment_rows_long);
    int const seg = long_f64 || long_any ? P::segment_rows_long : P::segment_rows;
    std::int64_t const G = std::min<std::int64_t>((n + seg - 1) / seg, P::max_segments), shortest = n / G;
    if (shortest == P::segment_rows_long && G >= P::dregs_min_segments && shortest % P::dregs_rows == 0 &&
        shortest / P::dregs_rows <= P::dregs_max_chunks)
      if (auto pl = tridiag_plan_segments_dregs<T>(lay, max_smem, int(G)); pl.supported()) return pl;
    // n a little short of such a split (4095 rows): the same with identity
    // rows past n.
    if (std::int64_t const pad = G * P::segment_rows_long - n;
        pad > 0 && pad <= P::dregs_max_pad && G >= P::dregs_min_segments &&
        P::segment_rows_long % P::dregs_rows == 0 &&
        P::segment_rows_long / P::dregs_rows <= P::dregs_max_chunks)
      if (auto pl = tridiag_plan_segments_dregs<T>(lay, max_smem, int(G), int(pad)); pl.supported())
        return pl;
    int const join = tridiag_segments_join<T, P>(int(G));
    if (P::wide_segments && G >= P::max_segments) {  // 4 or 8 chunks of exactly 32 rows a segment
      std::int64_t const cw = std::bit_floor(std::uint64_t(std::max<std::int64_t>(
          1, std::min(std::clamp<std::int64_t>((shortest + 31) / 32, 1, 32), shortest / 2))));
      if ((cw == 8 || cw == 4) && G * cw * 32 == n)
        if (auto pl = tridiag_plan_segments_wide<T>(lay, max_smem, int(G), int(cw), join); pl.supported())
          return pl;
    }
    if (auto pl = tridiag_plan_segments<T, P>(lay, max_smem, seg, join); pl.supported()) return pl;
  }
  if (n <= 1024) return tridiag_plan_columns<T>(lay, max_smem, sizeof(T) == 4 && n > 256 ? 32 : 16);
  return {};
}

// Thomas-PCR's threads a system on a tile: about thomas_pcr_rows rows
// each, a power of two from 32 to thomas_pcr_max_threads.
template <class P>
int tridiag_thomas_pcr_threads(std::int64_t n) {
  return std::clamp(int(std::bit_floor(std::uint64_t(std::max<std::int64_t>(1, n / P::thomas_pcr_rows)))), 32,
                    std::max(32, P::thomas_pcr_max_threads));
}

// Thomas-PCR on a tile of systems (from registers where the layout allows:
// direct), or the partitioned form where a system does not fit or an
// interleaved tile would be narrower than a 32-byte sector.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_thomas_pcr_tiled(layout const& lay, std::size_t max_smem) {
  using namespace tridiag_detail;
  std::int64_t const n = lay.n;
  int const gt = tridiag_thomas_pcr_threads<P>(n);
  // One warp a system with chunks of 9-16 rows: registers for interleaved
  // batches (contiguous ones need the occupancy more).
  std::int64_t const chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2));
  bool const regs = !rows_fast(lay) && (n + chunks - 1) / chunks > 8;
  auto tile = tridiag_plan_thomas_pcr_tile<T>(
      lay, max_smem, gt, rows_fast(lay) ? P::thomas_pcr_smem : P::thomas_pcr_smem_interleaved, 32, regs);
  if (!tile.supported())
    return tridiag_plan_partition<T>(lay, max_smem, P::partition_chunk, tridiag_algorithm::thomas_pcr,
                                     P::partition_regs);
  if (rows_fast(lay) && (lay.count + tile.systems - 1) / tile.systems <= P::small_batch_tiles)
    tile.threads = std::max(tile.threads, P::small_batch_threads);
  if (!rows_fast(lay) && tile.systems < lay.count && tile.systems * sizeof(T) < 32)
    if (auto pl = tridiag_plan_partition<T>(lay, max_smem, P::partition_chunk); pl.supported() || n >= 4)
      return pl;
  return tridiag_plan_direct<T, P>(lay, tile);
}

// Thomas-PCR: the first form that applies. allow_segments false gives what
// the segmented form falls back to where its clusters cannot run.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan plan_thomas_pcr(layout const& lay, std::size_t max_smem, bool allow_segments = true) {
  using namespace tridiag_detail;
  std::int64_t const n = lay.n;
  bool const adjacent = !rows_fast(lay) && lay.batch_stride == 1;  // systems side by side
  bool const small = adjacent && lay.count < P::columns_min_count;
  // 1. A small interleaved batch of n = Lanes R: the direct form through
  //    shared memory.
  auto const direct = small ? tridiag_plan_direct_columns<T, P>(lay, max_smem) : tridiag_launch_plan{};
  if (direct.supported() && n == direct.direct_size()) return direct;
  // 2. A small interleaved batch of n = 16 C: whole systems, rows fetched at once.
  bool const burst = small && n % 16 == 0 && n <= 16 * 32;
  if (burst)
    if (auto pl = tridiag_plan_columns_burst<T>(lay, max_smem); pl.supported()) return pl;
  //    Other small interleaved batches: the direct form with identity rows past n.
  if (direct.supported()) return direct;
  // 3. A wide interleaved batch, or a small one of systems longer than the
  //    direct form through shared memory takes: the columns forms (tune_tridiag
  //    inter columns512, n:600/batch:512 to n:2047/batch:2047: 1.5-2.7x the
  //    tile or the partitioned form).
  if (adjacent && (!small || n > 512))
    if (auto pl = tridiag_plan_columns_ranked<T, P>(lay, max_smem, allow_segments); pl.supported()) return pl;
  // 4. A tile, the direct form or the partitioned form.
  return tridiag_plan_thomas_pcr_tiled<T, P>(lay, max_smem);
}

// The plan of an algorithm (automatic resolved by tridiag_resolve).
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan plan_tridiag(layout const& lay, tridiag_algorithm alg, std::size_t max_smem) {
  using namespace tridiag_detail;
  using kernels::tile_solver;
  std::int64_t const n = lay.n;
  if (n <= 0) return {};
  int const cap = kernels::pcr_items_per_thread;
  int const half = std::clamp(ceil_pow2(n / 2), 32, 512);  // CR's threads: a pair of rows each
  // A group solver's tile, or where no tile holds one system, the
  // partitioned form with this algorithm solving its reduced systems.
  auto outer = [&] {
    return tridiag_plan_partition<T>(lay, max_smem, P::partition_chunk, alg, P::partition_regs);
  };
  auto group = [&](tile_solver s, int gt, int sw) {
    auto const pl = tridiag_plan_group_tile<T>(lay, max_smem, s, gt, sw, P::cr_target_threads, P::cr_smem);
    return pl.supported() ? pl : outer();
  };
  switch (alg) {
    case tridiag_algorithm::thomas: {
      auto pl = tridiag_plan_thomas_tile<T>(lay, max_smem, P::thomas_smem, P::thomas_max_systems,
                                            P::thomas_min_systems);
      return pl.supported() ? pl : tridiag_plan_global_thomas(max_smem);
    }
    case tridiag_algorithm::automatic:
    case tridiag_algorithm::thomas_pcr:
      return plan_thomas_pcr<T, P>(lay, max_smem);
    case tridiag_algorithm::cr:
      return group(tile_solver::cr_pcr, half, 2);
    case tridiag_algorithm::cr_split:
      return group(tile_solver::cr_split, half, 2);
    case tridiag_algorithm::pcr:
      return group(tile_solver::cr_pcr, std::max(32, ceil_pow2((n + cap - 1) / cap)), int(n));
    case tridiag_algorithm::cr_pcr:
      return group(tile_solver::cr_pcr, half, std::min(P::cr_pcr_switch, half * cap));
    case tridiag_algorithm::rd:
      return group(tile_solver::rd,
                   round32((n + kernels::rd_items_per_thread - 1) / kernels::rd_items_per_thread), 0);
    case tridiag_algorithm::cr_rd:
      return group(tile_solver::cr_rd, half, std::min(P::cr_rd_switch, half * kernels::rd_items_per_thread));
    case tridiag_algorithm::cr_packed: {
      std::int64_t const threads = (n + kernels::cr_packed_rows - 1) / kernels::cr_packed_rows;
      if (threads > kernels::tile_max_threads(tile_solver::cr_packed)) return outer();
      int const gt = round32(threads);
      return group(tile_solver::cr_packed, gt, std::min(std::max(2, P::cr_packed_switch), gt * cap));
    }
    case tridiag_algorithm::pscheme:
      return group(tile_solver::pscheme,
                   std::min<int>(1024, round32((n + P::pscheme_rows - 1) / P::pscheme_rows)), 0);
    case tridiag_algorithm::bondeli:
      return tridiag_plan_bondeli(lay, max_smem);
  }
  return {};
}

// The plan of the partitioned form pl's reduced systems (contiguous,
// b = 1): its inner algorithm's plan; for thomas_pcr, Thomas-PCR's tile
// with the serial join (the reduced systems of dominant and SPD systems are
// weakly dominant coarse systems, on which PCR's join loses digits), or the
// partitioned form again where no tile holds a system.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_launch_plan tridiag_plan_reduced(layout const& reduced, tridiag_launch_plan const& pl) {
  if (pl.inner != tridiag_algorithm::thomas_pcr) return plan_tridiag<T, P>(reduced, pl.inner, pl.max_smem);
  auto tile = tridiag_plan_thomas_pcr_tile<T>(reduced, pl.max_smem, tridiag_thomas_pcr_threads<P>(reduced.n),
                                              P::thomas_pcr_smem, 32, false);
  if (!tile.supported())
    return tridiag_plan_partition<T>(reduced, pl.max_smem, P::partition_chunk, tridiag_algorithm::thomas_pcr,
                                     P::partition_regs);
  if ((reduced.count + tile.systems - 1) / tile.systems <= P::small_batch_tiles)
    tile.threads = std::max(tile.threads, P::small_batch_threads);
  tile.serial_join = true;
  return tile;
}

// What `automatic` runs for this shape: Thomas-PCR where it runs adjacent
// systems with full-line rows or segments of a warp from registers (n a
// whole number of their chunks); below 128 rows otherwise Thomas's tile
// (one thread per system); else
// Thomas-PCR; Thomas through global memory where nothing else runs.
template <class T, class P = kernels::tridiag_policy_sm90<T>>
tridiag_algorithm tridiag_resolve(layout const& lay, std::size_t max_smem) {
  if (lay.n <= 0) return tridiag_algorithm::thomas;
  auto const tp = plan_thomas_pcr<T, P>(lay, max_smem);
  if (lay.n < 128) {
    // The direct forms only where n fills their rows exactly (no identity rows).
    bool const exact = lay.n == tp.direct_size();
    bool const lines = tp.form == tridiag_form::columns || tp.form == tridiag_form::segments ||
                       (tp.form == tridiag_form::direct_columns && exact);
    if (lines || (tp.form == tridiag_form::direct && exact && tp.direct_lanes < 32 && tp.direct_warps == 1))
      return tridiag_algorithm::thomas_pcr;
    if (tridiag_plan_thomas_tile<T>(lay, max_smem, P::thomas_smem, P::thomas_max_systems,
                                    P::thomas_min_systems)
            .supported())
      return tridiag_algorithm::thomas;
  }
  return tp.supported() ? tridiag_algorithm::thomas_pcr : tridiag_algorithm::thomas;
}

}  // namespace recur::device
