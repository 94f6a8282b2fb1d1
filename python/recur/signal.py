"""IIR filters with scipy.signal's names, arguments, defaults and results.

``lfilter``, ``lfilter_zi``, ``lfiltic``, ``sosfilt``, ``sosfilt_zi``,
``filtfilt`` and ``sosfiltfilt`` take NumPy arrays (run on the CPU, OpenMP)
or CuPy arrays, PyTorch tensors and JAX arrays (run where they live: on the
GPU through DLPack, on the caller's current stream unless ``stream=`` says
otherwise) and return the caller's array type on the caller's device.

Differences from scipy, all deliberate:

- The computation runs in the signal's precision: float32 stays float32
  (scipy promotes to float64 when the coefficients are float64); integer
  signals compute in float64, as in scipy (JAX arrays without
  jax_enable_x64: float32). Complex signals are not supported.
- ``filtfilt`` supports ``method='pad'`` only (``'gust'`` is a ValueError).
- ``lfilter_zi`` rejects a leading zero in ``a`` (scipy strips it).
- Two keyword-only arguments: ``stream`` (a CUDA stream for GPU arrays: an
  int, ``torch.cuda.Stream``, ``cupy.cuda.Stream`` or any object with
  ``__cuda_stream__``) and ``threads`` (CPU threads; 0 lets recur choose).
- With PyTorch tensors that require grad, ``lfilter`` and ``sosfilt`` are
  differentiable (recur.torch); gradients flow through ``y``, not ``zf``.

The scipy-named layer (the package's docstring draws the layers): tensors
that need gradients go to recur.torch, every other filter call to
recur._call_signal; the steady states are computed on the host by the
extension.
"""

from __future__ import annotations

import numpy as np

from . import _call_signal, _recur
from ._arrays import backend_of, host_coefficients, wants_grad

__all__ = ["lfilter", "lfilter_zi", "lfiltic", "sosfilt", "sosfilt_zi", "filtfilt", "sosfiltfilt"]


def lfilter(b, a, x, axis=-1, zi=None, *, stream=None, threads=0):
    """Filter data along one dimension with an IIR or FIR filter
    (scipy.signal.lfilter).

    y[n] = b[0] x[n] + ... + b[M] x[n-M] - a[1] y[n-1] - ... - a[N] y[n-N],
    all divided by a[0], in direct form II transposed, along ``axis`` of
    every sequence of the batch.

    Returns ``y``, or ``(y, zf)`` when ``zi`` is given: ``zi`` and ``zf`` have
    x's shape with ``axis`` replaced by ``max(len(a), len(b)) - 1``.

    >>> import numpy as np, scipy.signal, recur.signal
    >>> b, a = scipy.signal.butter(4, 0.2)
    >>> x = np.random.default_rng(0).standard_normal((3, 1000))
    >>> y = recur.signal.lfilter(b, a, x)
    >>> bool(np.allclose(y, scipy.signal.lfilter(b, a, x)))
    True
    >>> zi = recur.signal.lfilter_zi(b, a) * x[:, :1]
    >>> y, zf = recur.signal.lfilter(b, a, x, zi=zi)
    >>> zf.shape
    (3, 4)
    """
    if wants_grad(b, a, x, zi):
        from . import torch as ops

        return ops.lfilter(b, a, x, axis=axis, zi=zi, stream=stream)
    return _call_signal.lfilter(b, a, x, axis, zi, stream, threads)


def sosfilt(sos, x, axis=-1, zi=None, *, stream=None, threads=0):
    """Filter data along one dimension with cascaded second-order sections
    (scipy.signal.sosfilt).

    ``sos`` has shape (n_sections, 6), rows [b0 b1 b2 a0 a1 a2]. Returns
    ``y``, or ``(y, zf)`` when ``zi`` is given, of shape (n_sections, ...,
    2, ...): x's shape with ``axis`` replaced by 2, behind n_sections.

    >>> import numpy as np, scipy.signal, recur.signal
    >>> sos = scipy.signal.ellip(8, 0.5, 60, 0.1, output="sos")
    >>> x = np.random.default_rng(0).standard_normal(5000)
    >>> bool(np.allclose(recur.signal.sosfilt(sos, x), scipy.signal.sosfilt(sos, x)))
    True
    """
    if wants_grad(sos, x, zi):
        from . import torch as ops

        return ops.sosfilt(sos, x, axis=axis, zi=zi, stream=stream)
    return _call_signal.sosfilt(sos, x, axis, zi, stream, threads)


