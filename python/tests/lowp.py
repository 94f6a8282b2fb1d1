"""Checks of recur.linrec in float16 and bfloat16 storage (float32
arithmetic), shared by the NumPy, PyTorch and GPU suites.

A result stored in a 16-bit dtype is the float32 recurrence of the rounded
inputs, rounded once: against the float64 recurrence of those inputs it is
off by the storage's unit roundoff u (2^-11 float16, 2^-8 bfloat16) times
|w_i|, plus float32 accumulation error, bounded here by 2e-5 (about 170
float32 epsilons) of the magnitude of the terms m_i = |s_i| m_{i-1} + |t_i|
(the inputs are contractive, |s| <= 0.95), plus half float16's smallest
subnormal.

Against float32: the float32 call on the same (rounded) inputs combines the
same values in the same order, so the 16-bit result is its rounding (allowed:
2u relative, one more rounding's slack); gradients are products of two
rounded values, rounded (allowed: 5u relative).
"""

import numpy as np

UNIT = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
TINY = 2.0**-20


def reference(s, t, axis, reverse, init):
    """float64 w, final and the magnitude of the terms, from float64 copies
    of the (already rounded) inputs; s or t may be a scalar, init None, a
    scalar or an array of the batch shape."""
    shape = np.shape(s) if np.ndim(s) else np.shape(t)
    s, t = (np.moveaxis(np.broadcast_to(np.asarray(v, np.float64), shape), axis, -1) for v in (s, t))
    w, m = np.empty_like(t), np.empty_like(t)
    prev = np.broadcast_to(np.asarray(0.0 if init is None else init, np.float64), t.shape[:-1]).copy()
    mag = np.abs(prev)
    order = range(t.shape[-1] - 1, -1, -1) if reverse else range(t.shape[-1])
    for i in order:
        prev = s[..., i] * prev + t[..., i]
        mag = np.abs(s[..., i]) * mag + np.abs(t[..., i])
        w[..., i], m[..., i] = prev, mag
    return np.moveaxis(w, -1, axis), prev, np.moveaxis(m, -1, axis)


def assert_rounded(got, want, mag, dtype_name):
    """got (a 16-bit result, as float64) within the rounding of the stored
    result and float32 accumulation of want (float64)."""
    got, want, mag = (np.asarray(v, np.float64) for v in (got, want, mag))
    tol = UNIT[dtype_name] * np.abs(want) + 2e-5 * mag + 2.0**-25
    bad = ~(np.abs(got - want) <= tol)
    assert not bad.any(), (
        f"{dtype_name}: {bad.sum()} of {bad.size} elements off, first at {np.argwhere(bad)[0]}: "
        f"got {got[bad][0]!r}, want {want[bad][0]!r}"
    )


def torch_against_float32(torch, device, dtype_name, shape, axis, reverse, rng):
    """recur.linrec on `dtype_name` tensors against the same call on float32
    copies of them: the result and the gradients of a weighted sum with
    respect to s, t and init."""
    dtype = getattr(torch, dtype_name)
    u = UNIT[dtype_name]
    ax = axis % len(shape)
    bshape = shape[:ax] + shape[ax + 1 :]

    def tensor(a):
        return torch.as_tensor(np.asarray(a, np.float32), device=device).to(dtype)

    s16 = tensor(rng.uniform(-0.95, 0.95, shape)).requires_grad_()
    t16 = tensor(rng.standard_normal(shape)).requires_grad_()
    i16 = tensor(rng.standard_normal(bshape)).requires_grad_()
    c = tensor(rng.standard_normal(shape))  # the weights: the gradient reaching w, exact in both dtypes
    s32, t32, i32 = (v.detach().float().requires_grad_() for v in (s16, t16, i16))

    import recur

    w16 = recur.linrec(s16, t16, axis=axis, reverse=reverse, init=i16)
    w32 = recur.linrec(s32, t32, axis=axis, reverse=reverse, init=i32)
    assert w16.dtype == dtype and w16.device == s16.device
    torch.testing.assert_close(w16.detach().double(), w32.detach().double(), rtol=2 * u, atol=TINY)
    (w16 * c).sum().backward()
    (w32 * c.float()).sum().backward()
    for name, a, b in (("s", s16, s32), ("t", t16, t32), ("init", i16, i32)):
        assert a.grad.dtype == dtype, name
        torch.testing.assert_close(a.grad.double(), b.grad.double(), rtol=5 * u, atol=TINY, msg=lambda m: f"d{name}: {m}")
