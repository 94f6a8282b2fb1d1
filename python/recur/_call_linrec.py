"""linrec's C++ calls: recur._recur.linrec and linrec_adjoint on the arrays
of one framework, prepared here (dtype, layout, outputs, per-sequence
states).

A layer below recur.linrec and the autograd ops (the package's docstring
draws the layers): nothing here looks at gradients; a tensor that requires
grad is read detached.
"""

from __future__ import annotations

from . import _recur
from ._arrays import (
    BFLOAT16,
    backend_of,
    batch_axes,
    common_dtype,
    conform,
    plain_backend,
    prepare_input,
    real_dtype,
    same_layout,
    state_in,
    state_order,
    state_out,
)

FN = "recur.linrec"


def is_array(v):
    """True for an array with at least one axis (s or t; else a scalar)."""
    return getattr(v, "ndim", 0) > 0


def check_operands(s, t):
    """The arrays among s and t; at least one must be an array."""
    arrays = [v for v in (s, t) if is_array(v)]
    if not arrays:
        raise TypeError(f"{FN}: at least one of s and t must be an array with a sequence axis")
    return arrays


def _states(fn, be, ref, axis, dtype, given, want_out):
    """The per-sequence state arrays of a call on ``ref`` along ``axis``, in
    the order its layout numbers the sequences: each (name, value) of
    ``given`` that is an array (0-d included: one value for every sequence),
    as the extension takes it (None for None or a Python number), and with
    ``want_out`` an output array and the function that gives it the batch
    shape (else None and None)."""

    def is_state(v):
        return v is not None and not isinstance(v, (int, float))

    if not want_out and not any(is_state(v) for _, v in given):
        return [None] * len(given), None, None
    shape = tuple(ref.shape)
    bshape = shape[:axis] + shape[axis + 1 :]
    order = state_order(len(shape), axis, batch_axes(be, ref, axis), lambda j: j if j < axis else j - 1, [])
    ins = [
        be.export(state_in(fn, be, v, bshape, order, dtype, ref, name)) if is_state(v) else None for name, v in given
    ]
    out, back = state_out(be, bshape, order, dtype, ref) if want_out else (None, None)
    return ins, out, back


def plain(s, t, axis, reverse, threads):
    """linrec(s, t) of a plain t (and s a plain array of t's type, shape and
    dtype, or a Python number) on the current stream: w allocated like t,
    nothing else prepared (the extension checks the devices). None for any
    other call."""
    be = plain_backend(t)
    if be is None:
        return None
    if type(s) is type(t):
        if s.dtype != t.dtype or s.shape != t.shape or not be.plain(s):
            return None
    elif type(s) is not float and type(s) is not int:
        return None
    ndim = t.ndim
    if not -ndim <= axis < ndim:
        return None
    ex = be.export_plain
    w = be.empty_plain(t)
    # The stream of the first array, as in the general path.
    if type(s) is type(t):
        sv, sid = ex(s), be.stream(s, None)
    else:
        sv, sid = float(s), be.stream(t, None)
    _recur.linrec(sv, ex(t), ex(w), axis % ndim, bool(reverse), None, 0.0, None, sid, threads)
    return w


def _operands(s, t, axis):
    """(backend, dtype, [s, t], reference array, axis): s and t in the call's
    dtype (scalars as floats), of one framework and shape, axis an index of
    their axes."""
    arrays = check_operands(s, t)
    be = backend_of(arrays[0])
    for v in arrays[1:]:
        if backend_of(v).name != be.name:
            raise TypeError(f"{FN}: s and t are arrays of different frameworks")
    dtype = common_dtype(real_dtype(FN, be, v, n, low=True) for n, v in (("s", s), ("t", t)) if is_array(v))
    if be.name == "numpy" and dtype == BFLOAT16:
        raise TypeError(
            f"{FN}: NumPy bfloat16 arrays are not taken (NumPy has no bfloat16 of its own); "
            "use float16, float32, or a PyTorch or JAX bfloat16 array"
        )
    ops = [prepare_input(FN, be, v, dtype, n) if is_array(v) else float(v) for n, v in (("s", s), ("t", t))]
    ref = next(v for v in ops if not isinstance(v, float))
    shape = tuple(ref.shape)
    for v in ops:
        if not isinstance(v, float) and tuple(v.shape) != shape:
            raise ValueError(f"{FN}: s has shape {tuple(ops[0].shape)}, t {tuple(ops[1].shape)}; they must be equal")
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{FN}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return be, dtype, ops, ref, axis % ndim


