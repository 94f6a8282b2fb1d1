"""The GPU through CuPy, PyTorch and JAX (marked gpu: skipped without
recur's CUDA backend and a device, or without the framework): results
against scipy and against recur's CPU results, the caller's array type and
device back, the current stream and stream= honoured (work ordered after
the producer's), arrays on the wrong device refused, zero-copy inputs;
the tridiagonal solve's pivoting, periodic and refinement options (accepted
as "not implemented on the GPU yet" until the GPU runs them)."""

import numpy as np
import pytest
import scipy.signal as ss

import recur
import recur.dpcm as dpcm
import recur.linalg as rl
import recur.signal as rs
from recur._call_signal import correlate_lags
from filters import DESIGNS, design
import lowp

pytestmark = pytest.mark.gpu


def _frameworks():
    out = []
    try:
        import cupy

        out.append(pytest.param(("cupy", cupy.asarray, cupy.asnumpy), id="cupy"))
    except ImportError:
        pass
    try:
        import torch

        out.append(pytest.param(("torch", lambda a: torch.as_tensor(a, device="cuda"), lambda t: t.cpu().numpy()), id="torch"))
    except ImportError:
        pass
    try:
        import jax

        def put(a):
            return jax.device_put(a, jax.devices("gpu")[0])

        out.append(pytest.param(("jax", put, np.asarray), id="jax"))
    except (ImportError, RuntimeError):
        pass
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="no GPU framework (cupy, torch, jax)"))]


FRAMEWORKS = _frameworks()


