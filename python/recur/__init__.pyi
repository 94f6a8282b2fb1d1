from typing import Any, Literal, Optional, TypeVar, Union, overload

from . import dpcm as dpcm, linalg as linalg, signal as signal

A = TypeVar("A")  # the caller's array type
Stream = Union[int, Any, None]
__version__: str

@overload
def linrec(s: Union[A, float], t: Union[A, float], *, axis: int = -1, reverse: bool = False, init: Optional[Union[A, float]] = None, return_final: Literal[False] = False, stream: Stream = None, threads: int = 0) -> A: ...
@overload
def linrec(s: Union[A, float], t: Union[A, float], *, axis: int = -1, reverse: bool = False, init: Optional[Union[A, float]] = None, return_final: Literal[True], stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
def linrec_summary(s: Union[A, float], t: Union[A, float], *, axis: int = -1, reverse: bool = False, stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
def cuda_available() -> bool: ...
