#pragma once
// The single-pass P-scheme for linear time-invariant recurrences on a
// K-value state: s_i = A s_(i-1) + B x_i, y_i = C s_(i-1) + D x_i with A, B,
// C, D constant, written as a `System`'s per-sample step (any step linear in
// the state and the sample: DF2T IIR filters, second-order-section cascades,
// order-k recurrences, DPCM predictors; kernels/dispatch/dispatch_lti.cuh
// lists them).
//
// A System provides
//   static constexpr int K;                          // state values
//   template <class U> RECUR_HD U step(U (&s)[K], U x) const;
// returning y_i and updating s in place; its coefficients are stored in T
// and converted to U, so the host can run the same step in double to build
// A (one column per unit state).
//
// Tiles never cross a sequence: tile t of a batch is tile t % tiles_per_seq
// of sequence t / tiles_per_seq. Per tile, on chip:
//   load:            coalesced (striped) into shared memory, so each thread
//                    then owns a contiguous run of Items samples;
//   pre-computation: each thread runs its samples from a zero state (its run's
//                    aggregate v: the state it leaves); a warp scan combines
//                    runs as (l, r) -> A^(Items d) l + r with the powers
//                    A^(Items 2^s) from the parameters (constant bank), and the
//                    warps' totals fold into the tile's aggregate;
//   propagation:     decoupled look-back over K-vectors (lookback.cuh): a
//                    tile publishes its aggregate v (the state it leaves from
//                    a zero start; every full tile's map is s -> A^T s + v),
//                    then its outgoing state, and folds its predecessors'
//                    forward in value space, s <- A^T s + v, the operations a
//                    tile uses to publish its own. When A^T is zero in T (a
//                    filter that forgets within a tile, any FIR stencil),
//                    every walk stops at the first predecessor;
//   determination:   warp 0 gives each warp its incoming state (A^(Items 32 u)
//                    times the tile's plus the scan of the warps before, one
//                    lane per warp); each thread's is A^(Items lane) times its
//                    warp's plus its exclusive prefix, and the thread re-runs
//                    its samples from it, writing outputs in place in shared
//                    memory, stored striped.
// Memory is read once and written once; results are bitwise reproducible run
// to run (every combination is in a fixed order, and the look-back is in
// value space).

#include <cstdint>
#include <type_traits>
#include <utility>

#include <recur/layout/layout.hpp>
#include "../thread/lti_systems.cuh"
#include "../thread/thread_ops.cuh"
#include "lookback.cuh"

namespace recur::kernels {

template <class T, int K>
struct lti_vec {
  T v[K];
};

// Kernel parameters: the problem, the powers A^(Items 2^s) of the state
// matrix for s = 0 .. log2(Block) (the last one is the tile's map), and for
// the output-correcting determination the responses resp[j] = C A^j (output
// j of a run from a unit state with zero samples), j < Rows.
template <class T, class System, int Levels, int Rows = 1>
struct lti_params {
  static constexpr int K = System::K;
  System sys;
  T const* x;
  T* y;
  layout lay;
  T const* zi;  // sequence k's initial state at zi + k * state_stride, or null (zero)
  T* zf;        // sequence k's final state at zf + k * state_stride, or null
  std::int64_t state_stride;
  std::int64_t tiles_per_seq;
  int forget;  // A^tile is zero in T: tiles' maps are constant
  T pow[Levels][K][K];
  T resp[Rows][K];
};

// Step: the element stride when it is 1, or -1 (a reverse view: the host
// API mirrors reverse calls), with offsets within a tile known at compile
// time; 0: any element stride, read through 64-bit offsets. Chosen at
// launch.
// Correct: the determination adds each output's response to the thread's
// incoming state, y_j = y0_j + C A^j s_in (K independent FMAs per sample),
// to the outputs y0 of the pre-computation's zero-state run, instead of
// running the System's step chain a second time.
template <class T, class System, int Block, int Items, int Depth, int MinBlocks, int Step = 1,
          bool Correct = false>
struct agent_lti {
  static_assert(Step == 1 || Step == -1 || Step == 0);
  static constexpr int K = System::K;
  static constexpr int block_threads = Block, min_blocks = MinBlocks;
  static constexpr int tile_items = Block * Items, warps = Block / 32;
  static_assert(Block >= 64 && (Block & (Block - 1)) == 0 && (Items & (Items - 1)) == 0);
  static constexpr int log_block = lti_log2(Block), log_warp = 5, log_warps = log_block - log_warp,
                       levels = log_block + 1;
  using params = lti_params<T, System, levels, Correct ? Items : 1>;
  using vec = lti_vec<T, K>;
  // Records of 16-byte words, each a tag and 16 / sizeof(T) - 1 whole values.
  using status = tile_status<tagged_record<vec, 16, sizeof(T)>>;

