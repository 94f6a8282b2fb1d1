"""recur: recurrences, IIR filters and batched tridiagonal solvers on the CPU
and the GPU, from NumPy, CuPy, PyTorch and JAX arrays.

- ``recur.linrec``: first-order linear recurrences w_i = s_i w_{i-1} + t_i.
- ``recur.signal``: scipy.signal's lfilter, lfilter_zi, lfiltic, sosfilt,
  sosfilt_zi, filtfilt and sosfiltfilt.
- ``recur.linalg``: solve_banded for tridiagonal systems (scipy.linalg's
  call) and solve_tridiagonal for batches.
- ``recur.dpcm``: DPCM encode and decode (lossless for integer samples).
- ``recur.torch``: linrec, lfilter, sosfilt and solve_tridiagonal,
  differentiable for PyTorch tensors.
- ``recur.distributed``: linrec split along its length across processes
  (torch.distributed process groups, mpi4py communicators); imported on
  its own (``import recur.distributed``).

NumPy arrays run on the CPU backend; GPU arrays run on the GPU on the
caller's current stream (doc/python.md has the interop and stream rules).

The modules in layers, top first; each imports only modules of the layers
below it (tests/test_layers.py checks this against _LAYERS):

    distributed                     calls split across processes: the
                                    functions below, and a collective
    _dist_lti                       the filters split across processes
    signal, linalg, dpcm, _linrec   the scipy-named functions: options checked,
                                    the plain-array fast path, a tensor that
                                    needs gradients sent to recur.torch,
                                    every other call to the layer of C++ calls
                                    (dpcm and the filters' steady states, with
                                    no gradient path, call _arrays and _recur);
    _dist_common                    and the groups of the split calls
    torch                           the differentiable functions: recur's
                                    arguments turned into the custom ops'
    _autograd                       the custom ops (torch.library) and their
                                    backward passes
    _call_linrec, _call_signal,     the C++ calls: arrays of one framework
    _call_tridiag                   prepared (dtype, layout, outputs, states)
                                    and the extension called
    _arrays                         the array backends (NumPy, CuPy, PyTorch,
                                    JAX): devices, streams, allocation, layouts
    _recur                          the nanobind extension (python/src/)

torch and _autograd import PyTorch: the layers above import them only
inside the functions that need them, when a tensor requires grad.
"""

from . import _recur
from ._linrec import linrec, linrec_summary
from . import dpcm, linalg, signal

__version__ = _recur.__version__

__all__ = ["linrec", "linrec_summary", "signal", "linalg", "dpcm", "cuda_available", "__version__"]

# The layers of the docstring, top first.
_LAYERS = (
    ("distributed",),
    ("_dist_lti",),
    ("signal", "linalg", "dpcm", "_linrec", "_dist_common"),
    ("torch",),
    ("_autograd",),
    ("_call_linrec", "_call_signal", "_call_tridiag"),
    ("_arrays",),
    ("_recur",),
)


def cuda_available() -> bool:
    """True when this build has the CUDA backend and a device is usable."""
    return _recur.cuda_compiled() and _recur.cuda_device_count() > 0