@pytest.fixture(params=FRAMEWORKS)
def fw(request):
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_filters_match_the_cpu(fw, dtype, rng):
    name, to_dev, to_host = fw
    x = rng.standard_normal((4, 3001)).astype(dtype)
    b, a = ss.cheby1(4, 1, 0.2)
    sos = ss.ellip(6, 1, 40, [0.1, 0.3], "bandpass", output="sos")
    tol = 2e-3 if dtype == np.float32 else 1e-9
    xd = to_dev(x)
    for got, want in (
        (rs.lfilter(b, a, xd), rs.lfilter(b, a, x)),
        (rs.sosfilt(sos, xd), rs.sosfilt(sos, x)),
        (rs.filtfilt(b, a, xd), rs.filtfilt(b, a, x)),
        (rs.sosfiltfilt(sos, xd), rs.sosfiltfilt(sos, x)),
        (rs.lfilter(b, a, to_dev(np.ascontiguousarray(x.T)), axis=0), rs.lfilter(b, a, x.T, axis=0)),
    ):
        assert type(got) is type(xd)
        scale = np.max(np.abs(want)) + 1
        np.testing.assert_allclose(to_host(got), want, atol=tol * scale)
    zi = rs.lfilter_zi(b, a) * x[:, :1]
    y, zf = rs.lfilter(b, a, xd, zi=to_dev(zi))
    y_ref, zf_ref = ss.lfilter(b, a, x, zi=zi)
    np.testing.assert_allclose(to_host(zf), zf_ref, atol=tol * (np.max(np.abs(zf_ref)) + 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lfilter_designs_within_10x_of_scipy(fw, dtype, rng):
    """The GPU lfilter of every designed (b, a) filter of orders 1-8 (orders
    3-8 whose companion matrix's powers peak run as second-order sections):
    its error against the sequential filter of the float64 design in long
    double is at most 10x scipy's own error in the same precision, from a
    zero state and from zi = lfilter_zi * x[0] (with zf)."""
    name, to_dev, to_host = fw
    ld, eps = np.longdouble, np.finfo(dtype).eps
    x = rng.standard_normal(20011).astype(dtype)

    def error(got, ref):
        return float(np.max(np.abs(np.asarray(got, dtype=ld) - ref)) / np.max(np.abs(ref)))

    checked = 0
    for p in DESIGNS:
        b, a = design(*p)
        if len(a) > 9:
            continue
        zi = (ss.lfilter_zi(b, a) * float(x[0])).astype(dtype)
        ref = ss.lfilter(b.astype(ld), a.astype(ld), x.astype(ld))
        ref_zi, ref_zf = ss.lfilter(b.astype(ld), a.astype(ld), x.astype(ld), zi=zi.astype(ld))
        bt, at = b.astype(dtype), a.astype(dtype)
        with np.errstate(all="ignore"):
            mine = error(ss.lfilter(bt, at, x), ref)
            y_zi, zf = ss.lfilter(bt, at, x, zi=zi)
            mine_zi, mine_zf = error(y_zi, ref_zi), error(zf, ref_zf)
        if not (mine <= 1 and mine_zi <= 1):
            continue  # unstable once rounded to dtype: scipy's result is garbage too
        checked += 1
        got = to_host(rs.lfilter(bt, at, to_dev(x)))
        assert error(got, ref) <= 10 * max(mine, eps), p
        got, got_zf = rs.lfilter(bt, at, to_dev(x), zi=to_dev(zi))
        assert error(to_host(got), ref_zi) <= 10 * max(mine_zi, eps), p
        if mine_zf <= 1:
            assert error(to_host(got_zf), ref_zf) <= 10 * max(mine_zf, mine_zi, eps), p
    assert checked > 60


def test_linrec_tridiag_dpcm_match_the_cpu(fw, rng):
    name, to_dev, to_host = fw
    s = rng.uniform(-0.9, 0.9, (3, 1000))
    t = rng.standard_normal((3, 1000))
    np.testing.assert_allclose(to_host(recur.linrec(to_dev(s), to_dev(t))), recur.linrec(s, t), atol=1e-10)
    np.testing.assert_allclose(to_host(recur.linrec(0.9, to_dev(t), reverse=True)), recur.linrec(0.9, t, reverse=True), atol=1e-10)
    dl, du = rng.uniform(-1, 1, (2, 64, 99)), rng.uniform(-1, 1, (2, 64, 99))
    d, b = 4 + rng.uniform(0, 1, (2, 64, 100)), rng.standard_normal((2, 64, 100))
    got = rl.solve_tridiagonal(to_dev(dl), to_dev(d), to_dev(du), to_dev(b))
    np.testing.assert_allclose(to_host(got), rl.solve_tridiagonal(dl, d, du, b), atol=1e-10)
    img = rng.integers(0, 255, (64, 128)).astype(np.int16)
    e = dpcm.encode(to_dev(img), [2, -1])
    np.testing.assert_array_equal(to_host(e), dpcm.encode(img, [2, -1]))
    np.testing.assert_array_equal(to_host(dpcm.decode(e, [2, -1])), img)


def test_breakdown_on_the_gpu(fw, rng):
    name, to_dev, to_host = fw
    d = np.full((3, 10), 4.0)
    d[1, 0] = 0.0
    ones = np.zeros((3, 10))
    with pytest.raises(np.linalg.LinAlgError, match="system 1 at row 1"):
        rl.solve_tridiagonal(to_dev(ones), to_dev(d), to_dev(ones), to_dev(np.ones((3, 10))))


def _unless_not_on_the_gpu_yet(call):
    """call()'s result, or None where the GPU refuses an option with the C++
    library's "... is not implemented on the GPU yet" (partial pivoting,
    periodic systems, refinement, the pivoted and refinement_steps arrays):
    these tests pass before and after the GPU runs them, and check the
    result once it does."""
    try:
        return call()
    except ValueError as e:
        if "not implemented on the GPU yet" not in str(e):
            raise
        return None


def _tiny_first_pivot(rng, count, n):
    dl, du = rng.uniform(-1, 1, (count, n)), rng.uniform(-1, 1, (count, n))
    d = 4 + rng.uniform(0, 1, (count, n))
    d[::2, 0], du[::2, 0], dl[::2, 1] = 1e-14, 1.0, 1.0  # the even systems need pivoting
    return dl, d, du


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pivoting_on_the_gpu(fw, dtype, rng):
    name, to_dev, to_host = fw
    tol = 1e-5 if dtype == np.float32 else 1e-12
    dl, du = rng.uniform(-1, 1, (2, 64, 100)).astype(dtype), rng.uniform(-1, 1, (2, 64, 100)).astype(dtype)
    d, b = (4 + rng.uniform(0, 1, (2, 64, 100))).astype(dtype), rng.standard_normal((2, 64, 100)).astype(dtype)
    dev = [to_dev(v) for v in (dl, d, du, b)]
    # Diagonally dominant systems: automatic (the default) and none run on the GPU today.
    want = rl.solve_tridiagonal(dl, d, du, b, pivoting="none")
    for pivoting in ("auto", "none"):
        got = rl.solve_tridiagonal(*dev, pivoting=pivoting)
        assert type(got) is type(dev[1])
        np.testing.assert_allclose(to_host(got), want, rtol=tol, atol=tol)
    x, details = rl.solve_tridiagonal(*dev, pivoting="none", return_details=True)
    assert not to_host(details.info).any() and not to_host(details.pivoted).any()
    # A tiny first pivot: partial pivoting, and automatic reporting which systems it pivoted.
    dl, d, du = (v.astype(dtype) for v in _tiny_first_pivot(rng, 6, 80))
    b = rng.standard_normal((6, 80)).astype(dtype)
    dev = [to_dev(v) for v in (dl, d, du, b)]
    want, details = rl.solve_tridiagonal(dl, d, du, b, return_details=True)
    scale = np.max(np.abs(want))
    got = _unless_not_on_the_gpu_yet(lambda: rl.solve_tridiagonal(*dev, pivoting="partial"))
    if got is not None:
        assert np.max(np.abs(to_host(got) - want)) <= tol * scale
    got = _unless_not_on_the_gpu_yet(lambda: rl.solve_tridiagonal(*dev, return_details=True))
    if got is not None:
        assert np.max(np.abs(to_host(got[0]) - want)) <= tol * scale
        np.testing.assert_array_equal(to_host(got[1].pivoted), details.pivoted)
        np.testing.assert_array_equal(details.pivoted, [1, 0, 1, 0, 1, 0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rhs", [None, 2])
def test_periodic_on_the_gpu(fw, dtype, rhs, rng):
    name, to_dev, to_host = fw
    dl, du = rng.uniform(-1, 1, (64, 100)).astype(dtype), rng.uniform(-1, 1, (64, 100)).astype(dtype)
    d = (4 + rng.uniform(0, 1, (64, 100))).astype(dtype)
    b = rng.standard_normal((64, 100) if rhs is None else (64, 100, rhs)).astype(dtype)
    for axis in (-1, 0):
        args = (dl, d, du, b) if axis == -1 else (dl.T.copy(), d.T.copy(), du.T.copy(), np.ascontiguousarray(np.moveaxis(b, 1, 0)))
        want = rl.solve_tridiagonal(*args, axis=axis, periodic=True)
        got = _unless_not_on_the_gpu_yet(lambda: rl.solve_tridiagonal(*map(to_dev, args), axis=axis, periodic=True))
        if got is not None:
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(to_host(got), want, rtol=tol, atol=tol * np.max(np.abs(want)))


def test_refinement_on_the_gpu(fw, rng):
    name, to_dev, to_host = fw
    n = 2000
    dl, du = -np.ones((8, n)), -np.ones((8, n))
    d = np.full((8, n), 2 + 1e-6)  # a shifted Laplacian, kappa ~1e6
    b = rng.standard_normal((8, n))
    want = rl.solve_tridiagonal(dl, d, du, b)
    got = _unless_not_on_the_gpu_yet(lambda: rl.solve_tridiagonal(*map(to_dev, (dl, d, du, b)), refine=True, return_details=True))
    if got is not None:
        x, details = to_host(got[0]), to_host(got[1].refinement_steps)
        assert ((details >= 1) & (details <= 10)).all()
        eps = np.finfo(np.float64).eps
        for k in range(8):
            r = b[k] - (d[k] * x[k] + np.r_[0, dl[k, 1:] * x[k, :-1]] + np.r_[du[k, :-1] * x[k, 1:], 0])
            assert np.max(np.abs(r)) <= 4 * eps * (4 * np.max(np.abs(x[k])) + np.max(np.abs(b[k])))
        assert np.max(np.abs(x - want)) <= 1e-8 * np.max(np.abs(want))
    with pytest.raises(ValueError, match="refine=True needs float64"):
        rl.solve_tridiagonal(*(to_dev(v.astype(np.float32)) for v in (dl, d, du, b)), refine=True)


def test_streams_torch(rng):
    torch = pytest.importorskip("torch")
    x = torch.randn(8, 1 << 20, device="cuda", dtype=torch.float64)
    b, a = ss.butter(2, 0.1)
    want = rs.lfilter(b, a, x.cpu().numpy())
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # Produced and consumed on the side stream: recur runs on the current one.
        x2 = x * 2
        y = rs.lfilter(b, a, x2)
    side.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), 2 * want, atol=1e-9)
    other = torch.cuda.Stream()
    other.wait_stream(torch.cuda.current_stream())
    y = rs.lfilter(b, a, x, stream=other)
    other.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), want, atol=1e-9)
    y = rs.lfilter(b, a, x, stream=other.cuda_stream)
    other.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), want, atol=1e-9)


