"""What every orchestrator extension's registration service shares."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, Self

from agents_a365.runtime import OperationResult, TurnContextLike, require

from ._deprecation import check_options
from .configuration import ToolingConfiguration
from .models import ChatHistoryMessage, ToolOptions
from .service import McpToolServerConfigurationService

logger = logging.getLogger("agents_a365.tooling.history")

__all__ = ["ExtensionServiceBase", "require"]


class ExtensionServiceBase:
    """Owns (or borrows) the tooling service; an async context manager.

    Subclasses set :attr:`orchestrator_name` and :attr:`distribution` (the extension's own
    distribution, whose version ``User-Agent`` reports) and extend :meth:`aclose`.
    Long-lived: keep one per process, so the tooling service's connections and caches are reused.
    """

    orchestrator_name: ClassVar[str]
    distribution: ClassVar[str | None] = None

    def __init__(
        self,
        configuration_service: McpToolServerConfigurationService | None = None,
        *,
        configuration: ToolingConfiguration | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        # ``logger``: Microsoft's parameter, accepted; this SDK logs to the ``agents_a365.*`` loggers.
        if isinstance(configuration_service, logging.Logger):  # Microsoft's positional form: (logger)
            configuration_service = None
        if configuration_service is not None and configuration is not None:
            raise ValueError("pass either configuration_service or configuration, not both")
        self._owns_configuration_service = configuration_service is None
        self.configuration_service = configuration_service or McpToolServerConfigurationService(configuration)

    @property
    def configuration(self) -> ToolingConfiguration:
        return self.configuration_service.configuration

    def tool_options(self, options: ToolOptions | None) -> ToolOptions:
        """``options`` with this extension's orchestrator name and distribution filled in when absent."""
        check_options(options, ToolOptions)
        options = options or ToolOptions()
        update: dict[str, str | None] = {}
        if not options.orchestrator_name:
            update["orchestrator_name"] = self.orchestrator_name
        if not options.distribution and self.distribution:
            update["distribution"] = self.distribution
        return options.model_copy(update=update) if update else options

    async def send_history(
        self,
        turn_context: TurnContextLike,
        history: Sequence[ChatHistoryMessage],
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Send converted ``history`` to threat protection: always, even an empty list (the platform
        registers the user message from it). Remote failures are a failed result, never raised."""
        return await self.configuration_service.send_chat_history(
            turn_context, list(history), options=self.tool_options(options)
        )

    async def send_history_from_store(
        self,
        turn_context: TurnContextLike,
        read: Callable[[], Awaitable[Any]],
        convert: Callable[[Any], Sequence[ChatHistoryMessage]],
        options: ToolOptions | None = None,
        *,
        store: str = "the history store",
    ) -> OperationResult:
        """Read a history with ``read()`` (someone else's I/O: a session, a checkpointer, a message
        store), ``convert`` it and send it. A read that fails, or does not answer within
        ``chat_history_timeout``, is a failed result; ``convert``'s ``ValueError`` (bad input) is raised."""
        try:
            async with asyncio.timeout(self.configuration.chat_history_timeout):
                raw = await read()
        except Exception as exc:  # TimeoutError included
            logger.warning("chat history: reading %s failed: %s", store, type(exc).__name__)
            return OperationResult.failed(exc)
        return await self.send_history(turn_context, convert(raw), options)

    async def aclose(self) -> None:
        """Close the tooling service if this service created it."""
        if self._owns_configuration_service:
            await self.configuration_service.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.configuration_service!r})"
