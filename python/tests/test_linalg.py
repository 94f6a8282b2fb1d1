"""recur.linalg against scipy.linalg and numpy.linalg: solve_banded's
tridiagonal case, batches of systems along any axis with dl and du of length
n or n-1, several right-hand sides, every algorithm name, pivoting (a tiny
first pivot against LAPACK's gtsv), periodic systems against a dense solve,
mixed-precision refinement, breakdown reported (LinAlgError naming the
systems, or info), errors."""

import ast
import pathlib

import numpy as np
import pytest
import scipy.linalg as sl

import recur
import recur.linalg as rl


def dominant(rng, shape, axis=-1):
    d = 4 + rng.uniform(0, 1, shape)
    return rng.uniform(-1, 1, shape), d, rng.uniform(-1, 1, shape)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 256])
@pytest.mark.parametrize("k", [None, 1, 3])
def test_solve_banded_matches_scipy(n, k, rng):
    ab = np.stack([rng.uniform(-1, 1, n), 4 + rng.uniform(0, 1, n), rng.uniform(-1, 1, n)])
    b = rng.standard_normal(n if k is None else (n, k))
    x = rl.solve_banded((1, 1), ab, b)
    assert x.shape == b.shape
    np.testing.assert_allclose(x, sl.solve_banded((1, 1), ab, b), rtol=1e-12, atol=1e-12)


def dense(dl, d, du):
    n = d.shape[-1]
    return np.diag(d) + np.diag(du[: n - 1], 1) + np.diag(dl[1:], -1)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("short", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batches_along_any_axis(axis, short, dtype, rng):
    shape = [6, 33, 5]
    dl, d, du = (v.astype(dtype) for v in dominant(rng, shape))
    b = rng.standard_normal(shape).astype(dtype)
    if short:
        n = shape[axis]
        dl_in = np.take(dl, range(1, n), axis=axis)
        du_in = np.take(du, range(0, n - 1), axis=axis)
    else:
        dl_in, du_in = dl, du
    x = rl.solve_tridiagonal(dl_in, d, du_in, b, axis=axis)
    assert x.dtype == dtype and x.shape == b.shape
    m = [np.moveaxis(v, axis, -1).astype(np.float64) for v in (dl, d, du, b)]
    want = np.empty_like(m[1])
    for idx in np.ndindex(*m[1].shape[:-1]):
        want[idx] = np.linalg.solve(dense(m[0][idx], m[1][idx], m[2][idx]), m[3][idx])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.moveaxis(x, axis, -1), want, rtol=tol, atol=tol)


def test_several_right_hand_sides(rng):
    dl, d, du = dominant(rng, (4, 50))
    b = rng.standard_normal((4, 50, 3))
    x = rl.solve_tridiagonal(dl, d, du, b)
    for r in range(3):
        np.testing.assert_allclose(x[..., r], rl.solve_tridiagonal(dl, d, du, np.ascontiguousarray(b[..., r])), atol=1e-13)


@pytest.mark.parametrize("algorithm", ["auto", "thomas", "pscheme", "bondeli"])
def test_algorithms_on_the_cpu(algorithm, rng):
    dl, d, du = dominant(rng, (3, 40))
    b = rng.standard_normal((3, 40))
    x = rl.solve_tridiagonal(dl, d, du, b, algorithm=algorithm)
    np.testing.assert_allclose(x, rl.solve_tridiagonal(dl, d, du, b), atol=1e-12)


def test_every_algorithm_name_of_the_extension(rng):
    """The names come from the C++ list (recur::tridiag_algorithms through
    to_string), 'auto' first; each is taken, and so is the alias
    'automatic' (recur.host runs every algorithm as Thomas' or the
    P-scheme: one answer)."""
    names = recur._recur.tridiag_algorithms
    assert isinstance(names, tuple) and names[0] == "auto" and len(set(names)) == len(names)
    assert {"thomas", "cr", "pcr", "rd", "pscheme", "bondeli"} <= set(names)
    dl, d, du = dominant(rng, (3, 40))
    b = rng.standard_normal((3, 40))
    want = rl.solve_tridiagonal(dl, d, du, b)
    for algorithm in names + ("automatic",):
        x = rl.solve_tridiagonal(dl, d, du, b, algorithm=algorithm)
        np.testing.assert_allclose(x, want, atol=1e-12, err_msg=algorithm)
    # The docstring describes each one.
    for name in names:
        assert f"'{name}'" in rl.solve_tridiagonal.__doc__, name


