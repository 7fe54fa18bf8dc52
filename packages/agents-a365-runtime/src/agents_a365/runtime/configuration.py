"""Runtime settings: environment variables with per-instance overrides."""

from __future__ import annotations

from typing import Any

from ._env import Override, Setting, parse_str

__all__ = ["RuntimeConfiguration"]

#: Checked in order; the first one set wins (the published Agent 365 SDKs use the same order).
ENVIRONMENT_VARIABLES = ("PYTHON_ENVIRONMENT", "ENVIRONMENT", "ASPNETCORE_ENVIRONMENT", "DOTNET_ENVIRONMENT")


class RuntimeConfiguration:
    """Settings shared by every Agent 365 package.

    Each setting is read at access time: an override given to the constructor (a value,
    or a zero-argument callable evaluated at every access), else the environment, else
    the default.
    """

    cluster_category = Setting("CLUSTER_CATEGORY", "prod", parse_str)
    environment = Setting(ENVIRONMENT_VARIABLES, "Development", parse_str)

    def __init__(
        self,
        *,
        cluster_category: Override[str] | None = None,
        environment: Override[str] | None = None,
    ) -> None:
        self._overrides: dict[str, Any] = {}
        self.set_overrides(cluster_category=cluster_category, environment=environment)

    def set_overrides(self, **overrides: Any) -> None:
        """Override settings of this instance by attribute name: a value, or a zero-argument callable
        evaluated at every access; ``None`` leaves a setting as it is.

        For subclasses that add :class:`~agents_a365.runtime.settings.Setting` attributes: their
        ``__init__`` passes its own keyword arguments here (a private setting by its attribute name)."""
        self._overrides.update({k: v for k, v in overrides.items() if v is not None})

    @property
    def is_development(self) -> bool:
        return self.environment.lower() == "development"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cluster_category={self.cluster_category!r}, environment={self.environment!r})"
