#!/usr/bin/env python3
"""recur from Python against the Python GPU peers, in one process on one GPU,
with the device-to-device copy ceiling and recur's own C++ figures.

    python3 bench/python_bench.py OUT.json [--cpp BENCH.json] [--filter REGEX] [--reps N] [--list]

Groups (each entry's `group`; recur's entries are role "ours", the others
"peer"):

- lfilter, sosfilt, filtfilt, sosfiltfilt on CuPy arrays against
  cupyx.scipy.signal, f32, on bench_linrec's filters and shapes;
- lfilter on PyTorch tensors against torchaudio.functional.lfilter, forward
  and forward plus backward (recur's coefficients as CPU tensors, which
  recur reads on the host; torchaudio's on the device);
- linrec against accelerated-scan 0.3.1 (its CUDA kernel
  accelerated_scan.warp and its Triton kernel accelerated_scan.scalar, named
  accelerated_scan.triton before 0.3), forward and forward plus backward, on
  its shapes (B, C, T) = (8, 1536, 2^16) and (1, 4096, 2^16) and at a length
  that is not a power of two, in f32 and bf16;
- linrec and solve_tridiagonal on JAX arrays against jax.lax's
  associative_scan (the affine recurrence) and linalg.tridiagonal_solve,
  jitted;
- the overhead of the Python call: recur on small inputs.

Timing, as bench_linrec does it: CUDA events around one call on the
legacy default stream (which CuPy's, PyTorch's and recur's calls here use),
a spin kernel (torch.cuda._sleep) queued ahead of the start event for
longer than the call takes to enqueue, so that real_time is the GPU's time,
not the host's; warm-up calls first, the median of --reps. JAX's work runs
on JAX's own streams: its group (recur on JAX arrays included) is timed by
the wall clock around a call that blocks until its result is ready. host_us
is the host's time of one call, as bench_linrec's: the median over the timed
calls of the wall time from the call's start to its return, each call
enqueued behind the spin (its enqueue, or everything where the call waits
for its result); for the wall-clock group, the median wall time of the
call on an idle GPU.

recur's entries of at most 2 ms of GPU time also get host_loop_us: the
host's time of one call among 50 back-to-back calls (a Python loop of
calls; bench_linrec measures its recur entries the same way).

With --cpp (bench_linrec's JSON from the same machine), each recur entry
with a C++ counterpart (cpp_name) gets vs_cpp (its real_time over the C++
entry's: the GPU work the Python layer adds) and overhead_us (its
host_loop_us less the C++ call's: the host time the Python layer adds).

bytes: each input read once and each output written once (forward plus
backward: the forward's, then the gradient in, the saved arrays read and
the gradients out); GBps = bytes / real_time; pct_of_copy against the
copy_ceiling entry of this run (a torch copy of 1 GiB); vs_best_peer on
recur's entries: the fastest peer's time in the same group over recur's.
max_rel_error: against recur's CPU result in float64 on one sequence (the
first 4096 samples of the first, where a sample depends only on those
before it), relative to max(1, |reference|).

Every peer is optional: a missing package, an unsupported dtype or length,
or a failing call is recorded as the entry's `error`, never fatal.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402

PREFIX = 4096  # samples of the first sequence checked against the float64 reference
COPY_ELEMS = 1 << 28  # the copy ceiling: 1 GiB of f32


# ---------------------------------------------------------------- filters --


def filter_coefficients(order):
    """bench_linrec.cu's lfilter_f32 filter: poles 0.9, 0.9 e^(+-0.5i), -0.8
    (the first `order`), b_k = 0.5 / (k + 1)."""
    poles = [0.9, 0.9 * np.exp(0.5j), 0.9 * np.exp(-0.5j), -0.8][:order]
    return np.array([0.5 / (k + 1) for k in range(order + 1)]), np.real(np.poly(poles))


def bench_sos():
    """bench_linrec.cu's sosfilt_f32 sections: resonant biquads of pole
    radii 0.9, 0.85, 0.8, 0.75."""
    rows = []
    for j in range(4):
        r, t = 0.9 - 0.05 * j, 0.3 + 0.4 * j
        rows.append([0.2, 0.3, 0.1, 1.0, -2 * r * np.cos(t), r * r])
    return np.array(rows)


def rel_error(got, ref):
    got = np.asarray(got, np.float64)
    return float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))


# ------------------------------------------------------------------ entries --


class Entry:
    """One measurement. setup() builds the inputs and returns (call, check):
    call() runs the measured work and returns its output, check(output) its
    max_rel_error (or None). clock: 'events' or 'wall' (JAX)."""

    def __init__(self, name, group, role, framework, setup, bytes_, cpp=None, clock="events", note=None):
        self.name, self.group, self.role, self.framework = name, group, role, framework
        self.setup, self.bytes, self.cpp, self.clock, self.note = setup, bytes_, cpp, clock, note


class Inputs(dict):
    """A group's inputs, built on first use and dropped with the group."""

    def get_or(self, key, make):
        if key not in self:
            self[key] = make()
        return self[key]


