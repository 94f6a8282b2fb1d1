"""JAX on the CPU, eagerly: arrays in, arrays out, no copies of the input;
under jax.jit recur refuses with a TypeError (skipped without jax)."""

import numpy as np
import pytest
import scipy.signal as ss

jax = pytest.importorskip("jax")
jnp = jax.numpy

import lowp  # noqa: E402
import recur  # noqa: E402
import recur.linalg as rl  # noqa: E402
import recur.signal as rs  # noqa: E402


def test_eager_calls_return_jax_arrays(rng):
    x = rng.standard_normal((3, 200)).astype(np.float32)
    b, a = ss.butter(4, 0.2)
    y = rs.lfilter(b, a, jnp.asarray(x))
    assert isinstance(y, jax.Array) and y.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(y), rs.lfilter(b, a, x), rtol=1e-6, atol=1e-6)
    y, zf = rs.sosfilt(ss.butter(4, 0.2, output="sos"), jnp.asarray(x), zi=jnp.zeros((2, 3, 2), jnp.float32))
    assert isinstance(zf, jax.Array) and zf.shape == (2, 3, 2)
    w = recur.linrec(0.5, jnp.ones(4))
    np.testing.assert_allclose(np.asarray(w), [1, 1.5, 1.75, 1.875])
    d = jnp.full((2, 5), 4.0)
    x = rl.solve_tridiagonal(-jnp.ones((2, 4)), d, -jnp.ones((2, 4)), jnp.ones((2, 5)))
    assert isinstance(x, jax.Array)
    np.testing.assert_allclose(np.asarray(x), rl.solve_tridiagonal(-np.ones((2, 4)), np.full((2, 5), 4.0), -np.ones((2, 4)), np.ones((2, 5))))


def test_jit_is_refused():
    with pytest.raises(TypeError, match="eagerly only"):
        jax.jit(lambda x: rs.lfilter([1.0], [1.0, -0.5], x))(jnp.ones(8))


def _x64(on):
    """A context with jax_enable_x64 set to `on` (conftest turns it on)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(on)
    from jax import experimental

    return experimental.enable_x64() if on else experimental.disable_x64()


@pytest.mark.parametrize("x64", [True, False])
def test_integer_signals_compute_in_the_widest_float(x64):
    """Integer samples compute in float64 as in scipy, or in float32 where
    JAX holds no float64 (jax_enable_x64 off), never a mix."""
    b, a = ss.butter(2, 0.2)
    ints = np.arange(-50, 50, dtype=np.int32).reshape(2, 50)
    want = np.float64 if x64 else np.float32
    with _x64(x64):
        x = jnp.asarray(ints)
        for got in (rs.lfilter(b, a, x), rs.sosfilt(ss.butter(2, 0.2, output="sos"), x), rs.filtfilt(b, a, x),
                    recur.linrec(0.5, x), rs.lfilter(b, a, x, zi=np.zeros((2, 2)))[1]):
            assert isinstance(got, jax.Array) and got.dtype == want
        np.testing.assert_allclose(np.asarray(rs.lfilter(b, a, x)), ss.lfilter(b, a, ints), rtol=1e-5 if not x64 else 1e-12,
                                   atol=1e-4 if not x64 else 1e-12)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_linrec_low_precision(dtype, rng):
    """JAX bfloat16 and float16 arrays: float32 arithmetic, rounded once (lowp.py)."""
    s = jnp.asarray(rng.uniform(-0.95, 0.95, (3, 1001)), dtype=dtype)
    t = jnp.asarray(rng.standard_normal((3, 1001)), dtype=dtype)
    w = recur.linrec(s, t, reverse=True)
    assert isinstance(w, jax.Array) and w.dtype == jnp.dtype(dtype)
    want, _, mag = lowp.reference(np.asarray(s, np.float64), np.asarray(t, np.float64), -1, True, None)
    lowp.assert_rounded(np.asarray(w, np.float64), want, mag, dtype)
