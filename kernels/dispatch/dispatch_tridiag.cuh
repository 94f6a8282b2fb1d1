#pragma once
// Device-level batched tridiagonal solve, header-only, CUB's calling
// convention:
//
//   std::size_t bytes = 0;
//   recur::device::tridiag_solve(nullptr, bytes, a, b, c, d, x, lay, nrhs, rhs_stride, info, alg, stream);
//   cudaMallocAsync(&temp, bytes, stream);
//   recur::device::tridiag_solve(temp, bytes, a, b, c, d, x, lay, nrhs, rhs_stride, info, alg, stream);
//
// Conventions of include/recur/tridiag.hpp (layout, right-hand sides, a[0]
// and c[n-1] unread, x may be d, info, NaN on breakdown). Arguments are not
// checked here beyond what the launch needs (the host API checks them); an
// algorithm that cannot run the shape returns cudaErrorNotSupported before
// anything is enqueued. `automatic` is resolved by tridiag_resolve.
//
// tridiag_plan.cuh chooses the form and its shape; this file launches it.
// Blocks are persistent (as many as are resident at once) wherever a form
// walks work items. Nothing is allocated or synchronised; every launch is
// graph-capturable.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "tridiag_plan.cuh"

namespace recur::device {

// The arrays and shape of one solve.
template <class T>
struct tridiag_args {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  std::int32_t* info;
  // The pivoted form's options (tridiag_options'); the other forms solve
  // without pivoting and set pivoted and refinement_steps (if not null) to 0.
  tridiag_pivoting pivoting = tridiag_pivoting::none;
  bool periodic = false;
  tridiag_refinement refinement = tridiag_refinement::none;
  int max_refinement_steps = 0;
  std::int32_t* pivoted = nullptr;
  std::int32_t* refinement_steps = nullptr;
  // The pivoted form only: null, or the systems to solve (only[k] != 0;
  // the others' x and outputs are left alone).
  std::int32_t const* only = nullptr;
  // The forms that screen (tridiag_form_screens): null, or pivoting =
  // automatic's flag per system (their params' flags).
  std::int32_t* flags = nullptr;
};

// f.template operator()<P>() with P the tuning policy of a device of
// compute capability cc_major (kernels/tuning/tuning_tridiag.cuh).
template <class T, class F>
decltype(auto) tridiag_with_policy(int cc_major, F&& f) {
  if (cc_major >= 9) return f.template operator()<kernels::tridiag_policy_sm90<T>>();
  return f.template operator()<kernels::tridiag_policy_sm80<T>>();
}

// The plan of `alg` for the current device's architecture (automatic
// resolved first).
template <class T>
tridiag_launch_plan plan_tridiag_for(layout const& lay, tridiag_algorithm alg, std::size_t max_smem,
                                     int cc_major) {
  tridiag_launch_plan pl = tridiag_with_policy<T>(cc_major, [&]<class P>() {
    tridiag_algorithm const a =
        alg == tridiag_algorithm::automatic ? tridiag_resolve<T, P>(lay, max_smem) : alg;
    return plan_tridiag<T, P>(lay, a, max_smem);
  });
  pl.cc_major = cc_major;
  return pl;
}

// pivoting = partial (plain systems, no refinement): where a tile holds the
// systems and they are short (1 KB an array) or few, one thread a system in
// shared memory (tile_solver::thomas_pivot: the data read and written once),
// else the pivoted form. The bounds: H100 tridiag_pivot_* (the tile ahead
// at 64 x 2^20 and 512 x 512, behind at f32 512 x 2^16 and f64 256 x 2^17).
template <class T>
tridiag_launch_plan plan_tridiag_partial(layout const& lay, std::size_t max_smem, int cc_major) {
  if (lay.n * std::int64_t(sizeof(T)) > 1024 && lay.count > 1024) return tridiag_plan_pivot(max_smem, false);
  tridiag_launch_plan pl = tridiag_with_policy<T>(cc_major, [&]<class P>() {
    return tridiag_plan_thomas_tile<T>(lay, max_smem, P::thomas_smem, P::thomas_max_systems,
                                       P::thomas_min_systems);
  });
  if (!pl.supported()) return tridiag_plan_pivot(max_smem, false);
  pl.solver = kernels::tile_solver::thomas_pivot;
  pl.cc_major = cc_major;
  return pl;
}

// The current device's opt-in shared memory per block and compute
// capability major.
inline cudaError_t tridiag_device_limits(std::size_t& max_smem, int& cc_major) {
  int dev = 0, v = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
      e != cudaSuccess)
    return e;
  max_smem = std::size_t(v);
  return cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev);
}