def _torch():
    import torch

    return torch


def _cupy():
    import cupy

    return cupy


def cupy_filter_groups(inp):
    import recur.signal as rs

    def signal(lanes, n, seed):
        def make():
            cp = _cupy()
            return cp.random.default_rng(seed).uniform(-1, 1, (lanes, n), dtype=cp.float32)

        return lambda: inp.get_or(("x", lanes, n, seed), make)

    def prefix_check(x, ref_fn):
        def check(y):
            x0 = _cupy().asnumpy(x()[0, :PREFIX]).astype(np.float64)
            return rel_error(_cupy().asnumpy(y[0, :PREFIX]), ref_fn(x0))

        return check

    def lane_check(x, ref_fn):
        def check(y):
            x0 = _cupy().asnumpy(x()[0]).astype(np.float64)
            return rel_error(_cupy().asnumpy(y[0]), ref_fn(x0))

        return check

    def cupyx():
        import cupyx.scipy.signal as cs

        return cs

    for lanes, n in ((1, 1 << 24), (64, 1 << 18)):
        x = signal(lanes, n, 1)
        for order in (1, 2, 3, 4):
            b, a = filter_coefficients(order)
            shape = f"order:{order}/lanes:{lanes}/N:{n}"
            group = f"lfilter_f32/{shape}"
            ref = lambda x0, b=b, a=a: rs.lfilter(b, a, x0)  # noqa: E731

            def ours(b=b, a=a, x=x, ref=ref):
                b32, a32 = b.astype(np.float32), a.astype(np.float32)
                return (lambda: rs.lfilter(b32, a32, x())), prefix_check(x, ref)

            def peer(b=b, a=a, x=x, ref=ref):
                cs, cp = cupyx(), _cupy()
                bc, ac = cp.asarray(b, cp.float32), cp.asarray(a, cp.float32)
                return (lambda: cs.lfilter(bc, ac, x(), axis=-1)), prefix_check(x, ref)

            yield Entry(f"recur_lfilter_f32/{shape}", group, "ours", "cupy", ours, 8 * lanes * n, cpp=group)
            yield Entry(f"cupyx_lfilter_f32/{shape}", group, "peer", "cupy", peer, 8 * lanes * n)
        sos = bench_sos()
        shape = f"sections:4/lanes:{lanes}/N:{n}"
        group = f"sosfilt_f32/{shape}"
        ref = lambda x0: rs.sosfilt(sos, x0)  # noqa: E731

        def ours(x=x, ref=ref):
            s32 = sos.astype(np.float32)
            return (lambda: rs.sosfilt(s32, x())), prefix_check(x, ref)

        def peer(x=x, ref=ref):
            cs, cp = cupyx(), _cupy()
            sc = cp.asarray(sos, cp.float32)
            return (lambda: cs.sosfilt(sc, x(), axis=-1)), prefix_check(x, ref)

        yield Entry(f"recur_sosfilt_f32/{shape}", group, "ours", "cupy", ours, 8 * lanes * n, cpp=group)
        yield Entry(f"cupyx_sosfilt_f32/{shape}", group, "peer", "cupy", peer, 8 * lanes * n)

    # filtfilt and sosfiltfilt: a sample depends on its whole lane, so whole
    # lanes of 2^16 are checked (bench_linrec's filtfilt_f32 shape).
    lanes, n = 256, 1 << 16
    x = signal(lanes, n, 2)
    b, a = filter_coefficients(2)
    sos = bench_sos()
    b32, a32, sos32 = (v.astype(np.float32) for v in (b, a, sos))

    # The peers' calls, their coefficients put on the device beforehand.
    def cupyx_filtfilt(cs, cp):
        bc, ac = cp.asarray(b32), cp.asarray(a32)
        return lambda xx: cs.filtfilt(bc, ac, xx)

    def cupyx_sosfiltfilt(cs, cp):
        sc = cp.asarray(sos32)
        return lambda xx: cs.sosfiltfilt(sc, xx)

    for op, shape, ours_call, peer_call, ref in (
        ("filtfilt", "order:2", lambda xx: rs.filtfilt(b32, a32, xx), cupyx_filtfilt,
         lambda x0: rs.filtfilt(b, a, x0)),
        ("sosfiltfilt", "sections:4", lambda xx: rs.sosfiltfilt(sos32, xx), cupyx_sosfiltfilt,
         lambda x0: rs.sosfiltfilt(sos, x0)),
    ):
        shape = f"{shape}/lanes:{lanes}/N:{n}"
        group = f"{op}_f32/{shape}"

        def ours(ours_call=ours_call, ref=ref):
            return (lambda: ours_call(x())), lane_check(x, ref)

        def peer(peer_call=peer_call, ref=ref):
            f = peer_call(cupyx(), _cupy())
            return (lambda: f(x())), lane_check(x, ref)

        yield Entry(f"recur_{op}_f32/{shape}", group, "ours", "cupy", ours, 8 * lanes * n, cpp=group)
        yield Entry(f"cupyx_{op}_f32/{shape}", group, "peer", "cupy", peer, 8 * lanes * n)


