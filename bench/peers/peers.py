#!/usr/bin/env python3
"""Python GPU peers of recur's filter and scan benchmarks, measured on the
same machine in the same session as bench_linrec (scripts/gpu-check --peers):
cupyx.scipy.signal.lfilter and sosfilt, torchaudio.functional.lfilter and
jax.lax.associative_scan, on the shapes and filters of bench_linrec.cu's
lfilter_f32 entries. Timing as shared/reference/peers.py: CUDA events around
one call after a warm-up, median of 7 (JAX: wall clock around a blocking
call). Bytes: x read once and y written once, 4 B each (f32).

    python3 bench/peers/peers.py OUT.json

Every peer is optional: a missing package or a failing call is recorded as
an error in the JSON, not fatal. Results are checked against scipy-like
sequential filtering of the first 4096 samples in numpy (float64).
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import numpy as np

REPS = 7


def filter_coefficients(order):
    """The filter of bench_linrec.cu: poles 0.9, 0.9 e^(+-0.5i), -0.8, 0.7,
    -0.6, 0.5, -0.4 (the first `order` of them); b[k] = 0.5 / (k + 1)."""
    poles = [0.9, 0.9 * np.exp(0.5j), 0.9 * np.exp(-0.5j), -0.8, 0.7, -0.6, 0.5, -0.4][:order]
    a = np.real(np.poly(poles)) if order else np.array([1.0])
    b = np.array([0.5 / (k + 1) for k in range(order + 1)])
    return b, a


def reference(b, a, x):
    """Sequential DF2T in float64 (scipy.signal.lfilter's recurrence)."""
    b = np.asarray(b, np.float64) / a[0]
    a = np.asarray(a, np.float64) / a[0]
    n = max(len(a), len(b))
    b = np.pad(b, (0, n - len(b)))
    a = np.pad(a, (0, n - len(a)))
    z = np.zeros(n - 1)
    y = np.empty(len(x))
    for i, xi in enumerate(np.asarray(x, np.float64)):
        yi = z[0] + b[0] * xi if n > 1 else b[0] * xi
        for j in range(n - 2):
            z[j] = z[j + 1] + xi * b[j + 1] - yi * a[j + 1]
        if n > 1:
            z[n - 2] = xi * b[n - 1] - yi * a[n - 1]
        y[i] = yi
    return y


results = []


def record(name, shape, samples, ms=None, error=None, check=None):
    entry = {"name": name, "shape": shape, "samples": samples}
    if ms is not None:
        entry.update(ms=ms, GBps=8.0 * samples / ms / 1e6)
    if error is not None:
        entry["error"] = error
    if check is not None:
        entry["max_rel_error_first_4096"] = check
    results.append(entry)
    print(f"{name:45s} {shape:28s} " + (f"{ms:9.3f} ms {8.0 * samples / ms / 1e6:8.1f} GB/s" if ms else f"ERROR {error}"),
          flush=True)


def rel_err(got, want):
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / max(1.0, np.max(np.abs(want))))


def run_cupy():
    import cupy as cp
    import cupyx.scipy.signal as cs

    def t(f):
        f()
        cp.cuda.Device().synchronize()
        ts = []
        for _ in range(REPS):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            f()
            e1.record()
            e1.synchronize()
            ts.append(cp.cuda.get_elapsed_time(e0, e1))
        return statistics.median(ts)

    for lanes, n in ((1, 1 << 24), (64, 1 << 18)):
        x = cp.random.default_rng(1).uniform(-1, 1, (lanes, n), dtype=cp.float32)
        for order in range(1, 9):
            b, a = filter_coefficients(order)
            bc, ac = cp.asarray(b, cp.float32), cp.asarray(a, cp.float32)
            shape = f"order:{order}/lanes:{lanes}/N:{n}"
            try:
                y = cs.lfilter(bc, ac, x, axis=-1)
                chk = rel_err(cp.asnumpy(y[0, :4096]), reference(b, a, cp.asnumpy(x[0, :4096])))
                record("cupyx_lfilter_f32", shape, lanes * n, t(lambda: cs.lfilter(bc, ac, x, axis=-1)), check=chk)
            except Exception as e:  # noqa: BLE001 - a peer's failure is data
                record("cupyx_lfilter_f32", shape, lanes * n, error=repr(e)[:200])
    x = cp.random.default_rng(2).uniform(-1, 1, 1 << 24, dtype=cp.float32)
    sos = cp.asarray([[0.2, 0.4, 0.2, 1.0, -0.3, 0.1]] * 4, cp.float32)
    try:
        record("cupyx_sosfilt_f32", "sections:4/lanes:1/N:16777216", 1 << 24, t(lambda: cs.sosfilt(sos, x)))
    except Exception as e:  # noqa: BLE001
        record("cupyx_sosfilt_f32", "sections:4/lanes:1/N:16777216", 1 << 24, error=repr(e)[:200])


def run_torch():
    import torch
    import torchaudio.functional as taf

    def t(f):
        f()
        torch.cuda.synchronize()
        ts = []
        for _ in range(REPS):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            f()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1))
        return statistics.median(ts)

    for order in (1, 2):
        lanes, n = 64, 1 << 18
        b, a = filter_coefficients(order)
        x = torch.rand(lanes, n, device="cuda") * 2 - 1
        bt = torch.tensor(b, dtype=torch.float32, device="cuda")
        at = torch.tensor(a, dtype=torch.float32, device="cuda")
        shape = f"order:{order}/lanes:{lanes}/N:{n}"
        try:
            y = taf.lfilter(x, at, bt, clamp=False)
            chk = rel_err(y[0, :4096].cpu().numpy(), reference(b, a, x[0, :4096].cpu().numpy()))
            record("torchaudio_lfilter_f32", shape, lanes * n, t(lambda: taf.lfilter(x, at, bt, clamp=False)),
                   check=chk)
        except Exception as e:  # noqa: BLE001
            record("torchaudio_lfilter_f32", shape, lanes * n, error=repr(e)[:200])


def run_jax():
    import jax
    import jax.numpy as jnp

    n = 1 << 24
    rng = np.random.default_rng(3)
    s = jnp.asarray(rng.uniform(-0.99, 0.99, n).astype(np.float32))
    u = jnp.asarray(rng.uniform(-1, 1, n).astype(np.float32))
    comb = lambda l, r: (r[0] * l[0], r[0] * l[1] + r[1])  # noqa: E731
    f = jax.jit(lambda s, t: jax.lax.associative_scan(comb, (s, t))[1])
    f(s, u).block_until_ready()
    ts = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        f(s, u).block_until_ready()
        ts.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(ts)
    # 12 B per element for the affine recurrence (s, t read, w written).
    results.append({"name": "jax_associative_scan_affine_f32", "shape": f"N:{n}", "samples": n, "ms": ms,
                    "GBps": 12.0 * n / ms / 1e6})
    print(f"{'jax_associative_scan_affine_f32':45s} {'N:' + str(n):28s} {ms:9.3f} ms {12.0 * n / ms / 1e6:8.1f} GB/s")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "peers.json"
    for name, fn in (("cupy", run_cupy), ("torch", run_torch), ("jax", run_jax)):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - a missing package is recorded, not fatal
            results.append({"name": name, "error": repr(e)[:300]})
            print(f"{name}: unavailable: {e!r}"[:300], flush=True)
    with open(out, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "timing": "CUDA events, median of 7 after a warm-up",
                   "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
