"""The outcome of an operation that reports failure as a value instead of raising."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from .arguments import require

__all__ = ["OperationError", "OperationResult"]


# Frozen dataclasses: read-only fields; an error equals another wrapping the same exception (exceptions
# compare by identity), and hashes as it does.
@dataclass(frozen=True, slots=True, repr=False)
class OperationError:
    """One error of a failed operation, wrapping the exception that caused it."""

    exception: BaseException

    def __post_init__(self) -> None:
        require(self.exception, "exception")
        if not isinstance(self.exception, BaseException):
            raise TypeError("exception must be an exception instance")

    @property
    def message(self) -> str:
        return str(self.exception) or type(self.exception).__name__

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"OperationError({type(self.exception).__name__}: {self.message!r})"


@dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class OperationResult:
    """``OperationResult.success()`` or ``OperationResult.failed(*errors)``.

    Successful results are one shared, immutable instance.
    """

    succeeded: bool
    errors: tuple[OperationError, ...] = ()

    _SUCCESS: ClassVar[OperationResult]

    def __init__(self, succeeded: bool, errors: Sequence[OperationError] = ()) -> None:
        object.__setattr__(self, "succeeded", succeeded)
        object.__setattr__(self, "errors", tuple(errors))  # a list given stays the caller's

    @classmethod
    def success(cls) -> OperationResult:
        return cls._SUCCESS

    @classmethod
    def failed(cls, *errors: OperationError | BaseException) -> OperationResult:
        wrapped = tuple(e if isinstance(e, OperationError) else OperationError(e) for e in errors)
        return cls(False, wrapped)

    def __bool__(self) -> bool:
        return self.succeeded

    def __str__(self) -> str:
        if self.succeeded:
            return "Succeeded"
        return "Failed : " + ", ".join(e.message for e in self.errors)

    def __repr__(self) -> str:
        return f"OperationResult({self})"


OperationResult._SUCCESS = OperationResult(True)