def _laid_out_like(be, ops, w, axis):
    """ops with each array laid out like w: w may be one of them (the first
    that needs a copy is copied into w and the recurrence runs in place)."""
    spare = w
    for i, v in enumerate(ops):
        if isinstance(v, float) or same_layout(be, v, w, axis):
            continue
        if spare is not None:
            be.copy_into(spare, v)
            ops[i], spare = spare, None
        else:
            ops[i] = conform(be, v, w, axis)
    return ops


def linrec(s, t, axis, reverse, init, return_final, stream, threads):
    """recur.linrec's general path (arguments as its), on arrays of any
    framework, layout and dtype it takes: ``w``, or ``(w, final)`` with
    return_final."""
    be, dtype, ops, ref, axis = _operands(s, t, axis)
    sid = be.stream(ref, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{FN}: stream given, but the arrays are in host memory (the call runs on the CPU)")
    w = be.empty_like(ref, dtype)
    ops = _laid_out_like(be, ops, w, axis)
    (init_arr,), final, back = _states(FN, be, w, axis, dtype, [("init", init)], return_final)
    init_value = float(init) if init is not None and init_arr is None else 0.0
    ex = be.export
    _recur.linrec(
        *(v if isinstance(v, float) else ex(v) for v in ops), ex(w), axis, bool(reverse), init_arr, init_value,
        None if final is None else ex(final), sid, threads
    )
    w = be.finish(w, sid)
    return (w, back(final)) if return_final else w


def summary(s, t, axis, reverse, stream, threads):
    """recur.linrec_summary (arguments as its): ``(a, b)``, each of the batch
    shape, on arrays of any framework, layout and dtype linrec takes."""
    fn = "recur.linrec_summary"
    be, dtype, ops, ref, axis = _operands(s, t, axis)
    sid = be.stream(ref, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{fn}: stream given, but the arrays are in host memory (the call runs on the CPU)")
    ops = [v if isinstance(v, float) or v is ref else conform(be, v, ref, axis) for v in ops]
    shape = tuple(ref.shape)
    bshape = shape[:axis] + shape[axis + 1 :]
    order = state_order(len(shape), axis, batch_axes(be, ref, axis), lambda j: j if j < axis else j - 1, [])
    a, back = state_out(be, bshape, order, dtype, ref)
    b, _ = state_out(be, bshape, order, dtype, ref)
    ex = be.export
    _recur.linrec_summary(
        *(v if isinstance(v, float) else ex(v) for v in ops), ex(a), ex(b), axis, bool(reverse), sid, threads
    )
    a, b = be.finish(a, sid), be.finish(b, sid)
    return back(a), back(b)


def adjoint(s, w, g, *, axis, reverse=False, init=None, final_gradient=None, want_ds=True,
            want_init_gradient=False, stream=None, threads=0):
    """The gradient of ``linrec(s, t, axis=axis, reverse=reverse,
    init=init)`` from its result ``w`` and ``g``, the gradient reaching w
    (``final_gradient``, the one reaching its final value, or None), in one
    fused call (recur::linrec_adjoint): returns ``(dt, ds, dinit)``, ds
    None unless ``want_ds``, dinit (the batch shape) None unless
    ``want_init_gradient``. s is an array of g's shape or a scalar, init
    None, a scalar or an array of the batch shape; every array of g's
    framework, device and dtype (the autograd ops pass them so).
    """
    fn = "recur.linrec (backward)"
    be = backend_of(g)
    dtype = be.dtype(g)
    axis %= g.ndim
    sid = be.stream(g, stream)
    dt = be.empty_like(g, dtype)
    ds = be.empty_like(g, dtype) if want_ds else None
    # Every array laid out like dt (conform copies one that is not).
    s = s if not is_array(s) else conform(be, prepare_input(fn, be, s, dtype, "s"), dt, axis)
    w = conform(be, prepare_input(fn, be, w, dtype, "w"), dt, axis) if want_ds else None
    g = conform(be, prepare_input(fn, be, g, dtype, "g"), dt, axis)
    (init_arr, fg), ig, back = _states(
        fn, be, dt, axis, dtype, [("init", init), ("final_gradient", final_gradient)], want_init_gradient
    )
    init_value = float(init) if init is not None and init_arr is None else 0.0
    ex = be.export
    _recur.linrec_adjoint(
        s if not is_array(s) else ex(s), None if w is None else ex(w), ex(g), ex(dt),
        None if ds is None else ex(ds), axis, bool(reverse), init_arr, init_value, fg,
        None if ig is None else ex(ig), sid, threads
    )
    dt = be.finish(dt, sid)
    return dt, ds, None if ig is None else back(ig)
