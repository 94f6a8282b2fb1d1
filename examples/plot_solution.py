#!/usr/bin/env python3
"""An image of a solution written by `recur poisson -o U.npy`, and its error.

    build/tools/recur poisson --n 257 --eps 0.001 -o u.npy
    examples/plot_solution.py u.npy --out doc/img/multigrid-solution.png

Left: u on the unit square. Right: u minus the manufactured exact solution
sin(pi x) sin(pi y) exp(x + 2 y), the discretisation error. Needs numpy and
matplotlib.
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("u", help="the .npy file recur poisson wrote (ny, nx)")
    ap.add_argument("--out", default="multigrid-solution.png", help="the PNG to write")
    ap.add_argument("--title", default="", help="a line above the images")
    args = ap.parse_args()

    u = np.load(args.u)
    ny, nx = u.shape
    x = np.linspace(0, 1, nx)[None, :]
    y = np.linspace(0, 1, ny)[:, None]
    exact = np.sin(np.pi * x) * np.sin(np.pi * y) * np.exp(x + 2 * y)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    panels = [(u, "u", "viridis"), (u - exact, "u - u_exact", "RdBu_r")]
    for ax, (v, name, cmap) in zip(axes, panels):
        lim = np.abs(v).max() if cmap == "RdBu_r" else None
        im = ax.imshow(v, origin="lower", extent=(0, 1, 0, 1), cmap=cmap,
                       vmin=-lim if lim else None, vmax=lim)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        fig.colorbar(im, ax=ax, shrink=0.85)
    fig.suptitle(args.title or f"recur poisson, {nx} x {ny} points; max |u - u_exact| = {np.abs(u - exact).max():.2e}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
