#pragma once
// Thomas-PCR for systems that do not fit a shared-memory tile, or whose
// layout makes a tile of whole systems too narrow to copy efficiently
// (interleaved systems of thousands of rows): the partitioned form, in three
// passes over global memory.
//
//   1. reduce      every chunk of `chunk` rows is eliminated in shared memory
//                  (block_tridiag.cuh's chunk_reduce); its two boundary
//                  equations go to a reduced batch in the workspace
//                  (2 equations per chunk, contiguous, b = 1);
//   2. (dispatch)  the reduced batch is solved like any batch (a tile
//                  algorithm, or this one again when it is still too long);
//   3. substitute  every chunk is copied and eliminated again, and x_first,
//                  x_last from the reduced solution give its rows.
// Memory traffic: a, b, c, d read twice, x written once (9 words per row
// instead of 5), so at most ~55% of the copy bandwidth; the payoff is any n
// and coalesced copies in every layout.
//
// Under pivoting = automatic's screen (flags), pass 1 also screens every
// row as it is copied (block_tridiag.cuh's screen_row: a row that is not
// diagonally dominant gets b = NaN, so its chunk records a breakdown), and
// pass 3 leaves x and info of a system that broke down unwritten and flags
// it, for the pivoted form to solve it again from d: x is written in pass 3
// alone, after every chunk of the system has been screened.
//
// A block owns a window: `systems` consecutive systems x `chunks` consecutive
// chunks, copied along the layout's unit stride (as in the tile agent), one
// thread per (system, chunk).

#include <climits>
#include <cstdint>
#include <limits>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag_thomas_pcr.cuh"
#include "agent_tridiag_direct.cuh"

namespace recur::kernels {

template <class T>
struct tridiag_partition_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;  // this right-hand side
  T* x;        // this right-hand side
  layout lay;
  chunk_split split;     // rows of chunk p: [split.first(p), + split.len(p))
  int chunks;            // per system
  int window_systems;    // systems per window
  int window_chunks;     // chunks per window
  int ld;                // shared-memory column length of a window (>= tridiag_pos(rows) + 1)
  std::int64_t windows;  // ceil(count / window_systems) * ceil(chunks / window_chunks)
  // The reduced batch: 2 * chunks equations per system, contiguous.
  T* ra;
  T* rb;
  T* rc;
  T* rd;                      // in pass 3: the reduced solution
  unsigned* row_info;         // per system: smallest 1-based row with a bad pivot in pass 1, ~0u if none
  std::int32_t const* rinfo;  // pass 3: the reduced solve's info
  std::int32_t* info;         // pass 3: the caller's info (may be null)
  // Pass 3 of several right-hand sides whose breakdown depends on d (the
  // reduced systems solved by rd or cr_rd): each one's breakdown row folded
  // in by atomicMin (starting at tridiag_no_breakdown), for
  // tridiag_rhs_status to finish info and x; else null.
  std::int32_t* status;
  // The screen (status null): null, or a flag per system (pass 3), 1 for a
  // system left unwritten.
  std::int32_t* flags;
};

template <class T>
constexpr std::size_t tridiag_partition_smem(int systems, int ld) {
  return 4 * std::size_t(systems) * ld * sizeof(T);
}

// Pass 3: system ks's breakdown, the smallest 1-based row of pass 1's or of
// the reduced solve's (whose row j, 1-based, is a chunk boundary of the
// original system); ~0u where none.
template <class T>
__device__ unsigned tridiag_partition_broken_row(tridiag_partition_params<T> const& p, std::int64_t ks) {
  unsigned r = p.row_info[ks];
  int const j = p.rinfo[ks];
  if (j > 0) {
    int const q = (j - 1) / 2;
    int const row = ((j - 1) & 1) ? p.split.first(q) + p.split.len(q) - 1 : p.split.first(q);
    r = min(r, unsigned(row + 1));
  }
  return r;
}

