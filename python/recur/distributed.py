"""recur.distributed: a recurrence split along its length across processes.

Each process (rank) holds one slice of every sequence, in rank order along
``axis``, and calls the same function with the same group:

    import torch.distributed as dist, recur.distributed
    dist.init_process_group("nccl")            # or "gloo" for CPU tensors
    w = recur.distributed.linrec(s, t, axis=-1)               # the default group
    w = recur.distributed.linrec(s, t, group=my_group)        # a torch ProcessGroup

    from mpi4py import MPI                     # NumPy (or CuPy) arrays
    w = recur.distributed.linrec(s, t, group=MPI.COMM_WORLD)

The algorithm is recur::dist's (doc/distributed.md): each rank composes its
slice into one map per sequence (recur.linrec_summary), the maps are
all-gathered, each rank folds the maps of the ranks before it into its
incoming state and runs its slice from it (recur.linrec). Ranks may hold
different lengths, including zero. ``init`` is read on the rank where the
recurrence enters (rank 0, or the last rank with ``reverse``); ``final``
(``return_final``) is the whole sequences' last value, on every rank.

PyTorch tensors that require grad are differentiable in s, t and init: the
backward pass is the adjoint recurrence across the ranks in the opposite
direction (each rank's adjoint run twice: once to summarise it, once from
its incoming gradient). The gradient reaching ``final`` is summed over the
ranks.

Errors are raised on every rank alike: a rank whose arguments are bad
(including init's, on the rank that reads it) raises on every rank the same
exception (TypeError or ValueError as the call raised it, anything else as
RuntimeError) naming the first bad rank; ranks that disagree on the batch
shape, dtype, direction or whether gradients are wanted raise the same
ValueError; both before any rank waits in a collective that another will
not reach. With gradients, every rank must run the backward pass (it holds
collectives): a loss that uses w or final on some ranks only needs a zero
term on the others, e.g. ``loss + 0 * w.sum()``. ``final`` is the folded
maps' value, equal to the last rank's last w to rounding.
"""

from __future__ import annotations

from ._call_linrec import adjoint
from ._linrec import linrec as _linrec, linrec_summary

__all__ = ["linrec"]