def torchaudio_groups(inp):
    import recur.signal as rs
    lanes, n = 64, 1 << 18

    def x():
        def make():
            torch = _torch()
            g = torch.Generator(device="cuda").manual_seed(3)
            return torch.rand(lanes, n, device="cuda", generator=g) * 2 - 1

        return inp.get_or("x", make)

    def grad_out():
        return inp.get_or("g", lambda: _torch().randn(lanes, n, device="cuda"))

    def check_for(b, a):
        def check(y):
            x0 = x()[0, :PREFIX].cpu().numpy().astype(np.float64)
            y0 = (y[0] if isinstance(y, tuple) else y)[0, :PREFIX].detach().cpu().numpy()
            return rel_error(y0, rs.lfilter(b, a, x0))

        return check

    for order in (1, 2):
        b, a = filter_coefficients(order)
        shape = f"order:{order}/lanes:{lanes}/N:{n}"

        def ours_fwd(b=b, a=a):
            torch = _torch()
            bt, at = torch.tensor(b, dtype=torch.float32), torch.tensor(a, dtype=torch.float32)
            return (lambda: rs.lfilter(bt, at, x())), check_for(b, a)

        def peer_fwd(b=b, a=a):
            torch = _torch()
            import torchaudio.functional as taf

            bt = torch.tensor(b, dtype=torch.float32, device="cuda")
            at = torch.tensor(a, dtype=torch.float32, device="cuda")
            return (lambda: taf.lfilter(x(), at, bt, clamp=False)), check_for(b, a)

        def ours_bwd(b=b, a=a):
            torch = _torch()
            bt = torch.tensor(b, dtype=torch.float32, requires_grad=True)
            at = torch.tensor(a, dtype=torch.float32, requires_grad=True)
            xg = x().detach().requires_grad_(True)

            def call():
                y = rs.lfilter(bt, at, xg)
                return (y,) + torch.autograd.grad(y, (xg, bt, at), grad_out())

            return call, check_for(b, a)

        def peer_bwd(b=b, a=a):
            torch = _torch()
            import torchaudio.functional as taf

            bt = torch.tensor(b, dtype=torch.float32, device="cuda", requires_grad=True)
            at = torch.tensor(a, dtype=torch.float32, device="cuda", requires_grad=True)
            xg = x().detach().requires_grad_(True)

            def call():
                y = taf.lfilter(xg, at, bt, clamp=False)
                return (y,) + torch.autograd.grad(y, (xg, bt, at), grad_out())

            return call, check_for(b, a)

        group = f"lfilter_f32/{shape}/torch"
        note = "recur: b, a as CPU tensors (read on the host); torchaudio: on the device"
        yield Entry(f"recur_lfilter_f32/{shape}/torch", group, "ours", "torch", ours_fwd, 8 * lanes * n,
                    cpp=f"lfilter_f32/{shape}", note=note)
        yield Entry(f"torchaudio_lfilter_f32/{shape}", group, "peer", "torch", peer_fwd, 8 * lanes * n)
        group = f"lfilter_fwd_bwd_f32/{shape}"
        # forward: x in, y out; backward: dy in, x and y read, dx out.
        yield Entry(f"recur_lfilter_fwd_bwd_f32/{shape}", group, "ours", "torch", ours_bwd, 24 * lanes * n,
                    note=note)
        yield Entry(f"torchaudio_lfilter_fwd_bwd_f32/{shape}", group, "peer", "torch", peer_bwd, 24 * lanes * n)


_ACCELERATED_SCAN = {}


def _accelerated_scan(kernel):
    """accelerated-scan's scan(gates, tokens) of one kernel: 'warp' (CUDA,
    compiled by torch at import) or 'triton' (accelerated_scan.scalar since
    0.3, accelerated_scan.triton before). A failed import is remembered and
    raised again: the warp kernel's compilation is tried once."""
    if kernel not in _ACCELERATED_SCAN:
        try:
            if kernel == "warp":
                from accelerated_scan.warp import scan
            else:
                try:
                    from accelerated_scan.scalar import scan
                except ImportError:
                    from accelerated_scan.triton import scan
            _ACCELERATED_SCAN[kernel] = scan
        except Exception as e:  # noqa: BLE001 - any failure to build the kernel is the entry's error
            _ACCELERATED_SCAN[kernel] = e
    got = _ACCELERATED_SCAN[kernel]
    if isinstance(got, Exception):
        raise got
    return got


# host_loop_us only for calls of at most this GPU time (ms), as bench_linrec
# (bench_common.cuh, loop_max_ms): the host's time matters where the GPU's is short.
LOOP_MAX_MS = 2.0

