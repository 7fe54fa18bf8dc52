"""Several replicas sharing one encrypted second level on a real Redis: tokens, discovery, tool definitions."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from typing import Any

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import McpToolServerConfigurationService
from support.redis_server import RedisServer
from support.turns import make_turn_context

from .conftest import KEYS, OTHER_KEYS, Replicas

USER, TENANT = "alice-0b7e5a1f", "tenant-3c9d2e44"


def turn(user: str = USER) -> Any:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, user_id=user, tenant_id=TENANT)


async def discover(service: McpToolServerConfigurationService, emulator: Emulator, user: str = USER) -> Any:
    return await service.list_tool_servers(turn(user), emulator.authorization(), "AGENTIC")


def tokens_of(servers: Any) -> set[str]:
    return {s.headers["Authorization"].removeprefix("Bearer ") for s in servers}


async def test_a_second_replica_takes_tokens_and_discovery_from_the_store(
    emulator: Emulator, replicas: Replicas
) -> None:
    one, two = replicas(), replicas()
    first = await discover(one, emulator)
    gateway = len(emulator.requests_for("gateway"))
    second = await discover(two, emulator)  # another replica's first turn for this user
    assert len(emulator.requests_for("gateway")) == gateway == 1
    assert tokens_of(first) == tokens_of(second)  # the tokens the first replica exchanged
    assert [s.url for s in first] == [s.url for s in second]


async def test_exchanges_count_once_per_user_and_audience_across_replicas(
    emulator: Emulator, replicas: Replicas
) -> None:
    authorization = emulator.authorization()
    services = [replicas() for _ in range(4)]
    for service in services:
        await service.list_tool_servers(turn(), authorization, "AGENTIC")
    assert authorization.exchange_count == 2  # platform + calendar, not 2 per replica
    other = [replicas(keys=OTHER_KEYS) for _ in range(1)]  # another key: reads nothing, exchanges itself
    await other[0].list_tool_servers(turn(), authorization, "AGENTIC")
    assert authorization.exchange_count == 4


async def test_nothing_in_redis_reads_as_a_token_or_an_identity(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    one, two = replicas(), replicas()
    tokens: set[str] = set()
    for user in (USER, "bob-51c0aa93"):
        servers = await discover(one, emulator, user)
        tokens |= tokens_of(servers)
        for server in servers:
            await one.list_mcp_tools(server)
        tokens |= tokens_of(await discover(two, emulator, user))
    contents = redis.contents()
    assert any(k.startswith(b"a365:token:") for k in contents)
    assert any(k.startswith(b"a365:discovery:") for k in contents)
    assert any(k.startswith(b"a365:definitions:") for k in contents)
    claims = {
        str(v)
        for t in tokens
        for k, v in decode_token_payload(t).items()
        if k in ("oid", "tid", "appid", "azp")
    }
    secrets = tokens | claims | {USER, "bob-51c0aa93", TENANT, DEFAULT_AGENT_ID}
    secrets |= {token.split(".")[1] for token in tokens}  # a token's claims part alone
    for key, value in contents.items():
        assert re.fullmatch(rb"a365:(token|discovery|tools|definitions):[0-9a-f]{64}", key), key
        for text in secrets:
            assert text.encode() not in key, (key, text)
            assert text.encode() not in value, (key, text)
        assert b"eyJ" not in value  # no JWT header in clear
        assert b"send_email" not in value  # definitions are sealed too


async def test_a_replica_with_another_key_reads_nothing_and_still_serves(
    emulator: Emulator, replicas: Replicas
) -> None:
    await discover(replicas(), emulator)
    stranger = replicas(keys=OTHER_KEYS)
    servers = await discover(stranger, emulator)
    assert {s.mcp_server_name for s in servers} == {"mail", "calendar"}
    assert len(emulator.requests_for("gateway")) == 2  # it asked the gateway itself
    # Rotation: a replica listing the new key first and the old one after reads what the old key sealed.
    await discover(replicas(), emulator, "carol-77d1")
    rotated = replicas(keys=f"k2:{OTHER_KEYS.split(':')[1]},{KEYS}")
    await discover(rotated, emulator, "carol-77d1")
    assert len(emulator.requests_for("gateway")) == 3


async def test_a_tampered_value_is_a_miss(emulator: Emulator, replicas: Replicas, redis: RedisServer) -> None:
    await discover(replicas(), emulator)
    with redis.client() as client:
        for key in client.scan_iter():
            value = bytearray(client.get(key) or b"")
            value[-1] ^= 1  # one bit of the tag
            client.set(key, bytes(value), keepttl=True)
        gateway = len(emulator.requests_for("gateway"))
        servers = await discover(replicas(), emulator)
        assert len(emulator.requests_for("gateway")) == gateway + 1
        assert servers
        # A value moved under another entry's key (both sealed by us) does not open there either.
        keys = sorted(k for k in client.scan_iter(match="a365:token:*"))
        a, b = client.get(keys[0]), client.get(keys[1])
        client.set(keys[0], b or b"", keepttl=True)
        client.set(keys[1], a or b"", keepttl=True)
    authorization = emulator.authorization()
    await replicas().list_tool_servers(turn(), authorization, "AGENTIC")
    assert authorization.exchange_count == 2


async def test_a_token_entry_expires_at_its_exp_minus_the_skew(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    servers = await discover(replicas(token_expiry_skew=100), emulator)
    exp = max(decode_token_payload(t)["exp"] for t in tokens_of(servers))
    with redis.client() as client:
        ttls = [client.pttl(k) / 1000 for k in client.scan_iter(match="a365:token:*")]
        discovery = [client.pttl(k) / 1000 for k in client.scan_iter(match="a365:discovery:*")]
    assert ttls
    assert all(abs(ttl - (exp - time.time() - 100)) < 5 for ttl in ttls), (ttls, exp)
    assert discovery
    assert all(290 < ttl <= 300 for ttl in discovery)


async def test_tool_definitions_are_stored_once_and_shared_by_replicas(
    emulator: Emulator, replicas: Replicas, redis: RedisServer
) -> None:
    one, two = replicas(), replicas()
    for user in (USER, "bob-51c0aa93"):
        for server in await discover(one, emulator, user):
            await one.list_mcp_tools(server)
    listed = len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"])
    assert listed == 4  # two users x two servers: each user's own listing (a server may list per user)
    contents = redis.contents()
    assert len([k for k in contents if k.startswith(b"a365:definitions:")]) == 2  # one per distinct set
    assert len([k for k in contents if k.startswith(b"a365:tools:")]) == 4
    servers = await discover(two, emulator)
    definitions = [await two.list_mcp_tools(server) for server in servers]
    assert {t.name for t in definitions[0]} | {t.name for t in definitions[1]} >= {
        "send_email",
        "create_event",
    }
    assert len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"]) == listed


async def test_a_failed_tool_call_drops_the_definitions_in_every_replica(
    emulator: Emulator, replicas: Replicas
) -> None:
    from agents_a365.tooling._mcp_errors import DefinitionMismatch, failed, tool_call_result
    from agents_a365.tooling._spans import NULL_SPAN

    one, two = replicas(), replicas()
    (mail,) = [s for s in await discover(one, emulator) if s.mcp_server_name == "mail"]
    await one.list_mcp_tools(mail)

    async def failing() -> None:  # an answer showing the definitions wrong (a transient failure keeps them)
        raise failed(mail, "tool 'send_email' unknown", kind=DefinitionMismatch)

    with pytest.raises(DefinitionMismatch):
        await tool_call_result(failing(), NULL_SPAN, mail, one.tool_definitions)
    listed = len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"])
    await two.list_mcp_tools(mail)  # another replica: the entry is gone from the store too
    assert len([r for r in emulator.requests_for("mcp") if r.jsonrpc_method == "tools/list"]) == listed + 1


def test_nothing_configured_imports_neither_redis_nor_cryptography() -> None:
    code = (
        "import sys; from agents_a365.tooling import McpToolServerConfigurationService as S;"
        "s = S(); assert s._second_level is None;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('redis', 'cryptography')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_store_needs_keys_and_the_keys_must_be_keys(emulator: Emulator, redis: RedisServer) -> None:
    from agents_a365.tooling import ToolingConfiguration
    from agents_a365.tooling.redis_store import RedisStore

    with pytest.raises(ValueError, match="cache_keys"):
        McpToolServerConfigurationService(ToolingConfiguration(cache_redis_url=redis.url))
    for bad in ("k1", "k1:not-base64!", "k1:" + "QUJD", ":" + KEYS.split(":")[1]):
        with pytest.raises(ValueError, match="cache_keys") as raised:
            McpToolServerConfigurationService(
                ToolingConfiguration(cache_keys=bad), cache_store=RedisStore(redis.url)
            )
        assert KEYS.split(":")[1] not in str(raised.value)
    with pytest.raises(TypeError, match="cache_store"):
        McpToolServerConfigurationService(ToolingConfiguration(cache_keys=KEYS), cache_store=object())  # type: ignore[arg-type]


async def test_the_redis_url_setting_makes_a_store_of_its_own(emulator: Emulator, redis: RedisServer) -> None:
    from support.platform import production_config

    config = production_config(emulator, cache_redis_url=redis.url, cache_keys=KEYS)
    async with (
        McpToolServerConfigurationService(config) as one,
        McpToolServerConfigurationService(config) as two,
    ):
        await discover(one, emulator)
        await discover(two, emulator)
    assert len(emulator.requests_for("gateway")) == 1
    assert asyncio.get_running_loop()
