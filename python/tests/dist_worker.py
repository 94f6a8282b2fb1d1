"""One rank of test_distributed.py's runs: ``python dist_worker.py torch``
(RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; Gloo, CPU tensors) or
``mpirun -np P python dist_worker.py mpi`` (mpi4py, NumPy arrays). Every
rank builds the same global arrays from a fixed seed, takes its slice
(uneven lengths, the second rank empty where there are three or more),
and checks recur.distributed.linrec against recur.linrec on the whole
arrays: values, the final value, and with PyTorch the gradients of s, t
and init against autograd through the one-process call; and
recur.distributed.solve_tridiagonal against recur.linalg.solve_tridiagonal;
recur.distributed.lfilter and sosfilt against recur.signal's; then that a bad
argument on one rank (init included) raises the same error on every rank,
as do ranks that disagree on the batch or on wanting gradients. Prints
``FAIL ...`` lines and exits 1 on a failure."""

import itertools
import os
import sys

import numpy as np

import recur
import recur.distributed as rd

FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print(f"FAIL rank {RANK}: {what}", flush=True)


def slices(n, size):
    """Each rank's [first, end) along the axis: uneven, the second rank empty
    where there are three or more."""
    weights = [(r * 7 + 1) % 5 + 1 for r in range(size)]
    if size >= 3:
        weights[1] = 0
    cuts = np.concatenate([[0], np.cumsum(weights)]) * n // sum(weights)
    return [(int(cuts[r]), int(cuts[r + 1])) for r in range(size)]


def global_arrays(xp_from_numpy, dtype, shape):
    rng = np.random.default_rng(11)
    s = rng.uniform(-0.95, 0.95, shape).astype(dtype)
    t = rng.uniform(-1, 1, shape).astype(dtype)
    init = rng.uniform(-1, 1, shape[:-1]).astype(dtype)
    return xp_from_numpy(s), xp_from_numpy(t), xp_from_numpy(init)


def run_numpy(group):
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        for reverse in (False, True):
            for shape in ((3001,), (4, 1000)):
                s, t, init = global_arrays(np.asarray, dtype, shape)
                want, want_final = recur.linrec(s, t, init=init, reverse=reverse, return_final=True)
                lo, hi = slices(shape[-1], SIZE)[RANK]
                w, final = rd.linrec(s[..., lo:hi], t[..., lo:hi], group=group, init=init, reverse=reverse,
                                     return_final=True)
                what = f"numpy {np.dtype(dtype).name} reverse={reverse} shape={shape}"
                check(np.allclose(w, want[..., lo:hi], rtol=tol, atol=tol), f"{what}: w")
                check(np.allclose(final, want_final, rtol=tol, atol=tol), f"{what}: final")


def run_torch(group):
    import torch

    for dtype, tol in ((torch.float64, 1e-10), (torch.float32, 1e-4)):
        for reverse in (False, True):
            s, t, init = global_arrays(lambda a: torch.tensor(a, dtype=dtype), np.float64, (3, 2000))
            lo, hi = slices(2000, SIZE)[RANK]
            # The one-process reference, with autograd.
            sg, tg, ig = (v.clone().requires_grad_() for v in (s, t, init))
            want, want_final = recur.linrec(sg, tg, init=ig, reverse=reverse, return_final=True)
            weights = torch.linspace(-1, 1, 2000, dtype=dtype)
            (want * weights).sum().add((want_final * 3).sum()).backward()
            # Split: each rank differentiates its slice; the final value's
            # gradient is summed over the ranks, so each rank passes 3/SIZE.
            sl, tl = (v[:, lo:hi].clone().requires_grad_() for v in (s, t))
            il = init.clone().requires_grad_()
            w, final = rd.linrec(sl, tl, group=group, init=il, reverse=reverse, return_final=True)
            what = f"torch {dtype} reverse={reverse}"
            check(torch.allclose(w, want[:, lo:hi].detach(), rtol=tol, atol=tol), f"{what}: w")
            check(torch.allclose(final, want_final.detach(), rtol=tol, atol=tol), f"{what}: final")
            (w * weights[lo:hi]).sum().add((final * (3 / SIZE)).sum()).backward()
            check(torch.allclose(sl.grad, sg.grad[:, lo:hi], rtol=tol, atol=tol), f"{what}: ds")
            check(torch.allclose(tl.grad, tg.grad[:, lo:hi], rtol=tol, atol=tol), f"{what}: dt")
            entry = SIZE - 1 if reverse else 0
            if RANK == entry:
                check(il.grad is not None and torch.allclose(il.grad, ig.grad, rtol=tol, atol=tol), f"{what}: dinit")
            else:
                check(il.grad is None, f"{what}: init's gradient on a rank that does not read init")


