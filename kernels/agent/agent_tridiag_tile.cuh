#pragma once
// Batched tridiagonal solves, one tile of systems per block, on chip: the
// block copies `systems` whole systems (a, b, c and one right-hand side d)
// into shared memory, solves them there (block_tridiag.cuh) and writes x
// once. Global memory is read once and written once per right-hand side,
// whatever the layout:
// - the copy runs along the layout's unit stride (rows of a system for the
//   contiguous layout, systems for the interleaved one), so it is coalesced,
//   and goes straight to shared memory (cp.async: many loads in flight,
//   no registers held);
// - in shared memory each system is a column of `ld` values, ld odd, so one
//   thread per system (Thomas) and one thread per row (the copy of an
//   interleaved tile) are both free of bank conflicts.
// Several right-hand sides are solved one after the other, each with its own
// copy of the matrix (read again; from L2 when the batch is small).
// Blocks are persistent: each walks tiles, and many small blocks per SM
// overlap one's copies with another's solve.

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag_packed.cuh"
#include "../block/block_tridiag_scan.cuh"
#include "../block/block_tridiag_split.cuh"
#include "../block/block_tridiag_thomas_pcr.cuh"

namespace recur::kernels {

// The solver a tile runs on each of its systems (block_tridiag*.cuh).
// thomas_pcr_regs: Thomas-PCR with one warp per system whose chunks fit in
// registers (warp_thomas_pcr's register path; its own kernel, so that the
// register count it needs does not limit the occupancy of the other shapes).
enum class tile_solver : int {
  thomas,
  thomas_pcr,
  cr_pcr,
  cr_packed,
  rd,
  cr_rd,
  pscheme,
  cr_split,
  thomas_pcr_regs,
  thomas_pivot  // thread_gtsv: pivoting = partial
};

// Rows per thread of the register-packed CR (Davidson and Owens found 8
// best on their GPU).
inline constexpr int cr_packed_rows = 8;

template <class T>
struct tridiag_tile_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int32_t* info;
  // Breakdown that depends on the right-hand side (rd, cr_rd: RD's x_0 and
  // its self check do) with several right-hand sides: every item folds its
  // rows into status[k] by atomicMin (status starts at tridiag_no_breakdown)
  // and tridiag_rhs_status finishes info and x; null otherwise (the matrix
  // alone decides, and the last right-hand side writes info).
  std::int32_t* status;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  std::int64_t tiles;  // ceil(count / systems)
  int systems;         // per tile
  int group_threads;   // threads per system (1 for Thomas)
  int ld;              // shared-memory column length, >= tridiag_pos(n), odd
  int red_ld;          // per system 4 red_ld values of scratch: thomas_pcr's boundary system (several
                       // warps), the group scans of rd, cr_rd and pscheme, cr_split's reduced levels; else 0
  int switch_size;     // cr_pcr, cr_rd, cr_packed: PCR (RD) below this many equations
  bool rows_fast;      // the copy runs along rows (element_stride == 1)
  bool serial_join;    // thomas_pcr: the boundary system by Thomas (warp_boundary_thomas)
  // pivoting = automatic's screen (block_tridiag.cuh's row_dominant; status
  // null): null, or a flag per system, 1 for a system left unwritten for the
  // pivoted form
  std::int32_t* flags = nullptr;
  // thomas_pivot: null, or 1 per system (every system is solved with
  // partial pivoting)
  std::int32_t* pivoted = nullptr;
};

// Dynamic shared memory of a tile: four columns per system, the systems'
// breakdown rows and, for a multi-warp Thomas-PCR, four columns of the
// boundary system per system; rounded up to 16 bytes.
template <class T>
constexpr std::size_t tridiag_tile_smem(int systems, int ld, int red_ld = 0) {
  std::size_t const info = (std::size_t(systems) * sizeof(int) + sizeof(T) - 1) / sizeof(T) * sizeof(T);
  return (4 * std::size_t(systems) * (ld + red_ld) * sizeof(T) + info + 15) / 16 * 16;
}

