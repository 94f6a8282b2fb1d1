"""recur.dpcm: encode against a NumPy reference, exact integer round trips,
init, axis, float codecs, errors."""

import numpy as np
import pytest

import recur.dpcm as dpcm


def encode_reference(x, c, shift, init=None):
    x = np.asarray(x, np.int64)
    k = len(c)
    e = np.empty_like(x)
    for row in np.ndindex(*x.shape[:-1]):
        past = list(init[row]) if init is not None else [0] * k
        for i in range(x.shape[-1]):
            p = sum(cj * pj for cj, pj in zip(c, past)) >> shift
            e[row + (i,)] = x[row + (i,)] - p
            past = [x[row + (i,)]] + past[:-1]
    return e


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint8])
@pytest.mark.parametrize("c,shift", [([1], 0), ([2, -1], 0), ([3, -1], 1), ([], 0)])
def test_integer_round_trip(dtype, c, shift, rng):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (3, 200), endpoint=True).astype(dtype)
    e = dpcm.encode(x, c, shift)
    assert e.dtype == dtype
    want = encode_reference(x, c, shift).astype(dtype)  # wrap-around modulo 2^bits
    np.testing.assert_array_equal(e, want)
    np.testing.assert_array_equal(dpcm.decode(e, c, shift), x)


def test_init_and_axis(rng):
    x = rng.integers(-1000, 1000, (50, 4)).astype(np.int16)
    init = rng.integers(-1000, 1000, (2, 4)).astype(np.int16)
    e = dpcm.encode(x, [2, -1], axis=0, init=init)
    want = encode_reference(x.T, [2, -1], 0, init.T).T.astype(np.int16)
    np.testing.assert_array_equal(e, want)
    np.testing.assert_array_equal(dpcm.decode(e, [2, -1], axis=0, init=init), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_round_trip(dtype, rng):
    x = rng.standard_normal((2, 300)).astype(dtype)
    c = [1.5, -0.6]
    e = dpcm.encode(x, c)
    np.testing.assert_allclose(dpcm.decode(e, c), x, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_docstring_example():
    x = np.array([[10, 12, 15, 15]], dtype=np.int16)
    np.testing.assert_array_equal(dpcm.encode(x, [2, -1]), [[10, -8, 1, -3]])


def test_errors():
    with pytest.raises(TypeError, match="integer samples take integer coefficients"):
        dpcm.encode(np.ones(5, np.int16), [1.5])
    with pytest.raises(TypeError, match="samples of dtype float16"):
        dpcm.encode(np.ones(5, np.float16), [1.0])
    with pytest.raises(ValueError, match="shift = 70 is outside"):
        dpcm.encode(np.ones(5, np.int16), [1], shift=70)
    with pytest.raises(ValueError, match="shift = 1 with floating-point samples"):
        dpcm.encode(np.ones(5), [1.0], shift=1)
    with pytest.raises(ValueError, match="init has shape"):
        dpcm.encode(np.ones((2, 5), np.int16), [1, 1], init=np.ones((2, 3), np.int16))
