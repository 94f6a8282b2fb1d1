#!/usr/bin/env python3
"""The heat equation u_t = kx u_xx + ky u_yy on [0, 1) x [0, 1], periodic in
x, u = 0 at y = 0 and y = 1, stepped by Peaceman-Rachford ADI with
recur.linalg.solve_tridiagonal: each half step is one call over all rows
(periodic systems, along the last axis) or all columns (Dirichlet, along
the first axis). The Python form of examples/heat (doc/applications.md
explains the method). From the mode sin(2 pi p x) sin(pi q y) the scheme
multiplies u by its factor g per step, exactly up to rounding: the script
prints the mode's amplitude against g^step and against the PDE's decay.

    PYTHONPATH=build/python examples/python/heat.py --nx 256 --ny 129 --dt 1e-4 --steps 100

Arrays: CuPy or PyTorch on a GPU, NumPy on the CPU (--arrays).
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import arrays  # noqa: E402
import recur.linalg  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nx", type=int, default=256, help="points along x (periodic), x_i = i / nx")
    ap.add_argument("--ny", type=int, default=129, help="points along y, the boundary rows included")
    ap.add_argument("--kx", type=float, default=1.0)
    ap.add_argument("--ky", type=float, default=1.0)
    ap.add_argument("--p", type=int, default=1, help="the mode sin(2 pi p x) sin(pi q y)")
    ap.add_argument("--q", type=int, default=1)
    ap.add_argument("--dt", type=float, default=1e-4)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--every", type=int, default=25, help="a progress line every N steps")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--arrays", choices=("auto", "numpy", "cupy", "torch"), default="auto")
    args = ap.parse_args()
    if args.nx < 3 or args.ny < 4 or not 1 <= args.p < args.nx / 2 or not 1 <= args.q <= args.ny - 2:
        sys.exit("need nx >= 3, ny >= 4, 1 <= p < nx / 2, 1 <= q <= ny - 2")
    xp, t = arrays.select(args.arrays), args.dtype
    nx, my = args.nx, args.ny - 2
    hx, hy = 1 / nx, 1 / (args.ny - 1)
    rx, ry = args.kx * args.dt / (2 * hx**2), args.ky * args.dt / (2 * hy**2)

    # The interior rows: u[j, i] at (x_i, y_(j+1)); rows 0 and ny - 1 (zero) are not stored.
    x, y = np.arange(nx) / nx, np.arange(1, my + 1) * hy
    mode = np.sin(np.pi * args.q * y)[:, None] * np.sin(2 * np.pi * args.p * x)[None, :]
    u = xp.from_numpy(mode, t)
    # Rows: diagonal 1 + 2 rx, off-diagonals -rx, periodic (dl[:, 0] and du[:, -1] are the corners).
    off_x, diag_x = xp.zeros((my, nx), t), xp.zeros((my, nx), t)
    off_x[...], diag_x[...] = -rx, 1 + 2 * rx
    # Columns: Dirichlet, diagonal 1 + 2 ry, off-diagonals -ry (dl[0, :] and du[-1, :] are not read).
    off_y, diag_y = xp.zeros((my, nx), t), xp.zeros((my, nx), t)
    off_y[...], diag_y[...] = -ry, 1 + 2 * ry

    def dy(w):  # the second difference along y, zero beyond the interior rows
        d = -2 * w
        d[1:] += w[:-1]
        d[:-1] += w[1:]
        return d

    def dx(w):  # periodic along x
        return xp.roll(w, 1, 1) - 2 * w + xp.roll(w, -1, 1)

    sx, sy = 4 * math.sin(math.pi * args.p * hx) ** 2, 4 * math.sin(math.pi * args.q * hy / 2) ** 2
    g = (1 - rx * sx) * (1 - ry * sy) / ((1 + rx * sx) * (1 + ry * sy))
    decay = args.kx * (2 * np.pi * args.p) ** 2 + args.ky * (np.pi * args.q) ** 2
    print(f"{nx} x {args.ny} points, kx = {args.kx:g}, ky = {args.ky:g}, dt = {args.dt:g} "
          f"(kx dt / hx^2 = {2 * rx:.3g}), {args.dtype}, {xp.name} arrays")
    worst = 0.0
    xp.synchronize()
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        v = recur.linalg.solve_tridiagonal(off_x, diag_x, off_x, u + ry * dy(u), axis=-1, periodic=True)
        u = recur.linalg.solve_tridiagonal(off_y, diag_y, off_y, v + rx * dx(v), axis=0, pivoting="none")
        if step % args.every == 0 or step == args.steps:
            host = xp.to_numpy(u).astype(np.float64)
            amplitude = float((host * mode).sum() / (mode * mode).sum())
            scheme = g**step
            worst = max(worst, abs(amplitude - scheme) / abs(scheme))
            print(f"step {step:5}  t {step * args.dt:.4e}  max|u| {np.abs(host).max():.4e}  amplitude {amplitude:.6e}"
                  f"  scheme {scheme:.6e}  exact {math.exp(-decay * step * args.dt):.6e}"
                  f"  time {time.perf_counter() - start:7.3f} s")
    print(f"amplitude against the scheme's factor g^step: relative difference {worst:.2e} (rounding)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
