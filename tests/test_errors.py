"""One error tree (docs/errors.md): every exception class a library package exports is a ``ToolingError``,
or one of the documented bad-argument errors (``ValueError`` subclasses of the runtime); the page names each."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from agents_a365.tooling import ToolingError

LIBRARY = [
    "agents_a365.runtime",
    "agents_a365.runtime.settings",
    "agents_a365.tooling",
    "agents_a365.tooling.extensibility",
    "agents_a365.tooling.ui_stream",
    "agents_a365.tooling.extensions.langchain",
    "agents_a365.tooling.extensions.openai",
]
# agents-a365-runtime sits below tooling (it cannot derive from ToolingError); it raises these only for a
# token the caller passed, so they are bad-argument errors: ValueError, documented as such.
BAD_ARGUMENT_ERRORS = {
    "InvalidTokenError",
    "MalformedTokenError",
    "TokenPayloadError",
    "TokenMissingExpiryError",
    "TokenExpiredError",
}
PAGE = (Path(__file__).parents[1] / "docs" / "errors.md").read_text(encoding="utf-8")


def _exported_errors(package: str) -> list[type[BaseException]]:
    module = importlib.import_module(package)
    values = (getattr(module, name) for name in module.__all__)
    return [v for v in values if isinstance(v, type) and issubclass(v, BaseException)]


@pytest.mark.parametrize("package", LIBRARY)
def test_every_exported_error_is_in_the_one_tree(package: str) -> None:
    for error in _exported_errors(package):
        if error.__name__ in BAD_ARGUMENT_ERRORS:
            assert issubclass(error, ValueError), error
        else:
            assert issubclass(error, ToolingError), f"{package}.{error.__name__} is not a ToolingError"
        assert f"{error.__name__} " in PAGE or f"`{error.__name__}`" in PAGE, f"docs/errors.md omits {error}"


def test_the_tree_has_its_documented_members() -> None:
    found = {e.__name__ for package in LIBRARY for e in _exported_errors(package)}
    assert {
        "ToolingError",
        "ToolServerDiscoveryError",
        "ToolServerConfigurationError",
        "TokenAcquisitionError",
        "McpServerConnectionError",
        "ChatHistorySendError",
    } | BAD_ARGUMENT_ERRORS <= found
