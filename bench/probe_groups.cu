// The segmented tridiagonal kernel's way of holding a group of G blocks
// together, alone, without a solve: what the interleaved n = 4096 shape
// (16 segments of 256 rows) loses to its cluster of 16 against a cluster
// of 4 (n = 1024), and whether a join through global memory (blocks taking
// their work item from an atomic ticket, each group's blocks waiting on a
// counter) would lose less. The segmented kernel
// (kernels/agent/agent_tridiag_columns.cuh) runs 2 blocks per SM, and a
// cluster of 16 such blocks must find 16 free slots on one GPC; ncu counted
// 15 clusters resident at n = 4096 (120 SMs' worth of 132).
//
// Kernel (f32, the wide segments' shape): a block of 32 adjacent systems x
// 8 chunks of 32 rows (256 threads), one segment of 256 rows of a group of
// 32 systems; each thread keeps 6 rows of a, b, c, d in flight in
// registers, runs a dependent chain over its rows (v = a v + b c + d) and
// writes 3 words a row to shared memory (96 KB a block: 2 blocks per SM,
// as the solver's), then optionally spins (the boundary solve's time, in
// which a block loads nothing), then the group's barrier, then writes
// x per row from shared memory. Sync: 0 none, 1 the cluster's (two
// cluster barriers, a word read from a peer between them, as the scatter
// join), 2 through global memory (ticket, counter, a peer's word read from
// L2), 3 persistent blocks with two segments' buffers (the wait for a
// group hidden behind the next segment's sweep), 4 no rows on chip (a
// second read of the segment after the join, from L2 if still there), 5
// and 6 clusters of 4 or 8 blocks (2 or 4 SMs' worth, which pack the GPU)
// with a ticket per cluster, a group's G / K clusters joined through global
// memory as in 2 (probe_groups N,...: 256-row segments, these against 0
// and 1). Bytes: 5 words per row per system; median of 20 runs (CUDA events)
// against cudaMemcpy device to device in the same run.
//
//   build-gpu/bench/probe_groups
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cooperative_groups.h>

#include "tune_util.cuh"

