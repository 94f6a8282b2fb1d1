// Built instead of lib/cuda/ when RECUR_ENABLE_CUDA is OFF: the CUDA executor
// exists in the API but throws not_compiled. The entry points call
// require_cuda first (lib/detail/cuda_support.hpp), so these stubs only
// satisfy the linker.
#include <string>

#include "chain_backends.hpp"
#include "detail/cuda_support.hpp"
#include "filter_backends.hpp"
#include "linrec_backends.hpp"
#include "split_memory.hpp"
#include "tridiag_backends.hpp"

namespace recur {

bool cuda_compiled() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
std::string cuda_device_description() { return "CUDA support not compiled into this build of recur"; }

namespace detail {

[[noreturn]] static void no_cuda() {
  throw not_compiled("recur: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
}
void check_device_pointer(char const*, void const*, char const*) { no_cuda(); }
void check_host_pointer(char const*, void const*, char const*) { no_cuda(); }

template <class T>
void linrec_cuda(linrec_problem<T> const&, CUstream_st*, linrec_variant) {
  no_cuda();
}
template void linrec_cuda<float>(linrec_problem<float> const&, CUstream_st*, linrec_variant);
template void linrec_cuda<double>(linrec_problem<double> const&, CUstream_st*, linrec_variant);
template void linrec_cuda<bfloat16>(linrec_problem<bfloat16> const&, CUstream_st*, linrec_variant);
template void linrec_cuda<float16>(linrec_problem<float16> const&, CUstream_st*, linrec_variant);

template <class T>
void linrec_summary_cuda(linrec_problem<T> const&, CUstream_st*, ops::affine<compute_t<T>>*, T*) {
  no_cuda();
}
template <class T>
void linrec_cuda_from_host(linrec_problem<T>, CUstream_st*, linrec_variant, T const*, T const*) {
  no_cuda();
}
template <class T>
void linrec_summary_cuda_store(linrec_problem<T> const&, CUstream_st*, T*, T*) {
  no_cuda();
}
template <class T>
void linrec_cuda_exchanged(linrec_problem<T>, CUstream_st*, linrec_variant, split_ranks const&,
                           linrec_exchange const&) {
  no_cuda();
}
#define RECUR_LINREC_SPLIT(T)                                                                              \
  template void linrec_cuda_exchanged<T>(linrec_problem<T>, CUstream_st*, linrec_variant,                  \
                                         split_ranks const&, linrec_exchange const&);                      \
  template void linrec_summary_cuda<T>(linrec_problem<T> const&, CUstream_st*, ops::affine<compute_t<T>>*, \
                                       T*);                                                                \
  template void linrec_cuda_from_host<T>(linrec_problem<T>, CUstream_st*, linrec_variant, T const*,        \
                                         T const*);                                                        \
  template void linrec_summary_cuda_store<T>(linrec_problem<T> const&, CUstream_st*, T*, T*);
RECUR_LINREC_SPLIT(float)
RECUR_LINREC_SPLIT(double)
RECUR_LINREC_SPLIT(bfloat16)
RECUR_LINREC_SPLIT(float16)
#undef RECUR_LINREC_SPLIT

std::shared_ptr<void> split_alloc(cuda const&, std::size_t) { no_cuda(); }
template <class T>
void split_gather(cuda const&, split_column<T> const*, std::size_t, std::int64_t, std::int64_t) {
  no_cuda();
}
template <class T>
void split_scatter(cuda const&, split_column<T> const*, std::size_t, std::int64_t, std::int64_t) {
  no_cuda();
}
template <class T>
void split_unit_columns(cuda const&, T*, layout const&, std::int64_t) {
  no_cuda();
}
template <class T>
void split_combine(cuda const&, split_combine_args<T> const&) {
  no_cuda();
}
#define RECUR_SPLIT_MOVES(T)                                                                     \
  template void split_gather<T>(cuda const&, split_column<T> const*, std::size_t, std::int64_t,  \
                                std::int64_t);                                                   \
  template void split_scatter<T>(cuda const&, split_column<T> const*, std::size_t, std::int64_t, \
                                 std::int64_t);
RECUR_SPLIT_MOVES(float)
RECUR_SPLIT_MOVES(double)
RECUR_SPLIT_MOVES(std::int32_t)
RECUR_SPLIT_MOVES(std::int16_t)
RECUR_SPLIT_MOVES(std::uint8_t)
#undef RECUR_SPLIT_MOVES
template void split_unit_columns<float>(cuda const&, float*, layout const&, std::int64_t);
template void split_unit_columns<double>(cuda const&, double*, layout const&, std::int64_t);
template void split_combine<float>(cuda const&, split_combine_args<float> const&);
template void split_combine<double>(cuda const&, split_combine_args<double> const&);

template <class T>
void linrec_adjoint_cuda(linrec_adjoint_problem<T> const&, CUstream_st*, linrec_variant) {
  no_cuda();
}
template void linrec_adjoint_cuda<float>(linrec_adjoint_problem<float> const&, CUstream_st*, linrec_variant);
template void linrec_adjoint_cuda<double>(linrec_adjoint_problem<double> const&, CUstream_st*,
                                          linrec_variant);
template void linrec_adjoint_cuda<bfloat16>(linrec_adjoint_problem<bfloat16> const&, CUstream_st*,
                                            linrec_variant);
template void linrec_adjoint_cuda<float16>(linrec_adjoint_problem<float16> const&, CUstream_st*,
                                           linrec_variant);

template <class T>
void tridiag_cuda(tridiag_problem<T> const&, CUstream_st*, void*) {
  no_cuda();
}
template void tridiag_cuda<float>(tridiag_problem<float> const&, CUstream_st*, void*);
template void tridiag_cuda<double>(tridiag_problem<double> const&, CUstream_st*, void*);
template <class T>
std::size_t tridiag_cuda_workspace(tridiag_problem<T> const&) {
  no_cuda();
}
template std::size_t tridiag_cuda_workspace<float>(tridiag_problem<float> const&);
template std::size_t tridiag_cuda_workspace<double>(tridiag_problem<double> const&);
tridiag_algorithm tridiag_cuda_resolve(layout const&, std::size_t, tridiag_options const&) { no_cuda(); }

template <class T>
void lfilter_cuda(T const*, std::int64_t, T const*, std::int64_t, T const*, T*, layout const&, T const*, T*,
                  CUstream_st*) {
  no_cuda();
}
template void lfilter_cuda<float>(float const*, std::int64_t, float const*, std::int64_t, float const*,
                                  float*, layout const&, float const*, float*, CUstream_st*);
template void lfilter_cuda<double>(double const*, std::int64_t, double const*, std::int64_t, double const*,
                                   double*, layout const&, double const*, double*, CUstream_st*);

template <class T>
void sosfilt_cuda(T const*, std::int64_t, T const*, T*, layout const&, T const*, T*, CUstream_st*) {
  no_cuda();
}
template void sosfilt_cuda<float>(float const*, std::int64_t, float const*, float*, layout const&,
                                  float const*, float*, CUstream_st*);
template void sosfilt_cuda<double>(double const*, std::int64_t, double const*, double*, layout const&,
                                   double const*, double*, CUstream_st*);

template <class T>
void filtfilt_cuda(iir_coefficients<T> const&, T const*, std::int64_t, T const*, T*, layout const&,
                   std::int64_t, filtfilt_pad, CUstream_st*) {
  no_cuda();
}
template void filtfilt_cuda<float>(iir_coefficients<float> const&, float const*, std::int64_t, float const*,
                                   float*, layout const&, std::int64_t, filtfilt_pad, CUstream_st*);
template void filtfilt_cuda<double>(iir_coefficients<double> const&, double const*, std::int64_t,
                                    double const*, double*, layout const&, std::int64_t, filtfilt_pad,
                                    CUstream_st*);

template <class T>
void correlate_cuda(T const*, T const* const*, std::int64_t, T*, std::int64_t, layout const&, CUstream_st*) {
  no_cuda();
}
template void correlate_cuda<float>(float const*, float const* const*, std::int64_t, float*, std::int64_t,
                                    layout const&, CUstream_st*);
template void correlate_cuda<double>(double const*, double const* const*, std::int64_t, double*, std::int64_t,
                                     layout const&, CUstream_st*);

template <class T>
void dpcm_float_cuda(bool, T const*, std::int64_t, T const*, T*, layout const&, T const*, CUstream_st*) {
  no_cuda();
}
template void dpcm_float_cuda<float>(bool, float const*, std::int64_t, float const*, float*, layout const&,
                                     float const*, CUstream_st*);
template void dpcm_float_cuda<double>(bool, double const*, std::int64_t, double const*, double*,
                                      layout const&, double const*, CUstream_st*);

template <class S>
void dpcm_int_cuda(bool, std::int64_t const*, std::int64_t, int, S const*, S*, layout const&, S const*,
                   CUstream_st*) {
  no_cuda();
}
template void dpcm_int_cuda<std::int16_t>(bool, std::int64_t const*, std::int64_t, int, std::int16_t const*,
                                          std::int16_t*, layout const&, std::int16_t const*, CUstream_st*);
template void dpcm_int_cuda<std::int32_t>(bool, std::int64_t const*, std::int64_t, int, std::int32_t const*,
                                          std::int32_t*, layout const&, std::int32_t const*, CUstream_st*);
template void dpcm_int_cuda<std::uint8_t>(bool, std::int64_t const*, std::int64_t, int, std::uint8_t const*,
                                          std::uint8_t*, layout const&, std::uint8_t const*, CUstream_st*);

template <class T>
void linrec_order_k_cuda(T const*, std::int64_t, T const*, T*, layout const&, T const*, T*, CUstream_st*) {
  no_cuda();
}
template void linrec_order_k_cuda<float>(float const*, std::int64_t, float const*, float*, layout const&,
                                         float const*, float*, CUstream_st*);
template void linrec_order_k_cuda<double>(double const*, std::int64_t, double const*, double*, layout const&,
                                          double const*, double*, CUstream_st*);

template <int K, class T>
void matrix_chain_cuda(T const*, T const*, T*, layout const&, T const*, T*, CUstream_st*) {
  no_cuda();
}
#define RECUR_CHAIN_STUB(K)                                                                                  \
  template void matrix_chain_cuda<K, float>(float const*, float const*, float*, layout const&, float const*, \
                                            float*, CUstream_st*);                                           \
  template void matrix_chain_cuda<K, double>(double const*, double const*, double*, layout const&,           \
                                             double const*, double*, CUstream_st*);
RECUR_CHAIN_STUB(2)
RECUR_CHAIN_STUB(3)
RECUR_CHAIN_STUB(4)
RECUR_CHAIN_STUB(5)
RECUR_CHAIN_STUB(6)
RECUR_CHAIN_STUB(7)
RECUR_CHAIN_STUB(8)
#undef RECUR_CHAIN_STUB
template <class T>
void mobius_cuda(T const*, T const*, T const*, T const*, T*, layout const&, T const*, T, T*, CUstream_st*) {
  no_cuda();
}
template void mobius_cuda<float>(float const*, float const*, float const*, float const*, float*,
                                 layout const&, float const*, float, float*, CUstream_st*);
template void mobius_cuda<double>(double const*, double const*, double const*, double const*, double*,
                                  layout const&, double const*, double, double*, CUstream_st*);

}  // namespace detail
}  // namespace recur