class _Torch:
    """A torch.distributed process group (None: the default group)."""

    def __init__(self, group):
        import torch.distributed as dist

        self.dist, self.group = dist, group
        self.rank, self.size = dist.get_rank(group), dist.get_world_size(group)

    def objects(self, obj):
        out = [None] * self.size
        self.dist.all_gather_object(out, obj, group=self.group)
        return out

    def arrays(self, x):
        """x (at least one axis) gathered: shape (size,) + x.shape, rank order
        (gathered as the concatenation along x's first axis, the form every
        backend takes)."""
        import torch

        out = torch.empty((self.size * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
        self.dist.all_gather_into_tensor(out, x.contiguous(), group=self.group)
        return out.view((self.size,) + tuple(x.shape))


class _Mpi:
    """An mpi4py communicator; NumPy arrays (CuPy arrays pass through the host)."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.Get_rank(), comm.Get_size()

    def objects(self, obj):
        return self.comm.allgather(obj)

    def arrays(self, x):
        import numpy as np

        host = x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)
        host = np.ascontiguousarray(host)
        out = np.empty((self.size,) + host.shape, host.dtype)
        self.comm.Allgather(host, out)
        if host is x or isinstance(x, np.ndarray):
            return out
        import cupy

        return cupy.asarray(out)


def _group_of(group):
    return _Mpi(group) if hasattr(group, "Allgather") else _Torch(group)


def _agree(g, fn, facts, error):
    """Every rank's (facts, error) gathered; the same exception raised on
    every rank where one failed (TypeError and ValueError as themselves,
    anything else as RuntimeError) or the facts differ."""
    everyone = g.objects((facts, None if error is None else (type(error).__name__, str(error))))
    kinds = {"TypeError": TypeError, "ValueError": ValueError}
    for r, (_, err) in enumerate(everyone):
        if err is not None:
            raise kinds.get(err[0], RuntimeError)(f"{fn}: rank {r} of {g.size}: {err[0]}: {err[1]}")
    for r, (f, _) in enumerate(everyone):
        if f != everyone[0][0]:
            raise ValueError(f"{fn}: the ranks disagree on (batch shape, dtype, reverse, requires grad): rank 0 "
                             f"has {everyone[0][0]}, rank {r} has {f}")


def _xp(x):
    """The array module of x (torch, cupy or numpy)."""
    name = type(x).__module__.split(".")[0]
    if name in ("torch", "cupy"):
        return __import__(name)
    import numpy

    return numpy


def _apply(a, b, x):
    """The state after the map (a, b) from x, as a step of the recurrence
    (a == 0 forgets x, even an inf or NaN x), in a's dtype."""
    xp = _xp(a)
    y = xp.where(a != 0, a * x + b, b)
    return y.to(a.dtype) if xp.__name__ == "torch" else y.astype(a.dtype, copy=False)


def _local(g, s, t, axis, reverse, init, needs_grad):
    """This rank's map (a, b) of each sequence, the entering rank's with the
    initial state folded in: (0, state after its slice). Raises what the
    arguments make it raise (before any collective)."""
    if needs_grad and isinstance(g, _Mpi):
        raise TypeError("tensors that require grad need a torch.distributed group (mpi4py has no autograd)")
    a, b = linrec_summary(s, t, axis=axis, reverse=reverse)
    if g.rank == (g.size - 1 if reverse else 0):
        shape, batch = tuple(getattr(init, "shape", ())), tuple(a.shape)
        if len(shape) > len(batch) or any(i not in (1, j) for i, j in zip(shape[::-1], batch[::-1])):
            raise ValueError(f"init has shape {shape}, which does not broadcast to the batch shape {batch}")
        a, b = _xp(a).zeros_like(a), _apply(a, b, 0.0 if init is None else init)
    return a, b


def _forward(g, s, t, axis, reverse, init, needs_grad=False):
    """(w, x_in, final, maps): this rank's slice run from its incoming state
    x_in, the whole sequences' last value, and every rank's map, (size, 2) +
    the batch shape (the entering rank's with its initial state folded in)."""
    a = b = error = None
    try:
        a, b = _local(g, s, t, axis, reverse, init, needs_grad)
    except Exception as e:  # agreed on below, so that every rank raises
        error = e
    facts = None if a is None else (tuple(a.shape), str(a.dtype), bool(reverse), bool(needs_grad))
    _agree(g, "recur.distributed.linrec", facts, error)
    xp = _xp(a)
    maps = g.arrays(xp.stack([xp.asarray(a), xp.asarray(b)]))
    x = x_in = xp.zeros_like(maps[0, 1])
    for r in range(g.size - 1, -1, -1) if reverse else range(g.size):
        if r == g.rank:
            x_in = x
        x = _apply(maps[r, 0], maps[r, 1], x)
    entering = g.rank == (g.size - 1 if reverse else 0)
    w = _linrec(s, t, axis=axis, reverse=reverse, init=init if entering else x_in)
    return w, x_in, x, maps


def linrec(s, t, *, group=None, axis=-1, reverse=False, init=None, return_final=False):
    """recur.linrec over a sequence split along ``axis`` across the ranks
    of ``group`` (a torch.distributed ProcessGroup, None for the default
    group, or an mpi4py communicator). Arguments, dtypes and results as
    recur.linrec's, for this rank's slice; ``final`` is the whole
    sequences' last value.

    >>> # under torchrun --nproc-per-node 2, each rank holding 4 of 8 elements:
    >>> # w = recur.distributed.linrec(0.5, torch.ones(4))
    >>> # rank 0: [1, 1.5, 1.75, 1.875]; rank 1: [1.9375, 1.96875, ...]
    """
    g = _group_of(group)
    needs_grad = any(getattr(v, "requires_grad", False) for v in (s, t, init))
    if needs_grad and isinstance(g, _Torch):
        w, final = _autograd_linrec(g, s, t, init, axis, reverse)
    else:
        w, _, final, _ = _forward(g, s, t, axis, reverse, init, needs_grad)
    return (w, final) if return_final else w


def _autograd_linrec(g, s, t, init, axis, reverse):
    import torch

    class DistLinrec(torch.autograd.Function):
        @staticmethod
        def forward(ctx, s_, t_, init_):
            s_, t_, init_ = (v.detach() if torch.is_tensor(v) else v for v in (s_, t_, init_))
            w, x_in, final, maps = _forward(g, s_, t_, axis, reverse, init_, needs_grad=True)
            ctx.save_for_backward(*(v for v in (s_, w, x_in, maps) if torch.is_tensor(v)))
            ctx.scalar_s = None if torch.is_tensor(s_) else s_
            ctx.init_value = init_
            return w, final

        @staticmethod
        def backward(ctx, gw, gfinal):
            saved = list(ctx.saved_tensors)
            s_ = ctx.scalar_s if ctx.scalar_s is not None else saved.pop(0)
            w, x_in, maps = saved
            return _backward(g, ctx, s_, w, x_in, maps, gw, gfinal, axis, reverse)

    s_in = s if torch.is_tensor(s) else float(s)
    t_in = t if torch.is_tensor(t) else float(t)
    return DistLinrec.apply(s_in, t_in, init)


def _backward(g, ctx, s, w, x_in, maps, gw, gfinal, axis, reverse):
    """The gradients of (s, t, init): the adjoint across the ranks in the
    direction opposite to the forward's."""
    import torch

    entry = g.size - 1 if reverse else 0
    entering = g.rank == entry
    init_in = ctx.init_value if entering else x_in
    if gw is None:
        gw = torch.zeros_like(w)
    gf = torch.zeros_like(maps[0, 0]) if gfinal is None else gfinal
    # This rank's adjoint from a zero incoming gradient: its summary B.
    _, _, b_here = adjoint(s, w, gw, axis=axis, reverse=reverse, init=init_in, final_gradient=None,
                           want_ds=False, want_init_gradient=True)
    both = g.arrays(torch.stack([b_here, gf]))
    fg = both[:, 1].sum(0)  # the final value's gradient, from every rank
    later = range(0, g.rank) if reverse else range(g.size - 1, g.rank, -1)
    for r in later:  # rank r's initial-state gradient: A_r (its incoming gradient) + B_r
        fg = _apply(maps[r, 0], both[r, 0], fg)
    want_ds = ctx.needs_input_grad[0] and torch.is_tensor(s)
    want_init = entering and ctx.needs_input_grad[2]
    dt, ds, dinit = adjoint(s, w, gw, axis=axis, reverse=reverse, init=init_in, final_gradient=fg,
                            want_ds=want_ds, want_init_gradient=want_init)
    return ds if want_ds else None, dt if ctx.needs_input_grad[1] else None, dinit if want_init else None