namespace {

// A block: 32 adjacent systems x 8 chunks of R rows (256 threads), a
// segment of 8 R rows; 6 rows of each array in flight per thread. Shared
// memory: 96 KB + 4 KB whatever R (2 blocks per SM): one segment's 3 words
// a row at R = 32, two at R = 16 (Sync 3's double buffer).
constexpr int kS = 32, kC = 8, kL = 6, kThreads = kS * kC;
constexpr std::size_t kSmem = 3 * std::size_t(kC) * 32 * kS * sizeof(float) + 4096;

struct probe_params {
  float const* a;
  float const* b;
  float const* c;
  float const* d;
  float* x;
  int n;
  long long batch;
  int G;
  long long items;
  unsigned long long spin_ns;
  unsigned* ticket;  // Sync 2: [0] the ticket; Sync 2, 3: [1 + g] group g's arrivals
  float* links;      // Sync 2, 3: a word per (group, segment)
};

// Thread (s, q)'s chunk of item (g, j): its R rows of a, b, c, d in order,
// kL rows in flight, row(i, a, b, c, d) for each.
template <int R, class Row>
__device__ __forceinline__ void walk_rows(probe_params const& p, long long g, int j, Row row) {
  int const t = int(threadIdx.x), s = t % kS, q = t / kS;
  long long const sys = g * kS + s, es = p.batch;
  int const r0 = j * kC * R + q * R;
  float const* pa = p.a + r0 * es + sys;
  float const* pb = p.b + r0 * es + sys;
  float const* pc = p.c + r0 * es + sys;
  float const* pd = p.d + r0 * es + sys;
  float ra[kL], rb[kL], rc[kL], rd[kL];
#pragma unroll
  for (int u = 0; u < kL; ++u) {
    ra[u] = *pa, rb[u] = *pb, rc[u] = *pc, rd[u] = *pd;
    pa += es, pb += es, pc += es, pd += es;
  }
#pragma unroll
  for (int i = 0; i < R; ++i) {
    int const u = i % kL;
    float const a = ra[u], b = rb[u], c = rc[u], d = rd[u];
    if (i + kL < R) {
      ra[u] = *pa, rb[u] = *pb, rc[u] = *pc, rd[u] = *pd;
      pa += es, pb += es, pc += es, pd += es;
    }
    row(i, a, b, c, d);
  }
}

// Item (g, j)'s rows into buf (3 words a row), then the spin.
template <int R>
__device__ __forceinline__ void sweep(probe_params const& p, long long g, int j, float* buf) {
  constexpr int seg = kC * R;
  int const t = int(threadIdx.x), s = t % kS, q = t / kS;
  float v = 0.f;
  walk_rows<R>(p, g, j, [&](int i, float a, float b, float c, float d) {
    float const r = 1.f / (b + 2.f);
    v = (d - a * v) * r;
    int const k = (q * R + i) * kS + s;
    buf[k] = a * r, buf[seg * kS + k] = c * r, buf[2 * seg * kS + k] = v;
  });
  tune_spin_ns(p.spin_ns);
}

// Item (g, j)'s x from buf, peer (a word from another segment) added.
template <int R>
__device__ __forceinline__ void finish(probe_params const& p, long long g, int j, float* buf, float peer) {
  constexpr int seg = kC * R;
  int const t = int(threadIdx.x), s = t % kS, q = t / kS;
  long long const sys = g * kS + s, es = p.batch;
  int const r0 = j * seg + q * R;
  if (t < kS) buf[t] += peer;
  __syncthreads();
  float* px = p.x + (r0 + R - 1) * es + sys;
  float xs = 0.f;
#pragma unroll
  for (int i = R - 1; i >= 0; --i) {
    int const k = (q * R + i) * kS + s;
    xs = buf[2 * seg * kS + k] - buf[k] - buf[seg * kS + k] * xs;
    *px = xs;
    px -= es;
  }
}

// Sync 2, 3: item's link published, its group's counter bumped.
template <int R>
__device__ __forceinline__ void publish(probe_params const& p, long long item, float const* buf) {
  __syncthreads();
  if (threadIdx.x == 0) {
    p.links[item] = buf[2 * kC * R * kS - 1];
    __threadfence();
    atomicAdd(p.ticket + 1 + item / p.G, 1u);
  }
}

// Sync 2, 3: the group's G links published; a peer's read from L2.
__device__ __forceinline__ float await_group(probe_params const& p, long long item) {
  long long const g = item / p.G;
  int const j = int(item % p.G);
  __shared__ float peer_s;
  if (threadIdx.x == 0) {
    while (*(volatile unsigned*)(p.ticket + 1 + g) < unsigned(p.G)) __nanosleep(64);
    __threadfence();
    peer_s = *(volatile float*)(p.links + g * p.G + (j + 1) % p.G);
  }
  __syncthreads();
  return peer_s;
}

// Sync 4: no rows kept on chip. A pass computes the segment's chain (its
// link), the group's join through global memory, then a second pass
// reads the segment again (from L2 if it is still there) and writes x.
// Blocks are held by registers only (4 per SM), so waiting blocks leave
// room for others.
template <int R>
__device__ __forceinline__ float chain_pass(probe_params const& p, long long g, int j, float x0, bool store) {
  int const t = int(threadIdx.x), s = t % kS, q = t / kS;
  long long const es = p.batch;
  float* px = p.x + (j * kC * R + q * R) * es + g * kS + s;
  float v = x0;
  walk_rows<R>(p, g, j, [&](int, float a, float b, float c, float d) {
    float const r = 1.f / (b + 2.f);
    v = (d - a * v - c) * r;
    if (store) {
      *px = v;
      px += es;
    }
  });
  return v;
}

template <int Sync, int R>
__global__ void __launch_bounds__(kThreads, Sync == 4 ? 4 : 2) groups_kernel(__grid_constant__ probe_params const p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // (clusters; the probe runs on sm_90)
  extern __shared__ __align__(16) float sm[];
  __shared__ long long item_s;
  if constexpr (Sync == 4) {
    if (threadIdx.x == 0) item_s = atomicAdd(p.ticket, 1u);
    __syncthreads();
    long long const item = item_s, g = item / p.G;
    int const j = int(item % p.G);
    float const v = chain_pass<R>(p, g, j, 0.f, false);
    tune_spin_ns(p.spin_ns);
    __syncthreads();
    if (threadIdx.x == 0) {
      p.links[item] = v;
      __threadfence();
      atomicAdd(p.ticket + 1 + g, 1u);
    }
    float const peer = await_group(p, item);
    chain_pass<R>(p, g, j, peer, true);
    return;
  }
  if constexpr (Sync == 3) {
    // Persistent, two segments' buffers: item b + k P in round k; after
    // sweeping and publishing round k's item, the block waits for its round
    // k - 1 item's group (published by then unless a peer is slower) and
    // finishes it. Needs every block resident (the probe launches one
    // block per slot on an idle GPU).
    long long const P = gridDim.x;
    long long prev = -1;
    int cur = 0;
    constexpr int words = 3 * kC * R * kS;
    for (long long item = blockIdx.x;; item += P) {
      if (item < p.items) {
        sweep<R>(p, item / p.G, int(item % p.G), sm + cur * words);
        publish<R>(p, item, sm + cur * words);
      }
      if (prev >= 0) {
        float const peer = await_group(p, prev);
        finish<R>(p, prev / p.G, int(prev % p.G), sm + (cur ^ 1) * words, peer);
        __syncthreads();
      }
      if (item >= p.items) break;
      prev = item;
      cur ^= 1;
    }
    return;
  }
  long long item = blockIdx.x;
  if constexpr (Sync == 2) {
    if (threadIdx.x == 0) item_s = atomicAdd(p.ticket, 1u);
    __syncthreads();
    item = item_s;
  }
  if constexpr (Sync >= 5) {
    // A ticket per cluster of K blocks (K = 4 or 8, 2 SMs' or 4 SMs'
    // worth, which pack the GPU), its blocks' items K consecutive ones; a
    // group's G / K clusters join through global memory as Sync 2.
    namespace cg = cooperative_groups;
    cg::cluster_group const cl = cg::this_cluster();
    unsigned const rank = cl.block_rank();
    if (rank == 0 && threadIdx.x == 0) item_s = atomicAdd(p.ticket, 1u);
    cl.sync();
    item = *cl.map_shared_rank(&item_s, 0) * (long long)cl.num_blocks() + rank;
  }
  long long g = item / p.G;
  int j = int(item % p.G);
  if constexpr (Sync == 1) {
    namespace cg = cooperative_groups;
    unsigned cid;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    g = cid;
    j = int(cg::this_cluster().block_rank());
  }
  sweep<R>(p, g, j, sm);
  float peer = 0.f;
  if constexpr (Sync == 1) {
    namespace cg = cooperative_groups;
    cg::cluster_group const cl = cg::this_cluster();
    __syncthreads();
    cl.sync();
    float const v = cl.map_shared_rank(sm, (j + 1) % p.G)[threadIdx.x];
    cl.sync();
    peer = v;
  } else if constexpr (Sync == 2 || Sync >= 5) {
    publish<R>(p, item, sm);
    peer = await_group(p, item);
  }
  __syncthreads();
  finish<R>(p, g, j, sm, peer);
#endif
}

// Sync 7: the cluster's (as 1) with one of the 3 words a row kept in
// registers (a thread's own rows, constant indices), 2 in shared memory:
// 64 KB + 4 KB a block, 3 blocks per SM, so that a cluster of 16 needs
// 5.3 SMs' worth of slots instead of 8.
template <int R>
__global__ void __launch_bounds__(kThreads, 3) cluster3_kernel(__grid_constant__ probe_params const p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  extern __shared__ __align__(16) float sm[];
  constexpr int seg = kC * R;
  cg::cluster_group const cl = cg::this_cluster();
  unsigned cid;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  long long const g = cid;
  int const j = int(cl.block_rank());
  int const t = int(threadIdx.x), s = t % kS, q = t / kS;
  float vr[R];
  float v = 0.f;
  walk_rows<R>(p, g, j, [&](int i, float a, float b, float c, float d) {
    float const r = 1.f / (b + 2.f);
    v = (d - a * v) * r;
    int const k = (q * R + i) * kS + s;
    sm[k] = a * r, sm[seg * kS + k] = c * r, vr[i] = v;
  });
  tune_spin_ns(p.spin_ns);
  __syncthreads();
  cl.sync();
  float const peer = cl.map_shared_rank(sm, (j + 1) % p.G)[threadIdx.x];
  cl.sync();
  if (t < kS) sm[t] += peer;
  __syncthreads();
  long long const es = p.batch;
  float* px = p.x + (j * seg + q * R + R - 1) * es + g * kS + s;
  float xs = 0.f;
#pragma unroll
  for (int i = R - 1; i >= 0; --i) {
    int const k = (q * R + i) * kS + s;
    xs = vr[i] - sm[k] - sm[seg * kS + k] * xs;
    *px = xs;
    px -= es;
  }
#endif
}

template <int Sync, int R>
void run(float* const* p, unsigned* ticket, float* links, int n, long long batch, unsigned long long spin_ns,
         double copy_gbs) {
  int const G = n / (kC * R);
  long long const groups = batch / kS, items = groups * G;
  if (Sync == 1 && G > 16) return;
  unsigned const K = Sync == 1 || Sync == 7 ? unsigned(G) : Sync == 5 ? 4u : 8u;  // cluster size
  if (Sync == 7 && G > 16) return;
  if ((Sync == 5 || Sync == 6) && (G % K != 0 || K >= unsigned(G))) return;
  auto kernel = Sync == 7 ? cluster3_kernel<R> : groups_kernel<Sync < 7 ? Sync : 0, R>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
  if (Sync == 1 || Sync >= 5) CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int per_sm = 0;
  std::size_t const smem = Sync == 4 ? 64 : Sync == 7 ? 2 * std::size_t(kC) * R * kS * sizeof(float) + 4096 : kSmem;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
  probe_params const pp{p[0], p[1], p[2], p[3], p[4], n, batch, G, items, spin_ns, ticket, links};
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(Sync == 3 ? std::min<long long>(items, (long long)per_sm * sms) : items));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = K;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
  attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
  cfg.attrs = attr;
  cfg.numAttrs = Sync == 1 || Sync >= 5 ? 2 : 0;
  int resident = per_sm;
  if (Sync == 1 || Sync >= 5) CK(cudaOccupancyMaxActiveClusters(&resident, kernel, &cfg));
  auto launch = [&] {
    if (Sync >= 2) CK(cudaMemsetAsync(ticket, 0, (1 + groups) * sizeof(unsigned)));
    CK(cudaLaunchKernelEx(&cfg, kernel, pp));
  };
  float const ms = median_ms(launch, 20);
  CK(cudaGetLastError());
  double const gbs = 5.0 * 4 * double(n) * double(batch) / (ms * 1e6);
  char const* name[] = {"none      ", "cluster   ", "global    ", "persistent", "reread    ", "4s+global ",
                        "8s+global ", "cluster 3/SM"};
  std::printf("n %5d  seg %3d  G %2d  sync %s  spin %5llu ns  %s %4d  %7.3f ms  %7.1f GB/s  %5.1f%% of copy\n", n,
              kC * R, G, name[Sync], spin_ns, Sync == 1 || Sync >= 5 ? "clusters resident" : "blocks per SM    ", resident, ms,
              gbs, 100 * gbs / copy_gbs);
}

}  // namespace