def test_streams_cupy(rng):
    cupy = pytest.importorskip("cupy")
    x = cupy.random.standard_normal((4, 1 << 18))
    b, a = ss.butter(3, 0.2)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x2 = x + 1
        y = rs.lfilter(b, a, x2)
    s.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(y), rs.lfilter(b, a, cupy.asnumpy(x) + 1), atol=1e-9)


def test_torch_autograd_on_the_gpu(rng):
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 64, device="cuda", dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.3, 0.2], dtype=torch.float64, requires_grad=True)
    a = torch.tensor([1.0, -0.5], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda b, a, x: rs.lfilter(b, a, x), (b, a, x))
    s = torch.rand(2, 64, device="cuda", dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda s, x: recur.linrec(s * 0.9, x), (s, x))
    # Coefficients on the host (recur reads them there), the signal on the
    # device: each gradient comes back on its argument's device.
    sos = torch.tensor(ss.butter(4, 0.2, output="sos"), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda sos, x: rs.sosfilt(sos, x), (sos, x))
    y = rs.lfilter(b, a, x)
    y.sum().backward()
    assert b.grad.device.type == a.grad.device.type == "cpu" and x.grad.device.type == "cuda"
    d = torch.full((2, 64), 4.0, device="cuda", dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match="dl is on cpu, d on cuda"):
        rl.solve_tridiagonal(torch.ones(2, 63, dtype=torch.float64), d, torch.ones(2, 63, device="cuda"), x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", [((1600, 8200), -1), ((8200, 1600), 0), ((3, 50001), -1)])
def test_linrec_backward_matches_the_cpu(dtype, reverse, shape, axis, rng):
    """linrec's fused backward (recur::linrec_adjoint) on CUDA tensors
    against the same on CPU tensors: batches that fill the device (the rows
    agent, 1600 contiguous sequences of 8200), interleaved ones (the lanes
    agent) and a few long sequences (tiles), gradients through w and the
    final value, with a tensor init."""
    torch = pytest.importorskip("torch")
    tdtype = getattr(torch, dtype)
    ax = axis % 2
    host = [torch.as_tensor(a, dtype=tdtype) for a in (rng.uniform(-0.95, 0.95, shape), rng.standard_normal(shape),
                                                       rng.standard_normal(shape[1 - ax]), rng.standard_normal(shape),
                                                       rng.standard_normal(shape[1 - ax]))]
    grads = []
    for device in ("cpu", "cuda"):
        s, t, i, c, cf = (v.to(device) for v in host)
        s, t, i = (v.requires_grad_() for v in (s, t, i))
        w, final = recur.linrec(s, t, axis=axis, reverse=reverse, init=i, return_final=True)
        grads.append([v.cpu() for v in torch.autograd.grad((w * c).sum() + (final * cf).sum(), (s, t, i))])
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for name, a, b in zip(("s", "t", "init"), grads[1], grads[0]):
        torch.testing.assert_close(a, b, **tol, msg=lambda m: f"d{name}: {m}")


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_torch_lfilter_backward_on_the_gpu_matches_cpu(order, rng):
    """The backward's pieces on the GPU (the reverse filters, the lagged
    correlations): gradients in float64 as the CPU's, with zi, along the
    last axis and the middle one, and a float32 batch of 64 x 2^14."""
    torch = pytest.importorskip("torch")
    a = np.array([1.0])
    for r in rng.uniform(-0.7, 0.7, order):
        a = np.convolve(a, [1.0, -r])
    b, a = rng.uniform(-1, 1, order + 1), 1.3 * a
    for shape, axis in (((3, 5000), -1), ((2, 4001, 3), 1)):
        x = rng.standard_normal(shape)
        zshape = list(shape)
        zshape[axis] = order
        zi, g = rng.standard_normal(zshape), rng.standard_normal(shape)
        grads = {}
        for dev in ("cpu", "cuda"):
            args = [torch.tensor(v, dtype=torch.float64, device=d, requires_grad=True)
                    for v, d in ((b, "cpu"), (a, "cpu"), (x, dev), (zi, dev))]
            y = rs.lfilter(*args[:3], axis=axis, zi=args[3])[0]
            y.backward(torch.tensor(g, device=dev))
            grads[dev] = [v.grad.cpu().numpy() for v in args]
        for got, want in zip(grads["cuda"], grads["cpu"]):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    x = torch.randn(64, 1 << 14, device="cuda", requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float32, requires_grad=True)
    at = torch.tensor(a, dtype=torch.float32, requires_grad=True)
    g = torch.randn(64, 1 << 14, device="cuda")
    dx, db, da = torch.autograd.grad(rs.lfilter(bt, at, x), (x, bt, at), g)
    x64 = x.detach().double().cpu().requires_grad_(True)
    b64, a64 = (v.detach().double().requires_grad_(True) for v in (bt, at))
    want = torch.autograd.grad(rs.lfilter(b64, a64, x64), (x64, b64, a64), g.double().cpu())
    for got, w in zip((dx, db, da), want):
        np.testing.assert_allclose(got.double().cpu().numpy(), w.numpy(), rtol=2e-3, atol=2e-3 * float(w.abs().max()))


@pytest.mark.parametrize("reverse", [False, True])
def test_correlate_lags_on_the_gpu(reverse, rng):
    torch = pytest.importorskip("torch")
    u = rng.standard_normal((3, 7001))
    v = [rng.standard_normal((3, 7001)) for _ in range(2)]
    want = correlate_lags(u, v, 9, reverse=reverse)
    got = correlate_lags(torch.tensor(u, device="cuda"), [torch.tensor(w, device="cuda") for w in v], 9,
                         reverse=reverse)
    assert got.device.type == "cuda" and got.shape == (2, 9)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-10, atol=1e-10 * np.abs(want).max())


