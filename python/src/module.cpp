// recur._recur: the nanobind extension over recur's public C++ API. One
// binding per C++ entry point (bind_filters, bind_linrec_tridiag), the array
// helpers of arrays.hpp, the errors as Python exceptions, and the build's
// facts. The scipy-compatible functions are the Python package's
// (python/recur/).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <recur/config.hpp>
#include <recur/error.hpp>

#include "arrays.hpp"

#if RECUR_PYTHON_CUDA
#include <cuda_runtime_api.h>
#endif

namespace recur::python {

void type_error(std::string const& msg) { throw nb::type_error(msg.c_str()); }
void value_error(std::string const& msg) { throw nb::value_error(msg.c_str()); }

std::string dtype_name(nb::dlpack::dtype t) {
  using code = nb::dlpack::dtype_code;
  std::string base;
  switch (static_cast<code>(t.code)) {
    case code::Int:
      base = "int";
      break;
    case code::UInt:
      base = "uint";
      break;
    case code::Float:
      base = "float";
      break;
    case code::Bfloat:
      base = "bfloat";
      break;
    case code::Complex:
      base = "complex";
      break;
    case code::Bool:
      return "bool";
    default:
      base = "dtype(code " + std::to_string(t.code) + ") ";
      break;
  }
  return base + std::to_string(t.bits);
}

std::size_t normalised_axis(char const* fn, std::int64_t axis, std::size_t ndim) {
  auto const d = static_cast<std::int64_t>(ndim);
  if (axis < -d || axis >= d)
    value_error(std::string(fn) + ": axis " + std::to_string(axis) + " is out of bounds for an array of " +
                std::to_string(d) + " dimension" + (d == 1 ? "" : "s"));
  return static_cast<std::size_t>(axis < 0 ? axis + d : axis);
}

std::optional<batch> batch_of(array const& a, std::int64_t axis, bool skip_leading) {
  std::size_t const start = skip_leading ? 1 : 0;
  if (a.ndim() <= start) value_error("recur: an array has no sequence axis (0 dimensions)");
  std::size_t const ax = start + normalised_axis("recur", axis, a.ndim() - start);
  auto const n = static_cast<std::int64_t>(a.shape(ax));
  std::int64_t es = a.stride(ax);
  batch b;
  std::int64_t count = 1;
  for (std::size_t j = start; j < a.ndim(); ++j) {
    if (j == ax) continue;
    count *= static_cast<std::int64_t>(a.shape(j));
    if (a.shape(j) != 1) b.batch_axes.push_back(static_cast<std::int64_t>(j));
  }
  auto shift = [&] {
    for (auto& j : b.batch_axes) j -= static_cast<std::int64_t>(start);
  };
  if (n == 0 || count == 0) {
    b.lay = layout{n, count, 1, n};
    shift();
    return b;
  }
  if (n <= 1) es = 1;
  if (es <= 0) return std::nullopt;
  for (auto j : b.batch_axes)
    if (a.stride(j) <= 0) return std::nullopt;
  auto& axes = b.batch_axes;
  std::stable_sort(axes.begin(), axes.end(), [&](auto p, auto q) { return a.stride(p) > a.stride(q); });
  // Groups of axes that collapse into one stride, innermost first.
  std::vector<std::pair<std::int64_t, std::int64_t>> groups;
  for (std::size_t j = axes.size(); j-- > 0;) {
    auto const c = static_cast<std::int64_t>(a.shape(axes[j]));
    std::int64_t const st = a.stride(axes[j]);
    if (!groups.empty() && st == groups.back().first * groups.back().second)
      groups.back().first *= c;
    else
      groups.emplace_back(c, st);
  }
  if (groups.empty()) groups.emplace_back(1, n * es);
  b.lay = layout{n, groups.front().first, es, groups.front().first > 1 ? groups.front().second : n * es};
  b.outer.assign(groups.rbegin(), groups.rend() - 1);
  shift();
  return b;
}

batch shared_batch(char const* fn, array const& x, char const* xn, array const& y, char const* yn,
                   std::int64_t axis) {
  bool same_shape = x.ndim() == y.ndim();
  for (std::size_t j = 0; same_shape && j < x.ndim(); ++j) same_shape = x.shape(j) == y.shape(j);
  if (!same_shape) value_error(std::string(fn) + ": " + yn + " does not have the shape of " + xn);
  auto const bx = batch_of(x, axis), by = batch_of(y, axis);
  if (!bx || !by || !(*bx == *by))
    value_error(std::string(fn) + ": " + xn + " and " + yn +
                " do not share one layout (the Python layer copies such inputs)");
  return *bx;
}

void check_devices(char const* fn, executor_spec const& ex,
                   std::vector<std::pair<char const*, array const*>> const& arrays) {
  namespace dev = nb::device;
  std::optional<std::int32_t> device;
  for (auto const& [name, a] : arrays) {
    if (!a) continue;
    auto const t = a->device_type();
    if (ex.stream) {
      if (t != dev::cuda::value && t != dev::cuda_managed::value)
        value_error(std::string(fn) + ": " + name +
                    " is not CUDA device memory, and the call runs on the GPU (its other arrays are)");
      if (device && *device != a->device_id())
        value_error(std::string(fn) + ": " + name + " is on CUDA device " + std::to_string(a->device_id()) +
                    ", the other arrays on device " + std::to_string(*device));
      device = a->device_id();
    } else if (t != dev::cpu::value && t != dev::cuda_host::value) {
      value_error(std::string(fn) + ": " + name +
                  " is not in host memory, and the call runs on the CPU (its other arrays are)");
    }
  }
}

template <class T>
std::span<T const> coefficients(char const* fn, char const* name, array const& a, std::size_t ndim) {
  if (!has_dtype<T>(a))
    type_error(std::string(fn) + ": " + name + " has dtype " + dtype_name(a.dtype()) + ", the signal " +
               dtype_name(nb::dtype<T>()));
  if (a.device_type() != nb::device::cpu::value && a.device_type() != nb::device::cuda_host::value)
    value_error(std::string(fn) + ": " + name +
                " must be in host memory (recur reads coefficients on the host)");
  if (a.ndim() != ndim)
    value_error(std::string(fn) + ": " + name + " must have " + std::to_string(ndim) + " dimension" +
                (ndim == 1 ? "" : "s") + ", not " + std::to_string(a.ndim()));
  std::int64_t expect = 1;
  for (std::size_t j = ndim; j-- > 0;) {
    if (a.shape(j) > 1 && a.stride(j) != expect)
      value_error(std::string(fn) + ": " + name + " is not contiguous");
    expect *= static_cast<std::int64_t>(a.shape(j));
  }
  return {in<T>(a), a.size()};
}
template std::span<float const> coefficients<float>(char const*, char const*, array const&, std::size_t);
template std::span<double const> coefficients<double>(char const*, char const*, array const&, std::size_t);
template std::span<std::int64_t const> coefficients<std::int64_t>(char const*, char const*, array const&,
                                                                  std::size_t);

void check_same_dtype(char const* fn, array const& x,
                      std::vector<std::pair<char const*, array const*>> const& others) {
  for (auto const& [name, a] : others)
    if (a && a->dtype() != x.dtype())
      type_error(std::string(fn) + ": " + name + " has dtype " + dtype_name(a->dtype()) + ", the signal " +
                 dtype_name(x.dtype()));
}

void check_state(char const* fn, char const* name, std::optional<array> const& s, std::int64_t values) {
  if (!s) return;
  std::int64_t expect = 1;
  // An empty array is contiguous whatever its strides (order 0: no state).
  for (std::size_t j = s->ndim(); s->size() > 0 && j-- > 0;) {
    if (s->shape(j) > 1 && s->stride(j) != expect)
      value_error(std::string(fn) + ": " + name + " is not contiguous");
    expect *= static_cast<std::int64_t>(s->shape(j));
  }
  if (static_cast<std::int64_t>(s->size()) != values)
    value_error(std::string(fn) + ": " + name + " has " + std::to_string(s->size()) + " values, expected " +
                std::to_string(values));
}

}  // namespace recur::python

