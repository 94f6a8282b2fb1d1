#pragma once
// What every binding of recur._recur shares: arrays from any framework
// (nanobind ndarrays: NumPy through the buffer protocol, CuPy, PyTorch and
// JAX through DLPack), their strides turned into a recur::layout, their
// dtype and device checked, and the executor (recur::host or recur::cuda on
// a stream) the call runs on.
//
// Every array is taken read-only (nb::ro): nanobind then accepts read-only
// producers such as JAX. Outputs are arrays the Python layer allocated for
// the call and passes nowhere else, so writing them through the pointer is
// safe; output() says which arrays are written.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <recur/executor.hpp>
#include <recur/layout/layout.hpp>
#include <recur/storage.hpp>

// recur's 16-bit storage types as DLPack dtypes (float16: NumPy's, CuPy's
// and PyTorch's float16; bfloat16: PyTorch's and JAX's bfloat16), so that
// nb::dtype<T>() names them.
namespace nanobind::detail {
template <>
struct dtype_traits<recur::float16> {
  static constexpr dlpack::dtype value{static_cast<std::uint8_t>(dlpack::dtype_code::Float), 16, 1};
  static constexpr auto name = const_name("float16");
};
template <>
struct dtype_traits<recur::bfloat16> {
  static constexpr dlpack::dtype value{static_cast<std::uint8_t>(dlpack::dtype_code::Bfloat), 16, 1};
  static constexpr auto name = const_name("bfloat16");
};
}  // namespace nanobind::detail

