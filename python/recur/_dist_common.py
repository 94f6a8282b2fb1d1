"""What recur.distributed's functions share: the two kinds of group
(torch.distributed and mpi4py) behind one interface (objects: a Python
object all-gathered; arrays: an array all-gathered, stacked in rank order),
the agreement before any collective that a rank might not reach, and the
array-module helpers."""

from __future__ import annotations

from ._arrays import backend_of


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


def _agree(g, fn, facts, error, labels="(batch shape, dtype, reverse, requires grad)", extra=None):
    """Every rank's (facts, error, extra) gathered; the same exception raised
    on every rank where one failed (TypeError and ValueError as themselves,
    anything else as RuntimeError) or the facts differ. Returns every rank's
    extra, in rank order."""
    everyone = g.objects((facts, None if error is None else (type(error).__name__, str(error)), extra))
    kinds = {"TypeError": TypeError, "ValueError": ValueError}
    for r, (_, err, _) in enumerate(everyone):
        if err is not None:
            raise kinds.get(err[0], RuntimeError)(f"{fn}: rank {r} of {g.size}: {err[0]}: {err[1]}")
    for r, (f, _, _) in enumerate(everyone):
        if f != everyone[0][0]:
            raise ValueError(f"{fn}: the ranks disagree on {labels}: rank 0 has {everyone[0][0]}, rank {r} has {f}")
    return [e[2] for e in everyone]


def _xp(x):
    """The array module of x (torch, cupy or numpy)."""
    name = type(x).__module__.split(".")[0]
    if name in ("torch", "cupy"):
        return __import__(name)
    import numpy

    return numpy


def _zeros(shape, like):
    xp = _xp(like)
    if xp.__name__ == "torch":
        return xp.zeros(shape, dtype=like.dtype, device=like.device)
    return xp.zeros(shape, like.dtype)


def _cat(arrays, axis):
    xp = _xp(arrays[0])
    return xp.cat(arrays, axis) if xp.__name__ == "torch" else xp.concatenate(arrays, axis)


def _as(x, like, keep_dtype=False):
    """x in like's array module and device, and in like's dtype unless
    keep_dtype (then x's own)."""
    xp = _xp(like)
    if xp.__name__ == "torch":
        t = xp.as_tensor(x, device=like.device)
        return t if keep_dtype else t.to(like.dtype)
    return xp.asarray(x) if keep_dtype else xp.asarray(x).astype(like.dtype)


def _numpy(x):
    return backend_of(x).to_host(x)
