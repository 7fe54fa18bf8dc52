"""Renamed keyword arguments keep working, with a ``DeprecationWarning``, for one minor release at least."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def renamed_kwargs(**old_to_new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``@renamed_kwargs(tool_options="options")``: a call with ``tool_options=`` is a call with ``options=``.

    Passing both names is a ``TypeError``; the old name warns with ``DeprecationWarning`` at the caller.
    """
    return _renaming(old_to_new, warn=True)


def keyword_aliases(**alias_to_name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``@keyword_aliases(auth="authorization")``: another library's keyword accepted as an equal, silently
    (Microsoft's SDK spells some arguments differently). Passing both names is a ``TypeError``."""
    return _renaming(alias_to_name, warn=False)


def _renaming(old_to_new: dict[str, str], *, warn: bool) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def rename(name: str, kwargs: dict[str, Any]) -> None:
        for old, new in old_to_new.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{name}() got both {old!r} and {new!r}; pass only {new!r}")
                if warn:
                    warnings.warn(
                        f"{name}(): {old!r} is deprecated, use {new!r}", DeprecationWarning, stacklevel=3
                    )
                kwargs[new] = kwargs.pop(old)

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                rename(fn.__name__, kwargs)
                return await fn(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            rename(fn.__name__, kwargs)
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def check_options(options: object, cls: type, argument: str = "options") -> None:
    """A clear ``TypeError`` for an options object of the wrong type (e.g. a dict)."""
    if options is not None and not isinstance(options, cls):
        raise TypeError(f"{argument} must be a {cls.__name__} or None, got {type(options).__name__}")