namespace recur::python {

namespace nb = nanobind;
using array = nb::ndarray<nb::ro>;

[[noreturn]] void type_error(std::string const& msg);
[[noreturn]] void value_error(std::string const& msg);

// "float32", "int16", ... as NumPy names the dtype.
std::string dtype_name(nb::dlpack::dtype t);

template <class T>
bool has_dtype(array const& a) {
  return a.dtype() == nb::dtype<T>();
}

// A read-only array's data as T (the dtype checked by the caller).
template <class T>
T const* in(array const& a) {
  return static_cast<T const*>(a.data());
}
// An output array's data as T (see the header comment).
template <class T>
T* output(array const& a) {
  return const_cast<T*>(static_cast<T const*>(a.data()));
}
template <class T>
T const* in(std::optional<array> const& a) {
  return a ? in<T>(*a) : nullptr;
}
template <class T>
T* output(std::optional<array> const& a) {
  return a ? output<T>(*a) : nullptr;
}

// The axis argument, Python-style (negative counts from the end), checked.
std::size_t normalised_axis(char const* fn, std::int64_t axis, std::size_t ndim);

// A batch of sequences along `axis` of an array. The batch axes (axes of
// size 1 left out), ordered by decreasing stride, number the sequences, and
// so the per-sequence state: batch_axes, outer to inner. The innermost run
// of them that collapses into one stride is the layout's batch (lay.count
// sequences, lay.batch_stride apart); the axes before it, merged where they
// collapse too, are `outer` (count, stride) groups, outermost first, which
// the binding runs one call each (an axis in the middle of a C-ordered
// array, for example).
struct batch {
  layout lay;
  std::vector<std::int64_t> batch_axes;
  std::vector<std::pair<std::int64_t, std::int64_t>> outer;
  friend bool operator==(batch const&, batch const&) = default;
};

// The batch of `a` along `axis`, or none when no layout describes it (a
// negative or zero stride: reversed or broadcast views). `skip_leading`
// leaves out axis 0 (a set of right-hand sides).
std::optional<batch> batch_of(array const& a, std::int64_t axis, bool skip_leading = false);

// Calls f(element_offset, first_sequence) for each call the batch takes:
// the offset of its first element from the array's base, and the number of
// its first sequence (for the state arrays).
template <class F>
void for_each_part(batch const& bt, F&& f) {
  std::int64_t parts = 1;
  for (auto const& g : bt.outer) parts *= g.first;
  std::vector<std::int64_t> idx(bt.outer.size(), 0);
  for (std::int64_t p = 0; p < parts; ++p) {
    std::int64_t off = 0;
    for (std::size_t j = 0; j < idx.size(); ++j) off += idx[j] * bt.outer[j].second;
    f(off, p * bt.lay.count);
    for (std::size_t j = idx.size(); j-- > 0;) {
      if (++idx[j] < bt.outer[j].first) break;
      idx[j] = 0;
    }
  }
}

// The sequences of a batch in all its calls.
inline std::int64_t sequences(batch const& bt) {
  std::int64_t c = bt.lay.count;
  for (auto const& g : bt.outer) c *= g.first;
  return c;
}

// Where the call runs: stream set means recur::cuda on it, else recur::host.
struct executor_spec {
  std::optional<std::uintptr_t> stream;
  int threads = 0;
};

// Every named array lives where the executor runs: host memory (or CUDA
// host memory) for recur::host, CUDA device or managed memory on one device
// for recur::cuda. Unset optional arrays are skipped.
void check_devices(char const* fn, executor_spec const& ex,
                   std::vector<std::pair<char const*, array const*>> const& arrays);

// Checks the coefficient arrays, which recur reads on the host: 1-D (or
// `ndim`), host memory, contiguous, of dtype T.
template <class T>
std::span<T const> coefficients(char const* fn, char const* name, array const& a, std::size_t ndim = 1);

// The same dtype as x for every given array (null: not given; TypeError
// otherwise).
void check_same_dtype(char const* fn, array const& x,
                      std::vector<std::pair<char const*, array const*>> const& others);

inline array const* given(std::optional<array> const& a) { return a ? &*a : nullptr; }

// A contiguous state array of exactly `values` elements (ValueError).
void check_state(char const* fn, char const* name, std::optional<array> const& s, std::int64_t values);

// Runs f(executor, element_offset, first_sequence) for each call of the
// batch (for_each_part), the executor recur::host{threads} or
// recur::cuda{stream}, without the GIL.
template <class F>
void run(executor_spec const& ex, batch const& bt, F&& f) {
  nb::gil_scoped_release release;
  for_each_part(bt, [&](std::int64_t off, std::int64_t first) {
    if (ex.stream)
      f(recur::cuda{reinterpret_cast<CUstream_st*>(*ex.stream)}, off, first);
    else
      f(recur::host{ex.threads}, off, first);
  });
}

// p + off, or null for a null p (an absent optional array).
template <class T>
T* at(T* p, std::int64_t off) {
  return p ? p + off : nullptr;
}

// Calls f(T{}) for T = float or double according to x's dtype; any other
// dtype is a TypeError naming the argument.
template <class F>
void with_real_type(char const* fn, char const* name, array const& x, F&& f) {
  if (has_dtype<float>(x))
    f(float{});
  else if (has_dtype<double>(x))
    f(double{});
  else
    type_error(std::string(fn) + ": " + name + " has dtype " + dtype_name(x.dtype()) +
               "; expected float32 or float64");
}

// with_real_type, and also T = recur::bfloat16 or recur::float16 (16-bit
// storage computed in float: linrec).
template <class F>
void with_linrec_type(char const* fn, char const* name, array const& x, F&& f) {
  if (has_dtype<bfloat16>(x))
    f(bfloat16{});
  else if (has_dtype<float16>(x))
    f(float16{});
  else if (has_dtype<float>(x) || has_dtype<double>(x))
    with_real_type(fn, name, x, f);
  else
    type_error(std::string(fn) + ": " + name + " has dtype " + dtype_name(x.dtype()) +
               "; expected float32, float64, float16 or bfloat16");
}

// The batch of an input and its output, which must share one layout (the
// Python layer makes them so, copying an input that no layout describes).
batch shared_batch(char const* fn, array const& x, char const* xn, array const& y, char const* yn,
                   std::int64_t axis);

void bind_filters(nb::module_& m);
void bind_linrec_tridiag(nb::module_& m);

}  // namespace recur::python
