"""The outcome of an operation that reports failure as a value instead of raising."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

__all__ = ["OperationError", "OperationResult"]


class OperationError:
    """One error of a failed operation, wrapping the exception that caused it."""

    __slots__ = ("_exception",)

    def __init__(self, exception: BaseException) -> None:
        if exception is None:
            raise ValueError("exception is required")
        if not isinstance(exception, BaseException):
            raise TypeError("exception must be an exception instance")
        self._exception = exception

    @property
    def exception(self) -> BaseException:
        return self._exception

    @property
    def message(self) -> str:
        return str(self._exception) or type(self._exception).__name__

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"OperationError({type(self._exception).__name__}: {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OperationError) and other._exception is self._exception

    def __hash__(self) -> int:
        return id(self._exception)


class OperationResult:
    """``OperationResult.success()`` or ``OperationResult.failed(*errors)``.

    Successful results are one shared, immutable instance.
    """

    __slots__ = ("_errors", "_succeeded")

    _SUCCESS: ClassVar[OperationResult]

    def __init__(self, succeeded: bool, errors: Sequence[OperationError] = ()) -> None:
        self._succeeded: Final = succeeded
        self._errors: Final = tuple(errors)

    @classmethod
    def success(cls) -> OperationResult:
        return cls._SUCCESS

    @classmethod
    def failed(cls, *errors: OperationError | BaseException) -> OperationResult:
        wrapped = tuple(e if isinstance(e, OperationError) else OperationError(e) for e in errors)
        return cls(False, wrapped)

    @property
    def succeeded(self) -> bool:
        return self._succeeded

    @property
    def errors(self) -> tuple[OperationError, ...]:
        return self._errors

    def __bool__(self) -> bool:
        return self._succeeded

    def __str__(self) -> str:
        if self._succeeded:
            return "Succeeded"
        return "Failed : " + ", ".join(e.message for e in self._errors)

    def __repr__(self) -> str:
        return f"OperationResult({self})"


OperationResult._SUCCESS = OperationResult(True)
