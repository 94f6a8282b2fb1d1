"""Tridiagonal systems: scipy.linalg.solve_banded's call for one system, and
solve_tridiagonal for batches, on the CPU or the GPU.

Pivoting (``pivoting=``; doc/tridiag.md, "Pivoting"):

- 'auto' (the default): each system is solved by the fast no-pivot
  elimination while its LU passes a growth test (the growth of the
  factorisation over the matrix's own size at most 16, which keeps the
  backward error within a few eps; diagonally dominant and symmetric positive
  definite matrices always pass, and are solved exactly as with 'none'); the
  systems that fail it, or break down, are solved again with partial
  pivoting, as LAPACK's gtsv (scipy.linalg.solve_banded).
- 'partial': every system with partial pivoting (algorithm 'auto' or
  'thomas').
- 'none': no pivoting, stable for diagonally dominant and symmetric positive
  definite matrices; on others the answer can be far off without a
  breakdown.

A breakdown is reported for the systems where it happens
(numpy.linalg.LinAlgError naming them, or the info array with
``return_info=True``), never a wrong answer passed off as a solution: with
pivoting it means the matrix is singular to working precision, with
``pivoting='none'`` a zero or non-finite pivot. ``periodic=True`` solves
cyclic systems, ``refine=True`` float64 systems in float32 with float64
iterative refinement.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import _recur
from ._arrays import (
    backend_of,
    batch_axes,
    conform,
    plain_backend,
    prepare_input,
    real_dtype,
    same_layout,
    state_order,
    state_out,
)

__all__ = ["TridiagonalDetails", "solve_banded", "solve_tridiagonal"]

# The algorithm names, "auto" first: the C++ list (recur::tridiag_algorithms).
_ALGORITHMS = _recur.tridiag_algorithms
# The pivoting names, as recur::to_string spells them.
_PIVOTING = ("auto", "none", "partial")
# "automatic" is taken for "auto" in both options, as the C++ parse functions take it.
_ALIASES = {"automatic": "auto"}


class TridiagonalDetails(NamedTuple):
    """What ``solve_tridiagonal(..., return_details=True)`` reports per
    system (int32 arrays of the batch shape, the caller's array type).

    ``info``: 0 for a solved system, j > 0 for a breakdown at row j
    (1-based), as with ``return_info=True``. ``pivoted``: 1 where the system
    was solved with partial pivoting, else 0. ``refinement_steps``: the
    corrections ``refine=True`` took (the most over the system's right-hand
    sides), -1 where it fell back to the float64 solve, 0 without
    refinement.
    """

    info: Any
    pivoted: Any
    refinement_steps: Any


def _name(v):
    """An option's name with the alias replaced (anything else as it is)."""
    return _ALIASES.get(v, v) if isinstance(v, str) else v


def _check_options(fn, algorithm, pivoting, max_refinement_steps, return_info, return_details):
    """The names of `algorithm` and `pivoting` (the alias replaced), after the
    checks of the options that need no array."""
    if return_info and return_details:
        raise ValueError(f"{fn}: return_info and return_details both given; return_details includes info")
    algorithm, pivoting = _name(algorithm), _name(pivoting)
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"{fn}: unknown algorithm {algorithm!r}; expected one of {', '.join(_ALGORITHMS)}")
    if pivoting not in _PIVOTING:
        raise ValueError(f"{fn}: unknown pivoting {pivoting!r}; expected 'auto', 'none' or 'partial'")
    steps = max_refinement_steps
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 0 <= steps < 2**31:
        raise ValueError(f"{fn}: max_refinement_steps must be an integer from 0 to 2**31 - 1, not {steps!r}")
    return algorithm, pivoting


def _check_periodic(fn, n, axis, diagonals):
    """periodic=True: n >= 3, and dl and du of length n (their corners are read)."""
    if n < 3:
        raise ValueError(
            f"{fn}: periodic=True needs n >= 3 (n = {n} along axis {axis}): a periodic system of 1 or 2 "
            "unknowns is a plain one with dl[0] and du[n-1] added to its other entries"
        )
    for name, length in diagonals:
        if length != n:
            raise ValueError(
                f"{fn}: periodic=True reads dl[0] (row 0's coefficient of x[n-1]) and du[n-1] (row n-1's of x[0]): "
                f"{name} must have length n = {n} along axis {axis}, not {length}"
            )


