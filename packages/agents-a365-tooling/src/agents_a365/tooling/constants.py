"""Platform constants and header names."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_PLATFORM_ENDPOINT", "DEFAULT_PLATFORM_SCOPE", "PLATFORM_APP_ID", "Headers"]

#: The tooling gateway's application id; V1 servers share tokens for this audience.
PLATFORM_APP_ID: Final = "ea9ffc3e-8a23-4a7d-836d-234d7c7565c1"
DEFAULT_PLATFORM_ENDPOINT: Final = "https://agent365.svc.cloud.microsoft"
DEFAULT_PLATFORM_SCOPE: Final = f"{PLATFORM_APP_ID}/.default"

CHAT_HISTORY_PATH: Final = "/agents/real-time-threat-protection/chat-message"
MANIFEST_FILE_NAME: Final = "ToolingManifest.json"
#: Per cache (tokens, discovery, tool definitions): 2,048 users of 8 servers (~400 bytes a definitions entry).
DEFAULT_CACHE_MAX_ENTRIES: Final = 16_384


class Headers:
    """Names of the headers this SDK sends."""

    AUTHORIZATION: Final = "Authorization"
    USER_AGENT: Final = "User-Agent"
    AGENT_ID: Final = "x-ms-agentid"
    CHANNEL_ID: Final = "x-ms-channel-id"
    SUBCHANNEL_ID: Final = "x-ms-subchannel-id"
    CORRELATION_ID: Final = "x-ms-correlation-id"