  static constexpr int padded(int k) { return k + k / 32; }
  // Item i of a thread's run, from the run's start: padded(t Items + i) -
  // padded(t Items) for every t (Items a power of two: t Items is a
  // multiple of 32, or t Items % 32 + i < 32).
  __host__ __device__ static constexpr int at(int i) { return i + i / 32; }

  struct temp_storage {
    T x[padded(tile_items)];  // samples, then outputs
    vec warp_total[warps];
    vec warp_in[warps];
    vec zf0;  // Correct: the zero-state run's state after the sequence's last sample
    typename status::template walk_storage<Depth> walk;
    std::int64_t tile;
    vec carry;  // run_rows: the state the block's previous tile left
  };

  static std::int64_t tiles_per_seq(std::int64_t n) { return (n + tile_items - 1) / tile_items; }

  // v <- m v + w, rows in order, each an fma chain from w.
  __device__ __forceinline__ static void mat_mul_add(T const (&m)[K][K], vec& v, vec const& w) {
    vec r;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      T acc = w.v[i];
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (lti_nonzero<System>(i, j)) acc = fma(m[i][j], v.v[j], acc);
      r.v[i] = acc;
    }
    v = r;
  }
  // v <- pow[L] v + w.
  template <int L>
  __device__ __forceinline__ static void mul_add(params const& p, vec& v, vec const& w) {
    mat_mul_add(p.pow[L], v, w);
  }
  template <int L>
  __device__ __forceinline__ static void mul(params const& p, vec& v) {
    vec r;
#pragma unroll
    for (int i = 0; i < K; ++i) {
      T acc = T(0);
      bool first = true;
#pragma unroll
      for (int j = 0; j < K; ++j)
        if (lti_nonzero<System>(i, j)) {
          acc = first ? p.pow[L][i][j] * v.v[j] : fma(p.pow[L][i][j], v.v[j], acc);
          first = false;
        }
      r.v[i] = acc;
    }
    v = r;
  }
  // Kogge-Stone over lanes: v <- sum over the 2^Steps lanes up to this one,
  // lane l's value moved across the lanes after it by pow[Base + s] per
  // step s (pow[Base] spans one lane's worth of samples).
  template <int Base, int Steps>
  __device__ __forceinline__ static void scan_lanes(params const& p, vec& v, unsigned lane) {
    [&]<int... S>(std::integer_sequence<int, S...>) {
      (
          [&] {
            constexpr unsigned d = 1u << S;
            vec o;
#pragma unroll
            for (int e = 0; e < K; ++e) o.v[e] = shfl_up(v.v[e], d);
            if (lane >= d) {
              mul_add<Base + S>(p, o, v);
              v = o;
            }
          }(),
          ...);
    }
    (std::make_integer_sequence<int, Steps>{});
  }
  // v <- pow[Base]^q v for q < 2^Bits: one product per set bit.
  template <int Base, int Bits>
  __device__ __forceinline__ static void power(params const& p, vec& v, unsigned q) {
    [&]<int... S>(std::integer_sequence<int, S...>) { ((q & (1u << S) ? mul<Base + S>(p, v) : void()), ...); }
    (std::make_integer_sequence<int, Bits>{});
  }
  // A tile's outgoing state from its incoming one.
  __device__ __forceinline__ static vec apply_tile(params const& p, vec s, vec const& agg) {
    if (p.forget) return agg;
    mul_add<log_block>(p, s, agg);
    return s;
  }
  // The look-back's fold: the aggregates applied oldest first. A tile that
  // forgets ends every walk.
  struct fold {
    using result = vec;
    static constexpr bool shuffle_base = true;
    params const& p;
    __device__ __forceinline__ bool ends(vec const&) const { return p.forget != 0; }
    template <class Stack>
    __device__ __forceinline__ vec operator()(vec const& base, Stack const& stack, int depth) const {
      return fold_stack<1, true>(base, stack, depth,
                                 [&](vec const& s, vec const& agg) { return apply_tile(p, s, agg); });
    }
  };