// Temporary storage a plan needs.
template <class T>
std::size_t tridiag_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl);

// A workspace is cut into pieces laid end to end, each (but the last)
// rounded up to 256 bytes so that the next starts aligned; the
// *_workspace structs below size the pieces, tridiag_ws_cursor hands them
// out in the same order.
constexpr std::size_t tridiag_ws_piece(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

class tridiag_ws_cursor {
 public:
  explicit tridiag_ws_cursor(void* base) : at_(static_cast<unsigned char*>(base)) {}
  // The next piece, `bytes` long, as U*.
  template <class U = void>
  U* take(std::size_t bytes) {
    unsigned char* const p = at_;
    at_ += bytes;
    return reinterpret_cast<U*>(p);
  }

 private:
  unsigned char* at_;
};

// The partitioned form's workspace: the reduced batch (4 arrays of
// 2 * chunks values per system), two ints per system (three where the
// breakdown depends on the right-hand side: rd and cr_rd inside), and what
// the reduced batch's own solve needs (tridiag_plan_reduced; it is
// shorter, so the recursion ends).
template <class T>
struct tridiag_partition_workspace {
  layout reduced;
  std::size_t arrays = 0, ints = 0, nested = 0;
  bool rhs_breakdown = false;
  tridiag_launch_plan nested_plan;
  tridiag_partition_workspace(layout const& lay, tridiag_launch_plan const& pl)
      : reduced(layout::contiguous(2 * std::int64_t(pl.chunks), lay.count)),
        rhs_breakdown(pl.inner == tridiag_algorithm::rd || pl.inner == tridiag_algorithm::cr_rd) {
    arrays = tridiag_ws_piece(std::size_t(reduced.n) * reduced.count * sizeof(T));
    ints = tridiag_ws_piece(std::size_t(lay.count) * sizeof(std::int32_t));
    nested_plan = tridiag_plan_reduced<T>(reduced, pl);
    nested = tridiag_workspace_bytes<T>(reduced, nested_plan);
  }
  std::size_t total() const { return 4 * arrays + (rhs_breakdown ? 3 : 2) * ints + nested; }
};

// What the segmented form runs where clusters of its size do not fit
// (devices before sm_90): the same plan without segments.
template <class T>
tridiag_launch_plan tridiag_segments_fallback(layout const& lay, tridiag_launch_plan const& pl) {
  return plan_thomas_pcr<T>(lay, pl.max_smem, false);
}

// rd and cr_rd: their breakdown depends on the right-hand side (RD's self
// check), so several right-hand sides fold it per system in a status array.
inline bool tridiag_rhs_breakdown(tridiag_launch_plan const& pl) {
  return pl.form == tridiag_form::tile &&
         (pl.solver == kernels::tile_solver::rd || pl.solver == kernels::tile_solver::cr_rd);
}

// pivoting = automatic around a no-pivot form (pivot_check): the form's
// workspace, then the fast solve's info where the caller passes none and
// the check's flags where the caller passes no pivoted (count int32 each),
// then the bounded pivoted form's factors for the flagged systems. (Where
// the plan runs the bounded pivoted form alone, in place beside a form that
// does not screen, this holds its workspace too.)
template <class T>
struct tridiag_checked_workspace {
  tridiag_launch_plan fast, fix;
  std::size_t form = 0, ints = 0, pivot = 0;
  tridiag_checked_workspace(layout const& lay, tridiag_launch_plan const& pl)
      : fast(pl), fix(tridiag_plan_pivot(pl.max_smem, false, true)) {
    fast.pivot_check = false;
    form = tridiag_ws_piece(tridiag_workspace_bytes<T>(lay, fast));
    ints = tridiag_ws_piece(std::size_t(std::max<std::int64_t>(0, lay.count)) * sizeof(std::int32_t));
    pivot = tridiag_workspace_bytes<T>(lay, fix);
  }
  std::size_t total() const { return form + 2 * ints + pivot; }
};

// Whether the form screens the systems for pivoting = automatic as it
// solves them (its kernels take tridiag_args::flags): the direct forms, the
// columns form, the tile but where its breakdown depends on the right-hand
// side (rd, cr_rd), and the segmented form where the form it falls back to
// (a cluster that does not fit) screens too. Not the partitioned form, the
// global-memory Thomas or Bondeli's.
template <class T>
bool tridiag_form_screens(layout const& lay, tridiag_launch_plan const& pl) {
  switch (pl.form) {
    case tridiag_form::direct:
    case tridiag_form::direct_columns:
    case tridiag_form::columns:
      return true;
    case tridiag_form::tile:
      return !tridiag_rhs_breakdown(pl);
    case tridiag_form::segments:
      return tridiag_form_screens<T>(lay, tridiag_segments_fallback<T>(lay, pl));
    default:
      return false;
  }
}

// The periodic split's workspace (dispatch_tridiag_periodic.cuh).
template <class T>
struct tridiag_periodic_workspace;

template <class T>
std::size_t tridiag_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl) {
  if (pl.periodic_split) return tridiag_periodic_workspace<T>(lay, pl).total();
  if (pl.pivot_check) return tridiag_checked_workspace<T>(lay, pl).total();
  switch (pl.form) {
    case tridiag_form::global_thomas:
      return std::size_t(lay.n) * std::size_t(lay.count) * sizeof(T);
    case tridiag_form::pivot:
      return std::size_t(lay.n) *
             std::size_t(tridiag_pivot_slots<T>(lay, pl.pivot_refine, pl.pivot_bounded)) *
             kernels::tridiag_pivot_row_bytes<T>(pl.pivot_refine);
    case tridiag_form::partition:
      return tridiag_partition_workspace<T>(lay, pl).total();
    case tridiag_form::bondeli:
      return tridiag_bondeli_workspace_bytes<T>(lay, pl);
    case tridiag_form::segments:
      return tridiag_workspace_bytes<T>(lay, tridiag_segments_fallback<T>(lay, pl));
    default:
      return tridiag_rhs_breakdown(pl) ? std::size_t(lay.count) * sizeof(std::int32_t) : 0;
  }
}

