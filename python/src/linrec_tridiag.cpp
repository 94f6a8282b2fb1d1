// Bindings of include/recur/linrec.hpp (linrec, linrec_adjoint) and
// tridiag.hpp (solve_batched; the algorithm names of types.hpp). Each call
// checks what the C++ API cannot see (dtypes, devices, shapes, state sizes,
// one layout for every array), then calls the entry point, which checks the
// rest.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>

#include <recur/linrec.hpp>
#include <recur/tridiag.hpp>

#include "arrays.hpp"

namespace recur::python {
namespace {

using nb::arg;
using stream_arg = std::optional<std::uintptr_t>;
using array_or_scalar = std::variant<array, double>;

array const* array_of(array_or_scalar const& v) { return std::get_if<array>(&v); }

// An operand of T: the array's data from element `off` on, or the scalar.
template <class T>
operand<T> operand_at(array_or_scalar const& v, std::int64_t off) {
  if (auto const* a = array_of(v)) return operand<T>(in<T>(*a) + off);
  return operand<T>(static_cast<T>(std::get<double>(v)));
}

// The batch of every named array, which must all have `ref`'s shape and
// share its layout.
batch one_batch(char const* fn, char const* ref_name, array const& ref, std::int64_t axis,
                std::vector<std::pair<char const*, array const*>> const& others) {
  auto const rb = batch_of(ref, axis);
  if (!rb) value_error(std::string(fn) + ": " + ref_name + " has strides no layout describes");
  for (auto const& [name, a] : others)
    if (a) shared_batch(fn, ref, ref_name, *a, name, axis);
  return *rb;
}

}  // namespace

void bind_linrec_tridiag(nb::module_& m) {
  m.def(
      "linrec",
      [](array_or_scalar const& s, array_or_scalar const& t, array const& w, std::int64_t axis, bool reverse,
         std::optional<array> const& init, double init_value, std::optional<array> const& final_state,
         stream_arg stream, int threads) {
        char const* fn = "recur.linrec";
        executor_spec const ex{stream, threads};
        // Every array the call touches: on the executor's device, of w's dtype.
        std::vector<std::pair<char const*, array const*>> const arrays = {
            {"s", array_of(s)},
            {"t", array_of(t)},
            {"w", &w},
            {"init", given(init)},
            {"final_state", given(final_state)}};
        check_devices(fn, ex, arrays);
        auto const bt = one_batch(fn, "w", w, axis, {{"s", array_of(s)}, {"t", array_of(t)}});
        with_linrec_type(fn, "w", w, [&](auto z) {
          using T = decltype(z);
          check_same_dtype(fn, w, arrays);
          check_state(fn, "init", init, sequences(bt));
          check_state(fn, "final_state", final_state, sequences(bt));
          run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
            linrec_options<T> opt;
            opt.dir = reverse ? direction::reverse : direction::forward;
            opt.init = at(in<T>(init), first);
            opt.init_value = static_cast<T>(init_value);
            opt.final_state = at(output<T>(final_state), first);
            linrec<T>(e, operand_at<T>(s, off), operand_at<T>(t, off), output<T>(w) + off, bt.lay, opt);
          });
        });
      },
      arg("s"), arg("t"), arg("w"), arg("axis"), arg("reverse"), arg("init").none(), arg("init_value"),
      arg("final_state").none(), arg("stream").none(), arg("threads"));

  // Each sequence's steps composed (recur::linrec_summary): a and b, one
  // value per sequence (state arrays, as final_state), s and t laid out alike.
  m.def(
      "linrec_summary",
      [](array_or_scalar const& s, array_or_scalar const& t, array const& a, array const& b, std::int64_t axis,
         bool reverse, stream_arg stream, int threads) {
        char const* fn = "recur.linrec_summary";
        executor_spec const ex{stream, threads};
        array const* ref = array_of(t) ? array_of(t) : array_of(s);
        if (!ref) value_error(std::string(fn) + ": at least one of s and t must be an array");
        std::vector<std::pair<char const*, array const*>> const arrays = {
            {"s", array_of(s)}, {"t", array_of(t)}, {"a", &a}, {"b", &b}};
        check_devices(fn, ex, arrays);
        auto const bt = one_batch(fn, array_of(t) ? "t" : "s", *ref, axis, {{"s", array_of(s)}, {"t", array_of(t)}});
        with_linrec_type(fn, "a", a, [&](auto z) {
          using T = decltype(z);
          check_same_dtype(fn, a, arrays);
          check_state(fn, "a", std::optional<array>(a), sequences(bt));
          check_state(fn, "b", std::optional<array>(b), sequences(bt));
          run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
            linrec_summary<T>(e, operand_at<T>(s, off), operand_at<T>(t, off), output<T>(a) + first,
                              output<T>(b) + first, bt.lay, reverse ? direction::reverse : direction::forward);
          });
        });
      },
      arg("s"), arg("t"), arg("a"), arg("b"), arg("axis"), arg("reverse"), arg("stream").none(), arg("threads"));

  // The adjoint of linrec (the backward of recur._autograd's linrec op): g,
  // dt and ds (optional) w's shape and layout, s an array like them or a
  // scalar; w is read only for ds. init, final_gradient and init_gradient:
  // one value per sequence, or None.
  m.def(
      "linrec_adjoint",
      [](array_or_scalar const& s, std::optional<array> const& w, array const& g, array const& dt,
         std::optional<array> const& ds, std::int64_t axis, bool reverse, std::optional<array> const& init,
         double init_value, std::optional<array> const& final_gradient,
         std::optional<array> const& init_gradient, stream_arg stream, int threads) {
        char const* fn = "recur.linrec (backward)";
        executor_spec const ex{stream, threads};
        // Every array the call touches: on the executor's device, of dt's dtype.
        std::vector<std::pair<char const*, array const*>> const arrays = {
            {"s", array_of(s)},
            {"w", given(w)},
            {"g", &g},
            {"dt", &dt},
            {"ds", given(ds)},
            {"init", given(init)},
            {"final_gradient", given(final_gradient)},
            {"init_gradient", given(init_gradient)}};
        check_devices(fn, ex, arrays);
        auto const bt = one_batch(fn, "dt", dt, axis,
                                  {{"s", array_of(s)}, {"w", given(w)}, {"g", &g}, {"ds", given(ds)}});
        with_linrec_type(fn, "dt", dt, [&](auto z) {
          using T = decltype(z);
          check_same_dtype(fn, dt, arrays);
          for (auto const& [name, st] :
               {std::pair{"init", &init}, std::pair{"final_gradient", &final_gradient},
                std::pair{"init_gradient", &init_gradient}})
            check_state(fn, name, *st, sequences(bt));
          run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
            linrec_adjoint_options<T> opt;
            opt.dir = reverse ? direction::reverse : direction::forward;
            opt.init = at(in<T>(init), first);
            opt.init_value = static_cast<T>(init_value);
            opt.final_gradient = at(in<T>(final_gradient), first);
            opt.init_gradient = at(output<T>(init_gradient), first);
            linrec_adjoint<T>(e, operand_at<T>(s, off), at(in<T>(w), off), in<T>(g) + off,
                              output<T>(dt) + off, at(output<T>(ds), off), bt.lay, opt);
          });
        });
      },
      arg("s"), arg("w").none(), arg("g"), arg("dt"), arg("ds").none(), arg("axis"), arg("reverse"),
      arg("init").none(), arg("init_value"), arg("final_gradient").none(), arg("init_gradient").none(),
      arg("stream").none(), arg("threads"));

  // The tridiagonal algorithms' names, "auto" first: recur::tridiag_algorithms
  // through to_string, the one list the Python package checks algorithm=
  // against (python/recur/_call_tridiag.py). A tuple: nothing can append to it.
  nb::list algorithm_names;
  for (auto const a : tridiag_algorithms) algorithm_names.append(to_string(a));
  m.attr("tridiag_algorithms") = nb::steal<nb::tuple>(PyList_AsTuple(algorithm_names.ptr()));

  // b and x are d's shape, or d's shape behind a leading axis of nrhs
  // right-hand sides, each laid out like d. info, pivoted and
  // refinement_steps: int32, one value per system, or None.
  m.def(
      "solve_tridiagonal",
      [](array const& dl, array const& d, array const& du, array const& b, array const& x, std::int64_t axis,
         std::optional<array> const& info, std::string const& algorithm, std::string const& pivoting,
         bool periodic, bool refine, int max_refinement_steps, std::optional<array> const& pivoted,
         std::optional<array> const& refinement_steps, stream_arg stream, int threads) {
        char const* fn = "recur.linalg.solve_tridiagonal";
        executor_spec const ex{stream, threads};
        check_devices(fn, ex,
                      {{"dl", &dl},
                       {"d", &d},
                       {"du", &du},
                       {"b", &b},
                       {"x", &x},
                       {"info", given(info)},
                       {"pivoted", given(pivoted)},
                       {"refinement_steps", given(refinement_steps)}});
        auto const bt = one_batch(fn, "d", d, axis, {{"dl", &dl}, {"du", &du}});
        tridiag_options opt;
        bool const sets = b.ndim() == d.ndim() + 1;
        if (sets) {
          auto const bb = batch_of(b, axis, true), bx = batch_of(x, axis, true);
          bool same = x.ndim() == b.ndim();
          for (std::size_t j = 0; same && j < b.ndim(); ++j)
            same = b.shape(j) == x.shape(j) && (j == 0 || b.shape(j) == d.shape(j - 1));
          if (!same) value_error(std::string(fn) + ": b must have d's shape, or (nrhs,) + d's shape");
          if (!bb || !bx || !(*bb == bt) || !(*bx == bt) || b.stride(0) != x.stride(0))
            value_error(std::string(fn) + ": b and x are not laid out like d (the Python layer copies them)");
          opt.nrhs = static_cast<std::int64_t>(b.shape(0));
          opt.rhs_stride = b.shape(0) > 1 ? b.stride(0) : 0;
        } else {
          shared_batch(fn, d, "d", b, "b", axis);
          shared_batch(fn, d, "d", x, "x", axis);
        }
        auto const algo = parse_tridiag_algorithm(algorithm);
        if (!algo) value_error(std::string(fn) + ": unknown algorithm '" + algorithm + "'");
        opt.algorithm = *algo;
        auto const piv = parse_tridiag_pivoting(pivoting);
        if (!piv) value_error(std::string(fn) + ": unknown pivoting '" + pivoting + "'");
        opt.pivoting = *piv;
        opt.periodic = periodic;
        opt.refinement = refine ? tridiag_refinement::mixed : tridiag_refinement::none;
        opt.max_refinement_steps = max_refinement_steps;
        using named_output = std::pair<char const*, std::optional<array> const*>;
        for (auto const& [name, out] : std::initializer_list<named_output>{
                 {"info", &info}, {"pivoted", &pivoted}, {"refinement_steps", &refinement_steps}}) {
          if (!*out) continue;
          if (!has_dtype<std::int32_t>(**out))
            type_error(std::string(fn) + ": " + name + " has dtype " + dtype_name((*out)->dtype()) +
                       "; expected int32");
          check_state(fn, name, *out, sequences(bt));
        }
        with_real_type(fn, "d", d, [&](auto z) {
          using T = decltype(z);
          check_same_dtype(fn, d, {{"dl", &dl}, {"du", &du}, {"b", &b}, {"x", &x}});
          run(ex, bt, [&](auto const& e, std::int64_t off, std::int64_t first) {
            tridiag_options o = opt;
            auto const per_system = [&](std::optional<array> const& v) {
              return v ? output<std::int32_t>(*v) + first : nullptr;
            };
            o.info = per_system(info);
            o.pivoted = per_system(pivoted);
            o.refinement_steps = per_system(refinement_steps);
            solve_batched<T>(e, in<T>(dl) + off, in<T>(d) + off, in<T>(du) + off, in<T>(b) + off,
                             output<T>(x) + off, bt.lay, o);
          });
        });
      },
      arg("dl"), arg("d"), arg("du"), arg("b"), arg("x"), arg("axis"), arg("info").none(), arg("algorithm"),
      arg("pivoting"), arg("periodic"), arg("refine"), arg("max_refinement_steps"), arg("pivoted").none(),
      arg("refinement_steps").none(), arg("stream").none(), arg("threads"));
}

}  // namespace recur::python