  // Tile `local` of sequence `seq`, every thread of the block calling.
  // Warp 0's lanes call incoming(agg, lane) once the tile's aggregate agg
  // (its outgoing state from a zero start) is known, for the tile's
  // incoming state (every lane's).
  template <class Incoming>
  __device__ static void tile(temp_storage& ts, params const& p, std::int64_t seq, std::int64_t local,
                              Incoming const& incoming) {
    unsigned const tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    std::int64_t const n = p.lay.n;
    std::int64_t const i0 = local * tile_items;
    int const valid = static_cast<int>(n - i0 < tile_items ? n - i0 : tile_items);
    // The element stride; a constant for Step 1 and -1, so that the striped
    // offsets j * Block * es are constants too.
    auto const es = [&] {
      if constexpr (Step == 0)
        return p.lay.element_stride;
      else
        return std::integral_constant<int, Step>{};
    }();

    // Load, striped and coalesced, every load in flight before the first use.
    {
      T v[Items];
      T const* x = p.x + seq * p.lay.batch_stride + (i0 + tid) * es;
      if (valid == tile_items) {
#pragma unroll
        for (int j = 0; j < Items; ++j) v[j] = x[j * Block * es];
      } else {
#pragma unroll
        for (int j = 0; j < Items; ++j) v[j] = j * Block + int(tid) < valid ? x[j * Block * es] : T(0);
      }
#pragma unroll
      for (int j = 0; j < Items; ++j) ts.x[j * padded(Block) + padded(int(tid))] = v[j];
    }
    __syncthreads();

    // The thread's run: item i at run[at(i)], offsets known at compile time
    // in the unrolled loops.
    T* const run = ts.x + padded(int(tid) * Items);

    // The item after which this thread writes zf (the sequence's last
    // sample), or -1. That thread (one per sequence) steps the samples up to
    // it in a loop of its own, so the unrolled loops carry no test per item.
    std::int64_t const last_j = n - 1 - i0 - std::int64_t(tid) * Items;
    int const zf_j = p.zf && last_j >= 0 && last_j < Items ? int(last_j) : -1;
    if constexpr (Correct) {
      if (zf_j >= 0) {  // the zero-state run's state after item zf_j
        vec z{};
#pragma unroll 1  // one thread per sequence: kept small
        for (int i = 0; i <= zf_j; ++i) (void)p.sys.step(z.v, run[at(i)]);
        ts.zf0 = z;
      }
    }

    // Pre-computation: the run's state from zero (its aggregate), then the
    // warp scan.
    vec inc{};
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      int const k = at(j);
      T const y0 = p.sys.step(inc.v, run[k]);
      if constexpr (Correct) run[k] = y0;
    }
    scan_lanes<0, log_warp>(p, inc, lane);
    vec excl;
#pragma unroll
    for (int e = 0; e < K; ++e) {
      excl.v[e] = shfl_up(inc.v[e], 1);
      if (lane == 0) excl.v[e] = T(0);
    }
    if (lane == 31) ts.warp_total[warp] = inc;
    __syncthreads();

