"""Each package's ``__all__`` is exactly its public names (as httpx's tests/test_exported_members.py checks).

A name added to a package's ``__init__`` without ``__all__`` (or left in ``__all__`` after removal) fails here,
so the public API is always a deliberate, reviewed list. Submodules are not members.
"""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = [
    "agents_a365.runtime",
    "agents_a365.runtime.settings",
    "agents_a365.tooling",
    "agents_a365.tooling.extensibility",
    "agents_a365.tooling.ui_stream",
    "agents_a365.tooling.extensions.langchain",
    "agents_a365.tooling.extensions.openai",
    "agents_a365.emulator",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_public_names_are_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        member
        for member, value in vars(module).items()
        if not member.startswith("_") and not isinstance(value, types.ModuleType) and member != "annotations"
    }
    assert sorted(module.__all__) == sorted(public)
    assert len(module.__all__) == len(set(module.__all__))
