"""Tooling settings: environment variables with per-instance overrides."""

from __future__ import annotations

from pathlib import Path

from agents_a365.runtime import RuntimeConfiguration
from agents_a365.runtime.settings import Override, Setting, parse_bool, parse_float, parse_str

from .constants import (
    DEFAULT_CACHE_MAX_ENTRIES,
    DEFAULT_PLATFORM_ENDPOINT,
    DEFAULT_PLATFORM_SCOPE,
    MANIFEST_FILE_NAME,
)

__all__ = ["ToolingConfiguration", "get_mcp_platform_authentication_scope"]


def _parse_endpoint(value: str) -> str:
    return value.strip().rstrip("/")


class ToolingConfiguration(RuntimeConfiguration):
    """Settings of the tooling package.

    ======================================  ==========================================  ==========
    attribute                               environment variable                        default
    ======================================  ==========================================  ==========
    ``mcp_platform_endpoint``               ``MCP_PLATFORM_ENDPOINT``                   ``https://agent365.svc.cloud.microsoft``
    ``mcp_platform_authentication_scope``   ``MCP_PLATFORM_AUTHENTICATION_SCOPE``       ``ea9ffc3e-…/.default``
    ``use_tooling_manifest``                ``A365_USE_TOOLING_MANIFEST``               development environment
    ``manifest_path``                       ``A365_TOOLING_MANIFEST``                   ``./ToolingManifest.json``
    ``require_tooling_manifest``            ``A365_REQUIRE_TOOLING_MANIFEST``           false (missing: warning)
    ``request_timeout``                     ``A365_REQUEST_TIMEOUT``                    10 s
    ``chat_history_timeout``                ``A365_CHAT_HISTORY_TIMEOUT``               10 s
    ``chat_history_max_attempts``           ``A365_CHAT_HISTORY_MAX_ATTEMPTS``          3
    ``allow_insecure_http``                 ``A365_ALLOW_INSECURE_HTTP``                false
    ``discovery_cache_ttl``                 ``A365_DISCOVERY_CACHE_TTL``                300 s
    ``token_expiry_skew``                   ``A365_TOKEN_EXPIRY_SKEW``                  120 s
    ``tool_cache_ttl``                      ``A365_TOOL_CACHE_TTL``                     300 s (0: off)
    ``max_connections``                     ``A365_MAX_CONNECTIONS``                    100
    ``chat_history_concurrency``            ``A365_CHAT_HISTORY_CONCURRENCY``           64 sends in flight
    ``chat_history_queue_timeout``          ``A365_CHAT_HISTORY_QUEUE_TIMEOUT``         120 s
    ``chat_history_drain_timeout``          ``A365_CHAT_HISTORY_DRAIN_TIMEOUT``         10 s
    ``token_exchange_timeout``              ``A365_TOKEN_EXCHANGE_TIMEOUT``             ``request_timeout``
    ``max_gateway_response_bytes``          ``A365_MAX_GATEWAY_RESPONSE_BYTES``         4 MiB
    ``max_rtp_response_bytes``              ``A365_MAX_RTP_RESPONSE_BYTES``             8 KiB
    ``max_mcp_response_bytes``              ``A365_MAX_MCP_RESPONSE_BYTES``             16 MiB
    ``mcp_session_idle_timeout``            ``A365_MCP_SESSION_IDLE_TIMEOUT``           60 s (0: no reuse)
    ``max_mcp_sessions``                    ``A365_MAX_MCP_SESSIONS``                   256 kept open
    ``cache_max_entries``                   ``A365_CACHE_MAX_ENTRIES``                  16,384 per cache
    ``mcp_breaker_threshold``               ``A365_MCP_BREAKER_THRESHOLD``              3 failures (0: off)
    ``mcp_breaker_cooldown``                ``A365_MCP_BREAKER_COOLDOWN``               5 s
    ``mcp_session_open_concurrency``        ``A365_MCP_SESSION_OPEN_CONCURRENCY``       16 per server
    ``cache_redis_url``                     ``A365_CACHE_REDIS_URL``                    none (no second level)
    ``cache_keys``                          ``A365_CACHE_KEYS``                         none
    ``cache_store_timeout``                 ``A365_CACHE_STORE_TIMEOUT``                0.05 s
    ======================================  ==========================================  ==========

    ``use_tooling_manifest`` unset means "use the manifest in a development environment"
    (``PYTHON_ENVIRONMENT``/``ENVIRONMENT``/``ASPNETCORE_ENVIRONMENT``/``DOTNET_ENVIRONMENT``,
    default ``Development``) and the tooling gateway otherwise.

    Every timeout is a total deadline (a peer trickling bytes does not extend it).
    ``chat_history_timeout`` bounds a send's time on the wire (its attempts and the backoff
    between them); ``chat_history_queue_timeout`` separately bounds the time a send waits for one
    of the ``chat_history_concurrency`` slots, so a slow but healthy endpoint does not fail the
    sends queued behind it. ``aclose()`` stops accepting sends, lets those under way (queued or on the wire)
    finish for up to ``chat_history_drain_timeout``, then ends the rest with a failed result naming each
    record. ``token_exchange_timeout`` bounds one ``exchange_token`` call. A
    response body beyond ``max_gateway_response_bytes`` (discovery) or ``max_rtp_response_bytes``
    (threat protection) is not read further and the request fails; so is an answer to the core's MCP
    listing (``initialize``, a ``tools/list`` page) beyond ``max_mcp_response_bytes``. The service's MCP
    sessions (``session_pool``: listings and both extensions' calls, kept across turns per server and user
    token) close when unused for ``mcp_session_idle_timeout``; at most ``max_mcp_sessions`` stay open. Each
    cache (tokens, discovery results, tool definitions: per user) keeps at most ``cache_max_entries``, the least
    recently used going first. An MCP server that failed ``mcp_breaker_threshold`` requests in a row (no answer
    in time, connection lost, HTTP 5xx/429) fails its requests at once for ``mcp_breaker_cooldown`` s, then
    one probe decides; at most ``mcp_session_open_concurrency`` sessions open to one server at once
    (docs/reliability.md).

    With ``cache_redis_url`` (or a service's ``cache_store``) the caches have a second level shared by the
    host's replicas, its values sealed with ``cache_keys`` (``id:base64-key[,id:base64-key...]``, the first
    seals), each store operation bounded by ``cache_store_timeout`` (README "Running several replicas").
    """

    mcp_platform_endpoint = Setting("MCP_PLATFORM_ENDPOINT", DEFAULT_PLATFORM_ENDPOINT, _parse_endpoint)
    mcp_platform_authentication_scope = Setting(
        "MCP_PLATFORM_AUTHENTICATION_SCOPE", DEFAULT_PLATFORM_SCOPE, parse_str
    )
    use_tooling_manifest = Setting[bool](
        "A365_USE_TOOLING_MANIFEST", lambda config: config.is_development, parse_bool
    )
    manifest_path = Setting[Path](
        "A365_TOOLING_MANIFEST", Path(MANIFEST_FILE_NAME), lambda v: Path(v.strip())
    )
    require_tooling_manifest = Setting("A365_REQUIRE_TOOLING_MANIFEST", False, parse_bool)
    request_timeout = Setting("A365_REQUEST_TIMEOUT", 10.0, parse_float)
    chat_history_timeout = Setting("A365_CHAT_HISTORY_TIMEOUT", 10.0, parse_float)
    chat_history_max_attempts = Setting("A365_CHAT_HISTORY_MAX_ATTEMPTS", 3, int)
    allow_insecure_http = Setting("A365_ALLOW_INSECURE_HTTP", False, parse_bool)
    discovery_cache_ttl = Setting("A365_DISCOVERY_CACHE_TTL", 300.0, parse_float)
    token_expiry_skew = Setting("A365_TOKEN_EXPIRY_SKEW", 120.0, parse_float)
    tool_cache_ttl = Setting("A365_TOOL_CACHE_TTL", 300.0, parse_float)
    max_connections = Setting("A365_MAX_CONNECTIONS", 100, int)
    chat_history_concurrency = Setting("A365_CHAT_HISTORY_CONCURRENCY", 64, int)
    chat_history_queue_timeout = Setting("A365_CHAT_HISTORY_QUEUE_TIMEOUT", 120.0, parse_float)
    chat_history_drain_timeout = Setting("A365_CHAT_HISTORY_DRAIN_TIMEOUT", 10.0, parse_float)
    token_exchange_timeout = Setting[float](
        "A365_TOKEN_EXCHANGE_TIMEOUT", lambda config: config.request_timeout, parse_float
    )
    max_gateway_response_bytes = Setting("A365_MAX_GATEWAY_RESPONSE_BYTES", 4 * 1024 * 1024, int)
    max_rtp_response_bytes = Setting("A365_MAX_RTP_RESPONSE_BYTES", 8 * 1024, int)
    max_mcp_response_bytes = Setting("A365_MAX_MCP_RESPONSE_BYTES", 16 * 1024 * 1024, int)
    mcp_session_idle_timeout = Setting("A365_MCP_SESSION_IDLE_TIMEOUT", 60.0, parse_float)
    max_mcp_sessions = Setting("A365_MAX_MCP_SESSIONS", 256, int)
    cache_max_entries = Setting("A365_CACHE_MAX_ENTRIES", DEFAULT_CACHE_MAX_ENTRIES, int)
    mcp_breaker_threshold = Setting("A365_MCP_BREAKER_THRESHOLD", 3, int)
    mcp_breaker_cooldown = Setting("A365_MCP_BREAKER_COOLDOWN", 5.0, parse_float)
    mcp_session_open_concurrency = Setting("A365_MCP_SESSION_OPEN_CONCURRENCY", 16, int)
    cache_redis_url = Setting("A365_CACHE_REDIS_URL", "", parse_str)
    cache_keys = Setting("A365_CACHE_KEYS", "", parse_str)
    cache_store_timeout = Setting("A365_CACHE_STORE_TIMEOUT", 0.05, parse_float)

    def __init__(
        self,
        *,
        mcp_platform_endpoint: Override[str] | None = None,
        mcp_platform_authentication_scope: Override[str] | None = None,
        use_tooling_manifest: Override[bool] | None = None,
        manifest_path: Override[Path | str] | None = None,
        require_tooling_manifest: Override[bool] | None = None,
        request_timeout: Override[float] | None = None,
        chat_history_timeout: Override[float] | None = None,
        chat_history_max_attempts: Override[int] | None = None,
        allow_insecure_http: Override[bool] | None = None,
        discovery_cache_ttl: Override[float] | None = None,
        token_expiry_skew: Override[float] | None = None,
        tool_cache_ttl: Override[float] | None = None,
        max_connections: Override[int] | None = None,
        chat_history_concurrency: Override[int] | None = None,
        chat_history_queue_timeout: Override[float] | None = None,
        chat_history_drain_timeout: Override[float] | None = None,
        token_exchange_timeout: Override[float] | None = None,
        max_gateway_response_bytes: Override[int] | None = None,
        max_rtp_response_bytes: Override[int] | None = None,
        max_mcp_response_bytes: Override[int] | None = None,
        mcp_session_idle_timeout: Override[float] | None = None,
        max_mcp_sessions: Override[int] | None = None,
        cache_max_entries: Override[int] | None = None,
        mcp_breaker_threshold: Override[int] | None = None,
        mcp_breaker_cooldown: Override[float] | None = None,
        mcp_session_open_concurrency: Override[int] | None = None,
        cache_redis_url: Override[str] | None = None,
        cache_keys: Override[str] | None = None,
        cache_store_timeout: Override[float] | None = None,
        cluster_category: Override[str] | None = None,
        environment: Override[str] | None = None,
    ) -> None:
        # Each argument overrides the setting of its name (runtime's two included); a text value is parsed
        # as the environment's is (a manifest_path given as a str becomes a Path).
        overrides = {name: value for name, value in locals().items() if name not in {"self", "__class__"}}
        super().__init__()
        self.set_overrides(**overrides)

    @property
    def platform_audience(self) -> str:
        """The audience of the platform scope (the scope without its last ``/segment``)."""
        return self.mcp_platform_authentication_scope.rsplit("/", 1)[0]  # a scope without a '/' is its own

    def __repr__(self) -> str:
        return (
            f"ToolingConfiguration(mcp_platform_endpoint={self.mcp_platform_endpoint!r}, "
            f"use_tooling_manifest={self.use_tooling_manifest!r}, environment={self.environment!r})"
        )


def get_mcp_platform_authentication_scope() -> list[str]:
    """The platform scope (``MCP_PLATFORM_AUTHENTICATION_SCOPE``, default ``ea9ffc3e-…/.default``) as a
    one-item list: what hosting-core's ``exchange_token`` takes (Microsoft's helper of the same name)."""
    return [ToolingConfiguration().mcp_platform_authentication_scope]
