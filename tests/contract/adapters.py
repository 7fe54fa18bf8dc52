"""The contract adapters of this repository's extensions, for the installed ones only.

Each extension's adapter lives in its own module (importing only that extension), so the suite runs in a
venv with one extension (scripts/check_min_versions.py, scripts/compat_matrix.py). A third extension is
one more adapter module and one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from agents_a365.emulator.contract import ExtensionAdapter

__all__ = ["ADAPTERS"]


def _load() -> dict[str, Callable[[Any], ExtensionAdapter]]:
    found: dict[str, Callable[[Any], ExtensionAdapter]] = {}
    langchain, openai = "agents_a365.tooling.extensions.langchain", "agents_a365.tooling.extensions.openai"
    for name, module_name, adapter, extension in (
        ("langchain", "contract.langchain_adapter", "LangChainAdapter", langchain),
        ("langchain-once", "contract.langchain_adapter", "LangChainBuildOnceAdapter", langchain),
        ("openai", "contract.openai_adapter", "OpenAIAdapter", openai),
        ("openai-once", "contract.openai_adapter", "OpenAIBuildOnceAdapter", openai),
    ):
        try:
            module = importlib.import_module(module_name)
            service = importlib.import_module(extension).McpToolRegistrationService
        except ImportError:  # that extension (or its framework) is not installed here
            continue
        cls = getattr(module, adapter)
        found[name] = lambda tooling, cls=cls, service=service: cls(service(tooling))
    return found


ADAPTERS = _load()
