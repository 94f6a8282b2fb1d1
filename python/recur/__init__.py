"""recur: recurrences, IIR filters and batched tridiagonal solvers on the CPU
and the GPU, from NumPy, CuPy, PyTorch and JAX arrays.

- ``recur.linrec``: first-order linear recurrences w_i = s_i w_{i-1} + t_i.
- ``recur.signal``: scipy.signal's lfilter, lfilter_zi, lfiltic, sosfilt,
  sosfilt_zi, filtfilt and sosfiltfilt.
- ``recur.linalg``: solve_banded for tridiagonal systems (scipy.linalg's
  call) and solve_tridiagonal for batches.
- ``recur.dpcm``: DPCM encode and decode (lossless for integer samples).
- ``recur.torch``: the PyTorch custom ops with their backward passes.

NumPy arrays run on the CPU backend; GPU arrays run on the GPU on the
caller's current stream (doc/python.md has the interop and stream rules).
"""

from . import _recur
from ._linrec import linrec
from . import dpcm, linalg, signal

__version__ = _recur.__version__

__all__ = ["linrec", "signal", "linalg", "dpcm", "cuda_available", "__version__"]


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a device is usable."""
    return _recur.cuda_compiled() and _recur.cuda_device_count() > 0
