"""The Python examples (examples/python/) run at a tiny size and print what
doc/applications.md says: the multigrid script converges in double and in
mixed precision to the same discretisation error, with the same residual
history; the ADI script follows the scheme's factor g^step to rounding. On
NumPy arrays (the CPU); a GPU run with CuPy or PyTorch is the scripts' own
--arrays choice."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def run(script, *args):
    cmd = [sys.executable, str(EXAMPLES / script), "--arrays", "numpy", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy(), timeout=300)
    assert done.returncode == 0, f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def residuals(out):
    return [float(r) for r in re.findall(r"residual (\S+)", out)]


def test_multigrid_double_and_mixed():
    error = {}
    history = {}
    for precision in ("double", "mixed"):
        out = run("multigrid.py", "--n", "33", "--eps", "1e-3", "--precision", precision, "--tol", "1e-9")
        error[precision] = float(re.search(r"max \|u - u_exact\| = (\S+)", out).group(1))
        history[precision] = residuals(out)
        assert history[precision][-1] <= 1e-9, out
    # The discretisation error of 33 x 33 points at eps = 1e-3 (test_multigrid.cpp: 3.16e-3).
    assert error["double"] == pytest.approx(3.1617e-3, rel=1e-3)
    assert error["mixed"] == pytest.approx(error["double"], rel=1e-6)
    # One float32 V-cycle per outer step reduces the residual as a float64 V-cycle does.
    assert len(history["mixed"]) == len(history["double"])
    for d, m in zip(history["double"], history["mixed"]):
        assert m == pytest.approx(d, rel=0.05)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 1e-5)])
def test_heat_follows_the_scheme(dtype, tol):
    out = run("heat.py", "--nx", "16", "--ny", "9", "--kx", "1", "--ky", "0.5", "--q", "2", "--dt", "1e-2",
              "--steps", "12", "--every", "4", "--dtype", dtype)
    lines = [line for line in out.splitlines() if line.startswith("step")]
    assert len(lines) == 3
    for line in lines:
        amplitude, scheme = (float(re.search(rf"{k} (\S+)", line).group(1)) for k in ("amplitude", "scheme"))
        assert amplitude == pytest.approx(scheme, rel=tol)
    worst = float(re.search(r"relative difference (\S+)", out).group(1))
    assert worst <= tol
