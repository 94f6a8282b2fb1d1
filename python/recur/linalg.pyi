from typing import Any, Literal, Sequence, TypeVar, Union, overload

A = TypeVar("A")  # the caller's array type
Stream = Union[int, Any, None]
Algorithm = Literal["auto", "thomas", "cr", "pcr", "rd", "cr_pcr", "cr_rd", "cr_packed", "pscheme", "thomas_pcr", "cr_split"]

@overload
def solve_tridiagonal(dl: A, d: A, du: A, b: A, *, axis: int = -1, algorithm: Algorithm = "auto", return_info: Literal[False] = False, stream: Stream = None, threads: int = 0) -> A: ...
@overload
def solve_tridiagonal(dl: A, d: A, du: A, b: A, *, axis: int = -1, algorithm: Algorithm = "auto", return_info: Literal[True], stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
def solve_banded(l_and_u: Sequence[int], ab: A, b: A, overwrite_ab: bool = False, overwrite_b: bool = False, check_finite: bool = True, *, stream: Stream = None, threads: int = 0) -> A: ...
