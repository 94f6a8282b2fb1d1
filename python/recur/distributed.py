"""recur.distributed: a recurrence split along its length across processes.

Each process (rank) holds one slice of every sequence, in rank order along
``axis``, and calls the same function with the same group:

    import torch.distributed as dist, recur.distributed
    dist.init_process_group("nccl")            # or "gloo" for CPU tensors
    w = recur.distributed.linrec(s, t, axis=-1)               # the default group
    w = recur.distributed.linrec(s, t, group=my_group)        # a torch ProcessGroup

    from mpi4py import MPI                     # NumPy (or CuPy) arrays
    w = recur.distributed.linrec(s, t, group=MPI.COMM_WORLD)

``solve_tridiagonal`` solves tridiagonal systems whose rows are split the
same way (recur::dist::solve_batched's partition method; below);
``lfilter`` and ``sosfilt`` filter signals split the same way (the state
passed across the ranks as an affine map, python/recur/_dist_lti.py).

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

import numpy as np

from ._dist_lti import lfilter, sosfilt
from ._dist_common import _agree, _as, _cat, _group_of, _Mpi, _numpy, _Torch, _xp, _zeros
from ._call_linrec import adjoint
from ._linrec import linrec as _linrec, linrec_summary

__all__ = ["linrec", "lfilter", "sosfilt", "solve_tridiagonal"]


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


def _tridiag_local(dl, d, du, b, axis, pivoting):
    """This rank's part of a split tridiagonal solve (recur::dist::solve_batched's
    steps 1 and 3, lib/dist/tridiag_dist.cpp): the systems moved to the last
    axis, the interior's solutions, and the rank's two reduced rows."""
    from .linalg import solve_tridiagonal as solve

    xp = _xp(d)
    if any(getattr(v, "requires_grad", False) for v in (dl, d, du, b)):
        raise TypeError("recur.distributed.solve_tridiagonal has no autograd: pass tensors that do not require grad")
    if not (dl.shape == d.shape == du.shape):
        raise ValueError(f"dl, d and du must have one shape (this rank's rows along axis), not {tuple(dl.shape)}, "
                         f"{tuple(d.shape)} and {tuple(du.shape)}")
    nd = len(d.shape)
    if nd == 0:
        raise ValueError("d must have at least one axis")
    ax = axis % nd
    rhs_axis = len(b.shape) == nd + 1
    if tuple(b.shape[:nd]) != tuple(d.shape) or len(b.shape) not in (nd, nd + 1):
        raise ValueError(f"b has shape {tuple(b.shape)}; d's shape {tuple(d.shape)} or that plus a trailing axis of "
                         "right-hand sides was expected")
    A, D, C = (xp.moveaxis(v, ax, -1) for v in (dl, d, du))
    R = xp.moveaxis(b, ax, -2) if rhs_axis else xp.moveaxis(b, ax, -1)[..., None]
    n, k = D.shape[-1], R.shape[-1]
    batch = tuple(D.shape[:-1])
    part = {"A": A, "D": D, "C": C, "R": R, "n": n, "k": k, "ax": ax, "rhs_axis": rhs_axis, "batch": batch}
    rows = _zeros(batch + (2, 3 + k), D)
    status = _zeros(batch + (2,), D)  # A_II's first breakdown row (1-based within the rank's rows), rho

    def row(i, sub, diag, sup, rhs):
        rows[..., i, 0], rows[..., i, 1], rows[..., i, 2] = sub, diag, sup
        rows[..., i, 3:] = rhs

    if n >= 3:
        m = n - 2
        e = _zeros(batch + (m, 2), D)
        e[..., 0, 0] = 1
        e[..., m - 1, 1] = 1
        sol, info = solve(A[..., 1:-1], D[..., 1:-1], C[..., 1:-1], _cat([R[..., 1:-1, :], e], -1),
                          pivoting=pivoting, return_info=True)
        y, u, w = sol[..., :k], sol[..., k], sol[..., k + 1]
        a1, cm = A[..., 1], C[..., n - 2]
        part.update(y=y, u=u, w=w, a1=a1, cm=cm)
        status[..., 0] = xp.where(_as(info, D) > 0, _as(info, D) + 1, 0 * D[..., 0])
        rho = xp.maximum(abs(a1 * u[..., 0]) + abs(cm * w[..., 0]), abs(a1 * u[..., -1]) + abs(cm * w[..., -1]))
        status[..., 1] = xp.where(rho == rho, rho, float("inf") + 0 * rho)
        row(0, A[..., 0], D[..., 0] - C[..., 0] * a1 * u[..., 0], -C[..., 0] * cm * w[..., 0],
            R[..., 0, :] - C[..., 0, None] * y[..., 0, :])
        row(1, -A[..., -1] * a1 * u[..., -1], D[..., -1] - A[..., -1] * cm * w[..., -1], C[..., -1],
            R[..., -1, :] - A[..., -1, None] * y[..., -1, :])
    else:
        for i in range(n):
            row(i, A[..., i], D[..., i], C[..., i], R[..., i, :])
    part["pack"] = _cat([rows.reshape(batch + (2 * (3 + k),)), status], -1)
    return part


def solve_tridiagonal(dl, d, du, b, *, group=None, axis=-1, pivoting="auto", periodic=False, return_info=False):
    """recur.linalg.solve_tridiagonal over systems whose rows are split along
    ``axis`` across the ranks of ``group`` (a torch.distributed ProcessGroup,
    None for the default group, or an mpi4py communicator): rank r holds
    rows [first_r, first_r + n_r) of every system, n_r >= 0. ``dl``, ``d``
    and ``du`` have this rank's rows along ``axis`` (``dl`` of the first row
    and ``du`` of the last row of the whole system are read only when
    ``periodic``); ``b`` has d's shape or that plus a trailing axis of
    right-hand sides. ``pivoting`` 'auto' (the default), 'partial' or
    'none'; ``periodic`` closes each system's ring across the last and the
    first rank (n >= 3 over all ranks).

    The algorithm is recur::dist::solve_batched's (doc/distributed.md): each
    rank solves its block's interior (recur.linalg.solve_tridiagonal, once,
    for b and the two unit columns), its two boundary rows are all-gathered,
    every rank solves the reduced systems and finishes its rows. Under
    'auto' and 'partial' a system the split cannot vouch for is gathered
    whole onto every rank and solved there with pivoting. Returns this
    rank's x (b's shape); ``(x, info)`` with ``return_info`` (info the same
    on every rank, rows 1-based over the whole system); without it a
    breakdown raises numpy.linalg.LinAlgError on every rank. No autograd.

    >>> # under torchrun --nproc-per-node 2, each rank holding 4 of 8 rows:
    >>> # x = recur.distributed.solve_tridiagonal(-torch.ones(4), 4 * torch.ones(4), -torch.ones(4), torch.ones(4))
    """
    fn = "recur.distributed.solve_tridiagonal"
    g = _group_of(group)
    piv = {"automatic": "auto"}.get(pivoting, pivoting)
    part = error = None
    try:
        if piv not in ("auto", "partial", "none"):
            raise ValueError(f"pivoting must be 'auto', 'partial' or 'none', not {pivoting!r}")
        if isinstance(g, _Torch) and type(d).__module__.split(".")[0] != "torch":
            raise TypeError("a torch.distributed group takes PyTorch tensors")
        part = _tridiag_local(dl, d, du, b, axis, piv)
    except Exception as e:  # agreed on below, so that every rank raises
        error = e
    facts = None if part is None else (part["batch"], part["k"], str(d.dtype), piv, bool(periodic))
    ns = _agree(g, fn, facts, error, "(batch shape, right-hand sides, dtype, pivoting, periodic)",
                None if part is None else part["n"])
    total = sum(ns)
    if periodic and total < 3:
        raise ValueError(f"{fn}: periodic needs n >= 3 over all ranks; the ranks hold {total} rows")
    x_red, mine, info, pivoted, flagged = _solve_reduced(g, part, ns, piv, bool(periodic))
    x = _finish(part, x_red, mine, info)
    xp = _xp(x)
    if piv != "none" and bool(flagged.any()):
        x, info, pivoted = _solve_gathered(g, part, ns, flagged, x, info, pivoted, piv, bool(periodic))
    if part["rhs_axis"]:
        x = xp.moveaxis(x, -2, part["ax"])
    else:
        x = xp.moveaxis(x[..., 0], -1, part["ax"])
    info_int = info.to(dtype=__import__("torch").int32) if xp.__name__ == "torch" else info.astype(np.int32)
    if return_info:
        return x, info_int
    bad = _numpy(info_int)
    if bad.any():
        where = [tuple(int(i) for i in w) for w in np.argwhere(bad)[:4]]
        raise np.linalg.LinAlgError(f"{fn}: systems {where} broke down (info {bad[bad > 0][:4].tolist()})")
    return x


def _solve_reduced(g, part, ns, piv, periodic):
    """Steps 2 and 3 of the split: every rank's rows all-gathered, ordered
    f_0, l_0, f_1, l_1, ..., and the reduced systems solved in one batched
    call. Returns the reduced solutions, where this rank's rows start in
    them, info (global 1-based rows), pivoted, and the systems the split
    cannot vouch for (pivoting 'auto' and 'partial': gathered whole later)."""
    D, k, batch = part["D"], part["k"], part["batch"]
    xp = _xp(D)
    everyone = g.arrays(part["pack"])  # (size,) + batch + (2 (3 + k) + 2,)
    width = 3 + k
    subs, diags, sups, rhss, row_of = [], [], [], [], []
    breakdown = _zeros(batch, D)
    flagged = breakdown != 0
    first = mine = 0
    for r, nr in enumerate(ns):
        rec = everyone[r]
        if nr >= 3:
            bd = rec[..., 2 * width]
            breakdown = xp.where((breakdown == 0) & (bd > 0), bd + first, breakdown)
            if piv != "none":
                flagged = flagged | (bd > 0) | ~(rec[..., 2 * width + 1] <= 16)
        if r == g.rank:
            mine = len(row_of)
        for j in range(min(nr, 2)):
            rw = rec[..., j * width:(j + 1) * width]
            subs.append(rw[..., 0])
            diags.append(rw[..., 1])
            sups.append(rw[..., 2])
            rhss.append(rw[..., 3:])
            row_of.append(first if j == 0 else first + nr - 1)
        first += nr
    rows = len(row_of)
    info = _zeros(batch, D)
    pivoted = info != 0
    x_red = None
    if rows:
        st = xp.stack
        sub, diag, sup, rhs = st(subs, -1), st(diags, -1), st(sups, -1), st(rhss, -2)
        per = periodic
        if per and rows < 3:  # the corners fold into the other entries
            if rows == 2:
                sup[..., 0] = sup[..., 0] + sub[..., 0]
                sub[..., 1] = sub[..., 1] + sup[..., 1]
            else:
                diag[..., 0] = diag[..., 0] + sub[..., 0] + sup[..., 0]
            per = False
        if not per:
            sub[..., 0] = 0
            sup[..., -1] = 0
        from .linalg import solve_tridiagonal as solve

        x_red, details = solve(sub, diag, sup, rhs, pivoting=piv, periodic=per, return_details=True)
        red_info = _as(details.info, D)
        pivoted = _as(details.pivoted, D) != 0
        rows_global = _as(np.asarray(row_of, dtype=np.float64), D)
        idx = xp.where(red_info > 0, red_info - 1, 0 * red_info)
        idx = idx.long() if xp.__name__ == "torch" else idx.astype(np.int64)
        mapped = rows_global[idx] + 1
        info = xp.where(breakdown > 0, breakdown, xp.where(red_info > 0, mapped, info))
        if piv != "none":
            flagged = flagged | (red_info > 0)
    return x_red, mine, info, pivoted, flagged


def _finish(part, x_red, mine, info):
    """This rank's rows of x (batch + (n, k)): x_f and x_l from the reduced
    solutions, the interior as y - alpha u - beta w; NaN where info > 0."""
    D, k, batch, n = part["D"], part["k"], part["batch"], part["n"]
    xp = _xp(D)
    nan = float("nan")
    if n == 0:
        x = _zeros(batch + (0, k), D)
    else:
        xf = x_red[..., mine, :]
        if n == 1:
            x = xf[..., None, :]
        else:
            xl = x_red[..., mine + 1, :]
            if n == 2:
                x = xp.stack([xf, xl], -2)
            else:
                inner = (part["y"] - (part["a1"][..., None] * xf)[..., None, :] * part["u"][..., :, None]
                         - (part["cm"][..., None] * xl)[..., None, :] * part["w"][..., :, None])
                x = _cat([xf[..., None, :], inner, xl[..., None, :]], -2)
        x = xp.where((info > 0)[..., None, None], nan + 0 * x, x)
    return x


def _solve_gathered(g, part, ns, flagged, x, info, pivoted, piv, periodic):
    """The flagged systems gathered whole onto every rank (every rank's rows,
    as NumPy arrays through the group's object all-gather), solved there by
    recur.linalg.solve_tridiagonal with pivoting, and this rank's rows of
    each taken: the one-device answer, info and pivoted."""
    from .linalg import solve_tridiagonal as solve

    D = part["D"]
    xp = _xp(D)
    mask = _numpy(flagged).reshape(-1)
    which = np.nonzero(mask)[0]
    flat = (mask.size, part["n"])
    mine = tuple(_numpy(v).reshape(flat if v is not part["R"] else flat + (part["k"],))[which]
                 for v in (part["A"], part["D"], part["C"], part["R"]))
    everyone = g.objects(mine)
    whole = [np.concatenate([e[i] for e in everyone], axis=1) for i in range(4)]
    xs, details = solve(*whole, pivoting=piv, periodic=periodic, return_details=True)
    first = sum(ns[:g.rank])
    n = part["n"]
    xb = _numpy(x).reshape((mask.size, n, part["k"])).copy()
    xb[which] = xs[:, first:first + n, :]
    ib = _numpy(info).reshape(-1).copy()
    pb = _numpy(pivoted).reshape(-1).copy()
    ib[which] = details.info
    pb[which] = details.pivoted != 0
    batch = part["batch"]
    return (_as(xb.reshape(batch + (n, part["k"])), D), _as(ib.reshape(batch), D),
            _as(pb.reshape(batch), D) != 0)
