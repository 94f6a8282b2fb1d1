#pragma once
// 16-bit storage types: recur::bfloat16 and recur::float16 hold the bits of a
// bfloat16 (8-bit exponent, 7-bit mantissa) or an IEEE binary16 number. They
// are storage only: a facility that takes them loads each element, converts
// it to its compute type (float), does all arithmetic there and rounds the
// results back when it stores them.
//
// Converting to float is implicit (exact); from float explicit (it rounds).
// Each is bit- and layout-compatible with CUDA's __nv_bfloat16 / __half,
// PyTorch's torch.bfloat16 / torch.float16 and NumPy's float16: a pointer to
// an array of those may be reinterpret_cast to a pointer to these. Including
// this header needs no CUDA headers; under nvcc the device side converts with
// the intrinsics of cuda_bf16.h and cuda_fp16.h, which round the same way
// (to nearest, ties to even; NaN stays NaN, overflow gives infinity).

#include <concepts>
#include <cstdint>

#include <recur/config.hpp>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace recur {

namespace detail {

RECUR_HD inline std::uint32_t float_bits(float x) { return __builtin_bit_cast(std::uint32_t, x); }
RECUR_HD inline float bits_float(std::uint32_t u) { return __builtin_bit_cast(float, u); }

RECUR_HD inline std::uint16_t float_to_bf16_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
#else
  std::uint32_t const u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}

RECUR_HD inline float bf16_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __bfloat162float(__ushort_as_bfloat16(h));
#else
  return bits_float(static_cast<std::uint32_t>(h) << 16);
#endif
}

RECUR_HD inline std::uint16_t float_to_f16_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(x));
#else
  std::uint32_t u = float_bits(x);
  std::uint32_t const sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  std::uint32_t h;
  if (u >= 0x47800000u) {  // 2^16 and above, inf, NaN
    h = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < 0x38800000u) {  // below 2^-14: subnormal or zero; the float add rounds
    h = float_bits(bits_float(u) + 0.5f) - 0x3f000000u;
  } else {  // normal: rebias the exponent, round the mantissa to nearest even (a carry
            // may reach the exponent, up to infinity)
    h = (u - 0x38000000u + 0xfffu + ((u >> 13) & 1u)) >> 13;
  }
  return static_cast<std::uint16_t>(sign | h);
#endif
}

RECUR_HD inline float f16_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  std::uint32_t const sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t const e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float const v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

}  // namespace detail

struct bfloat16 {
  std::uint16_t bits;

  bfloat16() = default;
  RECUR_HD explicit bfloat16(float x) : bits(detail::float_to_bf16_bits(x)) {}
  RECUR_HD operator float() const { return detail::bf16_bits_to_float(bits); }  // NOLINT: exact
};

struct float16 {
  std::uint16_t bits;

  float16() = default;
  RECUR_HD explicit float16(float x) : bits(detail::float_to_f16_bits(x)) {}
  RECUR_HD operator float() const { return detail::f16_bits_to_float(bits); }  // NOLINT: exact
};

static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2);
static_assert(sizeof(float16) == 2 && alignof(float16) == 2);

// The 16-bit storage types.
template <class T>
concept storage16 = std::same_as<T, bfloat16> || std::same_as<T, float16>;

// The type a facility computes in for values stored as T: float for the
// 16-bit types, T itself otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <storage16 T>
struct compute_type<T> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

// Storage to compute type (exact) and back (rounded to nearest even).
template <class T>
RECUR_HD inline compute_t<T> to_compute(T x) {
  return static_cast<compute_t<T>>(x);
}
template <class T>
RECUR_HD inline T to_storage(compute_t<T> v) {
  return T(v);
}

}  // namespace recur
