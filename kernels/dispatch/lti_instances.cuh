#pragma once
// The instances of dispatch_lti (dispatch_lti.cuh) that lfilter, sosfilt,
// the floating-point DPCM codecs and linrec_order_k call, named by macros so
// that a program spreads their compilation over translation units: each
// instance compiles seven kernels (two tile shapes for element strides 1,
// -1 and any, and one thread per sequence), and a unit that calls
// lfilter<float> alone compiles nine instances. A unit that calls those
// facilities declares the instances extern; units of their own define them.
// librecur defines every one for float and double (lib/CMakeLists.txt, one
// unit per type and state size), so a unit linked with it may declare them
// all extern.
//
//   RECUR_LTI_INSTANCES(extern, float, 3)  // declares the systems of state size 3
//   RECUR_LTI_INSTANCES(, float, 3)        // defines them
//   RECUR_LTI_ALL_INSTANCES(extern, float) // declares state sizes 1 to 8
//
// The systems of state size K: lfilter_system<T, K>, order_k_system<T, K>,
// predictor_system<T, K>, sos_system<T, K / 2> for even K, and gain_system<T>
// (order 0, one state value) with K = 1. Use at global scope.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include <recur/layout/layout.hpp>
#include "dispatch_lti.cuh"

#define RECUR_LTI_INSTANCE(EXTERN, T, ...)                                                       \
  EXTERN template cudaError_t recur::kernels::dispatch_lti<T, void, __VA_ARGS__>(                \
      void*, std::size_t&, __VA_ARGS__ const&, T const*, T*, recur::layout const&, T const*, T*, \
      std::int64_t, cudaStream_t);

#define RECUR_LTI_ORDER_INSTANCES(EXTERN, T, K)                       \
  RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::lfilter_system<T, K>) \
  RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::order_k_system<T, K>) \
  RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::predictor_system<T, K>)

#define RECUR_LTI_INSTANCES_1(EXTERN, T)                        \
  RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::gain_system<T>) \
  RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 1)
#define RECUR_LTI_INSTANCES_2(EXTERN, T) \
  RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 2) RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::sos_system<T, 1>)
#define RECUR_LTI_INSTANCES_3(EXTERN, T) RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 3)
#define RECUR_LTI_INSTANCES_4(EXTERN, T) \
  RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 4) RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::sos_system<T, 2>)
#define RECUR_LTI_INSTANCES_5(EXTERN, T) RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 5)
#define RECUR_LTI_INSTANCES_6(EXTERN, T) \
  RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 6) RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::sos_system<T, 3>)
#define RECUR_LTI_INSTANCES_7(EXTERN, T) RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 7)
#define RECUR_LTI_INSTANCES_8(EXTERN, T) \
  RECUR_LTI_ORDER_INSTANCES(EXTERN, T, 8) RECUR_LTI_INSTANCE(EXTERN, T, recur::kernels::sos_system<T, 4>)

// K: a literal, 1 to 8.
#define RECUR_LTI_INSTANCES(EXTERN, T, K) RECUR_LTI_INSTANCES_##K(EXTERN, T)

// clang-format off
#define RECUR_LTI_ALL_INSTANCES(EXTERN, T) \
  RECUR_LTI_INSTANCES_1(EXTERN, T)         \
  RECUR_LTI_INSTANCES_2(EXTERN, T)         \
  RECUR_LTI_INSTANCES_3(EXTERN, T)         \
  RECUR_LTI_INSTANCES_4(EXTERN, T)         \
  RECUR_LTI_INSTANCES_5(EXTERN, T)         \
  RECUR_LTI_INSTANCES_6(EXTERN, T)         \
  RECUR_LTI_INSTANCES_7(EXTERN, T)         \
  RECUR_LTI_INSTANCES_8(EXTERN, T)
// clang-format on
