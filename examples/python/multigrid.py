#!/usr/bin/env python3
"""Multigrid with line smoothers for -div(K grad u) = f, K = diag(1, eps), on
the unit square (u = 0 on the boundary), with recur.linalg.solve_tridiagonal
solving every grid line of a direction in one call: x-lines along the last
axis, y-lines along the first, no transpose. The Python form of
examples/multigrid (doc/applications.md explains the method): V-cycles in
float64, or the mixed-precision scheme, float64 defect correction around one
float32 V-cycle per outer step.

    PYTHONPATH=build/python examples/python/multigrid.py --n 513 --eps 1e-3 --precision mixed

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

OMEGA = 2 / 3  # the line steps' damping (doc/applications.md: the smoothing factor)


def apply(u, cx, cy, xp):
    """A u for the interior values u (my x mx, zero outside), from
    differences of neighbours (doc/applications.md: the rounding)."""
    up = xp.zeros((u.shape[0] + 2, u.shape[1] + 2), dtype_of(u))
    up[1:-1, 1:-1] = u
    c = up[1:-1, 1:-1]
    return cx * ((c - up[1:-1, :-2]) - (up[1:-1, 2:] - c)) + cy * ((c - up[:-2, 1:-1]) - (up[2:, 1:-1] - c))


def dtype_of(a):
    return "float32" if "32" in str(a.dtype) else "float64"


def restrict(r):
    """Full weighting onto the grid of every second interior point."""
    return (4 * r[1::2, 1::2] + 2 * (r[0:-1:2, 1::2] + r[2::2, 1::2] + r[1::2, 0:-1:2] + r[1::2, 2::2])
            + r[0:-1:2, 0:-1:2] + r[0:-1:2, 2::2] + r[2::2, 0:-1:2] + r[2::2, 2::2]) / 16


def prolongate_add(ec, u, xp):
    """u += bilinear interpolation of the coarse correction ec."""
    e = xp.zeros((ec.shape[0] + 2, ec.shape[1] + 2), dtype_of(ec))
    e[1:-1, 1:-1] = ec
    u[1::2, 1::2] += ec
    u[0::2, 1::2] += 0.5 * (e[:-1, 1:-1] + e[1:, 1:-1])
    u[1::2, 0::2] += 0.5 * (e[1:-1, :-1] + e[1:-1, 1:])
    u[0::2, 0::2] += 0.25 * (e[:-1, :-1] + e[:-1, 1:] + e[1:, :-1] + e[1:, 1:])


class Multigrid:
    """V-cycles with the alternating line smoother (an x-line step and a
    y-line step before the coarse grid, and after) on grids coarsened by two
    down to one line, in one precision."""

    def __init__(self, my, mx, cx, cy, dtype, xp):
        self.xp, self.levels = xp, []
        while True:
            # The lines' systems scaled to off-diagonal -1: x-lines M / cx, y-lines M / cy.
            self.levels.append({
                "cx": cx, "cy": cy,
                "off": fill(xp, (my, mx), -1.0, dtype),
                "diag_x": fill(xp, (my, mx), 2 + 2 * cy / cx, dtype),
                "diag_y": fill(xp, (my, mx), 2 + 2 * cx / cy, dtype),
            })
            if mx == 1 or my == 1:
                break
            my, mx, cx, cy = (my - 1) // 2, (mx - 1) // 2, cx / 4, cy / 4

    def line_step(self, level, u, f, axis, omega):
        """u += omega M^-1 (f - A u), M the part of A on the lines along axis
        (-1: x-lines, contiguous; 0: y-lines, interleaved)."""
        r = f - apply(u, level["cx"], level["cy"], self.xp)
        diag, scale = (level["diag_x"], level["cx"]) if axis == -1 else (level["diag_y"], level["cy"])
        u += (omega / scale) * recur.linalg.solve_tridiagonal(level["off"], diag, level["off"], r, axis=axis,
                                                              pivoting="none")

    def cycle(self, u, f, k=0):
        level = self.levels[k]
        if k + 1 == len(self.levels):  # one line: the exact solve
            self.line_step(level, u, f, -1 if u.shape[0] == 1 else 0, 1.0)
            return
        self.line_step(level, u, f, -1, OMEGA)
        self.line_step(level, u, f, 0, OMEGA)
        fc = restrict(f - apply(u, level["cx"], level["cy"], self.xp))
        ec = self.xp.zeros(fc.shape, dtype_of(fc))
        self.cycle(ec, fc, k + 1)
        prolongate_add(ec, u, self.xp)
        self.line_step(level, u, f, -1, OMEGA)
        self.line_step(level, u, f, 0, OMEGA)


def fill(xp, shape, value, dtype):
    a = xp.zeros(shape, dtype)
    a[...] = value
    return a


def norm(a):
    return math.sqrt(float((a * a).sum()))


def manufactured(n, eps):
    """The exact u = sin(pi x) sin(pi y) exp(x + 2y) on the interior points
    and f = -(u_xx + eps u_yy)."""
    t = np.linspace(0, 1, n)[1:-1]

    def wave(t, a):
        return np.sin(np.pi * t) * np.exp(a * t)

    def wave2(t, a):
        return np.exp(a * t) * ((a * a - np.pi**2) * np.sin(np.pi * t) + 2 * a * np.pi * np.cos(np.pi * t))

    y, x = t[:, None], t[None, :]
    return wave(x, 1) * wave(y, 2), -(wave2(x, 1) * wave(y, 2) + eps * wave(x, 1) * wave2(y, 2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=257, help="points per side, 2^k + 1 (default 257)")
    ap.add_argument("--eps", type=float, default=1e-3, help="K = diag(1, eps) (default 1e-3)")
    ap.add_argument("--precision", choices=("double", "mixed"), default="mixed")
    ap.add_argument("--tol", type=float, default=1e-9, help="the residual relative to the initial one")
    ap.add_argument("--max-cycles", type=int, default=30)
    ap.add_argument("--arrays", choices=("auto", "numpy", "cupy", "torch"), default="auto")
    args = ap.parse_args()
    if args.n < 3 or (args.n - 1) & (args.n - 2):
        sys.exit(f"--n {args.n}: the points per side must be 2^k + 1")
    xp = arrays.select(args.arrays)
    m = args.n - 2
    h = 1 / (args.n - 1)
    cx, cy = 1 / h**2, args.eps / h**2
    exact, f_host = manufactured(args.n, args.eps)
    f = xp.from_numpy(f_host, "float64")
    u = xp.zeros((m, m), "float64")
    inner = "float32" if args.precision == "mixed" else "float64"
    mg = Multigrid(m, m, cx, cy, inner, xp)
    print(f"{args.n} x {args.n} points, eps = {args.eps:g}, alternating lines, {args.precision} precision, "
          f"{xp.name} arrays")
    r = f - apply(u, cx, cy, xp)
    r0 = last = norm(r)
    xp.synchronize()
    start = time.perf_counter()
    for cycle in range(1, args.max_cycles + 1):
        if args.precision == "double":
            mg.cycle(u, f)
        else:  # the defect scaled to norm 1, rounded to float32; one float32 V-cycle; u += the correction
            c = xp.zeros(r.shape, "float32")
            mg.cycle(c, xp.cast(r / last, "float32"))
            u += last * xp.cast(c, "float64")
        r = f - apply(u, cx, cy, xp)
        res = norm(r)
        print(f"cycle {cycle:3}  residual {res / r0:.3e}  rate {res / last:.4f}  "
              f"time {time.perf_counter() - start:7.3f} s")
        last = res
        if res <= args.tol * r0:
            break
    error = float(np.abs(xp.to_numpy(u) - exact).max())
    print(f"max |u - u_exact| = {error:.3e} (the discretisation error, O(h^2), once converged)")
    return 0 if last <= args.tol * r0 else 3


if __name__ == "__main__":
    sys.exit(main())
