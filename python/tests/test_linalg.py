"""recur.linalg against scipy.linalg and numpy.linalg: solve_banded's
tridiagonal case, batches of systems along any axis with dl and du of length
n or n-1, several right-hand sides, every algorithm name, breakdown reported
(LinAlgError naming the systems, or info), errors."""

import numpy as np
import pytest
import scipy.linalg as sl

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


@pytest.mark.parametrize("algorithm", ["auto", "thomas", "pscheme"])
def test_algorithms_on_the_cpu(algorithm, rng):
    dl, d, du = dominant(rng, (3, 40))
    b = rng.standard_normal((3, 40))
    x = rl.solve_tridiagonal(dl, d, du, b, algorithm=algorithm)
    np.testing.assert_allclose(x, rl.solve_tridiagonal(dl, d, du, b), atol=1e-12)


def test_breakdown_names_the_systems(rng):
    dl, d, du = dominant(rng, (3, 4, 10))
    d[1, 2, 0] = 0.0  # a zero first pivot in system (1, 2)
    dl[1, 2, 0] = 0.0
    b = rng.standard_normal((3, 4, 10))
    with pytest.raises(np.linalg.LinAlgError, match=r"1 of 12 systems: system \(1, 2\) at row 1"):
        rl.solve_tridiagonal(dl, d, du, b)
    x, info = rl.solve_tridiagonal(dl, d, du, b, return_info=True)
    assert info.shape == (3, 4) and info.dtype == np.int32
    assert info[1, 2] == 1 and np.count_nonzero(info) == 1
    assert np.isnan(x[1, 2]).all() and np.isfinite(np.delete(x.reshape(12, 10), 6, axis=0)).all()


def test_errors(rng):
    dl, d, du = dominant(rng, (2, 8))
    b = np.ones((2, 8))
    with pytest.raises(ValueError, match="dl has shape"):
        rl.solve_tridiagonal(dl[:, :5], d, du, b)
    with pytest.raises(ValueError, match="unknown algorithm 'lu'"):
        rl.solve_tridiagonal(dl, d, du, b, algorithm="lu")
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
