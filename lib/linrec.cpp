// Host API of linrec: argument checks (before anything is written), reverse
// direction as a mirrored view, then the backend.
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include <recur/linrec.hpp>
#include <recur/reference/linrec.hpp>
#include "arg_check.hpp"
#include "linrec_backends.hpp"

namespace recur {
namespace {

using detail::linrec_problem;

constexpr char const* fn = "recur::linrec";

[[noreturn]] void bad(std::string const& msg) { detail::bad_argument(fn, msg); }

using detail::span_of;
using span = detail::byte_span;

template <class T>
void check_pointer(T const* p, char const* name, bool required) {
  detail::check_pointer(fn, p, name, required);
}

void check_layout(layout const& l, std::size_t elem_bytes) {
  detail::check_layout(fn, l, elem_bytes, " (use direction::reverse to run backwards)");
}

template <class T>
linrec_problem<T> checked(operand<T> const& s, operand<T> const& t, T* w, layout const& lay,
                          linrec_options<T> const& opt) {
  check_layout(lay, sizeof(T));
  bool const work = lay.n > 0 && lay.count > 0;
  check_pointer(s.data, "s", false);
  check_pointer(t.data, "t", false);
  check_pointer(w, "w", work);
  check_pointer(opt.init, "init", false);
  check_pointer(opt.final_state, "final_state", false);
  if (opt.dir != direction::forward && opt.dir != direction::reverse)
    bad(fmt::format("direction = {} is not forward or reverse", static_cast<int>(opt.dir)));
  if (opt.variant != linrec_variant::automatic && opt.variant != linrec_variant::single_pass &&
      opt.variant != linrec_variant::three_kernel && opt.variant != linrec_variant::pipelined)
    bad(fmt::format("variant = {} is not a linrec_variant", static_cast<int>(opt.variant)));

  span const sw = span_of<T>(w, lay), ss = span_of(s.data, lay), st = span_of(t.data, lay);
  span const si = span_of(opt.init, lay.count), sf = span_of(opt.final_state, lay.count);
  // w may be exactly s or t (in place); any other overlap would read a value
  // after it was overwritten.
  if (s.data != w && sw.intersects(ss)) bad("w overlaps s (only w == s exactly is allowed)");
  if (t.data != w && sw.intersects(st)) bad("w overlaps t (only w == t exactly is allowed)");
  if (sw.intersects(si)) bad("w overlaps init");
  if (sf.intersects(sw)) bad("final_state overlaps w");
  if (sf.intersects(ss)) bad("final_state overlaps s");
  if (sf.intersects(st)) bad("final_state overlaps t");
  if (opt.final_state != opt.init && sf.intersects(si))
    bad("final_state overlaps init (only final_state == init exactly is allowed)");

  linrec_problem<T> p;
  p.s = s.data;
  p.s_value = s.value;
  p.t = t.data;
  p.t_value = t.value;
  p.w = w;
  p.lay = lay;
  if (lay.n <= 1) p.lay.element_stride = 1;  // unused; keep the mirror well defined
  if (lay.count <= 1) p.lay.batch_stride = lay.n * p.lay.element_stride;
  p.init = opt.init;
  p.init_value = opt.init_value;
  p.final_state = opt.final_state;
  return opt.dir == direction::reverse ? detail::mirrored(p) : p;
}

}  // namespace

template <class T>
static void run_host(host const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                     linrec_options<T> const& opt) {
  if (ex.threads < 0) bad(fmt::format("host.threads = {} is negative", ex.threads));
  auto const p = checked(s, t, w, lay, opt);
  if (lay.count == 0) return;
  if (lay.n == 0) {
    if (p.final_state)
      for (std::int64_t k = 0; k < lay.count; ++k) p.final_state[k] = p.init_of(k);
    return;
  }
  detail::linrec_cpu(p, ex.threads);
}

template <class T>
static void run_cuda(cuda const& ex, operand<T> s, operand<T> t, T* w, layout const& lay,
                     linrec_options<T> const& opt) {
  // Whatever the call, even an empty one: code that runs in a CPU-only build
  // must not appear to work until its first non-empty batch.
  if (!cuda_compiled())
    throw not_compiled("recur::linrec: this build has no CUDA backend (configure with RECUR_ENABLE_CUDA=ON)");
  auto const p = checked(s, t, w, lay, opt);
  bool const work = lay.n > 0 && lay.count > 0;
  if (work) {
    detail::check_device_pointer(w, "w");
    if (s.data) detail::check_device_pointer(s.data, "s");
    if (t.data) detail::check_device_pointer(t.data, "t");
  }
  if (lay.count > 0) {
    if (opt.init) detail::check_device_pointer(opt.init, "init");
    if (opt.final_state) detail::check_device_pointer(opt.final_state, "final_state");
  }
  if (lay.count == 0) return;
  detail::linrec_cuda(p, ex.stream, opt.variant);  // n == 0 handled there (final = init)
}

void linrec(host const& ex, operand<float> s, operand<float> t, float* w, layout const& lay,
            linrec_options<float> const& opt) {
  run_host(ex, s, t, w, lay, opt);
}
void linrec(host const& ex, operand<double> s, operand<double> t, double* w, layout const& lay,
            linrec_options<double> const& opt) {
  run_host(ex, s, t, w, lay, opt);
}
void linrec(cuda const& ex, operand<float> s, operand<float> t, float* w, layout const& lay,
            linrec_options<float> const& opt) {
  run_cuda(ex, s, t, w, lay, opt);
}
void linrec(cuda const& ex, operand<double> s, operand<double> t, double* w, layout const& lay,
            linrec_options<double> const& opt) {
  run_cuda(ex, s, t, w, lay, opt);
}

}  // namespace recur
