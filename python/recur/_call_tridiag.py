"""The tridiagonal solve's C++ call: recur._recur.solve_tridiagonal on the
arrays of one framework, each decision in a part of its own: the options
(check_options, check_periodic), the arrays' framework and dtype, the
systems' axis, the diagonals, the layout of b and x, the per-system outputs,
the call, and what a solve returns (result, breakdown).

A layer below recur.linalg and the autograd ops (the package's docstring
draws the layers): nothing here looks at gradients; a tensor that requires
grad is read detached.
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

# The algorithm names, "auto" first: the C++ list (recur::tridiag_algorithms).
ALGORITHMS = _recur.tridiag_algorithms
# The pivoting names, as recur::to_string spells them.
PIVOTING = ("auto", "none", "partial")
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


# Its public name: recur.linalg re-exports it (repr and pickle name that).
TridiagonalDetails.__module__ = "recur.linalg"


# ---------------------------------------------------------------- options --


def _name(v):
    """An option's name with the alias replaced (anything else as it is)."""
    return _ALIASES.get(v, v) if isinstance(v, str) else v


def check_options(fn, algorithm, pivoting, max_refinement_steps, return_info, return_details):
    """The names of `algorithm` and `pivoting` (the alias replaced), after the
    checks of the options that need no array."""
    if return_info and return_details:
        raise ValueError(f"{fn}: return_info and return_details both given; return_details includes info")
    algorithm, pivoting = _name(algorithm), _name(pivoting)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"{fn}: unknown algorithm {algorithm!r}; expected one of {', '.join(ALGORITHMS)}")
    if pivoting not in PIVOTING:
        raise ValueError(f"{fn}: unknown pivoting {pivoting!r}; expected 'auto', 'none' or 'partial'")
    steps = max_refinement_steps
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 0 <= steps < 2**31:
        raise ValueError(f"{fn}: max_refinement_steps must be an integer from 0 to 2**31 - 1, not {steps!r}")
    return algorithm, pivoting


def check_periodic(fn, n, axis, diagonals):
    """periodic=True: n >= 3, and dl and du of length n (their corners are
    read); diagonals are (name, length along axis) of those given with d's
    number of dimensions."""
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


def check_frameworks(fn, dl, d, du, b):
    """d's backend, after checking that dl, du and b are of d's framework."""
    be = backend_of(d)
    for name, v in (("dl", dl), ("du", du), ("b", b)):
        if backend_of(v).name != be.name:
            raise TypeError(f"{fn}: {name} is an array of another framework than d")
    return be


# ---------------------------------------------------------------- results --


def breakdown(fn, info, pivoting, periodic):
    """The LinAlgError for a host info array with nonzero entries: the first
    five systems that broke down (their batch index) and their rows."""
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


def result(fn, x, info, details, pivoting, periodic, return_info, return_details):
    """What a solve returns: ``(x, TridiagonalDetails(info, *details))`` with
    return_details, ``(x, info)`` with return_info, else x after checking
    info (waits for it on the GPU), or the LinAlgError naming the systems
    that broke down."""
    if return_details:
        return x, TridiagonalDetails(info, *details)
    if return_info:
        return x, info
    host = np.asarray(backend_of(info).to_host(info))
    if host.any():
        raise breakdown(fn, host, pivoting, periodic)
    return x


# ------------------------------------------------------------- plain call --


def plain(dl, d, du, b, axis, algorithm, pivoting, max_refinement_steps, threads):
    """(x, info) of a solve on plain arrays dl, d, du and b of one type,
    shape and dtype along their last axis (not periodic, not refined), on
    the current stream; None for any other call."""
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
    ex = be.export_plain
    _recur.solve_tridiagonal(
        ex(dl), ex(d), ex(du), ex(b), ex(x), ndim - 1, be.export(info), algorithm, pivoting, False, False,
        int(max_refinement_steps), None, None, sid, threads
    )
    return x, info


# ----------------------------------------------------------- general call --


def _dtype(fn, be, arrays, refine):
    """The dtype the systems are solved in: the widest of the arrays'
    (integers as float64); float64 where refine."""
    dtype = max((real_dtype(fn, be, v, n) for n, v in arrays), key=lambda t: t.itemsize)
    if refine and dtype != np.float64:
        raise ValueError(
            f"{fn}: refine=True needs float64 systems (these are {dtype}): it factors in float32 and corrects "
            "with float64 residuals"
        )
    return dtype


def _system_axis(fn, d, axis):
    """axis as an index of d's axes, along which the systems have at least
    one unknown."""
    ndim = len(d.shape)
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    axis %= ndim
    if d.shape[axis] == 0:
        raise ValueError(f"{fn}: the systems have no unknowns (d has length 0 along axis {axis})")
    return axis


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
    if be.name == "jax":
        pad = [(0, 0)] * len(shape)
        pad[axis] = (1, 0) if first else (0, 1)
        return be.jnp.pad(v, pad)
    full = be.empty(shape, dtype, like)
    full[_slice(len(shape), axis, slice(0, 1) if first else slice(n - 1, n))] = 0
    full[_slice(len(shape), axis, slice(1, n) if first else slice(0, n - 1))] = v
    return full