def _breakdown(fn, info, pivoting, periodic):
    """The LinAlgError for a host info array with nonzero entries."""
    bad = np.argwhere(info != 0)
    where = ", ".join(
        f"system {tuple(int(i) for i in k) if len(k) != 1 else int(k[0])} at row {int(info[tuple(k)])}" for k in bad[:5]
    )
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    if pivoting == "none":
        what = (
            "breakdown without pivoting (a zero or non-finite pivot; pivoting='auto' or 'partial' solves such a "
            "system unless it is singular)"
        )
    else:
        what = "singular matrix (a zero or non-finite pivot with partial pivoting"
        what += "; periodic: or row n, a vanishing correction)" if periodic else ")"
    return np.linalg.LinAlgError(
        f"{fn}: {what} in {len(bad)} of {info.size} system{'s' if info.size != 1 else ''}: {where}{more}"
    )


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


def _plain_call(dl, d, du, b, axis, algorithm, piv, max_refinement_steps, threads):
    """(backend, x, info) of a solve on plain arrays dl, d, du and b of one
    type, shape and dtype along their last axis (not periodic, not
    refined), on the current stream; None for any other call."""
    be = plain_backend(d)
    if be is None:
        return None
    shape = d.shape
    for v in (dl, du, b):
        if type(v) is not type(d) or v.dtype != d.dtype or v.shape != shape or not be.plain(v):
            return None
    ndim = d.ndim
    if (axis != -1 and axis != ndim - 1) or shape[-1] == 0:
        return None
    sid = be.stream(d, None)
    bshape = tuple(shape[:-1])  # the batch, numbered as the layout numbers it
    x = be.empty_plain(d)
    info = be.empty(bshape, np.int32, d)
    # As in the general path: on the GPU pivoted is asked for under 'auto'.
    pivoted = be.empty(bshape, np.int32, d) if piv == "auto" and sid is not None else None
    ex = be.export_plain
    _recur.solve_tridiagonal(
        ex(dl), ex(d), ex(du), ex(b), ex(x), ndim - 1, be.export(info), algorithm, piv, False, False,
        int(max_refinement_steps), None if pivoted is None else be.export(pivoted), None, sid, threads
    )
    return be, x, info


def _checked(fn, be, x, info, piv, periodic):
    """x, or the LinAlgError naming the systems that broke down (waits for
    info on the GPU)."""
    host = np.asarray(be.to_host(info))
    if host.any():
        raise _breakdown(fn, host, piv, periodic)
    return x