    // Propagation, in warp 0: the warps' totals scanned (lane u < warps: the
    // state warps 0..u leave from a zero start), the tile's aggregate, its
    // incoming state, then each warp's incoming state.
    if (warp == 0) {
      vec t{};
      if (lane < warps) t = ts.warp_total[lane];
      scan_lanes<log_warp, log_warps>(p, t, lane);
      vec agg, before;
#pragma unroll
      for (int e = 0; e < K; ++e) {
        agg.v[e] = shfl_idx(t.v[e], warps - 1);
        before.v[e] = shfl_up(t.v[e], 1);
        if (lane == 0) before.v[e] = T(0);
      }
      vec s_in = incoming(agg, lane);
      if (lane < warps) {
        power<log_warp, log_warps>(p, s_in, lane);  // A^(Items 32 u) s_in + before
#pragma unroll
        for (int e = 0; e < K; ++e) s_in.v[e] += before.v[e];
        ts.warp_in[lane] = s_in;
      }
    }
    __syncthreads();

    // Determination: the thread's incoming state, then the run again.
    vec s = ts.warp_in[warp];
    power<0, log_warp>(p, s, lane);
#pragma unroll
    for (int e = 0; e < K; ++e) s.v[e] += excl.v[e];
    if constexpr (Correct) {
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = at(j);
        T acc = run[k];
#pragma unroll
        for (int e = 0; e < K; ++e) acc = fma(p.resp[j][e], s.v[e], acc);
        run[k] = acc;
      }
      if (zf_j >= 0) {  // the state after item zf_j: A^(j + 1) s_in + the zero-state run's
        vec z = s;
#pragma unroll 1  // one thread per sequence: kept small
        for (int j = 0; j <= zf_j; ++j) (void)p.sys.step(z.v, T(0));
#pragma unroll
        for (int e = 0; e < K; ++e) p.zf[seq * p.state_stride + e] = z.v[e] + ts.zf0.v[e];
      }
    } else {
      if (zf_j >= 0) {  // the state after item zf_j, from the incoming one
        vec z = s;
#pragma unroll 1  // one thread per sequence: kept small
        for (int i = 0; i <= zf_j; ++i) (void)p.sys.step(z.v, run[at(i)]);
#pragma unroll
        for (int e = 0; e < K; ++e) p.zf[seq * p.state_stride + e] = z.v[e];
      }
#pragma unroll
      for (int j = 0; j < Items; ++j) {
        int const k = at(j);
        run[k] = p.sys.step(s.v, run[k]);
      }
    }
    __syncthreads();
    T* const y = p.y + seq * p.lay.batch_stride + (i0 + tid) * es;
    if (valid == tile_items) {
#pragma unroll
      for (int j = 0; j < Items; ++j) y[j * Block * es] = ts.x[j * padded(Block) + padded(int(tid))];
    } else {
#pragma unroll
      for (int j = 0; j < Items; ++j)
        if (j * Block + int(tid) < valid) y[j * Block * es] = ts.x[j * padded(Block) + padded(int(tid))];
    }
  }

  // Sequence k's initial state (zero without zi).
  __device__ __forceinline__ static vec initial(params const& p, std::int64_t seq) {
    vec s{};
    if (p.zi)
#pragma unroll
      for (int e = 0; e < K; ++e) s.v[e] = p.zi[seq * p.state_stride + e];
    return s;
  }

  // One tile per block, in the order tiles start; a tile's incoming state
  // by the look-back over its sequence's earlier tiles.
  __device__ static void run(temp_storage& ts, params const& p, status const& st) {
    if (threadIdx.x == 0) ts.tile = st.next_tile();
    __syncthreads();
    std::int64_t const t = ts.tile;
    std::int64_t const seq = t / p.tiles_per_seq, local = t - seq * p.tiles_per_seq;
    tile(ts, p, seq, local, [&](vec const& agg, unsigned lane) {
      bool const last = local == p.tiles_per_seq - 1;
      vec s_in{};
      if (local > 0) {
        if (lane == 0 && !last) st.publish(t, lookback_aggregate, agg);
        s_in = st.template lookback<Depth, 1>(t, t - local, ts.walk, lane, fold{p});
        // zf may be zi: the sequence's last tile writes zf only after its
        // first tile has read zi (and published its inclusive state). A walk
        // that ends at an inclusive state already implies that; one that
        // ends at a forgetting predecessor's aggregate does not.
        if (lane == 0 && last && p.zf && p.zi && p.forget) st.wait_inclusive(t - local);
#pragma unroll
        for (int e = 0; e < K; ++e) s_in.v[e] = shfl_idx(s_in.v[e], 0);
      } else {
        s_in = initial(p, seq);
      }
      if (lane == 0 && !last) st.publish(t, lookback_inclusive, apply_tile(p, s_in, agg));
      return s_in;
    });
  }

  // Whole sequences, one block each at a time (blockIdx.x, then gridDim.x
  // on), tile after tile from the first: a tile's incoming state is the one
  // the block's previous tile left, carried in shared memory; no look-back,
  // no temporary storage. Reads zi before its sequence's zf is written, so
  // they may be one array.
  __device__ static void run_rows(temp_storage& ts, params const& p) {
    for (std::int64_t seq = blockIdx.x; seq < p.lay.count; seq += gridDim.x)
      for (std::int64_t local = 0; local < p.tiles_per_seq; ++local) {
        __syncthreads();  // the previous tile's stores have read the shared samples
        tile(ts, p, seq, local, [&](vec const& agg, unsigned lane) {
          vec const s_in = local > 0 ? ts.carry : initial(p, seq);
          __syncwarp();
          if (lane == 0) ts.carry = apply_tile(p, s_in, agg);
          return s_in;
        });
      }
  }
};