ACCEL_SHAPES = ((8, 1536, 1 << 16), (1, 4096, 1 << 16), (1, 4096, 60000))


def accelerated_scan_groups(inp):
    import recur

    for B, C, T in ACCEL_SHAPES:
        for dname in ("f32", "bf16"):
            size = 2 if dname == "bf16" else 4

            def inputs(B=B, C=C, T=T, dname=dname):
                def make():
                    torch = _torch()
                    dt = torch.bfloat16 if dname == "bf16" else torch.float32
                    g = torch.Generator(device="cuda").manual_seed(5)
                    gates = (0.5 + 0.49 * torch.rand(B, C, T, device="cuda", generator=g)).to(dt)
                    tokens = torch.randn(B, C, T, device="cuda", generator=g).to(dt)
                    return gates, tokens, torch.randn(B, C, T, device="cuda", generator=g).to(dt)

                # One dtype's inputs at a time: (8, 1536, 2^16) f32 is 3.2 GB an array.
                for k in [k for k in inp if k[0] == "accel" and k[1:] != (B, C, T, dname)]:
                    del inp[k]
                return inp.get_or(("accel", B, C, T, dname), make)

            def check(out, inputs=inputs):
                gates, tokens, _ = inputs()
                w = (out[0] if isinstance(out, tuple) else out).detach()
                s0 = gates[0, 0, :PREFIX].float().cpu().numpy().astype(np.float64)
                t0 = tokens[0, 0, :PREFIX].float().cpu().numpy().astype(np.float64)
                return rel_error(w[0, 0, :PREFIX].float().cpu().numpy(), recur.linrec(s0, t0))

            def fwd(fn, inputs=inputs):
                gates, tokens, _ = inputs()
                return lambda: fn(gates, tokens)

            def fwd_bwd(fn, inputs=inputs):
                torch = _torch()
                gates, tokens, gout = inputs()
                gg, tg = gates.detach().requires_grad_(True), tokens.detach().requires_grad_(True)

                def call():
                    w = fn(gg, tg)
                    return (w,) + torch.autograd.grad(w, (gg, tg), gout)

                return call

            shape = f"B:{B}/C:{C}/T:{T}"
            cpp = f"linrec_batched_contiguous_{dname}/lanes:{B * C}/N:{T}"
            for direction, wrap, k in (("fwd", fwd, 3), ("fwd_bwd", fwd_bwd, 8)):
                # forward: s, t in, w out; backward: dw in, s and w read, ds, dt out.
                group = f"linrec_{direction}_{dname}/{shape}"
                nbytes = k * size * B * C * T

                def ours(wrap=wrap, check=check):
                    return wrap(lambda s, t: recur.linrec(s, t)), check

                yield Entry(f"recur_linrec_{direction}_{dname}/{shape}", group, "ours", "torch", ours, nbytes,
                            cpp=cpp if direction == "fwd" else None)
                for kernel in ("warp", "triton"):

                    def peer(wrap=wrap, check=check, kernel=kernel, dname=dname, B=B, C=C, T=T):
                        if kernel == "warp" and dname == "bf16" and B * C * T > 1 << 29:
                            # compute-sanitizer memcheck (H200): its bf16 kernel at (8, 1536, 2^16)
                            # reads up to 4.4 MB past its inputs (141538 invalid reads); where
                            # that memory is unmapped the process's CUDA context is lost, and
                            # every later entry fails with it.
                            raise RuntimeError("not run: accelerated-scan's warp kernel reads past its bf16 "
                                               "inputs at this shape (compute-sanitizer memcheck)")
                        return wrap(_accelerated_scan(kernel)), check

                    yield Entry(f"accelerated_scan_{kernel}_linrec_{direction}_{dname}/{shape}", group, "peer",
                                "torch", peer, nbytes)


