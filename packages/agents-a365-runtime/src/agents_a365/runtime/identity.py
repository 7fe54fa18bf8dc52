"""Who the agent is, for URLs and headers."""

from __future__ import annotations

import functools
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from .protocols import TurnContextLike
from .tokens import get_app_id_from_token

__all__ = ["get_application_name", "resolve_agent_identity"]


def resolve_agent_identity(turn_context: TurnContextLike | None, auth_token: str | None) -> str:
    """The agentic app id used in gateway URLs.

    For an agentic request, the activity's agentic instance id; otherwise the app id
    (``appid`` > ``azp``) of ``auth_token``; ``""`` when neither is known.
    """
    activity: Any = getattr(turn_context, "activity", None)
    try:
        instance_id = activity.get_agentic_instance_id() if activity.is_agentic_request() else None
    except (AttributeError, TypeError):  # no activity, or a partial one (no recipient, say): not agentic
        instance_id = None
    return str(instance_id) if instance_id else get_app_id_from_token(auth_token)


def get_application_name() -> str | None:
    """``AGENT365_APPLICATION_NAME``, else the ``[project] name`` of ``./pyproject.toml``."""
    from_env = os.environ.get("AGENT365_APPLICATION_NAME", "").strip()
    if from_env:
        return from_env
    return _project_name(os.getcwd())


@functools.cache
def _project_name(directory: str) -> str | None:
    # Read once per directory (a str key: a Path costs more to make and hash than the rest of the header build).
    try:
        with (Path(directory) / "pyproject.toml").open("rb") as fh:
            name = tomllib.load(fh).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return name
    return None