template <class T>
struct tridiag_tile_agent {
  // The tile's shared memory: the four columns of every system and the
  // systems' breakdown rows.
  struct buffer {
    T* a;
    T* b;
    T* c;
    T* d;
    int* info;
    T* red;  // boundary systems (red_ld > 0)
  };

  tridiag_tile_params<T> const& p;
  unsigned char* smem;

  __device__ tridiag_tile_agent(tridiag_tile_params<T> const& params, unsigned char* s)
      : p(params), smem(s) {}

  __device__ buffer tile() const {
    std::size_t const col = std::size_t(p.systems) * p.ld;
    T* base = reinterpret_cast<T*>(smem);
    std::size_t const info = (std::size_t(p.systems) * sizeof(int) + sizeof(T) - 1) / sizeof(T);
    return {base,
            base + col,
            base + 2 * col,
            base + 3 * col,
            reinterpret_cast<int*>(base + 4 * col),
            base + 4 * col + info};
  }

  // Visits every (row i, system k) of the tile, k < g, along the layout's
  // unit stride, spread over the block's threads. The position advances by
  // blockDim.x with a carry instead of a division per element.
  template <class F>
  __device__ __forceinline__ void for_each_element(int g, F&& f) const {
    int const n = static_cast<int>(p.lay.n);
    int const total = n * g;
    int const fast = p.rows_fast ? n : g;
    int const step = blockDim.x, dq = step / fast, dr = step - dq * fast;
    int u = threadIdx.x % fast, v = threadIdx.x / fast;  // fast and slow coordinates
    for (int e = threadIdx.x; e < total; e += step) {
      if (p.rows_fast)
        f(u, v);
      else
        f(v, u);
      u += dr;
      v += dq;
      if (u >= fast) {
        u -= fast;
        ++v;
      }
    }
  }

  // Issues the copies of one tile (matrix and right-hand side rhs) into
  // `buf` and commits them as one cp.async group; does not wait.
  __device__ void issue_load(buffer const& buf, std::int64_t k0, int g, std::int64_t rhs) const {
    int const n = static_cast<int>(p.lay.n);
    for (int k = threadIdx.x; k < g; k += blockDim.x) buf.info[k] = INT_MAX;
    for_each_element(g, [&](int i, int k) {
      std::int64_t const o = p.lay.offset(i, k0 + k);
      int const s = k * p.ld + tridiag_pos(i);
      // a[0] and c[n-1] are not the caller's to give: zeros on chip.
      if (i > 0)
        __pipeline_memcpy_async(buf.a + s, p.a + o, sizeof(T));
      else
        buf.a[s] = T(0);
      __pipeline_memcpy_async(buf.b + s, p.b + o, sizeof(T));
      if (i + 1 < n)
        __pipeline_memcpy_async(buf.c + s, p.c + o, sizeof(T));
      else
        buf.c[s] = T(0);
      __pipeline_memcpy_async(buf.d + s, p.d + o + rhs, sizeof(T));
    });
  }

  // The screen of the tile's rows as copied (a[0] and c[n - 1] zeros): a
  // row that is not diagonally dominant marks its system.
  __device__ void screen(buffer const& buf, int g) const {
    for_each_element(g, [&](int i, int k) {
      int const s = k * p.ld + tridiag_pos(i);
      if (!row_dominant(buf.a[s], buf.b[s], buf.c[s])) record_not_dominant(buf.info + k);
    });
  }

  // x of the tile's systems; under the screen (flags) only of those kept.
  __device__ void store(buffer const& buf, std::int64_t k0, int g, std::int64_t rhs) const {
    for_each_element(g, [&](int i, int k) {
      bool const kept = buf.info[k] == INT_MAX;
      if (p.flags && !kept) return;
      T const v = kept ? buf.d[k * p.ld + tridiag_pos(i)] : std::numeric_limits<T>::quiet_NaN();
      p.x[p.lay.offset(i, k0 + k) + rhs] = v;
    });
  }