def solve_tridiagonal(
    dl, d, du, b, *, axis=-1, algorithm="auto", pivoting="auto", periodic=False, refine=False, max_refinement_steps=10,
    return_info=False, return_details=False, stream=None, threads=0
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

    ``algorithm``: 'auto' (the default: recur chooses; doc/tridiag.md) or
    one of 'thomas', 'cr', 'pcr', 'rd', 'cr_pcr', 'cr_rd', 'cr_packed',
    'pscheme', 'thomas_pcr', 'cr_split' (GPU; recur.host runs every one as
    Thomas' algorithm or the P-scheme), 'bondeli' (Bondeli's divide and
    conquer): the C++ library's list, recur._recur.tridiag_algorithms.

    ``pivoting``: 'auto' (the default), 'none' or 'partial' (see the
    module's docstring). Both options take 'automatic' for 'auto'.
    'partial', ``periodic`` and ``refine`` need algorithm 'auto' or
    'thomas'.

    ``periodic=True``: cyclic systems, ``dl[0]`` multiplies x[n-1] in row 0
    and ``du[n-1]`` multiplies x[0] in row n-1; dl and du must then have
    length n, and n >= 3.

    ``refine=True`` (float64 only): each system is factored and solved in
    float32 and the solution corrected with float64 residuals until its
    backward error is the float64 solve's, at most ``max_refinement_steps``
    corrections per right-hand side, after which the system is solved in
    float64 instead. The accuracy of float64 for a float32 factorisation;
    it pays on GPUs with slow float64 arithmetic (doc/tridiag.md).

    Returns ``x`` (b's shape); ``(x, info)`` with ``return_info``: ``info``
    (int32, the batch shape) is 0 for a solved system and j > 0 when it
    broke down at row j (1-based); x of such a system is NaN. With
    ``return_details``, ``(x, TridiagonalDetails(info, pivoted,
    refinement_steps))``: also which systems were solved with partial
    pivoting and the refinement's corrections. Without either a breakdown
    raises numpy.linalg.LinAlgError naming the systems (on the GPU the check
    waits for the result).

    >>> import numpy as np, recur.linalg
    >>> n = 5
    >>> x = recur.linalg.solve_tridiagonal(-np.ones((2, n - 1)), 4 * np.ones((2, n)), -np.ones((2, n - 1)), np.ones((2, n)))
    >>> bool(np.allclose(x[0], np.linalg.solve(np.diag(4 * np.ones(n)) - np.eye(n, k=1) - np.eye(n, k=-1), np.ones(n))))
    True

    A tiny first pivot: the default pivots that system (and only that one),
    as LAPACK does; ``pivoting='none'`` loses most digits.

    >>> dl, du = np.ones((2, n - 1)), np.ones((2, n - 1))
    >>> d = np.full((2, n), 4.0)
    >>> d[1, 0] = 1e-14
    >>> x, details = recur.linalg.solve_tridiagonal(dl, d, du, np.ones((2, n)), return_details=True)
    >>> details.pivoted
    array([0, 1], dtype=int32)
    >>> A = np.diag(d[1]) + np.eye(n, k=1) + np.eye(n, k=-1)
    >>> bool(np.allclose(x[1], np.linalg.solve(A, np.ones(n)), rtol=1e-14))
    True
    >>> x = recur.linalg.solve_tridiagonal(dl, d, du, np.ones((2, n)), pivoting="none")
    >>> bool(np.allclose(x[1], np.linalg.solve(A, np.ones(n)), rtol=1e-6))
    False

    A periodic system (the corners dl[0] and du[n-1] are read):

    >>> dl, du, d = np.full(n, -1.0), np.full(n, -1.0), np.full(n, 3.0)
    >>> x = recur.linalg.solve_tridiagonal(dl, d, du, np.arange(n, dtype=float), periodic=True)
    >>> A = 3 * np.eye(n) - np.roll(np.eye(n), 1, axis=1) - np.roll(np.eye(n), -1, axis=1)
    >>> bool(np.allclose(A @ x, np.arange(n)))
    True
    """
    fn = "recur.linalg.solve_tridiagonal"
    algorithm, piv = _check_options(fn, algorithm, pivoting, max_refinement_steps, return_info, return_details)
    periodic, refine = bool(periodic), bool(refine)
    if not periodic and not refine and not return_details and stream is None:
        plain = _plain_call(dl, d, du, b, axis, algorithm, piv, max_refinement_steps, threads)
        if plain is not None:
            be, x, info = plain
            return (x, info) if return_info else _checked(fn, be, x, info, piv, periodic)
    be = backend_of(d)
    for name, v in (("dl", dl), ("du", du), ("b", b)):
        if backend_of(v).name != be.name:
            raise TypeError(f"{fn}: {name} is an array of another framework than d")
    if any(getattr(v, "requires_grad", False) for v in (dl, d, du, b)):
        import torch

        if torch.is_grad_enabled():
            from . import torch as ops

            opts = dict(algorithm=algorithm, pivoting=pivoting, periodic=periodic, refine=refine)
            opts.update(max_refinement_steps=max_refinement_steps, return_info=return_info, return_details=return_details)
            return ops.solve_tridiagonal(dl, d, du, b, axis=axis, stream=stream, **opts)
    dtype = max((real_dtype(fn, be, v, n) for n, v in (("dl", dl), ("d", d), ("du", du), ("b", b))), key=lambda t: t.itemsize)
    if refine and dtype != np.float64:
        raise ValueError(
            f"{fn}: refine=True needs float64 systems (these are {dtype}): it factors in float32 and corrects "
            "with float64 residuals"
        )
    d = prepare_input(fn, be, d, dtype, "d")
    shape = tuple(d.shape)
    ndim = len(shape)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    axis %= ndim
    if shape[axis] == 0:
        raise ValueError(f"{fn}: the systems have no unknowns (d has length 0 along axis {axis})")
    if periodic:
        lengths = [(name, v.shape[axis] if len(v.shape) == ndim else None) for name, v in (("dl", dl), ("du", du))]
        _check_periodic(fn, shape[axis], axis, [(name, k) for name, k in lengths if k is not None])
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
        if same_layout(be, b, x, axis):
            bl = b
        else:
            be.copy_into(x, b)
            bl = x
    dl, d, du = (conform(be, v, ref, axis) for v in (dl, d, du))
    bshape = shape[:axis] + shape[axis + 1 :]
    order = state_order(ndim, axis, batch_axes(be, d, axis), lambda j: j if j < axis else j - 1, [])
    info, back = state_out(be, bshape, order, np.int32, d)
    # pivoted and refinement_steps are asked of the solver only where they
    # can be nonzero; otherwise they are known zeros. On the GPU 'auto' tests
    # inside the fast forms, but the forms that do not screen as they solve
    # (rd, cr_rd, bondeli, systems too long for one block) run the test only
    # where pivoted is asked for (doc/tridiag.md), so it always is there: a
    # scipy drop-in pivots where it must.
    want_pivoted = piv != "none" and (return_details or (piv == "auto" and sid is not None))
    pivoted = state_out(be, bshape, order, np.int32, d)[0] if want_pivoted else None
    steps = state_out(be, bshape, order, np.int32, d)[0] if return_details and refine else None
    ex = be.export
    _recur.solve_tridiagonal(
        ex(dl), ex(d), ex(du), ex(bl), ex(x), axis, ex(info), algorithm, piv, periodic, refine,
        int(max_refinement_steps), None if pivoted is None else ex(pivoted), None if steps is None else ex(steps), sid,
        threads
    )
    x = be.finish(x, sid)
    if sets:
        x = be.permute(x, list(range(1, ndim + 1)) + [0])
    info = back(info)
    if return_details:

        def known(v):
            return be.asarray(np.zeros(bshape, np.int32), np.int32, d) if v is None else back(v)

        return x, TridiagonalDetails(info, known(pivoted), known(steps))
    if return_info:
        return x, info
    return _checked(fn, be, x, info, piv, periodic)


def solve_banded(
    l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True, *, pivoting="auto", stream=None, threads=0
):
    """scipy.linalg.solve_banded for tridiagonal matrices, ``l_and_u = (1, 1)``.

    ``ab`` (3, n) in scipy's banded storage: ab[0, 1:] the superdiagonal,
    ab[1] the diagonal, ab[2, :-1] the subdiagonal. ``b`` is (n,) or (n, k).
    ``pivoting`` as solve_tridiagonal's: by default the system is pivoted
    where the no-pivot solve would be inaccurate, so the result matches
    scipy's (LAPACK's gtsv, which always pivots). A singular matrix raises
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
    # dl and du of length n without a copy: windows of ab's rows read as one
    # (a view for a contiguous ab), dl starting one element before ab[2] and
    # du one after ab[0]; their first and last elements, which solve_tridiagonal
    # never reads, are then ab[1, n-1] and ab[1, 0].
    flat = ab.reshape(-1)
    dl, d, du = flat[2 * n - 1 : 3 * n - 1], flat[n : 2 * n], flat[1 : n + 1]
    return solve_tridiagonal(dl, d, du, b, pivoting=pivoting, stream=stream, threads=threads)