def _solution_layout(fn, be, b, d, axis, dtype):
    """(b as the extension reads it, x, ref, sets): x is b's shape and is
    written by the call; ref is an array laid out as every diagonal must be.
    With sets (b of d's shape plus a trailing axis of right-hand sides) x
    holds the sets as a leading axis, each laid out like d, b copied into
    it and solved in place (JAX: a compact copy of b). Otherwise x is
    allocated like d, and b is read in place where its layout is x's, else
    copied into x."""
    shape, ndim = tuple(d.shape), len(d.shape)
    sets = tuple(b.shape) == shape + (b.shape[-1],) if len(b.shape) == ndim + 1 else False
    if not sets and tuple(b.shape) != shape:
        raise ValueError(f"{fn}: b has shape {tuple(b.shape)}; expected d's {shape} or {shape} + (nrhs,)")
    if sets:
        nrhs = b.shape[-1]
        bl = be.permute(b, [ndim] + list(range(ndim)))
        x = be.empty((nrhs,) + shape, dtype, d)
        if be.name == "jax":
            return be.contiguous(bl), x, x[0], True
        be.copy_into(x, bl)  # the one copy: then solved in place
        return x, x, x[0], True
    x = be.empty_like(d, dtype)
    if same_layout(be, b, x, axis):
        return b, x, x, False
    be.copy_into(x, b)
    return x, x, x, False


def _per_system(be, d, axis, pivoting, details, refine):
    """The per-system int32 outputs (info, pivoted, refinement_steps) in the
    order the layout numbers the systems, and the function that gives one
    the batch shape. pivoted and refinement_steps are asked of the solver
    only where they are wanted and can be nonzero (else None: known zeros):
    'auto' tests every system on both devices whether pivoted is asked for
    or not (doc/tridiag.md)."""
    shape, ndim = tuple(d.shape), len(d.shape)
    bshape = shape[:axis] + shape[axis + 1 :]
    order = state_order(ndim, axis, batch_axes(be, d, axis), lambda j: j if j < axis else j - 1, [])
    info, back = state_out(be, bshape, order, np.int32, d)
    want_pivoted = pivoting != "none" and details
    pivoted = state_out(be, bshape, order, np.int32, d)[0] if want_pivoted else None
    steps = state_out(be, bshape, order, np.int32, d)[0] if details and refine else None
    return info, pivoted, steps, back


def solve(fn, dl, d, du, b, axis, algorithm, pivoting, periodic, refine, max_refinement_steps, details, stream,
          threads):
    """The general solve, of arrays of one framework in any layout and dtype
    (options as check_options returns them): ``(x, info, pivoted,
    refinement_steps)`` in the caller's array type, the last two arrays of
    the batch shape with details (zeros where the solver was not asked),
    else None."""
    be = check_frameworks(fn, dl, d, du, b)
    dtype = _dtype(fn, be, (("dl", dl), ("d", d), ("du", du), ("b", b)), refine)
    d = prepare_input(fn, be, d, dtype, "d")
    axis = _system_axis(fn, d, axis)
    shape, ndim = tuple(d.shape), len(d.shape)
    if periodic:
        lengths = [(name, v.shape[axis]) for name, v in (("dl", dl), ("du", du)) if len(v.shape) == ndim]
        check_periodic(fn, shape[axis], axis, lengths)
    sid = be.stream(d, stream)
    if stream is not None and sid is None:
        raise ValueError(f"{fn}: stream given, but d is in host memory (the call runs on the CPU)")
    dl = _full_diagonal(fn, be, prepare_input(fn, be, dl, dtype, "dl"), "dl", shape, axis, True, dtype, d)
    du = _full_diagonal(fn, be, prepare_input(fn, be, du, dtype, "du"), "du", shape, axis, False, dtype, d)
    bl, x, ref, sets = _solution_layout(fn, be, prepare_input(fn, be, b, dtype, "b"), d, axis, dtype)
    dl, d, du = (conform(be, v, ref, axis) for v in (dl, d, du))
    info, pivoted, steps, back = _per_system(be, d, axis, pivoting, details, refine)
    ex = be.export
    _recur.solve_tridiagonal(
        ex(dl), ex(d), ex(du), ex(bl), ex(x), axis, ex(info), algorithm, pivoting, periodic, refine,
        int(max_refinement_steps), None if pivoted is None else ex(pivoted), None if steps is None else ex(steps), sid,
        threads
    )
    x = be.finish(x, sid)
    if sets:
        x = be.permute(x, list(range(1, ndim + 1)) + [0])
    if not details:
        return x, back(info), None, None
    bshape = shape[:axis] + shape[axis + 1 :]

    def known(v):
        return be.asarray(np.zeros(bshape, np.int32), np.int32, d) if v is None else back(v)

    return x, back(info), known(pivoted), known(steps)
