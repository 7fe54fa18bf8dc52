import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from agents_a365.tooling import (
    ChatHistoryMessage,
    ChatMessageRequest,
    MCPServerConfig,
    ToolingManifestEntry,
    ToolOptions,
)


def test_chat_message_request_is_camel_case_on_the_wire() -> None:
    request = ChatMessageRequest(
        conversation_id="c",
        message_id="m",
        user_message="hi",
        chat_history=[
            ChatHistoryMessage(
                id="1", role="user", content="hi", timestamp=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
            )
        ],
    )
    wire = json.loads(request.model_dump_json(by_alias=True))
    assert wire == {
        "conversationId": "c",
        "messageId": "m",
        "userMessage": "hi",
        "chatHistory": [{"id": "1", "role": "user", "content": "hi", "timestamp": "2026-01-02T03:04:05Z"}],
    }


def test_timestamps_serialize_as_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    aware = ChatHistoryMessage(
        id="1", role="user", content="x", timestamp=datetime(2026, 1, 1, 12, tzinfo=plus_two)
    )
    naive = ChatHistoryMessage(id="2", role="user", content="x", timestamp=datetime(2026, 1, 1, 12))
    assert aware.model_dump(mode="json")["timestamp"] == "2026-01-01T10:00:00Z"
    assert naive.model_dump(mode="json")["timestamp"] == "2026-01-01T12:00:00Z"


def test_models_accept_python_and_wire_names() -> None:
    assert ToolOptions(orchestrator_name="LangChain") == ToolOptions.model_validate(
        {"orchestratorName": "LangChain"}
    )
    entry = ToolingManifestEntry.model_validate(
        {"mcpServerUniqueName": "mcp_Mail", "audience": "default", "scope": "null"}
    )
    assert entry.name == "mcp_Mail"
    assert entry.audience is None
    assert entry.scope is None


@pytest.mark.parametrize("field", ["id", "role"])
def test_chat_history_message_requires_non_empty_id_and_role(field: str) -> None:
    values = {"id": "1", "role": "user", "content": "x", "timestamp": datetime.now(UTC)}
    values[field] = ""
    with pytest.raises(ValidationError):
        ChatHistoryMessage(**values)


def test_server_config_repr_redacts_authorization() -> None:
    server = MCPServerConfig(
        mcp_server_name="mail",
        url="https://h/agents/servers/mail/",
        headers={"Authorization": "Bearer SECRET-TOKEN", "User-Agent": "ua"},
    )
    assert "SECRET-TOKEN" not in repr(server)
    assert "SECRET-TOKEN" not in str(server)
    assert "<redacted>" in repr(server)
    assert "'User-Agent': 'ua'" in repr(server)