template <class T, bool Substitute>
__device__ void tridiag_partition(tridiag_partition_params<T> const& p, unsigned char* smem) {
  std::int64_t const n = p.lay.n;
  std::size_t const col = std::size_t(p.window_systems) * p.ld;
  T* const sa = reinterpret_cast<T*>(smem);
  T* const sb = sa + col;
  T* const sc = sb + col;
  T* const sd = sc + col;
  std::int64_t const sys_windows = (p.lay.count + p.window_systems - 1) / p.window_systems;
  int const m = 2 * p.chunks;
  bool const rows_fast = p.lay.element_stride == 1;
  for (std::int64_t w = blockIdx.x; w < p.windows; w += gridDim.x) {
    std::int64_t const k0 = (w % sys_windows) * p.window_systems;
    int const p0 = int(w / sys_windows) * p.window_chunks;
    int const g = int(min(std::int64_t(p.window_systems), p.lay.count - k0));
    int const pc = min(p.window_chunks, p.chunks - p0);
    int const i0 = p.split.first(p0);
    int const rows = p.split.first(p0 + pc) - i0;
    // Copy the window: rows [i0, i0 + rows) of systems [k0, k0 + g).
    {
      int const fast = rows_fast ? rows : g;
      int const total = rows * g;
      int const step = blockDim.x, dq = step / fast, dr = step - dq * fast;
      int u = threadIdx.x % fast, v = threadIdx.x / fast;
      for (int e = threadIdx.x; e < total; e += step) {
        int const i = rows_fast ? u : v, k = rows_fast ? v : u;
        std::int64_t const gi = i0 + i;
        std::int64_t const o = p.lay.offset(gi, k0 + k);
        int const s = k * p.ld + tridiag_pos(i);
        if (gi > 0)
          __pipeline_memcpy_async(sa + s, p.a + o, sizeof(T));
        else
          sa[s] = T(0);
        __pipeline_memcpy_async(sb + s, p.b + o, sizeof(T));
        if (gi + 1 < n)
          __pipeline_memcpy_async(sc + s, p.c + o, sizeof(T));
        else
          sc[s] = T(0);
        __pipeline_memcpy_async(sd + s, p.d + o, sizeof(T));
        u += dr;
        v += dq;
        if (u >= fast) {
          u -= fast;
          ++v;
        }
      }
      __pipeline_commit();
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    if constexpr (!Substitute)
      if (p.flags) {
        for (int e = threadIdx.x; e < rows * g; e += blockDim.x) {
          int const s = (e % g) * p.ld + tridiag_pos(e / g);
          tridiag_equation<T> q{sa[s], sb[s], sc[s], T(0)};
          screen_row(q);
          sb[s] = q.b;
        }
        __syncthreads();
      }
    // One thread per (system, chunk): consecutive threads, consecutive
    // systems (distinct banks: the columns are ld apart, ld odd).
    for (int t = threadIdx.x; t < g * pc; t += blockDim.x) {
      int const k = t % g, c = t / g;
      int const pidx = p0 + c;
      std::int64_t const ks = k0 + k;
      tridiag_rows<T> const sys{sa + k * p.ld, sb + k * p.ld, sc + k * p.ld, sd + k * p.ld};
      int const first = p.split.first(pidx) - i0, len = p.split.len(pidx);
      chunk_ends<T> const e = chunk_reduce(sys, first, len, [&](int r) {
        if constexpr (!Substitute) atomicMin(p.row_info + ks, unsigned(i0 + r + 1));
      });
      std::int64_t const ro = ks * m + 2 * pidx;
      if constexpr (!Substitute) {
        p.ra[ro] = e.first.a, p.rb[ro] = T(1), p.rc[ro] = e.first.c, p.rd[ro] = e.first.d;
        p.ra[ro + 1] = e.last.a, p.rb[ro + 1] = T(1), p.rc[ro + 1] = e.last.c, p.rd[ro + 1] = e.last.d;
      } else {
        chunk_substitute(sys, first, len, p.rd[ro], p.rd[ro + 1]);
      }
    }
    __syncthreads();
    if constexpr (Substitute) {
      auto broken_row = [&](std::int64_t ks) { return tridiag_partition_broken_row(p, ks); };
      int const fast = rows_fast ? rows : g;
      int const total = rows * g;
      for (int e = threadIdx.x; e < total; e += blockDim.x) {
        int const i = rows_fast ? e % fast : e / fast, k = rows_fast ? e / fast : e % fast;
        std::int64_t const ks = k0 + k;
        bool const ok = broken_row(ks) == ~0u;
        if (ok || !p.flags)
          p.x[p.lay.offset(i0 + i, ks)] =
              ok ? sd[k * p.ld + tridiag_pos(i)] : std::numeric_limits<T>::quiet_NaN();
      }
      if ((p.info || p.flags) && p0 == 0)
        for (int k = threadIdx.x; k < g; k += blockDim.x) {
          unsigned const r = broken_row(k0 + k);
          report_system(p.info, p.flags, k0 + k, r == ~0u ? INT_MAX : int(r));
        }
      if (p.status && p0 == 0)
        for (int k = threadIdx.x; k < g; k += blockDim.x)
          if (unsigned const r = broken_row(k0 + k); r != ~0u) atomicMin(p.status + k0 + k, std::int32_t(r));
      __syncthreads();
    }
  }
}

template <class T>
__global__ void __launch_bounds__(256)
    tridiag_partition_reduce_kernel(__grid_constant__ tridiag_partition_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_partition<T, false>(p, smem);
}

template <class T>
__global__ void __launch_bounds__(256)
    tridiag_partition_substitute_kernel(__grid_constant__ tridiag_partition_params<T> const p) {
  extern __shared__ __align__(16) unsigned char smem[];
  tridiag_partition<T, true>(p, smem);
}

// The same two passes for contiguous systems (element_stride 1) with each
// thread's chunk in registers instead of a shared-memory window: chunks of
// exactly R rows (split {R, 0}; the last chunk's rows past n identity
// rows, neither read nor written), loaded with the direct form's 16-byte
// loads (tridiag_load_chunk) and eliminated by chunk_sweeps, one thread a
// chunk; the reduce pass writes the chunk's two boundary equations, the
// substitute pass loads and eliminates the chunk again and stores its x.
// Why: the window's 4-byte copies into shared memory (a cp.async per value
// and array) and the sweeps through shared memory keep the shared-memory
// passes far from the copy bandwidth on one long system.
template <class T>
inline constexpr int tridiag_partition_regs_rows = int(128 / sizeof(T));  // a 128-byte line per array
inline constexpr int tridiag_partition_regs_threads = 128;                // a block, its launch bound

template <class T, int R, bool Substitute>
__global__ void __launch_bounds__(tridiag_partition_regs_threads)
    tridiag_partition_regs_kernel(__grid_constant__ tridiag_partition_params<T> const p) {
  int const n = int(p.lay.n), m2 = 2 * p.chunks;
  std::int64_t const items = p.lay.count * p.chunks;
  for (std::int64_t q = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; q < items;
       q += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const ks = q / p.chunks;
    int const pidx = int(q - ks * p.chunks), first = pidx * R;
    std::int64_t const o = ks * p.lay.batch_stride + first;
    chunk_regs<T, R> m;
    T bv[R];
    tridiag_load_chunk<T, R, true>(p.a + o, p.b + o, p.c + o, p.d + o, first, n, m, bv);
    if constexpr (!Substitute)
      if (p.flags) chunk_screen(m, bv);
    chunk_ends<T> const e = chunk_sweeps<T, R>(
        first, R, m,
        [&](int i) {
          return tridiag_equation<T>{m.a[i], bv[i], m.c[i], m.d[i]};
        },
        [&](int row) {
          if constexpr (!Substitute) atomicMin(p.row_info + ks, unsigned(row + 1));
        });
    std::int64_t const ro = ks * m2 + 2 * pidx;
    if constexpr (!Substitute) {
      p.ra[ro] = e.first.a, p.rb[ro] = T(1), p.rc[ro] = e.first.c, p.rd[ro] = e.first.d;
      p.ra[ro + 1] = e.last.a, p.rb[ro + 1] = T(1), p.rc[ro + 1] = e.last.c, p.rd[ro + 1] = e.last.d;
    } else {
      unsigned const broken = tridiag_partition_broken_row(p, ks);
      if (broken == ~0u || !p.flags)
        direct_store<T, R, true>(m, p.rd[ro], p.rd[ro + 1], broken == ~0u ? INT_MAX : 0, p.x + o, n - first);
      if (pidx == 0) {
        report_system(p.info, p.flags, ks, broken == ~0u ? INT_MAX : int(broken));
        if (p.status && broken != ~0u) atomicMin(p.status + ks, std::int32_t(broken));
      }
    }
  }
}

}  // namespace recur::kernels
