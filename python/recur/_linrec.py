"""recur.linrec: first-order linear recurrences over batches."""

from __future__ import annotations

import numpy as np

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

__all__ = ["linrec"]


def _is_array(v):
    return getattr(v, "ndim", 0) > 0


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


def _plain_call(s, t, axis, reverse, threads):
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


def linrec(s, t, *, axis=-1, reverse=False, init=None, return_final=False, stream=None, threads=0):
    """The linear recurrence w_i = s_i w_{i-1} + t_i along ``axis``.

    ``s`` and ``t`` are arrays of one shape, or one of them a scalar shared
    by every step. ``init`` is w_{-1} (with ``reverse``, w_n, and the
    recurrence runs w_i = s_i w_{i+1} + t_i from the end): None for zero, a
    scalar, or an array of the batch shape (the array's shape without
    ``axis``, broadcast). Returns ``w``, or ``(w, final)`` with
    ``return_final``, ``final`` the last w of each sequence (batch shape).

    Computed in float32 or float64 (the arrays' precision; integers as
    float64). float16 and bfloat16 arrays (PyTorch tensors, CuPy and NumPy
    float16, JAX arrays) are storage only: each element is converted to
    float32, the recurrence runs in float32, and w and the final value are
    rounded to the arrays' dtype once when stored (scalars and init are
    rounded to that dtype first). PyTorch tensors that require grad are
    differentiable in s, t and init (recur.torch), in these dtypes too.

    >>> import numpy as np, recur
    >>> recur.linrec(0.5, np.ones(4))
    array([1.   , 1.5  , 1.75 , 1.875])
    >>> w, last = recur.linrec(np.full((2, 3), 2.0), np.ones((2, 3)), init=np.array([0.0, 1.0]), return_final=True)
    >>> last
    array([ 7., 15.])
    >>> recur.linrec(0.5, np.ones(4, np.float16))  # float16 storage, float32 arithmetic
    array([1.   , 1.5  , 1.75 , 1.875], dtype=float16)
    """
    if init is None and not return_final and stream is None:
        w = _plain_call(s, t, axis, reverse, threads)
        if w is not None:
            return w
    fn = "recur.linrec"
    arrays = [v for v in (s, t) if _is_array(v)]
    if not arrays:
        raise TypeError(f"{fn}: at least one of s and t must be an array with a sequence axis")
    if (
        getattr(s, "requires_grad", False)
        or getattr(t, "requires_grad", False)
        or (init is not None and getattr(init, "requires_grad", False))
    ):
        import torch

        if torch.is_grad_enabled():
            from . import torch as ops

            return ops.linrec(s, t, axis=axis, reverse=reverse, init=init, return_final=return_final, stream=stream)
    be = backend_of(arrays[0])
    for v in arrays[1:]:
        if backend_of(v).name != be.name:
            raise TypeError(f"{fn}: s and t are arrays of different frameworks")
    dtype = common_dtype(real_dtype(fn, be, v, n, low=True) for n, v in (("s", s), ("t", t)) if _is_array(v))
    if be.name == "numpy" and dtype == BFLOAT16:
        raise TypeError(
            f"{fn}: NumPy bfloat16 arrays are not taken (NumPy has no bfloat16 of its own); "
            "use float16, float32, or a PyTorch or JAX bfloat16 array"
        )
    ops = [prepare_input(fn, be, v, dtype, n) if _is_array(v) else float(v) for n, v in (("s", s), ("t", t))]
    ref = next(v for v in ops if not isinstance(v, float))
    shape = tuple(ref.shape)
    for n, v in zip(("s", "t"), ops):
        if not isinstance(v, float) and tuple(v.shape) != shape:
            raise ValueError(f"{fn}: s has shape {tuple(ops[0].shape)}, t {tuple(ops[1].shape)}; they must be equal")
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    axis %= ndim
    sid = be.stream(ref, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{fn}: stream given, but the arrays are in host memory (the call runs on the CPU)")
    w = be.empty_like(ref, dtype)
    # Inputs laid out like w (w may be one of them: the first that needs a
    # copy is copied into w and the recurrence runs in place).
    spare = w
    for i, v in enumerate(ops):
        if isinstance(v, float) or same_layout(be, v, w, axis):
            continue
        if spare is not None:
            be.copy_into(spare, v)
            ops[i], spare = spare, None
        else:
            ops[i] = conform(be, v, w, axis)
    (init_arr,), final, back = _states(fn, be, w, axis, dtype, [("init", init)], return_final)
    init_value = float(init) if init is not None and init_arr is None else 0.0
    ex = be.export
    _recur.linrec(
        *(v if isinstance(v, float) else ex(v) for v in ops), ex(w), axis, bool(reverse), init_arr, init_value,
        None if final is None else ex(final), sid, threads
    )
    w = be.finish(w, sid)
    return (w, back(final)) if return_final else w


def adjoint(s, w, g, *, axis, reverse=False, init=None, final_gradient=None, want_ds=True,
            want_init_gradient=False, stream=None, threads=0):
    """The gradient of ``linrec(s, t, axis=axis, reverse=reverse,
    init=init)`` from its result ``w`` and ``g``, the gradient reaching w
    (``final_gradient``, the one reaching its final value, or None), in one
    fused call (recur::linrec_adjoint): returns ``(dt, ds, dinit)``, ds
    None unless ``want_ds``, dinit (the batch shape) None unless
    ``want_init_gradient``. s is an array of g's shape or a scalar, init
    None, a scalar or an array of the batch shape; every array of g's
    framework, device and dtype (recur.torch's backward passes them so).
    """
    fn = "recur.linrec (backward)"
    be = backend_of(g)
    dtype = be.dtype(g)
    axis %= g.ndim
    sid = be.stream(g, stream)
    dt = be.empty_like(g, dtype)
    ds = be.empty_like(g, dtype) if want_ds else None
    # Every array laid out like dt (conform copies one that is not).
    s = s if not _is_array(s) else conform(be, prepare_input(fn, be, s, dtype, "s"), dt, axis)
    w = conform(be, prepare_input(fn, be, w, dtype, "w"), dt, axis) if want_ds else None
    g = conform(be, prepare_input(fn, be, g, dtype, "g"), dt, axis)
    (init_arr, fg), ig, back = _states(
        fn, be, dt, axis, dtype, [("init", init), ("final_gradient", final_gradient)], want_init_gradient
    )
    init_value = float(init) if init is not None and init_arr is None else 0.0
    ex = be.export
    _recur.linrec_adjoint(
        s if not _is_array(s) else ex(s), None if w is None else ex(w), ex(g), ex(dt),
        None if ds is None else ex(ds), axis, bool(reverse), init_arr, init_value, fg,
        None if ig is None else ex(ig), sid, threads
    )
    dt = be.finish(dt, sid)
    return dt, ds, None if ig is None else back(ig)
