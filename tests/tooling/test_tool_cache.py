"""ToolDefinitionCache: keyed by server and by every header (so by user), with a TTL."""

from __future__ import annotations

import pytest
from mcp.types import Tool

from agents_a365.tooling import ToolDefinitionCache, ToolingConfiguration

URL = "https://mcp.example/agents/servers/mail"
TOOLS = [Tool(name="send_email", inputSchema={"type": "object"})]
ALICE = {"Authorization": "Bearer alice-token", "x-ms-agentid": "agent"}
BOB = {"Authorization": "Bearer bob-token", "x-ms-agentid": "agent"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_entry_is_found_only_with_the_same_server_and_the_same_headers() -> None:
    cache = ToolDefinitionCache(60)
    cache.put(URL, ALICE, TOOLS)
    assert cache.get(URL, ALICE) == tuple(TOOLS)
    assert cache.get(URL.upper().replace("HTTPS", "https") + "/", ALICE) == tuple(TOOLS)  # same server
    assert cache.get(URL, BOB) is None  # another user's token
    assert cache.get(URL, {**ALICE, "x-ms-agentid": "other"}) is None  # any header counts
    assert cache.get(URL + "2", ALICE) is None
    assert cache.get(URL, {k.lower(): v for k, v in ALICE.items()}) == tuple(TOOLS)  # names are case-free


def test_entries_expire_after_the_ttl_and_zero_disables() -> None:
    clock = Clock()
    cache = ToolDefinitionCache(10, clock=clock)
    cache.put(URL, ALICE, TOOLS)
    clock.now = 9.9
    assert cache.get(URL, ALICE) is not None
    clock.now = 10.0
    assert cache.get(URL, ALICE) is None
    off = ToolDefinitionCache(0)
    off.put(URL, ALICE, TOOLS)
    assert off.get(URL, ALICE) is None
    assert len(off) == 0
    with pytest.raises(ValueError, match="ttl"):
        ToolDefinitionCache(-1)


def test_least_recently_used_goes_first_and_invalidate_forgets() -> None:
    cache = ToolDefinitionCache(60, max_entries=2)
    cache.put(URL + "/a", ALICE, TOOLS)
    cache.put(URL + "/b", ALICE, TOOLS)
    assert cache.get(URL + "/a", ALICE) is not None  # now the most recent
    cache.put(URL + "/c", ALICE, TOOLS)
    assert cache.get(URL + "/b", ALICE) is None
    assert cache.get(URL + "/a", ALICE) is not None
    cache.invalidate(URL + "/a", ALICE)
    assert cache.get(URL + "/a", ALICE) is None


def test_no_token_is_kept_in_keys_or_repr() -> None:
    cache = ToolDefinitionCache(60)
    cache.put(URL, ALICE, TOOLS)
    assert "alice-token" not in repr(cache)
    assert not any("alice-token" in part for part in cache.key(URL, ALICE))  # what entries are kept under


def test_ttl_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ToolingConfiguration().tool_cache_ttl == 300
    monkeypatch.setenv("A365_TOOL_CACHE_TTL", "5")
    assert ToolingConfiguration().tool_cache_ttl == 5
    assert ToolingConfiguration(tool_cache_ttl=0).tool_cache_ttl == 0