def _stub_literal(alias):
    """The strings of ``alias = Literal[...]`` in recur/linalg.pyi."""
    stub = pathlib.Path(rl.__file__).with_suffix(".pyi")
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == [alias]:
            sub = node.value
            assert isinstance(sub, ast.Subscript) and sub.value.id == "Literal"
            elts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            return [e.value for e in elts]
    raise AssertionError(f"{stub} has no {alias} = Literal[...]")


def test_stub_literals_list_the_names_taken():
    """A stub cannot compute its Literal: the algorithms' lists exactly the
    extension's names, in its order; the pivoting's the names taken."""
    assert _stub_literal("Algorithm") == list(recur._recur.tridiag_algorithms)
    assert _stub_literal("Pivoting") == ["auto", "automatic", "none", "partial"]
    for pivoting in _stub_literal("Pivoting"):
        rl.solve_tridiagonal(np.ones(4), np.full(4, 4.0), np.ones(4), np.ones(4), pivoting=pivoting)


def banded(dl, d, du):
    """scipy's (3, n) banded storage of one system with length-n diagonals."""
    return np.stack([np.r_[0, du[:-1]], d, np.r_[dl[1:], 0]])


def test_breakdown_names_the_systems(rng):
    dl, d, du = dominant(rng, (3, 4, 10))
    d[1, 2, 0] = 0.0  # a zero first pivot in system (1, 2), a nonsingular matrix
    dl[1, 2, 0] = 0.0
    b = rng.standard_normal((3, 4, 10))
    # Without pivoting: a breakdown at row 1, that system's x NaN, the others solved.
    with pytest.raises(np.linalg.LinAlgError, match=r"without pivoting .* 1 of 12 systems: system \(1, 2\) at row 1"):
        rl.solve_tridiagonal(dl, d, du, b, pivoting="none")
    x, info = rl.solve_tridiagonal(dl, d, du, b, pivoting="none", return_info=True)
    assert info.shape == (3, 4) and info.dtype == np.int32
    assert info[1, 2] == 1 and np.count_nonzero(info) == 1
    assert np.isnan(x[1, 2]).all() and np.isfinite(np.delete(x.reshape(12, 10), 6, axis=0)).all()
    # By default that system is solved pivoted, as LAPACK solves it.
    x, details = rl.solve_tridiagonal(dl, d, du, b, return_details=True)
    assert not details.info.any()
    assert details.pivoted[1, 2] == 1 and np.count_nonzero(details.pivoted) == 1
    np.testing.assert_allclose(x[1, 2], sl.solve_banded((1, 1), banded(dl[1, 2], d[1, 2], du[1, 2]), b[1, 2]), rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(np.delete(x.reshape(12, 10), 6, axis=0), np.delete(rl.solve_tridiagonal(dl, d, du, b, pivoting="none", return_info=True)[0].reshape(12, 10), 6, axis=0))


@pytest.mark.parametrize("pivoting", ["none", "auto", "partial"])
def test_singular_systems_break_down_under_every_pivoting(pivoting, rng):
    dl, d, du = dominant(rng, (3, 4, 10))
    dl[2, 1, 5] = d[2, 1, 5] = du[2, 1, 5] = 0.0  # row 5 of system (2, 1) is zero
    b = rng.standard_normal((3, 4, 10))
    with pytest.raises(np.linalg.LinAlgError, match=r"1 of 12 systems: system \(2, 1\) at row") as err:
        rl.solve_tridiagonal(dl, d, du, b, pivoting=pivoting)
    assert "does not pivot" not in str(err.value)
    assert ("singular matrix" in str(err.value)) == (pivoting != "none")
    x, info = rl.solve_tridiagonal(dl, d, du, b, pivoting=pivoting, return_info=True)
    assert info[2, 1] > 0 and np.count_nonzero(info) == 1
    assert np.isnan(x[2, 1]).all() and np.isfinite(np.delete(x.reshape(12, 10), 9, axis=0)).all()


def tiny_first_pivot(rng, count, n, dtype):
    """Systems with b_0 = 1e-14 and c_0 = a_1 = 1, the rest diagonally
    dominant: well conditioned, but the no-pivot elimination divides by
    1e-14 (issue 34's example)."""
    dl, d, du = dominant(rng, (count, n))
    d[:, 0], du[:, 0], dl[:, 1] = 1e-14, 1.0, 1.0
    return [v.astype(dtype) for v in (dl, d, du)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rhs", [None, 3])
def test_tiny_first_pivot_against_lapack(dtype, rhs, rng):
    n = 64
    dl, d, du = tiny_first_pivot(rng, 5, n, dtype)
    b = rng.standard_normal((5, n) if rhs is None else (5, n, rhs)).astype(dtype)
    want = np.stack([sl.solve_banded((1, 1), banded(*(v[k].astype(np.float64) for v in (dl, d, du))), b[k].astype(np.float64)) for k in range(5)])
    scale = np.max(np.abs(want))
    tol = 1e-14 if dtype == np.float64 else 1e-6
    for pivoting in ("auto", "automatic", "partial"):
        x = rl.solve_tridiagonal(dl, d, du, b, pivoting=pivoting)
        assert x.dtype == dtype
        assert np.max(np.abs(x - want)) <= tol * scale, pivoting
    x = rl.solve_tridiagonal(dl, d, du, b, pivoting="none")  # no breakdown, but far off
    assert np.max(np.abs(x - want)) > 1e-4 * scale
    # solve_banded pivots by default, as scipy's does.
    ab = banded(dl[0], d[0], du[0])
    assert np.max(np.abs(rl.solve_banded((1, 1), ab, b[0]) - want[0])) <= tol * scale
    assert np.max(np.abs(rl.solve_banded((1, 1), ab, b[0], pivoting="none") - want[0])) > 1e-4 * scale


def test_pivoted_flags(rng):
    n = 30
    dl, d, du = dominant(rng, (6, n))
    tl, td, tu = tiny_first_pivot(rng, 2, n, np.float64)
    dl[[1, 4]], d[[1, 4]], du[[1, 4]] = tl, td, tu
    b = rng.standard_normal((6, n))
    flags = {"auto": [0, 1, 0, 0, 1, 0], "partial": [1] * 6, "none": [0] * 6}
    for pivoting, want in flags.items():
        x, details = rl.solve_tridiagonal(dl, d, du, b, pivoting=pivoting, return_details=True)
        assert isinstance(details, rl.TridiagonalDetails)
        for v in details:
            assert v.shape == (6,) and v.dtype == np.int32
        np.testing.assert_array_equal(details.pivoted, want)
        assert not details.info.any() and not details.refinement_steps.any()
        x2, info = rl.solve_tridiagonal(dl, d, du, b, pivoting=pivoting, return_info=True)
        np.testing.assert_array_equal(x, x2)
        assert not info.any()
    # Dominant systems: 'auto' gives 'none''s bits.
    dom = [0, 2, 3, 5]
    np.testing.assert_array_equal(
        rl.solve_tridiagonal(dl[dom], d[dom], du[dom], b[dom]),
        rl.solve_tridiagonal(dl[dom], d[dom], du[dom], b[dom], pivoting="none"),
    )


def cyclic(dl, d, du):
    """The dense periodic matrix of one system (length-n diagonals)."""
    a = dense(dl, d, du)
    n = d.shape[-1]
    a[0, n - 1] += dl[0]
    a[n - 1, 0] += du[n - 1]
    return a


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("rhs", [None, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pivoting", ["auto", "partial", "none"])
def test_periodic_against_a_dense_solve(axis, rhs, dtype, pivoting, rng):
    shape = [7, 33, 5]
    dl, d, du = (v.astype(dtype) for v in dominant(rng, shape))
    if pivoting != "none":  # a tiny b_2 with c_2 = a_3 = 1 in some systems: their elimination pivots
        row, below = ([slice(None)] * 3 for _ in range(2))
        row[axis], below[axis] = 2, 3
        d[tuple(row)][..., ::2] = 1e-14
        du[tuple(row)][..., ::2] = 1.0
        dl[tuple(below)][..., ::2] = 1.0
    bshape = shape if rhs is None else shape + [rhs]
    b = rng.standard_normal(bshape).astype(dtype)
    x, details = rl.solve_tridiagonal(dl, d, du, b, axis=axis, periodic=True, pivoting=pivoting, return_details=True)
    assert x.dtype == dtype and x.shape == b.shape
    assert not details.info.any()
    assert {"none": not details.pivoted.any(), "auto": details.pivoted.any(), "partial": details.pivoted.all()}[pivoting]
    ax = axis % 3
    m = [np.moveaxis(v, ax, -1).astype(np.float64) for v in (dl, d, du)]
    bm = np.moveaxis(b, ax, -1 if rhs is None else -2).astype(np.float64)
    xm = np.moveaxis(x, ax, -1 if rhs is None else -2)
    eps = np.finfo(dtype).eps
    for idx in np.ndindex(*m[1].shape[:-1]):
        a = cyclic(m[0][idx], m[1][idx], m[2][idx])
        want = np.linalg.solve(a, bm[idx])
        assert backward_error(a, xm[idx], bm[idx]) <= 4 * a.shape[0] * eps  # the C++ tests' bound (rho ~ 1 here)
        # The forward error a backward stable solve allows: kappa times the backward error.
        assert np.max(np.abs(xm[idx] - want)) <= 4 * eps * np.linalg.cond(a, np.inf) * np.max(np.abs(want))


def laplacian(count, n, shift):
    """Shifted 1-D Laplacians tridiag(-1, 2 + shift, -1) and their 2-norm
    condition number (eigenvalues 2 + shift - 2 cos(k pi / (n + 1)))."""
    lam = 2 + shift - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1))
    return -np.ones((count, n)), np.full((count, n), 2 + shift), -np.ones((count, n)), lam.max() / lam.min()


def backward_error(a, x, b):
    """The normwise backward error ||b - A x|| / (||A|| ||x|| + ||b||) (inf-norms)."""
    r = b - a @ x
    return np.max(np.abs(r)) / (np.max(np.abs(a).sum(1)) * np.max(np.abs(x)) + np.max(np.abs(b)))


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("rhs", [None, 2])
def test_refinement_reaches_float64_accuracy(axis, rhs, rng):
    n = 2000
    dl, d, du, kappa = laplacian(3, n, 1e-6)
    assert 5e5 < kappa < 5e6
    b = rng.standard_normal((3, n) if rhs is None else (3, n, rhs))
    if axis == 0:
        dl, d, du = (np.ascontiguousarray(v.T) for v in (dl, d, du))
        b = np.ascontiguousarray(np.moveaxis(b, 0, 1))
    x, details = rl.solve_tridiagonal(dl, d, du, b, axis=axis, refine=True, return_details=True)
    x32 = rl.solve_tridiagonal(*(v.astype(np.float32) for v in (dl, d, du, b)), axis=axis)
    steps = details.refinement_steps
    assert steps.shape == (3,) and ((steps >= 1) & (steps <= 10)).all()  # refined, no fallback
    assert not details.info.any()
    a = dense(*(np.moveaxis(v, axis, -1)[0] for v in (dl, d, du)))
    eps = np.finfo(np.float64).eps
    for k in range(3):
        bk = np.take(b, k, axis=1 if axis == 0 else 0)
        xk, x32k = (np.take(v, k, axis=1 if axis == 0 else 0) for v in (x, x32))
        want = np.linalg.solve(a, bk)
        scale = np.max(np.abs(want))
        assert backward_error(a, xk, bk) <= 4 * eps
        assert np.max(np.abs(xk - want)) <= 10 * kappa * eps * scale
        assert np.max(np.abs(x32k - want)) > 1e4 * kappa * eps * scale  # what float32 alone gives


def test_refinement_of_pivoted_and_periodic_systems(rng):
    n = 300
    dl, d, du = tiny_first_pivot(rng, 2, n, np.float64)
    b = rng.standard_normal((2, n))
    x, details = rl.solve_tridiagonal(dl, d, du, b, refine=True, return_details=True)
    np.testing.assert_array_equal(details.pivoted, [1, 1])
    assert (details.refinement_steps >= 1).all()
    for k in range(2):
        a = dense(dl[k], d[k], du[k])
        assert backward_error(a, x[k], b[k]) <= 4 * np.finfo(np.float64).eps
    # A periodic shifted Laplacian: kappa = (4 + shift) / shift = 1e6.
    dl, d, du, _ = laplacian(2, n, 4e-6)
    x, details = rl.solve_tridiagonal(dl, d, du, b, periodic=True, refine=True, return_details=True)
    assert ((details.refinement_steps >= 1) & (details.refinement_steps <= 10)).all()
    for k in range(2):
        a = cyclic(dl[k], d[k], du[k])
        assert backward_error(a, x[k], b[k]) <= 4 * np.finfo(np.float64).eps
    # No corrections allowed: every system solved in float64 instead, reported as -1.
    x0, details = rl.solve_tridiagonal(dl, d, du, b, periodic=True, refine=True, max_refinement_steps=0, return_details=True)
    np.testing.assert_array_equal(details.refinement_steps, [-1, -1])
    np.testing.assert_array_equal(x0, rl.solve_tridiagonal(dl, d, du, b, periodic=True))


def test_bad_pivoting_periodic_refine_arguments(rng):
    dl, d, du = dominant(rng, (2, 8))
    b = rng.standard_normal((2, 8))
    before = [v.copy() for v in (dl, d, du, b)]
    f32 = [v.astype(np.float32) for v in (dl, d, du, b)]
    bad = [
        (dict(pivoting="full"), r"unknown pivoting 'full'"),
        (dict(pivoting=None), r"unknown pivoting None"),
        (dict(refine=True, max_refinement_steps=-1), r"max_refinement_steps must be an integer"),
        (dict(max_refinement_steps=2.5), r"max_refinement_steps must be an integer"),
        (dict(return_info=True, return_details=True), r"return_info and return_details"),
        (dict(pivoting="partial", algorithm="cr"), r"pivoting = partial needs algorithm = auto or thomas"),
        (dict(periodic=True, algorithm="pcr"), r"periodic = true needs algorithm"),
        (dict(refine=True, algorithm="pscheme"), r"refinement = mixed needs algorithm"),
    ]
    for kwargs, match in bad:
        with pytest.raises(ValueError, match=match):
            rl.solve_tridiagonal(dl, d, du, b, **kwargs)
    with pytest.raises(ValueError, match=r"periodic=True reads dl\[0\].*dl must have length n = 8 along axis 1, not 7"):
        rl.solve_tridiagonal(dl[:, 1:], d, du, b, periodic=True)
    with pytest.raises(ValueError, match=r"du must have length n = 8 along axis 0, not 7"):
        rl.solve_tridiagonal(dl.T, d.T, du.T[:7], b.T, axis=0, periodic=True)
    for n in (1, 2):
        with pytest.raises(ValueError, match=rf"periodic=True needs n >= 3 \(n = {n} along axis 1\)"):
            rl.solve_tridiagonal(dl[:, :n], d[:, :n], du[:, :n], b[:, :n], periodic=True)
    with pytest.raises(ValueError, match=r"refine=True needs float64 systems \(these are float32\)"):
        rl.solve_tridiagonal(*f32, refine=True)
    for v, w in zip((dl, d, du, b), before):
        np.testing.assert_array_equal(v, w)


def test_errors(rng):
    dl, d, du = dominant(rng, (2, 8))
    b = np.ones((2, 8))
    with pytest.raises(ValueError, match="dl has shape"):
        rl.solve_tridiagonal(dl[:, :5], d, du, b)
    with pytest.raises(ValueError, match="unknown algorithm 'lu'; expected one of auto, thomas, "):
        rl.solve_tridiagonal(dl, d, du, b, algorithm="lu")
    with pytest.raises(ValueError, match="unknown pivoting 'yes'; expected 'auto', 'none' or 'partial'"):
        rl.solve_tridiagonal(dl, d, du, b, pivoting="yes")
    with pytest.raises(ValueError, match="b has shape"):
        rl.solve_tridiagonal(dl, d, du, np.ones((2, 7)))
    with pytest.raises(ValueError, match=r"only tridiagonal matrices, l_and_u = \(1, 1\)"):
        rl.solve_banded((2, 1), np.ones((4, 8)), np.ones(8))
    with pytest.raises(ValueError, match="infs or NaNs"):
        rl.solve_banded((1, 1), np.full((3, 4), np.nan), np.ones(4))
    with pytest.raises(TypeError, match="complex"):
        rl.solve_tridiagonal(dl, d.astype(complex), du, b)
    before = b.copy()
    rl.solve_tridiagonal(dl, d, du, b)
    np.testing.assert_array_equal(b, before)
