"""recur.distributed.lfilter and sosfilt: recur::dist's filters
(lib/dist/lti_dist.cpp, doc/distributed.md) with the framework's
collectives.

A filter's state after a slice of n samples is A^n z + c: A the state
matrix of one step, read off one step of the filter from each unit state,
and c the state the slice leaves from a zero state (rank 0's from zi). Each
rank runs its slice once for c, the ranks agree and all-gather (n, c), every
rank folds z <- A^n z + c in rank order on the host (float64 for float32
data, longdouble for float64) and runs its slice again from its incoming
state.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import signal as _signal
from ._dist_common import _agree, _as, _group_of, _numpy, _xp, _zeros


def _moveaxis(x, src, dst):
    return x.movedim(src, dst) if _xp(x).__name__ == "torch" else _xp(x).moveaxis(x, src, dst)


def _key(*coefficients):
    """The coefficients' values and shapes, hashed alike on every process."""
    h = hashlib.sha256()
    for c in coefficients:
        v = np.ascontiguousarray(_numpy(c) if hasattr(c, "shape") else np.asarray(c))
        h.update(repr((v.shape, v.dtype.str)).encode())
        h.update(v.tobytes())
    return h.hexdigest()[:16]


class _Filter:
    """How _split drives one filter: its state size k, the call on this rank's
    slice from a state, the state's flat form (batch..., k) and back, and the
    step matrix (k x k, NumPy)."""

    def __init__(self, k, run, flat, unflat, unit_step):
        self.k, self.run, self.flat, self.unflat, self.unit_step = k, run, flat, unflat, unit_step

    def step(self, dtype):
        if self.k == 0:
            return np.zeros((0, 0), dtype)
        after = self.unit_step(np.zeros((self.k, 1), dtype), np.eye(self.k, dtype=dtype))
        return np.asarray(after).T  # column j: the state after one zero sample from e_j


def _split(g, fn, x, zi, f, key, return_final):
    n = c = facts = error = step = None
    try:
        if getattr(x, "requires_grad", False) or getattr(zi, "requires_grad", False):
            raise TypeError("recur.distributed's filters have no autograd: pass tensors that do not require grad")
        ndim = getattr(x, "ndim", 0)
        if not -ndim <= f.given_axis < ndim:
            raise ValueError(f"axis {f.given_axis} is out of range for an array of {ndim} dimensions")
        n = int(x.shape[f.axis])
        _, zf = f.run(zi if g.rank == 0 else None)
        c = f.flat(zf)
        step = f.step(_numpy(c).dtype)
        facts = (tuple(c.shape), str(x.dtype), key)
    except Exception as e:  # agreed on below, so that every rank raises
        error = e
    ns = _agree(g, fn, facts, error, labels="(batch shape and state size, dtype, coefficients)", extra=n)
    cs = _numpy(g.arrays(c))
    fold = np.longdouble if cs.dtype == np.float64 else np.float64
    a = step.astype(fold)
    z = cs[0].astype(fold)
    z_in = z
    for r in range(1, g.size):
        if r == g.rank:
            z_in = z
        z = z @ np.linalg.matrix_power(a, ns[r]).T + cs[r]
    y, _ = f.run(zi if g.rank == 0 else f.unflat(z_in.astype(cs.dtype)))
    return (y, f.unflat(z.astype(cs.dtype))) if return_final else y


def lfilter(b, a, x, *, group=None, axis=-1, zi=None, return_final=False):
    """recur.signal.lfilter over signals split along ``axis`` across the
    ranks of ``group`` (a torch.distributed ProcessGroup, None for the
    default group, or an mpi4py communicator). ``zi`` is read on rank 0;
    with ``return_final`` every rank also gets the whole signals' final
    state (scipy's zf, shaped as zi). No autograd.

    >>> # under torchrun --nproc-per-node 2, each rank holding half of x:
    >>> # y = recur.distributed.lfilter(b, a, x_half)   # equals lfilter(b, a, x)'s half
    """
    g = _group_of(group)
    k = max(len(b), len(a)) - 1
    ax = _axis(x, axis)
    shape = tuple(x.shape[:ax]) + (k,) + tuple(x.shape[ax + 1 :]) if hasattr(x, "shape") else ()

    def run(state):
        return _signal.lfilter(b, a, x, axis=ax, zi=_zeros(shape, x) if state is None else state)

    def unit_step(xs, eye):
        return _signal.lfilter(_host(b, xs), _host(a, xs), xs, axis=-1, zi=eye)[1]

    f = _Filter(k, run, lambda zf: _moveaxis(zf, ax, -1), lambda z: _as(np.moveaxis(z, -1, ax), x, True), unit_step)
    f.axis, f.given_axis = ax, axis
    return _split(g, "recur.distributed.lfilter", x, zi, f, _key(b, a), return_final)


def sosfilt(sos, x, *, group=None, axis=-1, zi=None, return_final=False):
    """recur.signal.sosfilt over signals split along ``axis`` across the
    ranks of ``group``; ``zi`` (shape (n_sections, ..., 2, ...), as
    recur.signal.sosfilt's) is read on rank 0, and with ``return_final``
    every rank gets the whole signals' final state. No autograd.
    """
    g = _group_of(group)
    sections = int(np.shape(_numpy(sos) if hasattr(sos, "shape") else np.asarray(sos))[0])
    k = 2 * sections
    ax = _axis(x, axis)
    shape = (sections,) + tuple(x.shape[:ax]) + (2,) + tuple(x.shape[ax + 1 :]) if hasattr(x, "shape") else ()

    def run(state):
        return _signal.sosfilt(sos, x, axis=ax, zi=_zeros(shape, x) if state is None else state)

    def flat(zf):  # (S, batch.., 2, batch..) -> (batch..., 2 S), section-major
        zf = _moveaxis(_moveaxis(zf, ax + 1, -1), 0, -2)
        return zf.reshape(tuple(zf.shape[:-2]) + (k,))

    def unflat(z):
        z = np.moveaxis(np.moveaxis(z.reshape(z.shape[:-1] + (sections, 2)), -2, 0), -1, ax + 1)
        return _as(z, x, True)

    def unit_step(xs, eye):
        zi0 = eye.reshape(k, sections, 2).transpose(1, 0, 2)
        zf = _signal.sosfilt(_host(sos, xs), xs, axis=-1, zi=np.ascontiguousarray(zi0))[1]
        return zf.transpose(1, 0, 2).reshape(k, k)

    f = _Filter(k, run, flat, unflat, unit_step)
    f.axis, f.given_axis = ax, axis
    return _split(g, "recur.distributed.sosfilt", x, zi, f, _key(sos), return_final)


def _axis(x, axis):
    """axis counted from the front where it is in range (else 0: _split
    raises on every rank)."""
    ndim = getattr(x, "ndim", 0)
    return axis % ndim if -ndim <= axis < ndim else 0


def _host(c, like):
    """Coefficients as a NumPy array of like's dtype (the step runs on the host)."""
    return np.asarray(_numpy(c) if hasattr(c, "shape") else c, like.dtype)
