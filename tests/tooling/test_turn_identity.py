"""One reader of a turn's identity: the core's cache key and the extensions' identity agree."""

from __future__ import annotations

import pytest
from microsoft_agents.activity import ConversationAccount

from agents_a365.tooling._turn import TurnKey
from agents_a365.tooling.extensibility import turn_identity
from support.turns import make_turn_context


def test_conversation_tenant_wins_in_identity_and_cache_key() -> None:
    turn = make_turn_context(tenant_id="recipient-tenant")
    turn.activity.conversation = ConversationAccount(id="conversation-1", tenant_id="conversation-tenant")
    key = TurnKey.of(turn)
    assert key is not None
    assert key.tenant == turn_identity(turn).tenant_id == "conversation-tenant"


def test_channel_data_tenant_is_the_last_resort_for_both() -> None:
    turn = make_turn_context(conversation_id=None, channel_data={"tenant": {"id": "cd-tenant"}})
    turn.activity.recipient.tenant_id = None
    key = TurnKey.of(turn)
    assert key is not None
    assert key.tenant == turn_identity(turn).tenant_id == "cd-tenant"


def test_agentic_instance_id_is_the_agent_of_both() -> None:
    turn = make_turn_context(agentic_app_id="instance-1")
    key = TurnKey.of(turn)
    assert key is not None
    assert key.agent == turn_identity(turn).agent_id == "instance-1"


def test_langchain_reexports_the_same_reader() -> None:
    langchain = pytest.importorskip("agents_a365.tooling.extensions.langchain")  # tooling alone: skipped
    assert langchain.turn_identity is turn_identity


def test_no_user_means_no_cache_key() -> None:
    turn = make_turn_context()
    turn.activity.from_property = None
    assert TurnKey.of(turn) is None