NB_MODULE(_recur, m) {
  namespace py = recur::python;
  using py::nb::arg;
  m.doc() = "recur's C++ API, one binding per entry point (use the package recur, not this module)";
  m.attr("__version__") = RECUR_VERSION_STRING;
  m.def("cuda_compiled", &recur::cuda_compiled, "True when this build has the CUDA backend");
  m.def("cuda_device_count", &recur::cuda_device_count, "Usable CUDA devices (0 without CUDA or a device)");
  m.def("cuda_device_description", &recur::cuda_device_description);
  // Waits for the work on a stream (JAX's eager calls: JAX cannot wait for a
  // stream it does not know).
  m.def(
      "synchronize",
      [](std::uintptr_t stream) {
#if RECUR_PYTHON_CUDA
        py::nb::gil_scoped_release release;
        cudaError_t const e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
        if (e != cudaSuccess)
          throw std::runtime_error(std::string("recur: cudaStreamSynchronize: ") + cudaGetErrorString(e));
#else
        (void)stream;
        throw std::runtime_error("recur: this build has no CUDA backend");
#endif
      },
      arg("stream"));

  // The sequence layout of an array along `axis`: (n, count, element_stride,
  // batch_stride, batch_axes, outer) in elements (arrays.hpp, batch), or None
  // when no layout describes it.
  m.def(
      "batch_layout",
      [](py::array const& a, std::int64_t axis, bool skip_leading)
          -> std::optional<
              std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::vector<std::int64_t>,
                         std::vector<std::pair<std::int64_t, std::int64_t>>>> {
        auto const b = py::batch_of(a, axis, skip_leading);
        if (!b) return std::nullopt;
        return std::make_tuple(b->lay.n, b->lay.count, b->lay.element_stride, b->lay.batch_stride,
                               b->batch_axes, b->outer);
      },
      arg("a"), arg("axis"), arg("skip_leading") = false);

  // recur's errors as Python's: a bad argument is a ValueError with the C++
  // message; a missing backend or a CUDA failure a RuntimeError.
  py::nb::register_exception_translator([](std::exception_ptr const& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (recur::invalid_argument const& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (recur::not_compiled const& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (recur::cuda_error const& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  py::bind_filters(m);
  py::bind_linrec_tridiag(m);
}
