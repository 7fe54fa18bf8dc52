"""The README's main job runs end to end and shows the whole flow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # no OPENAI_API_KEY: scripted models
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # Discovery through the gateway with a token per audience.
    assert "token aud=api://a365-calendar" in out
    assert "token aud=ea9ffc3e-8a23-4a7d-836d-234d7c7565c1" in out
    # Tools listed over MCP.
    assert "send_email" in out
    assert "create_event" in out
    # The chat-history record the emulator received.
    assert '"conversationId": "conversation-1"' in out
    # A LangChain turn calls real MCP tools on two servers, then sends its history (level 1).
    assert "tool call -> find_free_time" in out
    assert "tool result <- list_emails" in out
    assert "Latest email: 'Quarterly report'" in out
    # The converted UI message stream, from the same run that answered (one run: each tool executed once).
    assert 'data: {"type":"start","messageId":"' in out
    langchain_trace = out.split("The turn's trace")[1].split("== OpenAI")[0]
    assert langchain_trace.count("execute_tool find_free_time") == 1
    assert langchain_trace.count("execute_tool list_emails") == 1
    assert 'data: {"type":"tool-output-available","toolCallId":"call-free"' in out
    assert 'data: {"type":"finish","finishReason":"stop"}' in out
    assert "data: [DONE]" in out
    # An OpenAI Agents SDK turn sends an email through the mail MCP server.
    assert "tool call -> send_email" in out
    # Tool results print the same way for both orchestrators: the tool's name, then its JSON.
    assert 'tool result <- send_email: {"status": "sent", "id": "sent-1"' in out
    assert 'tool result <- list_emails: [{"id": "inbox-1"' in out
    assert "mail server state: 1 email(s) sent" in out
    assert "final answer: Sent email sent-1 to ada@contoso.com." in out
    assert out.count("send_chat_history -> Succeeded") == 2
    assert out.count('"role": "tool"') >= 3  # tool results reach threat protection from both turns
    # Each turn went to the hosted example agent as a channel's Activity over HTTP ...
    assert "channel msteams -> POST http://127.0.0.1:" in out
    assert "channel agents:email -> POST http://127.0.0.1:" in out
    assert out.count("agent answered the POST with HTTP 202") == 2
    # ... and its reply reached the channel through the emulator's connector (typing indicator first).
    replies = out.split("What the channel received")
    assert len(replies) == 3
    assert "typing\n  message: Your first free 30-minute slot tomorrow" in replies[1]
    assert "typing\n  message: Sent email sent-1 to ada@contoso.com." in replies[2]
    assert "App ID is not provided" not in out + done.stderr  # development mode is quiet
    # Each turn's OpenTelemetry trace: the SDK's spans under the hosted agent's invoke_agent span.
    assert out.count("The turn's trace") == 2
    assert "invoke_agent langchain" in out
    assert "├─ a365.tooling.discovery" in out
    assert "execute_tool send_email" in out
    assert "└─ POST" in out
    assert "Traceback" not in done.stderr
