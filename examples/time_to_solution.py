#!/usr/bin/env python3
"""Time to solution of `recur poisson`: double against mixed precision, per device.

For each grid size, device and precision, runs `recur poisson` (alternating
line smoother, eps = 1e-3 by default) to the residual --tol and reads its
last lines: the V-cycles, the seconds of the iteration (without setup and
the copies to and from the device) and the error against the exact
solution. Prints a markdown table and, unless --out is empty, plots seconds
against unknowns (needs matplotlib).

    examples/time_to_solution.py --recur build/tools/recur --devices cpu,gpu \\
        --sizes 513,1025,2049,4097 --out doc/img/multigrid-time.png
"""
import argparse
import re
import subprocess
import sys

DONE = re.compile(r"\b(\d+) V-cycles(?: \((\d+) outer steps\))?, residual (\S+), (\S+) s")
ERROR = re.compile(r"max \|u - u_exact\| = (\S+)")


def solve(args, n, device, precision):
    cmd = [args.recur, "poisson", "--n", str(n), "--eps", args.eps, "--smoother", args.smoother,
           "--precision", precision, "--tol", args.tol, "--device", device, *args.recur_args.split()]
    best = None
    for _ in range(args.repeat):
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode not in (0, 3):
            sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
        done, error = DONE.search(run.stdout), ERROR.search(run.stdout)
        if not done or not error:
            sys.exit(f"{' '.join(cmd)}: unexpected output:\n{run.stdout}")
        r = {"cycles": int(done.group(1)), "outer": int(done.group(2) or 0), "residual": float(done.group(3)),
             "seconds": float(done.group(4)), "error": float(error.group(1)), "converged": run.returncode == 0,
             "where": run.stdout.splitlines()[1].strip()}
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recur", default="build/tools/recur", help="the recur program")
    ap.add_argument("--devices", default="cpu", help="comma-separated: cpu, gpu")
    ap.add_argument("--sizes", default="129,257,513", help="points per side, comma-separated")
    ap.add_argument("--eps", default="1e-3")
    ap.add_argument("--smoother", default="alternating")
    ap.add_argument("--tol", default="1e-9")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest counts")
    ap.add_argument("--recur-args", default="", help="more options for every run, given with '=': --recur-args=--cuda-graphs")
    ap.add_argument("--out", default="", help="the PNG to write (empty: none)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    devices = args.devices.split(",")

    results = {}
    for d in devices:
        for n in sizes:
            for p in ("double", "mixed"):
                results[d, n, p] = solve(args, n, d, p)

    extra = f", {args.recur_args}" if args.recur_args else ""
    print(f"recur poisson, eps = {args.eps}, {args.smoother} smoother, tol {args.tol}{extra}; fastest of {args.repeat}")
    for d in devices:
        print(f"- {d}: {results[d, sizes[0], 'double']['where']}")
    print("\n| device | points | double: s (cycles) | mixed: s (cycles, outer) | speedup | error double | error mixed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for d in devices:
        for n in sizes:
            a, b = results[d, n, "double"], results[d, n, "mixed"]
            flag = "" if a["converged"] and b["converged"] else " (not converged)"
            print(f"| {d} | {n}^2 | {a['seconds']:.4f} ({a['cycles']}) | {b['seconds']:.4f} ({b['cycles']}, "
                  f"{b['outer']}) | {a['seconds'] / b['seconds']:.2f}x{flag} | {a['error']:.3e} | {b['error']:.3e} |")

    if not args.out:
        return
    try:
        import matplotlib
    except ImportError:
        sys.exit("matplotlib is not installed: the table above, no plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for d in devices:
        for p, style in (("double", "-o"), ("mixed", "--s")):
            ax.plot([(n - 2) ** 2 for n in sizes], [results[d, n, p]["seconds"] for n in sizes], style,
                    label=f"{d}, {p}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("unknowns")
    ax.set_ylabel(f"seconds to residual {args.tol}")
    ax.set_title(f"recur poisson, eps = {args.eps}, {args.smoother} smoother", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.text(0.01, 0.01, "; ".join(results[d, sizes[0], "double"]["where"] for d in devices), fontsize=6,
             color="gray")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(args.out, dpi=120)
    print(f"\nwritten: {args.out}")


if __name__ == "__main__":
    main()
