from typing import Any, Generic, Literal, NamedTuple, Sequence, TypeVar, Union, overload

A = TypeVar("A")  # the caller's array type
Stream = Union[int, Any, None]
Algorithm = Literal["auto", "thomas", "cr", "pcr", "rd", "cr_pcr", "cr_rd", "cr_packed", "pscheme", "thomas_pcr", "cr_split", "bondeli"]
Pivoting = Literal["auto", "automatic", "none", "partial"]

class TridiagonalDetails(NamedTuple, Generic[A]):
    info: A
    pivoted: A
    refinement_steps: A

@overload
def solve_tridiagonal(dl: A, d: A, du: A, b: A, *, axis: int = -1, algorithm: Algorithm = "auto", pivoting: Pivoting = "auto", periodic: bool = False, refine: bool = False, max_refinement_steps: int = 10, return_info: Literal[False] = False, return_details: Literal[False] = False, stream: Stream = None, threads: int = 0) -> A: ...
@overload
def solve_tridiagonal(dl: A, d: A, du: A, b: A, *, axis: int = -1, algorithm: Algorithm = "auto", pivoting: Pivoting = "auto", periodic: bool = False, refine: bool = False, max_refinement_steps: int = 10, return_info: Literal[True], return_details: Literal[False] = False, stream: Stream = None, threads: int = 0) -> tuple[A, A]: ...
@overload
def solve_tridiagonal(dl: A, d: A, du: A, b: A, *, axis: int = -1, algorithm: Algorithm = "auto", pivoting: Pivoting = "auto", periodic: bool = False, refine: bool = False, max_refinement_steps: int = 10, return_info: Literal[False] = False, return_details: Literal[True], stream: Stream = None, threads: int = 0) -> tuple[A, TridiagonalDetails[A]]: ...
def solve_banded(l_and_u: Sequence[int], ab: A, b: A, overwrite_ab: bool = False, overwrite_b: bool = False, check_finite: bool = True, *, pivoting: Pivoting = "auto", stream: Stream = None, threads: int = 0) -> A: ...
