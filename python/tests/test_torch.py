"""PyTorch on the CPU: results as tensors, and the custom ops' backward
passes checked by torch.autograd.gradcheck in float64 (the tridiagonal
solve's also periodic, pivoted and refined), and traced by torch.compile
(skipped without torch)."""

import numpy as np
import pytest
import scipy.signal as ss

torch = pytest.importorskip("torch")

import lowp  # noqa: E402
import recur  # noqa: E402
import recur.linalg as rl  # noqa: E402
import recur.signal as rs  # noqa: E402
from recur._call_signal import correlate_lags  # noqa: E402


def f64(a, grad=True):
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=grad)


def test_tensors_in_tensors_out(rng):
    x = torch.from_numpy(rng.standard_normal((3, 100)))
    b, a = ss.butter(3, 0.2)
    y = rs.lfilter(b, a, x)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64
    np.testing.assert_allclose(y.numpy(), ss.lfilter(b, a, x.numpy()), atol=1e-12)
    xt = x.t()  # strided (interleaved) input, zero-copy
    np.testing.assert_allclose(rs.sosfilt(ss.butter(3, 0.2, output="sos"), xt, axis=0).numpy(),
                               ss.sosfilt(ss.butter(3, 0.2, output="sos"), xt.numpy(), axis=0), atol=1e-12)
    w = recur.linrec(0.5, torch.ones(4, dtype=torch.float32))
    assert w.dtype == torch.float32
    np.testing.assert_allclose(w.numpy(), [1, 1.5, 1.75, 1.875])
    # One sequence: its final value is a 0-d tensor.
    w, final = recur.linrec(0.5, torch.ones(4, dtype=torch.float32), init=torch.tensor(2.0), return_final=True)
    assert final.shape == () and float(final) == pytest.approx(2.0)
    x = rl.solve_tridiagonal(torch.ones(3), torch.full((4,), 4.0), torch.ones(3), torch.ones(4, dtype=torch.float64))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(4 * np.eye(4) + np.eye(4, k=1) + np.eye(4, k=-1), np.ones(4)))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("scalar_s", [False, True])
def test_linrec_gradcheck(reverse, scalar_s, rng):
    s = 0.7 if scalar_s else f64(rng.uniform(-0.9, 0.9, (2, 7)))
    t = f64(rng.standard_normal((2, 7)))
    init = f64(rng.standard_normal(2))

    def f(*args):
        s_, t_, i_ = (0.7, *args) if scalar_s else args
        w, final = recur.linrec(s_, t_, reverse=reverse, init=i_, return_final=True)
        return w, final

    inputs = (t, init) if scalar_s else (s, t, init)
    assert torch.autograd.gradcheck(f, inputs)


def test_linrec_gradcheck_axis0(rng):
    s = f64(rng.uniform(-0.9, 0.9, (6, 3)))
    t = f64(rng.standard_normal((6, 3)))
    assert torch.autograd.gradcheck(lambda s, t: recur.linrec(s, t, axis=0), (s, t))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("init", ["none", "value", "tensor"])
def test_linrec_gradcheck_fused_backward(reverse, axis, init, rng):
    """The fused backward (recur::linrec_adjoint) on every axis of a 3-D
    batch (interleaved and strided sequences), with init absent, a scalar
    or a tensor, the gradient reaching w and the final value."""
    shape = (5, 3, 4)
    s = f64(rng.uniform(-0.9, 0.9, shape))
    t = f64(rng.standard_normal(shape))
    bshape = tuple(n for j, n in enumerate(shape) if j != axis % 3)
    inputs = (s, t) + ((f64(rng.standard_normal(bshape)),) if init == "tensor" else ())

    def f(s_, t_, *i):
        i_ = i[0] if i else (0.4 if init == "value" else None)
        return recur.linrec(s_, t_, axis=axis, reverse=reverse, init=i_, return_final=True)

    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("reverse", [False, True])
