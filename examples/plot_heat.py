#!/usr/bin/env python3
"""Snapshots of `recur heat` and the mode's decay against the PDE's.

    examples/plot_heat.py --recur build/tools/recur --out doc/img/heat-snapshots.png

Runs `recur heat` (the ADI example, doc/applications.md) from the same
initial mode sin(2 pi P x) sin(pi Q y) for several step counts, with a time
step far above the explicit scheme's limit, and draws u after each (top, each on its own colour scale) and
the mode's amplitude per step against exp(-(kx (2 pi P)^2 + ky (pi Q)^2) t)
(bottom, from the progress lines). Needs numpy and matplotlib; --device
passes through (cpu by default: the picture does not depend on it).
"""
import argparse
import math
import os
import re
import subprocess
import tempfile

import numpy as np


def run(recur, args, steps, out):
    cmd = [recur, "heat", *args, "--steps", str(steps), "--every", "1", "-o", out]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = re.findall(r"step\s+(\d+)\s+t\s+(\S+)\s+max\|u\|\s+\S+\s+amplitude\s+(\S+)\s+scheme\s+\S+\s+exact\s+(\S+)", text)
    return [(int(s), float(t), float(a), float(e)) for s, t, a, e in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recur", default="build/tools/recur", help="the recur program")
    ap.add_argument("--nx", type=int, default=256)
    ap.add_argument("--ny", type=int, default=129)
    ap.add_argument("--dt", type=float, default=2e-3)
    ap.add_argument("--kx", type=float, default=1.0)
    ap.add_argument("--ky", type=float, default=0.25)
    ap.add_argument("--p", type=int, default=2)
    ap.add_argument("--q", type=int, default=1)
    ap.add_argument("--snapshots", default="0,5,15,40", help="step counts to draw")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default="heat-snapshots.png", help="the PNG to write")
    args = ap.parse_args()

    common = ["--nx", str(args.nx), "--ny", str(args.ny), "--dt", str(args.dt), "--kx", str(args.kx),
              "--ky", str(args.ky), "--p", str(args.p), "--q", str(args.q), "--device", args.device]
    steps = [int(s) for s in args.snapshots.split(",")]
    x = np.arange(args.nx)[None, :] / args.nx
    y = np.arange(args.ny)[:, None] / (args.ny - 1)
    u0 = np.sin(2 * np.pi * args.p * x) * np.sin(np.pi * args.q * y)
    fields, history = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for s in steps:
            if s == 0:
                fields.append(u0)
                continue
            out = os.path.join(tmp, f"u{s}.npy")
            rows = run(args.recur, common, s, out)
            fields.append(np.load(out))
            if len(rows) > len(history):
                history = rows

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(3.0 * len(steps), 6.2))
    grid = fig.add_gridspec(2, len(steps), height_ratios=[1.0, 0.8])
    for j, (s, u) in enumerate(zip(steps, fields)):
        ax = fig.add_subplot(grid[0, j])
        lim = np.abs(u).max()
        ax.imshow(u, origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_title(f"step {s}, t = {s * args.dt:.3g}, max|u| = {lim:.2g}", fontsize=9)
        ax.set_xlabel("x (periodic)", fontsize=8)
        if j == 0:
            ax.set_ylabel("y (u = 0 at 0 and 1)", fontsize=8)
        ax.tick_params(labelsize=7)
    ax = fig.add_subplot(grid[1, :])
    t = [0.0] + [r[1] for r in history]
    ax.semilogy(t, [1.0] + [r[2] for r in history], "o", ms=3, label="recur heat (ADI), the mode's amplitude")
    ax.semilogy(t, [1.0] + [r[3] for r in history], "-", lw=1, label="exp(-(kx (2 pi P)^2 + ky (pi Q)^2) t)")
    rate = args.kx * (2 * math.pi * args.p) ** 2 + args.ky * (math.pi * args.q) ** 2
    hx = 1.0 / args.nx
    ax.set_xlabel("t", fontsize=9)
    ax.set_ylabel("amplitude", fontsize=9)
    ax.set_title(f"{args.nx} x {args.ny} points, dt = {args.dt:g} (kx dt / hx^2 = {args.kx * args.dt / hx**2:.0f}), "
                 f"decay rate {rate:.1f}", fontsize=9)
    ax.legend(fontsize=8)
    ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
