from pathlib import Path

import pytest

from agents_a365.tooling import DEFAULT_PLATFORM_ENDPOINT, DEFAULT_PLATFORM_SCOPE, ToolingConfiguration

ENV = (
    "MCP_PLATFORM_ENDPOINT",
    "MCP_PLATFORM_AUTHENTICATION_SCOPE",
    "A365_USE_TOOLING_MANIFEST",
    "PYTHON_ENVIRONMENT",
    "ENVIRONMENT",
    "ASPNETCORE_ENVIRONMENT",
    "DOTNET_ENVIRONMENT",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_defaults() -> None:
    config = ToolingConfiguration()
    assert config.mcp_platform_endpoint == DEFAULT_PLATFORM_ENDPOINT == "https://agent365.svc.cloud.microsoft"
    assert config.mcp_platform_authentication_scope == DEFAULT_PLATFORM_SCOPE
    assert DEFAULT_PLATFORM_SCOPE == "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1/.default"
    assert config.platform_audience == "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
    assert config.use_tooling_manifest  # development by default
    assert config.manifest_path == Path("ToolingManifest.json")
    assert config.chat_history_timeout == 10.0


def test_endpoint_whitespace_and_trailing_slashes_are_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_PLATFORM_ENDPOINT", "  https://example.test/base///  ")
    assert ToolingConfiguration().mcp_platform_endpoint == "https://example.test/base"
    assert (
        ToolingConfiguration(mcp_platform_endpoint=" http://127.0.0.1:1/ ").mcp_platform_endpoint
        == "http://127.0.0.1:1"
    )


def test_manifest_or_gateway_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ToolingConfiguration()
    monkeypatch.setenv("ENVIRONMENT", "Production")
    assert not config.use_tooling_manifest
    monkeypatch.setenv("A365_USE_TOOLING_MANIFEST", "true")
    assert config.use_tooling_manifest
    assert not ToolingConfiguration(use_tooling_manifest=False).use_tooling_manifest


def test_per_tenant_callable_overrides() -> None:
    current = {"endpoint": "https://tenant-a.test"}
    config = ToolingConfiguration(mcp_platform_endpoint=lambda: current["endpoint"])
    assert config.mcp_platform_endpoint == "https://tenant-a.test"
    current["endpoint"] = "https://tenant-b.test/"
    assert config.mcp_platform_endpoint == "https://tenant-b.test"


def test_scope_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_PLATFORM_AUTHENTICATION_SCOPE", "api://custom/.default")
    assert ToolingConfiguration().platform_audience == "api://custom"


def test_a_manifest_path_given_as_text_is_a_path() -> None:
    configured = ToolingConfiguration(manifest_path="agents/ToolingManifest.json", environment="Production")
    assert configured.manifest_path == Path("agents/ToolingManifest.json")
    assert configured.environment == "Production"  # runtime's settings are arguments like the others
