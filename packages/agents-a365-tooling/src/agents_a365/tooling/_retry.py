"""Bounded exponential backoff with full jitter, honouring ``Retry-After``."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
BASE_DELAY = 0.2
MAX_DELAY = 4.0
# A server asking for more than this is asking for longer than any send deadline: clamp.
MAX_RETRY_AFTER = 3600.0


def backoff_delay(attempt: int) -> float:
    """Full-jitter delay before retry number ``attempt`` (1-based)."""
    return random.uniform(0, min(MAX_DELAY, BASE_DELAY * 2 ** (attempt - 1)))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or HTTP date), clamped to
    ``[0, MAX_RETRY_AFTER]``; ``None`` for anything unparseable (never raises)."""
    if not value:
        return None
    value = value.strip()
    # ASCII digits only: str.isdigit() accepts "²" and "¹", which float() rejects. float() of any number
    # of digits is finite or inf (no int-size limit): clamped.
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    except Exception:
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER)