  template <tile_solver Solver>
  __device__ void solve(buffer const& buf, int g) const {
    int const n = static_cast<int>(p.lay.n);
    int const k = threadIdx.x / p.group_threads;
    int const rank = threadIdx.x % p.group_threads;
    bool const active = k < g;
    std::size_t const o = std::size_t(k) * p.ld;
    tridiag_rows<T> const sys{buf.a + o, buf.b + o, buf.c + o, buf.d + o};
    int* info = active ? buf.info + k : nullptr;
    if constexpr (Solver == tile_solver::thomas) {
      if (active) {
        int const r = thread_thomas(sys, n);
        if (r) atomicMin(info, r);
      }
    } else if constexpr (Solver == tile_solver::thomas_pivot) {
      if (active) {
        int const r = thread_gtsv(sys, n);
        if (r) atomicMin(info, r);
      }
    } else if constexpr (Solver == tile_solver::thomas_pcr_regs) {
      warp_thomas_pcr<T, true>(sys, n, rank, active, info);
    } else if constexpr (Solver == tile_solver::thomas_pcr || Solver == tile_solver::cr_split) {
      std::size_t const rc = std::size_t(p.systems) * p.red_ld, ro = std::size_t(k) * p.red_ld;
      tridiag_rows<T> const red{buf.red + ro, buf.red + rc + ro, buf.red + 2 * rc + ro,
                                buf.red + 3 * rc + ro};
      if constexpr (Solver == tile_solver::thomas_pcr)
        group_thomas_pcr(sys, red, n, rank, p.group_threads, active, info, p.serial_join);
      else
        group_cr_split(sys, red, n, rank, p.group_threads, active, info);
    } else if constexpr (Solver == tile_solver::cr_pcr) {
      group_cr_pcr(sys, n, p.switch_size, rank, p.group_threads, active, info);
    } else if constexpr (Solver == tile_solver::cr_packed) {
      group_cr_packed<T, cr_packed_rows>(sys, n, p.switch_size, rank, p.group_threads, active, info);
    } else {
      void* const scratch = buf.red + std::size_t(k) * 4 * p.red_ld;
      if constexpr (Solver == tile_solver::rd) {
        group_rd(sys, n, 1, rank, p.group_threads, active, info, static_cast<rd_prefix<T>*>(scratch));
      } else if constexpr (Solver == tile_solver::cr_rd) {
        group_cr_frame(sys, n, p.switch_size, rank, p.group_threads, active, info, [&](int m, int s) {
          group_rd(sys, m, s, rank, p.group_threads, active, info, static_cast<rd_prefix<T>*>(scratch));
        });
      } else {
        static_assert(Solver == tile_solver::pscheme);
        group_pscheme(sys, n, rank, p.group_threads, active, info, scratch);
      }
    }
  }

  // The block walks work items w = tile * nrhs + r (grid-stride): copy,
  // solve, store.
  template <tile_solver Solver>
  __device__ void run() const {
    std::int64_t const items = p.tiles * p.nrhs;
    buffer const buf = tile();
    for (std::int64_t w = blockIdx.x; w < items; w += gridDim.x) {
      std::int64_t const t = w / p.nrhs, k0 = t * p.systems, rhs = (w - t * p.nrhs) * p.rhs_stride;
      int const g = static_cast<int>(min(std::int64_t(p.systems), p.lay.count - k0));
      issue_load(buf, k0, g, rhs);
      __pipeline_commit();
      __pipeline_wait_prior(0);
      __syncthreads();  // every thread's copies of this item have landed
      if (p.flags) {
        screen(buf, g);
        __syncthreads();
      }
      solve<Solver>(buf, g);
      __syncthreads();
      store(buf, k0, g, rhs);
      if (p.status) {
        for (int k = threadIdx.x; k < g; k += blockDim.x)
          if (buf.info[k] != INT_MAX) atomicMin(p.status + k0 + k, buf.info[k]);
      } else if ((p.info || p.flags) && w % p.nrhs == p.nrhs - 1) {
        // breakdown is the matrix's: the same for every rhs
        for (int k = threadIdx.x; k < g; k += blockDim.x) report_system(p.info, p.flags, k0 + k, buf.info[k]);
      }
      if (p.pivoted && w % p.nrhs == p.nrhs - 1)
        for (int k = threadIdx.x; k < g; k += blockDim.x) p.pivoted[k0 + k] = 1;
      __syncthreads();  // the tile is free for the next item's copies
    }
  }
};

