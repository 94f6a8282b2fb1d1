"""The fast path of plain arrays (recur._arrays.plain_backend): a call on
C-contiguous float32/float64 arrays of one framework, shape and dtype goes
straight to the extension, and gives what the general path gives."""

import sys

import numpy as np
import pytest

import recur
import recur._arrays as arrays
import recur.linalg as rl
import recur.signal as rs


def _frameworks(gpu):
    out = []
    if not gpu:
        out.append(pytest.param((np.asarray, np.asarray), id="numpy"))
    try:
        import torch

        dev = "cuda" if gpu else "cpu"
        marks = [pytest.mark.gpu] if gpu else []
        out.append(
            pytest.param((lambda a: torch.as_tensor(a, device=dev), lambda t: t.cpu().numpy()), id=f"torch-{dev}", marks=marks)
        )
    except ImportError:
        pass
    if gpu:
        try:
            import cupy

            out.append(pytest.param((cupy.asarray, cupy.asnumpy), id="cupy", marks=[pytest.mark.gpu]))
        except ImportError:
            pass
    return out


FRAMEWORKS = _frameworks(False) + _frameworks(True)


@pytest.fixture
def general_only(monkeypatch):
    """Counts the calls that reach the general path's preparation."""
    calls = []
    real = arrays.prepare_input

    def counted(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    # Every module of the package that prepares arrays (the layer of C++
    # calls: recur/__init__.py), found by the name it imports.
    import recur._call_linrec
    import recur._call_signal
    import recur._call_tridiag

    patched = [m for m in list(sys.modules.values()) if getattr(m, "prepare_input", None) is real and m is not arrays]
    assert {m.__name__ for m in patched} >= {"recur._call_linrec", "recur._call_signal", "recur._call_tridiag"}
    for mod in patched:
        monkeypatch.setattr(mod, "prepare_input", counted)
    return calls


@pytest.mark.parametrize("fw", FRAMEWORKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linrec_plain_equals_general(fw, dtype, rng, general_only):
    to, back = fw
    s = rng.uniform(-1, 1, (3, 1001)).astype(dtype)
    t = rng.standard_normal((3, 1001)).astype(dtype)
    for axis in (-1, 0, 1):
        for reverse in (False, True):
            plain = back(recur.linrec(to(s), to(t), axis=axis, reverse=reverse))
            assert not general_only
            # init=0.0 takes the general path with the same arithmetic.
            general = back(recur.linrec(to(s), to(t), axis=axis, reverse=reverse, init=0.0))
            assert general_only
            general_only.clear()
            np.testing.assert_array_equal(plain, general)
            assert plain.dtype == dtype
    w = back(recur.linrec(0.5, to(t)))
    assert not general_only
    np.testing.assert_array_equal(w, back(recur.linrec(0.5, to(t), init=0.0)))


@pytest.mark.parametrize("fw", FRAMEWORKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_filters_plain_equal_general(fw, dtype, rng, general_only):
    to, back = fw
    x = rng.standard_normal((4, 777)).astype(dtype)
    b, a = [0.2, 0.3, 0.1], [1.0, -0.5, 0.1]
    sos = np.array([[0.2, 0.3, 0.1, 1.0, -0.5, 0.1], [1.0, 0.0, 0.0, 1.0, 0.2, 0.0]])
    for axis in (-1, 0):
        zeros_l = np.zeros((2, 777) if axis == 0 else (4, 2), dtype)
        zeros_s = np.zeros((2, 2, 777) if axis == 0 else (2, 4, 2), dtype)
        y = back(rs.lfilter(b, a, to(x), axis=axis))
        ys = back(rs.sosfilt(sos, to(x), axis=axis))
        assert not general_only
        np.testing.assert_array_equal(y, back(rs.lfilter(b, a, to(x), axis=axis, zi=to(zeros_l))[0]))
        np.testing.assert_array_equal(ys, back(rs.sosfilt(sos, to(x), axis=axis, zi=to(zeros_s))[0]))
        general_only.clear()


@pytest.mark.parametrize("fw", FRAMEWORKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tridiagonal_plain_equals_general(fw, dtype, rng, general_only):
    to, back = fw
    n = 200
    dl, du = (rng.uniform(-1, 1, (5, n)).astype(dtype) for _ in range(2))
    d = rng.uniform(3, 4, (5, n)).astype(dtype)
    b = rng.standard_normal((5, n)).astype(dtype)
    x = back(rl.solve_tridiagonal(to(dl), to(d), to(du), to(b)))
    x2, info = rl.solve_tridiagonal(to(dl), to(d), to(du), to(b), return_info=True)
    assert not general_only
    assert not back(info).any() and back(info).shape == (5,)
    np.testing.assert_array_equal(x, back(x2))
    # dl and du of length n - 1 take the general path.
    general = back(rl.solve_tridiagonal(to(dl[:, 1:]), to(d), to(du[:, :-1]), to(b)))
    assert general_only
    np.testing.assert_array_equal(x, general)
    # A singular system raises from the plain path too.
    d[2] = 0.0
    dl[2] = du[2] = 0.0
    general_only.clear()
    with pytest.raises(np.linalg.LinAlgError, match="1 of 5 systems: system 2 "):
        rl.solve_tridiagonal(to(dl), to(d), to(du), to(b))
    assert not general_only


def test_not_plain_takes_the_general_path(rng, general_only):
    x = rng.standard_normal((4, 64))
    for v in (x[:, ::2], x.T, x.astype(np.float16), x.astype(np.int64)):
        w = recur.linrec(0.5, v)
        assert general_only, (v.dtype, v.strides)
        np.testing.assert_allclose(w, recur.linrec(0.5, np.ascontiguousarray(v, np.float64)), rtol=1e-3)
        general_only.clear()
    # Mixed dtypes and bad axes keep the general path's errors.
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        recur.linrec(x, x, axis=2)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        rs.lfilter([1.0], [1.0, -0.5], x, axis=2)
    y = recur.linrec(x.astype(np.float32), x)
    assert y.dtype == np.float64


def test_plain_torch_needs_no_grad(rng, general_only):
    torch = pytest.importorskip("torch")
    t = torch.randn(3, 50, dtype=torch.float64, requires_grad=True)
    w = recur.linrec(0.5, t)
    assert w.requires_grad and general_only
    general_only.clear()
    with torch.no_grad():
        recur.linrec(0.5, t)
    assert general_only  # requires_grad tensors are never plain


def test_plain_coefficients_from_lists(rng):
    x = rng.standard_normal(300)
    np.testing.assert_array_equal(rs.lfilter([1, 2], [4, 1], x), rs.lfilter(np.array([1.0, 2.0]), np.array([4.0, 1.0]), x))
    with pytest.raises(TypeError, match="dtype"):
        rs.lfilter(["a"], [1.0], x)
    with pytest.raises(ValueError, match="1-D"):
        rs.lfilter([[1.0]], [1.0], x)
