"""ToolDefinitionCache: keyed by server and by every header (so by user), with a TTL."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from mcp.types import Tool

from agents_a365.tooling import MCPServerConfig, ToolDefinitionCache, ToolingConfiguration
from agents_a365.tooling.extensibility import list_servers

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


def test_a_ttl_function_is_read_at_each_use() -> None:
    clock, ttl = Clock(), [10.0]
    cache = ToolDefinitionCache(lambda: ttl[0], clock=clock)
    cache.put(URL, ALICE, TOOLS)
    clock.now = 15
    assert cache.get(URL, ALICE) is None
    ttl[0] = 20
    assert cache.get(URL, ALICE) == tuple(TOOLS)  # judged by the TTL as read now
    assert cache.ttl == 20
    ttl[0] = 0
    cache.put(URL, BOB, TOOLS)
    assert cache.get(URL, BOB) is None  # 0: off
    cache.ttl = 30  # a value assigned replaces the function
    assert cache.ttl == 30


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


def test_no_two_header_sets_share_a_key() -> None:
    """The key digests every name and value with its length: a value holding what a separator would be cannot
    pass for two headers (the name/value boundaries of one set never read as another's)."""
    one = ToolDefinitionCache.key(URL, {"a": "x\x01b\x00c"})
    two = ToolDefinitionCache.key(URL, {"a": "x", "b": "c"})
    assert one != two
    # Names in any case are one name.
    assert ToolDefinitionCache.key(URL, {"A": "1"}) == ToolDefinitionCache.key(URL, {"a": "1"})
    assert ToolDefinitionCache.key(URL, {"ab": "c"}) != ToolDefinitionCache.key(URL, {"a": "bc"})


def test_ttl_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ToolingConfiguration().tool_cache_ttl == 300
    monkeypatch.setenv("A365_TOOL_CACHE_TTL", "5")
    assert ToolingConfiguration().tool_cache_ttl == 5
    assert ToolingConfiguration(tool_cache_ttl=0).tool_cache_ttl == 0


# -- memory per user (issue 27) ------------------------------------------------------------------------

SERVERS, TOOLS_PER_SERVER = 8, 100


def _definitions(server: int, variant: str = "") -> list[dict[str, object]]:
    """What a server lists: 100 tools with ~2 KB input schemas (parsed anew for every user, as a listing)."""
    return [
        {
            "name": f"tool_{server}_{index}",
            "description": f"Tool {index} of server {server}{variant}",
            "inputSchema": {
                "type": "object",
                "properties": {f"p{p}": {"type": "string", "description": "x" * 40} for p in range(30)},
            },
        }
        for index in range(TOOLS_PER_SERVER)
    ]


async def _register(cache: ToolDefinitionCache, user: str, variant: str = "") -> None:
    headers = {"Authorization": f"Bearer token-of-{user}"}
    for server in range(SERVERS):
        listed = [Tool.model_validate(d) for d in _definitions(server, variant)]  # this user's own objects

        async def listing(listed: list[Tool] = listed) -> list[Tool]:
            return listed

        await cache.get_or_list(f"https://mcp.example/servers/{server}", headers, listing)


async def _cost(cache: ToolDefinitionCache, users: list[str], variant: str = "") -> float:
    """Bytes the cache holds more after registering ``users`` (each server listed for each), per user."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    for user in users:
        await _register(cache, user, variant)
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] - before) / len(users)


@pytest.mark.slow
async def test_identical_definitions_are_stored_once_whatever_the_number_of_users() -> None:
    cache = ToolDefinitionCache(300)
    tracemalloc.start()
    try:
        first = await _cost(cache, ["user-0"])  # the first user brings the definitions
        per_user = await _cost(cache, [f"user-{n}" for n in range(1, 11)])  # identical definitions
        distinct = await _cost(cache, ["other-tenant"], variant=" (v2)")  # a new definition set
    finally:
        tracemalloc.stop()
    assert len(cache) == SERVERS * 12  # entries stay per (server, user) ...
    assert cache.distinct_sets == SERVERS * 2  # ... the definitions once per distinct content
    print(
        f"memory: first user {first / 1024:.0f} KiB, each further user {per_user / 1024:.1f} KiB, "
        f"a distinct definition set {distinct / 1024:.0f} KiB"
    )
    assert per_user < 50 * 1024
    assert distinct > 20 * per_user  # a different set costs its definitions
    for user in ("user-3", "user-9"):  # and every user still gets the definitions
        headers = {"Authorization": f"Bearer token-of-{user}"}
        tools = cache.get("https://mcp.example/servers/5", headers)
        assert tools is not None
        assert len(tools) == TOOLS_PER_SERVER
    assert cache.get(
        "https://mcp.example/servers/5", {"Authorization": "Bearer token-of-user-3"}
    ) is cache.get("https://mcp.example/servers/5", {"Authorization": "Bearer token-of-user-9"})


async def test_servers_with_fresh_definitions_in_the_cache_are_not_listed() -> None:
    # Both extensions list a turn's servers with the service's cache: a fresh entry is taken as it is (no task,
    # no listing); a missing or expired one is listed; the order is the servers'.
    clock = Clock()
    cache = ToolDefinitionCache(10, clock=clock)
    mail = MCPServerConfig(mcp_server_name="mail", url=URL, headers=ALICE)
    notes = MCPServerConfig(mcp_server_name="notes", url=URL + "-notes", headers=ALICE)
    cache.put(mail.url, mail.headers, TOOLS)
    asked: list[str] = []

    async def list_tools(server: MCPServerConfig) -> list[Tool]:
        asked.append(server.mcp_server_name)
        return [Tool(name=f"{server.mcp_server_name}_tool", inputSchema={"type": "object"})]

    listed, failures = await list_servers(list_tools, [notes, mail], cache=cache)
    assert asked == ["notes"]
    assert failures == []
    assert [(s.mcp_server_name, [t.name for t in tools]) for s, tools in listed] == [
        ("notes", ["notes_tool"]),
        ("mail", ["send_email"]),
    ]
    clock.now = 11  # expired: listed again (the service's listing serves it stale and refreshes)
    await list_servers(list_tools, [mail], cache=cache)
    assert asked == ["notes", "mail"]
    await list_servers(list_tools, [mail])  # no cache given: always listed
    assert asked == ["notes", "mail", "mail"]
