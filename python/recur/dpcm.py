"""DPCM codecs: residuals of a linear predictor, and their inverse.

Integer samples (int16, int32, uint8) with integer coefficients ``c`` and a
``shift`` (the prediction sum_j c_j x_{i-j} >> shift, exact in int64) are
lossless: ``decode(encode(x, c, shift), c, shift) == x`` exactly, residuals
wrapping around modulo 2^bits. Floating-point samples (float32, float64)
take coefficients of their type, shift 0, and round-trip to rounding.
"""

from __future__ import annotations

import numpy as np

from . import _recur
from ._arrays import backend_of, batch_axes, host_coefficients, output_for, prepare_input, state_in, state_order

__all__ = ["encode", "decode"]

_INTEGER = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.uint8))
_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _codec(fn, kind, x, c, shift, axis, init, stream, threads):
    be = backend_of(x)
    dtype = be.dtype(x)
    if dtype not in _INTEGER + _REAL:
        raise TypeError(f"{fn}: samples of dtype {getattr(x, 'dtype', dtype)}; expected int16, int32, uint8, float32 or float64")
    x = prepare_input(fn, be, x, dtype)
    ndim = len(x.shape)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    axis %= ndim
    sid = be.stream(x, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{fn}: stream given, but the samples are in host memory (the call runs on the CPU)")
    cdt = np.dtype(np.int64) if dtype in _INTEGER else dtype
    cs = host_coefficients(fn, "c", c, cdt)
    x_in, out = output_for(be, x, dtype, axis)
    init_c = None
    if init is not None:
        shape = tuple(x.shape[:axis]) + (len(cs),) + tuple(x.shape[axis + 1 :])
        order = state_order(ndim, axis, batch_axes(be, out, axis), lambda j: j, [axis])
        init_c = be.export(state_in(fn, be, init, shape, order, dtype, out, "init"))
    getattr(_recur, kind)(cs, int(shift), be.export(x_in), be.export(out), axis, init_c, sid, threads)
    return be.finish(out, sid)


def encode(x, c, shift=0, *, axis=-1, init=None, stream=None, threads=0):
    """Residuals e_i = x_i - (sum_j c_j x_{i-j} >> shift) along ``axis``.

    ``c`` = [c_1, ..., c_k]; ``init``: the k samples before each sequence's
    first, newest first (x's shape with ``axis`` replaced by k), else zero.

    >>> import numpy as np, recur.dpcm
    >>> x = np.array([[10, 12, 15, 15]], dtype=np.int16)
    >>> recur.dpcm.encode(x, [2, -1])
    array([[10, -8,  1, -3]], dtype=int16)
    >>> recur.dpcm.decode(recur.dpcm.encode(x, [2, -1]), [2, -1])
    array([[10, 12, 15, 15]], dtype=int16)
    """
    return _codec("recur.dpcm.encode", "dpcm_encode", x, c, shift, axis, init, stream, threads)


def decode(e, c, shift=0, *, axis=-1, init=None, stream=None, threads=0):
    """The samples x_i = e_i + (sum_j c_j x_{i-j} >> shift): encode's
    inverse, with the same ``c``, ``shift`` and ``init``."""
    return _codec("recur.dpcm.decode", "dpcm_decode", e, c, shift, axis, init, stream, threads)
