#!/usr/bin/env python3
"""Convergence rate per V-cycle against anisotropy, one line per smoother.

Runs `recur poisson` (examples/multigrid) for each smoother and each eps in
K = diag(1, eps) from a random initial guess, reads its progress lines, and
plots the asymptotic rate: the geometric mean of the residual reductions of
the last five V-cycles. Goeddeke and Strzodka (2011) make the same comparison
of Jacobi and ADI-TRIDI (their Figs. 5 and 6) on anisotropic meshes.

    examples/plot_convergence.py --recur build/tools/recur --n 129 \\
        --out doc/img/multigrid-convergence.png

Prints the table (markdown) as well. Needs matplotlib.
"""
import argparse
import os
import platform
import re
import subprocess
import sys

SMOOTHERS = ["jacobi", "x", "y", "alternating"]
LABELS = {
    "jacobi": "point Jacobi (damped)",
    "x": "x-lines (contiguous)",
    "y": "y-lines (interleaved)",
    "alternating": "alternating x/y lines (ADI-TRIDI)",
}
EPS = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]
CYCLE = re.compile(r"^cycle\s+(\d+)(?:\s+outer\s+\d+)?\s+residual\s+(\S+)\s+rate\s+(\S+)", re.M)


def rate(recur, n, eps, smoother, device, precision, cycles, last=5):
    """The asymptotic rate of one run and the line naming its device."""
    cmd = [recur, "poisson", "--n", str(n), "--eps", repr(eps), "--smoother", smoother,
           "--precision", precision, "--guess", "random", "--tol", "1e-13",
           "--max-cycles", str(cycles), "--device", device]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
    residuals = [float(m.group(2)) for m in CYCLE.finditer(run.stdout)]
    if len(residuals) <= last:
        sys.exit(f"{' '.join(cmd)}: only {len(residuals)} cycles")
    where = run.stdout.splitlines()[1].strip()
    return (residuals[-1] / residuals[-1 - last]) ** (1 / last), where


def cpu_model():
    """The CPU's name and core count (Linux), for the figure's footnote."""
    try:
        with open("/proc/cpuinfo") as f:
            name = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        name = platform.processor() or "unknown CPU"
    return f"{name}, {os.cpu_count()} cores"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recur", default="build/tools/recur", help="the recur program")
    ap.add_argument("--n", type=int, default=129, help="points per side (2^k + 1)")
    ap.add_argument("--device", default="cpu", help="cpu, gpu or auto")
    ap.add_argument("--precision", default="double", help="double, single or mixed")
    ap.add_argument("--cycles", type=int, default=20, help="V-cycles at most per run")
    ap.add_argument("--out", default="multigrid-convergence.png", help="the PNG to write")
    args = ap.parse_args()

    rates = {}
    where = ""
    for s in SMOOTHERS:
        for e in EPS:
            rates[s, e], where = rate(args.recur, args.n, e, s, args.device, args.precision, args.cycles)

    print(f"Rate per V-cycle, {args.n} x {args.n} points, 2 + 2 smoothing steps, {args.precision}; "
          f"{cpu_model()}; {where}\n")
    print("| smoother | " + " | ".join(f"eps = {e:g}" for e in EPS) + " |")
    print("| --- |" + " --- |" * len(EPS))
    for s in SMOOTHERS:
        print(f"| {s} | " + " | ".join(f"{rates[s, e]:.3f}" for e in EPS) + " |")

    try:
        import matplotlib
    except ImportError:
        sys.exit("matplotlib is not installed: the table above, no plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for s, marker in zip(SMOOTHERS, "osD^"):
        ax.plot(EPS, [rates[s, e] for e in EPS], marker=marker, label=LABELS[s])
    ax.axhline(0.2, color="gray", lw=0.8, ls="--")
    ax.text(EPS[0], 0.21, "0.2: the tests' bound for the alternating smoother", fontsize=8, color="gray")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("eps in K = diag(1, eps)")
    ax.set_ylabel("residual reduction per V-cycle")
    ax.set_title(f"-div(K grad u) = f, {args.n}$^2$ points, V(2,2), {args.precision}", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    ax.grid(True, which="major", alpha=0.3)
    fig.text(0.01, 0.01, f"{cpu_model()}; recur: {where}", fontsize=6, color="gray")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(args.out, dpi=120)
    print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
