"""The few array operations the examples need that NumPy, CuPy and PyTorch
spell differently; the rest (slicing, arithmetic, in-place updates) is
common to the three.

    xp = arrays.select("auto")   # CuPy on a GPU, else PyTorch on a GPU, else NumPy
    u = xp.zeros((4, 5), "float64")
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np


def _like_numpy(xp, to_numpy, synchronize):
    """NumPy or CuPy (the same calls)."""
    return SimpleNamespace(
        name=xp.__name__,
        zeros=lambda shape, t: xp.zeros(shape, dtype=t),
        from_numpy=lambda a, t: xp.asarray(a, dtype=t),
        cast=lambda a, t: a.astype(t),
        to_numpy=to_numpy,
        roll=xp.roll,
        synchronize=synchronize,
    )


def _numpy():
    return _like_numpy(np, np.asarray, lambda: None)


def _cupy():
    import cupy as cp

    if cp.cuda.runtime.getDeviceCount() == 0:
        raise RuntimeError("no CUDA device")
    return _like_numpy(cp, cp.asnumpy, lambda: cp.cuda.get_current_stream().synchronize())


def _torch():
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    types = {"float64": torch.float64, "float32": torch.float32}
    return SimpleNamespace(
        name="torch",
        zeros=lambda shape, t: torch.zeros(shape, dtype=types[t], device="cuda"),
        from_numpy=lambda a, t: torch.as_tensor(a, dtype=types[t], device="cuda"),
        cast=lambda a, t: a.to(types[t]),
        to_numpy=lambda a: a.cpu().numpy(),
        roll=lambda a, shift, axis: torch.roll(a, shift, axis),
        synchronize=torch.cuda.synchronize,
    )


def select(name):
    """'numpy', 'cupy', 'torch', or 'auto': CuPy, else PyTorch, on a GPU
    when recur has its CUDA backend and one is present; else NumPy."""
    makers = {"numpy": _numpy, "cupy": _cupy, "torch": _torch}
    if name != "auto":
        return makers[name]()
    import recur

    if recur.cuda_available():
        for make in (_cupy, _torch):
            try:
                return make()
            except (ImportError, RuntimeError):
                pass
    return _numpy()
