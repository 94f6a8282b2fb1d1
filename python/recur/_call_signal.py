"""The filters' C++ calls: recur._recur's lfilter, sosfilt, filtfilt,
sosfiltfilt and correlate_lags on the arrays of one framework, prepared here
(dtype, layout, output, states; coefficients read on the host).

A layer below recur.signal and the autograd ops (the package's docstring
draws the layers): nothing here looks at gradients; a tensor that requires
grad is read detached. lfilter also runs in reverse, and correlate_lags
exists, for the autograd ops' backward passes.
"""

from __future__ import annotations

from . import _recur
from ._arrays import (
    backend_of,
    batch_axes,
    conform,
    host_coefficients,
    output_for,
    plain_backend,
    prepare_input,
    real_dtype,
    state_in,
    state_order,
    state_out,
)


def prepare(fn, x, axis, stream):
    """(backend, dtype, x in that dtype, stream handle, axis index) of a
    filter call on x."""
    be = backend_of(x)
    dtype = real_dtype(fn, be, x)
    x = prepare_input(fn, be, x, dtype)
    s = be.stream(x, stream)
    if stream is not None and s is None:
        raise ValueError(f"{fn}: stream given, but x is in host memory (the call runs on the CPU)")
    ndim = len(x.shape)
    if ndim == 0:
        raise ValueError(f"{fn}: x must have at least one dimension")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return be, dtype, x, s, axis % ndim


def _plain_filter(fn, kind, coeffs, x, axis, threads, reverse):
    """The filter of a plain x without zi, on the current stream: y
    allocated like x. None for any other x or axis."""
    be = plain_backend(x)
    if be is None or not -x.ndim <= axis < x.ndim:
        return None
    dtype = be.dtype(x)
    c = [host_coefficients(fn, name, v, dtype, nd) for name, v, nd in coeffs]
    y = be.empty_plain(x)
    ex = be.export_plain
    getattr(_recur, kind)(*c, ex(x), ex(y), axis % x.ndim, None, None, be.stream(x, None), threads, reverse)
    return y


def _filter(fn, kind, coeffs, x, axis, zi, per_shape, stream, threads, reverse):
    """lfilter and sosfilt (kind): coeffs are (name, value, dimensions) of
    the coefficients; per_shape(x_shape, axis, coefficients) is scipy's zi
    shape and the permutation's batch and state positions. Returns y, or
    (y, zf) with zi. reverse runs each sequence from its last element to
    its first."""
    if zi is None and stream is None:
        y = _plain_filter(fn, kind, coeffs, x, axis, threads, reverse)
        if y is not None:
            return y
    be, dtype, x, s, axis = prepare(fn, x, axis, stream)
    c = [host_coefficients(fn, name, v, dtype, nd) for name, v, nd in coeffs]
    x_in, y = output_for(be, x, dtype, axis)
    ex = be.export
    if zi is None:
        getattr(_recur, kind)(*c, ex(x_in), ex(y), axis, None, None, s, threads, reverse)
        return be.finish(y, s)
    shape, batch_pos, state_pos = per_shape(tuple(x.shape), axis, c)
    order = state_order(len(x.shape), axis, batch_axes(be, y, axis), batch_pos, state_pos)
    zi_c = state_in(fn, be, zi, shape, order, dtype, y, "zi")
    zf_c, back = state_out(be, shape, order, dtype, y)
    getattr(_recur, kind)(*c, ex(x_in), ex(y), axis, ex(zi_c), ex(zf_c), s, threads, reverse)
    return be.finish(y, s), back(zf_c)


def _lfilter_state(shape, axis, c):
    b, a = c
    m = max(len(a), len(b)) - 1
    return shape[:axis] + (m,) + shape[axis + 1 :], (lambda j: j), [axis]


def _sosfilt_state(shape, axis, c):
    ns = c[0].shape[0]
    return (ns,) + shape[:axis] + (2,) + shape[axis + 1 :], (lambda j: j + 1), [0, axis + 1]


def lfilter(b, a, x, axis=-1, zi=None, stream=None, threads=0, reverse=False):
    """recur.signal.lfilter's call: y, or (y, zf) with zi. With reverse,
    each sequence runs from its last element to its first:
    flip(lfilter(b, a, flip(x), zi)) without the copies, zf the state after
    the last element filtered (the autograd ops' backward passes; scipy's
    lfilter has no direction)."""
    coeffs = [("b", b, 1), ("a", a, 1)]
    return _filter("recur.signal.lfilter", "lfilter", coeffs, x, axis, zi, _lfilter_state, stream, threads, reverse)


def sosfilt(sos, x, axis=-1, zi=None, stream=None, threads=0):
    """recur.signal.sosfilt's call: y, or (y, zf) with zi."""
    coeffs = [("sos", sos, 2)]
    return _filter("recur.signal.sosfilt", "sosfilt", coeffs, x, axis, zi, _sosfilt_state, stream, threads, False)


def forward_backward(fn, kind, coeffs, x, axis, padtype, padlen, stream, threads):
    """filtfilt and sosfiltfilt (kind), coeffs as _filter's."""
    be, dtype, x, s, axis = prepare(fn, x, axis, stream)
    c = [host_coefficients(fn, name, v, dtype, nd) for name, v, nd in coeffs]
    x_in, y = output_for(be, x, dtype, axis)
    getattr(_recur, kind)(*c, be.export(x_in), be.export(y), axis, padtype, padlen, s, threads)
    return be.finish(y, s)


def correlate_lags(u, vs, lags, axis=-1, reverse=False):
    """The lagged correlations c[j, k] = sum over the batch and i >= k of
    u[i] vs[j][i - k] along axis (reverse: i counted from each sequence's
    end): an array of shape (len(vs), lags), u's type, on u's device. The
    coefficient gradients of lfilter (the autograd ops)."""
    fn = "recur.signal.correlate_lags"
    be = backend_of(u)
    dtype = real_dtype(fn, be, u, "u")
    u = prepare_input(fn, be, u, dtype, "u")
    s = be.stream(u, None)
    ax = axis % len(u.shape)
    ex = be.export
    layout = _recur.batch_layout(ex(u), ax)
    if layout is None:  # a broadcast or reversed view: copied
        u = be.contiguous(u)
        layout = _recur.batch_layout(ex(u), ax)
    vs = [conform(be, prepare_input(fn, be, v, dtype, "v"), u, ax) for v in vs]
    parts = 1
    for count, _ in layout[5]:
        parts *= count
    c = be.empty((parts, len(vs), lags), dtype, u)
    _recur.correlate_lags(ex(u), [ex(v) for v in vs], ex(c), ax, lags, reverse, s, 0)
    return be.finish(c.sum(0) if parts > 1 else c[0], s)
