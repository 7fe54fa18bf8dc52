"""Settings read from the environment, overridable per instance by values or callables."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Generic, TypeAlias, TypeVar, overload

T = TypeVar("T")

#: A setting override: a fixed value, or a callable evaluated at each access
#: (so one process can serve several tenants).
Override: TypeAlias = T | Callable[[], T]


class Setting(Generic[T]):
    """A descriptor: instance override, then the first set environment variable, then default (a function
    of the configuration instance, such as another setting of it, is called with it at each read)."""

    def __init__(
        self, env: str | tuple[str, ...], default: T | Callable[[Any], T], parse: Callable[[str], T]
    ) -> None:
        self.env = (env,) if isinstance(env, str) else env
        self.default = default
        self.parse = parse
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Setting[T]: ...
    @overload
    def __get__(self, instance: object, owner: type) -> T: ...
    def __get__(self, instance: object | None, owner: type) -> T | Setting[T]:
        if instance is None:
            return self
        override = instance.__dict__.get("_overrides", {}).get(self.name)
        if override is not None:
            value = override() if callable(override) else override
            return self.parse(value) if isinstance(value, str) else value
        for name in self.env:
            raw = os.environ.get(name)
            if raw is not None and raw.strip():
                return self.parse(raw)
        return self.default(instance) if callable(self.default) else self.default


# The stdlib's own: float() ignores the whitespace around a number as str.strip() removes it.
parse_str = str.strip
parse_float = float


def parse_bool(value: str) -> bool:
    normalized = value.strip().lower()
    if normalized in {"1", "true", "yes", "on"}:
        return True
    if normalized in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"not a boolean: {value!r}")
