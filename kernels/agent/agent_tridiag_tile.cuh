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
//
// The global-memory Thomas (one thread per system, c' in a workspace) is
// here too: the fallback for systems too long for shared memory.

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "../block/block_tridiag.cuh"

namespace recur::kernels {

enum class tile_solver : int { thomas, thomas_pcr, cr_pcr };

template <class T>
struct tridiag_tile_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  std::int32_t* info;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
  std::int64_t tiles;  // ceil(count / systems)
  int systems;         // per tile
  int group_threads;   // threads per system (1 for Thomas)
  int ld;              // shared-memory column length, >= tridiag_pos(n), odd
  int switch_size;     // cr_pcr: PCR below this many equations
  bool rows_fast;      // the copy runs along rows (element_stride == 1)
};

// Dynamic shared memory of a tile: four columns per system and the systems'
// breakdown rows.
template <class T>
constexpr std::size_t tridiag_tile_smem(int systems, int ld) {
  return 4 * std::size_t(systems) * ld * sizeof(T) + std::size_t(systems) * sizeof(int);
}

template <class T>
struct tridiag_tile_agent {
  tridiag_tile_params<T> const& p;
  T* sa;
  T* sb;
  T* sc;
  T* sd;
  int* sinfo;

  __device__ tridiag_tile_agent(tridiag_tile_params<T> const& params, unsigned char* smem)
      : p(params),
        sa(reinterpret_cast<T*>(smem)),
        sb(sa + std::size_t(params.systems) * params.ld),
        sc(sb + std::size_t(params.systems) * params.ld),
        sd(sc + std::size_t(params.systems) * params.ld),
        sinfo(reinterpret_cast<int*>(sd + std::size_t(params.systems) * params.ld)) {}

  // Visits every (row i, system k) of the tile, k < g, along the layout's
  // unit stride, spread over the block's threads.
  template <class F>
  __device__ __forceinline__ void for_each_element(int g, F&& f) const {
    int const n = static_cast<int>(p.lay.n);
    int const total = n * g;
    if (p.rows_fast) {
      for (int e = threadIdx.x; e < total; e += blockDim.x) f(e % n, e / n);
    } else {
      for (int e = threadIdx.x; e < total; e += blockDim.x) f(e / g, e % g);
    }
  }

  __device__ void load(std::int64_t k0, int g, std::int64_t rhs) const {
    int const n = static_cast<int>(p.lay.n);
    for_each_element(g, [&](int i, int k) {
      std::int64_t const o = p.lay.offset(i, k0 + k);
      int const s = k * p.ld + tridiag_pos(i);
      // a[0] and c[n-1] are not the caller's to give: zeros on chip.
      if (i > 0)
        __pipeline_memcpy_async(sa + s, p.a + o, sizeof(T));
      else
        sa[s] = T(0);
      __pipeline_memcpy_async(sb + s, p.b + o, sizeof(T));
      if (i + 1 < n)
        __pipeline_memcpy_async(sc + s, p.c + o, sizeof(T));
      else
        sc[s] = T(0);
      __pipeline_memcpy_async(sd + s, p.d + o + rhs, sizeof(T));
    });
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }

  __device__ void store(std::int64_t k0, int g, std::int64_t rhs) const {
    for_each_element(g, [&](int i, int k) {
      T const v = sinfo[k] == INT_MAX ? sd[k * p.ld + tridiag_pos(i)] : std::numeric_limits<T>::quiet_NaN();
      p.x[p.lay.offset(i, k0 + k) + rhs] = v;
    });
  }

  template <tile_solver Solver>
  __device__ void solve(int g) const {
    int const n = static_cast<int>(p.lay.n);
    int const k = threadIdx.x / p.group_threads;
    int const rank = threadIdx.x % p.group_threads;
    bool const active = k < g;
    tridiag_rows<T> const sys{sa + k * p.ld, sb + k * p.ld, sc + k * p.ld, sd + k * p.ld};
    if constexpr (Solver == tile_solver::thomas) {
      if (active) {
        int const r = thread_thomas(sys, n);
        if (r) atomicMin(sinfo + k, r);
      }
    } else if constexpr (Solver == tile_solver::thomas_pcr) {
      warp_thomas_pcr(sys, n, rank, active, active ? sinfo + k : nullptr);
    } else {
      group_cr_pcr(sys, n, p.switch_size, rank, p.group_threads, active, active ? sinfo + k : nullptr);
    }
  }

  template <tile_solver Solver>
  __device__ void run() const {
    for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
      std::int64_t const k0 = tile * p.systems;
      int const g = static_cast<int>(min(std::int64_t(p.systems), p.lay.count - k0));
      for (int k = threadIdx.x; k < g; k += blockDim.x) sinfo[k] = INT_MAX;
      for (std::int64_t r = 0; r < p.nrhs; ++r) {
        __syncthreads();  // the previous solve's x is stored; info is reset
        load(k0, g, r * p.rhs_stride);
        __syncthreads();
        solve<Solver>(g);
        __syncthreads();
        store(k0, g, r * p.rhs_stride);
      }
      __syncthreads();
      if (p.info)
        for (int k = threadIdx.x; k < g; k += blockDim.x)
          p.info[k0 + k] = sinfo[k] == INT_MAX ? 0 : sinfo[k];
    }
  }
};

// Global-memory Thomas: one thread per system, any n. c' goes to the
// workspace (interleaved, so consecutive threads touch consecutive words),
// d' to x; the back substitution then overwrites x. Coalesced when the
// layout is interleaved; the fallback, not the fast path, otherwise.
template <class T>
struct tridiag_global_thomas_params {
  T const* a;
  T const* b;
  T const* c;
  T const* d;
  T* x;
  T* cprime;  // n * count values
  std::int32_t* info;
  layout lay;
  std::int64_t nrhs;
  std::int64_t rhs_stride;
};

template <class T>
__device__ void tridiag_global_thomas(tridiag_global_thomas_params<T> const& p) {
  std::int64_t const n = p.lay.n, count = p.lay.count;
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    std::int32_t status = 0;
    for (std::int64_t r = 0; r < p.nrhs; ++r) {
      std::int64_t const rhs = r * p.rhs_stride;
      T c_prev = 0, d_prev = 0;
      std::int64_t i = 0;
      for (; i < n; ++i) {
        std::int64_t const o = p.lay.offset(i, k);
        T const ai = i > 0 ? p.a[o] : T(0);
        T const pv = p.b[o] - ai * c_prev;
        if (!usable_pivot(pv)) break;
        T const q = T(1) / pv;
        c_prev = (i + 1 < n ? p.c[o] : T(0)) * q;
        d_prev = (p.d[o + rhs] - ai * d_prev) * q;
        p.cprime[i * count + k] = c_prev;
        p.x[o + rhs] = d_prev;
      }
      if (i < n) {
        status = static_cast<std::int32_t>(i + 1);
        break;
      }
      T xv = d_prev;
      for (i = n - 2; i >= 0; --i) {
        std::int64_t const o = p.lay.offset(i, k);
        xv = p.x[o + rhs] - p.cprime[i * count + k] * xv;
        p.x[o + rhs] = xv;
      }
    }
    if (status)  // the pivots are the matrix's: every right-hand side broke down
      for (std::int64_t r = 0; r < p.nrhs; ++r)
        for (std::int64_t i = 0; i < n; ++i) p.x[p.lay.offset(i, k) + r * p.rhs_stride] = std::numeric_limits<T>::quiet_NaN();
    if (p.info) p.info[k] = status;
  }
}

}  // namespace recur::kernels