def test_linrec_gradcheck_edges(reverse, rng):
    """One element per sequence; the gradient reaching only the final value
    or only w; s given as a scalar with a tensor init; one sequence."""
    s, t, i = f64(rng.uniform(-0.9, 0.9, (1, 3))), f64(rng.standard_normal((1, 3))), f64(rng.standard_normal(3))
    assert torch.autograd.gradcheck(
        lambda s, t, i: recur.linrec(s, t, axis=0, reverse=reverse, init=i, return_final=True), (s, t, i)
    )
    s, t, i = f64(rng.uniform(-0.9, 0.9, (2, 9))), f64(rng.standard_normal((2, 9))), f64(rng.standard_normal(2))
    assert torch.autograd.gradcheck(
        lambda s, t, i: recur.linrec(s, t, reverse=reverse, init=i, return_final=True)[1], (s, t, i)
    )
    assert torch.autograd.gradcheck(lambda s, t: recur.linrec(s, t, reverse=reverse, init=0.5), (s, t))
    assert torch.autograd.gradcheck(lambda t, i: recur.linrec(0.8, t, reverse=reverse, init=i), (t, i))
    # One sequence: init and the final value are 0-d.
    s, t, i = f64(rng.uniform(-0.9, 0.9, 6)), f64(rng.standard_normal(6)), f64(rng.standard_normal(()))
    assert torch.autograd.gradcheck(
        lambda s, t, i: recur.linrec(s, t, reverse=reverse, init=i, return_final=True), (s, t, i)
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_linrec_backward_against_autograd_of_a_loop(reverse, rng):
    """The fused backward's gradients against PyTorch's autograd through the
    recurrence written as a loop of torch ops (float64, 3 x 257)."""
    shape = (3, 257)
    s = f64(rng.uniform(-0.95, 0.95, shape))
    t = f64(rng.standard_normal(shape))
    i = f64(rng.standard_normal(3))
    c, cf = torch.from_numpy(rng.standard_normal(shape)), torch.from_numpy(rng.standard_normal(3))

    def loop(s, t, i):
        x, out = i, []
        for k in reversed(range(shape[1])) if reverse else range(shape[1]):
            x = s[:, k] * x + t[:, k]
            out.append(x)
        w = torch.stack(out[::-1] if reverse else out, 1)
        return (w * c).sum() + (x * cf).sum()

    want = torch.autograd.grad(loop(s, t, i), (s, t, i))
    w, final = recur.linrec(s, t, reverse=reverse, init=i, return_final=True)
    got = torch.autograd.grad((w * c).sum() + (final * cf).sum(), (s, t, i))
    for name, a, b in zip(("s", "t", "init"), got, want):
        torch.testing.assert_close(a, b, rtol=1e-11, atol=1e-12, msg=lambda m: f"d{name}: {m}")


def test_linrec_second_derivatives_are_refused(rng):
    s, t = f64(rng.uniform(-0.9, 0.9, (2, 5))), f64(rng.standard_normal((2, 5)))
    w = recur.linrec(s, t)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        torch.autograd.grad((w**2).sum(), (s, t), create_graph=True)


@pytest.mark.parametrize("with_zi", [False, True])
def test_lfilter_gradcheck(with_zi, rng):
    b = f64([0.3, 0.2, -0.1])
    a = f64([1.3, -0.4, 0.1])  # a[0] != 1: the normalisation's gradient too
    x = f64(rng.standard_normal((2, 9)))
    zi = f64(rng.standard_normal((2, 2)))

    def f(b, a, x, zi):
        return rs.lfilter(b, a, x, zi=zi)[0] if with_zi else rs.lfilter(b, a, x)

    assert torch.autograd.gradcheck(f, (b, a, x, zi))


def test_lfilter_gradcheck_axis0_short(rng):
    b, a = f64([0.5, 0.1, 0.2, 0.05]), f64([1.0, -0.3])  # order 3 > n - 1
    x = f64(rng.standard_normal((2, 3)))
    assert torch.autograd.gradcheck(lambda b, a, x: rs.lfilter(b, a, x, axis=0), (b, a, x))


@pytest.mark.parametrize("with_zi", [False, True])
def test_sosfilt_gradcheck(with_zi, rng):
    sos = f64(ss.butter(4, 0.3, output="sos"))
    x = f64(rng.standard_normal((2, 11)))
    zi = f64(rng.standard_normal((2, 2, 2)))

    def f(sos, x, zi):
        return rs.sosfilt(sos, x, zi=zi)[0] if with_zi else rs.sosfilt(sos, x)

    assert torch.autograd.gradcheck(f, (sos, x, zi))


def _stable_a(rng, order, a0=1.3):
    """a0 * prod (1 - r z^-1), real poles |r| < 0.7 (a[0] != 1: the
    normalisation's gradient too)."""
    a = np.array([1.0])
    for r in rng.uniform(-0.7, 0.7, order):
        a = np.convolve(a, [1.0, -r])
    return a0 * a


def _with_axis(rng, n, axis, shape=(2, 3)):
    shape = list(shape)
    shape.insert(axis % (len(shape) + 1), n)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_lfilter_gradcheck_orders_with_zi(order, axis, rng):
    """Orders 1-4 (b shorter than a, or a shorter than b), zi, every axis of
    a 3-D array (axis 1: the batch takes several calls)."""
    nb, na = (order + 1, order) if order % 2 else (order, order + 1)
    b, a = f64(rng.uniform(-1, 1, nb)), f64(_stable_a(rng, na - 1))
    x = f64(_with_axis(rng, 9, axis))
    zshape = list(x.shape)
    zshape[axis] = order
    zi = f64(rng.standard_normal(zshape))
    assert torch.autograd.gradcheck(lambda b, a, x, zi: rs.lfilter(b, a, x, axis=axis, zi=zi)[0], (b, a, x, zi))


@pytest.mark.parametrize("sections", [1, 2, 3, 4])
def test_sosfilt_gradcheck_sections_with_zi(sections, rng):
    sos = ss.butter(2 * sections, 0.3, output="sos")
    sos[:, 3:] *= 1.2  # rows' a0 != 1
    sos, x = f64(sos), f64(_with_axis(rng, 11, 1))
    zi = f64(rng.standard_normal((sections, 2, 2, 3)))
    assert torch.autograd.gradcheck(lambda sos, x, zi: rs.sosfilt(sos, x, axis=1, zi=zi)[0], (sos, x, zi))


def test_lfilter_op_in_reverse(rng):
    """The op's reverse direction (what the backward passes run): flip,
    filter, flip, without the copies; differentiable too (its adjoint runs
    forward)."""
    from recur._autograd import lfilter_call

    b, a = f64([0.4, -0.2, 0.1]), f64(_stable_a(rng, 2))
    x, zi = f64(rng.standard_normal((3, 10))), f64(rng.standard_normal((3, 2)))
    y, zf = lfilter_call(b, a, x, 1, zi, True)
    bn, an, xn, zn = (v.detach().numpy() for v in (b, a, x, zi))
    want, want_zf = ss.lfilter(bn, an, xn[:, ::-1], zi=zn)
    np.testing.assert_allclose(y.detach().numpy(), want[:, ::-1], atol=1e-12)
    np.testing.assert_allclose(zf.detach().numpy(), want_zf, atol=1e-12)
    assert torch.autograd.gradcheck(lambda b, a, x, zi: lfilter_call(b, a, x, 1, zi, True)[0], (b, a, x, zi))


def test_lfilter_double_backward(rng):
    """The backward is made of differentiable ops (the reverse filter, the
    correlations, whose backward is two FIR filters)."""
    b, a = f64([0.3, 0.2, -0.1]), f64(_stable_a(rng, 2))
    x, zi = f64(rng.standard_normal((2, 8))), f64(rng.standard_normal((2, 2)))
    assert torch.autograd.gradgradcheck(lambda b, a, x, zi: rs.lfilter(b, a, x, zi=zi)[0], (b, a, x, zi))


@pytest.mark.parametrize("reverse", [False, True])
def test_correlate_lags(reverse, rng):
    """c[j, k] = sum u[i] v_j[i - k] over the batch (reverse: sum u[i]
    v_j[i + k]): NumPy arrays and tensors, the middle axis of a 3-D array
    (several calls, their sums added), v strided unlike u (copied)."""
    u = rng.standard_normal((2, 13, 3))
    v = [rng.standard_normal((2, 13, 3)), np.asfortranarray(rng.standard_normal((2, 13, 3)))]
    uu, vv = (u[:, ::-1], [w[:, ::-1] for w in v]) if reverse else (u, v)
    want = np.array([[(uu[:, k:] * w[:, : 13 - k]).sum() for k in range(4)] for w in vv])
    got = correlate_lags(u, v, 4, axis=1, reverse=reverse)
    assert isinstance(got, np.ndarray) and got.shape == (2, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got_t = correlate_lags(torch.from_numpy(u), [torch.from_numpy(w) for w in v], 4, axis=1, reverse=reverse)
    np.testing.assert_allclose(got_t.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("rhs", [None, 2])
@pytest.mark.parametrize("short", [False, True])
def test_solve_tridiagonal_gradcheck(rhs, short, rng):
    n = 6
    dl = f64(rng.uniform(-1, 1, (2, n - 1 if short else n)))
    du = f64(rng.uniform(-1, 1, (2, n - 1 if short else n)))
    d = f64(4 + rng.uniform(0, 1, (2, n)))
    b = f64(rng.standard_normal((2, n) if rhs is None else (2, n, rhs)))
    assert torch.autograd.gradcheck(lambda dl, d, du, b: rl.solve_tridiagonal(dl, d, du, b), (dl, d, du, b))


@pytest.mark.parametrize("rhs", [None, 2])
def test_periodic_solve_gradcheck(rhs, rng):
    n = 6
    dl, du = f64(rng.uniform(-1, 1, (2, n))), f64(rng.uniform(-1, 1, (2, n)))
    d = f64(4 + rng.uniform(0, 1, (2, n)))
    b = f64(rng.standard_normal((2, n) if rhs is None else (2, n, rhs)))

    def f(dl, d, du, b):
        return rl.solve_tridiagonal(dl, d, du, b, periodic=True)

    assert torch.autograd.gradcheck(f, (dl, d, du, b))
    f(dl, d, du, b).sum().backward()
    assert (dl.grad[:, 0] != 0).all() and (du.grad[:, -1] != 0).all()  # the corners are read


@pytest.mark.parametrize("options", [dict(pivoting="auto"), dict(pivoting="partial"), dict(refine=True), dict(pivoting="partial", periodic=True, refine=True)])
def test_pivoted_and_refined_solve_gradcheck(options, rng):
    n = 7
    dl, du = rng.uniform(-1, 1, (3, n)), rng.uniform(-1, 1, (3, n))
    d = 4 + rng.uniform(0, 1, (3, n))
    d[1, 0], du[1, 0], dl[1, 1] = 1e-3, 1.0, 1.0  # system 1 needs pivoting
    args = tuple(f64(v) for v in (dl, d, du, rng.standard_normal((3, n))))

    def f(dl, d, du, b):
        return rl.solve_tridiagonal(dl, d, du, b, **options)

    assert torch.autograd.gradcheck(f, args)
    x, details = rl.solve_tridiagonal(*args, return_details=True, **options)
    assert x.requires_grad and details.pivoted.dtype == torch.int32
    if options.get("pivoting") == "partial":
        assert details.pivoted.tolist() == [1, 1, 1]
    else:  # automatic: only the system that needs it
        assert details.pivoted.tolist() == [0, 1, 0]
    if options.get("refine"):
        assert (details.refinement_steps >= 1).all()


def test_solve_options_are_checked_on_the_autograd_path(rng):
    dl, d, du, b = (f64(v) for v in (rng.uniform(-1, 1, (2, 5)), 4 + rng.uniform(0, 1, (2, 5)), rng.uniform(-1, 1, (2, 5)), np.ones((2, 5))))
    with pytest.raises(ValueError, match="dl must have length n = 5"):
        rl.solve_tridiagonal(dl[:, 1:], d, du, b, periodic=True)
    with pytest.raises(ValueError, match="unknown pivoting 'yes'"):
        rl.solve_tridiagonal(dl, d, du, b, pivoting="yes")
    with pytest.raises(ValueError, match="refine=True needs float64"):
        rl.solve_tridiagonal(*(v.float() for v in (dl, d, du, b)), refine=True)
    with pytest.raises(ValueError, match="du is on meta, d on cpu"):
        rl.solve_tridiagonal(dl, d, du.to("meta"), b)


def test_gradient_through_zf_is_refused(rng):
    x = f64(rng.standard_normal(8))
    y, zf = rs.lfilter(f64([0.5, 0.5]), f64([1.0, -0.2]), x, zi=f64([0.0]))
    with pytest.raises(NotImplementedError, match="zf"):
        zf.sum().backward()


def test_torch_compile(rng):
    x = f64(rng.standard_normal((2, 50)))
    b, a = f64([0.2, 0.3]), f64([1.0, -0.5])
    dl, du = torch.full((2, 50), -1.0, dtype=torch.float64), torch.full((2, 50), -1.0, dtype=torch.float64)
    d = torch.full((2, 50), 3.0, dtype=torch.float64)

    def loss(x, b, a):
        y = rl.solve_tridiagonal(dl, d, du, x, periodic=True, return_info=True)[0]
        return (rs.lfilter(b, a, x) ** 2).sum() + recur.linrec(0.9, x).sum() + (y**2).sum()

    compiled = torch.compile(loss, backend="aot_eager", fullgraph=True)
    got = compiled(x, b, a)
    got.backward()
    grads_compiled = [v.grad.clone() for v in (x, b, a)]
    for v in (x, b, a):
        v.grad = None
    loss(x, b, a).backward()
    torch.testing.assert_close(got, loss(x, b, a))
    for g, v in zip(grads_compiled, (x, b, a)):
        torch.testing.assert_close(g, v.grad)


def test_torch_compile_linrec_backward(rng):
    """linrec's fused backward traced by torch.compile: array s, a tensor
    init, gradients through w and the final value."""
    s = f64(rng.uniform(-0.9, 0.9, (3, 40)))
    t = f64(rng.standard_normal((3, 40)))
    i = f64(rng.standard_normal(3))

    def loss(s, t, i):
        w, final = recur.linrec(s, t, axis=-1, reverse=True, init=i, return_final=True)
        return (w**2).sum() + final.sum()

    compiled = torch.compile(loss, backend="aot_eager", fullgraph=True)
    got = torch.autograd.grad(compiled(s, t, i), (s, t, i))
    want = torch.autograd.grad(loss(s, t, i), (s, t, i))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_linrec_low_precision_against_float32(dtype, reverse, axis, rng):
    """bfloat16 and float16 CPU tensors: the result and the gradients in the
    tensors' dtype, the float32 call's rounded (lowp.py)."""
    lowp.torch_against_float32(torch, "cpu", dtype, (5, 1001), axis, reverse, rng)


def test_linrec_bfloat16_not_for_filters():
    with pytest.raises(TypeError, match="float32 or float64"):
        rs.lfilter([1.0], [1.0, -0.5], torch.ones(4, dtype=torch.bfloat16))
