"""recur.linrec: first-order linear recurrences over batches.

The scipy-named layer (the package's docstring draws the layers): the
plain-array fast path, tensors that need gradients to recur.torch, every
other call to recur._call_linrec.
"""

from __future__ import annotations

from . import _call_linrec
from ._arrays import wants_grad

__all__ = ["linrec", "linrec_summary"]


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
        w = _call_linrec.plain(s, t, axis, reverse, threads)
        if w is not None:
            return w
    _call_linrec.check_operands(s, t)
    if wants_grad(s, t, init):
        from . import torch as ops

        return ops.linrec(s, t, axis=axis, reverse=reverse, init=init, return_final=return_final, stream=stream)
    return _call_linrec.linrec(s, t, axis, reverse, init, return_final, stream, threads)


def linrec_summary(s, t, *, axis=-1, reverse=False, stream=None, threads=0):
    """Each sequence of ``linrec(s, t, axis=axis, reverse=reverse)`` as one
    affine map: returns ``(a, b)``, each of the batch shape, such that the
    sequence's last value from any initial value x is ``a * x + b`` (a the
    product of its s, b its last value from 0; with ``reverse`` the steps
    run from the end). Nothing else is computed or written: it is the
    reduction half of reduce-then-scan, for a caller who holds one slice of
    a longer sequence (recur.distributed folds the slices' maps across
    processes). Arguments and dtypes as linrec's; not differentiable.

    >>> import numpy as np, recur
    >>> a, b = recur.linrec_summary(0.5, np.ones(4))
    >>> float(a), float(b)
    (0.0625, 1.875)
    """
    return _call_linrec.summary(s, t, axis, reverse, stream, threads)
