from typing import Any, Optional, Sequence, TypeVar, Union

A = TypeVar("A")  # the caller's array type
Stream = Union[int, Any, None]

def encode(x: A, c: Union[Sequence[float], Any], shift: int = 0, *, axis: int = -1, init: Optional[Any] = None, stream: Stream = None, threads: int = 0) -> A: ...
def decode(e: A, c: Union[Sequence[float], Any], shift: int = 0, *, axis: int = -1, init: Optional[Any] = None, stream: Stream = None, threads: int = 0) -> A: ...
