#pragma once
// What a linrec split along its length across processes (lib/dist/) runs on
// each rank, in two halves around the exchange of the ranks' summaries.
// Defined in lib/linrec.cpp for host and cuda and T = float, double,
// bfloat16 and float16.
//
// linrec_split_summary makes every check recur::linrec makes (throwing as it
// does, before anything is written), then writes each sequence's summary,
// the steps of this rank's slice composed in the call's direction (its last
// state is a * incoming + b; the identity where n == 0), to out[k], and,
// where init is not null, the call's initial state of each sequence
// (opt.init's values or opt.init_value) to init[k]. Both on the host; with
// recur::cuda the call synchronises the stream.
//
// linrec_split_finish runs the slice from the incoming states in[k] (host;
// opt.init is not read) and writes final[k] (host) to opt.final_state where
// both are given (the slice's own last state is not written). With
// recur::cuda it returns once in and final may be reused, without waiting
// for the work.
//
// kept (host; ignored with recur::cuda, may be null): the summary stores
// the chunk maps of the sequences it cut into chunks over the threads, and
// the finish on the same slice and threads runs from them, so that such a
// slice is read twice in all (the one-device call's P-scheme reads it
// twice too), not three times.

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/ops/affine.hpp>
#include <recur/storage.hpp>
#include <recur/types.hpp>
#include "linrec_backends.hpp"

namespace recur::detail {

template <class Executor, linrec_value T>
void linrec_split_summary(Executor const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                          linrec_options<T> const& opt, ops::affine<compute_t<T>>* out, T* init,
                          linrec_chunk_maps<compute_t<T>>* kept = nullptr);

template <class Executor, linrec_value T>
void linrec_split_finish(Executor const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                         linrec_options<T> const& opt, T const* in, T const* final,
                         linrec_chunk_maps<compute_t<T>> const* kept = nullptr);

// The NCCL path (recur::cuda): linrec_split_check makes
// linrec_split_summary's checks alone (nothing enqueued, nothing waited
// for); linrec_split_exchanged then runs linrec_cuda_exchanged
// (linrec_backends.hpp) on the same arguments.
template <linrec_value T>
void linrec_split_check(cuda const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                        linrec_options<T> const& opt);
template <linrec_value T>
void linrec_split_exchanged(cuda const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                            linrec_options<T> const& opt, split_ranks const& ranks,
                            linrec_exchange const& exchange);

}  // namespace recur::detail
