"""The threat-protection send loop: queue wait and time on the wire bounded separately.

A send first waits for one of the service's concurrency slots (at most ``queue_timeout``,
across all attempts), then each attempt runs on the wire under what remains of ``wire_timeout``
(the attempts and the backoff between them). A slow but healthy endpoint therefore does not fail
the sends queued behind it, and the error says which bound was hit. Every remote behaviour,
including a nonsense ``Retry-After`` or an oversized answer, ends in an :class:`OperationResult`.
"""

from __future__ import annotations

import asyncio
import logging

import httpx

from agents_a365.runtime import OperationError, OperationResult

from ._bounded_http import ResponseTooLargeError, request_bounded
from ._redact import scrub
from ._retry import RETRYABLE_STATUS, backoff_delay, parse_retry_after
from ._telemetry_hooks import SendTelemetry
from .configuration import ToolingConfiguration
from .errors import ChatHistorySendError, SendFailureCause

__all__ = ["send_chat_history_request"]

logger = logging.getLogger(__name__)


async def send_chat_history_request(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str],
    cfg: ToolingConfiguration,
    slots: asyncio.Semaphore,
    send: SendTelemetry,
) -> OperationResult:
    """POST ``body`` with retries; the same ``body`` (and so the same ``messageId``) every attempt. Each
    attempt is a span of ``send``'s, its failure noted as ``send.cause``."""
    now = asyncio.get_running_loop().time
    wire_timeout, queue_timeout = cfg.chat_history_timeout, cfg.chat_history_queue_timeout
    wire_left, queue_left = wire_timeout, queue_timeout
    max_attempts = max(1, cfg.chat_history_max_attempts)
    error: ChatHistorySendError
    for attempt in range(1, max_attempts + 1):
        retryable = False
        retry_after: float | None = None
        status: int | None = None
        cause: SendFailureCause
        if slots.locked():  # a free slot is taken at once, with no deadline to arm
            queued_at = now()
            try:
                async with asyncio.timeout(max(queue_left, 0.0)):
                    await slots.acquire()
            except TimeoutError:
                error = ChatHistorySendError(
                    f"threat protection send to {url} queued too long: no free slot within "
                    f"{queue_timeout} s (chat_history_concurrency is reached)",
                    cause="queue_timeout",
                    attempts=attempt - 1,
                )
                send.cause = "queue_timeout"
                break
            queue_left -= now() - queued_at
        else:
            await slots.acquire()
        logger.debug("chat history send attempt %d to %s (%d bytes)", attempt, url, len(body))
        started = now()
        with send.attempt("POST", url) as span:  # a span per attempt when traced
            try:
                response = await request_bounded(
                    client,
                    "POST",
                    url,
                    headers=headers,
                    content=body,
                    timeout=wire_left,
                    max_bytes=cfg.max_rtp_response_bytes,
                )
            except TimeoutError:
                cause, what = "timeout", f"did not answer within {wire_timeout} s"
                send.cause = "timeout"
                span.fail("timeout", "no answer within the send's deadline")
            except ResponseTooLargeError as exc:
                cause, what = "response_too_large", f"answered a {exc}"
                send.cause = "response_too_large"
                span.fail("response_too_large")
            except httpx.HTTPError as exc:
                cause, what = "unreachable", f"is unreachable: {type(exc).__name__}: {scrub(exc)}"
                retryable = True
                send.cause = type(exc).__qualname__
                span.fail_with(exc)
                span.set("a365.rtp.retryable", True)
            else:
                status = response.status_code
                span.set("http.response.status_code", status)
                if response.is_success:
                    logger.debug("chat history sent (attempt %d)", attempt)
                    return OperationResult.success()
                cause, what = "http_status", f"answered HTTP {status}"
                retryable = status in RETRYABLE_STATUS
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                send.cause = f"http_{status}"
                span.fail(str(status))
                span.set("a365.rtp.retryable", retryable)
                span.set("a365.rtp.retry_after", retry_after)
            finally:
                slots.release()
                wire_left -= now() - started
        error = ChatHistorySendError(
            f"threat protection at {url} {what}", cause=cause, status_code=status, attempts=attempt
        )
        if not retryable or attempt == max_attempts:
            break
        delay = retry_after if retry_after is not None else backoff_delay(attempt)
        if delay >= wire_left:
            break
        logger.info("chat history send attempt %d failed (%s); retrying in %.2f s", attempt, error, delay)
        await asyncio.sleep(delay)
        wire_left -= delay
    logger.warning("chat history send failed after %d attempt(s): %s", error.attempts, error)
    return OperationResult.failed(OperationError(error))
