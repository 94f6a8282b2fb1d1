"""Tridiagonal systems: scipy.linalg.solve_banded's call for one system, and
solve_tridiagonal for batches, on the CPU or the GPU.

recur's solvers do not pivot: they are stable for diagonally dominant and
symmetric positive definite matrices (doc/tridiag.md). A zero or non-finite
pivot is a breakdown, reported for the systems where it happens
(numpy.linalg.LinAlgError naming them, or the info array with
``return_info=True``), never a wrong answer passed off as a solution.
"""

from __future__ import annotations

import numpy as np

from . import _recur
from ._arrays import backend_of, conform, prepare_input, real_dtype, same_layout, state_order, state_out

__all__ = ["solve_banded", "solve_tridiagonal"]

_ALGORITHMS = ("auto", "thomas", "cr", "pcr", "rd", "cr_pcr", "cr_rd", "cr_packed", "pscheme", "thomas_pcr", "cr_split")


def _slice(ndim, axis, s):
    idx = [slice(None)] * ndim
    idx[axis] = s
    return tuple(idx)


def _full_diagonal(fn, be, v, name, shape, axis, first, dtype, like):
    """dl or du of length n (as given) or n-1 (padded to n with a zero where
    recur never reads: dl's first element, du's last), as arrays of d's
    shape."""
    n = shape[axis]
    if tuple(v.shape) == shape:
        return v
    short = shape[:axis] + (n - 1,) + shape[axis + 1 :]
    if tuple(v.shape) != short:
        raise ValueError(f"{fn}: {name} has shape {tuple(v.shape)}; expected {shape} or {short} (length n or n-1)")
    full = be.empty(shape, dtype, like)
    if be.name == "jax":
        pad = [(0, 0)] * len(shape)
        pad[axis] = (1, 0) if first else (0, 1)
        return be.jnp.pad(v, pad)
    full[_slice(len(shape), axis, slice(0, 1) if first else slice(n - 1, n))] = 0
    full[_slice(len(shape), axis, slice(1, n) if first else slice(0, n - 1))] = v
    return full


