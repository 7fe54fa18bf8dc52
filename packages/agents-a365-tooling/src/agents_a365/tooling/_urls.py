"""Validation of server names and URLs that carry tokens."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import quote, urlsplit

from .configuration import ToolingConfiguration
from .errors import ToolServerConfigurationError

# Server names and agent ids end up in URL paths: letters, digits and . _ - only, never "." or ".." (the first
# character is a letter or digit).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def validate_server_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise ToolServerConfigurationError(
            f"invalid MCP server name {name!r}: use 1-128 letters, digits, '.', '_' or '-'"
        )
    return name


def path_segment(value: str) -> str:
    """Quote a value for use as one URL path segment (no '/' survives)."""
    if not value or value in {".", ".."}:
        raise ToolServerConfigurationError(f"invalid URL path segment {value!r}")
    return quote(value, safe="")


def is_loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def validate_token_url(url: str, what: str, configuration: ToolingConfiguration) -> None:
    """Refuse URLs that would send a token in clear text (unless ``allow_insecure_http``) or to a malformed
    host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise ToolServerConfigurationError(f"{what}: invalid URL {url!r}") from exc
    if parts.scheme not in {"https", "http"} or not host:
        raise ToolServerConfigurationError(f"{what}: URL must be https://host/..., got {url!r}")
    if parts.username or parts.password:
        raise ToolServerConfigurationError(f"{what}: URL must not contain credentials")
    if parts.scheme == "http" and not configuration.allow_insecure_http and not is_loopback_host(host):
        raise ToolServerConfigurationError(
            f"{what}: refusing to send a token over plain http to {host}; use https "
            "(or set A365_ALLOW_INSECURE_HTTP=true for development)"
        )