def run_tridiag(group, make, to_numpy):
    """recur.distributed.solve_tridiagonal against recur.linalg.solve_tridiagonal
    on the whole systems: dominant and random (not dominant: some gathered
    whole), with and without a right-hand-side axis, periodic, and along
    axis 0; info the one-process call's."""
    rng = np.random.default_rng(5)
    n = 41
    for kind in ("dominant", "random"):
        for periodic in (False, True):
            for rhs in (None, 2):
                dl, du = rng.uniform(-1, 1, (2, 3, n))
                d = rng.uniform(-1, 1, (3, n)) + (3.0 if kind == "dominant" else 0.0)
                b = rng.uniform(-1, 1, (3, n) + ((rhs,) if rhs else ()))
                want = recur.linalg.solve_tridiagonal(dl, d, du, b, periodic=periodic)
                lo, hi = slices(n, SIZE)[RANK]
                part = (v[:, lo:hi] for v in (dl, d, du, b))
                x, info = rd.solve_tridiagonal(*(make(v) for v in part), group=group, periodic=periodic,
                                               return_info=True)
                what = f"tridiag {kind} periodic={periodic} rhs={rhs}"
                scale = np.abs(want).max()
                check(np.allclose(to_numpy(x), want[:, lo:hi], rtol=1e-8, atol=1e-8 * scale), f"{what}: x")
                check(not to_numpy(info).any(), f"{what}: info {to_numpy(info)}")
    # Along axis 0, one right-hand side.
    dl, du, b = rng.uniform(-1, 1, (3, n, 2))
    d = rng.uniform(3, 4, (n, 2))
    want = recur.linalg.solve_tridiagonal(dl, d, du, b, axis=0)
    lo, hi = slices(n, SIZE)[RANK]
    x = rd.solve_tridiagonal(*(make(v[lo:hi]) for v in (dl, d, du, b)), group=group, axis=0)
    check(np.allclose(to_numpy(x), want[lo:hi], rtol=1e-10, atol=1e-12), "tridiag axis 0")
    # A bad pivoting name on the last rank: every rank raises the same ValueError.
    message = None
    try:
        rd.solve_tridiagonal(*(make(v[lo:hi]) for v in (dl, d, du, b)), group=group, axis=0,
                             pivoting="sometimes" if RANK == SIZE - 1 else "auto")
    except ValueError as e:
        message = str(e)
    check(message is not None and f"rank {SIZE - 1} of {SIZE}" in message and "pivoting" in message,
          f"tridiag bad pivoting: {message!r}")