def solve_tridiagonal(
    dl, d, du, b, *, axis=-1, algorithm="auto", return_info=False, stream=None, threads=0
):
    """Solve a batch of tridiagonal systems  dl_i x_{i-1} + d_i x_i + du_i x_{i+1} = b_i.

    ``d`` holds the main diagonals: the systems run along ``axis``, every
    other axis is the batch. ``dl`` (below the diagonal) and ``du`` (above)
    have length n along ``axis`` (then ``dl[0]`` and ``du[n-1]`` are never
    read, as in LAPACK's gtsv with a leading and trailing slot) or n - 1
    (``dl[j]`` is row j+1's, ``du[j]`` row j's, as scipy's and LAPACK's
    dl/du; they are copied once into length-n arrays). ``b`` has d's shape,
    or d's shape plus a trailing axis of right-hand sides sharing each
    matrix.

    ``algorithm``: 'auto' (recur chooses; doc/tridiag.md) or one of
    'thomas', 'cr', 'pcr', 'rd', 'cr_pcr', 'cr_rd', 'cr_packed', 'pscheme',
    'thomas_pcr', 'cr_split' (GPU; recur.host runs every one as Thomas'
    algorithm or the P-scheme).

    Returns ``x`` (b's shape), or ``(x, info)`` with ``return_info``:
    ``info`` (int32, the batch shape) is 0 for a solved system and j > 0
    when it broke down at row j (1-based); x of such a system is NaN. Without
    ``return_info`` a breakdown raises numpy.linalg.LinAlgError naming the
    systems (on the GPU the check waits for the result).

    >>> import numpy as np, recur.linalg
    >>> n = 5
    >>> x = recur.linalg.solve_tridiagonal(-np.ones((2, n - 1)), 4 * np.ones((2, n)), -np.ones((2, n - 1)), np.ones((2, n)))
    >>> bool(np.allclose(x[0], np.linalg.solve(np.diag(4 * np.ones(n)) - np.eye(n, k=1) - np.eye(n, k=-1), np.ones(n))))
    True
    """
    fn = "recur.linalg.solve_tridiagonal"
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"{fn}: unknown algorithm {algorithm!r}; expected one of {', '.join(_ALGORITHMS)}")
    be = backend_of(d)
    for name, v in (("dl", dl), ("du", du), ("b", b)):
        if backend_of(v).name != be.name:
            raise TypeError(f"{fn}: {name} is an array of another framework than d")
    if any(getattr(v, "requires_grad", False) for v in (dl, d, du, b)):
        import torch

        if torch.is_grad_enabled():
            from . import torch as ops

            return ops.solve_tridiagonal(dl, d, du, b, axis=axis, algorithm=algorithm, return_info=return_info, stream=stream)
    dtype = max((real_dtype(fn, be, v, n) for n, v in (("dl", dl), ("d", d), ("du", du), ("b", b))), key=lambda t: t.itemsize)
    d = prepare_input(fn, be, d, dtype, "d")
    shape = tuple(d.shape)
    ndim = len(shape)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    axis %= ndim
    if shape[axis] == 0:
        raise ValueError(f"{fn}: the systems have no unknowns (d has length 0 along axis {axis})")
    sid = be.stream(d, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{fn}: stream given, but d is in host memory (the call runs on the CPU)")
    dl = _full_diagonal(fn, be, prepare_input(fn, be, dl, dtype, "dl"), "dl", shape, axis, True, dtype, d)
    du = _full_diagonal(fn, be, prepare_input(fn, be, du, dtype, "du"), "du", shape, axis, False, dtype, d)
    b = prepare_input(fn, be, b, dtype, "b")
    sets = tuple(b.shape) == shape + (b.shape[-1],) if len(b.shape) == ndim + 1 else False
    if not sets and tuple(b.shape) != shape:
        raise ValueError(f"{fn}: b has shape {tuple(b.shape)}; expected d's {shape} or {shape} + (nrhs,)")
    if sets:
        # Right-hand sides as a leading axis, each set laid out like d.
        nrhs = b.shape[-1]
        bl = be.permute(b, [ndim] + list(range(ndim)))
        x = be.empty((nrhs,) + shape, dtype, d)
        ref = x[0]
        if be.name == "jax":
            bl = be.contiguous(bl)
        else:
            be.copy_into(x, bl)  # the one copy: then solved in place
            bl = x
    else:
        x = be.empty_like(d, dtype)
        ref = x
        if same_layout(b, x, axis):
            bl = b
        else:
            be.copy_into(x, b)
            bl = x
    dl, d, du = (conform(be, v, ref, axis) for v in (dl, d, du))
    batch_axes = _recur.batch_layout(d, axis)[4]
    bshape = shape[:axis] + shape[axis + 1 :]
    order = state_order(ndim, axis, batch_axes, lambda j: j if j < axis else j - 1, [])
    info, back = state_out(be, bshape, order, np.int32, d)
    _recur.solve_tridiagonal(dl, d, du, bl, x, axis, info, "auto" if algorithm == "auto" else algorithm, sid, threads)
    x = be.finish(x, sid)
    if sets:
        x = be.permute(x, list(range(1, ndim + 1)) + [0])
    info = back(info)
    if return_info:
        return x, info
    host = np.asarray(be.to_host(info))
    bad = np.argwhere(host != 0)
    if len(bad):
        where = ", ".join(
            f"system {tuple(int(i) for i in k) if len(k) != 1 else int(k[0])} at row {int(host[tuple(k)])}" for k in bad[:5]
        )
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise np.linalg.LinAlgError(
            f"{fn}: breakdown (a zero or non-finite pivot; recur does not pivot) in {len(bad)} of {host.size} "
            f"system{'s' if host.size != 1 else ''}: {where}{more}"
        )
    return x


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True, *, stream=None, threads=0):
    """scipy.linalg.solve_banded for tridiagonal matrices, ``l_and_u = (1, 1)``.

    ``ab`` (3, n) in scipy's banded storage: ab[0, 1:] the superdiagonal,
    ab[1] the diagonal, ab[2, :-1] the subdiagonal. ``b`` is (n,) or (n, k).
    Without pivoting (see the module's docstring): a breakdown raises
    numpy.linalg.LinAlgError.

    >>> import numpy as np, scipy.linalg, recur.linalg
    >>> ab = np.array([[0, -1, -1, -1], [4, 4, 4, 4], [-1, -1, -1, 0]], float)
    >>> b = np.arange(4.0)
    >>> bool(np.allclose(recur.linalg.solve_banded((1, 1), ab, b), scipy.linalg.solve_banded((1, 1), ab, b)))
    True
    """
    fn = "recur.linalg.solve_banded"
    if tuple(l_and_u) != (1, 1):
        raise ValueError(f"{fn}: only tridiagonal matrices, l_and_u = (1, 1), not {tuple(l_and_u)}")
    be = backend_of(ab)
    if len(ab.shape) != 2 or ab.shape[0] != 3:
        raise ValueError(f"{fn}: ab must have shape (3, n), not {tuple(ab.shape)}")
    n = ab.shape[1]
    if b.shape[0] != n:
        raise ValueError(f"{fn}: shape of ab {tuple(ab.shape)} and b {tuple(b.shape)} mismatch")
    if len(b.shape) not in (1, 2):
        raise ValueError(f"{fn}: b must be 1-D or 2-D, not {len(b.shape)}-D")
    if check_finite and be.name == "numpy":
        if not (np.isfinite(ab).all() and np.isfinite(b).all()):
            raise ValueError("array must not contain infs or NaNs")
    return solve_tridiagonal(ab[2, :-1], ab[1], ab[0, 1:], b, stream=stream, threads=threads)