// The status value of a system that did not break down (a byte pattern, so
// cudaMemsetAsync can set it): larger than any row number.
inline constexpr std::int32_t tridiag_no_breakdown = 0x7f7f7f7f;

// Finishes a solve whose breakdown depends on the right-hand side: info is
// the smallest row over all right-hand sides, and every right-hand side of a
// broken system becomes NaN. One thread per system (broken systems are the
// exception).
template <class T>
__device__ void tridiag_rhs_status(std::int32_t const* status, std::int32_t* info, T* x, layout lay,
                                   std::int64_t nrhs, std::int64_t rhs_stride) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < lay.count;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    std::int32_t const st = status[k];
    bool const broke = st != tridiag_no_breakdown;
    if (info) info[k] = broke ? st : 0;
    if (broke)
      for (std::int64_t r = 0; r < nrhs; ++r)
        for (std::int64_t i = 0; i < lay.n; ++i)
          x[lay.offset(i, k) + r * rhs_stride] = std::numeric_limits<T>::quiet_NaN();
  }
}

template <class T>
__global__ void tridiag_tile_thomas_kernel(__grid_constant__ tridiag_tile_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_tile_agent<T>(p, smem).template run<tile_solver::thomas>();
}

template <class T>
__global__ void tridiag_tile_pivot_kernel(__grid_constant__ tridiag_tile_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_tile_agent<T>(p, smem).template run<tile_solver::thomas_pivot>();
}

// Threads per block at most, by solver (the register-packed CR holds 8
// equations per thread: 512 threads leave it 128 registers).
constexpr int tile_max_threads(tile_solver s) {
  return s == tile_solver::thomas_pcr || s == tile_solver::thomas_pcr_regs || s == tile_solver::cr_packed
             ? 512
             : 1024;
}

// The group solvers: one kernel per solver, MaxThreads bounding the block.
template <class T, tile_solver Solver, int MaxThreads = tile_max_threads(Solver)>
__global__ void __launch_bounds__(MaxThreads)
    tridiag_tile_group_kernel(__grid_constant__ tridiag_tile_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_tile_agent<T>(p, smem).template run<Solver>();
}

template <class T>
using tridiag_tile_kernel_t = void (*)(tridiag_tile_params<T>);

template <class T>
tridiag_tile_kernel_t<T> tridiag_tile_kernel(tile_solver s) {
  switch (s) {
    case tile_solver::thomas:
      return tridiag_tile_thomas_kernel<T>;
    case tile_solver::thomas_pivot:
      return tridiag_tile_pivot_kernel<T>;
    case tile_solver::thomas_pcr:
      return tridiag_tile_group_kernel<T, tile_solver::thomas_pcr>;
    case tile_solver::thomas_pcr_regs:
      return tridiag_tile_group_kernel<T, tile_solver::thomas_pcr_regs>;
    case tile_solver::cr_pcr:
      return tridiag_tile_group_kernel<T, tile_solver::cr_pcr>;
    case tile_solver::cr_packed:
      return tridiag_tile_group_kernel<T, tile_solver::cr_packed>;
    case tile_solver::rd:
      return tridiag_tile_group_kernel<T, tile_solver::rd>;
    case tile_solver::cr_rd:
      return tridiag_tile_group_kernel<T, tile_solver::cr_rd>;
    case tile_solver::pscheme:
      return tridiag_tile_group_kernel<T, tile_solver::pscheme>;
    case tile_solver::cr_split:
      return tridiag_tile_group_kernel<T, tile_solver::cr_split>;
  }
  return nullptr;
}

template <class T>
__global__ void tridiag_rhs_status_kernel(std::int32_t const* status, std::int32_t* info, T* x, layout lay,
                                          std::int64_t nrhs, std::int64_t rhs_stride) {
  tridiag_rhs_status(status, info, x, lay, nrhs, rhs_stride);
}

}  // namespace recur::kernels
