"""Low-level, for extension authors: :class:`ChatHistoryMessage` objects built without validation.

A conversion that has already checked every field (exact ``str`` id, role and content, an aware
``datetime``) can skip pydantic: ``model_construct`` costs ~2 us a message (it walks aliases and
defaults generically), as much as the rest of converting and serializing 10,000 messages together.
The functions here fill the same four slots of the instance directly, through their descriptors,
so a hot loop can inline them. That holds only while pydantic's ``BaseModel`` has the layout this
was written for: :data:`DIRECT_CONSTRUCTION` says so, and when it is false :func:`trusted_message`
is ``model_construct`` itself and the slot setters must not be used.

A batch may give all its messages one fields set (:func:`all_fields`), as
``model_construct(_fields_set=...)`` allows: a new set per message costs more (allocation, garbage
collection) than the rest of the message. Pydantic never changes it in place for a frozen model
(``model_copy`` copies it first).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from .models import ChatHistoryMessage

__all__ = [
    "DIRECT_CONSTRUCTION",
    "all_fields",
    "new_message",
    "set_dict",
    "set_extra",
    "set_fields_set",
    "set_private",
    "trusted_message",
]

_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

DIRECT_CONSTRUCTION: bool = (
    set(getattr(BaseModel, "__slots__", ())) == set(_SLOTS)
    and all(hasattr(vars(BaseModel).get(slot), "__set__") for slot in _SLOTS)
    and tuple(ChatHistoryMessage.model_fields) == ("id", "role", "content", "timestamp")
    and not ChatHistoryMessage.__pydantic_post_init__
    and not ChatHistoryMessage.__private_attributes__
    and ChatHistoryMessage.model_config.get("extra") != "allow"
)
"""Whether the slot setters below may be used (pydantic's ``BaseModel`` layout is the expected one)."""


def all_fields() -> set[str]:
    """A fields set naming every field (one per batch is enough)."""
    return {"id", "role", "content", "timestamp"}


def new_message() -> ChatHistoryMessage:
    """An empty instance: fill it with the four setters below."""
    return object.__new__(ChatHistoryMessage)


def _unavailable(instance: Any, value: Any) -> None:  # pragma: no cover - another pydantic layout
    raise RuntimeError("direct construction is unavailable with this pydantic (see DIRECT_CONSTRUCTION)")


set_dict: Callable[[Any, Any], None]
set_fields_set: Callable[[Any, Any], None]
set_extra: Callable[[Any, Any], None]
set_private: Callable[[Any, Any], None]
if DIRECT_CONSTRUCTION:
    set_dict, set_fields_set, set_extra, set_private = (vars(BaseModel)[slot].__set__ for slot in _SLOTS)
else:  # pragma: no cover - a pydantic whose BaseModel layout changed
    set_dict = set_fields_set = set_extra = set_private = _unavailable


def trusted_message(
    ident: str, role: str, content: str, timestamp: datetime, fields_set: set[str] | None = None
) -> ChatHistoryMessage:
    """``ChatHistoryMessage.model_construct(id=ident, role=role, content=content, timestamp=timestamp)``,
    for fields the caller has checked; the same object, built faster."""
    if not DIRECT_CONSTRUCTION:  # pragma: no cover - a pydantic whose BaseModel layout changed
        return ChatHistoryMessage.model_construct(id=ident, role=role, content=content, timestamp=timestamp)
    message = object.__new__(ChatHistoryMessage)
    set_dict(message, {"id": ident, "role": role, "content": content, "timestamp": timestamp})
    set_fields_set(message, fields_set if fields_set is not None else all_fields())
    set_extra(message, None)
    set_private(message, None)
    return message
