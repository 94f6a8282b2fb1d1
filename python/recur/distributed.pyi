from typing import Any, Literal, Optional, TypeVar, Union, overload

A = TypeVar("A")  # the caller's array type
Group = Any  # a torch.distributed ProcessGroup, None (the default group), or an mpi4py communicator

@overload
def linrec(s: Union[A, float], t: Union[A, float], *, group: Group = None, axis: int = -1, reverse: bool = False, init: Optional[Union[A, float]] = None, return_final: Literal[False] = False) -> A: ...
@overload
def linrec(s: Union[A, float], t: Union[A, float], *, group: Group = None, axis: int = -1, reverse: bool = False, init: Optional[Union[A, float]] = None, return_final: Literal[True]) -> tuple[A, A]: ...