def jax_groups(inp):
    import recur
    import recur.linalg as rl

    def jax():
        import jax

        jax.config.update("jax_enable_x64", True)
        return jax

    # The affine recurrence: one sequence of 2^24, and a batch along the last axis.
    for shape, dims, cpp in (
        ("N:16777216", (1 << 24,), "linrec_f32/N:16777216"),
        ("lanes:4096/N:65536", (4096, 1 << 16), "linrec_batched_contiguous_f32/lanes:4096/N:65536"),
    ):
        group = f"linrec_f32/{shape}/jax"
        n = int(np.prod(dims))

        def arrays(dims=dims):
            def make():
                jnp = jax().numpy
                rng = np.random.default_rng(7)
                s = jnp.asarray(rng.uniform(-0.99, 0.99, dims).astype(np.float32))
                t = jnp.asarray(rng.uniform(-1, 1, dims).astype(np.float32))
                return s, t

            return inp.get_or(("st", dims), make)

        def check(w, arrays=arrays):
            s, t = arrays()
            s0 = np.asarray(s).reshape(-1, s.shape[-1])[0, :PREFIX].astype(np.float64)
            t0 = np.asarray(t).reshape(-1, t.shape[-1])[0, :PREFIX].astype(np.float64)
            return rel_error(np.asarray(w).reshape(-1, w.shape[-1])[0, :PREFIX], recur.linrec(s0, t0))

        def ours(arrays=arrays, check=check):
            s, t = arrays()
            return (lambda: recur.linrec(s, t)), check

        def peer(arrays=arrays, check=check):
            j = jax()
            comb = lambda left, right: (right[0] * left[0], right[0] * left[1] + right[1])  # noqa: E731
            f = j.jit(lambda s, t: j.lax.associative_scan(comb, (s, t), axis=-1)[1])
            s, t = arrays()
            return (lambda: f(s, t).block_until_ready()), check

        yield Entry(f"recur_linrec_f32/{shape}/jax", group, "ours", "jax", ours, 12 * n, cpp=cpp, clock="wall")
        yield Entry(f"jax_associative_scan_linrec_f32/{shape}", group, "peer", "jax", peer, 12 * n, clock="wall")

    # Batched tridiagonal systems, n = 512, 65536 systems.
    n, batch = 512, 1 << 16
    for dname, size in (("f32", 4), ("f64", 8)):
        shape = f"n:{n}/batch:{batch}"
        group = f"tridiag_{dname}/{shape}"

        def systems(dname=dname):
            def make():
                jnp = jax().numpy
                dt = np.float32 if dname == "f32" else np.float64
                rng = np.random.default_rng(11)
                dl = rng.uniform(-1, 1, (batch, n)).astype(dt)
                du = rng.uniform(-1, 1, (batch, n)).astype(dt)
                dl[:, 0], du[:, -1] = 0, 0
                d = rng.uniform(3, 5, (batch, n)).astype(dt)
                b = rng.standard_normal((batch, n)).astype(dt)
                return tuple(jnp.asarray(v) for v in (dl, d, du, b))

            for k in [k for k in inp if k[0] == "tri" and k[1] != dname]:
                del inp[k]
            return inp.get_or(("tri", dname), make)

        def check(x, systems=systems):
            dl, d, du, b = (np.asarray(v)[0].astype(np.float64) for v in systems())
            return rel_error(np.asarray(x).reshape(batch, n)[0], rl.solve_tridiagonal(dl, d, du, b))

        def ours(systems=systems, check=check):
            dl, d, du, b = systems()
            return (lambda: rl.solve_tridiagonal(dl, d, du, b)), check

        def peer(systems=systems, check=check):
            j = jax()
            f = j.jit(lambda dl, d, du, b: j.lax.linalg.tridiagonal_solve(dl, d, du, b[..., None])[..., 0])
            dl, d, du, b = systems()
            return (lambda: f(dl, d, du, b).block_until_ready()), check

        # dl, d, du, b read, x written.
        yield Entry(f"recur_tridiag_{dname}/{shape}/jax", group, "ours", "jax", ours, 5 * size * n * batch,
                    cpp=f"tridiag_auto_{dname}_contiguous/{shape}", clock="wall")
        yield Entry(f"jax_tridiagonal_solve_{dname}/{shape}", group, "peer", "jax", peer, 5 * size * n * batch,
                    clock="wall")


