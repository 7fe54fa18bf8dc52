"""One reader of a turn: the core's cache key and the extensions' identity agree, and each API call reads the
activity once."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from microsoft_agents.activity import Activity, ConversationAccount
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.trace_tree import TraceRecorder
from agents_a365.runtime import get_app_id_from_token, resolve_agent_identity
from agents_a365.tooling import McpToolServerConfigurationService, configure_telemetry
from agents_a365.tooling._turn import read_turn
from agents_a365.tooling.extensibility import turn_identity
from support.jwt import make_jwt
from support.platform import production_config
from support.turns import RecordingAdapter, make_turn_context


def test_conversation_tenant_wins_in_identity_and_cache_key() -> None:
    turn = make_turn_context(tenant_id="recipient-tenant")
    turn.activity.conversation = ConversationAccount(id="conversation-1", tenant_id="conversation-tenant")
    key = read_turn(turn).key
    assert key is not None
    assert key.tenant == turn_identity(turn).tenant_id == "conversation-tenant"


def test_channel_data_tenant_is_the_last_resort_for_both() -> None:
    turn = make_turn_context(conversation_id=None, channel_data={"tenant": {"id": "cd-tenant"}})
    turn.activity.recipient.tenant_id = None
    key = read_turn(turn).key
    assert key is not None
    assert key.tenant == turn_identity(turn).tenant_id == "cd-tenant"


def test_agentic_instance_id_is_the_agent_of_both() -> None:
    turn = make_turn_context(agentic_app_id="instance-1")
    key = read_turn(turn).key
    assert key is not None
    assert key.agent == turn_identity(turn).agent_id == "instance-1"


def test_langchain_reexports_the_same_reader() -> None:
    langchain = pytest.importorskip("agents_a365.tooling.extensions.langchain")  # tooling alone: skipped
    assert langchain.turn_identity is turn_identity


def test_no_user_means_no_cache_key() -> None:
    turn = make_turn_context()
    turn.activity.from_property = None
    assert read_turn(turn).key is None


class CountingTurnContext(TurnContext):
    """hosting-core's real TurnContext, noting the module of every read of its ``activity``."""

    def __init__(self, turn: TurnContext) -> None:
        super().__init__(turn)  # hosting-core's copy constructor: same adapter, same Activity
        self.readers: list[str] = []

    @property
    def activity(self) -> Activity:
        self.readers.append(sys._getframe(1).f_globals["__name__"])
        return self._activity

    def library_reads(self) -> list[str]:
        """Reads by the SDK's library packages (the emulator's authorization is the caller's, not ours)."""
        reads = [r for r in self.readers if r.startswith("agents_a365.") and ".emulator" not in r]
        self.readers.clear()
        return reads


@pytest.fixture
def traced() -> Iterator[TraceRecorder]:
    # Spans on: the discovery and send spans carry the turn's identity as attributes.
    recorder = TraceRecorder()
    configure_telemetry(tracer_provider=recorder.tracer_provider)
    try:
        yield recorder
    finally:
        configure_telemetry()
        recorder.shutdown()


async def test_each_api_call_reads_the_activity_once(emulator: Emulator, traced: TraceRecorder) -> None:
    # A V2 server: two token exchanges (platform, calendar), discovery, headers, caches and spans all need the
    # turn; the threat-protection send needs its record, headers and span. One read each, by _turn.
    turn = CountingTurnContext(make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, blueprint_id="bp-1"))
    async with McpToolServerConfigurationService(production_config(emulator)) as service:
        servers = await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC")
        assert {s.mcp_server_name for s in servers} == {"mail", "calendar"}
        assert turn.library_reads() == ["agents_a365.tooling._turn"]
        assert servers[0].headers["x-ms-agentid"] == "bp-1"

        await service.list_tool_servers(turn, emulator.authorization(), "AGENTIC")  # warm: from the caches
        assert turn.library_reads() == ["agents_a365.tooling._turn"]

        result = await service.send_chat_history(turn, [])
        assert result.succeeded
        assert turn.library_reads() == ["agents_a365.tooling._turn"]
    assert {"a365.tooling.discovery", "a365.tooling.send_chat_history"} <= {s.name for s in traced.spans()}
    [request] = emulator.chat_messages
    assert request["conversationId"] == "conversation-1"
    assert request["messageId"] == "activity-1"


@pytest.mark.parametrize("agentic_app_id", [DEFAULT_AGENT_ID, None])
def test_gateway_agent_id_is_runtimes_resolve_agent_identity(agentic_app_id: str | None) -> None:
    # Discovery takes the gateway's agent id from the read turn, else from the token: the rule runtime's public
    # resolve_agent_identity states (agentic instance id, else appid/azp).
    turn = make_turn_context(agentic_app_id=agentic_app_id)
    token = make_jwt(appid="app-from-token")
    read = read_turn(turn).gateway_agent_id or get_app_id_from_token(token)
    assert read == resolve_agent_identity(turn, token) == (agentic_app_id or "app-from-token")


@pytest.mark.parametrize(
    "sender",
    [
        {"id": "u1", "agenticAppBlueprintId": "bp-1"},  # a channel's JSON: an extra under its wire name
        {
            "id": "u1",
            "agentic_app_blueprint_id": "bp-1",
        },  # set in code by name (Microsoft's Python reads this)
    ],
)
def test_the_senders_blueprint_id_is_read_in_wire_and_python_form(sender: dict[str, str]) -> None:
    activity = Activity.model_validate({"type": "message", "channelId": "msteams", "from": sender})
    assert read_turn(TurnContext(RecordingAdapter(), activity)).blueprint_id == "bp-1"


def test_no_blueprint_id_without_one() -> None:
    assert read_turn(make_turn_context()).blueprint_id is None