// Blocks of `kernel` resident on the device at once (per SM, at least one,
// times the SMs): the grid of a persistent launch. Cached per kernel,
// device, threads and shared memory: the occupancy query costs about as much
// as the rest of a small solve's enqueue.
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
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
      e != cudaSuccess)
    return e;
  blocks = std::int64_t(std::max(1, per_sm)) * sms;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, threads, smem, blocks});
  return cudaSuccess;
}

// Dynamic shared memory over the default 48 KB: allowed up to the device's
// limit (not this launch's size: a nested launch of the same kernel with a
// smaller limit would reject a later larger one).
template <class Kernel>
cudaError_t tridiag_allow_smem(Kernel kernel, std::size_t smem, std::size_t max_smem) {
  if (smem <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_smem));
}

// A persistent launch of `kernel` over `items` work items of one block each.
template <class Kernel, class Params>
cudaError_t tridiag_launch_persistent(Kernel kernel, Params const& p, std::int64_t items, int threads,
                                      std::size_t smem, std::size_t max_smem, cudaStream_t stream) {
  if (cudaError_t e = tridiag_allow_smem(kernel, smem, max_smem); e != cudaSuccess) return e;
  std::int64_t resident = 0;
  if (cudaError_t e = tridiag_resident_blocks(kernel, threads, smem, resident); e != cudaSuccess) return e;
  std::int64_t const blocks = std::min({items, resident, std::int64_t(1) << 30});
  kernel<<<unsigned(blocks), threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class T>
cudaError_t tridiag_launch(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                           cudaStream_t stream);
// The pivoted form and pivoting = automatic's check beside a no-pivot form
// (dispatch_tridiag_pivot.cuh).
template <class T>
cudaError_t tridiag_launch_pivot(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                 cudaStream_t stream, bool dependent = false);
template <class T>
cudaError_t tridiag_launch_checked(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                   cudaStream_t stream);
// Bondeli's algorithm (dispatch_tridiag_bondeli.cuh).
template <class T>
cudaError_t tridiag_launch_bondeli(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                   cudaStream_t stream);
template <class T>
std::size_t tridiag_bondeli_workspace_bytes(layout const& lay, tridiag_launch_plan const& pl);
// Periodic systems through a no-pivot form (dispatch_tridiag_periodic.cuh).
template <class T>
cudaError_t tridiag_launch_periodic(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                    cudaStream_t stream);

// Shared-memory tiles (agent_tridiag_tile.cuh). Several right-hand sides
// whose breakdown may differ (rd, cr_rd) fold it into a status per system
// (the workspace), which a second kernel turns into info and NaN.
template <class T>
cudaError_t tridiag_launch_tile(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                cudaStream_t stream) {
  std::int32_t* const status =
      tridiag_rhs_breakdown(pl) && s.nrhs > 1 ? static_cast<std::int32_t*>(workspace) : nullptr;
  if (status)
    if (cudaError_t e =
            cudaMemsetAsync(status, 0x7f, std::size_t(s.lay.count) * sizeof(std::int32_t), stream);
        e != cudaSuccess)
      return e;
  kernels::tridiag_tile_params<T> const p{
      s.a,
      s.b,
      s.c,
      s.d,
      s.x,
      s.info,
      status,
      s.lay,
      s.nrhs,
      s.rhs_stride,
      (s.lay.count + pl.systems - 1) / pl.systems,
      pl.systems,
      pl.group_threads,
      pl.ld,
      pl.red_ld,
      pl.switch_size,
      s.lay.element_stride == 1 || s.lay.n == 1,
      pl.serial_join,
      status ? nullptr : s.flags,
      pl.solver == kernels::tile_solver::thomas_pivot ? s.pivoted : nullptr};
  if (cudaError_t e = tridiag_launch_persistent(kernels::tridiag_tile_kernel<T>(pl.solver), p,
                                                p.tiles * s.nrhs, pl.threads, pl.smem, pl.max_smem, stream);
      e != cudaSuccess || !status)
    return e;
  std::int64_t const blocks = std::min((s.lay.count + 255) / 256, std::int64_t(1) << 30);
  kernels::tridiag_rhs_status_kernel<T>
      <<<unsigned(blocks), 256, 0, stream>>>(status, s.info, s.x, s.lay, s.nrhs, s.rhs_stride);
  return cudaGetLastError();
}

// One thread per system through global memory, c' in the workspace.
template <class T>
cudaError_t tridiag_launch_global_thomas(tridiag_launch_plan const& pl, void* workspace,
                                         tridiag_args<T> const& s, cudaStream_t stream) {
  kernels::tridiag_global_thomas_params<T> const p{
      s.a, s.b, s.c, s.d, s.x, static_cast<T*>(workspace), s.info, s.lay, s.nrhs, s.rhs_stride};
  std::int64_t const blocks = std::min((s.lay.count + pl.threads - 1) / pl.threads, std::int64_t(1) << 30);
  kernels::tridiag_global_thomas_kernel<T><<<unsigned(blocks), pl.threads, 0, stream>>>(p);
  return cudaGetLastError();
}

// The partitioned form, one right-hand side at a time: reduce, solve the
// reduced batch (its own plan), substitute. Where the breakdown depends on
// the right-hand side (rd, cr_rd inside), the rows fold into a status per
// system that tridiag_rhs_status turns into info and NaN, as the tile's.
template <class T>
cudaError_t tridiag_launch_partition(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                     cudaStream_t stream) {
  tridiag_partition_workspace<T> const ws(s.lay, pl);
  tridiag_ws_cursor cut(workspace);
  T* const ra = cut.take<T>(ws.arrays);
  T* const rb = cut.take<T>(ws.arrays);
  T* const rc = cut.take<T>(ws.arrays);
  T* const rd = cut.take<T>(ws.arrays);
  auto* const row_info = cut.take<unsigned>(ws.ints);
  auto* const rinfo = cut.take<std::int32_t>(ws.ints);
  std::int32_t* const status_piece = ws.rhs_breakdown ? cut.take<std::int32_t>(ws.ints) : nullptr;
  std::int32_t* const status = s.nrhs > 1 ? status_piece : nullptr;
  void* const nested = cut.take(ws.nested);
  if (status)
    if (cudaError_t e =
            cudaMemsetAsync(status, 0x7f, std::size_t(s.lay.count) * sizeof(std::int32_t), stream);
        e != cudaSuccess)
      return e;
  // Chunks in registers: exactly R rows each (the last one's rows past n
  // identity rows); else n split evenly.
  constexpr int R = kernels::tridiag_partition_regs_rows<T>;
  if (pl.partition_regs != 0 && pl.partition_regs != R) return cudaErrorNotSupported;
  bool const regs = pl.partition_regs == R;
  kernels::chunk_split const split =
      regs ? kernels::chunk_split{R, 0}
           : kernels::chunk_split{int(s.lay.n / pl.chunks), int(s.lay.n % pl.chunks)};
  std::int64_t const regs_blocks = (s.lay.count * pl.chunks + 127) / 128;
  auto pass = [&](auto window_kernel, auto regs_kernel, kernels::tridiag_partition_params<T> const& p) {
    return regs ? tridiag_launch_persistent(regs_kernel, p, regs_blocks, 128, 0, pl.max_smem, stream)
                : tridiag_launch_persistent(window_kernel, p, p.windows, pl.threads, pl.smem, pl.max_smem,
                                            stream);
  };
  std::int64_t const windows = regs ? 0
                                    : (s.lay.count + pl.window_systems - 1) / pl.window_systems *
                                          ((pl.chunks + pl.window_chunks - 1) / pl.window_chunks);
  for (std::int64_t r = 0; r < s.nrhs; ++r) {
    kernels::tridiag_partition_params<T> const p{s.a,
                                                 s.b,
                                                 s.c,
                                                 s.d + r * s.rhs_stride,
                                                 s.x + r * s.rhs_stride,
                                                 s.lay,
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
                                                 status || r + 1 < s.nrhs ? nullptr : s.info,
                                                 status};
    if (cudaError_t e = cudaMemsetAsync(row_info, 0xff, std::size_t(s.lay.count) * sizeof(unsigned), stream);
        e != cudaSuccess)
      return e;
    if (cudaError_t e = pass(kernels::tridiag_partition_reduce_kernel<T>,
                             kernels::tridiag_partition_regs_kernel<T, R, false>, p);
        e != cudaSuccess)
      return e;
    tridiag_args<T> const reduced{ra, rb, rc, rd, rd, ws.reduced, 1, ws.reduced.n * ws.reduced.count, rinfo};
    if (cudaError_t e = tridiag_launch<T>(ws.nested_plan, nested, reduced, stream); e != cudaSuccess)
      return e;
    if (cudaError_t e = pass(kernels::tridiag_partition_substitute_kernel<T>,
                             kernels::tridiag_partition_regs_kernel<T, R, true>, p);
        e != cudaSuccess)
      return e;
  }
  if (!status) return cudaSuccess;
  std::int64_t const blocks = std::min((s.lay.count + 255) / 256, std::int64_t(1) << 30);
  kernels::tridiag_rhs_status_kernel<T>
      <<<unsigned(blocks), 256, 0, stream>>>(status, s.info, s.x, s.lay, s.nrhs, s.rhs_stride);
  return cudaGetLastError();
}

// f.template operator()<L>() for the power of two L == lanes, 2 <= L <= Max.
template <int Max, int L = 2, class F>
cudaError_t tridiag_with_lanes(int lanes, F&& f) {
  if (lanes == L) return f.template operator()<L>();
  if constexpr (2 * L <= Max)
    return tridiag_with_lanes<Max, 2 * L>(lanes, f);
  else
    return cudaErrorNotSupported;
}

// Whether the direct plan's exact instances take s: n fills the form and
// every array and right-hand side starts on a 16-byte boundary.
template <class T>
bool tridiag_direct_exact(tridiag_launch_plan const& pl, tridiag_args<T> const& s) {
  auto aligned = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  return s.lay.n == pl.direct_size() &&
         (s.lay.count == 1 || s.lay.batch_stride * std::int64_t(sizeof(T)) % 16 == 0) &&
         (s.nrhs == 1 || s.rhs_stride * std::int64_t(sizeof(T)) % 16 == 0) && aligned(s.a) && aligned(s.b) &&
         aligned(s.c) && aligned(s.d) && aligned(s.x);
}

// Whether periodic systems run in the direct form itself (its Periodic
// instances: one segment of lanes a system, exact shapes) instead of the
// split around it.
template <class T>
bool tridiag_direct_periodic(tridiag_launch_plan const& pl, tridiag_args<T> const& s) {
  return pl.form == tridiag_form::direct && pl.direct_warps == 1 && tridiag_direct_exact(pl, s);
}

// agent_tridiag_direct.cuh: segments of Lanes lanes (blocks of 4 warps), or
// W warps a system; the exact instances where tridiag_direct_exact holds,
// else the Any ones; periodic (tridiag_direct_periodic holds): the Periodic
// instance.
template <class T>
cudaError_t tridiag_launch_direct(tridiag_launch_plan const& pl, tridiag_args<T> const& s,
                                  cudaStream_t stream, bool periodic = false) {
  constexpr int R = kernels::tridiag_direct_group_rows<T>;
  kernels::tridiag_direct_params<T> const p{s.a,    s.b,   s.c,    s.d,          s.x,
                                            s.info, s.lay, s.nrhs, s.rhs_stride, s.flags};
  std::int64_t const items = s.lay.count * s.nrhs;
  bool const exact = tridiag_direct_exact(pl, s);
  auto warps = [&]<int W, bool Spike>() {
    auto const kernel = exact ? kernels::tridiag_direct_group_kernel<T, R, W, Spike, false>
                              : kernels::tridiag_direct_group_kernel<T, R, W, Spike, true>;
    return tridiag_launch_persistent(kernel, p, items, 32 * W, 0, pl.max_smem, stream);
  };
  auto lanes = [&]<int Lanes>() {
    constexpr int block = 128, per_block = block / 32 * (32 / Lanes);
    auto const kernel = periodic ? kernels::tridiag_direct_kernel<T, R, Lanes, block, false, true>
                        : exact  ? kernels::tridiag_direct_kernel<T, R, Lanes, block, false>
                                 : kernels::tridiag_direct_kernel<T, R, Lanes, block, true>;
    return tridiag_launch_persistent(kernel, p, (items + per_block - 1) / per_block, block, 0, pl.max_smem,
                                     stream);
  };
  if (pl.direct_warps > 1) {
    switch (pl.direct_warps) {
      case 2:
        return warps.template operator()<2, false>();
      case 4:
        return warps.template operator()<4, false>();
      case 8:
        return warps.template operator()<8, false>();
      case 16:
        if constexpr (kernels::tridiag_direct_warps<T>(16)) return warps.template operator()<16, true>();
        break;
    }
    return cudaErrorNotSupported;
  }
  return tridiag_with_lanes<32>(pl.direct_lanes, lanes);
}

// agent_tridiag_direct.cuh's tridiag_direct_columns_kernel: blocks of S
// adjacent systems.
template <class T>
cudaError_t tridiag_launch_direct_columns(tridiag_launch_plan const& pl, tridiag_args<T> const& s,
                                          cudaStream_t stream) {
  constexpr int R = kernels::tridiag_direct_group_rows<T>;
  kernels::tridiag_direct_params<T> const p{s.a,    s.b,   s.c,    s.d,          s.x,
                                            s.info, s.lay, s.nrhs, s.rhs_stride, s.flags};
  auto go = [&]<int Lanes>() {
    constexpr int S = kernels::tridiag_direct_columns_systems<T>(Lanes);
    constexpr std::size_t smem = kernels::tridiag_direct_columns_smem<T>(R, Lanes, S);
    // (The shared-memory limit raised to the kernel's own size only.)
    return tridiag_launch_persistent(kernels::tridiag_direct_columns_kernel<T, R, Lanes>, p,
                                     (s.lay.count + S - 1) / S * s.nrhs, S * Lanes, smem, smem, stream);
  };
  constexpr int most = R == 8 ? 64 : 32;  // f64: 64 lanes are two warps a system
  return tridiag_with_lanes<most>(pl.direct_lanes, go);
}

template <class T>
kernels::tridiag_columns_params<T> tridiag_columns_params_of(tridiag_launch_plan const& pl,
                                                             tridiag_args<T> const& s, int width) {
  return {s.a,
          s.b,
          s.c,
          s.d,
          s.x,
          s.info,
          s.lay,
          s.nrhs,
          s.rhs_stride,
          pl.columns_systems,
          pl.columns_chunks,
          width,
          kernels::tridiag_columns_pitch(pl.columns_rows),
          pl.segments,
          int((s.lay.n + pl.pad_rows) / pl.segments),
          pl.pad_rows,
          s.flags};
}

// agent_tridiag_columns.cuh's columns kernel: blocks of S adjacent systems.
template <class T>
cudaError_t tridiag_launch_columns(tridiag_launch_plan const& pl, tridiag_args<T> const& s,
                                   cudaStream_t stream) {
  namespace K = kernels;
  auto const p = tridiag_columns_params_of<T>(pl, s, tridiag_detail::ceil_pow2(pl.columns_chunks));
  std::int64_t const items = (s.lay.count + pl.columns_systems - 1) / pl.columns_systems * s.nrhs;
  auto go = [&](auto kernel) {
    return tridiag_launch_persistent(kernel, p, items, pl.threads, pl.smem, pl.max_smem, stream);
  };
  switch (pl.columns_kind) {
    case columns_instance::rows16:
      return go(K::tridiag_columns_kernel<T, 16, false>);
    case columns_instance::rows32:
      return go(K::tridiag_columns_kernel<T, 32, false>);
    case columns_instance::rows16_lone:
      if constexpr (sizeof(T) == 4) return go(K::tridiag_columns_kernel<T, 16, true>);
      break;
    case columns_instance::rows32_lone:
      if constexpr (sizeof(T) == 4) return go(K::tridiag_columns_kernel<T, 32, true>);
      break;
    case columns_instance::burst:
      return go(K::tridiag_columns_kernel<T, 16, false, true>);
  }
  return cudaErrorNotSupported;
}

// Whether the device runs clusters of cfg's size of this kernel (sm_90 and
// room on a GPC), cached per kernel, device and shape.
template <class Kernel>
cudaError_t tridiag_cluster_fits(Kernel kernel, cudaLaunchConfig_t const& cfg, std::size_t max_smem,
                                 bool& fits) {
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
      if (c.kernel == key && c.dev == dev && c.threads == cfg.blockDim.x && c.G == G &&
          c.smem == cfg.dynamicSmemBytes) {
        fits = c.fits;
        return cudaSuccess;
      }
  }
  int major = 0, clusters = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
      e != cudaSuccess)
    return e;
  if (major >= 9) {
    if (cudaError_t e = tridiag_allow_smem(kernel, cfg.dynamicSmemBytes, max_smem); e != cudaSuccess)
      return e;
    if (G > 8)
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
          e != cudaSuccess)
        return e;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // an unsupported cluster size: it does not fit
      clusters = 0;
    }
  }
  fits = clusters > 0;
  std::lock_guard<std::mutex> lock(m);
  cache.push_back({key, dev, cfg.blockDim.x, G, cfg.dynamicSmemBytes, fits});
  return cudaSuccess;
}