// probe_groups: the table of doc/performance.md (n = 1024 and 4096, every
// sync). probe_groups N,N,...: 256-row segments of those n (G = n / 256),
// no sync against the cluster's, spin 0 and 2 us.
int main(int argc, char** argv) {
  long long const total = 1ll << 25;
  float* p[5];
  for (auto& q : p) {
    CK(cudaMalloc(&q, total * 4));
    CK(cudaMemset(q, 0, total * 4));
  }
  unsigned* ticket;
  float* links;
  CK(cudaMalloc(&ticket, (1 + total / kS) * sizeof(unsigned)));
  CK(cudaMalloc(&links, total / kS * sizeof(float)));
  double const copy_gbs = tune_copy_ceiling_gbs();
  if (argc > 1) {
    for (unsigned long long spin_ns : {0ull, 2000ull})
      for (char const* at = argv[1]; *at;) {
        int const n = std::atoi(at);
        long long const batch = total / n / kS * kS;
        if (n >= 256 && n % 256 == 0 && n <= 4096) {
          run<0, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
          run<1, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
          run<5, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
          run<6, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
          run<7, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
        }
        char const* comma = std::strchr(at, ',');
        if (!comma) break;
        at = comma + 1;
      }
    return 0;
  }
  for (unsigned long long spin_ns : {0ull, 1000ull, 2000ull}) {
    for (int n : {1024, 4096}) {
      long long const batch = total / n;
      run<0, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<1, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<2, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<0, 16>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<3, 16>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<4, 16>(p, ticket, links, n, batch, spin_ns, copy_gbs);
      run<4, 32>(p, ticket, links, n, batch, spin_ns, copy_gbs);
    }
  }
  return 0;
}
