#pragma once
// What lib/linrec.cpp (validation, normalisation of linrec and linrec_adjoint)
// call after the checks pass. Each backend receives a checked, forward-only
// problem with count > 0, and n > 0 on the CPU (the GPU's handles n == 0).

#include <recur/detail/linrec_problem.hpp>
#include <recur/executor.hpp>
#include <recur/ops/affine.hpp>
#include <recur/storage.hpp>
#include <recur/types.hpp>

#include <vector>

namespace recur::detail {

// The chunk maps of a host summary (the P-scheme's pre-computation over
// each sequence, `chunks` maps a sequence; 1: none, the sequences ran
// whole), kept for the run of the same steps that follows it (a split
// call's finish), which then reads each long sequence once more, not twice.
template <class V>
struct linrec_chunk_maps {
  int chunks = 1;
  std::vector<ops::affine<V>> maps;
};

// lib/cpu/linrec_cpu.cpp: threads is host.threads (0: OpenMP's maximum);
// `kept`, where given, the chunk maps of linrec_summary_cpu on the same
// problem and threads.
template <class T>
void linrec_cpu(linrec_problem<T> const& p, int threads,
                linrec_chunk_maps<compute_t<T>> const* kept = nullptr);

// Defined in lib/cuda/ (or as a not_compiled stub when CUDA is off).
template <class T>
void linrec_cuda(linrec_problem<T> const& p, CUstream_st* stream, linrec_variant variant);

// The summary of each sequence (its steps composed, compute_t<T>), into
// out[k] on the host; n > 0. The CUDA backend also copies each sequence's
// initial state (p.init's values, or p.init_value) to init[k] on the host
// where init is not null, and synchronises the stream.
template <class T>
void linrec_summary_cpu(linrec_problem<T> const& p, ops::affine<compute_t<T>>* out, int threads,
                        linrec_chunk_maps<compute_t<T>>* keep = nullptr);
template <class T>
void linrec_summary_cuda(linrec_problem<T> const& p, CUstream_st* stream, ops::affine<compute_t<T>>* out,
                         T* init);

// The summary into a[k] and b[k] (device memory, T), enqueued; n > 0.
template <class T>
void linrec_summary_cuda_store(linrec_problem<T> const& p, CUstream_st* stream, T* a, T* b);

// The NCCL path of a linrec split across ranks (lib/dist/linrec_dist.cpp),
// all on the stream, nothing waited for: the summary's maps of this rank
// (compute_t<T>, in device memory; the entering rank's folded with p.init,
// or p.init_value, into constant maps), exchange.run(ctx, mine, all, bytes,
// stream) enqueuing their all-gather (all: size x count maps, rank r's at
// r count), each sequence's incoming and final state folded on the device
// in the call's rank order, then the recurrence from the incoming states,
// the final state written to p.final_state (device memory, where given).
// exchange.run throws where it cannot enqueue.
struct split_ranks {
  int rank = 0, size = 1;
  bool reverse = false;  // the recurrence enters at the last rank
};
struct linrec_exchange {
  void* ctx;
  void (*run)(void* ctx, void const* mine, void* all, std::size_t bytes, CUstream_st* stream);
};
template <class T>
void linrec_cuda_exchanged(linrec_problem<T> p, CUstream_st* stream, linrec_variant variant,
                           split_ranks const& ranks, linrec_exchange const& exchange);

// linrec_cuda from initial states held on the host (p.init is ignored): each
// sequence's in[k], and final[k] written to p.final_state where both are
// given. Returns once the host arrays may be reused, without waiting for
// the work.
template <class T>
void linrec_cuda_from_host(linrec_problem<T> p, CUstream_st* stream, linrec_variant variant, T const* in,
                           T const* final);

// The same for linrec_adjoint: the problem in the order the adjoint runs.
template <class T>
void linrec_adjoint_cpu(linrec_adjoint_problem<T> const& p, int threads);
template <class T>
void linrec_adjoint_cuda(linrec_adjoint_problem<T> const& p, CUstream_st* stream, linrec_variant variant);

}  // namespace recur::detail
