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

A tiny first pivot in the second of two systems: the default pivots that
system (and only that one), as LAPACK does; ``pivoting='none'`` loses most
digits.

>>> import numpy as np, recur.linalg
>>> n = 5
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

The scipy-named layer (the package's docstring draws the layers):
solve_tridiagonal checks the options, takes the plain-array fast path,
sends tensors that need gradients to recur.torch and every other call to
recur._call_tridiag, whose parts decide the rest.
"""

from __future__ import annotations

import numpy as np

from . import _call_tridiag
from ._arrays import backend_of, wants_grad
from ._call_tridiag import TridiagonalDetails, check_frameworks, check_options, result

__all__ = ["TridiagonalDetails", "solve_banded", "solve_tridiagonal"]


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
    waits for the result). The module's docstring has examples of pivoting
    and of a periodic system.

    >>> import numpy as np, recur.linalg
    >>> n = 5
    >>> x = recur.linalg.solve_tridiagonal(-np.ones((2, n - 1)), 4 * np.ones((2, n)), -np.ones((2, n - 1)), np.ones((2, n)))
    >>> bool(np.allclose(x[0], np.linalg.solve(np.diag(4 * np.ones(n)) - np.eye(n, k=1) - np.eye(n, k=-1), np.ones(n))))
    True
    """
    fn = "recur.linalg.solve_tridiagonal"
    algorithm, piv = check_options(fn, algorithm, pivoting, max_refinement_steps, return_info, return_details)
    periodic, refine = bool(periodic), bool(refine)
    if not periodic and not refine and not return_details and stream is None:
        plain = _call_tridiag.plain(dl, d, du, b, axis, algorithm, piv, max_refinement_steps, threads)
        if plain is not None:
            return result(fn, *plain, None, piv, False, return_info, False)
    check_frameworks(fn, dl, d, du, b)
    if wants_grad(dl, d, du, b):
        from . import torch as ops

        return ops.solve_tridiagonal(
            dl, d, du, b, axis=axis, algorithm=algorithm, pivoting=piv, periodic=periodic, refine=refine,
            max_refinement_steps=max_refinement_steps, return_info=return_info, return_details=return_details,
            stream=stream
        )
    x, info, pivoted, steps = _call_tridiag.solve(
        fn, dl, d, du, b, axis, algorithm, piv, periodic, refine, max_refinement_steps, return_details, stream, threads
    )
    return result(fn, x, info, (pivoted, steps), piv, periodic, return_info, return_details)


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
