"""recur.signal against scipy.signal: designed filters of every family and
order 1-8 in (b, a) and sos form, float32 and float64; axis, zi and padding
variants; odd lengths; strided and non-contiguous inputs; the state
functions; bad inputs raising with the C++ message and leaving the inputs
alone."""

import numpy as np
import pytest
import scipy.signal as ss

import recur.signal as rs
from filters import DESIGNS, design, design_id


def _error(y, ref):
    """The largest error, inf where y is not finite (an unstable result)."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.abs(np.asarray(y, np.longdouble) - ref)
    return float(np.max(np.where(np.isfinite(d), d, np.inf)))


@pytest.mark.parametrize("spec", DESIGNS, ids=design_id)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_designed_filters_as_accurate_as_scipy(spec, dtype, rng):
    """recur's error against a long-double reference of the designed filter
    (float64 coefficients) is at most 10x scipy's own error in the same
    precision (plus a few ulps of the output's size), in (b, a) and sos form.
    Where the precision's rounding of the coefficients makes scipy's result
    blow up (float32, high-order bandpass in (b, a) form) there is nothing to
    match."""
    x = rng.standard_normal((2, 1501)).astype(dtype)
    b64, a64 = design(*spec)
    sos64 = design(*spec, output="sos")
    b, a, sos = b64.astype(dtype), a64.astype(dtype), sos64.astype(dtype)
    eps = np.finfo(dtype).eps
    wide = np.longdouble
    ref = ss.lfilter(b64.astype(wide), a64.astype(wide), x.astype(wide))
    y = rs.lfilter(b, a, x)
    assert y.dtype == dtype and y.shape == x.shape
    scale = float(np.max(np.abs(ref))) + 1
    assert _error(y, ref) <= 10 * _error(ss.lfilter(b, a, x), ref) + 8 * eps * scale
    ref_sos = ss.sosfilt(sos64.astype(wide), x.astype(wide))
    y_sos = rs.sosfilt(sos, x)
    assert _error(y_sos, ref_sos) <= 10 * _error(ss.sosfilt(sos, x), ref_sos) + 8 * eps * scale


@pytest.mark.parametrize("spec", DESIGNS[::7], ids=design_id)
def test_filtfilt_and_sosfiltfilt_match_scipy(spec, rng):
    b, a = design(*spec)
    sos = design(*spec, output="sos")
    x = rng.standard_normal((3, 400))
    for padtype in ("odd", "even", "constant", None):
        np.testing.assert_allclose(
            rs.filtfilt(b, a, x, padtype=padtype), ss.filtfilt(b, a, x, padtype=padtype), rtol=1e-7, atol=1e-7
        )
        np.testing.assert_allclose(
            rs.sosfiltfilt(sos, x, padtype=padtype), ss.sosfiltfilt(sos, x, padtype=padtype), rtol=1e-9, atol=1e-9
        )


@pytest.mark.parametrize("padlen", [0, 1, 5, 39])
def test_filtfilt_padlen(padlen, rng):
    b, a = ss.butter(3, 0.1)
    sos = ss.butter(3, 0.1, output="sos")
    x = rng.standard_normal(40)
    np.testing.assert_allclose(rs.filtfilt(b, a, x, padlen=padlen), ss.filtfilt(b, a, x, padlen=padlen), atol=1e-12)
    np.testing.assert_allclose(rs.sosfiltfilt(sos, x, padlen=padlen), ss.sosfiltfilt(sos, x, padlen=padlen), atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 101])
def test_axis_and_zi(axis, n, rng):
    shape = [4, 3, 5]
    shape[axis] = n
    x = rng.standard_normal(shape)
    b, a = ss.cheby1(3, 1, 0.3)
    sos = ss.cheby1(3, 1, 0.3, output="sos")
    np.testing.assert_allclose(rs.lfilter(b, a, x, axis=axis), ss.lfilter(b, a, x, axis=axis), atol=1e-12)
    zshape = list(shape)
    zshape[axis] = 3
    zi = rng.standard_normal(zshape)
    y, zf = rs.lfilter(b, a, x, axis=axis, zi=zi)
    y_ref, zf_ref = ss.lfilter(b, a, x, axis=axis, zi=zi)
    np.testing.assert_allclose(y, y_ref, atol=1e-12)
    np.testing.assert_allclose(zf, zf_ref, atol=1e-12)
    zshape[axis] = 2
    zs = rng.standard_normal([2] + zshape)
    y, zf = rs.sosfilt(sos, x, axis=axis, zi=zs)
    y_ref, zf_ref = ss.sosfilt(sos, x, axis=axis, zi=zs)
    np.testing.assert_allclose(y, y_ref, atol=1e-12)
    np.testing.assert_allclose(zf, zf_ref, atol=1e-12)


def test_zi_broadcast_as_scipy(rng):
    x = rng.standard_normal((4, 50))
    b, a = ss.butter(2, 0.2)
    zi = ss.lfilter_zi(b, a)  # (2,): broadcast over the 4 sequences
    y, zf = rs.lfilter(b, a, x, zi=zi[None, :])
    y_ref, zf_ref = ss.lfilter(b, a, x, zi=np.broadcast_to(zi, (4, 2)))
    np.testing.assert_allclose(y, y_ref, atol=1e-13)
    np.testing.assert_allclose(zf, zf_ref, atol=1e-13)


def _strided_views(rng):
    base = rng.standard_normal((6, 8, 60))
    yield "sliced", base[::2, :, ::3], -1
    yield "transposed", base.transpose(2, 0, 1), 0
    yield "fortran", np.asfortranarray(base), -1
    yield "reversed", base[:, ::-1, ::-1], -1
    yield "batch_not_collapsible", base[::2, ::2, :], -1
    yield "axis_in_the_middle", base, 1
    yield "permuted_batch", base.transpose(1, 0, 2), -1
    yield "readonly", np.broadcast_to(base[0], (3, 8, 60)), -1


@pytest.mark.parametrize("kind", ["lfilter", "sosfilt", "filtfilt", "sosfiltfilt"])
def test_strided_inputs(kind, rng):
    b, a = ss.ellip(4, 1, 40, 0.3)
    sos = ss.ellip(4, 1, 40, 0.3, output="sos")
    for name, x, axis in _strided_views(rng):
        before = x.copy()
        if kind == "lfilter":
            got, want = rs.lfilter(b, a, x, axis=axis), ss.lfilter(b, a, x, axis=axis)
        elif kind == "sosfilt":
            got, want = rs.sosfilt(sos, x, axis=axis), ss.sosfilt(sos, x, axis=axis)
        elif kind == "filtfilt":
            got, want = rs.filtfilt(b, a, x, axis=axis, padlen=5), ss.filtfilt(b, a, x, axis=axis, padlen=5)
        else:
            got, want = rs.sosfiltfilt(sos, x, axis=axis, padlen=5), ss.sosfiltfilt(sos, x, axis=axis, padlen=5)
        np.testing.assert_allclose(got, want, atol=1e-11, err_msg=name)
        np.testing.assert_array_equal(x, before, err_msg=name)


def test_integer_input_computes_in_float64():
    x = np.arange(20, dtype=np.int32)
    y = rs.lfilter([0.5, 0.5], [1.0], x)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, ss.lfilter([0.5, 0.5], [1.0], x))


def test_float32_stays_float32(rng):
    x = rng.standard_normal(100).astype(np.float32)
    b, a = ss.butter(2, 0.25)  # float64 coefficients
    assert rs.lfilter(b, a, x).dtype == np.float32
    assert rs.filtfilt(b, a, x).dtype == np.float32


@pytest.mark.parametrize("spec", DESIGNS[::5], ids=design_id)
def test_state_functions_match_scipy(spec, rng):
    b, a = design(*spec)
    np.testing.assert_allclose(rs.lfilter_zi(b, a), ss.lfilter_zi(b, a), rtol=1e-8, atol=1e-10)
    sos = design(*spec, output="sos")
    np.testing.assert_allclose(rs.sosfilt_zi(sos), ss.sosfilt_zi(sos), rtol=1e-8, atol=1e-10)
    y, x = rng.standard_normal(5), rng.standard_normal(3)
    np.testing.assert_allclose(rs.lfiltic(b, a, y, x), ss.lfiltic(b, a, y, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rs.lfiltic(b, a, y), ss.lfiltic(b, a, y), rtol=1e-12, atol=1e-12)


def test_one_pole_examples():
    np.testing.assert_allclose(rs.lfilter([1.0], [1.0, -0.5], np.ones(3)), [1.0, 1.5, 1.75])
    np.testing.assert_allclose(rs.lfilter_zi([0.5, 0.5], [1.0, -0.5]), [1.5])


# ------------------------------------------------------------------ errors --


def _raises(exc, match, fn, *args, **kw):
    inputs = [a.copy() for a in args if isinstance(a, np.ndarray)]
    with pytest.raises(exc, match=match):
        fn(*args, **kw)
    for before, after in zip(inputs, [a for a in args if isinstance(a, np.ndarray)]):
        np.testing.assert_array_equal(before, after)  # nothing written


def test_bad_inputs_raise_with_the_cpp_message():
    x = np.ones(50)
    _raises(TypeError, "complex", rs.lfilter, [1.0], [1.0], x.astype(complex))
    _raises(TypeError, "float16", rs.lfilter, [1.0], [1.0], x.astype(np.float16))
    _raises(ValueError, r"recur::lfilter: a\[0\] = 0", rs.lfilter, [1.0], [0.0, 1.0], x)
    _raises(ValueError, "recur::lfilter: b is empty", rs.lfilter, np.array([]), [1.0], x)
    _raises(ValueError, r"b\[0\] = .*inf.* is not finite", rs.lfilter, [np.inf], [1.0], x)
    _raises(ValueError, "zi has shape", rs.lfilter, [1.0, 1.0], [1.0], x, zi=np.zeros(3))
    _raises(ValueError, "axis 2 is out of bounds", rs.lfilter, [1.0], [1.0], x, axis=2)
    _raises(ValueError, r"sos must be shape \(n_sections, 6\)", rs.sosfilt, np.ones((2, 5)), x)
    _raises(ValueError, "must be greater than padlen, which is 150", rs.filtfilt, [1.0, 1.0], [1.0, -0.5], x, padlen=150)
    _raises(ValueError, "Unknown value 'wrap'", rs.filtfilt, [1.0], [1.0], x, padtype="wrap")
    _raises(ValueError, "method 'gust'", rs.filtfilt, [1.0], [1.0], x, method="gust")
    _raises(ValueError, "pole at z = 1", rs.lfilter_zi, [1.0], [1.0, -1.0])
    _raises(ValueError, "stream given, but x is in host memory", rs.lfilter, [1.0], [1.0], x, stream=0)
    _raises(ValueError, "at least one dimension", rs.lfilter, [1.0], [1.0], np.float64(1.0))