def run_filters(group, make, to_numpy):
    """recur.distributed.lfilter and sosfilt against recur.signal's on the
    whole signals: zi on rank 0, the final state on every rank, along the
    last axis and axis 0, float64 and float32; a different filter on one
    rank raises the same ValueError on every rank."""
    import scipy.signal

    rng = np.random.default_rng(9)
    b, a = scipy.signal.butter(4, 0.05)
    sos = scipy.signal.butter(6, 0.1, output="sos")
    def close(got, want, tol, whole):  # tol relative to the whole's scale: a narrow filter's state is ill-conditioned
        return np.allclose(to_numpy(got), want, rtol=0, atol=tol * max(1.0, np.abs(whole).max()))

    # Against the float64 filter of the same values: float32's own rounding is within tol.
    for n, (dtype, tol) in itertools.product((41, 3001), ((np.float64, 1e-9), (np.float32, 1e-3))):
        x = rng.uniform(-1, 1, (3, n)).astype(dtype)
        lo, hi = slices(n, SIZE)[RANK]
        zi = rng.uniform(-1, 1, (3, 4)).astype(dtype)
        want, want_zf = recur.signal.lfilter(b, a, x.astype(np.float64), zi=zi.astype(np.float64))
        y, zf = rd.lfilter(b, a, make(x[:, lo:hi]), group=group, zi=make(zi), return_final=True)
        what = f"lfilter n={n} {np.dtype(dtype).name}"
        check(close(y, want[:, lo:hi], tol, want), f"{what}: y")
        check(close(zf, want_zf, tol, want_zf), f"{what}: zf")
        zs = rng.uniform(-1, 1, (3, 2, 3)).astype(dtype)
        xs = rng.uniform(-1, 1, (n, 3)).astype(dtype)
        want, want_zf = recur.signal.sosfilt(sos, xs.astype(np.float64), axis=0, zi=zs.astype(np.float64))
        y, zf = rd.sosfilt(sos, make(xs[lo:hi]), group=group, axis=0, zi=make(zs), return_final=True)
        what = f"sosfilt axis 0 n={n} {np.dtype(dtype).name}"
        check(close(y, want[lo:hi], tol, want), f"{what}: y")
        check(close(zf, want_zf, tol, want_zf), f"{what}: zf")
    # Integer samples filter in float64, as scipy's: the state passed across the ranks too.
    xi = rng.integers(-100, 100, (2, 41)).astype(np.int32)
    lo, hi = slices(41, SIZE)[RANK]
    want, want_zf = recur.signal.lfilter(b, a, xi, zi=np.zeros((2, 4)))
    y, zf = rd.lfilter(b, a, make(xi[:, lo:hi]), group=group, return_final=True)
    check(close(y, want[:, lo:hi], 1e-9, want) and close(zf, want_zf, 1e-9, want_zf), "lfilter int32 samples")
    if SIZE > 1:
        message = None
        try:
            rd.lfilter(b, a if RANK == 0 else a * 2, make(x[:, lo:hi]), group=group)
        except ValueError as e:
            message = str(e)
        check(message is not None and "disagree" in message, f"lfilter coefficient mismatch: {message!r}")


def run_errors(group, make):
    """A bad axis on the last rank: every rank raises the same ValueError."""
    s = make(np.ones((2, 10)))
    message = None
    try:
        rd.linrec(0.5, s, group=group, axis=5 if RANK == SIZE - 1 else -1)
    except ValueError as e:
        message = str(e)
    check(message is not None and f"rank {SIZE - 1} of {SIZE}" in message, f"bad axis: {message!r}")
    # A bad init on the rank that reads it (rank 0): every rank raises.
    message = None
    try:
        rd.linrec(0.5, s, group=group, init=make(np.ones(5)))
    except ValueError as e:
        message = str(e)
    check(message is not None and f"rank 0 of {SIZE}" in message and "init" in message, f"bad init: {message!r}")
    if SIZE > 1 and hasattr(s, "requires_grad"):  # gradients wanted on rank 0 alone
        message = None
        try:
            rd.linrec(0.5, s.clone().requires_grad_(RANK == 0), group=group)
        except ValueError as e:
            message = str(e)
        check(message is not None and "disagree" in message, f"grad mismatch: {message!r}")
    if SIZE > 1:  # rank 0 holds a different batch
        message = None
        try:
            rd.linrec(0.5, make(np.ones((3 if RANK == 0 else 2, 10))), group=group)
        except ValueError as e:
            message = str(e)
        check(message is not None and "disagree" in message, f"batch mismatch: {message!r}")


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "mpi":
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
        RANK, SIZE = comm.Get_rank(), comm.Get_size()
        run_numpy(comm)
        run_tridiag(comm, np.asarray, np.asarray)
        run_filters(comm, np.asarray, np.asarray)
        run_errors(comm, np.asarray)
        bad = comm.allreduce(len(FAILURES))
    else:
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        RANK, SIZE = dist.get_rank(), dist.get_world_size()
        run_torch(None)
        run_tridiag(None, torch.tensor, lambda v: v.numpy())
        run_filters(None, torch.tensor, lambda v: v.numpy())
        run_errors(None, torch.tensor)
        count = torch.tensor([len(FAILURES)])
        dist.all_reduce(count)
        bad = int(count)
        dist.destroy_process_group()
    if RANK == 0:
        print(f"{kind}: {SIZE} ranks, {'FAILED' if bad else 'passed'}", flush=True)
    sys.exit(1 if bad else 0)
