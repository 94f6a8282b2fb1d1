from typing import Any, Literal, Optional, Sequence, TypeVar, Union, overload

A = TypeVar("A")  # the caller's array type (numpy.ndarray, torch.Tensor, cupy.ndarray, jax.Array)
Coefficients = Union[Sequence[float], Any]
Stream = Union[int, Any, None]
PadType = Optional[Literal["odd", "even", "constant"]]

@overload
def lfilter(b: Coefficients, a: Coefficients, x: A, axis: int = -1, zi: None = None, *, stream: Stream = None, threads: int = 0) -> A: ...
@overload
def lfilter(b: Coefficients, a: Coefficients, x: A, axis: int = -1, zi: Any = ..., *, stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
@overload
def sosfilt(sos: Coefficients, x: A, axis: int = -1, zi: None = None, *, stream: Stream = None, threads: int = 0) -> A: ...
@overload
def sosfilt(sos: Coefficients, x: A, axis: int = -1, zi: Any = ..., *, stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
def lfilter_zi(b: Coefficients, a: Coefficients) -> Any: ...
def lfiltic(b: Coefficients, a: Coefficients, y: Coefficients, x: Optional[Coefficients] = None) -> Any: ...
def sosfilt_zi(sos: Coefficients) -> Any: ...
def filtfilt(
    b: Coefficients,
    a: Coefficients,
    x: A,
    axis: int = -1,
    padtype: PadType = "odd",
    padlen: Optional[int] = None,
    method: Literal["pad"] = "pad",
    irlen: None = None,
    *,
    stream: Stream = None,
    threads: int = 0,
) -> A: ...
def sosfiltfilt(
    sos: Coefficients, x: A, axis: int = -1, padtype: PadType = "odd", padlen: Optional[int] = None, *, stream: Stream = None, threads: int = 0
) -> A: ...