def overhead_groups(inp):
    """recur's Python call on small inputs (host_us against the C++ call's
    where bench_linrec has the shape) and on large ones (real_time within a
    few percent of the C++ entry's)."""
    import recur
    import recur.linalg as rl
    import recur.signal as rs

    def on(framework, make):
        """make()'s tensors (generated on the device by PyTorch), as
        framework's arrays (CuPy: the same memory, through DLPack)."""

        def get():
            arrs = inp.get_or(("torch", make.__name__), make)
            if framework == "cupy":
                return inp.get_or(("cupy", make.__name__), lambda: tuple(_cupy().from_dlpack(v) for v in arrs))
            return arrs

        return get

    def uniform(shape, lo, hi, seed):
        torch = _torch()
        g = torch.Generator(device="cuda").manual_seed(seed)
        return lo + (hi - lo) * torch.rand(shape, device="cuda", generator=g)

    def st(n):
        def st_arrays():
            return uniform(n, -0.99, 0.99, 13), uniform(n, -1, 1, 14)

        st_arrays.__name__ = f"st{n}"
        return st_arrays

    def tri(n, batch):
        def tri_arrays():
            shape = (batch, n)
            return uniform(shape, -1, 1, 17), uniform(shape, 3, 5, 18), uniform(shape, -1, 1, 19), uniform(shape, -1, 1, 20)

        tri_arrays.__name__ = f"tri{n}x{batch}"
        return tri_arrays

    def sig(lanes, n):
        def sig_arrays():
            return (uniform((lanes, n), -1, 1, 21),)

        sig_arrays.__name__ = f"sig{lanes}x{n}"
        return sig_arrays

    b2, a2 = (v.astype(np.float32) for v in filter_coefficients(2))
    sos4 = bench_sos().astype(np.float32)
    for framework in ("cupy", "torch"):
        for n in (1 << 10, 1 << 20, 1 << 24, 1 << 28):
            get = on(framework, st(n))
            cpp = f"linrec_f32/N:{n}"
            yield Entry(f"recur_linrec_f32/N:{n}/{framework}", f"overhead/linrec_f32/N:{n}", "ours", framework,
                        lambda get=get: ((lambda: recur.linrec(*get())), None), 12 * n, cpp=cpp)
        for lanes, n in ((1, 1 << 10), (64, 1 << 18)):
            get = on(framework, sig(lanes, n))
            cpp = f"lfilter_f32/order:2/lanes:{lanes}/N:{n}"
            yield Entry(f"recur_lfilter_f32/order:2/lanes:{lanes}/N:{n}/{framework}",
                        f"overhead/lfilter_f32/order:2/lanes:{lanes}/N:{n}", "ours", framework,
                        lambda get=get: ((lambda: rs.lfilter(b2, a2, get()[0])), None), 8 * lanes * n, cpp=cpp)
        # The other filters' calls on one small sequence (sosfilt's against the C++ entry of its shape).
        get = on(framework, sig(1, 1 << 10))
        for name, call in (("sosfilt_f32/sections:4", lambda x: rs.sosfilt(sos4, x)),
                           ("filtfilt_f32/order:2", lambda x: rs.filtfilt(b2, a2, x)),
                           ("sosfiltfilt_f32/sections:4", lambda x: rs.sosfiltfilt(sos4, x))):
            cpp = f"{name}/lanes:1/N:1024" if name.startswith("sosfilt_") else None
            yield Entry(f"recur_{name}/lanes:1/N:1024/{framework}", f"overhead/{name}/lanes:1/N:1024", "ours",
                        framework, lambda get=get, call=call: ((lambda: call(get()[0])), None), 8 * 1024, cpp=cpp)
        # With return_info and pivoting='none' the call is the C++ entry's
        # (the no-pivot solve, enqueued without waiting); by default it also
        # runs the stability test and waits for info to raise LinAlgError:
        # the wall clock of the blocking call.
        for n, batch in ((64, 16), (512, 512)):
            get = on(framework, tri(n, batch))
            cpp = f"tridiag_auto_f32_contiguous/n:{n}/batch:{batch}" if batch >= 512 else None
            yield Entry(f"recur_tridiag_f32/n:{n}/batch:{batch}/{framework}", f"overhead/tridiag_f32/n:{n}/batch:{batch}",
                        "ours", framework,
                        lambda get=get: ((lambda: rl.solve_tridiagonal(*get(), pivoting="none", return_info=True)[0]),
                                         None),
                        20 * n * batch, cpp=cpp)
            yield Entry(f"recur_tridiag_f32/n:{n}/batch:{batch}/raise/{framework}",
                        f"overhead/tridiag_f32/n:{n}/batch:{batch}/raise", "ours", framework,
                        lambda get=get: ((lambda: rl.solve_tridiagonal(*get())), None), 20 * n * batch, clock="wall")
        # The default pivoting's GPU time (the no-pivot solve, its stability
        # check and the re-solve of what it flags) against the C++ no-pivot
        # entry: what the default costs over pivoting='none'.
        for n, batch in ((512, 512), (512, 1 << 16)):
            get = on(framework, tri(n, batch))
            yield Entry(f"recur_tridiag_f32/n:{n}/batch:{batch}/auto/{framework}",
                        f"overhead/tridiag_f32/n:{n}/batch:{batch}/auto", "ours", framework,
                        lambda get=get: ((lambda: rl.solve_tridiagonal(*get(), return_info=True)[0]), None),
                        20 * n * batch, cpp=f"tridiag_auto_f32_contiguous/n:{n}/batch:{batch}")


GROUPS = (
    ("cupyx", cupy_filter_groups),
    ("torchaudio", torchaudio_groups),
    ("accelerated_scan", accelerated_scan_groups),
    ("overhead", overhead_groups),
    ("jax", jax_groups),  # last: JAX holds on to device memory
)


# ------------------------------------------------------------------- timing --