// The segmented kernel's instance for a plan (the join is a template
// argument: the three joins are different programs between the cluster
// barriers).
template <class T>
auto tridiag_segments_kernel_of(tridiag_launch_plan const& pl) {
  namespace K = kernels;
  using Kernel = void (*)(K::tridiag_columns_params<T>);
  [[maybe_unused]] constexpr int A = K::tridiag_segments_ahead<T>, B = K::tridiag_segments_boundary<T>;
  [[maybe_unused]] constexpr int M = K::tridiag_columns_max_threads<T>;
  [[maybe_unused]] constexpr int twisted = K::segment_boundary_by_twisted;
  auto by_join = [&](auto pick) -> Kernel {
    using J = std::integral_constant<int, K::segment_join_by_thomas>;
    using P = std::integral_constant<int, K::segment_join_by_pcr>;
    using X = std::integral_constant<int, K::segment_join_by_scatter>;
    if constexpr (sizeof(T) == 8)
      if (pl.join == P::value) return pick(P{});
    return pl.join == X::value ? pick(X{}) : pick(J{});
  };
  switch (pl.segments_kind) {
    case segments_instance::rows16:
      return by_join([](auto J) -> Kernel { return K::tridiag_segments_kernel<T, 16, J>; });
    case segments_instance::rows32:
      return by_join([](auto J) -> Kernel { return K::tridiag_segments_kernel<T, 32, J>; });
    case segments_instance::near16:
    case segments_instance::near15: {
      // f32's Near instances with the scatter join fetch 4 rows ahead: its
      // loads are otherwise hoisted less than the 16-row instance's.
      bool const r15 = pl.segments_kind == segments_instance::near15;
      return by_join([r15](auto J) -> Kernel {
        constexpr int ahead = sizeof(T) == 4 && J == K::segment_join_by_scatter ? 4 : A;
        return r15 ? K::tridiag_segments_kernel<T, 15, J, ahead, B, M, 0, true>
                   : K::tridiag_segments_kernel<T, 16, J, ahead, B, M, 0, true>;
      });
    }
    case segments_instance::wide:
      if constexpr (sizeof(T) == 4)
        return by_join(
            [](auto J) -> Kernel { return K::tridiag_segments_kernel<T, 32, J, 6, twisted, 256, 2>; });
      break;
    case segments_instance::dregs:  // (pad: identity rows past n)
      if constexpr (sizeof(T) == 4)
        return pl.pad_rows > 0 ? Kernel(K::tridiag_segments_kernel<T, 64, K::segment_join_by_scatter, 8,
                                                                   twisted, 128, 3, false, true, true>)
                               : Kernel(K::tridiag_segments_kernel<T, 64, K::segment_join_by_scatter, 8,
                                                                   twisted, 128, 3, false, true>);
      else
        return pl.pad_rows > 0
                   ? Kernel(K::tridiag_segments_kernel<T, 32, K::segment_join_by_scatter, 5,
                                                       K::segment_boundary_by_pcr, 128, 3, false, true, true>)
                   : Kernel(K::tridiag_segments_kernel<T, 32, K::segment_join_by_scatter, 5,
                                                       K::segment_boundary_by_pcr, 128, 3, false, true>);
  }
  return Kernel(nullptr);
}

