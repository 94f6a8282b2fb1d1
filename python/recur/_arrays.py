"""Arrays of NumPy, CuPy, PyTorch and JAX as recur's extension takes them.

Each framework has a small backend here: where an array lives, the stream
its work is ordered on, and how to allocate, copy and rearrange arrays of
that framework, so that results come back as the caller's array type on the
caller's device. The extension (recur._recur) reads every array in place
through the buffer protocol or DLPack and turns its strides into a layout;
this module only prepares what no layout describes (see conform).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _recur

__all__ = ["backend_of", "resolve_stream"]

_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _bfloat16():
    """NumPy's name for bfloat16: ml_dtypes' dtype (JAX's) where installed,
    else a 2-byte stand-in that only this module's backends interpret."""
    try:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return np.dtype([("bfloat16", np.uint16)])


BFLOAT16 = _bfloat16()
# The 16-bit storage types linrec takes (computed in float32).
_LOW = (np.dtype(np.float16), BFLOAT16)


def _mod(name):
    """The framework's module when the caller has imported it, else None."""
    return sys.modules.get(name)


class _NumPy:
    name = "numpy"
    gpu = False

    def owns(self, x):
        return isinstance(x, np.ndarray)

    def plain(self, x):
        """True when x is a plain array (see plain_backend)."""
        return type(x) is np.ndarray and x.dtype in _REAL and x.flags.c_contiguous and x.ndim > 0

    def empty_plain(self, x):
        """An array like the plain array x (same shape, dtype, device,
        C-contiguous)."""
        return np.empty(x.shape, x.dtype)

    def export_plain(self, x):
        """export(x) of a plain array x, without export's checks."""
        return x

    def dtype(self, x):
        return np.dtype(x.dtype)

    def astype(self, x, dtype):
        return np.asarray(x).astype(dtype, copy=False)

    def asarray(self, v, dtype, like):
        return np.asarray(v, dtype=dtype)

    def empty(self, shape, dtype, like):
        return np.empty(shape, dtype=dtype)

    def empty_like(self, x, dtype=None):
        # order='K': the same strides as a dense x, a compact array otherwise.
        return np.empty_like(x, dtype=dtype, order="K")

    def copy_into(self, dst, src):
        np.copyto(dst, src)

    def permute(self, x, axes):
        return np.transpose(x, axes)

    def contiguous(self, x):
        return np.ascontiguousarray(x)

    def broadcast_to(self, x, shape):
        return np.broadcast_to(x, shape)

    def strides(self, x):
        """A tuple of positive integers and x's strides that determines its
        strides in elements (here the strides in bytes, then the element
        size), or None where the framework does not expose them
        (same_layout then asks the extension)."""
        return x.strides + (x.itemsize,)

    def export(self, x):
        """x as the extension takes it (the array itself, or a DLPack capsule
        where that is cheaper to import)."""
        return x

    def gpu_of(self, x):
        return False

    def stream(self, x, stream):
        return None

    def to_host(self, x):
        return np.asarray(x)

    def finish(self, out, stream):
        return out

    def any_nonzero(self, x):
        return bool(np.any(x))

    def integer_compute_dtype(self):
        """The dtype integer samples compute in (scipy's float64)."""
        return np.dtype(np.float64)


class _Torch(_NumPy):
    name = "torch"

    def __init__(self, torch):
        self.t = torch
        self._dtypes, self._tdtypes = {}, {}  # torch dtype -> NumPy's, and back
        # What export and stream call per array: PyTorch's C functions
        # behind Tensor.__dlpack__ and torch.cuda.current_stream, without
        # their Python wrappers (None where this PyTorch lacks them).
        self._to_dlpack = getattr(torch._C, "_to_dlpack", None)
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self._get_device = getattr(torch._C, "_cuda_getDevice", None)
        self._real = (torch.float32, torch.float64)

    def owns(self, x):
        return isinstance(x, self.t.Tensor)

    def _current_device(self):
        return self._get_device() if self._get_device is not None else self.t.cuda.current_device()

    def plain(self, x):
        # Not a subclass (a tracer's FakeTensor, a Parameter), no grad, strided.
        return (
            type(x) is self.t.Tensor
            and x.dtype in self._real
            and not x.requires_grad
            and x.layout is self.t.strided
            and x.ndim > 0
            and x.is_contiguous()
            and self._to_dlpack is not None
            and (not x.is_cuda or x.get_device() == self._current_device())
        )

    def empty_plain(self, x):
        return self.t.empty_like(x)

    def export_plain(self, x):
        return self._to_dlpack(x)

    def dtype(self, x):
        dt = self._dtypes.get(x.dtype)
        if dt is None:
            if x.dtype == self.t.bfloat16:
                dt = BFLOAT16
            else:
                try:
                    dt = np.dtype(str(x.dtype).replace("torch.", ""))
                except TypeError:
                    dt = np.dtype("V")  # no NumPy equivalent: not computable
            self._dtypes[x.dtype] = dt
        return dt

    def _tdtype(self, dtype):
        td = self._tdtypes.get(dtype)
        if td is None:
            td = self.t.bfloat16 if np.dtype(dtype) == BFLOAT16 else getattr(self.t, np.dtype(dtype).name)
            self._tdtypes[dtype] = td
        return td

    def astype(self, x, dtype):
        return x.detach().to(self._tdtype(dtype))

    def asarray(self, v, dtype, like):
        return self.t.as_tensor(np.asarray(v), dtype=self._tdtype(dtype), device=like.device)

    def empty(self, shape, dtype, like):
        return self.t.empty(tuple(shape), dtype=self._tdtype(dtype), device=like.device)

    def empty_like(self, x, dtype=None):
        # preserve_format: the same strides as a dense x, contiguous otherwise.
        return self.t.empty_like(x, dtype=self._tdtype(dtype) if dtype is not None else None)

    def copy_into(self, dst, src):
        dst.copy_(src)

    def permute(self, x, axes):
        return x.permute(tuple(axes))  # a tuple: permute() of no axes (a 0-d tensor) takes ()

    def contiguous(self, x):
        return x.contiguous()

    def broadcast_to(self, x, shape):
        return x.expand(tuple(shape))  # a tuple: expand() of no sizes (a 0-d result) takes ()

    def strides(self, x):
        return x.stride()

    def export(self, x):
        # A DLPack capsule from _to_dlpack, the C function behind the Python
        # method Tensor.__dlpack__, which first checks: no grad, no conjugate
        # bit (recur takes real dtypes only), a strided layout and, on the
        # GPU, the current device. A tensor failing a check goes to the
        # extension as it is, whose __dlpack__ call then raises as it always
        # did. Without a stream argument __dlpack__ synchronises nothing,
        # and neither does this.
        if self._to_dlpack is None or x.layout is not self.t.strided or x.requires_grad:
            return x
        if x.is_cuda and x.get_device() != self._current_device():
            return x
        return self._to_dlpack(x)

    def gpu_of(self, x):
        return x.device.type == "cuda"

    def stream(self, x, stream):
        if not x.is_cuda:
            return None
        if stream is not None:
            return resolve_stream(stream)
        if self._raw_stream is not None:
            return self._raw_stream(x.device.index)
        return self.t.cuda.current_stream(x.device).cuda_stream

    def to_host(self, x):
        return x.detach().cpu().numpy()

    def any_nonzero(self, x):
        return bool(x.any())


class _CuPy(_NumPy):
    name = "cupy"

    def __init__(self, cp):
        self.cp = cp

    def owns(self, x):
        return isinstance(x, self.cp.ndarray)

    def plain(self, x):
        # On the current device: where empty_like allocates without a device context.
        return (
            type(x) is self.cp.ndarray
            and x.dtype in _REAL
            and x.flags.c_contiguous
            and x.ndim > 0
            and x.device.id == self.cp.cuda.runtime.getDevice()
        )

    def empty_plain(self, x):
        return self.cp.ndarray(x.shape, x.dtype)  # on the current device, x's

    def export_plain(self, x):
        # A DLPack capsule without the stream synchronisation __dlpack__()
        # does for a consumer on the legacy stream (what the extension's own
        # call would ask for): the call runs on CuPy's current stream, the
        # producer's, so stream=-1 (no synchronisation, DLPack's protocol).
        try:
            return x.__dlpack__(stream=-1)
        except (TypeError, ValueError, BufferError):
            return x

    def astype(self, x, dtype):
        return x.astype(dtype, copy=False)

    def asarray(self, v, dtype, like):
        with like.device:
            return self.cp.asarray(np.asarray(v), dtype=dtype)

    def empty(self, shape, dtype, like):
        with like.device:
            return self.cp.empty(shape, dtype=dtype)

    def empty_like(self, x, dtype=None):
        with x.device:
            return self.cp.empty_like(x, dtype=dtype, order="K")

    def copy_into(self, dst, src):
        dst[...] = src

    def permute(self, x, axes):
        return self.cp.transpose(x, axes)

    def contiguous(self, x):
        return self.cp.ascontiguousarray(x)

    def broadcast_to(self, x, shape):
        return self.cp.broadcast_to(x, shape)

    def gpu_of(self, x):
        return True

    def stream(self, x, stream):
        if stream is not None:
            return resolve_stream(stream)
        return self.cp.cuda.get_current_stream().ptr

    def to_host(self, x):
        return self.cp.asnumpy(x)

    def any_nonzero(self, x):
        return bool(x.any())


class _Jax(_NumPy):
    """JAX arrays, eagerly: inputs are read in place once ready, outputs are
    fresh JAX arrays written in place (nothing else holds them) and handed
    back after the work has finished. Under jax.jit recur is not callable
    (doc/python.md)."""

    name = "jax"

    def __init__(self, jax):
        self.jax = jax
        self.jnp = jax.numpy

    def owns(self, x):
        return isinstance(x, self.jax.Array)

    def plain(self, x):
        return False  # inputs wait until ready, outputs are written once allocated: see the class

    def _check_concrete(self, x):
        tracer = getattr(getattr(self.jax, "core", None), "Tracer", ())
        if isinstance(x, tracer):
            raise TypeError(
                "recur: JAX arrays are supported eagerly only; recur cannot be called under "
                "jax.jit, vmap or grad (doc/python.md)"
            )

    def astype(self, x, dtype):
        self._check_concrete(x)
        return x.astype(dtype)

    def _device(self, like):
        return next(iter(like.devices()))

    def asarray(self, v, dtype, like):
        return self.jax.device_put(np.asarray(v, dtype=dtype), self._device(like))

    def empty(self, shape, dtype, like):
        return self.jnp.zeros(shape, dtype=dtype, device=self._device(like)).block_until_ready()

    def empty_like(self, x, dtype=None):
        self._check_concrete(x)
        x.block_until_ready()
        return self.empty(x.shape, dtype if dtype is not None else x.dtype, x)

    def copy_into(self, dst, src):
        raise AssertionError("JAX arrays are always compact: nothing to conform")

    def permute(self, x, axes):
        return self.jnp.transpose(x, axes)

    def contiguous(self, x):
        return x

    def broadcast_to(self, x, shape):
        return self.jnp.broadcast_to(x, shape)

    def strides(self, x):
        return None

    def gpu_of(self, x):
        return self._device(x).platform == "gpu"

    def stream(self, x, stream):
        if not self.gpu_of(x):
            return None
        # JAX does not expose its streams: the work runs on the given stream
        # (or the legacy default stream) and is waited for in finish.
        return resolve_stream(stream) if stream is not None else 0

    def to_host(self, x):
        return np.asarray(x)

    def finish(self, out, stream):
        if stream is not None:
            _recur.synchronize(stream)
        return out

    def any_nonzero(self, x):
        return bool(self.jnp.any(x))

    def integer_compute_dtype(self):
        # float32 unless jax_enable_x64: JAX holds no float64 arrays without it.
        return np.dtype(self.jax.dtypes.canonicalize_dtype(np.float64))


_NUMPY = _NumPy()
# The backend of each type seen (isinstance against the frameworks' array
# types depends on the type alone), and of each framework.
_BY_TYPE = {np.ndarray: _NUMPY}
_FRAMEWORKS = {}


def backend_of(x):
    """The backend of an array (NumPy for anything else array-like)."""
    be = _BY_TYPE.get(type(x))
    if be is None:
        be = _NUMPY
        for name, cls, attr in (("torch", _Torch, "Tensor"), ("cupy", _CuPy, "ndarray"), ("jax", _Jax, "Array")):
            mod = _mod(name)
            if mod is not None and isinstance(x, getattr(mod, attr, ())):
                be = _FRAMEWORKS.get(name)
                if be is None:
                    be = _FRAMEWORKS[name] = cls(mod)
                break
        _BY_TYPE[type(x)] = be
    return be


def plain_backend(x):
    """x's backend when x is a plain array, else None: a NumPy array, CuPy
    array or PyTorch tensor (not a subclass), C-contiguous, float32 or
    float64, of at least one dimension, needing no grad and on the GPU on
    the current device. Arrays of one such type, shape and dtype need none
    of the preparation below (the output is allocated like them, the
    extension reads them in place, nothing is converted or conformed): the
    calls' fast paths take them straight to the extension, on the current
    stream."""
    be = _BY_TYPE.get(type(x))
    if be is None:
        be = backend_of(x)
    return be if be.plain(x) else None


def wants_grad(*arrays):
    """True when an argument is a PyTorch tensor that requires grad and
    PyTorch is recording gradients: the public functions then take
    recur.torch's differentiable path. Only such a tensor has
    requires_grad set, so torch is imported only when one is given."""
    for v in arrays:
        if getattr(v, "requires_grad", False):
            import torch

            return torch.is_grad_enabled()
    return False


def resolve_stream(stream):
    """A CUDA stream handle (int) from an int, a torch.cuda.Stream, a
    cupy.cuda.Stream or any object with __cuda_stream__."""
    if isinstance(stream, (int, np.integer)):
        return int(stream)
    if hasattr(stream, "__cuda_stream__"):
        v = stream.__cuda_stream__()
        return int(v[1] if isinstance(v, tuple) else v)
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(
        f"recur: stream must be an int, torch.cuda.Stream, cupy.cuda.Stream or have __cuda_stream__, "
        f"not {type(stream).__name__}"
    )


def real_dtype(fn, be, x, name="x", low=False):
    """The dtype recur computes x in: float32 and float64 as they are,
    integers and bool as float64 (as scipy does; JAX without
    jax_enable_x64: float32, its widest); with ``low`` (linrec) also float16
    and bfloat16, kept as the storage type; anything else a TypeError."""
    dt = be.dtype(x)
    if dt in _REAL or (low and dt in _LOW):
        return dt
    if dt.kind in "biu":
        return be.integer_compute_dtype()
    also = " (linrec also float16 and bfloat16)" if low else ""
    raise TypeError(f"{fn}: {name} has dtype {getattr(x, 'dtype', dt)}; recur computes in float32 or float64{also}")


def common_dtype(dtypes):
    """The dtype of a call on arrays of these dtypes: the widest, and float32
    for float16 with bfloat16 (neither holds the other)."""
    dtypes = list(dtypes)
    if all(d == dtypes[0] for d in dtypes):
        return dtypes[0]
    if all(d in _LOW for d in dtypes):
        return np.dtype(np.float32)
    return max(dtypes, key=lambda d: d.itemsize)


def host_coefficients(fn, name, v, dtype, ndim=1):
    """Coefficients as a contiguous host NumPy array of dtype (recur reads
    them on the host: device arrays are copied to the host, which waits)."""
    if type(v) is np.ndarray and v.dtype == dtype and v.ndim == ndim and v.flags.c_contiguous:
        return v  # what the conversions below return for such an array
    if (type(v) is list or type(v) is tuple) and dtype.kind == "f":
        # Python numbers (anything else takes the checks below).
        try:
            arr = np.array(v, dtype=dtype)
        except (TypeError, ValueError):
            arr = None
        if arr is not None and arr.ndim == ndim and ndim > 0:
            return arr
    be = backend_of(v)
    arr = np.ascontiguousarray(be.to_host(v) if be is not _NUMPY else np.asarray(v))
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{fn}: {name} has dtype {arr.dtype}; expected real numbers")
    if np.dtype(dtype).kind == "i" and arr.dtype.kind == "f" and arr.size:
        raise TypeError(f"{fn}: {name} has dtype {arr.dtype}; integer samples take integer coefficients (int64)")
    arr = arr.astype(dtype, copy=False)
    if ndim == 1:
        arr = np.atleast_1d(arr)
    if arr.ndim != ndim:
        raise ValueError(f"{fn}: {name} must be {ndim}-D, not {arr.ndim}-D")
    return arr


def prepare_input(fn, be, x, dtype, name="x"):
    """x in dtype, on its device (a conversion copies once)."""
    if be.dtype(x) != dtype:
        x = be.astype(x, dtype)
    elif be.name == "torch" and x.requires_grad:
        x = x.detach()
    if be.name == "jax":
        be._check_concrete(x)
        x.block_until_ready()
    return x


def same_layout(be, a, b, axis):
    """True when one layout describes both a and b along axis (arrays of
    backend be). Arrays of one shape and the same positive strides have the
    same layout (the extension's batch_layout is a function of shape and
    strides, and describes every such array); others are compared by the
    extension."""
    if a is b:
        return _recur.batch_layout(be.export(a), axis) is not None
    if a.shape == b.shape:
        sa = be.strides(a)
        if sa is not None and sa == be.strides(b) and min(sa, default=1) > 0:
            return True
    la = _recur.batch_layout(be.export(a), axis)
    return la is not None and la == _recur.batch_layout(be.export(b), axis)


def batch_axes(be, a, axis):
    """The axes of a that number its sequences, outer to inner (the
    extension's batch_layout)."""
    return _recur.batch_layout(be.export(a), axis)[4]


def conform(be, a, ref, axis):
    """a laid out like ref: a itself when one layout describes both, else a
    copy of a into an array allocated like ref (the one copy an input with
    strides that no layout describes, or unlike its output's, costs)."""
    if same_layout(be, a, ref, axis):
        return a
    out = be.empty_like(ref, be.dtype(a))
    be.copy_into(out, a)
    return out


def output_for(be, x, dtype, axis):
    """The output array of a call on x (same shape, dtype, device), and the
    input to pass with it: x itself when both share one layout, else the
    output holding a copy of x (the call then runs in place)."""
    y = be.empty_like(x, dtype)
    if same_layout(be, x, y, axis):
        return x, y
    be.copy_into(y, x)
    return y, y


def state_order(ndim, axis, batch_axes, batch_pos, state_pos):
    """The permutation of a state array that puts its batch axes in the
    order the layout numbers the sequences (batch_axes: axes of x, outer to
    inner), then the state axes (state_pos, in recur's order). batch_pos maps
    an axis of x to its position in the state array."""
    first = [batch_pos(j) for j in batch_axes]
    rest = [batch_pos(j) for j in range(ndim) if j != axis and batch_pos(j) not in first]
    return first + rest + list(state_pos)


def state_in(fn, be, z, shape, order, dtype, like, name):
    """A state argument (scipy's shape `shape`, broadcast as scipy does) as a
    contiguous array in recur's order."""
    zb = z if backend_of(z).name == be.name else be.asarray(backend_of(z).to_host(z), dtype, like)
    zb = prepare_input(fn, be, zb, dtype, name)
    try:
        zb = be.broadcast_to(zb, tuple(shape))
    except (ValueError, RuntimeError) as e:
        raise ValueError(
            f"{fn}: {name} has shape {tuple(getattr(z, 'shape', ()))}, expected {tuple(shape)}"
        ) from e
    return be.contiguous(be.permute(zb, order))


def state_out(be, shape, order, dtype, like):
    """An output state array in recur's order for scipy's shape `shape`,
    and the function that turns it back into that shape."""
    perm_shape = [shape[o] for o in order]
    zc = be.empty(perm_shape, dtype, like)
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return zc, (lambda z: be.permute(z, inverse))
