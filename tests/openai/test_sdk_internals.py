"""The OpenAI Agents SDK internals A365MCPServer relies on, checked against the real SDK and a real server.

``A365MCPServer`` primes ``MCPServerStreamableHttp._tools_list`` / ``_cache_dirty`` from the tool-definition
cache (warm turns make no ``tools/list`` request). Those are private attributes: the extension bounds
``openai-agents`` to the versions tested here, and this test fails loudly, naming what changed, when a new
SDK version stops behaving as relied on.
"""

from __future__ import annotations

from agents.mcp import MCPServerStreamableHttp
from mcp.types import Tool

from agents_a365.emulator import Emulator

RELIED_ON = "A365MCPServer relies on MCPServerStreamableHttp"


def _list_requests(emu: Emulator) -> int:
    return sum(1 for r in emu.requests_for("mcp:mail") if r.jsonrpc_method == "tools/list")


async def test_the_private_tool_list_cache_behaves_as_relied_on(emulator: Emulator) -> None:
    server = MCPServerStreamableHttp(
        {
            "url": emulator.server_url("mail"),
            "headers": {"Authorization": f"Bearer {emulator.server_token('mail')}"},
        },
        cache_tools_list=True,
        name="mail",
    )
    assert getattr(server, "_tools_list", "missing") is None, f"{RELIED_ON}._tools_list (None before listing)"
    assert getattr(server, "_cache_dirty", "missing") is True, (
        f"{RELIED_ON}._cache_dirty (True before listing)"
    )
    await server.connect()
    try:
        primed = [Tool(name="primed_tool", inputSchema={"type": "object", "properties": {}})]
        server._tools_list = primed
        server._cache_dirty = False
        listed = await server.list_tools()
        assert [t.name for t in listed] == ["primed_tool"], f"{RELIED_ON}: a primed _tools_list is served"
        assert _list_requests(emulator) == 0, f"{RELIED_ON}: a primed cache makes no tools/list request"
        server.invalidate_tools_cache()
        assert server._cache_dirty is True, f"{RELIED_ON}: invalidate_tools_cache() sets _cache_dirty"
        relisted = await server.list_tools()
        assert "send_email" in {t.name for t in relisted}
        assert _list_requests(emulator) == 1
    finally:
        await server.cleanup()