def test_wrong_device_is_refused(rng):
    torch = pytest.importorskip("torch")
    x = torch.randn(100, device="cuda")
    with pytest.raises(ValueError, match="not CUDA device memory"):
        recur.linrec(x, torch.randn(100))
    with pytest.raises(ValueError, match="order 9"):
        rs.lfilter(np.ones(10) / 10, [1.0], x)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_linrec_low_precision_torch(dtype, reverse, axis, rng):
    """bfloat16 and float16 CUDA tensors, float32 arithmetic: a batch of odd
    length 10^5 + 3 along either axis (contiguous and interleaved sequences)
    against the float64 recurrence of the rounded inputs, and the result and
    gradients against the float32 call's rounded (lowp.py)."""
    torch = pytest.importorskip("torch")
    shape = (4, 100003) if axis == -1 else (100003, 4)
    tdtype = getattr(torch, dtype)
    s = torch.as_tensor(rng.uniform(-0.95, 0.95, shape).astype(np.float32), device="cuda").to(tdtype)
    t = torch.as_tensor(rng.standard_normal(shape).astype(np.float32), device="cuda").to(tdtype)
    init = torch.as_tensor(rng.standard_normal(4).astype(np.float32), device="cuda").to(tdtype)
    w, final = recur.linrec(s, t, axis=axis, reverse=reverse, init=init, return_final=True)
    assert w.dtype == tdtype and final.dtype == tdtype and w.device.type == "cuda"
    host = [v.double().cpu().numpy() for v in (s, t, init)]
    want, _, mag = lowp.reference(*host[:2], axis, reverse, host[2])
    lowp.assert_rounded(w.double().cpu().numpy(), want, mag, dtype)
    last = w.select(axis, 0 if reverse else shape[axis] - 1)
    assert torch.equal(final, last)
    lowp.torch_against_float32(torch, "cuda", dtype, (48, 4099) if axis == -1 else (4099, 48), axis, reverse, rng)


def test_linrec_low_precision_accelerated_scan_shape(rng):
    """accelerated-scan's layout (batch, channels, 2^16) in bfloat16: the
    result and the gradients against the float32 call's."""
    torch = pytest.importorskip("torch")
    lowp.torch_against_float32(torch, "cuda", "bfloat16", (2, 16, 65536), -1, False, rng)


@pytest.mark.parametrize("reverse", [False, True])
def test_linrec_float16_cupy(reverse, rng):
    cupy = pytest.importorskip("cupy")
    shape = (3, 100003)
    s = rng.uniform(-0.95, 0.95, shape).astype(np.float16)
    t = rng.standard_normal(shape).astype(np.float16)
    w = recur.linrec(cupy.asarray(s), cupy.asarray(t).T.copy().T, reverse=reverse)  # t: a strided copy
    assert isinstance(w, cupy.ndarray) and w.dtype == np.float16
    want, _, mag = lowp.reference(s, t, -1, reverse, None)
    lowp.assert_rounded(cupy.asnumpy(w), want, mag, "float16")
