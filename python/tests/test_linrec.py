"""recur.linrec against a sequential NumPy loop: array and scalar s and t,
forward and reverse, init (none, scalar, per sequence), return_final, every
axis, strided inputs, errors."""

import numpy as np
import pytest

import lowp
import recur


def reference(s, t, axis, reverse, init):
    shape = np.shape(s) if np.ndim(s) else np.shape(t)
    s, t = (np.moveaxis(np.broadcast_to(np.asarray(v, np.float64), shape), axis, -1) for v in (s, t))
    w = np.empty_like(t)
    prev = np.broadcast_to(np.asarray(0.0 if init is None else init, np.float64), t.shape[:-1]).copy()
    order = range(t.shape[-1] - 1, -1, -1) if reverse else range(t.shape[-1])
    for i in order:
        prev = s[..., i] * prev + t[..., i]
        w[..., i] = prev
    return np.moveaxis(w, -1, axis), prev


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("form", ["arrays", "scalar_s", "scalar_t"])
@pytest.mark.parametrize("init_kind", ["none", "scalar", "array"])
def test_matches_sequential_reference(dtype, reverse, axis, form, init_kind, rng):
    shape = [5, 37, 4]
    s = rng.uniform(-0.95, 0.95, shape).astype(dtype)
    t = rng.standard_normal(shape).astype(dtype)
    if form == "scalar_s":
        s = 0.9
    elif form == "scalar_t":
        t = 0.5
    bshape = shape[: axis % 3] + shape[axis % 3 + 1 :]
    init = {"none": None, "scalar": 1.25, "array": rng.standard_normal(bshape).astype(dtype)}[init_kind]
    w, final = recur.linrec(s, t, axis=axis, reverse=reverse, init=init, return_final=True)
    want, want_final = reference(s, t, axis, reverse, init)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert w.dtype == dtype and w.shape == tuple(shape) and final.shape == tuple(bshape)
    np.testing.assert_allclose(w, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(final, want_final, rtol=tol, atol=tol)


def test_strided_and_odd_lengths(rng):
    for n in (1, 2, 3, 1001):
        base = rng.standard_normal((4, 2 * n, 3))
        s, t = base[::2, ::2, :] * 0.5, np.asfortranarray(rng.standard_normal((2, n, 3)))
        s, t = s[:2], t
        np.testing.assert_allclose(recur.linrec(s, t, axis=1), reference(s, t, 1, False, None)[0], atol=1e-12)


def test_examples():
    np.testing.assert_allclose(recur.linrec(0.5, np.ones(4)), [1, 1.5, 1.75, 1.875])
    w, last = recur.linrec(np.full((2, 3), 2.0), np.ones((2, 3)), init=np.array([0.0, 1.0]), return_final=True)
    np.testing.assert_allclose(last, [7, 15])


def test_errors():
    with pytest.raises(TypeError, match="at least one of s and t must be an array"):
        recur.linrec(0.5, 1.0)
    with pytest.raises(ValueError, match="s has shape"):
        recur.linrec(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="complex"):
        recur.linrec(np.ones(3, complex), 1.0)
    with pytest.raises(ValueError, match="init has shape"):
        recur.linrec(0.5, np.ones((2, 3)), init=np.ones(3))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("form", ["arrays", "scalar_s"])
def test_float16_storage(reverse, axis, form, rng):
    """NumPy float16 on the CPU: float32 arithmetic, the result rounded once
    (lowp.py), odd lengths, a batch along either axis (contiguous and
    interleaved sequences), init and the final value in float16."""
    shape = (3, 1001)
    s = rng.uniform(-0.95, 0.95, shape).astype(np.float16) if form == "arrays" else 0.9
    t = rng.standard_normal(shape).astype(np.float16)
    bshape = shape[: axis % 2] + shape[axis % 2 + 1 :]
    init = rng.standard_normal(bshape).astype(np.float16)
    w, final = recur.linrec(s, t, axis=axis, reverse=reverse, init=init, return_final=True)
    assert w.dtype == np.float16 and final.dtype == np.float16 and w.shape == shape
    s_used = s if form == "arrays" else np.float16(s)  # a scalar is rounded to the arrays' dtype
    want, _, mag = lowp.reference(s_used, t, axis, reverse, init)
    lowp.assert_rounded(w, want, mag, "float16")
    last = np.take(w, 0 if reverse else shape[axis] - 1, axis=axis)
    np.testing.assert_array_equal(final, last)


def test_float16_mixed_with_float32_computes_in_float32(rng):
    s = rng.uniform(-0.9, 0.9, 50).astype(np.float16)
    t = rng.standard_normal(50).astype(np.float32)
    w = recur.linrec(s, t)
    assert w.dtype == np.float32
    np.testing.assert_allclose(w, reference(s, t, -1, False, None)[0], rtol=1e-5, atol=1e-5)


def test_float16_only_for_linrec():
    import recur.signal as rs

    with pytest.raises(TypeError, match="float32 or float64"):
        rs.lfilter([1.0], [1.0, -0.5], np.ones(4, np.float16))


def test_numpy_bfloat16_is_refused():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(TypeError, match="NumPy bfloat16 arrays are not taken"):
        recur.linrec(0.5, np.ones(4, ml_dtypes.bfloat16))
