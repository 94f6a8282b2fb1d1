"""recur.distributed across processes: dist_worker.py run as 1 to 4 ranks,
with torch.distributed's Gloo backend (PyTorch tensors on the CPU, with
autograd) and with mpi4py under mpirun (NumPy arrays); each configuration
skipped where its framework (or mpirun) is missing. And the single-process
pieces: recur.linrec_summary against recur.linrec."""

import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

import recur

WORKER = os.path.join(os.path.dirname(__file__), "dist_worker.py")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_torch_gloo(ranks):
    pytest.importorskip("torch")
    port = str(_free_port())
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                   OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, WORKER, "torch"], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), "\n".join(outs)


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_mpi4py(ranks):
    pytest.importorskip("mpi4py")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    oversubscribe = ["--oversubscribe"] if "Open MPI" in subprocess.run(
        [mpirun, "--version"], capture_output=True, text=True).stdout else []
    r = subprocess.run([mpirun, "-np", str(ranks), *oversubscribe, sys.executable, WORKER, "mpi"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_summary_folds_like_linrec(reverse, dtype):
    rng = np.random.default_rng(5)
    s = rng.uniform(-0.99, 0.99, (3, 4097)).astype(dtype)
    t = rng.uniform(-1, 1, (3, 4097)).astype(dtype)
    a, b = recur.linrec_summary(s, t, reverse=reverse)
    _, final0 = recur.linrec(s, t, reverse=reverse, return_final=True)
    _, final1 = recur.linrec(s, t, init=1.0, reverse=reverse, return_final=True)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(b, final0, rtol=tol, atol=tol)
    np.testing.assert_allclose(a + b, final1, rtol=tol, atol=tol)
    assert a.shape == (3,) and a.dtype == dtype


def test_summary_axis_and_errors():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 24
    a, b = recur.linrec_summary(x, x, axis=1)
    assert a.shape == (2, 4)
    np.testing.assert_allclose(a, np.prod(x, axis=1))
    with pytest.raises(TypeError):
        recur.linrec_summary(1.0, 2.0)
    with pytest.raises(ValueError):
        recur.linrec_summary(x, x, axis=3)