// The segmented kernel: a cluster of G blocks per group of systems,
// right-hand sides along y. Where the device cannot run clusters of G such
// blocks, the fallback plan (whose workspace the caller was asked for).
template <class T>
cudaError_t tridiag_launch_segments(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                                    cudaStream_t stream) {
  int const S = pl.columns_systems, G = pl.segments;
  auto const kernel = tridiag_segments_kernel_of<T>(pl);
  std::int64_t const blocks = (s.lay.count + S - 1) / S * G;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(std::min<std::int64_t>(blocks, INT_MAX)), 1);
  cfg.blockDim = dim3(unsigned(pl.threads));
  cfg.dynamicSmemBytes = pl.smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(G);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  // Clusters placed for load balance: tridiag_auto_f32_interleaved/n:4096.
  attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  bool fits = false;
  if (kernel)
    if (cudaError_t e = tridiag_cluster_fits(kernel, cfg, pl.max_smem, fits); e != cudaSuccess) return e;
  if (!fits || blocks > INT_MAX)
    return tridiag_launch<T>(tridiag_segments_fallback<T>(s.lay, pl), workspace, s, stream);
  for (std::int64_t r0 = 0; r0 < s.nrhs; r0 += 65535) {  // right-hand sides along y
    std::int64_t const nr = std::min<std::int64_t>(s.nrhs - r0, 65535);
    cfg.gridDim.y = unsigned(nr);
    tridiag_args<T> part = s;
    part.d += r0 * s.rhs_stride;
    part.x += r0 * s.rhs_stride;
    part.nrhs = nr;
    if (r0 + nr != s.nrhs) part.info = nullptr;
    auto const p = tridiag_columns_params_of<T>(pl, part, pl.columns_chunks);
    if (cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p); e != cudaSuccess) return e;
  }
  return cudaGetLastError();
}