template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    lti_tiles_kernel(__grid_constant__ typename Agent::params const p, typename Agent::status st) {
  __shared__ typename Agent::temp_storage ts;
  Agent::run(ts, p, st);
}

// Whole sequences per block (agent_lti::run_rows): batches wide enough to
// fill the device without splitting a sequence.
template <class Agent>
__global__ void __launch_bounds__(Agent::block_threads, Agent::min_blocks)
    lti_rows_kernel(__grid_constant__ typename Agent::params const p) {
  __shared__ typename Agent::temp_storage ts;
  Agent::run_rows(ts, p);
}

// One thread per sequence, sequentially (many short sequences, or many
// interleaved ones, where a warp's loads are then coalesced).
template <class T, class System>
struct lti_lanes_params {
  static constexpr int K = System::K;
  System sys;
  T const* x;
  T* y;
  layout lay;
  T const* zi;
  T* zf;
  std::int64_t state_stride;
};

template <class T, class System>
__global__ void __launch_bounds__(128)
    lti_lanes_kernel(__grid_constant__ lti_lanes_params<T, System> const p) {
  constexpr int K = System::K;
  std::int64_t const seq = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (seq >= p.lay.count) return;
  T s[K];
#pragma unroll
  for (int e = 0; e < K; ++e) s[e] = p.zi ? p.zi[seq * p.state_stride + e] : T(0);
  T const* x = p.x + seq * p.lay.batch_stride;
  T* y = p.y + seq * p.lay.batch_stride;
  std::int64_t const es = p.lay.element_stride;
  for (std::int64_t i = 0; i < p.lay.n; ++i) y[i * es] = p.sys.step(s, x[i * es]);
  if (p.zf)
#pragma unroll
    for (int e = 0; e < K; ++e) p.zf[seq * p.state_stride + e] = s[e];
}

}  // namespace recur::kernels