def _coefficient_dtype(*vs):
    dt = np.result_type(*[np.asarray(backend_of(v).to_host(v)) for v in vs])
    return dt if dt in (np.float32, np.float64) else np.dtype(np.float64)


def lfilter_zi(b, a):
    """The steady state of lfilter for a unit step (scipy.signal.lfilter_zi):
    ``lfilter(b, a, c * ones, zi=c * lfilter_zi(b, a))`` is constant from the
    first sample. A NumPy array of max(len(a), len(b)) - 1 values.

    >>> import numpy as np, recur.signal
    >>> recur.signal.lfilter_zi([0.5, 0.5], [1.0, -0.5])
    array([1.5])
    """
    fn = "recur.signal.lfilter_zi"
    dt = _coefficient_dtype(b, a)
    return np.asarray(_recur.lfilter_zi(host_coefficients(fn, "b", b, dt), host_coefficients(fn, "a", a, dt)), dt)


def lfiltic(b, a, y, x=None):
    """The lfilter state that continues a filtering from past outputs ``y``
    and inputs ``x``, newest first (scipy.signal.lfiltic). Missing values
    are zero. A NumPy array of max(len(a), len(b)) - 1 values.

    >>> import numpy as np, recur.signal
    >>> recur.signal.lfiltic([1.0], [1.0, -0.5], y=[2.0])
    array([1.])
    """
    fn = "recur.signal.lfiltic"
    dt = _coefficient_dtype(b, a, y, *([] if x is None else [x]))
    coeff = [host_coefficients(fn, n, v, dt) for n, v in (("b", b), ("a", a), ("y", y))]
    xs = host_coefficients(fn, "x", [] if x is None else x, dt)
    return np.asarray(_recur.lfiltic(*coeff, xs), dt)


def sosfilt_zi(sos):
    """The steady state of sosfilt for a unit step (scipy.signal.sosfilt_zi):
    a NumPy array of shape (n_sections, 2).

    >>> import scipy.signal, recur.signal
    >>> recur.signal.sosfilt_zi(scipy.signal.butter(4, 0.2, output="sos")).shape
    (2, 2)
    """
    fn = "recur.signal.sosfilt_zi"
    dt = _coefficient_dtype(sos)
    s = host_coefficients(fn, "sos", sos, dt, 2)
    return np.asarray(_recur.sosfilt_zi(s), dt).reshape(s.shape[0], 2)


def filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None, *, stream=None, threads=0):
    """A forward-backward filter: zero phase, the magnitude response squared
    (scipy.signal.filtfilt with method 'pad').

    Each sequence is extended by ``padlen`` samples at both ends (``padtype``
    'odd', 'even', 'constant' or None; ``padlen`` None is 3 * max(len(a),
    len(b))), filtered forward from lfilter_zi scaled by its first value,
    then backward likewise. On the GPU both passes are recur's GPU lfilter
    (orders up to 8).

    >>> import numpy as np, scipy.signal, recur.signal
    >>> b, a = scipy.signal.butter(3, 0.05)
    >>> x = np.cumsum(np.random.default_rng(0).standard_normal(500))
    >>> bool(np.allclose(recur.signal.filtfilt(b, a, x), scipy.signal.filtfilt(b, a, x)))
    True
    """
    fn = "recur.signal.filtfilt"
    if method != "pad":
        raise ValueError(f"{fn}: method {method!r} is not supported (only 'pad')")
    if irlen is not None:
        raise ValueError(f"{fn}: irlen applies to method 'gust', which is not supported")
    coeffs = [("b", b, 1), ("a", a, 1)]
    return _call_signal.forward_backward(fn, "filtfilt", coeffs, x, axis, padtype, padlen, stream, threads)


def sosfiltfilt(sos, x, axis=-1, padtype="odd", padlen=None, *, stream=None, threads=0):
    """A forward-backward filter with cascaded second-order sections
    (scipy.signal.sosfiltfilt): as filtfilt, with padlen None meaning
    3 * (2 n_sections + 1 - the first-order sections, as scipy counts them).

    >>> import numpy as np, scipy.signal, recur.signal
    >>> sos = scipy.signal.cheby1(6, 1, [0.1, 0.3], "bandpass", output="sos")
    >>> x = np.random.default_rng(0).standard_normal((4, 2000))
    >>> bool(np.allclose(recur.signal.sosfiltfilt(sos, x), scipy.signal.sosfiltfilt(sos, x)))
    True
    """
    return _call_signal.forward_backward(
        "recur.signal.sosfiltfilt", "sosfiltfilt", [("sos", sos, 2)], x, axis, padtype, padlen, stream, threads
    )