class Clock:
    """CUDA events on the legacy default stream with a spin kernel ahead of
    the start event (PyTorch), and the wall clock."""

    def __init__(self, reps):
        self.reps = reps
        self.torch = _torch()
        self.sync = self.torch.cuda.synchronize
        # Cycles of torch.cuda._sleep per millisecond, measured.
        e0, e1 = self._events()
        self.torch.cuda._sleep(1000)
        e0.record()
        self.torch.cuda._sleep(10_000_000)
        e1.record()
        e1.synchronize()
        self.cycles_per_ms = 10_000_000 / max(e0.elapsed_time(e1), 1e-3)

    def _events(self):
        cuda = self.torch.cuda
        return cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)

    def host_us(self, call, reps):
        """The call's own wall time on an idle GPU, median, microseconds."""
        ts = []
        for _ in range(reps):
            self.sync()
            t0 = time.perf_counter()
            call()
            ts.append(time.perf_counter() - t0)
        self.sync()
        return statistics.median(ts) * 1e6

    def events_ms(self, call, host_us):
        """The call's GPU time (median, ms) and its host time (median, us),
        each call behind a spin of twice host_us (at least 0.2 ms)."""
        spin = int(self.cycles_per_ms * max(0.2, 2e-3 * host_us))
        ts, hs = [], []
        for _ in range(self.reps):
            e0, e1 = self._events()
            self.torch.cuda._sleep(spin)
            e0.record()
            h0 = time.perf_counter()
            call()
            hs.append(time.perf_counter() - h0)
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1))
        return statistics.median(ts), statistics.median(hs) * 1e6

    def loop_us(self, call, warm=10, calls=50):
        """The host's time of one call among back-to-back calls (mean of
        `calls` after `warm` untimed ones), as bench_linrec's host_loop_us."""
        for _ in range(warm):
            call()
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        us = (time.perf_counter() - t0) / calls * 1e6
        self.sync()
        return us

    def wall_ms(self, call):
        ts = []
        for _ in range(self.reps):
            self.sync()
            t0 = time.perf_counter()
            call()
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)


def load_cpp(path):
    """bench_linrec's median entries by name (the run name less /manual_time)."""
    if not path:
        return {}, {}
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        if b.get("aggregate_name") == "median" and "error_occurred" not in b:
            out[b["run_name"].rsplit("/manual_time", 1)[0]] = b
    return out, data.get("context", {})


def measure(entry, clock, copy_gbps, cpp):
    r = {"name": entry.name, "run_name": entry.name, "run_type": "aggregate", "aggregate_name": "median",
         "repetitions": clock.reps, "group": entry.group, "role": entry.role, "framework": entry.framework,
         "bytes": float(entry.bytes), "time_unit": "ms"}
    if entry.note:
        r["note"] = entry.note
    if entry.cpp:
        r["cpp_name"] = entry.cpp
    try:
        call, check = entry.setup()
        out = call()  # warm-up (and compilation, for JIT peers)
        clock.sync()
        if check is not None:
            r["max_rel_error"] = check(out)
        del out
        call()
        r["host_us"] = clock.host_us(call, min(clock.reps, 7))
        if entry.clock == "wall":
            ms = clock.wall_ms(call)
        else:
            ms, r["host_us"] = clock.events_ms(call, r["host_us"])
            if entry.role == "ours" and ms < LOOP_MAX_MS:
                r["host_loop_us"] = clock.loop_us(call)
    except Exception as e:  # noqa: BLE001 - a peer's (or a dtype's) failure is data
        msg = f"{type(e).__name__}: {e}"
        r["error"] = ("unsupported: " if isinstance(e, (TypeError, NotImplementedError)) else "") + msg[:300]
        r["error_occurred"] = True
        return r
    r["real_time"] = ms
    r["GBps"] = entry.bytes / ms / 1e6
    if copy_gbps:
        r["pct_of_copy"] = 100.0 * r["GBps"] / copy_gbps
    c = cpp.get(entry.cpp) if entry.cpp else None
    if c is not None:
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[c.get("time_unit", "ms")]
        r["cpp_real_time"] = c["real_time"] * scale
        r["vs_cpp"] = ms / r["cpp_real_time"]
        if "host_us" in c:
            r["cpp_host_us"] = c["host_us"]
        if "host_loop_us" in c and "host_loop_us" in r:
            r["cpp_host_loop_us"] = c["host_loop_us"]
            r["overhead_us"] = r["host_loop_us"] - c["host_loop_us"]
    return r