// Enqueues a planned solve. workspace: tridiag_workspace_bytes of device
// memory (null when that is 0).
template <class T>
cudaError_t tridiag_launch(tridiag_launch_plan const& pl, void* workspace, tridiag_args<T> const& s,
                           cudaStream_t stream) {
  if (pl.periodic_split) return tridiag_launch_periodic<T>(pl, workspace, s, stream);
  if (pl.pivot_check) return tridiag_launch_checked<T>(pl, workspace, s, stream);
  if (s.lay.count <= 0) return cudaSuccess;
  bool const empty = s.lay.n <= 0 || s.nrhs <= 0;
  // The outputs no kernel writes: all of them for an empty problem, pivoted
  // and refinement_steps for the no-pivot forms.
  bool const kernel_writes_all = !empty && pl.form == tridiag_form::pivot;
  for (std::int32_t* const out : {empty ? s.info : nullptr, kernel_writes_all ? nullptr : s.pivoted,
                                  kernel_writes_all ? nullptr : s.refinement_steps})
    if (out)
      if (cudaError_t e = cudaMemsetAsync(out, 0, std::size_t(s.lay.count) * sizeof(std::int32_t), stream);
          e != cudaSuccess)
        return e;
  if (empty) return cudaSuccess;
  switch (pl.form) {
    case tridiag_form::none:
      return cudaErrorNotSupported;
    case tridiag_form::tile:
      return tridiag_launch_tile<T>(pl, workspace, s, stream);
    case tridiag_form::global_thomas:
      return tridiag_launch_global_thomas<T>(pl, workspace, s, stream);
    case tridiag_form::pivot:
      return tridiag_launch_pivot<T>(pl, workspace, s, stream);
    case tridiag_form::bondeli:
      return tridiag_launch_bondeli<T>(pl, workspace, s, stream);
    case tridiag_form::partition:
      return tridiag_launch_partition<T>(pl, workspace, s, stream);
    case tridiag_form::direct:
      return tridiag_launch_direct<T>(pl, s, stream);
    case tridiag_form::direct_columns:
      return tridiag_launch_direct_columns<T>(pl, s, stream);
    case tridiag_form::columns:
      return tridiag_launch_columns<T>(pl, s, stream);
    case tridiag_form::segments:
      return tridiag_launch_segments<T>(pl, workspace, s, stream);
  }
  return cudaErrorNotSupported;
}

