"""The :class:`Emulator`: the Agent 365 platform surfaces served in-process by uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import uvicorn
from starlette.types import Receive, Scope

from agents_a365.emulator._app import build_app
from agents_a365.emulator._context import EmulatorContext
from agents_a365.emulator._routes import RTP_PATH
from agents_a365.emulator._server import InProcessServer, bind, serve
from agents_a365.emulator._tools._base import EchoArguments, ToolSpec
from agents_a365.emulator.authorization import EmulatorAuthorization, ExchangeFailure
from agents_a365.emulator.config import EmulatorConfig
from agents_a365.emulator.constants import PLATFORM_AUDIENCE
from agents_a365.emulator.faults import FaultController
from agents_a365.emulator.recording import RecordedRequest, RequestRecorder
from agents_a365.emulator.servers import EmulatedServer
from agents_a365.emulator.tokens import TokenIssuer

__all__ = ["Emulator"]

logger = logging.getLogger("agents_a365.emulator")

_STARTUP_TIMEOUT = 10.0


class Emulator:
    """Local emulator of the Agent 365 tooling gateway, MCP servers and threat protection.

    Use as ``async with Emulator() as emu:`` or call :meth:`start` / :meth:`stop`. ``port=0`` picks a free
    port; :attr:`base_url` is known once started.
    """

    def __init__(self, config: EmulatorConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config if config is not None else EmulatorConfig()
        self.host = host
        self.port = port
        self.issuer = TokenIssuer(self.config.token_secret)
        self.faults = FaultController()
        self.recorder = RequestRecorder(self.config.max_recorded_requests)
        self.servers: Mapping[str, EmulatedServer] = {
            s.name: EmulatedServer.create(s) for s in self.config.servers
        }
        self._install_config_faults()
        self._server: InProcessServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._base_url: str | None = None
        self._listener: socket.socket | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def start(self) -> Emulator:
        """Start serving; returns once the emulator accepts connections."""
        if self._task is not None:
            raise RuntimeError("emulator is already running")
        ctx = EmulatorContext(
            config=self.config,
            issuer=self.issuer,
            servers=dict(self.servers),
            recorder=self.recorder,
            faults=self.faults,
            drop_connection=self._drop_connection,
            reset=self.reset,
        )
        uv_config = uvicorn.Config(
            build_app(ctx),
            host=self.host,
            port=self.port,
            lifespan="on",
            http="h11",
            ws="none",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=self.config.shutdown_timeout,
            timeout_keep_alive=self.config.keep_alive_timeout,
        )
        listener = bind(self.host, self.port)
        server = InProcessServer(uv_config)
        self._server = server
        self._listener = listener
        self._task = asyncio.create_task(
            serve(server, listener), name=f"a365-emulator-{self.host}:{self.port}"
        )
        try:
            await self._wait_started(server, self._task)
        except BaseException:
            await self.stop()
            raise
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._base_url = f"http://{host}:{listener.getsockname()[1]}"
        logger.info("Agent 365 emulator listening on %s", self._base_url)
        return self

    @staticmethod
    async def _wait_started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _STARTUP_TIMEOUT
        while not server.started:
            if task.done():
                exc = task.exception() if not task.cancelled() else None
                raise RuntimeError(f"emulator failed to start: {exc}") from exc
            if loop.time() > deadline:
                raise RuntimeError("emulator did not start in time")
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        """Stop serving and wait for the server (and its MCP sessions) to shut down."""
        server, task, listener = self._server, self._task, self._listener
        self._server, self._task, self._listener = None, None, None
        if server is None or task is None:
            if listener is not None:
                listener.close()
            return
        server.request_exit()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=self.config.shutdown_timeout + 5)
        except TimeoutError:
            logger.warning("Emulator did not shut down in time; cancelling it")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        except RuntimeError:  # startup failed; start() has already reported it
            pass
        finally:
            self._base_url = None
            if listener is not None:
                listener.close()  # uvicorn closes it on a normal shutdown, not when startup failed
        logger.info("Agent 365 emulator stopped")

    async def __aenter__(self) -> Emulator:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    @property
    def running(self) -> bool:
        return self._base_url is not None

    # -- URLs ----------------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://<host>:<port>`` of the running emulator."""
        if self._base_url is None:
            raise RuntimeError("emulator is not running")
        return self._base_url

    def gateway_url(self, agent_id: str | None = None) -> str:
        """The gateway's server-listing URL for ``agent_id`` (default: the configured agent id)."""
        return f"{self.base_url}/agents/v2/{agent_id or self.config.agent_id}/mcpServers"

    def server_url(self, name: str) -> str:
        """The streamable HTTP URL of MCP server ``name`` (with trailing slash)."""
        if name not in self.servers:
            raise KeyError(f"no emulated MCP server named {name!r}")
        return f"{self.base_url}/agents/servers/{name}/"

    @property
    def rtp_url(self) -> str:
        """The threat-protection chat-message URL."""
        return f"{self.base_url}{RTP_PATH}"

    # -- inspection ----------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every recorded request (control requests excluded), oldest first."""
        return self.recorder.requests()

    def requests_for(self, route: str, *, server: str | None = None) -> list[RecordedRequest]:
        """Recorded requests of one route kind (``gateway``, ``mcp``, ``rtp``, ``unknown`` or ``mcp:<name>``)."""
        return self.recorder.requests(route, server=server)

    @property
    def chat_messages(self) -> list[dict[str, Any]]:
        """Valid ChatMessageRequest bodies received by threat protection, as sent (camelCase)."""
        return self.recorder.chat_messages()

    # -- tokens --------------------------------------------------------------------------------------------

    @property
    def connector_url(self) -> str:
        """The ``serviceUrl`` to put in Activities so the agent's replies reach this emulator."""
        return f"{self.base_url}/"

    @property
    def channel_replies(self) -> list[dict[str, Any]]:
        """Activities agents sent to the connector (``/v3/conversations/...``), oldest first."""
        return [
            r.json
            for r in self.requests_for("connector")
            if r.method in ("POST", "PUT") and isinstance(r.json, dict)
        ]

    def platform_token(self, *, user_id: str | None = None, expires_in: int = 3600, **claims: Any) -> str:
        """A valid token for the gateway and V1 servers (audience :data:`PLATFORM_AUDIENCE`)."""
        return self.issuer.mint(
            PLATFORM_AUDIENCE,
            app_id=self.config.agent_id,
            user_id=user_id,
            expires_in=expires_in,
            claims=claims,
        )

    def server_token(self, name: str, *, user_id: str | None = None, expires_in: int = 3600) -> str:
        """A valid token for MCP server ``name`` (its own audience if V2, the platform's if V1)."""
        audience = self.servers[name].config.audience or PLATFORM_AUDIENCE
        return self.issuer.mint(audience, app_id=self.config.agent_id, user_id=user_id, expires_in=expires_in)

    def authorization(
        self,
        *,
        app_id: str | None = None,
        expires_in: int = 3600,
        claims: Mapping[str, Any] | None = None,
        failure: ExchangeFailure | None = None,
    ) -> EmulatorAuthorization:
        """An :class:`EmulatorAuthorization` minting tokens this emulator accepts."""
        return EmulatorAuthorization(
            self.issuer,
            app_id=app_id or self.config.agent_id,
            expires_in=expires_in,
            claims=claims,
            failure=failure,
        )

    # -- control -------------------------------------------------------------------------------------------

    def add_tool(self, server: str, name: str, description: str = "Echoes its text.") -> None:
        """Add a tool (it echoes its ``text`` argument) to a running server: its next ``tools/list`` shows it."""
        spec = ToolSpec(name, description, EchoArguments, lambda args: {"echo": args.text})
        self.servers[server].tools().append(spec)

    def reset(self) -> None:
        """Clear recordings, every fault (also those from the config) and every server's state."""
        self.recorder.clear()
        self.faults.clear()
        for server in self.servers.values():
            server.reset()

    def _install_config_faults(self) -> None:
        for route, fault in self.config.faults.items():
            self.faults.set(route, fault)

    async def _drop_connection(self, scope: Scope, receive: Receive) -> bool:
        server = self._server
        client = scope.get("client")
        if server is None or client is None:
            return False
        for connection in list(server.server_state.connections):
            if tuple(getattr(connection, "client", None) or ()) == tuple(client):
                transport = getattr(connection, "transport", None)
                if transport is None:
                    return False
                transport.abort()
                await _wait_disconnect(receive)
                return True
        return False


async def _wait_disconnect(receive: Receive) -> None:
    """Wait (briefly) until the server has noticed the aborted connection, so it sends no error response."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(1.0):
            while (await receive())["type"] != "http.disconnect":
                pass