def copy_ceiling(clock):
    torch = clock.torch
    x = torch.empty(COPY_ELEMS, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    y.copy_(x)
    host = clock.host_us(lambda: y.copy_(x), 3)
    ms, host = clock.events_ms(lambda: y.copy_(x), host)
    del x, y
    torch.cuda.empty_cache()
    nbytes = 8.0 * COPY_ELEMS
    return {"name": f"copy_ceiling/bytes:{4 * COPY_ELEMS}", "run_name": f"copy_ceiling/bytes:{4 * COPY_ELEMS}",
            "run_type": "aggregate", "aggregate_name": "median", "repetitions": clock.reps, "group": "copy_ceiling",
            "role": "context", "framework": "torch", "real_time": ms, "time_unit": "ms", "bytes": nbytes,
            "GBps": nbytes / ms / 1e6, "pct_of_copy": 100.0, "host_us": host}


def vs_best_peer(results):
    best = {}
    for r in results:
        if r.get("role") == "peer" and "real_time" in r:
            best[r["group"]] = min(best.get(r["group"], float("inf")), r["real_time"])
    for r in results:
        if r.get("role") == "ours" and "real_time" in r and r["group"] in best:
            r["vs_best_peer"] = best[r["group"]] / r["real_time"]
            r["best_peer_time"] = best[r["group"]]


def free_memory():
    for mod, free in (("torch", lambda m: m.cuda.empty_cache()),
                      ("cupy", lambda m: m.get_default_memory_pool().free_all_blocks())):
        if mod in sys.modules:
            try:
                free(sys.modules[mod])
            except Exception:  # noqa: BLE001
                pass


def versions():
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("recur", "torch", "cupy", "torchaudio", "jax", "jaxlib", "scipy", "triton"):
        try:
            out[mod] = getattr(__import__(mod), "__version__", "?")
        except Exception as e:  # noqa: BLE001
            out[mod] = f"unavailable ({type(e).__name__})"
    try:
        from importlib.metadata import version

        out["accelerated_scan"] = version("accelerated-scan")
    except Exception as e:  # noqa: BLE001
        out["accelerated_scan"] = f"unavailable ({type(e).__name__})"
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the JSON file to write")
    ap.add_argument("--cpp", help="bench_linrec's JSON from the same machine (C++ figures by entry name)")
    ap.add_argument("--filter", default="", help="run the entries whose name matches this regular expression")
    ap.add_argument("--reps", type=int, default=21, help="timed calls per entry (median; default 21)")
    ap.add_argument("--list", action="store_true", help="print the entries' names and exit (no device needed)")
    args = ap.parse_args(argv)
    pattern = re.compile(args.filter)

    if args.list:
        for gname, gen in GROUPS:
            try:
                for e in gen(Inputs()):
                    if pattern.search(e.name):
                        print(f"{e.name}  [{e.group}]" + (f"  cpp={e.cpp}" if e.cpp else ""))
            except Exception as e:  # noqa: BLE001
                print(f"{gname}: unavailable: {type(e).__name__}: {e}")
        return 0

    cpp, cpp_context = load_cpp(args.cpp)
    context = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host_name": platform.node(),
               "executable": "bench/python_bench.py", "versions": versions(),
               "timing": "CUDA events around one call, a spin kernel ahead of the start event, legacy default stream "
                         "(JAX: wall clock around a blocking call); real_time = median of "
                         f"{args.reps} calls after a warm-up; host_us = median host time of a call enqueued behind the spin "
                         "(wall-clock entries: median wall time of the call on an idle GPU); "
                         "GB = 1e9 bytes"}
    if args.cpp:
        context["cpp_json"] = args.cpp
        context["cpp_gpu_name"] = cpp_context.get("gpu_name", "?")
    results = []
    try:
        clock = Clock(args.reps)
        torch = clock.torch
        p = torch.cuda.get_device_properties(0)
        context.update(gpu_name=p.name, gpu_sm_count=str(p.multi_processor_count),
                       gpu_memory_bytes=str(p.total_memory),
                       gpu_compute_capability=f"{p.major}.{p.minor}")
        results.append(copy_ceiling(clock))
    except Exception as e:  # noqa: BLE001 - without PyTorch's CUDA there is no clock: record why
        results.append({"name": "copy_ceiling", "error": f"{type(e).__name__}: {e}"[:300], "error_occurred": True})
        clock = None
    copy_gbps = results[0].get("GBps")
    print(f"{results[0]['name']:70s} " + (f"{results[0]['real_time']:9.3f} ms" if copy_gbps else results[0]["error"]),
          flush=True)

    for gname, gen in GROUPS:
        inp = Inputs()
        try:
            for entry in gen(inp):
                if not pattern.search(entry.name):
                    continue
                if clock is None:
                    r = {"name": entry.name, "group": entry.group, "role": entry.role, "error": "no clock (PyTorch CUDA)",
                         "error_occurred": True}
                else:
                    r = measure(entry, clock, copy_gbps, cpp)
                results.append(r)
                if "error" in r:
                    print(f"{entry.name:70s} ERROR {r['error']}", flush=True)
                else:
                    extra = f" {r['pct_of_copy']:5.1f}% of copy" if "pct_of_copy" in r else ""
                    extra += f"  vs C++ {r['vs_cpp']:.3f}" if "vs_cpp" in r else ""
                    print(f"{entry.name:70s} {r['real_time']:9.3f} ms {r['host_us']:8.1f} us host{extra}", flush=True)
        except Exception as e:  # noqa: BLE001 - a group without its package: recorded, not fatal
            results.append({"name": gname, "group": gname, "role": "peer", "error": f"{type(e).__name__}: {e}"[:300],
                            "error_occurred": True})
            print(f"{gname}: unavailable: {type(e).__name__}: {e}"[:300], flush=True)
        inp.clear()
        free_memory()
        write(args.out, context, results)  # after every group: a run cut short keeps what it measured
    print(f"wrote {args.out}: {len(results)} entries, {sum('error' in r for r in results)} with errors")
    return 0


def write(path, context, results):
    vs_best_peer(results)
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