// CUB-style entry: null temp reports temp_bytes (at least 1) and enqueues
// nothing. rhs_stride 0: the layout's span.
template <class T>
cudaError_t tridiag_solve(void* temp, std::size_t& temp_bytes, T const* a, T const* b, T const* c, T const* d,
                          T* x, layout const& lay, std::int64_t nrhs, std::int64_t rhs_stride,
                          std::int32_t* info, tridiag_algorithm alg, cudaStream_t stream) {
  std::size_t max_smem = 0;
  int cc = 0;
  if (cudaError_t e = tridiag_device_limits(max_smem, cc); e != cudaSuccess) return e;
  tridiag_launch_plan const pl = plan_tridiag_for<T>(lay, alg, max_smem, cc);
  std::size_t const need = tridiag_workspace_bytes<T>(lay, pl);
  if (!temp) {
    temp_bytes = std::max<std::size_t>(need, 1);
    return cudaSuccess;
  }
  if (temp_bytes < need) return cudaErrorInvalidValue;
  if (rhs_stride == 0) rhs_stride = lay.n * lay.count;
  return tridiag_launch<T>(pl, temp, tridiag_args<T>{a, b, c, d, x, lay, nrhs, rhs_stride, info}, stream);
}

}  // namespace recur::device

#include "dispatch_tridiag_bondeli.cuh"
#include "dispatch_tridiag_periodic.cuh"
#include "dispatch_tridiag_pivot.cuh"
