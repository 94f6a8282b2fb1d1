"""Differentiable recur for PyTorch tensors: linrec, lfilter, sosfilt and
solve_tridiagonal with backward passes, traceable by torch.compile.

The public functions (recur.linrec, recur.signal.lfilter, ...) route here
when a tensor argument requires grad; the functions below may also be called
directly. Each turns recur's arguments into a custom op's (namespace
``recur``, recur._autograd), whose forward is recur's own call and whose
backward is written with recur's calls too: the adjoint of a linear
recurrence is the same recurrence run in reverse (recur._autograd has the
derivations). The ops run on PyTorch's current stream.

Gradients flow through the outputs y and w and through linrec's final value;
lfilter's and sosfilt's zf carry none (a nonzero gradient there raises in
eager mode and is dropped under torch.compile). linrec has no second
derivatives (they raise NotImplementedError).
"""

from __future__ import annotations

import torch

from ._autograd import lfilter_call, linrec_call, solve_call, sosfilt_call
from ._call_tridiag import check_options, check_periodic, result

__all__ = ["linrec", "lfilter", "sosfilt", "solve_tridiagonal"]


def _no_stream(name, stream):
    if stream is not None:
        raise ValueError(f"recur.torch.{name}: the op runs on PyTorch's current stream; stream= is not taken")


def linrec(s, t, *, axis=-1, reverse=False, init=None, return_final=False, stream=None):
    """recur.linrec, differentiable in s, t and init (tensors)."""
    _no_stream("linrec", stream)
    st = isinstance(s, torch.Tensor)
    ref = s if st else t
    ax = axis % ref.dim()
    init_t = init if isinstance(init, torch.Tensor) else None
    if init_t is not None:
        shape = [n for j, n in enumerate(ref.shape) if j != ax]
        init_t = init_t.to(ref.dtype).expand(shape)
    w, final = linrec_call(
        s if st else None,
        t if isinstance(t, torch.Tensor) else None,
        0.0 if st else float(s),
        0.0 if isinstance(t, torch.Tensor) else float(t),
        ax,
        bool(reverse),
        init_t,
        0.0 if init is None or init_t is not None else float(init),
    )
    return (w, final) if return_final else w


def lfilter(b, a, x, axis=-1, zi=None, *, stream=None):
    """recur.signal.lfilter, differentiable in b, a, x and zi (tensors)."""
    _no_stream("lfilter", stream)
    b = torch.as_tensor(b, dtype=x.dtype).reshape(-1)
    a = torch.as_tensor(a, dtype=x.dtype).reshape(-1)
    ax = axis % x.dim()
    order = max(len(a), len(b)) - 1
    shape = list(x.shape)
    shape[ax] = order
    z = x.new_zeros(shape) if zi is None else zi.to(x.dtype).expand(shape)
    y, zf = lfilter_call(b, a, x, ax, z, False)
    return y if zi is None else (y, zf)


def sosfilt(sos, x, axis=-1, zi=None, *, stream=None):
    """recur.signal.sosfilt, differentiable in sos, x and zi (tensors)."""
    _no_stream("sosfilt", stream)
    sos = torch.as_tensor(sos, dtype=x.dtype)
    ax = axis % x.dim()
    shape = [sos.shape[0]] + list(x.shape)
    shape[ax + 1] = 2
    z = x.new_zeros(shape) if zi is None else zi.to(x.dtype).expand(shape)
    y, zf = sosfilt_call(sos, x, ax, z)
    return y if zi is None else (y, zf)


def _full(v, d, ax, first):
    """dl (first) or du in d's dtype, of length n along ax: one of length
    n - 1 padded with a zero (dl's first element, du's last) by torch.cat,
    so that its gradient flows."""
    v = v.to(d.dtype)
    if v.shape[ax] == d.shape[ax]:
        return v
    zero = torch.zeros_like(d.narrow(ax, 0, 1))
    return torch.cat([zero, v] if first else [v, zero], ax)


def solve_tridiagonal(
    dl, d, du, b, *, axis=-1, algorithm="auto", pivoting="auto", periodic=False, refine=False, max_refinement_steps=10,
    return_info=False, return_details=False, stream=None
):
    """recur.linalg.solve_tridiagonal, differentiable in dl, d, du and b
    (tensors); dl and du of length n - 1 are padded with differentiable
    torch ops first. The gradient is a solve with the transposed matrix and
    the same options."""
    fn = "recur.linalg.solve_tridiagonal"
    if stream is not None:
        raise ValueError("recur.torch.solve_tridiagonal: the op runs on PyTorch's current stream")
    algorithm, piv = check_options(fn, algorithm, pivoting, max_refinement_steps, return_info, return_details)
    periodic, refine = bool(periodic), bool(refine)
    if not -d.dim() <= axis < d.dim():
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of {d.dim()} dimensions")
    ax = axis % d.dim()
    for name, v in (("dl", dl), ("du", du), ("b", b)):
        if v.device != d.device:
            raise ValueError(f"{fn}: {name} is on {v.device}, d on {d.device}; all arrays must be on one device")
    if periodic:
        lengths = [(name, v.shape[ax]) for name, v in (("dl", dl), ("du", du)) if v.dim() == d.dim()]
        check_periodic(fn, d.shape[ax], ax, lengths)
    x, info, pivoted, steps = solve_call(
        _full(dl, d, ax, True), d, _full(du, d, ax, False), b.to(d.dtype), ax, algorithm, piv, periodic, refine,
        int(max_refinement_steps), bool(return_details)
    )
    return result(fn, x, info, (pivoted, steps), piv, periodic, return_info, return_details)
