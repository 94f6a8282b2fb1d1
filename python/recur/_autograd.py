"""PyTorch custom ops with their backward passes: linrec, lfilter, sosfilt
and solve_tridiagonal, differentiable and traceable by torch.compile.

Each op is a ``torch.library.custom_op`` (namespace ``recur``) whose forward
is the layer below's C++ call (recur._call_linrec, _call_signal,
_call_tridiag, which read the tensors detached), and whose backward is
written with the ops themselves, so torch.compile traces it: the adjoint of
a linear recurrence is the same recurrence run in reverse. recur.torch turns
recur's arguments into the ops' (the package's docstring draws the layers);
this module imports torch, so the layers above import it only when a tensor
needs gradients.

- linrec: w_i = s_i w_{i-1} + t_i. With lambda the reverse recurrence
  lambda_i = g_i + s_{i+1} lambda_{i+1}: dt = lambda, ds_i = lambda_i
  w_{i-1}, dinit = s_0 lambda_0, all from one fused call
  (recur::linrec_adjoint: s, w and g read once, dt and ds written once),
  itself a custom op (recur::linrec_backward) without a backward of its
  own: second derivatives of linrec are not available.
- lfilter (direct form II transposed, a normalised by a[0]): with lambda =
  lfilter(1, a, g) run in reverse (recur's reverse direction, no copies):
  dx = lfilter(b, 1, lambda) in reverse, db_k = sum_i lambda_i x_{i-k},
  da_k = -sum_i lambda_i y_{i-k} (one pass for all k, recur's
  correlate_lags, an op of its own whose backward is two FIR filters),
  dzi_j = lambda_j, chained through the normalisation by a[0]. The op also
  runs in reverse (for the backward passes), whose adjoint runs forward.
- sosfilt: the sections' outputs recomputed, then lfilter's backward section
  by section, last first.
- solve_tridiagonal: db = A^-T g (recur's solver on the transposed
  diagonals, with the forward's pivoting, periodic and refinement options),
  and each diagonal's gradient -db x^T on its band (for a periodic system
  also on the corners).

Each op is called through linrec_call, lfilter_call, sosfilt_call and
solve_call: eagerly an autograd.Function with the op's implementation and
backward (_eager), under tracing the op itself.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _call_linrec, _call_signal, _call_tridiag

__all__ = ["linrec_call", "lfilter_call", "sosfilt_call", "solve_call"]


def _custom_op(name):
    """torch.library.custom_op(name) of a function that mutates nothing,
    the function kept for _eager."""

    def wrap(impl):
        op = torch.library.custom_op(name, impl, mutates_args=())
        _IMPLS[op] = impl
        return op

    return wrap


_IMPLS = {}
# Tensor types whose calls run eagerly (a subclass may be a tracer's: FakeTensor).
_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _eager(op, setup_context, backward):
    """The calls of a custom op: the op itself where torch.compile or a
    torch.func transform traces (or the arguments are a tracer's tensors),
    else an autograd.Function with the op's implementation, setup_context and
    backward: what the op's registered autograd runs, without torch.library's
    dispatch and the inspect.signature binding that autograd.Functions with a
    separate setup_context make per call (tens of microseconds together)."""
    impl = _IMPLS[op]

    def forward(ctx, *args):
        out = impl(*args)
        setup_context(ctx, args, out)
        return out

    fn = type(
        impl.__name__ + "_function",
        (torch.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward)},
    )

    def call(*args):
        return op(*args) if _tracing(args) else fn.apply(*args)

    return call


def _tracing(args):
    """Whether torch.compile or a torch.func transform traces, or an
    argument is a tracer's tensor: then ops are called through
    torch.library."""
    return (
        torch.compiler.is_compiling()
        or torch._C._are_functorch_transforms_active()
        or any(isinstance(v, torch.Tensor) and type(v) not in _PLAIN for v in args)
    )


def _direct(op):
    """The calls of a custom op without a backward: the op where _tracing,
    else its implementation, without torch.library's dispatch. Differentiating
    through it (create_graph=True) raises."""
    impl = _IMPLS[op]

    def call(*args):
        if _tracing(args):
            return op(*args)
        if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in args):
            raise NotImplementedError(
                f"recur.torch: {impl.__name__} has no backward of its own (second derivatives are not supported)"
            )
        return impl(*args)

    return call


def _shift(x, dim, step):
    """x moved by `step` (+1 or -1) along dim, the vacated end zero."""
    n = x.shape[dim]
    zero = torch.zeros_like(x.narrow(dim, 0, 1))
    if step > 0:
        return torch.cat([zero, x.narrow(dim, 0, n - 1)], dim)
    return torch.cat([x.narrow(dim, 1, n - 1), zero], dim)


# ----------------------------------------------------------------- linrec --


@_custom_op("recur::linrec")
def _linrec_op(
    s: Optional[torch.Tensor],
    t: Optional[torch.Tensor],
    s_value: float,
    t_value: float,
    axis: int,
    reverse: bool,
    init: Optional[torch.Tensor],
    init_value: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    return _call_linrec.linrec(
        s_value if s is None else s, t_value if t is None else t, axis, reverse,
        init_value if init is None else init, True, None, 0
    )


@_linrec_op.register_fake
def _(s, t, s_value, t_value, axis, reverse, init, init_value):
    ref = s if s is not None else t
    shape = list(ref.shape)
    del shape[axis]
    return torch.empty_like(ref), ref.new_empty(shape)


def _linrec_setup(ctx, inputs, output):
    s, t, s_value, t_value, axis, reverse, init, init_value = inputs
    ctx.save_for_backward(s, t, init, output[0])
    ctx.params = (s_value, axis, reverse, init_value, t is not None)


@_custom_op("recur::linrec_backward")
def _linrec_backward_op(
    s: Optional[torch.Tensor],
    w: torch.Tensor,
    g: torch.Tensor,
    s_value: float,
    axis: int,
    reverse: bool,
    init: Optional[torch.Tensor],
    init_value: float,
    gfinal: Optional[torch.Tensor],
    want_dinit: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dt, ds and dinit of linrec (recur::linrec_adjoint); ds and dinit are
    empty where not wanted (s a scalar; init not a tensor)."""
    dt, ds, dinit = _call_linrec.adjoint(
        s_value if s is None else s, w, g, axis=axis, reverse=reverse,
        init=init_value if init is None else init, final_gradient=gfinal, want_ds=s is not None,
        want_init_gradient=want_dinit,
    )
    return dt, g.new_empty((0,)) if ds is None else ds, g.new_empty((0,)) if dinit is None else dinit


@_linrec_backward_op.register_fake
def _(s, w, g, s_value, axis, reverse, init, init_value, gfinal, want_dinit):
    shape = list(g.shape)
    del shape[axis]
    ds = g.new_empty((0,)) if s is None else torch.empty_like(g)
    return torch.empty_like(g), ds, g.new_empty(shape if want_dinit else (0,))


def _linrec_backward(ctx, gw, gfinal):
    s, t, init, w = ctx.saved_tensors
    s_value, axis, reverse, init_value, t_is_tensor = ctx.params
    g = gw if gw is not None else torch.zeros_like(w)
    dt, ds, dinit = _linrec_backward_call(s, w, g, s_value, axis, reverse, init, init_value, gfinal, init is not None)
    return (ds if s is not None else None, dt if t_is_tensor else None, None, None, None, None,
            dinit if init is not None else None, None)


torch.library.register_autograd("recur::linrec", _linrec_backward, setup_context=_linrec_setup)
linrec_call = _eager(_linrec_op, _linrec_setup, _linrec_backward)
_linrec_backward_call = _direct(_linrec_backward_op)



def _lfilter_grads(b, a, x, y, g, order, reverse=False):
    """lfilter's backward on sequences along the last axis: (db, da, dx,
    dzi) for y = lfilter(b, a, x, zi) run forward or (reverse) from each
    sequence's end, g the gradient of y; b and a 1-D, on any device (recur
    reads coefficients on the host), db and da on theirs. Three passes over
    the batch: lambda, dx, and the correlations of lambda with x and y."""
    n, last = g.shape[-1], g.dim() - 1
    zero_state = g.new_zeros(g.shape[:-1] + (len(a) - 1,))
    # lambda: the adjoint of the normalised recurrence, lfilter(1, a) run in
    # the other direction; dx = lfilter(b / a[0], 1, lambda), also reversed.
    lam = lfilter_call(a[:1], a, g, last, zero_state, not reverse)[0]
    dx = lfilter_call(b, a[:1], lam, last, g.new_zeros(g.shape[:-1] + (len(b) - 1,)), not reverse)[0]
    # c[0, k] = sum_i lambda_i x_{i-k}, c[1, k] = sum_i lambda_i y_{i-k} (i
    # counted in the filter's direction), handed to the coefficients' device.
    c = _correlate_call(lam, x, y, max(len(a), len(b)), reverse).to(b.device)
    ad = a.to(b.device)
    a0 = ad[0]
    gb = c[0, : len(b)]
    ga = torch.cat([c.new_zeros(1), -c[1, 1 : len(a)]])
    bn, an = b / a0, ad / a0
    db = gb / a0
    da = ga / a0
    da[0] = -((bn * gb).sum() + (an[1:] * ga[1:]).sum()) / a0
    # dzi_j = lambda_j: the first `order` elements in the filter's direction.
    m = min(order, n)
    dzi = lam[..., :m] if not reverse else lam[..., n - m :].flip(-1)
    if m < order:
        dzi = torch.cat([dzi, dzi.new_zeros(dzi.shape[:-1] + (order - m,))], -1)
    return db, da.to(a.device), dx, dzi


@_custom_op("recur::correlate_lags")
def _correlate_op(u: torch.Tensor, x: torch.Tensor, y: torch.Tensor, lags: int, reverse: bool) -> torch.Tensor:
    return _call_signal.correlate_lags(u, [x, y], lags, axis=-1, reverse=reverse)


@_correlate_op.register_fake
def _(u, x, y, lags, reverse):
    return u.new_empty((2, lags))


def _correlate_setup(ctx, inputs, output):
    u, x, y, lags, reverse = inputs
    ctx.save_for_backward(u, x, y)
    ctx.reverse = reverse


def _correlate_backward(ctx, gc):
    # c[j, k] = sum_i u_i v_j[i-k] is bilinear: du_i = sum_jk gc[j, k] v_j[i-k],
    # FIR filters of v_j in the correlation's direction; dv_j[i] = sum_k
    # gc[j, k] u[i+k], an FIR filter of u in the other direction.
    u, x, y = ctx.saved_tensors
    reverse, last = ctx.reverse, u.dim() - 1
    one = gc.new_ones(1)

    def fir(h, v, rev):
        return lfilter_call(h, one, v, last, v.new_zeros(v.shape[:-1] + (len(h) - 1,)), rev)[0]

    du = fir(gc[0], x, reverse) + fir(gc[1], y, reverse)
    return du, fir(gc[0], u, not reverse), fir(gc[1], u, not reverse), None, None


torch.library.register_autograd("recur::correlate_lags", _correlate_backward, setup_context=_correlate_setup)
_correlate_call = _eager(_correlate_op, _correlate_setup, _correlate_backward)


@_custom_op("recur::lfilter")
def _lfilter_op(
    b: torch.Tensor, a: torch.Tensor, x: torch.Tensor, axis: int, zi: torch.Tensor, reverse: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    return _call_signal.lfilter(b, a, x, axis, zi, reverse=reverse)


@_lfilter_op.register_fake
def _(b, a, x, axis, zi, reverse):
    return torch.empty_like(x), torch.empty_like(zi)


def _lfilter_setup(ctx, inputs, output):
    b, a, x, axis, zi, reverse = inputs
    ctx.save_for_backward(b, a, x, zi, output[0])
    ctx.axis, ctx.reverse = axis, reverse


def _filter_setup(ctx, inputs, output):
    ctx.save_for_backward(*[v for v in inputs if isinstance(v, torch.Tensor)], output[0])
    ctx.axis = inputs[-2]


def _no_state_grad(gzf, name):
    # Checked eagerly; a traced backward (torch.compile) cannot branch on
    # data, and there a gradient reaching zf is dropped.
    from torch._subclasses.fake_tensor import is_fake

    if gzf is None or torch.compiler.is_compiling() or is_fake(gzf):
        return
    if bool((gzf != 0).any()):
        raise NotImplementedError(f"recur.torch.{name}: gradients through zf are not supported (only through y)")


def _lfilter_backward(ctx, gy, gzf):
    _no_state_grad(gzf, "lfilter")
    b, a, x, zi, y = ctx.saved_tensors
    ax = ctx.axis
    order = max(len(a), len(b)) - 1
    g = gy if gy is not None else torch.zeros_like(y)
    db, da, dx, dzi = _lfilter_grads(
        b, a, x.movedim(ax, -1), y.movedim(ax, -1), g.movedim(ax, -1), order, ctx.reverse
    )
    return db, da, dx.movedim(-1, ax), None, dzi.movedim(-1, ax), None


torch.library.register_autograd("recur::lfilter", _lfilter_backward, setup_context=_lfilter_setup)
lfilter_call = _eager(_lfilter_op, _lfilter_setup, _lfilter_backward)


@_custom_op("recur::sosfilt")
def _sosfilt_op(sos: torch.Tensor, x: torch.Tensor, axis: int, zi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _call_signal.sosfilt(sos, x, axis, zi)


@_sosfilt_op.register_fake
def _(sos, x, axis, zi):
    return torch.empty_like(x), torch.empty_like(zi)


def _sosfilt_backward(ctx, gy, gzf):
    _no_state_grad(gzf, "sosfilt")
    sos, x, zi, y = ctx.saved_tensors
    ax = ctx.axis
    xs = x.movedim(ax, -1)
    zs = zi.movedim(ax + 1, -1)  # (n_sections, ..., 2)
    # Each section's input, recomputed: u[j] enters section j.
    u = [xs]
    for j in range(sos.shape[0] - 1):
        u.append(lfilter_call(sos[j, :3], sos[j, 3:], u[j], xs.dim() - 1, zs[j], False)[0])
    g = (gy if gy is not None else torch.zeros_like(y)).movedim(ax, -1)
    dsos = torch.zeros_like(sos)
    dzi = torch.zeros_like(zs)
    for j in reversed(range(sos.shape[0])):
        out = y.movedim(ax, -1) if j == sos.shape[0] - 1 else u[j + 1]
        db, da, g, dzi[j] = _lfilter_grads(sos[j, :3], sos[j, 3:], u[j], out, g, 2)
        dsos[j, :3], dsos[j, 3:] = db, da
    return dsos, g.movedim(-1, ax), None, dzi.movedim(-1, ax + 1)


torch.library.register_autograd("recur::sosfilt", _sosfilt_backward, setup_context=_filter_setup)
sosfilt_call = _eager(_sosfilt_op, _filter_setup, _sosfilt_backward)


# ------------------------------------------------------- tridiagonal solve --


@_custom_op("recur::solve_tridiagonal")
def _solve_op(
    dl: torch.Tensor,
    d: torch.Tensor,
    du: torch.Tensor,
    b: torch.Tensor,
    axis: int,
    algorithm: str,
    pivoting: str,
    periodic: bool,
    refine: bool,
    max_refinement_steps: int,
    details: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, info, pivoted, refinement_steps; the last two are asked of the
    solver only with details (zeros otherwise)."""
    x, info, pivoted, steps = _call_tridiag.solve(
        "recur.linalg.solve_tridiagonal", dl, d, du, b, axis, algorithm, pivoting, periodic, refine,
        max_refinement_steps, details, None, 0
    )
    if not details:
        pivoted, steps = torch.zeros_like(info), torch.zeros_like(info)
    return x, info, pivoted, steps


@_solve_op.register_fake
def _(dl, d, du, b, axis, algorithm, pivoting, periodic, refine, max_refinement_steps, details):
    shape = list(d.shape)
    del shape[axis]
    return (torch.empty_like(b),) + tuple(d.new_empty(shape, dtype=torch.int32) for _ in range(3))


def _solve_setup(ctx, inputs, output):
    dl, d, du, b, axis, *options, details = inputs
    ctx.save_for_backward(dl, d, du, output[0])
    ctx.params = (axis, options, b.dim() == d.dim() + 1)


def _solve_backward(ctx, gx, ginfo, gpivoted, gsteps):
    dl, d, du, x = ctx.saved_tensors
    axis, options, sets = ctx.params
    periodic = options[2]
    # A^T: row i has du_{i-1} below the diagonal and dl_{i+1} above it; the
    # corners come round (A^T's dl[0] is du[n-1], its du[n-1] dl[0]), read
    # only when periodic. Solved with the forward's options: A^T's no-pivot
    # elimination has A's pivots, so it breaks down or passes the growth
    # test where A's does.
    gb = solve_call(du.roll(1, axis), d, dl.roll(-1, axis), gx, axis, *options, False)[0]

    def band(v):  # -gb * v summed over the right-hand sides
        p = -gb * v
        return p.sum(-1) if sets else p

    def neighbour(step):  # x_{i-1} (step 1) or x_{i+1} (step -1); the corner's x when periodic, else 0
        return x.roll(step, axis) if periodic else _shift(x, axis, step)

    return band(neighbour(1)), band(x), band(neighbour(-1)), gb, *(None,) * 7


torch.library.register_autograd("recur::solve_tridiagonal", _solve_backward, setup_context=_solve_setup)
solve_call = _eager(_solve_op, _solve_setup, _solve_backward)
