#pragma once
// What the linrec and linrec_adjoint CUDA suites share: the variants'
// names, downloads of device buffers, the rows agent's reach on this device,
// and the sweep of batch shapes in both directions with options rotated.
#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include <cuda_runtime_api.h>
#include <recur/kernels/tuning/tuning_linrec.cuh>
#include <recur/linrec.hpp>

#include "cuda_memory.hpp"
#include "layouts.hpp"
#include "linrec_harness.hpp"
#include "random.hpp"

namespace recur_test {

inline char const* name(recur::linrec_variant v) {
  switch (v) {
    case recur::linrec_variant::automatic:
      return "automatic";
    case recur::linrec_variant::single_pass:
      return "single_pass";
    case recur::linrec_variant::three_kernel:
      return "three_kernel";
    case recur::linrec_variant::pipelined:
      return "pipelined";
  }
  return "?";
}

// d's values as a buffer (not zeroed first).
template <class T>
buffer<T> download(dbuf<T> const& d, std::size_t elements) {
  buffer<T> b(elements);  // not zeroed
  if (elements > (std::size_t{1} << 24)) {
    // Touch the pages on every core first: a copy into fresh pageable memory
    // otherwise spends most of its time in page faults.
    std::int64_t const pieces = 256;
    parallel_for(pieces, worker_count(static_cast<std::int64_t>(elements)), [&](std::int64_t piece, int) {
      std::fill(b.begin() + static_cast<std::ptrdiff_t>(elements * piece / pieces),
                b.begin() + static_cast<std::ptrdiff_t>(elements * (piece + 1) / pieces), T(0));
    });
  }
  if (elements)
    cuda_ok(cudaMemcpy(b.data(), d.p, elements * sizeof(T), cudaMemcpyDefault), "cudaMemcpy (download)");
  return b;
}

// The device's SM count (the rows agent's threshold is a multiple of it).
inline int sm_count() {
  int dev = 0, sms = 0;
  cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  return sms;
}

// Sequences and length from which `automatic` runs the rows agent on this
// device for both value types (Policy: linrec's, or the adjoint's).
struct rows_reach {
  std::int64_t count, n;
};
template <template <class> class Policy = recur::kernels::linrec_policy>
rows_reach rows_reach_both() {
  using namespace recur::kernels;
  int const sms = sm_count();
  return {std::max(linrec_rows_min_count<float, Policy<float>>(sms),
                   linrec_rows_min_count<double, Policy<double>>(sms)),
          std::max(linrec_rows_min_n<float, Policy<float>>(), linrec_rows_min_n<double, Policy<double>>())};
}

struct batch_shape {
  layout_kind kind;
  std::int64_t count, n;
};

// run(spec) on each shape in both directions, options rotated (Spec: spec or
// adjoint_spec, each with its rotated()).
template <class Spec, class Run>
void sweep_shapes(std::initializer_list<batch_shape> shapes, std::uint64_t salt, Run&& run) {
  int idx = 0;
  for (auto const& sh : shapes)
    for (recur::direction const dir : {recur::direction::forward, recur::direction::reverse}) {
      Spec sp;
      sp.lay = make_layout(sh.kind, sh.n, sh.count);
      sp.dir = dir;
      sp.seed = seed_for(salt, idx);
      sp = rotated(sp, idx++);
      run(sp);
    }
}

}  // namespace recur_test
